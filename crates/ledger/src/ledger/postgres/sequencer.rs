//! Sequencing a PostgreSQL ledger (docs/REDEMPTION.md §Sequencing).
//!
//! An operation commits durably under its unit's own key with no place in
//! the log: its row holds a `pending` number (from the `log_pending`
//! sequence) and no `seq`. One sequencer at a time (whichever node holds
//! the advisory lock [`SEQUENCER_LOCK`]) takes the queued rows it can see,
//! in `pending` order, gives each the next log position and its leaf hash,
//! extends the tree, adds the redemptions to their blocks' totals and
//! signs the new head, all in one transaction. Every node runs a
//! [`Sequencer`] thread that tries every [`TICK`]; the node whose turn it
//! is does the work.
//!
//! Order: an operation that started after another committed has a larger
//! `pending` number and is seen by any snapshot that sees it, so it is
//! sequenced after it (in the same batch or a later one).

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use postgres::IsolationLevel;

use super::conn::small;
use super::ledger::PgLedger;
use crate::error::Error;
use crate::ledger::claims::EndOfClaims;
use crate::ledger::log::{self, LedgerKey, OwnedFields, Place};
use crate::ledger::tiles::{self, TileId, TileSource};
use crate::merkle::{self, Frontier, Hash};

/// The advisory lock one sequencer holds while it appends.
pub const SEQUENCER_LOCK: i64 = 7_106_602;

/// How often each node's sequencer looks for queued entries: an entry is
/// in a signed head within about this long after its commit, plus one
/// batch's work.
pub const TICK: Duration = Duration::from_millis(100);

/// Most stored leaves tiled in one turn (a ledger written before tiles).
pub const BACKFILL: u64 = 1 << 20;

/// A PostgreSQL transaction's tiles.
struct PgTiles<'a, 'c>(&'a mut postgres::Transaction<'c>);

impl TileSource for PgTiles<'_, '_> {
    fn tile(&mut self, (level, index): TileId) -> Result<Vec<Hash>, Error> {
        let row = self
            .0
            .query_opt(
                "SELECT hashes FROM log_tiles WHERE level = $1 AND idx = $2",
                &[&i16::from(level), &i64::try_from(index).unwrap_or(i64::MAX)],
            )
            .map_err(|e| Error::LedgerUnavailable {
                path: "log_tiles".into(),
                reason: super::conn::db_text(&e),
            })?;
        log::decoded(level, index, row.map(|r| r.get(0)))
    }
}

/// Most entries appended in one transaction.
pub const MAX_SEQUENCED: i64 = 8192;

/// How long a node that stops waits for its queued entries to be
/// sequenced (by itself or another node) before it gives up and leaves
/// them to the next sequencer.
pub const DRAIN: Duration = Duration::from_secs(5);

/// A queued row, with what its log line needs.
pub(super) enum Queued {
    Redemption(OwnedFields),
    Sale {
        game: String,
        emission: u32,
        block: u32,
        index: u32,
        at: String,
    },
    Play {
        game: String,
        emission: u32,
        block: u32,
        index: u32,
        rolls: u32,
        how: String,
        at: String,
    },
    Claims(EndOfClaims),
    Operator(crate::ledger::operator::OperatorAction),
}

impl Queued {
    /// Its table (in [`TABLES`]).
    pub(super) fn table(&self) -> usize {
        match self {
            Queued::Redemption(_) => 0,
            Queued::Sale { .. } => 1,
            Queued::Play { .. } => 2,
            Queued::Claims(_) => 3,
            Queued::Operator(_) => 4,
        }
    }

    /// Its leaf data at position `seq`.
    pub(super) fn line(&self, seq: u64) -> String {
        self.entry().line(seq)
    }

    /// The log entry it becomes.
    pub(super) fn entry(&self) -> log::LogEntry<'_> {
        match self {
            Queued::Redemption(f) => log::LogEntry::Redemption(f.borrow()),
            Queued::Sale {
                game,
                emission,
                block,
                index,
                at,
            } => log::LogEntry::Sale {
                unit: place(game, *emission, *block, *index),
                sold_at: at,
            },
            Queued::Play {
                game,
                emission,
                block,
                index,
                rolls,
                how,
                at,
            } => log::LogEntry::PlayEnd {
                unit: place(game, *emission, *block, *index),
                steps: *rolls,
                how,
                ended_at: at,
            },
            Queued::Claims(s) => log::LogEntry::EndOfClaims(s),
            Queued::Operator(a) => log::LogEntry::Operator(a),
        }
    }
}

