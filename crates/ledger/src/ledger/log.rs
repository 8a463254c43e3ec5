//! The ledger as a tamper-evident log (docs/REDEMPTION.md §Tamper-evident
//! log): each row is an entry at a position `seq`, hashed as an RFC 9162
//! leaf ([`crate::merkle`]); after each commit the log's head (size, root)
//! is signed with the ledger key as a C2SP tlog-checkpoint signed note and
//! stored. [`Snapshot::verify`] replays every entry against its stored
//! leaf hash and every stored head, from one snapshot of either database
//! ([`LogSource`]); inclusion and consistency proofs let an auditor check a
//! redemption is in the log and that the log only grew.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::{Signer, SigningKey, VerifyingKey};
use rusqlite::{params, OptionalExtension, Transaction};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::tiles::{self, Cached, TileId, TileSource};
use super::Ledger;
use crate::error::Error;
use crate::merkle::{self, Frontier, Hash};
use crate::seal;
use crate::store::Store;

/// The facts of one log entry, as hashed.
pub struct EntryFields<'a> {
    /// Game slug.
    pub game: &'a str,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
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
/// ID must verify over the body. Newlines after the last signature line
/// are one (a note saved with `jq -r` or an editor has more). `Err` says
/// what is wrong.
pub fn open_checkpoint(note: &str, public: &VerifyingKey) -> Result<Checkpoint, String> {
    let note = format!("{}\n", note.trim_end_matches('\n'));
    let split = note
        .rfind("\n\n")
        .ok_or("not a signed note: no blank line between its text and its signatures")?;
    let (body, signatures) = (&note[..=split], &note[split + 2..]);
    let name = origin(public);
    let id = key_id(&name, public);
    let mut others = Vec::new();
    let mut signed = false;
    for (n, line) in signatures.lines().enumerate() {
        let (signer, b64) = line
            .strip_prefix("\u{2014} ")
            .and_then(|rest| rest.rsplit_once(' '))
            .ok_or_else(|| {
                format!(
                    "signature line {} is not \"— <key name> <base64>\": {line:?}",
                    n + 1
                )
            })?;
        let blob = BASE64
            .decode(b64)
            .map_err(|_| format!("the signature by {signer} is not base64"))?;
        if signer != name || blob.len() != 68 || blob[..4] != id {
            others.push(signer.to_string());
            continue;
        }
        let sig: [u8; 64] = blob[4..].try_into().map_err(|_| "bad signature length")?;
        if !seal::verify(public, body.as_bytes(), &sig) {
            return Err(format!(
                "the signature by the ledger key {name} does not verify: the note's text was altered"
            ));
        }
        signed = true;
        break;
    }
    if !signed {
        return Err(format!(
            "signed by {} but not by the ledger key given ({name}, key ID {}): check --ledger-key",
            others.join(", "),
            hex::encode(id)
        ));
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
    let err = |source: rusqlite::Error| Error::Ledger {
        path: path.to_path_buf(),
        source: source.into(),
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
    for leaf in stored_leaves(tx, frontier.size(), path)? {
        frontier.push(leaf);
    }
    Ok(())
}

/// The stored leaf hashes of the SQLite ledger from entry `from` on, in
/// order.
fn stored_leaves(tx: &Transaction, from: u64, path: &Path) -> Result<Vec<Hash>, Error> {
    let err = |source: rusqlite::Error| Error::Ledger {
        path: path.to_path_buf(),
        source: source.into(),
    };
    let mut stmt = tx
        .prepare_cached("SELECT seq, leaf_hash FROM log_leaves WHERE seq >= ?1 ORDER BY seq")
        .map_err(err)?;
    let rows = stmt
        .query_map(params![from], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(err)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    contiguous(from, rows, path)
}

/// The leaf hashes of `rows` ((seq, stored leaf) in `seq` order, from
/// entry `from`); an entry missing or without a 32-byte leaf is damage,
/// named by its position (either database).
pub(super) fn contiguous(
    from: u64,
    rows: impl IntoIterator<Item = (u64, Option<Vec<u8>>)>,
    ledger: &Path,
) -> Result<Vec<Hash>, Error> {
    let mut leaves = Vec::new();
    for (seq, leaf) in rows {
        let expected = from + leaves.len() as u64;
        match leaf.and_then(|l| Hash::try_from(l.as_slice()).ok()) {
            Some(leaf) if seq == expected => leaves.push(leaf),
            _ => return Err(missing_entry(expected, ledger)),
        }
    }
    Ok(leaves)
}

/// Entry `seq` is missing from the log, or has no leaf hash.
pub(super) fn missing_entry(seq: u64, ledger: &Path) -> Error {
    Error::LedgerDamaged {
        path: ledger.to_path_buf(),
        reason: format!(
            "entry {seq} of the log is missing or has no leaf hash; run `issuer ledger verify`"
        ),
    }
}

/// The SQLite ledger's tiles inside a transaction.
struct SqliteTiles<'t>(&'t rusqlite::Connection);

impl TileSource for SqliteTiles<'_> {
    fn tile(&mut self, (level, index): TileId) -> Result<Vec<Hash>, Error> {
        let bytes: Option<Vec<u8>> = self
            .0
            .prepare_cached("SELECT hashes FROM log_tiles WHERE level = ?1 AND idx = ?2")
            .and_then(|mut s| s.query_row(params![level, index], |r| r.get(0)).optional())
            .map_err(|e| tile_error(level, index, &e))?;
        decoded(level, index, bytes)
    }
}

fn tile_error(level: u8, index: u64, e: &dyn std::fmt::Display) -> Error {
    Error::LedgerUnavailable {
        path: "log_tiles".into(),
        reason: format!("tile {level}/{index}: {e}"),
    }
}

/// A stored tile's hashes; a row that is not whole hashes is damage.
pub(super) fn decoded(level: u8, index: u64, bytes: Option<Vec<u8>>) -> Result<Vec<Hash>, Error> {
    match bytes {
        None => Ok(Vec::new()),
        Some(b) => tiles::decode(&b).ok_or_else(|| Error::LedgerDamaged {
            path: "log_tiles".into(),
            reason: format!("tile {level}/{index} is not a whole number of hashes"),
        }),
    }
}

/// Leaves an SQLite ledger's tiles cover (from its last level-0 tile).
fn sqlite_tiles_covered(conn: &rusqlite::Connection) -> Result<u64, rusqlite::Error> {
    let last: Option<(u64, Vec<u8>)> = conn
        .prepare_cached(
            "SELECT idx, hashes FROM log_tiles WHERE level = 0 ORDER BY idx DESC LIMIT 1",
        )?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(tiles::covered(last.map(|(i, b)| (i, b.len() / 32))))
}

/// Brings the tiles up to the log's `size` leaves (docs/REDEMPTION.md
/// §Tiles): the leaves past the last tile are read (those of this commit,
/// or, once, every leaf of a ledger written before tiles) and appended.
pub(super) fn extend_tiles(tx: &Transaction, size: u64, path: &Path) -> Result<(), Error> {
    let err = |source: rusqlite::Error| Error::Ledger {
        path: path.to_path_buf(),
        source: source.into(),
    };
    let covered = sqlite_tiles_covered(tx).map_err(err)?;
    if covered >= size {
        return Ok(());
    }
    let leaves = stored_leaves(tx, covered, path)?;
    let changed = tiles::append(&mut SqliteTiles(tx), covered, &leaves)?;
    let mut put = tx
        .prepare_cached("INSERT OR REPLACE INTO log_tiles (level, idx, hashes) VALUES (?1, ?2, ?3)")
        .map_err(err)?;
    for ((level, index), hashes) in changed {
        put.execute(params![level, index, tiles::encode(&hashes)])
            .map_err(err)?;
    }
    Ok(())
}

/// Signs and stores the head of `frontier`, keeping the frontier beside it.
/// A signed head is never replaced: a head of that size stored already
/// means the log was cut back below it (rows deleted) and is growing again
/// over it, and is refused as a damaged ledger.
pub(super) fn store_head(
    tx: &Transaction,
    key: &LedgerKey,
    frontier: &Frontier,
    at: &str,
    path: &Path,
) -> Result<(), Error> {
    let root = frontier.root();
    let inserted = tx
        .prepare_cached(
            "INSERT INTO ledger_heads (size, root, signed_at, checkpoint, frontier)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (size) DO NOTHING",
        )
        .and_then(|mut s| {
            s.execute(params![
                frontier.size(),
                &root[..],
                at,
                key.sign_checkpoint(frontier.size(), &root),
                frontier.to_bytes()
            ])
        })
        .map_err(|source| Error::Ledger {
            path: path.to_path_buf(),
            source: source.into(),
        })?;
    if inserted == 0 {
        return Err(Error::LedgerDamaged {
            path: path.to_path_buf(),
            reason: format!(
                "a signed head of size {} is stored already: the log was cut back below it and would grow over it; nothing was recorded; run `issuer ledger verify`",
                frontier.size()
            ),
        });
    }
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
    /// Entries committed and queued for the sequencer, not in the log yet
    /// (docs/REDEMPTION.md §Sequencing).
    pub pending: u64,
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
    /// Rows the proof read (the entry, the head, the tiles), or `None`
    /// when the tiles did not cover the head and every leaf was read.
    #[serde(skip)]
    pub rows_read: Option<u64>,
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

/// Where a unit sits, as its log lines name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Place<'a> {
    /// Game slug.
    pub game: &'a str,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Unit index.
    pub index: u32,
}

/// The leaf data of a sale (docs/REDEMPTION.md §Tamper-evident log):
/// `sale/v1|seq|game|emission|block|index|sold_at\n`.
#[must_use]
pub fn sale_line(seq: u64, p: Place, sold_at: &str) -> String {
    format!(
        "sale/v1|{seq}|{}|{}|{}|{}|{sold_at}\n",
        p.game, p.emission, p.block, p.index
    )
}

/// The leaf data of a finished Trésors Ensablés play:
/// `play/v1|seq|game|emission|block|index|rolls|how|ended_at\n`, `how`
/// being `stop` (the player stopped after `rolls` rolls) or `end` (the
/// play ended by itself, a death or the gold chest, at roll `rolls`).
#[must_use]
pub fn play_line(seq: u64, p: Place, rolls: u32, how: &str, ended_at: &str) -> String {
    format!(
        "play/v1|{seq}|{}|{}|{}|{}|{rolls}|{how}|{ended_at}\n",
        p.game, p.emission, p.block, p.index
    )
}

/// The leaf data of an emission's end of claims (docs/REDEMPTION.md
/// §Tamper-evident log): `claims/v1|seq|game|emission|ended_at|sha256\n`,
/// `sha256` being the hex SHA-256 of the signed statement as stored.
#[must_use]
pub fn claims_line(seq: u64, s: &super::claims::EndOfClaims) -> String {
    format!(
        "claims/v1|{seq}|{}|{}|{}|{}\n",
        s.game,
        s.emission,
        s.ended_at,
        hex::encode(Sha256::digest(s.statement.as_bytes()))
    )
}

/// A logged end of claims read back.
pub(super) fn claims_entry(
    s: &super::claims::EndOfClaims,
    seq: u64,
    leaf: Option<Vec<u8>>,
) -> StoredEntry {
    StoredEntry {
        line: claims_line(seq, s),
        what: format!("the end of claims of {} emission {}", s.game, s.emission),
        unit_id: None,
        seq: Some(seq),
        leaf,
    }
}

/// One entry of the log read back from the database: its place, its stored
/// leaf hash, and its leaf data made again from the row's facts.
#[derive(Clone, Debug)]
pub struct StoredEntry {
    /// Its position; `None` for a row inserted outside the log.
    pub seq: Option<u64>,
    /// The leaf hash stored beside it.
    pub leaf: Option<Vec<u8>>,
    /// The leaf data its row's facts make (`entry_line`, `sale_line`,
    /// `play_line`, `claims_line`).
    pub line: String,
    /// What it records, for messages ("the redemption of IAT-…").
    pub what: String,
    /// The unit ID, where the row has one.
    pub unit_id: Option<String>,
}

/// A signed head as stored.
#[derive(Clone, Debug)]
pub struct StoredHead {
    /// Entries it covers.
    pub size: u64,
    /// Its root as stored beside the note.
    pub root: Vec<u8>,
    /// When it was signed.
    pub signed_at: String,
    /// The signed note.
    pub checkpoint: String,
    /// The signer's verifier key, where the database keeps it (PostgreSQL:
    /// each node signs the heads it makes).
    pub signer: Option<String>,
}

/// Every entry and every head, read together.
#[derive(Default)]
pub struct Snapshot {
    /// Entries of every kind, in log order (rows outside the log first).
    pub entries: Vec<StoredEntry>,
    /// Heads, smallest first.
    pub heads: Vec<StoredHead>,
    /// Entries committed and queued for the sequencer (PostgreSQL): not
    /// in the log yet, so not read.
    pub pending: u64,
    /// The stored tiles (docs/REDEMPTION.md §Tiles), as stored.
    pub tiles: Vec<(TileId, Vec<u8>)>,
}

/// A ledger database seen as a log: SQLite or PostgreSQL.
pub trait LogSource {
    /// The database's name in messages.
    fn log_name(&self) -> String;
    /// Every entry (any order) and every head, from one snapshot.
    fn snapshot(&self) -> Result<Snapshot, Error>;
    /// The largest head.
    fn latest_head(&self) -> Result<Option<StoredHead>, Error>;
    /// The redemption entry of a unit.
    fn redemption_entry(&self, unit: Place) -> Result<Option<StoredEntry>, Error>;
    /// A tile of the log's tree (empty when there is none).
    fn tile(&self, id: TileId) -> Result<Vec<Hash>, Error>;
    /// Leaves the tiles cover.
    fn tiles_covered(&self) -> Result<u64, Error>;
}

/// No tile stored: the tiles of a log built from its first leaf.
struct NoTiles;

impl TileSource for NoTiles {
    fn tile(&mut self, _: TileId) -> Result<Vec<Hash>, Error> {
        Ok(Vec::new())
    }
}

/// A log's tiles, read one row at a time (wrap it in [`Cached`] to read
/// each once and count them).
pub struct SourceTiles<'s>(pub &'s dyn LogSource);

