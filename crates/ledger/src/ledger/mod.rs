//! The ledger (docs/REDEMPTION.md): sales, play ends and redemptions, each
//! recorded at most once under a primary key, in the store's SQLite
//! database (WAL, synchronous FULL; [`Ledger`]) or a shared PostgreSQL one
//! ([`pg`]), chosen by [`target`]. What one transaction does is written
//! once for both ([`ops`]); its rows are an append-only log hashed into an
//! RFC 9162 tree whose heads are signed ([`log`]); one writer per process
//! commits operations in batches ([`writer`]).

pub mod backend;
pub use ticket_issuer_log::{claims, log, published, receipt, tiles, witnessed};
pub mod columns;
pub mod emission_rows;
pub mod operator;
pub mod ops;
pub mod pg;
mod pg_env;
pub mod pg_sequencer;
pub mod remembered;
mod sqlite_log;
mod sqlite_tx;
pub mod target;
pub mod writer;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{
    params, Connection, DatabaseName, ErrorCode, OptionalExtension, TransactionBehavior,
};
use serde::Serialize;
use sha2::{Digest as _, Sha256};

use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

use crate::error::Error;
use crate::game::Game;
use crate::merkle::{self, Frontier};
use crate::money::Cents;
use crate::record::PREFIX_SIZE;
use sqlite_tx::SqliteTx;

/// How long a redeemer waits for another's transaction before giving up
/// (a command line's default; a service waits about a second).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Columns added after the first ledgers were written: `record` (the unit's
/// record, so a row can be replayed), `rules_version` and
/// `stopped_after_rolls` (the player's decision). Older rows hold NULL there
/// and are checked against their lot table instead.
/// `seq` and `leaf_hash` place the row in the log (docs/REDEMPTION.md
/// §Tamper-evident log).
const ADDED_COLUMNS: [(&str, &str); 5] = [
    ("record", "BLOB"),
    ("rules_version", "INTEGER"),
    ("stopped_after_rolls", "INTEGER"),
    ("seq", "INTEGER"),
    ("leaf_hash", "BLOB"),
];