fn place(game: &str, emission: u32, block: u32, index: u32) -> Place<'_> {
    Place {
        game,
        emission,
        block,
        index,
    }
}

/// The tables entries are queued in, in [`Queued::table`] order.
pub(super) const TABLES: [&str; 5] = [
    "redemptions",
    "sales",
    "plays",
    "claims_ended",
    "operator_actions",
];

/// Reads the queue: up to `max` rows of each table, oldest first.
pub(super) fn read_queue(
    tx: &mut postgres::Transaction,
    max: i64,
) -> Result<Vec<(i64, Queued)>, postgres::Error> {
    let mut queue = Vec::new();
    for r in tx.query(
        &format!(
            "SELECT {}, pending FROM redemptions WHERE seq IS NULL AND pending IS NOT NULL
             ORDER BY pending LIMIT $1",
            crate::ledger::columns::REDEMPTION_COLUMNS
        ),
        &[&max],
    )? {
        queue.push((r.get(12), Queued::Redemption(super::read::owned_fields(&r))));
    }
    for r in tx.query(
        "SELECT pending, game, emission, block, unit_index, sold_at FROM sales
         WHERE seq IS NULL AND pending IS NOT NULL ORDER BY pending LIMIT $1",
        &[&max],
    )? {
        queue.push((
            r.get(0),
            Queued::Sale {
                game: r.get(1),
                emission: small(r.get(2)),
                block: small(r.get(3)),
                index: small(r.get(4)),
                at: r.get(5),
            },
        ));
    }
    for r in tx.query(
        "SELECT pending, game, emission, block, unit_index, rolls, ended, ended_at FROM plays
         WHERE seq IS NULL AND pending IS NOT NULL ORDER BY pending LIMIT $1",
        &[&max],
    )? {
        queue.push((
            r.get(0),
            Queued::Play {
                game: r.get(1),
                emission: small(r.get(2)),
                block: small(r.get(3)),
                index: small(r.get(4)),
                rolls: small(r.get(5)),
                how: r.get::<_, Option<String>>(6).unwrap_or_default(),
                at: r.get::<_, Option<String>>(7).unwrap_or_default(),
            },
        ));
    }
    for r in tx.query(
        "SELECT pending, game, emission, statement, ended_at FROM claims_ended
         WHERE seq IS NULL AND pending IS NOT NULL ORDER BY pending LIMIT $1",
        &[&max],
    )? {
        queue.push((
            r.get(0),
            Queued::Claims(EndOfClaims {
                game: r.get(1),
                emission: small(r.get(2)),
                statement: r.get(3),
                ended_at: r.get(4),
            }),
        ));
    }
    for r in tx.query(
        &format!(
            "SELECT {}, pending FROM operator_actions
             WHERE seq IS NULL AND pending IS NOT NULL ORDER BY pending LIMIT $1",
            crate::ledger::operator::COLUMNS
        ),
        &[&max],
    )? {
        queue.push((r.get(8), Queued::Operator(super::read::operator_action(&r))));
    }
    queue.sort_by_key(|(pending, _)| *pending);
    queue.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    Ok(queue)
}

/// Entries of one table placed in a turn: pending numbers, positions,
/// leaves.
type Placed = (Vec<i64>, Vec<i64>, Vec<Vec<u8>>);

/// A queued row given its place: its table (in [`TABLES`]), its pending
/// number, its leaf data at that place and, for a redemption, its block
/// and prize (the block's running totals).
pub(super) struct ToPlace {
    pub(super) table: usize,
    pub(super) pending: i64,
    pub(super) line: String,
    pub(super) paid: Option<((String, u32, u32), u32)>,
}

impl Queued {
    /// A redemption's block and prize.
    pub(super) fn paid(&self) -> Option<((String, u32, u32), u32)> {
        match self {
            Queued::Redemption(f) => Some(((f.game.clone(), f.emission, f.block), f.prize_cents)),
            _ => None,
        }
    }
}

