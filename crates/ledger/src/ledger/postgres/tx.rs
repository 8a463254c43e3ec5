//! [`PgTx`]: one transaction's [`LedgerTx`], each entry committed queued
//! for the sequencer.

use super::conn::{prepared, small, Statements};
use super::ledger::PgLedger;
use super::sql::{sale_row, FIRST_UNSOLD, INSERT_REDEMPTION, INSERT_REDEMPTIONS, SALE_ROW};
use std::collections::HashMap;
use std::path::Path;

use crate::error::Error;
use crate::ledger::claims::EndOfClaims;
use crate::ledger::log::Place;
use crate::ledger::operator::{Action, Gate, OperatorAction, Why};
use crate::ledger::ops::{KeptRow, LedgerTx, Logged, PlayRow, SaleRow};
use crate::ledger::Entry;
use crate::merkle::Frontier;

/// [`LedgerTx`] inside a PostgreSQL transaction; statements are prepared
/// once per transaction.
pub(super) struct PgTx<'t, 'c> {
    pub(super) tx: &'t mut postgres::Transaction<'c>,
    pub(super) ledger: &'t PgLedger,
    pub(super) statements: &'t mut Statements,
    /// An entry this transaction queued ([`QueuedRow`]):
    /// its row is there once the commit is.
    pub(super) queued: Option<QueuedRow>,
    /// A writing transaction (not a read-only snapshot).
    pub(super) writing: bool,
    /// Each unit's redemption and sale as [`LedgerTx::prefetch`] read them
    /// for the batch (one query); dropped when a lock is taken, after
    /// which they may be stale, and per unit when it is written.
    pub(super) read_ahead: HashMap<OwnedPlace, ReadAhead>,
    /// Redemptions of units read ahead (so locked, and known unredeemed),
    /// inserted together by one statement ([`PgTx::flush_redemptions`])
    /// before any other write and before the commit: group commit's
    /// multi-row insert, the log's order unchanged (issue 38).
    pub(super) redemptions: Redemptions,
}

/// Redemptions waiting for [`PgTx::flush_redemptions`], column by column.
#[derive(Default)]
pub(super) struct Redemptions {
    games: Vec<&'static str>,
    emissions: Vec<i64>,
    blocks: Vec<i64>,
    indexes: Vec<i64>,
    unit_ids: Vec<String>,
    prices: Vec<i64>,
    lots: Vec<i64>,
    prizes: Vec<i64>,
    record_sha256s: Vec<String>,
    records: Vec<Vec<u8>>,
    rules_versions: Vec<i64>,
    stops: Vec<Option<i64>>,
    ats: Vec<String>,
}

impl Redemptions {
    fn push(&mut self, e: &Entry, at: &str) {
        self.games.push(e.game.slug());
        self.emissions.push(i64::from(e.emission));
        self.blocks.push(i64::from(e.block));
        self.indexes.push(i64::from(e.index));
        self.unit_ids.push(e.unit_id.clone());
        self.prices.push(i64::from(e.price_cents));
        self.lots.push(i64::from(e.lot));
        self.prizes.push(i64::from(e.prize_cents));
        self.record_sha256s.push(e.record_sha256.clone());
        self.records.push(e.record.clone());
        self.rules_versions.push(i64::from(e.rules_version));
        self.stops.push(e.stopped_after_steps.map(i64::from));
        self.ats.push(at.to_string());
    }
}

/// A unit's place, owned.
pub(super) type OwnedPlace = (String, u32, u32, u32);

/// A unit's redemption (time, prize), sale time and void time, read ahead.
pub(super) type ReadAhead = (Option<(String, u32)>, Option<SaleRow>, Option<String>);

pub(super) fn owned(p: Place) -> OwnedPlace {
    (p.game.to_string(), p.emission, p.block, p.index)
}

impl PgTx<'_, '_> {
    pub(super) fn statement(&mut self, sql: &'static str) -> Result<postgres::Statement, Error> {
        prepared(self.tx, self.statements, sql).map_err(|e| self.ledger.db_error(&e))
    }