/// What comes after the added columns: the log's index and its signed heads.
const LOG_SCHEMA: &str = "
CREATE UNIQUE INDEX IF NOT EXISTS redemptions_seq ON redemptions (seq);
CREATE TABLE IF NOT EXISTS ledger_heads (
    size        INTEGER PRIMARY KEY,
    root        BLOB    NOT NULL,
    signed_at   TEXT    NOT NULL,
    checkpoint  TEXT    NOT NULL,
    frontier    BLOB
);
CREATE TABLE IF NOT EXISTS sales (
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    block       INTEGER NOT NULL,
    unit_index  INTEGER NOT NULL,
    sold_at     TEXT    NOT NULL,
    seq         INTEGER NOT NULL UNIQUE,
    leaf_hash   BLOB    NOT NULL,
    PRIMARY KEY (game, emission, block, unit_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sale_cursor (
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    block       INTEGER NOT NULL,
    next_index  INTEGER NOT NULL,
    PRIMARY KEY (game, emission, block)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS plays (
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    block       INTEGER NOT NULL,
    unit_index  INTEGER NOT NULL,
    rolls       INTEGER NOT NULL,
    ended       TEXT,
    ended_at    TEXT,
    updated_at  TEXT    NOT NULL,
    seq         INTEGER UNIQUE,
    leaf_hash   BLOB,
    PRIMARY KEY (game, emission, block, unit_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idempotency (
    key         TEXT    PRIMARY KEY,
    request     TEXT    NOT NULL,
    what        TEXT    NOT NULL,
    answer      TEXT    NOT NULL,
    kept_at     TEXT    NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS claims_ended (
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    statement   TEXT    NOT NULL,
    ended_at    TEXT    NOT NULL,
    seq         INTEGER,
    leaf_hash   BLOB,
    PRIMARY KEY (game, emission)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_tiles (
    level       INTEGER NOT NULL,
    idx         INTEGER NOT NULL,
    hashes      BLOB    NOT NULL,
    PRIMARY KEY (level, idx)
) WITHOUT ROWID;
";

/// Columns added to `claims_ended` when ends of claims entered the log
/// (issue 21): its place in the log. Older rows hold NULL there until a
/// writer adopts them ([`Ledger::unlogged_claims`]).
const CLAIMS_ADDED_COLUMNS: [(&str, &str); 2] = [("seq", "INTEGER"), ("leaf_hash", "BLOB")];

/// Every leaf of the log, whatever its table. A ledger written before ends
/// of claims were logged has a view without them: it is replaced.
const LOG_LEAVES: &str = "
CREATE UNIQUE INDEX IF NOT EXISTS claims_ended_seq ON claims_ended (seq);
CREATE VIEW IF NOT EXISTS log_leaves AS
    SELECT seq, leaf_hash FROM redemptions WHERE seq IS NOT NULL
    UNION ALL SELECT seq, leaf_hash FROM sales
    UNION ALL SELECT seq, leaf_hash FROM plays WHERE seq IS NOT NULL
    UNION ALL SELECT seq, leaf_hash FROM claims_ended WHERE seq IS NOT NULL
    UNION ALL SELECT seq, leaf_hash FROM operator_actions WHERE seq IS NOT NULL;
";

/// The view as version 3 made it (before the operator's actions).
const LOG_LEAVES_V3: &str = "
CREATE UNIQUE INDEX IF NOT EXISTS claims_ended_seq ON claims_ended (seq);
CREATE VIEW IF NOT EXISTS log_leaves AS
    SELECT seq, leaf_hash FROM redemptions WHERE seq IS NOT NULL
    UNION ALL SELECT seq, leaf_hash FROM sales
    UNION ALL SELECT seq, leaf_hash FROM plays WHERE seq IS NOT NULL
    UNION ALL SELECT seq, leaf_hash FROM claims_ended WHERE seq IS NOT NULL;
";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS redemptions (
    game         TEXT    NOT NULL,
    emission     INTEGER NOT NULL,
    block        INTEGER NOT NULL,
    unit_index   INTEGER NOT NULL,
    unit_id      TEXT    NOT NULL,
    price_cents  INTEGER NOT NULL,
    lot          INTEGER NOT NULL,
    prize_cents  INTEGER NOT NULL,
    record_sha256 TEXT   NOT NULL,
    redeemed_at  TEXT    NOT NULL,
    record       BLOB,
    rules_version INTEGER,
    stopped_after_rolls INTEGER,
    seq          INTEGER,
    leaf_hash    BLOB,
    PRIMARY KEY (game, emission, block, unit_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS block_totals (
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    block       INTEGER NOT NULL,
    units       INTEGER NOT NULL,
    paid_cents  INTEGER NOT NULL,
    PRIMARY KEY (game, emission, block)
) WITHOUT ROWID;
";

/// Switches the database to WAL (which then persists in the file). The
/// switch needs an exclusive lock that SQLite will not wait for (it skips
/// the busy handler there to avoid deadlock), so when several processes
/// create the ledger at once the losers retry until `busy` has passed.
fn set_wal(conn: &Connection, busy: Duration) -> Result<(), rusqlite::Error> {
    let deadline = Instant::now() + busy;
    loop {
        match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
            // SQLite keeps its old mode where WAL can't work (some network
            // file systems): refuse rather than run with weaker durability.
            Ok(mode) if !mode.eq_ignore_ascii_case("wal") => {
                return Err(rusqlite::Error::InvalidParameterName(format!(
                    "the ledger's file system does not support WAL (journal mode stays {mode}); put the store on a local disk"
                )))
            }
            Ok(_) => return Ok(()),
            Err(e)
                if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(e),
        }
    }
}

/// A unit to record.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The game.
    pub game: Game,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Unit index.
    pub index: u32,
    /// The unit's ID as printed.
    pub unit_id: String,
    /// Unit price in cents.
    pub price_cents: u32,
    /// Lot code (0: none).
    pub lot: u8,
    /// Prize in cents.
    pub prize_cents: u32,
    /// SHA-256 of the unit's record, hex.
    pub record_sha256: String,
    /// The unit's record (prefix and payload), to replay the row later.
    pub record: Vec<u8>,
    /// The game's rules version the record was played under.
    pub rules_version: u16,
    /// The player's stop (rolls played before "Arrêter"); `None`: played
    /// to the end.
    pub stopped_after_rolls: Option<u32>,
}

impl Entry {
    /// The facts its log entry hashes, recorded at `redeemed_at`.
    #[must_use]
    pub fn fields<'a>(&'a self, redeemed_at: &'a str) -> log::EntryFields<'a> {
        log::EntryFields {
            game: self.game.slug(),
            emission: self.emission,
            block: self.block,
            index: self.index,
            unit_id: &self.unit_id,
            lot: self.lot,
            prize_cents: self.prize_cents,
            record_sha256: &self.record_sha256,
            redeemed_at,
            stopped_after_rolls: self.stopped_after_rolls,
        }
    }
}

/// The ledger database.
pub struct Ledger {
    path: PathBuf,
    conn: Connection,
    /// The log's right edge as this connection last saw it (the writer's).
    frontier: Frontier,
    /// The head this store remembers of the log (a writer's), and whether
    /// this connection has checked that the log extends it.
    guard: Option<(std::sync::Arc<remembered::HeadMemory>, bool)>,
}

/// Where a redemption landed in the log, once durable.
#[derive(Clone, Debug, Serialize)]
pub struct Committed {
    /// The entry is in the log: its place and the head that holds it are
    /// below. `false`: durable and queued; the sequencer appends it within
    /// the bound of docs/REDEMPTION.md §Sequencing (PostgreSQL).
    pub sequenced: bool,
    /// The entry's position in the log (0-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// Its RFC 9162 leaf hash, hex (docs/REDEMPTION.md §Tamper-evident log).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_hash: Option<String>,
    /// When the ledger recorded it (RFC 3339 UTC).
    #[serde(skip)]
    pub redeemed_at: String,
    /// The log's size after the commit that holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_size: Option<u64>,
    /// The log's root at that size, hex (signed in the head of that size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
}

impl Committed {
    /// Recorded at `at`, at entry `seq` with leaf hash `leaf` (`None`:
    /// queued); its tree size and root are set by [`ops::apply`] once the
    /// batch is done.
    /// The entry of a redemption read back (`seq`: `None` while queued).
    #[must_use]
    pub fn recorded(r: &Recorded) -> Committed {
        Committed {
            sequenced: r.seq.is_some(),
            seq: r.seq,
            leaf_hash: None,
            redeemed_at: r.redeemed_at.clone(),
            tree_size: None,
            root: None,
        }
    }

    pub(crate) fn at(logged: Option<(u64, merkle::Hash)>, at: &str) -> Committed {
        Committed {
            sequenced: logged.is_some(),
            seq: logged.map(|(seq, _)| seq),
            leaf_hash: logged.map(|(_, leaf)| hex::encode(leaf)),
            redeemed_at: at.to_string(),
            tree_size: None,
            root: None,
        }
    }
}

/// A unit's ledger row, as first recorded.
#[derive(Clone, Debug, Serialize)]
pub struct Recorded {
    /// When (RFC 3339, UTC).
    pub redeemed_at: String,
    /// Prize paid, cents.
    pub prize_cents: u32,
    /// Its entry in the log; `None` while queued for the sequencer.
    pub seq: Option<u64>,
}

/// Per-block figures of the ledger.
#[derive(Clone, Debug, Serialize)]
pub struct BlockLine {
    /// Game slug.
    pub game: String,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Units redeemed.
    pub units: u64,
    /// Of which winners.
    pub winners: u64,
    /// Amount paid (euros in JSON).
    pub paid: Cents,
    /// True iff the running total equals the sum of the rows' prizes and
    /// every row's prize is its lot's amount at the block's price.
    pub reconciled: bool,
}

/// The ledger's summary (`issuer ledger`).
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The database file.
    pub path: String,
    /// Per block.
    pub blocks: Vec<BlockLine>,
    /// Units redeemed in all.
    pub units: u64,
    /// Amount paid in all (euros in JSON).
    pub paid: Cents,
    /// SHA-256 over every row in key order (docs/REDEMPTION.md §Digest).
    pub digest: String,
    /// SQLite's integrity_check said "ok".
    pub integrity_ok: bool,
    /// Every block reconciles.
    pub reconciled: bool,
}

impl Summary {
    /// The summary of a ledger that does not exist yet: nothing redeemed.
    pub fn empty(path: &Path) -> Summary {
        Summary {
            path: path.display().to_string(),
            blocks: Vec::new(),
            units: 0,
            paid: Cents::ZERO,
            digest: hex::encode(Sha256::digest(b"")),
            integrity_ok: true,
            reconciled: true,
        }
    }
}

impl Ledger {
    /// Opens (creating if needed) the ledger at `path`. The database and
    /// its `-wal` and `-shm` files are the owner's alone (0600, or 0400 if
    /// the owner made it read-only), whatever the umask.
    pub fn open(path: &Path) -> Result<Ledger, Error> {
        Ledger::open_waiting(path, BUSY_TIMEOUT)
    }

    /// [`Ledger::open`], waiting at most `busy` for another writer's lock
    /// before answering "unavailable".
    pub fn open_waiting(path: &Path, busy: Duration) -> Result<Ledger, Error> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        // Created 0600 before SQLite opens it: SQLite gives its -wal and
        // -shm files the database file's mode. Only ever a new file: closing
        // any descriptor of an open database drops every POSIX lock this
        // process holds on it, SQLite's included; another connection then
        // believed itself the last, checkpointed nothing and deleted the
        // -wal of a live writer (commits lost; found in issue 19).
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(path, e)),
        }
        let err = |source: rusqlite::Error| Error::Ledger {
            path: path.to_path_buf(),
            source: source.into(),
        };
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(busy).map_err(err)?;
        set_wal(&conn, busy).map_err(err)?;
        // SQLite opens a database this user cannot write read-only; a write
        // then fails as `ledger_unavailable` (exit 3), which names the cause.
        let read_only = conn.is_readonly(DatabaseName::Main).map_err(err)?;
        for suffix in ["", "-wal", "-shm"] {
            let file = PathBuf::from(format!("{}{suffix}", path.display()));
            let mode = match std::fs::metadata(&file) {
                Ok(m) => m.permissions().mode() & 0o7777,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&file, e)),
            };
            // Only group and other bits are taken away: a ledger its owner
            // made read-only stays read-only.
            if mode & 0o077 != 0 {
                match std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode & 0o700))
                {
                    Ok(()) => {}
                    // Another user's file: not ours to change, and never
                    // written through this read-only connection.
                    Err(e) if read_only && e.kind() == std::io::ErrorKind::PermissionDenied => {}
                    Err(e) => return Err(Error::io(&file, e)),
                }
            }
        }
        conn.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            .map_err(err)?;
        migrate_schema(&conn, read_only).map_err(err)?;
        let ledger = Ledger {
            path: path.to_path_buf(),
            conn,
            frontier: Frontier::default(),
            guard: None,
        };
        ledger.refuse_newer_schema()?;
        Ok(ledger)
    }

    /// Opens the ledger at `path` if there is one, creating nothing: for
    /// commands that only read it. `None` when nothing was ever redeemed.
    pub fn open_existing(path: &Path) -> Result<Option<Ledger>, Error> {
        Ledger::open_existing_waiting(path, BUSY_TIMEOUT)
    }

    /// [`Ledger::open_existing`], waiting at most `busy` for a lock.
    pub fn open_existing_waiting(path: &Path, busy: Duration) -> Result<Option<Ledger>, Error> {
        match std::fs::metadata(path) {
            Ok(_) => Ledger::open_waiting(path, busy).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    fn err(&self, source: rusqlite::Error) -> Error {
        Error::Ledger {
            path: self.path.clone(),
            source: source.into(),
        }
    }

    /// The first redemption of a unit, if any.
    pub fn lookup(
        &self,
        game: Game,
        emission: u32,
        block: u32,
        index: u32,
    ) -> Result<Option<Recorded>, Error> {
        self.conn
            .query_row(
                "SELECT redeemed_at, prize_cents, seq FROM redemptions
                 WHERE game=?1 AND emission=?2 AND block=?3 AND unit_index=?4",
                params![game.slug(), emission, block, index],
                |r| {
                    Ok(Recorded {
                        redeemed_at: r.get(0)?,
                        prize_cents: r.get(1)?,
                        seq: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The ledger's identity (made when its schema was).
    pub fn identity(&self) -> Result<String, Error> {
        self.conn
            .query_row("SELECT id FROM ledger_identity", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// [`Backend::cosign_head`] on this ledger.
    pub fn cosign_head(&self, size: u64, note: &str, cosigned: &str) -> Result<bool, Error> {
        let size = i64::try_from(size).unwrap_or(i64::MAX);
        self.conn
            .execute(
                "UPDATE ledger_heads SET checkpoint = ?1 WHERE size = ?2 AND checkpoint = ?3",
                rusqlite::params![cosigned, size, note],
            )
            .map(|n| n == 1)
            .map_err(|e| self.err(e))
    }

    /// Refuses a ledger whose schema is a newer issuer's.
    pub(crate) fn refuse_newer_schema(&self) -> Result<(), Error> {
        match user_version(&self.conn).map_err(|e| self.err(e))? {
            found if found > SQLITE_SCHEMA_VERSION => Err(Error::LedgerUnavailable {
                path: self.path.clone(),
                reason: backend::newer_schema(found, SQLITE_SCHEMA_VERSION),
            }),
            _ => Ok(()),
        }
    }

    /// What each block's units have been through ([`ACTIVITY`]).
    pub fn activity(&self) -> Result<Vec<BlockActivity>, Error> {
        let mut stmt = self.conn.prepare(ACTIVITY).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(BlockActivity {
                    game: r.get(0)?,
                    emission: r.get(1)?,
                    block: r.get(2)?,
                    sold: r.get(3)?,
                    played: r.get(4)?,
                    redeemed: r.get(5)?,
                    paid_cents: r.get(6)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Waits at most `busy` for another writer's lock from now on.
    pub(crate) fn set_busy(&self, busy: Duration) -> Result<(), Error> {
        self.conn.busy_timeout(busy).map_err(|e| self.err(e))
    }

    /// The schema version of the ledger at `path` (0: none, or written
    /// before versions were kept); opens nothing for writing.
    pub fn schema_version_of(path: &Path) -> Result<i64, Error> {
        if !path.exists() {
            return Ok(0);
        }
        let err = |source: rusqlite::Error| Error::Ledger {
            path: path.to_path_buf(),
            source: source.into(),
        };
        let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(err)?;
        user_version(&conn).map_err(err)
    }

    /// Runs the reads `f` in one read transaction.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&mut dyn ops::LedgerTx) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let err = |source: rusqlite::Error| Error::Ledger {
            path: self.path.clone(),
            source: source.into(),
        };
        let tx = self.conn.unchecked_transaction().map_err(err)?;
        let out = f(&mut SqliteTx {
            tx: &tx,
            path: &self.path,
            log: None,
        })?;
        tx.commit().map_err(err)?;
        Ok(out)
    }

    /// Every sale, play and redemption of `game`'s `emission`, each kind
    /// read by one query, all in one read transaction (one snapshot),
    /// handed to `f` row by row ([`emission_rows`]).
    pub(crate) fn emission_rows(
        &self,
        game: &str,
        emission: u32,
        f: &mut emission_rows::EmissionReads,
    ) -> Result<(), Error> {
        let err = |e: rusqlite::Error| self.err(e);
        let tx = self.conn.unchecked_transaction().map_err(err)?;
        for kind in emission_rows::Kind::ALL {
            let mut stmt = tx.prepare(kind.sql()).map_err(err)?;
            let mut rows = stmt.query(params![game, emission]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                f(kind.row(r).map_err(err)?)?;
            }
        }
        tx.commit().map_err(err)
    }

    /// Applies `ops` in one immediate transaction ([`ops::apply`]): each
    /// unit sold, played and paid at most once, every change appended to the
    /// log, whose new head is signed with `key` and stored. Returns one
    /// outcome per operation, in order, once the transaction is durable.
    /// `Err` when the transaction failed as a whole (nothing was recorded).
    pub fn commit(
        &mut self,
        ops: &[ops::Op],
        key: &log::LedgerKey,
    ) -> Result<Vec<Result<ops::Done, Error>>, Error> {
        let path = self.path.clone();
        let err = |source: rusqlite::Error| Error::Ledger {
            path: path.clone(),
            source: source.into(),
        };
        let mut frontier = self.frontier.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        sqlite_log::catch_up(&tx, &mut frontier, &path)?;
        // Entries put back from the published log (`ledger recover`) are
        // what brings a rolled-back log up to the remembered head.
        let recovering = !ops.is_empty() && ops.iter().all(|op| matches!(op, ops::Op::Restore(_)));
        if let Some((memory, checked)) = self.guard.as_mut().filter(|_| !recovering) {
            // The whole prefix once per connection (from the tiles), then
            // its size: this connection's frontier only grows from there.
            let mut root_at =
                |n: u64| remembered::root_from_tiles(&mut sqlite_log::SqliteTiles(&tx), n);
            let root_at: Option<&mut dyn FnMut(u64) -> Result<merkle::Hash, Error>> =
                if *checked { None } else { Some(&mut root_at) };
            memory.check(frontier.size(), root_at)?;
            *checked = true;
        }
        let at: String = tx
            .query_row("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", [], |r| {
                r.get(0)
            })
            .map_err(err)?;
        let before = frontier.size();
        let outcomes = ops::apply(
            &mut SqliteTx {
                tx: &tx,
                path: &path,
                log: Some(&mut frontier),
            },
            &at,
            ops,
        )?;
        let signed = if frontier.size() > before {
            Some(sqlite_log::store_head(&tx, key, &frontier, &at, &path)?)
        } else {
            None
        };
        sqlite_log::extend_tiles(&tx, frontier.size(), &path)?;
        tx.commit().map_err(err)?;
        self.frontier = frontier;
        if let (Some((memory, _)), Some(note)) = (&self.guard, signed) {
            // Remembered before anyone is answered: a head not kept is a
            // head the node could sign again over a shorter log.
            if let Err(e) = memory.remember(&note) {
                return Ok(outcomes
                    .into_iter()
                    .map(|_| {
                        Err(Error::LedgerOutcomeUnknown {
                            path: path.clone(),
                            reason: format!("the commit is durable but its head could not be remembered ({e}); retry with the same idempotency key once fixed"),
                        })
                    })
                    .collect());
            }
        }
        Ok(outcomes)
    }

    /// Checks every commit against the head `memory` remembers, and
    /// remembers each head signed (a writer of the store's ledger).
    pub fn guard(&mut self, memory: std::sync::Arc<remembered::HeadMemory>) {
        self.guard = Some((memory, false));
    }

    /// Ends of claims published before they were logged (a row without a
    /// seq), oldest first: a writer adopts them into the log
    /// ([`ops::Op::EndClaims`]) when it opens the ledger.
    pub fn unlogged_claims(&self) -> Result<Vec<claims::EndOfClaims>, Error> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT game, emission, statement, ended_at FROM claims_ended
                 WHERE seq IS NULL ORDER BY ended_at, game, emission",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(claims::EndOfClaims {
                    game: r.get(0)?,
                    emission: r.get(1)?,
                    statement: r.get(2)?,
                    ended_at: r.get(3)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Per-block counts and amounts, reconciled, each row replayed, with
    /// the ledger digest and SQLite's integrity check.
    pub fn summary(&self) -> Result<Summary, Error> {
        let integrity: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.game, r.emission, r.block, COUNT(*), SUM(r.lot <> 0), SUM(r.prize_cents),
                        t.units, t.paid_cents
                 FROM redemptions r LEFT JOIN block_totals t
                   ON t.game = r.game AND t.emission = r.emission AND t.block = r.block
                 GROUP BY r.game, r.emission, r.block ORDER BY r.game, r.emission, r.block",
            )
            .map_err(|e| self.err(e))?;
        let figures = stmt
            .query_map([], |r| {
                Ok(BlockFigures {
                    game: r.get(0)?,
                    emission: r.get(1)?,
                    block: r.get(2)?,
                    units: r.get(3)?,
                    winners: r.get(4)?,
                    paid_cents: r.get(5)?,
                    total_units: r.get(6)?,
                    total_paid_cents: r.get(7)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        // Every row, streamed once in key order: the digest and the replay.
        let mut summing = Summing::default();
        let mut stmt = self.conn.prepare(SUMMARY_ROWS).map_err(|e| self.err(e))?;
        let mut rows = stmt.query([]).map_err(|e| self.err(e))?;
        let read = |r: &rusqlite::Row| -> rusqlite::Result<SummaryRow> {
            Ok(SummaryRow {
                game: r.get(0)?,
                emission: r.get(1)?,
                block: r.get(2)?,
                index: r.get(3)?,
                unit_id: r.get(4)?,
                redeemed_at: r.get(8)?,
                row: Row {
                    lot: r.get(5)?,
                    prize_cents: r.get(6)?,
                    record_sha256: r.get(7)?,
                    price_cents: r.get(9)?,
                    record: r.get(10)?,
                    rules_version: r.get(11)?,
                    stopped_after_rolls: r.get(12)?,
                },
            })
        };
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            summing.add(read(r).map_err(|e| self.err(e))?);
        }
        Ok(Summary::of(
            &self.path.display().to_string(),
            figures,
            summing,
            integrity == "ok",
        ))
    }
}

/// What each block's units have been through (`issuer status`): sold, play
/// ended, redeemed and paid; queued entries count (they are durable). The
/// same text for every database.
pub(crate) const ACTIVITY: &str = "
SELECT game, emission, block, CAST(SUM(sold) AS BIGINT), CAST(SUM(played) AS BIGINT),
       CAST(SUM(redeemed) AS BIGINT), CAST(SUM(paid) AS BIGINT)
FROM (
    SELECT game, emission, block, COUNT(*) AS sold, 0 AS played, 0 AS redeemed, 0 AS paid
    FROM sales GROUP BY game, emission, block
    UNION ALL
    SELECT game, emission, block, 0, COUNT(*), 0, 0
    FROM plays WHERE ended IS NOT NULL GROUP BY game, emission, block
    UNION ALL
    SELECT game, emission, block, 0, 0, COUNT(*), SUM(prize_cents)
    FROM redemptions GROUP BY game, emission, block
) AS t
GROUP BY game, emission, block ORDER BY game, emission, block";

/// One block's activity in the ledger ([`ACTIVITY`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockActivity {
    /// Game slug.
    pub game: String,
    /// Emission number.
    pub emission: u32,
    /// Block number.
    pub block: u32,
    /// Units sold.
    pub sold: u64,
    /// Plays that ended (Trésors Ensablés).
    pub played: u64,
    /// Units redeemed.
    pub redeemed: u64,
    /// Amount paid, cents.
    pub paid_cents: u64,
}

/// Every redemption in key order, as the summary reads it (the same text
/// for every database).
pub(crate) const SUMMARY_ROWS: &str =
    "SELECT game, emission, block, unit_index, unit_id, lot, prize_cents, record_sha256,
            redeemed_at, price_cents, record, rules_version, stopped_after_rolls
     FROM redemptions ORDER BY game, emission, block, unit_index";

/// One redemption as the summary reads it.
pub(crate) struct SummaryRow {
    pub(crate) game: String,
    pub(crate) emission: u32,
    pub(crate) block: u32,
    pub(crate) index: u32,
    pub(crate) unit_id: String,
    pub(crate) redeemed_at: String,
    pub(crate) row: Row,
}

/// The summary's one pass over every redemption, in key order: the ledger
/// digest, and the blocks with a row that does not replay (its record is
/// not the one its digest names, or playing it with its stop under its
/// rules version gives another lot or prize; a row without a record, from
/// an older ledger, is checked against its lot's amount at its price).
#[derive(Default)]
pub(crate) struct Summing {
    digest: Digest,
    wrong: Vec<(String, u32, u32)>,
}

impl Summing {
    pub(crate) fn add(&mut self, r: SummaryRow) {
        self.digest.add(
            &r.game,
            r.emission,
            r.block,
            r.index,
            &r.unit_id,
            r.row.lot,
            r.row.prize_cents,
            &r.row.record_sha256,
            &r.redeemed_at,
        );
        let replays = Game::from_slug(&r.game).is_some_and(|g| r.row.replays(g));
        let key = (r.game, r.emission, r.block);
        if !replays && !self.wrong.contains(&key) {
            self.wrong.push(key);
        }
    }
}

/// The ledger digest: SHA-256 over every redemption in key order, each as
/// the line `game|emission|block|index|unit_id|lot|prize_cents|record_sha256|redeemed_at\n`.
#[derive(Default)]
pub(crate) struct Digest(Sha256);

impl Digest {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        index: u32,
        unit_id: &str,
        lot: u8,
        prize_cents: u32,
        record_sha256: &str,
        redeemed_at: &str,
    ) {
        self.0.update(
            format!(
                "{game}|{emission}|{block}|{index}|{unit_id}|{lot}|{prize_cents}|{record_sha256}|{redeemed_at}\n"
            )
            .as_bytes(),
        );
    }

    pub(crate) fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

/// One block's figures as the database sums them, with its running totals.
pub(crate) struct BlockFigures {
    pub(crate) game: String,
    pub(crate) emission: u32,
    pub(crate) block: u32,
    pub(crate) units: u64,
    pub(crate) winners: u64,
    pub(crate) paid_cents: u64,
    pub(crate) total_units: Option<u64>,
    pub(crate) total_paid_cents: Option<u64>,
}

impl Summary {
    /// The summary of the ledger `path` from its blocks' figures, the blocks
    /// with a row that does not replay, its digest and integrity check.
    pub(crate) fn of(
        path: &str,
        figures: Vec<BlockFigures>,
        summing: Summing,
        integrity_ok: bool,
    ) -> Summary {
        let Summing { digest, wrong } = summing;
        let wrong_prizes = &wrong;
        let mut blocks = Vec::new();
        let (mut units, mut paid) = (0u64, 0u64);
        for f in figures {
            let reconciled = f.total_units == Some(f.units)
                && f.total_paid_cents == Some(f.paid_cents)
                && !wrong_prizes.contains(&(f.game.clone(), f.emission, f.block));
            units += f.units;
            paid += f.paid_cents;
            blocks.push(BlockLine {
                game: f.game,
                emission: f.emission,
                block: f.block,
                units: f.units,
                winners: f.winners,
                paid: Cents::from(f.paid_cents),
                reconciled,
            });
        }
        let reconciled = blocks.iter().all(|b| b.reconciled);
        Summary {
            path: path.to_string(),
            blocks,
            units,
            paid: Cents::from(paid),
            digest: hex::encode(digest.finish()),
            integrity_ok,
            reconciled,
        }
    }
}

/// The stored facts of one row that its replay is checked against.
pub(crate) struct Row {
    pub(crate) price_cents: u32,
    pub(crate) lot: u8,
    pub(crate) prize_cents: u32,
    pub(crate) record_sha256: String,
    pub(crate) record: Option<Vec<u8>>,
    pub(crate) rules_version: Option<u16>,
    pub(crate) stopped_after_rolls: Option<u32>,
}

impl Row {
    /// True when the row's lot and prize are what its unit gives.
    pub(crate) fn replays(&self, game: Game) -> bool {
        let Ok(table) = game.lot_table(self.price_cents) else {
            return false;
        };
        let Some(record) = &self.record else {
            // An older row: only the lot's amount can be checked.
            return table.amount_cents(self.lot) == Some(self.prize_cents);
        };
        let payload = record.get(PREFIX_SIZE..).unwrap_or_default();
        self.rules_version == Some(game.rules_version())
            && hex::encode(Sha256::digest(record)) == self.record_sha256
            && game
                .decode(payload)
                .ok()
                .and_then(|unit| unit.outcome(self.stopped_after_rolls).ok())
                .is_some_and(|played| {
                    played.lot == self.lot
                        && game.prize_cents(&played, &table) == Some(self.prize_cents)
                })
    }
}

/// Adds the columns of `added` that `table`, written before them, lacks.
fn add_missing_columns(
    conn: &Connection,
    table: &str,
    added: &[(&str, &str)],
) -> Result<(), rusqlite::Error> {
    let mut stmt = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
    let have: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for &(name, kind) in added {
        if !have.iter().any(|h| h == name) {
            match conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {name} {kind}")) {
                // Another process added it since we looked.
                Err(e) if e.to_string().contains("duplicate column name") => {}
                other => other?,
            }
        }
    }
    Ok(())
}

/// The SQLite ledger's schema version this build writes (`PRAGMA
/// user_version`; docs/REDEMPTION.md §Schema versions).
pub const SQLITE_SCHEMA_VERSION: i64 = 6;

/// A step of the SQLite schema.
type Step = fn(&Connection) -> Result<(), rusqlite::Error>;

/// Each version's step, oldest first. Every step is idempotent: a ledger
/// written before versions were kept (version 0, in any shape older
/// builds left) is brought up by running them all.
const SQLITE_MIGRATIONS: [(i64, Step); 6] = [
    // 1: redemptions and their blocks' running totals.
    (1, |c| c.execute_batch(SCHEMA)),
    // 2: the log (issue 11), sales and plays (13), idempotency keys (19),
    // ends of claims and tiles (21).
    (2, |c| {
        add_missing_columns(c, "redemptions", &ADDED_COLUMNS)?;
        c.execute_batch(LOG_SCHEMA)
    }),
    // 3: ends of claims in the log (issue 21): the view of every leaf is
    // remade with them.
    (3, |c| {
        add_missing_columns(c, "claims_ended", &CLAIMS_ADDED_COLUMNS)?;
        c.execute_batch("DROP VIEW IF EXISTS log_leaves")?;
        c.execute_batch(LOG_LEAVES_V3)
    }),
    // 4: the ledger's identity (issue 22), which the emissions sold
    // through it record.
    (4, |c| c.execute_batch(LEDGER_IDENTITY)),
    // 5: the operator's actions (issue 25), in the log beside the rest.
    (5, |c| {
        c.execute_batch(OPERATOR_ACTIONS)?;
        c.execute_batch("DROP VIEW IF EXISTS log_leaves")?;
        c.execute_batch(LOG_LEAVES)
    }),
    // 6: each sale's platform lane (issue 34): a sale made before has
    // none, the operator's alone (docs/SECURITY.md §Each platform in its
    // own lane).
    (6, |c| add_missing_columns(c, "sales", &[("lane", "TEXT")])),
];

/// The operator's actions (docs/REDEMPTION.md §Suspend, withdraw and
/// void), in the order recorded (`id`); a unit is voided once.
const OPERATOR_ACTIONS: &str = "
CREATE TABLE IF NOT EXISTS operator_actions (
    id          INTEGER PRIMARY KEY,
    action      TEXT    NOT NULL,
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    block       INTEGER,
    unit_index  INTEGER,
    reason      TEXT    NOT NULL,
    by_name     TEXT    NOT NULL,
    at          TEXT    NOT NULL,
    seq         INTEGER UNIQUE,
    leaf_hash   BLOB
);
CREATE INDEX IF NOT EXISTS operator_actions_emission ON operator_actions (game, emission);
CREATE UNIQUE INDEX IF NOT EXISTS operator_voids
    ON operator_actions (game, emission, block, unit_index) WHERE action = 'void';
";

/// The ledger's identity: a random 128-bit name, made once.
const LEDGER_IDENTITY: &str = "
CREATE TABLE IF NOT EXISTS ledger_identity (id TEXT NOT NULL);
INSERT INTO ledger_identity (id)
    SELECT lower(hex(randomblob(16))) WHERE NOT EXISTS (SELECT 1 FROM ledger_identity);
";

/// The schema version of the ledger in `conn`.
fn user_version(conn: &Connection) -> Result<i64, rusqlite::Error> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Brings the ledger in `conn` to [`SQLITE_SCHEMA_VERSION`] in one
/// immediate transaction (processes opening an old ledger at once take
/// turns; the second finds it done). Returns the version found; a newer
/// one is left alone for the caller to refuse. Writes nothing when the
/// schema is current, or when the file is read-only (read as it is).
fn migrate_schema(conn: &Connection, read_only: bool) -> Result<i64, rusqlite::Error> {
    let found = user_version(conn)?;
    if found >= SQLITE_SCHEMA_VERSION || read_only {
        return Ok(found);
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let done = (|| {
        let now = user_version(conn)?;
        for (version, step) in SQLITE_MIGRATIONS {
            if now < version {
                step(conn)?;
            }
        }
        if now < SQLITE_SCHEMA_VERSION {
            conn.pragma_update(None, "user_version", SQLITE_SCHEMA_VERSION)?;
        }
        conn.execute_batch("COMMIT")
    })();
    if done.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    done.map(|()| found)
}
