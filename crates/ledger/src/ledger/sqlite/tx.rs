//! [`LedgerTx`] on an SQLite transaction (the store's ledger).

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::Error;
use crate::ledger::claims::EndOfClaims;
use crate::ledger::columns::FIRST_UNSOLD;
use crate::ledger::log::Place;
use crate::ledger::operator::{Action, Gate, OperatorAction, Why};
use crate::ledger::ops::{KeptRow, LedgerTx, Logged, PlayRow, SaleRow};
use crate::ledger::Entry;
use crate::merkle::Frontier;

/// The store's ledger inside a transaction: an open immediate one when it
/// writes, or the connection's own for a single read.
pub(super) struct SqliteTx<'t> {
    pub(super) tx: &'t Connection,
    pub(super) path: &'t Path,
    /// The log's right edge, each entry appended to it as its operation
    /// commits (one writer); `None` for a transaction that only reads.
    pub(super) log: Option<&'t mut Frontier>,
}

/// The suspensions, resumptions and withdrawals of an emission
/// (`?1`, `?2`), in the order recorded: what [`Gate`] folds.
pub(super) const GATE_ACTIONS: &str = "SELECT action, block, at, reason FROM operator_actions
     WHERE game=?1 AND emission=?2 AND action <> 'void' ORDER BY id";

/// The key columns of a unit.
const UNIT: &str = "game=?1 AND emission=?2 AND block=?3 AND unit_index=?4";

impl SqliteTx<'_> {
    fn err(&self, source: rusqlite::Error) -> Error {
        Error::Ledger {
            path: self.path.to_path_buf(),
            source: source.into(),
        }
    }

    /// The first row of `sql` (its first four parameters: the unit `p`).
    fn unit_row<T>(
        &self,
        sql: &str,
        p: Place,
        read: impl FnOnce(&rusqlite::Row) -> rusqlite::Result<T>,
    ) -> Result<Option<T>, Error> {
        self.tx
            .prepare_cached(sql)
            .and_then(|mut s| {
                s.query_row(params![p.game, p.emission, p.block, p.index], read)
                    .optional()
            })
            .map_err(|e| self.err(e))
    }

    fn execute(&self, sql: &str, values: impl rusqlite::Params) -> Result<usize, Error> {
        self.tx
            .prepare_cached(sql)
            .and_then(|mut s| s.execute(values))
            .map_err(|e| self.err(e))
    }
}

