//! The ledger as a tamper-evident log (docs/REDEMPTION.md §Tamper-evident
//! log): each row is an entry at a position `seq`, hashed as an RFC 9162
//! leaf ([`crate::merkle`]); after each commit the log's head (size, root)
//! is signed with the ledger key as a C2SP tlog-checkpoint signed note and
//! stored. [`Ledger::verify_log`] replays every entry against its stored
//! leaf hash and every stored head; inclusion and consistency proofs let an
//! auditor check a redemption is in the log and that the log only grew.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::{Signer, SigningKey, VerifyingKey};
use rusqlite::{params, OptionalExtension, Transaction};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::Ledger;
use crate::error::Error;
use crate::merkle::{self, Frontier, Hash};
use crate::seal;
use crate::store::Store;

/// The facts of one log entry, as hashed.
pub struct EntryFields<'a> {
    /// Game slug.
    pub game: &'a str,
    /// Emission.
    pub emission: u32,
    /// Block.
    pub block: u32,
    /// Unit index.
    pub index: u32,
    /// The unit ID as printed.
    pub unit_id: &'a str,
    /// Lot code (0: none).
    pub lot: u8,
    /// Prize in cents.
    pub prize_cents: u32,
    /// SHA-256 of the unit's record, hex.
    pub record_sha256: &'a str,
    /// When it was recorded.
    pub redeemed_at: &'a str,
    /// Trésors Ensablés: the player's stop.
    pub stopped_after_rolls: Option<u32>,
}

/// The leaf data of entry `seq`: one line of text,
/// `ledger/v1|seq|game|emission|block|index|unit_id|lot|prize_cents|record_sha256|redeemed_at|stop\n`
/// (integers in decimal, `stop` empty when the unit was played to the end).
#[must_use]
pub fn entry_line(seq: u64, f: &EntryFields) -> String {
    let stop = f
        .stopped_after_rolls
        .map(|s| s.to_string())
        .unwrap_or_default();
    format!(
        "ledger/v1|{seq}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{stop}\n",
        f.game,
        f.emission,
        f.block,
        f.index,
        f.unit_id,
        f.lot,
        f.prize_cents,
        f.record_sha256,
        f.redeemed_at
    )
}

/// The key that signs the ledger's heads: its own Ed25519 key, kept in
/// the store's keys folder (`ledger.key.pem`, 0600, and `ledger.pub.pem`),
/// made on the first redemption. Separate from the issuer's sealing key, so
/// a redemption host never holds the key that seals blocks.
pub struct LedgerKey {
    signing: SigningKey,
    name: String,
}

/// Where the ledger's private key lives.
fn private_path(store: &Store) -> PathBuf {
    store.keys_dir().join("ledger.key.pem")
}

/// Where the ledger's public key lives.
pub fn public_path(store: &Store) -> PathBuf {
    store.keys_dir().join("ledger.pub.pem")
}

/// The log's name (its checkpoint origin and key name), from its key:
/// `ticket-issuer/ledger/<first 8 bytes of SHA-256(public key), hex>`.
#[must_use]
pub fn origin(public: &VerifyingKey) -> String {
    let digest = Sha256::digest(public.as_bytes());
    format!("ticket-issuer/ledger/{}", hex::encode(&digest[..8]))
}

/// C2SP signed-note key ID of an Ed25519 key:
/// SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[..4].
#[must_use]
pub fn key_id(name: &str, public: &VerifyingKey) -> [u8; 4] {
    let digest = Sha256::new()
        .chain_update(name.as_bytes())
        .chain_update([0x0a, 0x01])
        .chain_update(public.as_bytes())
        .finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}

/// The note verifier key line Go's `note.NewVerifier` reads:
/// `<name>+<hex key id>+<base64(0x01 ‖ public key)>`.
#[must_use]
pub fn verifier_key(public: &VerifyingKey) -> String {
    let name = origin(public);
    let mut key = vec![0x01];
    key.extend_from_slice(public.as_bytes());
    format!(
        "{name}+{}+{}",
        hex::encode(key_id(&name, public)),
        BASE64.encode(key)
    )
}

/// The checkpoint body (C2SP tlog-checkpoint): origin, size, base64 root.
fn checkpoint_body(origin: &str, size: u64, root: &Hash) -> String {
    format!("{origin}\n{size}\n{}\n", BASE64.encode(root))
}