impl TileSource for SourceTiles<'_> {
    fn tile(&mut self, id: TileId) -> Result<Vec<Hash>, Error> {
        self.0.tile(id)
    }
}

impl StoredHead {
    /// As `ledger head` shows it.
    #[must_use]
    pub fn to_head(self) -> Head {
        Head {
            origin: self
                .checkpoint
                .lines()
                .next()
                .unwrap_or_default()
                .to_string(),
            size: self.size,
            root: BASE64.encode(&self.root),
            root_hex: hex::encode(&self.root),
            signed_at: self.signed_at,
            checkpoint: self.checkpoint,
            verifier_key: self.signer,
        }
    }
}

/// The latest signed head of `source`.
pub fn head(source: &dyn LogSource) -> Result<Option<Head>, Error> {
    Ok(source.latest_head()?.map(StoredHead::to_head))
}

impl Snapshot {
    /// The stored tiles against the tiles of `leaves` (the log's stored
    /// leaf hashes, in order): each problem found. Tiles covering fewer
    /// leaves than the log (a ledger not tiled yet, or behind its
    /// sequencer) are not one.
    fn check_tiles(&self, leaves: &[Hash]) -> Vec<String> {
        let mut problems = Vec::new();
        let mut stored = std::collections::BTreeMap::new();
        for ((level, index), bytes) in &self.tiles {
            match tiles::decode(bytes) {
                Some(hashes) => {
                    stored.insert((*level, *index), hashes);
                }
                None => problems.push(format!(
                    "tile {level}/{index} is not a whole number of hashes"
                )),
            }
        }
        let last = stored
            .iter()
            .filter(|((level, _), _)| *level == 0)
            .map(|((_, index), hashes)| (*index, hashes.len()))
            .next_back();
        let covered = tiles::covered(last);
        if covered > leaves.len() as u64 {
            problems.push(format!(
                "the tiles cover {covered} entries, the log holds {}: entries were deleted",
                leaves.len()
            ));
            return problems;
        }
        let mut none = NoTiles;
        let Ok(expected) = tiles::append(&mut none, 0, &leaves[..covered as usize]) else {
            return problems;
        };
        for (id, hashes) in &expected {
            match stored.get(id) {
                None => problems.push(format!("tile {}/{} is missing", id.0, id.1)),
                Some(s) if s != hashes => problems.push(format!(
                    "tile {}/{} does not match the log's leaves: it was rewritten (proofs read from it would not verify)",
                    id.0, id.1
                )),
                Some(_) => {}
            }
        }
        for id in stored.keys().filter(|id| !expected.contains_key(id)) {
            problems.push(format!("tile {}/{} is past the log", id.0, id.1));
        }
        problems
    }