impl LedgerTx for SqliteTx<'_> {
    fn log_edge(&mut self) -> Option<&mut Frontier> {
        self.log.as_deref_mut()
    }

    fn gate(&mut self, game: &str, emission: u32) -> Result<Gate, Error> {
        let claims_ended = self
            .tx
            .prepare_cached("SELECT ended_at FROM claims_ended WHERE game=?1 AND emission=?2")
            .and_then(|mut s| {
                s.query_row(params![game, emission], |r| r.get(0))
                    .optional()
            })
            .map_err(|e| self.err(e))?;
        let mut gate = Gate {
            claims_ended,
            ..Gate::default()
        };
        let rows = self
            .tx
            .prepare_cached(GATE_ACTIONS)
            .and_then(|mut s| {
                s.query_map(params![game, emission], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<u32>>(1)?,
                        Why {
                            at: r.get(2)?,
                            reason: r.get(3)?,
                        },
                    ))
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| self.err(e))?;
        for (word, block, why) in rows {
            if let Some(action) = Action::parse(&word) {
                gate.apply(action, block, why);
            }
        }
        Ok(gate)
    }

    fn insert_action(&mut self, a: &OperatorAction, logged: Logged) -> Result<(), Error> {
        let (seq, leaf) = split(logged);
        self.execute(
            "INSERT INTO operator_actions (action, game, emission, block, unit_index, reason,
                 by_name, at, seq, leaf_hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                a.action.word(),
                a.game,
                a.emission,
                a.block,
                a.index,
                a.reason,
                a.by,
                a.at,
                seq,
                leaf
            ],
        )
        .map(drop)
    }

    fn voided(&mut self, p: Place) -> Result<Option<String>, Error> {
        self.unit_row(
            &format!("SELECT at FROM operator_actions WHERE {UNIT} AND action = 'void'"),
            p,
            |r| r.get(0),
        )
    }

    fn claims_row(
        &mut self,
        game: &str,
        emission: u32,
    ) -> Result<Option<(EndOfClaims, Option<u64>)>, Error> {
        self.tx
            .prepare_cached(
                "SELECT statement, ended_at, seq FROM claims_ended WHERE game=?1 AND emission=?2",
            )
            .and_then(|mut s| {
                s.query_row(params![game, emission], |r| {
                    Ok((
                        EndOfClaims {
                            game: game.into(),
                            emission,
                            statement: r.get(0)?,
                            ended_at: r.get(1)?,
                        },
                        r.get(2)?,
                    ))
                })
                .optional()
            })
            .map_err(|e| self.err(e))
    }

    fn log_claims_end(&mut self, s: &EndOfClaims, logged: Logged) -> Result<(), Error> {
        let (seq, leaf) = split(logged);
        self.execute(
            "INSERT INTO claims_ended (game, emission, statement, ended_at, seq, leaf_hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (game, emission) DO UPDATE
             SET seq = excluded.seq, leaf_hash = excluded.leaf_hash WHERE claims_ended.seq IS NULL",
            params![s.game, s.emission, s.statement, s.ended_at, seq, leaf],
        )
        .map(drop)
    }

    fn redemption(&mut self, p: Place) -> Result<Option<(String, u32)>, Error> {
        self.unit_row(
            &format!("SELECT redeemed_at, prize_cents FROM redemptions WHERE {UNIT}"),
            p,
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    fn insert_redemption(&mut self, e: &Entry, at: &str, logged: Logged) -> Result<bool, Error> {
        let (seq, leaf) = split(logged);
        let inserted = self.execute(
            "INSERT INTO redemptions (game, emission, block, unit_index, unit_id, price_cents,
                 lot, prize_cents, record_sha256, record, rules_version, stopped_after_rolls,
                 redeemed_at, seq, leaf_hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
             ON CONFLICT (game, emission, block, unit_index) DO NOTHING",
            params![
                e.game.slug(),
                e.emission,
                e.block,
                e.index,
                e.unit_id,
                e.price_cents,
                e.lot,
                e.prize_cents,
                e.record_sha256,
                e.record,
                e.rules_version,
                e.stopped_after_steps,
                at,
                seq,
                leaf
            ],
        )?;
        if inserted == 0 {
            return Ok(false);
        }
        self.execute(
            "INSERT INTO block_totals (game, emission, block, units, paid_cents) VALUES (?1, ?2, ?3, 1, ?4)
             ON CONFLICT (game, emission, block) DO UPDATE
             SET units = units + 1, paid_cents = paid_cents + excluded.paid_cents",
            params![e.game.slug(), e.emission, e.block, e.prize_cents],
        )?;
        Ok(true)
    }

    fn sale(&mut self, p: Place) -> Result<Option<SaleRow>, Error> {
        self.unit_row(
            &format!("SELECT sold_at, lane FROM sales WHERE {UNIT}"),
            p,
            |r| {
                Ok(SaleRow {
                    sold_at: r.get(0)?,
                    lane: r.get(1)?,
                })
            },
        )
    }

    fn insert_sale(
        &mut self,
        p: Place,
        at: &str,
        lane: Option<&str>,
        logged: Logged,
    ) -> Result<(), Error> {
        let (seq, leaf) = split(logged);
        self.execute(
            "INSERT INTO sales (game, emission, block, unit_index, sold_at, seq, leaf_hash, lane)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![p.game, p.emission, p.block, p.index, at, seq, leaf, lane],
        )
        .map(drop)
    }

    fn sale_cursor(&mut self, game: &str, emission: u32, block: u32) -> Result<u32, Error> {
        self.tx
            .prepare_cached(
                "SELECT next_index FROM sale_cursor WHERE game=?1 AND emission=?2 AND block=?3",
            )
            .and_then(|mut s| {
                s.query_row(params![game, emission, block], |r| r.get(0))
                    .optional()
            })
            .map(Option::unwrap_or_default)
            .map_err(|e| self.err(e))
    }

    fn first_unsold(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        from: u32,
    ) -> Result<u32, Error> {
        self.tx
            .prepare_cached(FIRST_UNSOLD)
            .and_then(|mut s| s.query_row(params![game, emission, block, from], |r| r.get(0)))
            .map_err(|e| self.err(e))
    }

    fn kept(&mut self, key: &str) -> Result<Option<KeptRow>, Error> {
        let row: Option<(String, String, String)> = self
            .tx
            .prepare_cached("SELECT request, what, answer FROM idempotency WHERE key = ?1")
            .and_then(|mut s| {
                s.query_row(params![key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .optional()
            })
            .map_err(|e| self.err(e))?;
        row.map(|(request, what, answer)| KeptRow::read(self.path, key, request, what, &answer))
            .transpose()
    }

    fn keep(&mut self, key: &str, row: &KeptRow, at: &str) -> Result<(), Error> {
        self.execute(
            "INSERT INTO idempotency (key, request, what, answer, kept_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![key, row.request, row.what, row.answer_json(), at],
        )
        .map(drop)
    }

    fn kept_batch(&mut self, key: &str) -> Result<Option<String>, Error> {
        self.tx
            .prepare_cached(
                "SELECT request FROM idempotency WHERE key >= ?1 || '#' AND key < ?1 || '$' LIMIT 1",
            )
            .and_then(|mut s| s.query_row(params![key], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))
    }

    fn set_sale_cursor(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        next: u32,
    ) -> Result<(), Error> {
        self.execute(
            "INSERT INTO sale_cursor (game, emission, block, next_index) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (game, emission, block) DO UPDATE SET next_index = excluded.next_index",
            params![game, emission, block, next],
        )
        .map(drop)
    }

    fn play(&mut self, p: Place) -> Result<Option<PlayRow>, Error> {
        self.unit_row(
            &format!("SELECT rolls, ended FROM plays WHERE {UNIT}"),
            p,
            |r| {
                Ok(PlayRow {
                    steps: r.get(0)?,
                    ended: r.get(1)?,
                })
            },
        )
    }

    fn put_play(&mut self, p: Place, row: &PlayRow, at: &str, logged: Logged) -> Result<(), Error> {
        let (seq, leaf) = split(logged);
        let ended_at = row.ended.as_ref().map(|_| at);
        self.execute(
            "INSERT INTO plays (game, emission, block, unit_index, rolls, ended, ended_at, updated_at, seq, leaf_hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (game, emission, block, unit_index) DO UPDATE
             SET rolls = excluded.rolls, ended = excluded.ended, ended_at = excluded.ended_at,
                 updated_at = excluded.updated_at, seq = excluded.seq, leaf_hash = excluded.leaf_hash",
            params![
                p.game,
                p.emission,
                p.block,
                p.index,
                row.steps,
                row.ended,
                ended_at,
                at,
                seq,
                leaf
            ],
        )
        .map(drop)
    }
}

/// An entry's place as SQLite stores it (the SQLite ledger appends in its
/// commit, so only a play not yet over has none).
fn split(logged: Logged<'_>) -> (Option<u64>, Option<&[u8]>) {
    (
        logged.map(|(seq, _)| seq),
        logged.map(|(_, leaf)| &leaf[..]),
    )
}