impl LedgerKey {
    /// The store's ledger key, made (0600, with its public key beside it)
    /// if the store has none yet.
    pub fn load_or_create(store: &Store) -> Result<LedgerKey, Error> {
        let path = private_path(store);
        if !path.exists() {
            create(store, &path)?;
        }
        let signing = seal::read_private(&path)?;
        Ok(LedgerKey::from_signing(signing))
    }

    fn from_signing(signing: SigningKey) -> LedgerKey {
        let name = origin(&signing.verifying_key());
        LedgerKey { signing, name }
    }

    /// The public key.
    #[must_use]
    pub fn public(&self) -> VerifyingKey {
        self.signing.verifying_key()
    }

    /// The signed note of the head (`size`, `root`).
    #[must_use]
    pub fn sign_checkpoint(&self, size: u64, root: &Hash) -> String {
        let body = checkpoint_body(&self.name, size, root);
        let signature = self.signing.sign(body.as_bytes()).to_bytes();
        let mut blob = key_id(&self.name, &self.public()).to_vec();
        blob.extend_from_slice(&signature);
        format!("{body}\n\u{2014} {} {}\n", self.name, BASE64.encode(blob))
    }
}

/// Makes a new ledger key at `path` (written whole, then put in place
/// without replacing one another process made meanwhile).
fn create(store: &Store, path: &Path) -> Result<(), Error> {
    let dir = store.keys_dir();
    crate::fsutil::create_private_dir(&dir, 0o700)?;
    let signing = SigningKey::from_bytes(&rand::random::<[u8; 32]>());
    let write = |target: &Path, text: String, mode: u32| -> Result<(), Error> {
        let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| Error::io(&dir, e))?;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io(target, e))?;
        tmp.write_all(text.as_bytes())
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(|e| Error::io(target, e))?;
        match tmp.persist_noclobber(target) {
            Ok(_) => Ok(()),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(Error::io(target, e.error)),
        }
    };
    write(path, seal::private_pem(&signing), 0o600)?;
    // The public key written is the one of the private key now in place.
    let kept = seal::read_private(path)?;
    write(
        &public_path(store),
        seal::public_pem(&kept.verifying_key()),
        0o644,
    )
}

/// A checkpoint whose signature verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Its origin line.
    pub origin: String,
    /// The log size it signs.
    pub size: u64,
    /// The root it signs.
    pub root: Hash,
}

/// Opens a signed note as a checkpoint of the log of `public`: the body is
/// origin, size and base64 root; a signature line by the key's name and key
/// ID must verify over the body. `Err` says what is wrong.
pub fn open_checkpoint(note: &str, public: &VerifyingKey) -> Result<Checkpoint, String> {
    let split = note
        .rfind("\n\n")
        .ok_or("not a signed note (no blank line before the signatures)")?;
    let (body, signatures) = (&note[..=split], &note[split + 2..]);
    let name = origin(public);
    let id = key_id(&name, public);
    let prefix = format!("\u{2014} {name} ");
    let mut signed = false;
    for line in signatures.lines() {
        let Some(b64) = line.strip_prefix(&prefix) else {
            continue;
        };
        let blob = BASE64
            .decode(b64)
            .map_err(|_| "a signature line is not base64")?;
        if blob.len() != 68 || blob[..4] != id {
            continue;
        }
        let sig: [u8; 64] = blob[4..].try_into().map_err(|_| "bad signature length")?;
        if !seal::verify(public, body.as_bytes(), &sig) {
            return Err("the ledger key's signature does not verify".into());
        }
        signed = true;
        break;
    }
    if !signed {
        return Err(format!("no signature by the ledger key {name}"));
    }
    let mut lines = body.lines();
    let origin_line = lines.next().unwrap_or_default().to_string();
    if origin_line != name {
        return Err(format!("origin {origin_line:?} is not this log's ({name})"));
    }
    let size = lines
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or("the size line is not a decimal number")?;
    let root = lines
        .next()
        .and_then(|r| BASE64.decode(r).ok())
        .and_then(|r| Hash::try_from(r.as_slice()).ok())
        .ok_or("the root line is not a base64 SHA-256 hash")?;
    Ok(Checkpoint {
        origin: origin_line,
        size,
        root,
    })
}

