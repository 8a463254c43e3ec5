//! The SQLite ledger: one file in the store (WAL, synchronous FULL), its
//! rows and its log in the same transaction.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, DatabaseName, OptionalExtension, TransactionBehavior};

use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

use super::append;
use super::schema::{migrate_schema, set_wal, user_version, SQLITE_SCHEMA_VERSION};
use super::tx::SqliteTx;
use crate::error::Error;
use crate::game::Game;
use crate::ledger::summary::{BlockFigures, Row, SummaryRow, Summing, ACTIVITY, SUMMARY_ROWS};
use crate::ledger::{
    backend, claims, emission_rows, log, ops, remembered, BlockActivity, Recorded, Summary,
};
use crate::merkle::{self, Frontier};

/// How long a redeemer waits for another's transaction before giving up
/// (a command line's default; a service waits about a second).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// The ledger database.
pub struct Ledger {
    pub(super) path: PathBuf,
    pub(super) conn: Connection,
    /// The log's right edge as this connection last saw it (the writer's).
    frontier: Frontier,
    /// The head this store remembers of the log (a writer's), and whether
    /// this connection has checked that the log extends it.
    guard: Option<(std::sync::Arc<remembered::HeadMemory>, bool)>,
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

    pub(super) fn err(&self, source: rusqlite::Error) -> Error {
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
                    voided: r.get(7)?,
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
        append::catch_up(&tx, &mut frontier, &path)?;
        // Entries put back from the published log (`ledger recover`) are
        // what brings a rolled-back log up to the remembered head.
        let recovering = !ops.is_empty() && ops.iter().all(|op| matches!(op, ops::Op::Restore(_)));
        if let Some((memory, checked)) = self.guard.as_mut().filter(|_| !recovering) {
            // The whole prefix once per connection (from the tiles), then
            // its size: this connection's frontier only grows from there.
            let mut root_at =
                |n: u64| remembered::root_from_tiles(&mut append::SqliteTiles(&tx), n);
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
            Some(append::store_head(&tx, key, &frontier, &at, &path)?)
        } else {
            None
        };
        append::extend_tiles(&tx, frontier.size(), &path)?;
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
                    stopped_after_steps: r.get(12)?,
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