/// What one turn of the sequencer did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Another node holds the sequencer lock.
    Busy,
    /// Appended this many entries (0: the queue was empty).
    Appended(u64),
}

impl PgLedger {
    /// One turn of the sequencer: appends up to `max` queued entries and
    /// signs the new head with `key`, unless another node is sequencing.
    pub fn sequence(&self, key: &LedgerKey, max: i64) -> Result<Turn, Error> {
        let db = |e: postgres::Error| self.db_error(&e);
        let mut conn = self.conn()?;
        let mut tx = conn
            .build_transaction()
            .isolation_level(IsolationLevel::ReadCommitted)
            .start()
            .map_err(db)?;
        // Every node, sequencing or not, checks each turn that the log
        // extends the head it remembers: a database restored under it is
        // found within a turn.
        if let Some(memory) = &self.memory {
            // The log's size and the latest head any node signed, in one
            // read: the head is remembered as seen.
            let row = tx
                .query_one(
                    "SELECT frontier,
                        (SELECT checkpoint FROM ledger_heads ORDER BY size DESC LIMIT 1)
                     FROM log_state",
                    &[],
                )
                .map_err(db)?;
            let size = Frontier::from_bytes(&row.get::<_, Vec<u8>>(0)).map_or(0, |f| f.size());
            memory.check(size, None)?;
            if let Some(note) = row.get::<_, Option<String>>(1) {
                memory.remember(&note)?;
            }
        }
        let mine: bool = tx
            .query_one("SELECT pg_try_advisory_xact_lock($1)", &[&SEQUENCER_LOCK])
            .map_err(db)?
            .get(0);
        if !mine {
            return Ok(Turn::Busy);
        }
        let kept: Vec<u8> = tx
            .query_one("SELECT frontier FROM log_state FOR UPDATE", &[])
            .map_err(db)?
            .get(0);
        let mut frontier = Frontier::from_bytes(&kept).ok_or_else(|| Error::LedgerDamaged {
            path: PathBuf::from(self.name()),
            reason: "log_state holds no valid frontier".into(),
        })?;
        let queue = read_queue(&mut tx, max).map_err(db)?;
        let old_size = frontier.size();
        let covered = tiles::covered(tx.query_opt(super::sql::LAST_TILE, &[]).map_err(db)?.map(
            |r| {
                (
                    r.get::<_, i64>(0).unsigned_abs(),
                    r.get::<_, Vec<u8>>(1).len() / 32,
                )
            },
        ));
        if queue.is_empty() {
            if covered < old_size {
                self.tile_stored_leaves(&mut tx, covered, old_size)?;
                tx.commit().map_err(db)?;
            }
            return Ok(Turn::Appended(0));
        }
        let placing: Vec<ToPlace> = (old_size..)
            .zip(&queue)
            .map(|(seq, (pending, entry))| ToPlace {
                table: entry.table(),
                pending: *pending,
                line: entry.line(seq),
                paid: entry.paid(),
            })
            .collect();
        let leaves = self.place_entries(&mut tx, &mut frontier, &placing)?;
        let note = self.close_turn(&mut tx, &frontier, (old_size, covered), &leaves, key)?;
        tx.commit().map_err(db)?;
        if let Some(memory) = &self.memory {
            // Entries sequenced are answered only by a lookup afterwards,
            // so a head not remembered here is remembered next turn; a
            // failure is told, never silent.
            memory.remember(&note)?;
        }
        Ok(Turn::Appended(queue.len() as u64))
    }