/// Brings `frontier` up to the log as stored (another process may have
/// appended since): starts from the latest head's kept frontier when it is
/// ahead (so a new process does not reread the whole log), then reads the
/// leaf hashes after it.
pub(super) fn catch_up(
    tx: &Transaction,
    frontier: &mut Frontier,
    path: &Path,
) -> Result<(), Error> {
    let err = |source| Error::Ledger {
        path: path.to_path_buf(),
        source,
    };
    let kept: Option<Option<Vec<u8>>> = tx
        .prepare_cached("SELECT frontier FROM ledger_heads ORDER BY size DESC LIMIT 1")
        .and_then(|mut s| s.query_row([], |r| r.get(0)).optional())
        .map_err(err)?;
    if let Some(kept) = kept.flatten().and_then(|b| Frontier::from_bytes(&b)) {
        if kept.size() > frontier.size() {
            *frontier = kept;
        }
    }
    let mut stmt = tx
        .prepare_cached("SELECT seq, leaf_hash FROM redemptions WHERE seq >= ?1 ORDER BY seq")
        .map_err(err)?;
    let mut rows = stmt.query(params![frontier.size()]).map_err(err)?;
    while let Some(row) = rows.next().map_err(err)? {
        let seq: u64 = row.get(0).map_err(err)?;
        let leaf: Option<Vec<u8>> = row.get(1).map_err(err)?;
        let leaf = leaf.and_then(|l| Hash::try_from(l.as_slice()).ok());
        match leaf {
            Some(leaf) if seq == frontier.size() => frontier.push(leaf),
            _ => {
                return Err(Error::LedgerDamaged {
                    path: path.to_path_buf(),
                    reason: format!(
                        "entry {} of the log is missing or has no leaf hash; run `issuer ledger verify`",
                        frontier.size()
                    ),
                })
            }
        }
    }
    Ok(())
}

/// Signs and stores the head of `frontier`, keeping the frontier beside it.
pub(super) fn store_head(
    tx: &Transaction,
    key: &LedgerKey,
    frontier: &Frontier,
    at: &str,
) -> Result<(), rusqlite::Error> {
    let root = frontier.root();
    tx.prepare_cached(
        "INSERT OR REPLACE INTO ledger_heads (size, root, signed_at, checkpoint, frontier)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        frontier.size(),
        &root[..],
        at,
        key.sign_checkpoint(frontier.size(), &root),
        frontier.to_bytes()
    ])?;
    Ok(())
}

/// A signed head of the ledger (`issuer ledger head`).
#[derive(Clone, Debug, Serialize)]
pub struct Head {
    /// The log's name (checkpoint origin and key name).
    pub origin: String,
    /// Entries in the log at this head.
    pub size: u64,
    /// The RFC 9162 root, base64 (as in the checkpoint).
    pub root: String,
    /// The same root, hex.
    pub root_hex: String,
    /// When it was signed (the commit's time; not part of the note).
    pub signed_at: String,
    /// The C2SP tlog-checkpoint signed note.
    pub checkpoint: String,
    /// The ledger's public key as a note verifier key (Go's
    /// `note.NewVerifier` format), when the store has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verifier_key: Option<String>,
}

impl Head {
    /// A head as stored in a ledger's `ledger_heads` row.
    pub(crate) fn from_row(size: u64, root: &[u8], signed_at: String, checkpoint: String) -> Head {
        Head {
            origin: checkpoint.lines().next().unwrap_or_default().to_string(),
            size,
            root: BASE64.encode(root),
            root_hex: hex::encode(root),
            signed_at,
            checkpoint,
            verifier_key: None,
        }
    }
}

/// The latest signed head of `store`'s ledger, with its verifier key;
/// `Ok(None)` when there is no ledger or no head yet. Creates nothing.
pub fn latest_head(store: &Store) -> Result<Option<Head>, Error> {
    let Some(ledger) = Ledger::open_existing(&store.ledger_path())? else {
        return Ok(None);
    };
    let Some(mut head) = ledger.head()? else {
        return Ok(None);
    };
    let public = public_path(store);
    if public.exists() {
        head.verifier_key = Some(verifier_key(&seal::read_public(&public)?));
    }
    Ok(Some(head))
}

/// One problem `ledger verify` found.
#[derive(Clone, Debug, Serialize)]
pub struct LogFinding {
    /// The entry concerned (its `seq`), where one entry is named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<u64>,
    /// Its unit ID, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit_id: Option<String>,
    /// What is wrong.
    pub problem: String,
}

/// What `ledger verify` found.
#[derive(Clone, Debug, Serialize)]
pub struct LogReport {
    /// Entries in the log.
    pub size: u64,
    /// The root of the log as stored, hex.
    pub root: String,
    /// Signed heads checked.
    pub heads_checked: u64,
    /// The size of the last signed head.
    pub last_head_size: Option<u64>,
    /// Problems, in log order; empty when the log verifies.
    pub findings: Vec<LogFinding>,
    /// No finding.
    pub ok: bool,
}