    /// Sorts entries into log order and heads by size.
    #[must_use]
    pub fn sorted(mut self) -> Snapshot {
        self.entries
            .sort_by_key(|e| e.seq.map_or((0, 0), |s| (1, s)));
        self.heads.sort_by_key(|h| h.size);
        self
    }

    /// The stored leaf hashes in order; `Err` names the first gap.
    fn leaves(&self, name: &str) -> Result<Vec<Hash>, Error> {
        let mut leaves = Vec::with_capacity(self.entries.len());
        for e in self.entries.iter().filter(|e| e.seq.is_some()) {
            let leaf = e
                .leaf
                .as_deref()
                .and_then(|l| Hash::try_from(l).ok())
                .filter(|_| e.seq == Some(leaves.len() as u64));
            match leaf {
                Some(leaf) => leaves.push(leaf),
                None => {
                    return Err(Error::LedgerDamaged {
                        path: PathBuf::from(name),
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

    /// Checks the log: every entry has its place (no gap, no duplicate) and
    /// its row's facts hash to its stored leaf; every stored head is signed
    /// by one of `signers` over the root of the log's first `size` leaves,
    /// and no head is larger than the log; `extra` (a head kept elsewhere,
    /// e.g. by a witness) matches too.
    #[must_use]
    pub fn verify(&self, signers: &[VerifyingKey], extra: Option<&str>) -> LogReport {
        let mut findings = Vec::new();
        let mut find = |entry: Option<u64>, unit_id: Option<&str>, problem: String| {
            findings.push(LogFinding {
                entry,
                unit_id: unit_id.map(str::to_string),
                problem,
            });
        };
        let open = |note: &str| {
            let mut why = String::from("no ledger key was given");
            for k in signers {
                match open_checkpoint(note, k) {
                    Ok(c) => return Ok(c),
                    Err(e) => why = e,
                }
            }
            Err(why)
        };
        let mut frontier = Frontier::default();
        let mut roots_at = std::collections::HashMap::new();
        let mut wanted: std::collections::HashSet<u64> =
            self.heads.iter().map(|h| h.size).collect();
        let extra_checkpoint = match extra {
            Some(note) => match open(note) {
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
        let mut leaves = Vec::new();
        for e in &self.entries {
            let unit = e.unit_id.as_deref();
            let Some(seq) = e.seq else {
                find(
                    None,
                    unit,
                    format!(
                        "{} is outside the log (no seq): inserted behind the ledger's back",
                        e.what
                    ),
                );
                continue;
            };
            if seq < expected {
                find(
                    Some(seq),
                    unit,
                    format!("entry {seq} appears twice ({})", e.what),
                );
                continue;
            }
            if seq > expected {
                find(
                    Some(expected),
                    None,
                    format!("entries {expected} to {} are missing (deleted)", seq - 1),
                );
            }
            expected = seq + 1;
            let leaf = merkle::leaf_hash(e.line.as_bytes());
            let stored = e.leaf.as_deref().and_then(|l| Hash::try_from(l).ok());
            if stored != Some(leaf) {
                find(
                    Some(seq),
                    unit,
                    format!(
                        "entry {seq} ({}) does not hash to its stored leaf: the row was edited or moved",
                        e.what
                    ),
                );
            }
            // The tree is built from the stored leaves: the heads then
            // catch a row rewritten together with its leaf hash.
            frontier.push(stored.unwrap_or(leaf));
            leaves.push(stored.unwrap_or(leaf));
            if wanted.contains(&frontier.size()) {
                roots_at.insert(frontier.size(), frontier.root());
            }
        }
        let size = frontier.size();
        for problem in self.check_tiles(&leaves) {
            find(None, None, problem);
        }
        let mut previous = 0;
        for h in &self.heads {
            let head_size = h.size;
            match open(&h.checkpoint) {
                Ok(c) if c.size == head_size && c.root.as_slice() == h.root.as_slice() => {}
                Ok(_) => find(
                    None,
                    None,
                    format!("the stored head of size {head_size} differs from its own signed note"),
                ),
                Err(why) => find(None, None, format!("the head of size {head_size}: {why}")),
            }
            match roots_at.get(&head_size) {
                None => find(None, None, format!(
                    "the log holds {size} entries but a signed head says {head_size}: {} entries were deleted", head_size.saturating_sub(size)
                )),
                Some(r) if r.as_slice() != h.root.as_slice() => find(None, None, format!(
                    "the first {head_size} entries do not make the root signed at that size: an entry from {previous} to {} was changed, removed or reordered", head_size.saturating_sub(1)
                )),
                Some(_) => {}
            }
            previous = head_size;
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
        LogReport {
            size,
            root: hex::encode(frontier.root()),
            heads_checked: self.heads.len() as u64,
            last_head_size: self.heads.last().map(|h| h.size),
            pending: self.pending,
            findings,
            ok,
        }
    }
}

/// Checks `source`'s log (see [`Snapshot::verify`]).
pub fn verify(
    source: &dyn LogSource,
    signers: &[VerifyingKey],
    extra: Option<&str>,
) -> Result<LogReport, Error> {
    Ok(source.snapshot()?.sorted().verify(signers, extra))
}

/// Inclusion proof of `unit`'s redemption in the latest signed head.
/// `Ok(None)` when the unit is not in the log (or not under a head yet).
/// Read from the tiles (a few rows, docs/REDEMPTION.md §Tiles) when they
/// cover the head; else from every leaf.
pub fn prove_unit(source: &dyn LogSource, unit: Place) -> Result<Option<EntryProof>, Error> {
    let (
        Some(StoredEntry {
            seq: Some(seq),
            line,
            ..
        }),
        Some(head),
    ) = (source.redemption_entry(unit)?, source.latest_head()?)
    else {
        return Ok(None);
    };
    let (n, proof, rows_read) = if source.tiles_covered()? >= head.size {
        if seq >= head.size {
            return Ok(None);
        }
        let mut reader = SourceTiles(source);
        let mut tiles = Cached::new(&mut reader);
        let proof = tiles.inclusion_proof(seq, head.size)?;
        // The entry, the head, the coverage and the tiles.
        (head.size, proof, Some(3 + tiles.reads))
    } else {
        let leaves = source.snapshot()?.sorted().leaves(&source.log_name())?;
        let n = head.size.min(leaves.len() as u64) as usize;
        if seq as usize >= n {
            return Ok(None);
        }
        let proof = merkle::inclusion_proof(&leaves[..n], seq as usize).unwrap_or_default();
        (n as u64, proof, None)
    };
    Ok(Some(EntryProof {
        entry: line,
        leaf_index: seq,
        tree_size: n,
        inclusion_proof: proof.iter().map(hex::encode).collect(),
        root: hex::encode(&head.root),
        checkpoint: head.checkpoint,
        rows_read,
    }))
}

/// Consistency proof from size `from` to size `to` (default: the latest
/// head's). `Ok(None)` when a size is beyond the log. From the tiles when
/// they cover `to`.
pub fn prove_consistency(
    source: &dyn LogSource,
    from: u64,
    to: Option<u64>,
) -> Result<Option<ConsistencyProof>, Error> {
    let covered = source.tiles_covered()?;
    let to = match to {
        Some(to) => to,
        None => source.latest_head()?.map_or(covered, |h| h.size),
    };
    if from > to {
        return Ok(None);
    }
    if covered >= to {
        let mut reader = SourceTiles(source);
        let mut tiles = Cached::new(&mut reader);
        return Ok(Some(ConsistencyProof {
            from,
            to,
            from_root: hex::encode(tiles.root(from)?),
            to_root: hex::encode(tiles.root(to)?),
            consistency_proof: tiles
                .consistency_proof(from, to)?
                .iter()
                .map(hex::encode)
                .collect(),
        }));
    }
    let leaves = source.snapshot()?.sorted().leaves(&source.log_name())?;
    if to > leaves.len() as u64 {
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

/// A redemption row's hashed facts, owned (read back from a database).
pub(super) struct OwnedFields {
    pub(super) game: String,
    pub(super) emission: u32,
    pub(super) block: u32,
    pub(super) index: u32,
    pub(super) unit_id: String,
    pub(super) lot: u8,
    pub(super) prize_cents: u32,
    pub(super) record_sha256: String,
    pub(super) redeemed_at: String,
    pub(super) stopped_after_rolls: Option<u32>,
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

    /// Its leaf data at position `seq`.
    pub(super) fn line(&self, seq: u64) -> String {
        entry_line(seq, &self.borrow())
    }

    /// The redemption's entry, at `seq` with `leaf` stored beside it.
    pub(super) fn into_entry(self, seq: Option<u64>, leaf: Option<Vec<u8>>) -> StoredEntry {
        StoredEntry {
            line: self.line(seq.unwrap_or(0)),
            what: format!("the redemption of {}", self.unit_id),
            unit_id: Some(self.unit_id),
            seq,
            leaf,
        }
    }
}

/// A sale row read back.
pub(super) fn sale_entry(
    p: Place,
    seq: Option<u64>,
    leaf: Option<Vec<u8>>,
    sold_at: &str,
) -> StoredEntry {
    StoredEntry {
        line: sale_line(seq.unwrap_or(0), p, sold_at),
        what: format!(
            "the sale of {} emission {} block {} unit {}",
            p.game, p.emission, p.block, p.index
        ),
        unit_id: None,
        seq,
        leaf,
    }
}

/// A finished play row read back.
pub(super) fn play_entry(
    p: Place,
    seq: u64,
    leaf: Vec<u8>,
    rolls: u32,
    how: &str,
    at: &str,
) -> StoredEntry {
    StoredEntry {
        line: play_line(seq, p, rolls, how, at),
        what: format!(
            "the play of {} emission {} block {} unit {}",
            p.game, p.emission, p.block, p.index
        ),
        unit_id: None,
        seq: Some(seq),
        leaf: Some(leaf),
    }
}

pub(super) const REDEMPTION_COLUMNS: &str =
    "seq, leaf_hash, game, emission, block, unit_index, unit_id, lot,
    prize_cents, record_sha256, redeemed_at, stopped_after_rolls";

/// The redemption rows `clause` selects (`WHERE …`, with `params`): place,
/// stored leaf, facts.
type RawRedemption = (Option<u64>, Option<Vec<u8>>, OwnedFields);

fn read_redemption_rows(
    conn: &rusqlite::Connection,
    clause: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<RawRedemption>, rusqlite::Error> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {REDEMPTION_COLUMNS} FROM redemptions {clause}"
    ))?;
    let rows = stmt.query_map(params, |r| {
        let fields = OwnedFields {
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
        };
        Ok((r.get(0)?, r.get(1)?, fields))
    })?;
    rows.collect()
}

/// The redemption entries `clause` selects.
fn read_redemptions(
    conn: &rusqlite::Connection,
    clause: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<StoredEntry>, rusqlite::Error> {
    Ok(read_redemption_rows(conn, clause, params)?
        .into_iter()
        .map(|(seq, leaf, f)| f.into_entry(seq, leaf))
        .collect())
}

/// Every sale, finished play and logged end of claims of an SQLite ledger.
fn read_sales_and_plays(conn: &rusqlite::Connection) -> Result<Vec<StoredEntry>, rusqlite::Error> {
    let mut out = Vec::new();
    let mut stmt = conn
        .prepare("SELECT game, emission, block, unit_index, seq, leaf_hash, sold_at FROM sales")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let game: String = r.get(0)?;
        let p = Place {
            game: &game,
            emission: r.get(1)?,
            block: r.get(2)?,
            index: r.get(3)?,
        };
        out.push(sale_entry(p, r.get(4)?, r.get(5)?, &r.get::<_, String>(6)?));
    }
    let mut stmt = conn.prepare(
        "SELECT game, emission, block, unit_index, seq, leaf_hash, rolls, ended, ended_at
         FROM plays WHERE seq IS NOT NULL",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let game: String = r.get(0)?;
        let p = Place {
            game: &game,
            emission: r.get(1)?,
            block: r.get(2)?,
            index: r.get(3)?,
        };
        out.push(play_entry(
            p,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            &r.get::<_, Option<String>>(7)?.unwrap_or_default(),
            &r.get::<_, Option<String>>(8)?.unwrap_or_default(),
        ));
    }
    // A claims row without a seq is a pre-log row (written before ends of
    // claims were logged): not an entry; a writer adopts it into the log
    // when it next opens the ledger.
    let mut stmt = conn.prepare(
        "SELECT game, emission, statement, ended_at, seq, leaf_hash
         FROM claims_ended WHERE seq IS NOT NULL",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let s = super::claims::EndOfClaims {
            game: r.get(0)?,
            emission: r.get(1)?,
            statement: r.get(2)?,
            ended_at: r.get(3)?,
        };
        out.push(claims_entry(&s, r.get(4)?, r.get(5)?));
    }
    Ok(out)
}

const HEAD_COLUMNS: &str = "size, root, signed_at, checkpoint";

fn read_head(r: &rusqlite::Row) -> Result<StoredHead, rusqlite::Error> {
    Ok(StoredHead {
        size: r.get(0)?,
        root: r.get(1)?,
        signed_at: r.get(2)?,
        checkpoint: r.get(3)?,
        signer: None,
    })
}

impl LogSource for Ledger {
    fn log_name(&self) -> String {
        self.path.display().to_string()
    }

    fn snapshot(&self) -> Result<Snapshot, Error> {
        let read = || -> Result<Snapshot, rusqlite::Error> {
            // One read transaction: the rows and heads of one moment.
            self.conn.execute_batch("BEGIN")?;
            let mut entries = read_redemptions(&self.conn, "", [])?;
            entries.extend(read_sales_and_plays(&self.conn)?);
            let mut stmt = self
                .conn
                .prepare(&format!("SELECT {HEAD_COLUMNS} FROM ledger_heads"))?;
            let heads = stmt.query_map([], read_head)?.collect::<Result<_, _>>()?;
            let mut stmt = self
                .conn
                .prepare("SELECT level, idx, hashes FROM log_tiles")?;
            let tiles = stmt
                .query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?
                .collect::<Result<_, _>>()?;
            Ok(Snapshot {
                entries,
                heads,
                pending: 0,
                tiles,
            })
        };
        let snapshot = read();
        let _ = self.conn.execute_batch("COMMIT");
        snapshot.map_err(|e| self.err(e))
    }

    fn latest_head(&self) -> Result<Option<StoredHead>, Error> {
        self.conn
            .query_row(
                &format!("SELECT {HEAD_COLUMNS} FROM ledger_heads ORDER BY size DESC LIMIT 1"),
                [],
                read_head,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    fn redemption_entry(&self, p: Place) -> Result<Option<StoredEntry>, Error> {
        Ok(read_redemptions(
            &self.conn,
            "WHERE game=?1 AND emission=?2 AND block=?3 AND unit_index=?4",
            params![p.game, p.emission, p.block, p.index],
        )
        .map_err(|e| self.err(e))?
        .pop())
    }

    fn tile(&self, id: TileId) -> Result<Vec<Hash>, Error> {
        SqliteTiles(&self.conn).tile(id)
    }

    fn tiles_covered(&self) -> Result<u64, Error> {
        sqlite_tiles_covered(&self.conn).map_err(|e| self.err(e))
    }
}

impl Ledger {
    /// Numbers rows recorded before the log existed (a ledger with no head
    /// yet): in time, then key order. A ledger with heads is never renumbered.
    pub fn adopt_unlogged_rows(&mut self) -> Result<(), Error> {
        let path = self.path.clone();
        let err = |source: rusqlite::Error| Error::Ledger {
            path: path.clone(),
            source: source.into(),
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        let heads: u64 = tx
            .query_row("SELECT COUNT(*) FROM ledger_heads", [], |r| r.get(0))
            .map_err(err)?;
        if heads == 0 {
            let rows = read_redemption_rows(
                &tx,
                "WHERE seq IS NULL ORDER BY redeemed_at, game, emission, block, unit_index",
                [],
            )
            .map_err(err)?;
            let first: u64 = tx
                .query_row(
                    "SELECT COALESCE(MAX(seq) + 1, 0) FROM log_leaves",
                    [],
                    |r| r.get(0),
                )
                .map_err(err)?;
            for (next, (_, _, f)) in (first..).zip(rows) {
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
}