    /// Gives `entries` the log's next places after `frontier` (extended):
    /// each row's position and leaf, and the redemptions added to their
    /// blocks' totals. The new leaves.
    pub(super) fn place_entries(
        &self,
        tx: &mut postgres::Transaction,
        frontier: &mut Frontier,
        entries: &[ToPlace],
    ) -> Result<Vec<Hash>, Error> {
        let db = |e: postgres::Error| self.db_error(&e);
        // Per table: pending numbers, positions, leaves.
        let mut updates: [Placed; TABLES.len()] = Default::default();
        let mut totals: std::collections::BTreeMap<&(String, u32, u32), (i64, i64)> =
            std::collections::BTreeMap::new();
        let mut leaves = Vec::with_capacity(entries.len());
        for entry in entries {
            let seq = frontier.size();
            let leaf = merkle::leaf_hash(entry.line.as_bytes());
            frontier.push(leaf);
            leaves.push(leaf);
            let u = &mut updates[entry.table];
            u.0.push(entry.pending);
            u.1.push(i64::try_from(seq).unwrap_or(i64::MAX));
            u.2.push(leaf.to_vec());
            if let Some((block, prize)) = &entry.paid {
                let t = totals.entry(block).or_default();
                t.0 += 1;
                t.1 += i64::from(*prize);
            }
        }
        for (table, (pending, seqs, leaves)) in TABLES.iter().zip(&updates) {
            if pending.is_empty() {
                continue;
            }
            let placed = tx
                .execute(
                    &format!(
                        "UPDATE {table} SET seq = v.seq, leaf_hash = v.leaf
                         FROM unnest($1::bigint[], $2::bigint[], $3::bytea[]) AS v(pending, seq, leaf)
                         WHERE {table}.pending = v.pending AND {table}.seq IS NULL"
                    ),
                    &[pending, seqs, leaves],
                )
                .map_err(db)?;
            if placed != pending.len() as u64 {
                return Err(Error::LedgerDamaged {
                    path: PathBuf::from(self.name()),
                    reason: format!(
                        "{placed} of {} queued {table} rows could be placed in the log; nothing was sequenced",
                        pending.len()
                    ),
                });
            }
        }
        for ((game, emission, block), (units, paid)) in totals {
            tx.execute(
                super::sql::ADD_TO_TOTALS,
                &[
                    game,
                    &i64::from(*emission),
                    &i64::from(*block),
                    &units,
                    &paid,
                ],
            )
            .map_err(db)?;
        }
        Ok(leaves)
    }

    /// Ends a turn that placed `leaves` after `old_size` (tiles `covered`
    /// that far): the tiles (the new leaves, or for a ledger written
    /// before tiles the stored ones first, a chunk a turn) and the new
    /// head, signed with `key`. The head's note.
    pub(super) fn close_turn(
        &self,
        tx: &mut postgres::Transaction,
        frontier: &Frontier,
        (old_size, covered): (u64, u64),
        leaves: &[Hash],
        key: &LedgerKey,
    ) -> Result<String, Error> {
        if covered == old_size {
            self.put_tiles(tx, covered, leaves)?;
        } else {
            self.tile_stored_leaves(tx, covered, frontier.size())?;
        }
        let at: String = tx
            .query_one(super::sql::NOW, &[])
            .map_err(|e| self.db_error(&e))?
            .get(0);
        self.store_head(tx, frontier, key, &at)
    }

    /// Appends `leaves` (from position `size`) to the tiles.
    pub(super) fn put_tiles(
        &self,
        tx: &mut postgres::Transaction,
        size: u64,
        leaves: &[Hash],
    ) -> Result<(), Error> {
        let changed = tiles::append(&mut PgTiles(tx), size, leaves)?;
        for ((level, index), hashes) in changed {
            tx.execute(
                "INSERT INTO log_tiles (level, idx, hashes) VALUES ($1, $2, $3)
                 ON CONFLICT (level, idx) DO UPDATE SET hashes = excluded.hashes",
                &[
                    &i16::from(level),
                    &i64::try_from(index).unwrap_or(i64::MAX),
                    &tiles::encode(&hashes),
                ],
            )
            .map_err(|e| self.db_error(&e))?;
        }
        Ok(())
    }