    pub(super) fn query_opt(
        &mut self,
        sql: &'static str,
        values: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Option<postgres::Row>, Error> {
        let s = self.statement(sql)?;
        self.tx
            .query_opt(&s, values)
            .map_err(|e| self.ledger.db_error(&e))
    }

    /// Inserts the redemptions waiting ([`PgTx::redemptions`]) by one
    /// statement, in their order (their `pending` numbers follow it).
    /// Each unit was locked and read unredeemed in this transaction, so
    /// every row goes in; one that does not fails the batch (nothing is
    /// recorded) rather than answer a redemption that is not there.
    pub(super) fn flush_redemptions(&mut self) -> Result<(), Error> {
        if self.redemptions.games.is_empty() {
            return Ok(());
        }
        let r = std::mem::take(&mut self.redemptions);
        let s = self.statement(INSERT_REDEMPTIONS)?;
        let rows = self
            .tx
            .query(
                &s,
                &[
                    &r.games,
                    &r.emissions,
                    &r.blocks,
                    &r.indexes,
                    &r.unit_ids,
                    &r.prices,
                    &r.lots,
                    &r.prizes,
                    &r.record_sha256s,
                    &r.records,
                    &r.rules_versions,
                    &r.stops,
                    &r.ats,
                ],
            )
            .map_err(|e| self.ledger.db_error(&e))?;
        if rows.len() != r.games.len() {
            return Err(self.ledger.unavailable(format!(
                "{} of {} redemptions of units read unredeemed under their locks went in; nothing was recorded, retry",
                rows.len(),
                r.games.len()
            )));
        }
        let last = rows.iter().max_by_key(|row| row.get::<_, i64>(0));
        self.queue("redemptions", last);
        Ok(())
    }

    pub(super) fn execute(
        &mut self,
        sql: &'static str,
        values: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<u64, Error> {
        let s = self.statement(sql)?;
        self.tx
            .execute(&s, values)
            .map_err(|e| self.ledger.db_error(&e))
    }
}

/// A place as the four key parameters.
pub(super) fn key(p: Place<'_>) -> (&str, i64, i64, i64) {
    (
        p.game,
        i64::from(p.emission),
        i64::from(p.block),
        i64::from(p.index),
    )
}

impl LedgerTx for PgTx<'_, '_> {
    /// Entries are queued; the sequencer appends them after the commit.
    fn log_edge(&mut self) -> Option<&mut Frontier> {
        None
    }

    fn gate(&mut self, game: &str, emission: u32) -> Result<Gate, Error> {
        // The lock before the reads, in a statement of its own (READ
        // COMMITTED reads as of each statement's start): an end of claims
        // or an operator's action being published is waited for, then
        // seen. The statements go in one round trip (the simple protocol;
        // a game slug is [a-z-]).
        if !game.bytes().all(|c| c.is_ascii_lowercase() || c == b'-') {
            return Err(Error::Internal {
                what: format!("the game slug {game:?} is not of a-z and -"),
            });
        }
        let replies = self
            .tx
            .simple_query(&format!(
                "SELECT pg_advisory_xact_lock_shared(hashtext('claims/{game}'), {});
                 SELECT ended_at FROM claims_ended WHERE game='{game}' AND emission={emission};
                 SELECT action, block, at, reason FROM operator_actions
                 WHERE game='{game}' AND emission={emission} AND action <> 'void' ORDER BY id",
                emission as i32
            ))
            .map_err(|e| self.ledger.db_error(&e))?;
        let mut gate = Gate::default();
        for m in &replies {
            let postgres::SimpleQueryMessage::Row(r) = m else {
                continue;
            };
            match r.columns()[0].name() {
                "ended_at" => gate.claims_ended = r.get(0).map(str::to_string),
                "action" => {
                    let Some(action) = r.get(0).and_then(Action::parse) else {
                        continue;
                    };
                    let block = r.get(1).and_then(|b| b.parse().ok());
                    let why = Why {
                        at: r.get(2).unwrap_or_default().to_string(),
                        reason: r.get(3).unwrap_or_default().to_string(),
                    };
                    gate.apply(action, block, why);
                }
                _ => {}
            }
        }
        Ok(gate)
    }

    fn lock_gate(&mut self, game: &str, emission: u32) -> Result<(), Error> {
        self.flush_redemptions()?;
        // The same lock an end of claims takes: the operations under way on
        // the emission finish first, the next wait and then see it.
        self.read_ahead.clear();
        self.query_opt(
            "SELECT pg_advisory_xact_lock(hashtext('claims/' || $1), $2::int)",
            &[&game, &(emission as i32)],
        )
        .map(drop)
    }

    fn insert_action(&mut self, a: &OperatorAction, logged: Logged) -> Result<(), Error> {
        self.flush_redemptions()?;
        deferred(logged)?;
        let row = self.query_opt(
            "INSERT INTO operator_actions (action, game, emission, block, unit_index, reason,
                 by_name, at, pending)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, nextval('log_pending')) RETURNING pending, at",
            &[
                &a.action.word(),
                &a.game,
                &i64::from(a.emission),
                &a.block.map(i64::from),
                &a.index.map(i64::from),
                &a.reason,
                &a.by,
                &a.at,
            ],
        )?;
        self.queue("operator_actions", row.as_ref());
        Ok(())
    }