/// An inclusion proof of one redemption in the log.
#[derive(Clone, Debug, Serialize)]
pub struct EntryProof {
    /// The entry's leaf data (`entry_line`), as hashed.
    pub entry: String,
    /// Its position.
    pub leaf_index: u64,
    /// The head's size.
    pub tree_size: u64,
    /// RFC 9162 §2.1.3 inclusion proof, bottom-up, hex.
    pub inclusion_proof: Vec<String>,
    /// The head's root, hex.
    pub root: String,
    /// The signed head the proof leads to.
    pub checkpoint: String,
}

/// A consistency proof between two sizes of the log.
#[derive(Clone, Debug, Serialize)]
pub struct ConsistencyProof {
    /// The older size.
    pub from: u64,
    /// The newer size.
    pub to: u64,
    /// Root at `from`, hex.
    pub from_root: String,
    /// Root at `to`, hex.
    pub to_root: String,
    /// RFC 9162 §2.1.4 consistency proof, hex.
    pub consistency_proof: Vec<String>,
}

/// A row's hashed facts, owned (read back from the database).
struct OwnedFields {
    game: String,
    emission: u32,
    block: u32,
    index: u32,
    unit_id: String,
    lot: u8,
    prize_cents: u32,
    record_sha256: String,
    redeemed_at: String,
    stopped_after_rolls: Option<u32>,
}

impl OwnedFields {
    fn borrow(&self) -> EntryFields<'_> {
        EntryFields {
            game: &self.game,
            emission: self.emission,
            block: self.block,
            index: self.index,
            unit_id: &self.unit_id,
            lot: self.lot,
            prize_cents: self.prize_cents,
            record_sha256: &self.record_sha256,
            redeemed_at: &self.redeemed_at,
            stopped_after_rolls: self.stopped_after_rolls,
        }
    }
}

/// A row read back: its place, stored leaf hash and hashed facts.
struct LogRow {
    seq: Option<u64>,
    leaf: Option<Vec<u8>>,
    fields: OwnedFields,
}