    /// Tiles the stored leaves from `covered` up to `size`, at most
    /// [`BACKFILL`] of them (the rest in later turns).
    pub(super) fn tile_stored_leaves(
        &self,
        tx: &mut postgres::Transaction,
        covered: u64,
        size: u64,
    ) -> Result<(), Error> {
        let to = size.min(covered + BACKFILL);
        let rows = tx
            .query(
                "SELECT seq, leaf_hash FROM (
                     SELECT seq, leaf_hash FROM redemptions WHERE seq >= $1 AND seq < $2
                     UNION ALL SELECT seq, leaf_hash FROM sales WHERE seq >= $1 AND seq < $2
                     UNION ALL SELECT seq, leaf_hash FROM plays WHERE seq >= $1 AND seq < $2
                     UNION ALL SELECT seq, leaf_hash FROM claims_ended WHERE seq >= $1 AND seq < $2
                     UNION ALL SELECT seq, leaf_hash FROM operator_actions WHERE seq >= $1 AND seq < $2
                 ) l ORDER BY seq",
                &[
                    &i64::try_from(covered).unwrap_or(i64::MAX),
                    &i64::try_from(to).unwrap_or(i64::MAX),
                ],
            )
            .map_err(|e| self.db_error(&e))?;
        let ledger = PathBuf::from(self.name());
        let leaves = log::contiguous(
            covered,
            rows.iter()
                .map(|r| (r.get::<_, i64>(0).unsigned_abs(), r.get(1))),
            &ledger,
        )?;
        if (leaves.len() as u64) < to - covered {
            return Err(log::missing_entry(covered + leaves.len() as u64, &ledger));
        }
        self.put_tiles(tx, covered, &leaves)
    }

    /// Sequences until the queue is empty, waiting out another node's
    /// turns, for at most `within`; `false` when entries are still queued.
    pub fn drain(&self, key: &LedgerKey, within: Duration) -> Result<bool, Error> {
        let until = Instant::now() + within;
        loop {
            match self.sequence(key, MAX_SEQUENCED)? {
                Turn::Appended(0) => return Ok(true),
                Turn::Appended(_) => {}
                Turn::Busy if Instant::now() >= until => return Ok(false),
                Turn::Busy => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
}

/// A node's sequencer thread. Dropping it stops the thread after a last
/// drain of the queue (bounded by [`DRAIN`]).
pub struct Sequencer {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Sequencer {
    /// Starts sequencing `ledger` every [`TICK`], signing with `key`.
    pub fn start(ledger: PgLedger, key: Arc<LedgerKey>) -> Result<Sequencer, Error> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = Arc::clone(&stop);
        let name = PathBuf::from(ledger.name());
        let thread = std::thread::Builder::new()
            .name("ledger-sequencer".into())
            .spawn(move || run(&ledger, &key, &flag))
            .map_err(|e| Error::io(&name, e))?;
        Ok(Sequencer {
            stop,
            thread: Some(thread),
        })
    }
}

/// The sequencer's loop: a turn every tick until told to stop, then a
/// drain.
fn run(ledger: &PgLedger, key: &LedgerKey, stop: &(Mutex<bool>, Condvar)) {
    let mut failing = false;
    loop {
        {
            let stopped = stop.0.lock().unwrap_or_else(|p| p.into_inner());
            let (stopped, _) = stop
                .1
                .wait_timeout_while(stopped, TICK, |s| !*s)
                .unwrap_or_else(|p| p.into_inner());
            if *stopped {
                break;
            }
        }
        let turn = loop {
            match ledger.sequence(key, MAX_SEQUENCED) {
                Ok(Turn::Appended(n)) if n == MAX_SEQUENCED.unsigned_abs() => {}
                other => break other,
            }
        };
        match turn {
            Err(e) if !failing => {
                eprintln!("issuer: ledger sequencer: {e} (retrying every {TICK:?})");
                failing = true;
            }
            Err(_) => {}
            Ok(_) if failing => {
                eprintln!("issuer: ledger sequencer: running again");
                failing = false;
            }
            Ok(_) => {}
        }
    }
    match ledger.drain(key, DRAIN) {
        Ok(true) => {}
        Ok(false) => eprintln!(
            "issuer: ledger sequencer: entries are still queued after {DRAIN:?}; the next node's sequencer appends them"
        ),
        Err(e) => eprintln!(
            "issuer: ledger sequencer: {e}; queued entries are appended by the next sequencer"
        ),
    }
}

impl Drop for Sequencer {
    fn drop(&mut self) {
        *self.stop.0.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.stop.1.notify_all();
        // Its drain is bounded by DRAIN; a database that stopped answering
        // may hold it in a statement for good: then it is left (what it
        // holds is queued in the database, for the next sequencer).
        if let Some(thread) = self.thread.take() {
            let until = std::time::Instant::now() + DRAIN + Duration::from_secs(1);
            while !thread.is_finished() && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
            if thread.is_finished() {
                let _ = thread.join();
            } else {
                eprintln!("issuer: ledger sequencer: the database does not answer; leaving it (queued entries are sequenced by the next node)");
            }
        }
    }
}