    fn voided(&mut self, p: Place) -> Result<Option<String>, Error> {
        if let Some((_, _, voided)) = self.read_ahead.get(&owned(p)) {
            return Ok(voided.clone());
        }
        let (g, e, b, i) = key(p);
        Ok(self
            .query_opt(
                "SELECT at FROM operator_actions WHERE game=$1 AND emission=$2 AND block=$3
                 AND unit_index=$4 AND action = 'void'",
                &[&g, &e, &b, &i],
            )?
            .map(|r| r.get(0)))
    }

    fn prefetch(&mut self, units: &[Place], keys: &[&str]) -> Result<(), Error> {
        if !keys.is_empty() {
            let lock = self.statement(
                "SELECT pg_advisory_xact_lock(hashtext('idempotency'), k) FROM (
                     SELECT DISTINCT hashtext(key) AS k FROM unnest($1::text[]) AS key ORDER BY 1
                 ) sorted",
            )?;
            self.tx
                .query(&lock, &[&keys])
                .map_err(|e| self.ledger.db_error(&e))?;
        }
        if units.is_empty() {
            return Ok(());
        }
        let games: Vec<&str> = units.iter().map(|p| p.game).collect();
        let column =
            |f: fn(&Place) -> u32| -> Vec<i64> { units.iter().map(|p| i64::from(f(p))).collect() };
        let (emissions, blocks, indexes) = (
            column(|p| p.emission),
            column(|p| p.block),
            column(|p| p.index),
        );
        // The units' locks first, all in one order: two batches redeeming
        // the same units in other orders would each wait for the other's
        // uncommitted row (a deadlock) where they now take turns.
        let lock = self.statement(
            "SELECT pg_advisory_xact_lock(k, i) FROM (
                 SELECT DISTINCT hashtext('unit/' || g || '/' || e::text || '/' || b::text) AS k,
                        i::int AS i
                 FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) AS u(g, e, b, i)
                 ORDER BY 1, 2
             ) sorted",
        )?;
        self.tx
            .query(&lock, &[&games, &emissions, &blocks, &indexes])
            .map_err(|e| self.ledger.db_error(&e))?;
        let s = self.statement(
            "SELECT u.g, u.e, u.b, u.i, r.redeemed_at, r.prize_cents, s.sold_at, v.at, s.lane
             FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) AS u(g, e, b, i)
             LEFT JOIN redemptions r
               ON r.game = u.g AND r.emission = u.e AND r.block = u.b AND r.unit_index = u.i
             LEFT JOIN sales s
               ON s.game = u.g AND s.emission = u.e AND s.block = u.b AND s.unit_index = u.i
             LEFT JOIN operator_actions v
               ON v.action = 'void' AND v.game = u.g AND v.emission = u.e AND v.block = u.b
                  AND v.unit_index = u.i",
        )?;
        let rows = self
            .tx
            .query(&s, &[&games, &emissions, &blocks, &indexes])
            .map_err(|e| self.ledger.db_error(&e))?;
        for r in rows {
            let unit = (
                r.get::<_, String>(0),
                small(r.get(1)),
                small(r.get(2)),
                small(r.get(3)),
            );
            let redemption = r
                .get::<_, Option<String>>(4)
                .map(|at| (at, small(r.get::<_, Option<i64>>(5).unwrap_or_default())));
            let sale = r.get::<_, Option<String>>(6).map(|sold_at| SaleRow {
                sold_at,
                lane: r.get(8),
            });
            self.read_ahead.insert(unit, (redemption, sale, r.get(7)));
        }
        Ok(())
    }

    fn claims_row(
        &mut self,
        game: &str,
        emission: u32,
    ) -> Result<Option<(EndOfClaims, Option<u64>)>, Error> {
        // Waits for the operations on the emission's units under way.
        self.read_ahead.clear();
        self.query_opt(
            "SELECT pg_advisory_xact_lock(hashtext('claims/' || $1), $2::int)",
            &[&game, &(emission as i32)],
        )?;
        Ok(self
            .query_opt(
                "SELECT statement, ended_at, seq FROM claims_ended WHERE game=$1 AND emission=$2",
                &[&game, &i64::from(emission)],
            )?
            .map(|r| {
                (
                    EndOfClaims {
                        game: game.into(),
                        emission,
                        statement: r.get(0),
                        ended_at: r.get(1),
                    },
                    r.get::<_, Option<i64>>(2).map(i64::unsigned_abs),
                )
            }))
    }

    fn log_claims_end(&mut self, s: &EndOfClaims, logged: Logged) -> Result<(), Error> {
        self.flush_redemptions()?;
        deferred(logged)?;
        let row = self.query_opt(
            "INSERT INTO claims_ended (game, emission, statement, ended_at, pending)
             VALUES ($1, $2, $3, $4, nextval('log_pending'))
             ON CONFLICT (game, emission) DO NOTHING RETURNING pending, ended_at",
            &[&s.game, &i64::from(s.emission), &s.statement, &s.ended_at],
        )?;
        self.queue("claims_ended", row.as_ref());
        Ok(())
    }

    fn redemption(&mut self, p: Place) -> Result<Option<(String, u32)>, Error> {
        if let Some((redemption, _, _)) = self.read_ahead.get(&owned(p)) {
            return Ok(redemption.clone());
        }
        let (g, e, b, i) = key(p);
        Ok(self
            .query_opt(
                "SELECT redeemed_at, prize_cents FROM redemptions WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                &[&g, &e, &b, &i],
            )?
            .map(|r| (r.get(0), small(r.get(1)))))
    }

    fn insert_redemption(
        &mut self,
        entry: &Entry,
        at: &str,
        logged: Logged,
    ) -> Result<bool, Error> {
        deferred(logged)?;
        let unit = (
            entry.game.slug().to_string(),
            entry.emission,
            entry.block,
            entry.index,
        );
        if let Some((redemption @ None, _, _)) = self.read_ahead.get_mut(&unit) {
            // Locked and read unredeemed: it goes in with its batch-mates;
            // a batch-mate on the same unit now reads it redeemed.
            *redemption = Some((at.to_string(), entry.prize_cents));
            self.redemptions.push(entry, at);
            return Ok(true);
        }
        self.flush_redemptions()?;
        self.read_ahead.remove(&unit);
        let (game, emission) = (entry.game.slug(), i64::from(entry.emission));
        let (block, index) = (i64::from(entry.block), i64::from(entry.index));
        let row = self.query_opt(
            INSERT_REDEMPTION,
            &[
                &game,
                &emission,
                &block,
                &index,
                &entry.unit_id,
                &i64::from(entry.price_cents),
                &i64::from(entry.lot),
                &i64::from(entry.prize_cents),
                &entry.record_sha256,
                &entry.record,
                &i64::from(entry.rules_version),
                &entry.stopped_after_steps.map(i64::from),
                &at,
            ],
        )?;
        self.queue("redemptions", row.as_ref());
        Ok(row.is_some())
    }

    fn sale(&mut self, p: Place) -> Result<Option<SaleRow>, Error> {
        if let Some((_, sale, _)) = self.read_ahead.get(&owned(p)) {
            return Ok(sale.clone());
        }
        let (g, e, b, i) = key(p);
        Ok(self
            .query_opt(SALE_ROW, &[&g, &e, &b, &i])?
            .map(|r| sale_row(&r)))
    }

    fn insert_sale(
        &mut self,
        p: Place,
        at: &str,
        lane: Option<&str>,
        logged: Logged,
    ) -> Result<(), Error> {
        deferred(logged)?;
        self.flush_redemptions()?;
        self.read_ahead.remove(&owned(p));
        let (g, e, b, i) = key(p);
        let row = self.query_opt(
            "INSERT INTO sales (game, emission, block, unit_index, sold_at, lane, pending)
             VALUES ($1, $2, $3, $4, $5, $6, nextval('log_pending')) RETURNING pending, sold_at",
            &[&g, &e, &b, &i, &at, &lane],
        )?;
        self.queue("sales", row.as_ref());
        Ok(())
    }

    fn sale_cursor(&mut self, game: &str, emission: u32, block: u32) -> Result<u32, Error> {
        // What was read before the lock may be stale after it.
        self.read_ahead.clear();
        // Sales of one block take turns (the cursor and the first unsold
        // unit are read after the lock, in statements of their own).
        self.query_opt(
            "SELECT pg_advisory_xact_lock(hashtext('sales/' || $1 || '/' || $2::bigint::text), $3::int)",
            &[&game, &i64::from(emission), &(block as i32)],
        )?;
        Ok(self
            .query_opt(
                "SELECT next_index FROM sale_cursor WHERE game=$1 AND emission=$2 AND block=$3",
                &[&game, &i64::from(emission), &i64::from(block)],
            )?
            .map_or(0, |r| small(r.get(0))))
    }

    fn first_unsold(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        from: u32,
    ) -> Result<u32, Error> {
        Ok(self
            .query_opt(
                FIRST_UNSOLD.as_str(),
                &[
                    &game,
                    &i64::from(emission),
                    &i64::from(block),
                    &i64::from(from),
                ],
            )?
            .map_or(u32::MAX, |r| small(r.get(0))))
    }

    fn kept(&mut self, key: &str) -> Result<Option<KeptRow>, Error> {
        if self.writing {
            // A key used at once on two writers (or nodes): the second
            // waits, then finds the first's answer.
            self.query_opt(
                "SELECT pg_advisory_xact_lock(hashtext('idempotency'), hashtext($1))",
                &[&key],
            )?;
        }
        let Some(row) = self.query_opt(
            "SELECT request, what, answer FROM idempotency WHERE key = $1",
            &[&key],
        )?
        else {
            return Ok(None);
        };
        let answer: String = row.get(2);
        KeptRow::read(
            Path::new(&self.ledger.name),
            key,
            row.get(0),
            row.get(1),
            &answer,
        )
        .map(Some)
    }

    fn keep(&mut self, key: &str, row: &KeptRow, at: &str) -> Result<(), Error> {
        self.execute(
            "INSERT INTO idempotency (key, request, what, answer, kept_at) VALUES ($1, $2, $3, $4, $5)",
            &[&key, &row.request, &row.what, &row.answer_json(), &at],
        )
        .map(drop)
    }

    fn kept_batch(&mut self, key: &str) -> Result<Option<String>, Error> {
        let (from, to) = (format!("{key}#"), format!("{key}$"));
        Ok(self
            .query_opt(
                "SELECT request FROM idempotency WHERE key >= $1 AND key < $2 LIMIT 1",
                &[&from, &to],
            )?
            .map(|r| r.get(0)))
    }

    fn set_sale_cursor(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        next: u32,
    ) -> Result<(), Error> {
        self.execute(
            "INSERT INTO sale_cursor (game, emission, block, next_index) VALUES ($1, $2, $3, $4)
             ON CONFLICT (game, emission, block) DO UPDATE SET next_index = excluded.next_index",
            &[
                &game,
                &i64::from(emission),
                &i64::from(block),
                &i64::from(next),
            ],
        )
        .map(drop)
    }

    fn lock_unit(&mut self, p: Place) -> Result<(), Error> {
        self.flush_redemptions()?;
        self.read_ahead.clear();
        self.query_opt(
            "SELECT pg_advisory_xact_lock(hashtext('unit/' || $1 || '/' || $2::bigint::text || '/' || $3::bigint::text), $4::int)",
            &[&p.game, &i64::from(p.emission), &i64::from(p.block), &(p.index as i32)],
        )
        .map(drop)
    }

    fn play(&mut self, p: Place) -> Result<Option<PlayRow>, Error> {
        let (g, e, b, i) = key(p);
        Ok(self
            .query_opt(
                "SELECT rolls, ended FROM plays WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                &[&g, &e, &b, &i],
            )?
            .map(|r| PlayRow {
                steps: small(r.get(0)),
                ended: r.get(1),
            }))
    }

    fn put_play(&mut self, p: Place, row: &PlayRow, at: &str, logged: Logged) -> Result<(), Error> {
        self.flush_redemptions()?;
        deferred(logged)?;
        let (g, e, b, i) = key(p);
        let ended_at = row.ended.as_ref().map(|_| at);
        let queued = self.query_opt(
            "INSERT INTO plays (game, emission, block, unit_index, rolls, ended, ended_at, updated_at, pending)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8,
                     CASE WHEN $6::text IS NULL THEN NULL ELSE nextval('log_pending') END)
             ON CONFLICT (game, emission, block, unit_index) DO UPDATE
             SET rolls = excluded.rolls, ended = excluded.ended, ended_at = excluded.ended_at,
                 updated_at = excluded.updated_at, pending = excluded.pending
             RETURNING pending, ended_at",
            &[
                &g,
                &e,
                &b,
                &i,
                &i64::from(row.steps),
                &row.ended,
                &ended_at,
                &at,
            ],
        )?;
        if let Some(r) = queued.filter(|r| r.get::<_, Option<i64>>(0).is_some()) {
            self.queue("plays", Some(&r));
        }
        Ok(())
    }
}

