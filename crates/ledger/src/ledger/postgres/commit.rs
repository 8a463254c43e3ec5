//! A batch committed: one transaction at READ COMMITTED, its outcome
//! resolved when the COMMIT's answer is lost, a head stored.

use super::conn::{small, PgConn};
use super::ledger::PgLedger;
use super::sql::NOW;
use super::tx::{time_column, PgTx, QueuedRow};
use std::collections::HashMap;
use std::path::PathBuf;

use postgres::IsolationLevel;

use crate::error::Error;
use crate::ledger::log::{self, LedgerKey};
use crate::ledger::ops::{self, Done, Op};
use crate::merkle::Frontier;

impl PgLedger {
    /// A READ COMMITTED transaction on `client`.
    pub(super) fn begin<'c>(
        &self,
        client: &'c mut postgres::Client,
    ) -> Result<postgres::Transaction<'c>, Error> {
        client
            .build_transaction()
            .isolation_level(IsolationLevel::ReadCommitted)
            .start()
            .map_err(|e| self.db_error(&e))
    }

    /// Applies `ops` in one transaction ([`crate::ledger::ops::apply`]), their
    /// entries queued for the sequencer. As [`super::Ledger::commit`].
    pub fn commit(&self, ops: &[Op]) -> Result<Vec<Result<Done, Error>>, Error> {
        let mut conn = self.conn()?;
        let PgConn { client, statements } = &mut *conn;
        let mut tx = self.begin(client)?;
        let mut pg = PgTx {
            tx: &mut tx,
            ledger: self,
            statements,
            queued: None,
            writing: true,
            read_ahead: HashMap::new(),
            redemptions: Default::default(),
        };
        let at: String = pg
            .query_opt(NOW, &[])?
            .map(|r| r.get(0))
            .unwrap_or_default();
        let outcomes = ops::apply(&mut pg, &at, ops)?;
        pg.flush_redemptions()?;
        let queued = pg.queued;
        if let Err(e) = tx.commit() {
            drop(conn);
            return self.resolve(ops, outcomes, queued, &e);
        }
        Ok(outcomes)
    }

    /// Stores the signed head of `frontier` (a head is never replaced).
    pub(super) fn store_head(
        &self,
        tx: &mut postgres::Transaction,
        frontier: &Frontier,
        key: &LedgerKey,
        at: &str,
    ) -> Result<String, Error> {
        let root = frontier.root();
        let size = i64::try_from(frontier.size()).unwrap_or(i64::MAX);
        let note = key.sign_checkpoint(frontier.size(), &root);
        tx.execute(
            "UPDATE log_state SET frontier = $1",
            &[&frontier.to_bytes()],
        )
        .map_err(|e| self.db_error(&e))?;
        let stored = tx
            .execute(
                "INSERT INTO ledger_heads (size, root, signed_at, checkpoint, signer)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (size) DO NOTHING",
                &[
                    &size,
                    &&root[..],
                    &at,
                    &note,
                    &log::verifier_key(&key.public()),
                ],
            )
            .map_err(|e| self.db_error(&e))?;
        if stored == 0 {
            return Err(Error::LedgerDamaged {
                path: PathBuf::from(&self.name),
                reason: format!(
                    "a signed head of size {} is stored already while log_state is behind it; nothing was sequenced; run `issuer ledger verify`",
                    frontier.size()
                ),
            });
        }
        Ok(note)
    }

    /// After a failed COMMIT, whose outcome is unknown: looks it up. A
    /// commit that queued an entry wrote a row with a `pending` number and
    /// a time no other commit has ([`QueuedRow`]): if that row is there,
    /// every outcome stands; if
    /// not, nothing was recorded (retry). A roll that ended nothing is
    /// looked up in its play. Never guesses.
    pub(super) fn resolve(
        &self,
        ops: &[Op],
        outcomes: Vec<Result<Done, Error>>,
        queued: Option<QueuedRow>,
        cause: &postgres::Error,
    ) -> Result<Vec<Result<Done, Error>>, Error> {
        let unknown = |reason: String| Error::LedgerOutcomeUnknown {
            path: PathBuf::from(&self.name),
            reason: format!("commit: {cause}; lookup: {reason}"),
        };
        let mut conn = self.pool.get().map_err(|e| unknown(e.to_string()))?;
        let committed = match queued {
            Some(QueuedRow { table, pending, at }) => conn
                .query_opt(
                    &format!(
                        "SELECT 1 FROM {table} WHERE pending = $1 AND {} = $2",
                        time_column(table)
                    ),
                    &[&pending, &at],
                )
                .map_err(|e| unknown(e.to_string()))?
                .is_some(),
            None => false,
        };
        let mut resolved = Vec::with_capacity(outcomes.len());
        for (op, outcome) in ops.iter().zip(outcomes) {
            let kept = |conn: &mut postgres::Client, op: &Op| {
                let Op::Keyed(k) = op else {
                    return Ok(false);
                };
                conn.query_opt("SELECT request FROM idempotency WHERE key = $1", &[&k.key])
                    .map_err(|e| unknown(e.to_string()))
                    .map(|r| r.is_some_and(|r| r.get::<_, String>(0) == hex::encode(k.request)))
            };
            let stands = committed
                || match (&outcome, op.unkeyed()) {
                    (Err(_), _) => true,
                    // Kept under its key: by this commit or an earlier one.
                    (Ok(_), _) if kept(&mut conn, op)? => true,
                    (Ok(Done::Played(p)), Op::Play(o)) if p.seq.is_none() => {
                        let u = o.unit.place();
                        p.replayed
                            || conn
                                .query_opt(
                                    "SELECT rolls FROM plays
                                 WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                                    &[
                                        &u.game,
                                        &i64::from(u.emission),
                                        &i64::from(u.block),
                                        &i64::from(u.index),
                                    ],
                                )
                                .map_err(|e| unknown(e.to_string()))?
                                .is_some_and(|r| small(r.get(0)) >= p.play.steps)
                    }
                    (Ok(_), _) => false,
                };
            resolved.push(if stands {
                outcome
            } else {
                Err(self.unavailable(format!("the commit failed ({cause})")))
            });
        }
        Ok(resolved)
    }
}
