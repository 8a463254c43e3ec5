//! Recovery (`issuer ledger recover`): the log's key claimed, and the
//! published entries put back under the sequencer's lock.

use super::conn::PgConn;
use super::ledger::PgLedger;
use super::sql::LAST_TILE;
use super::tx::{PgTx, QueuedRow};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::ledger::backend::PutBack;
use crate::ledger::log::{self, LedgerKey};
use crate::ledger::ops::{self, LedgerTx};
use crate::ledger::tiles::{self};
use crate::merkle::Frontier;

impl PgLedger {
    /// One log, one identity: the ledger's heads are all signed by one key
    /// (`ledger_identity.log_key`), claimed by the first node that writes;
    /// a node holding another key (`key_file`) is refused, so two nodes
    /// never sign two logs over one ledger.
    pub fn claim_log(&self, key: &LedgerKey, key_file: &Path) -> Result<(), Error> {
        let ours = log::verifier_key(&key.public());
        let mut conn = self.conn()?;
        let db = |e: postgres::Error| self.db_error(&e);
        conn.execute(
            "UPDATE ledger_identity SET log_key = $1 WHERE log_key IS NULL",
            &[&ours],
        )
        .map_err(db)?;
        let theirs: Option<String> = conn
            .query_one("SELECT log_key FROM ledger_identity", &[])
            .map_err(db)?
            .get(0);
        match theirs {
            Some(theirs) if theirs != ours => Err(Error::BadKey {
                path: key_file.to_path_buf(),
                reason: format!(
                    "it is not the key of the log of ledger {} (the log is signed by {theirs}; this key is {ours}): every node of one ledger signs its heads with the one log key; copy keys/ledger.key.pem (0600) and keys/ledger.pub.pem from a node of this ledger, then start again (docs/DEPLOY.md §Machines and secrets)",
                    self.name
                ),
            }),
            _ => Ok(()),
        }
    }
}

/// A log line without its position (`kind|seq|rest` → `kind|rest`): a
/// queued row's line and a published one compare by it.
pub(super) fn unplaced(line: &str) -> String {
    let mut parts = line.splitn(3, '|');
    let kind = parts.next().unwrap_or_default();
    let _seq = parts.next();
    format!("{kind}|{}", parts.next().unwrap_or_default())
}

impl PgLedger {
    /// Puts `entries` of the published log back at their places
    /// (`ledger recover`, docs/REDEMPTION.md §Recovery), in one
    /// transaction under the sequencer's lock: a row the restored database
    /// holds queued is placed where the log holds it, any other row is
    /// made again; then the tiles, the blocks' totals and one head signed
    /// with `key`. The entries must start where the log ends, in order.
    pub fn put_back(&self, key: &LedgerKey, entries: &[ops::Restored]) -> Result<PutBack, Error> {
        use super::sequencer::{read_queue, ToPlace, SEQUENCER_LOCK, TABLES};
        let db = |e: postgres::Error| self.db_error(&e);
        let damaged = |reason: String| Error::LedgerDamaged {
            path: PathBuf::from(&self.name),
            reason,
        };
        let mut conn = self.conn()?;
        let PgConn { client, statements } = &mut *conn;
        let mut tx = self.begin(client)?;
        tx.batch_execute("SET LOCAL statement_timeout = 0")
            .map_err(db)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SEQUENCER_LOCK])
            .map_err(db)?;
        let kept: Vec<u8> = tx
            .query_one("SELECT frontier FROM log_state FOR UPDATE", &[])
            .map_err(db)?
            .get(0);
        let mut frontier = Frontier::from_bytes(&kept)
            .ok_or_else(|| damaged("log_state holds no valid frontier".into()))?;
        let old_size = frontier.size();
        if let Some((r, at)) = entries.iter().zip(old_size..).find(|(r, at)| r.seq != *at) {
            return Err(damaged(format!(
                "entry {} cannot be put back at place {at} (the log holds {old_size} entries); nothing was put back: run `issuer ledger recover` again",
                r.seq
            )));
        }
        let covered = tiles::covered(tx.query_opt(LAST_TILE, &[]).map_err(db)?.map(|r| {
            (
                r.get::<_, i64>(0).unsigned_abs(),
                r.get::<_, Vec<u8>>(1).len() / 32,
            )
        }));
        let queue = read_queue(&mut tx, i64::MAX).map_err(db)?;
        let mut waiting: HashMap<String, std::collections::VecDeque<(usize, i64)>> = HashMap::new();
        for (pending, q) in &queue {
            waiting
                .entry(unplaced(&q.line(0)))
                .or_default()
                .push_back((q.table(), *pending));
        }
        let mut placing = Vec::with_capacity(entries.len());
        let mut queued_placed = 0;
        {
            let mut pg = PgTx {
                tx: &mut tx,
                ledger: self,
                statements,
                queued: None,
                writing: true,
                read_ahead: HashMap::new(),
                redemptions: Default::default(),
            };
            for r in entries {
                let found = waiting
                    .get_mut(&unplaced(&r.line))
                    .and_then(std::collections::VecDeque::pop_front);
                let (table, pending) = match found {
                    Some(f) => {
                        queued_placed += 1;
                        f
                    }
                    None => {
                        let q = pg.insert_restored(r)?.ok_or_else(|| damaged(format!(
                            "entry {} ({}) cannot be put back: the ledger holds a row for it the log does not; nothing was put back",
                            r.seq,
                            r.line.trim_end()
                        )))?;
                        (
                            TABLES.iter().position(|t| *t == q.table).unwrap_or(0),
                            q.pending,
                        )
                    }
                };
                let paid = match &r.row {
                    ops::RestoredRow::Redemption { entry, .. } => Some((
                        (entry.game.slug().to_string(), entry.emission, entry.block),
                        entry.prize_cents,
                    )),
                    _ => None,
                };
                placing.push(ToPlace {
                    table,
                    pending,
                    line: r.line.clone(),
                    paid,
                });
            }
        }
        let leaves = self.place_entries(&mut tx, &mut frontier, &placing)?;
        let note = self.close_turn(&mut tx, &frontier, (old_size, covered), &leaves, key)?;
        tx.commit().map_err(db)?;
        Ok(PutBack {
            note,
            queued_placed,
            queued_after: queue.len() as u64 - queued_placed,
        })
    }
}

impl PgTx<'_, '_> {
    /// Makes the row of a published entry again, queued; the row queued
    /// (`None`: the ledger holds the row already).
    pub(super) fn insert_restored(
        &mut self,
        r: &ops::Restored,
    ) -> Result<Option<QueuedRow>, Error> {
        self.queued = None;
        match &r.row {
            ops::RestoredRow::Sale {
                unit,
                sold_at,
                lane,
            } => self.insert_sale(unit.place(), sold_at, lane.as_deref(), None)?,
            ops::RestoredRow::Play {
                unit,
                play,
                ended_at,
            } => self.put_play(unit.place(), play, ended_at, None)?,
            ops::RestoredRow::Redemption { entry, redeemed_at } => {
                self.insert_redemption(entry, redeemed_at, None)?;
            }
            ops::RestoredRow::EndOfClaims(s) => self.log_claims_end(s, None)?,
            ops::RestoredRow::Operator(a) => self.insert_action(a, None)?,
        }
        Ok(self.queued.take())
    }
}