/// The rows `clause` selects (`WHERE …`, `ORDER BY …`, with `params`).
fn read_rows(
    conn: &rusqlite::Connection,
    clause: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<LogRow>, rusqlite::Error> {
    let mut stmt = conn.prepare(&format!(
        "SELECT seq, leaf_hash, game, emission, block, unit_index, unit_id, lot, prize_cents,
                record_sha256, redeemed_at, stopped_after_rolls
         FROM redemptions {clause}"
    ))?;
    let rows = stmt.query_map(params, |r| {
        Ok(LogRow {
            seq: r.get(0)?,
            leaf: r.get(1)?,
            fields: OwnedFields {
                game: r.get(2)?,
                emission: r.get(3)?,
                block: r.get(4)?,
                index: r.get(5)?,
                unit_id: r.get(6)?,
                lot: r.get(7)?,
                prize_cents: r.get(8)?,
                record_sha256: r.get(9)?,
                redeemed_at: r.get(10)?,
                stopped_after_rolls: r.get(11)?,
            },
        })
    })?;
    rows.collect()
}

impl Ledger {
    /// Numbers rows recorded before the log existed (a ledger with no head
    /// yet): in time, then key order. A ledger with heads is never renumbered.
    pub fn adopt_unlogged_rows(&mut self) -> Result<(), Error> {
        let path = self.path.clone();
        let err = |source| Error::Ledger {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        let heads: u64 = tx
            .query_row("SELECT COUNT(*) FROM ledger_heads", [], |r| r.get(0))
            .map_err(err)?;
        if heads == 0 {
            let rows = read_rows(
                &tx,
                "WHERE seq IS NULL ORDER BY redeemed_at, game, emission, block, unit_index",
                [],
            )
            .map_err(err)?;
            let first: u64 = tx
                .query_row(
                    "SELECT COALESCE(MAX(seq) + 1, 0) FROM redemptions",
                    [],
                    |r| r.get(0),
                )
                .map_err(err)?;
            for (next, row) in (first..).zip(rows) {
                let f = &row.fields;
                let leaf = merkle::leaf_hash(entry_line(next, &f.borrow()).as_bytes());
                tx.execute(
                    "UPDATE redemptions SET seq=?1, leaf_hash=?2
                     WHERE game=?3 AND emission=?4 AND block=?5 AND unit_index=?6",
                    params![next, &leaf[..], f.game, f.emission, f.block, f.index],
                )
                .map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }

    /// The log's leaf hashes as stored, in order (`Err` if one is missing).
    fn leaves(&self) -> Result<Vec<Hash>, Error> {
        let mut frontier = Frontier::default();
        let mut leaves = Vec::new();
        let mut stmt = self
            .conn
            .prepare("SELECT seq, leaf_hash FROM redemptions WHERE seq IS NOT NULL ORDER BY seq")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, u64>(0)?, r.get::<_, Option<Vec<u8>>>(1)?))
            })
            .map_err(|e| self.err(e))?;
        for row in rows {
            let (seq, leaf) = row.map_err(|e| self.err(e))?;
            let leaf = leaf.and_then(|l| Hash::try_from(l.as_slice()).ok());
            match leaf {
                Some(leaf) if seq == leaves.len() as u64 => {
                    frontier.push(leaf);
                    leaves.push(leaf);
                }
                _ => {
                    return Err(Error::LedgerDamaged {
                        path: self.path.clone(),
                        reason: format!(
                            "entry {} is missing or has no leaf hash; run `issuer ledger verify`",
                            leaves.len()
                        ),
                    })
                }
            }
        }
        Ok(leaves)
    }

    /// The latest signed head, if any.
    pub fn head(&self) -> Result<Option<Head>, Error> {
        let row = self
            .conn
            .query_row(
                "SELECT size, root, signed_at, checkpoint FROM ledger_heads ORDER BY size DESC LIMIT 1",
                [],
                |r| {
                    Ok((
                        r.get::<_, u64>(0)?,
                        r.get::<_, Vec<u8>>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(row.map(|(size, root, signed_at, checkpoint)| {
            Head::from_row(size, &root, signed_at, checkpoint)
        }))
    }

    /// Inclusion proof of unit (`game`, `emission`, `block`, `index`) in the
    /// latest signed head. `Ok(None)` when the unit is not in the log.
    pub fn prove_unit(
        &self,
        game: &str,
        emission: u32,
        block: u32,
        index: u32,
    ) -> Result<Option<EntryProof>, Error> {
        let row = read_rows(
            &self.conn,
            "WHERE game=?1 AND emission=?2 AND block=?3 AND unit_index=?4",
            params![game, emission, block, index],
        )
        .map_err(|e| self.err(e))?
        .pop();
        let (
            Some(LogRow {
                seq: Some(seq),
                fields,
                ..
            }),
            Some(head),
        ) = (row, self.head()?)
        else {
            return Ok(None);
        };
        let leaves = self.leaves()?;
        let n = head.size.min(leaves.len() as u64) as usize;
        if seq as usize >= n {
            return Ok(None);
        }
        let line = entry_line(seq, &fields.borrow());
        let proof = merkle::inclusion_proof(&leaves[..n], seq as usize).unwrap_or_default();
        Ok(Some(EntryProof {
            entry: line,
            leaf_index: seq,
            tree_size: n as u64,
            inclusion_proof: proof.iter().map(hex::encode).collect(),
            root: head.root_hex,
            checkpoint: head.checkpoint,
        }))
    }

    /// Consistency proof from size `from` to size `to` (default: the latest
    /// head's). `Ok(None)` when a size is beyond the log.
    pub fn prove_consistency(
        &self,
        from: u64,
        to: Option<u64>,
    ) -> Result<Option<ConsistencyProof>, Error> {
        let leaves = self.leaves()?;
        let to = match to {
            Some(to) => to,
            None => self.head()?.map_or(leaves.len() as u64, |h| h.size),
        };
        if from > to || to > leaves.len() as u64 {
            return Ok(None);
        }
        let new = &leaves[..to as usize];
        let proof = merkle::consistency_proof(new, from as usize).unwrap_or_default();
        Ok(Some(ConsistencyProof {
            from,
            to,
            from_root: hex::encode(merkle::root_from_hashes(&new[..from as usize])),
            to_root: hex::encode(merkle::root_from_hashes(new)),
            consistency_proof: proof.iter().map(hex::encode).collect(),
        }))
    }

    /// Checks the log: every row has its place (no gap, no duplicate), its
    /// fields hash to its stored leaf, every stored head is signed by
    /// `public` over the root of the log's first `size` leaves, no head is
    /// larger than the log, and `extra` (a head kept elsewhere, e.g. by a
    /// witness) matches too.
    pub fn verify_log(
        &self,
        public: &VerifyingKey,
        extra: Option<&str>,
    ) -> Result<LogReport, Error> {
        let rows = read_rows(&self.conn, "ORDER BY seq", []).map_err(|e| self.err(e))?;
        let mut findings = Vec::new();
        let mut find = |entry: Option<u64>, unit_id: Option<&str>, problem: String| {
            findings.push(LogFinding {
                entry,
                unit_id: unit_id.map(str::to_string),
                problem,
            });
        };
        // Prefix roots at every size a head names.
        let mut heads = self.stored_heads()?;
        let mut frontier = Frontier::default();
        let mut roots_at = std::collections::HashMap::new();
        let mut wanted: std::collections::HashSet<u64> = heads.iter().map(|h| h.0).collect();
        let extra_checkpoint = match extra {
            Some(note) => match open_checkpoint(note, public) {
                Ok(c) => {
                    wanted.insert(c.size);
                    Some(c)
                }
                Err(why) => {
                    find(None, None, format!("the given head does not open: {why}"));
                    None
                }
            },
            None => None,
        };
        if wanted.contains(&0) {
            roots_at.insert(0, frontier.root());
        }
        let mut expected = 0u64;
        for row in &rows {
            let unit = Some(row.fields.unit_id.as_str());
            let Some(seq) = row.seq else {
                find(
                    None,
                    unit,
                    "a redemption outside the log (no seq): inserted behind the ledger's back"
                        .into(),
                );
                continue;
            };
            if seq > expected {
                find(
                    Some(expected),
                    None,
                    format!("entries {expected} to {} are missing (deleted)", seq - 1),
                );
            }
            expected = seq + 1;
            let leaf = merkle::leaf_hash(entry_line(seq, &row.fields.borrow()).as_bytes());
            let stored = row.leaf.as_deref().and_then(|l| Hash::try_from(l).ok());
            if stored != Some(leaf) {
                find(
                    Some(seq),
                    unit,
                    format!(
                        "entry {seq} (unit {}) does not hash to its stored leaf: the row was edited or moved",
                        row.fields.unit_id
                    ),
                );
            }
            // The tree is built from the stored leaves: the heads then
            // catch a row rewritten together with its leaf hash.
            frontier.push(stored.unwrap_or(leaf));
            if wanted.contains(&frontier.size()) {
                roots_at.insert(frontier.size(), frontier.root());
            }
        }
        let size = frontier.size();
        let mut previous = 0;
        heads.sort_by_key(|h| h.0);
        let last_head_size = heads.last().map(|h| h.0);
        for (head_size, root, note) in &heads {
            match open_checkpoint(note, public) {
                Ok(c) if c.size == *head_size && c.root.as_slice() == root.as_slice() => {}
                Ok(_) => find(
                    None,
                    None,
                    format!("the stored head of size {head_size} differs from its own signed note"),
                ),
                Err(why) => find(None, None, format!("the head of size {head_size}: {why}")),
            }
            match roots_at.get(head_size) {
                None => find(None, None, format!(
                    "the log holds {size} entries but a signed head says {head_size}: {} entries were deleted", head_size.saturating_sub(size)
                )),
                Some(r) if r.as_slice() != root.as_slice() => find(None, None, format!(
                    "the first {head_size} entries do not make the root signed at that size: an entry from {previous} to {} was changed, removed or reordered", head_size - 1
                )),
                Some(_) => {}
            }
            previous = *head_size;
        }
        if let Some(c) = extra_checkpoint {
            match roots_at.get(&c.size) {
                Some(r) if *r == c.root => {}
                Some(_) => find(
                    None,
                    None,
                    format!(
                        "the given head of size {} does not match the log: it was rewritten",
                        c.size
                    ),
                ),
                None => find(
                    Some(size),
                    None,
                    format!(
                        "the given head has {} entries, the log {size}: entries were deleted",
                        c.size
                    ),
                ),
            }
        }
        let ok = findings.is_empty();
        Ok(LogReport {
            size,
            root: hex::encode(frontier.root()),
            heads_checked: heads.len() as u64,
            last_head_size,
            findings,
            ok,
        })
    }

    fn stored_heads(&self) -> Result<Vec<(u64, Vec<u8>, String)>, Error> {
        let mut stmt = self
            .conn
            .prepare("SELECT size, root, checkpoint FROM ledger_heads ORDER BY size")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }
}