impl PgTx<'_, '_> {
    /// Notes the entry `row` (`RETURNING pending, <its time>`) queued in
    /// `table`.
    pub(super) fn queue(&mut self, table: &'static str, row: Option<&postgres::Row>) {
        if let Some(r) = row {
            self.queued = Some(QueuedRow {
                table,
                pending: r.get(0),
                at: r.get(1),
            });
        }
    }
}

/// An entry a transaction queued: its table, its `pending` number and
/// its time. The number alone does not name it after a crash or a
/// failover: numbers a transaction took and never committed are handed
/// out again (a sequence is not logged for each number), so a lookup by
/// number could find another commit's row; with the time (to the
/// millisecond, taken by this transaction) it cannot.
#[derive(Clone, Debug)]
pub(super) struct QueuedRow {
    pub(super) table: &'static str,
    pub(super) pending: i64,
    pub(super) at: String,
}

/// The time column of a queued entry's table.
pub(super) fn time_column(table: &str) -> &'static str {
    match table {
        "redemptions" => "redeemed_at",
        "sales" => "sold_at",
        "operator_actions" => "at",
        _ => "ended_at",
    }
}

/// PostgreSQL's entries are queued: a place given by the batch would be a
/// second sequencer.
pub(super) fn deferred(logged: Logged) -> Result<(), Error> {
    match logged {
        None => Ok(()),
        Some(_) => Err(Error::Internal {
            what: "a PostgreSQL commit was given a log position; its entries are sequenced after"
                .into(),
        }),
    }
}
