//! The ledger as a tamper-evident log (docs/REDEMPTION.md §Tamper-evident
//! log), free of storage: typed entries ([`LogEntry`], one encoding each),
//! each at a position `seq` and hashed as an RFC 9162 leaf
//! ([`ticket_issuer_core::merkle`]); heads signed with the ledger key as C2SP
//! tlog-checkpoint signed notes; [`Snapshot::verify`], which replays every
//! entry against its stored leaf hash and every stored head; inclusion and
//! consistency proofs, read from the tiles. A database is a [`LogSource`]
//! (`sqlite_log.rs`, `pg.rs`): this module reads it, never its tables.

use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::VerifyingKey;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::tiles::{self, Cached, TileId, TileSource};

pub use crate::checkpoint::{key_id, open_checkpoint, origin, verifier_key, Checkpoint, LedgerKey};
use ticket_issuer_core::error::Error;
use ticket_issuer_core::merkle::{self, Frontier, Hash};

/// The facts of one redemption entry, as hashed.
#[derive(Clone, Copy, Debug)]
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
    pub stopped_after_steps: Option<u32>,
}

/// The leaf hashes of `rows` ((seq, stored leaf) in `seq` order, from
/// entry `from`); an entry missing or without a 32-byte leaf is damage,
/// named by its position (either database).
pub fn contiguous(
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

/// The leaf data of `entries` (those of one read of positions `from` on),
/// in log order: they must be the positions from `from` without a gap (a
/// range past the log's end is cut short, never gapped); a gap is damage.
pub fn in_order(
    from: u64,
    mut entries: Vec<StoredEntry>,
    ledger: &Path,
) -> Result<Vec<String>, Error> {
    entries.sort_by_key(|e| e.seq);
    let mut lines = Vec::with_capacity(entries.len());
    for e in entries {
        let expected = from + lines.len() as u64;
        if e.seq != Some(expected) {
            return Err(missing_entry(expected, ledger));
        }
        lines.push(e.line);
    }
    Ok(lines)
}

/// Entry `seq` is missing from the log, or has no leaf hash.
pub fn missing_entry(seq: u64, ledger: &Path) -> Error {
    Error::LedgerDamaged {
        path: ledger.to_path_buf(),
        reason: format!(
            "entry {seq} of the log is missing or has no leaf hash; run `issuer ledger verify`"
        ),
    }
}

/// A tile that could not be read or decoded: which, and why.
pub fn tile_error(level: u8, index: u64, e: &dyn std::fmt::Display) -> Error {
    Error::LedgerUnavailable {
        path: "log_tiles".into(),
        reason: format!("tile {level}/{index}: {e}"),
    }
}

/// A stored tile's hashes; a row that is not whole hashes is damage.
pub fn decoded(level: u8, index: u64, bytes: Option<Vec<u8>>) -> Result<Vec<Hash>, Error> {
    match bytes {
        None => Ok(Vec::new()),
        Some(b) => tiles::decode(&b).ok_or_else(|| Error::LedgerDamaged {
            path: "log_tiles".into(),
            reason: format!("tile {level}/{index} is not a whole number of hashes"),
        }),
    }
}

/// A signed head of the ledger (`issuer ledger head`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
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
    /// The entry's leaf data ([`LogEntry::line`]), as hashed.
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

/// One entry of the log, typed (docs/REDEMPTION.md §Tamper-evident log):
/// what the ledger records, each kind with one encoding, its leaf data
/// ([`LogEntry::line`]). Another kind (the lifecycle events to come) is
/// one more variant, with a line of its own prefix.
#[derive(Clone, Copy, Debug)]
pub enum LogEntry<'a> {
    /// A unit sold: `sale/v1|seq|game|emission|block|index|sold_at\n`.
    Sale {
        /// The unit.
        unit: Place<'a>,
        /// When.
        sold_at: &'a str,
    },
    /// A play of a game played step by step finished:
    /// `play/v1|seq|game|emission|block|index|steps|how|ended_at\n` (the
    /// line's field is named `rolls` in FORMAT.md, today's name), `how`
    /// being `stop` (the player stopped after `steps` steps) or `end` (the
    /// play ended by itself, by the game's rules, at step `steps`).
    PlayEnd {
        /// The unit.
        unit: Place<'a>,
        /// Steps played.
        steps: u32,
        /// `stop` or `end`.
        how: &'a str,
        /// When.
        ended_at: &'a str,
    },
    /// A unit paid:
    /// `ledger/v1|seq|game|emission|block|index|unit_id|lot|prize_cents|record_sha256|redeemed_at|stop\n`
    /// (`stop` empty when the unit was played to the end).
    Redemption(EntryFields<'a>),
    /// An emission's end of claims: `claims/v1|seq|game|emission|ended_at|sha256\n`,
    /// `sha256` being the hex SHA-256 of the signed statement as stored.
    EndOfClaims(&'a crate::claims::EndOfClaims),
    /// An operator's action (a suspension, a resumption, a withdrawal, a
    /// void): `operator/v1|seq|action|game|emission|block|index|by|at|reason_sha256\n`
    /// ([`crate::action::OperatorAction::line`]).
    Operator(&'a crate::action::OperatorAction),
}

impl LogEntry<'_> {
    /// Its leaf data at position `seq` (integers in decimal).
    #[must_use]
    pub fn line(&self, seq: u64) -> String {
        match self {
            LogEntry::Sale { unit: p, sold_at } => format!(
                "sale/v1|{seq}|{}|{}|{}|{}|{sold_at}\n",
                p.game, p.emission, p.block, p.index
            ),
            LogEntry::PlayEnd {
                unit: p,
                steps,
                how,
                ended_at,
            } => format!(
                "play/v1|{seq}|{}|{}|{}|{}|{steps}|{how}|{ended_at}\n",
                p.game, p.emission, p.block, p.index
            ),
            LogEntry::Redemption(f) => {
                let stop = f
                    .stopped_after_steps
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
            LogEntry::EndOfClaims(s) => format!(
                "claims/v1|{seq}|{}|{}|{}|{}\n",
                s.game,
                s.emission,
                s.ended_at,
                hex::encode(Sha256::digest(s.statement.as_bytes()))
            ),
            LogEntry::Operator(a) => a.line(seq),
        }
    }

    /// Its RFC 9162 leaf hash at position `seq`.
    #[must_use]
    pub fn leaf(&self, seq: u64) -> Hash {
        merkle::leaf_hash(self.line(seq).as_bytes())
    }

    /// What it records, for messages ("the redemption of IAT-…").
    #[must_use]
    pub fn what(&self) -> String {
        let unit = |p: &Place| {
            format!(
                "{} emission {} block {} unit {}",
                p.game, p.emission, p.block, p.index
            )
        };
        match self {
            LogEntry::Sale { unit: p, .. } => format!("the sale of {}", unit(p)),
            LogEntry::PlayEnd { unit: p, .. } => format!("the play of {}", unit(p)),
            LogEntry::Redemption(f) => format!("the redemption of {}", f.unit_id),
            LogEntry::EndOfClaims(s) => {
                format!("the end of claims of {} emission {}", s.game, s.emission)
            }
            LogEntry::Operator(a) => a.what(),
        }
    }

    /// The entry as read back from a database: at `seq` (`None`: a row
    /// outside the log), with the `leaf` hash stored beside it.
    #[must_use]
    pub fn stored(&self, seq: Option<u64>, leaf: Option<Vec<u8>>) -> StoredEntry {
        StoredEntry {
            line: self.line(seq.unwrap_or(0)),
            what: self.what(),
            unit_id: match self {
                LogEntry::Redemption(f) => Some(f.unit_id.to_string()),
                _ => None,
            },
            seq,
            leaf,
        }
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
    /// The leaf data its row's facts make ([`LogEntry::line`]).
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
    /// The sale entry of a unit (its `seq` is `None` while it is queued
    /// for the sequencer, or for a sale recorded before the log).
    fn sale_entry(&self, unit: Place) -> Result<Option<StoredEntry>, Error>;
    /// The leaf data ([`LogEntry::line`]) of the entries at positions
    /// `[from, to)`, in order, read by position (never the whole log): as
    /// many as the log holds there (entries queued for the sequencer are
    /// not in it yet); a gap before the last one read is damage.
    fn entries(&self, from: u64, to: u64) -> Result<Vec<String>, Error>;
    /// A tile of the log's tree (empty when there is none).
    fn tile(&self, id: TileId) -> Result<Vec<Hash>, Error>;
    /// Leaves the tiles cover.
    fn tiles_covered(&self) -> Result<u64, Error>;
    /// The largest head whose note carries witnesses' cosignatures (a
    /// signature line besides the log's: the issuer stores them only once
    /// its quorum policy is met, docs/REDEMPTION.md §Cosigned checkpoints).
    fn latest_witnessed_head(&self) -> Result<Option<StoredHead>, Error>;
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

/// The log's root at `size` (`Ok(None)` when the log is shorter): from
/// the tiles when they cover it, else from every leaf.
pub fn root_at(source: &dyn LogSource, size: u64) -> Result<Option<Hash>, Error> {
    if source.tiles_covered()? >= size {
        let mut reader = SourceTiles(source);
        return Cached::new(&mut reader).root(size).map(Some);
    }
    let leaves = source.snapshot()?.sorted().leaves(&source.log_name())?;
    Ok(leaves
        .get(..usize::try_from(size).unwrap_or(usize::MAX))
        .map(merkle::root_from_hashes))
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

/// A redemption row's hashed facts, owned (read back from a database);
/// each field is [`EntryFields`]'s.
#[allow(missing_docs)]
pub struct OwnedFields {
    pub game: String,
    pub emission: u32,
    pub block: u32,
    pub index: u32,
    pub unit_id: String,
    pub lot: u8,
    pub prize_cents: u32,
    pub record_sha256: String,
    pub redeemed_at: String,
    pub stopped_after_steps: Option<u32>,
}

impl OwnedFields {
    /// Its fields, borrowed.
    pub fn borrow(&self) -> EntryFields<'_> {
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
            stopped_after_steps: self.stopped_after_steps,
        }
    }

    /// The redemption's entry, at `seq` with `leaf` stored beside it.
    pub fn into_entry(self, seq: Option<u64>, leaf: Option<Vec<u8>>) -> StoredEntry {
        LogEntry::Redemption(self.borrow()).stored(seq, leaf)
    }
}
