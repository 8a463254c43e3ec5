//! Reads: snapshots at one point, the summary, an emission's rows, the
//! integrity check, and the rows of the log decoded.

use super::conn::{small, PgConn, Statements};
use super::ledger::PgLedger;
use super::sql::{INTEGRITY, LEDGER_TABLES};
use super::tx::PgTx;
use std::collections::HashMap;

use postgres::IsolationLevel;

use crate::error::Error;
use crate::ledger::claims::EndOfClaims;
use crate::ledger::log::{LogEntry, OwnedFields, Place, StoredEntry, StoredHead};
use crate::ledger::ops::LedgerTx;

impl PgLedger {
    /// Runs the unit reads `f` ([`LedgerTx`]) in one read-only REPEATABLE
    /// READ transaction.
    pub(super) fn unit_snapshot<T>(
        &self,
        f: impl FnOnce(&mut dyn LedgerTx) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.snapshot(|tx, statements| {
            f(&mut PgTx {
                tx,
                ledger: self,
                statements,
                queued: None,
                writing: false,
                read_ahead: HashMap::new(),
                redemptions: Default::default(),
            })
        })
    }

    /// Runs `read` in one read-only REPEATABLE READ transaction: one
    /// snapshot of every table.
    pub(super) fn read<T>(
        &self,
        read: impl FnOnce(&mut postgres::Transaction) -> Result<T, postgres::Error>,
    ) -> Result<T, Error> {
        // An audit's read of every row may take longer than a statement
        // of the money path may.
        self.snapshot(|tx, _| {
            tx.batch_execute("SET LOCAL statement_timeout = 0")
                .and_then(|()| read(tx))
                .map_err(|e| self.db_error(&e))
        })
    }

    /// `f` in one read-only REPEATABLE READ transaction.
    pub(super) fn snapshot<T>(
        &self,
        f: impl FnOnce(&mut postgres::Transaction, &mut Statements) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let db = |e: postgres::Error| self.db_error(&e);
        let mut conn = self.conn()?;
        let PgConn { client, statements } = &mut *conn;
        let mut tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(db)?;
        let out = f(&mut tx, statements)?;
        tx.commit().map_err(db)?;
        Ok(out)
    }

    /// Per-block counts and amounts, each block reconciled against its
    /// running totals and each row replayed from its record, streamed (not
    /// held in memory), with the ledger digest and the database's integrity
    /// checks ([`INTEGRITY`]); as [`super::Ledger::summary`].
    pub fn summary(&self) -> Result<crate::ledger::Summary, Error> {
        use postgres::fallible_iterator::FallibleIterator as _;
        let (figures, summing, integrity_ok) = self.read(|tx| {
            let blocks = tx.query(
                "SELECT r.game, r.emission, r.block, COUNT(*), SUM((r.lot <> 0)::int)::bigint,
                        SUM(r.prize_cents)::bigint,
                        -- The totals are the sequencer's: with the queue.
                        COALESCE(MAX(t.units), 0)
                          + COUNT(*) FILTER (WHERE r.seq IS NULL AND r.pending IS NOT NULL),
                        (COALESCE(MAX(t.paid_cents), 0) + COALESCE(SUM(r.prize_cents)
                          FILTER (WHERE r.seq IS NULL AND r.pending IS NOT NULL), 0))::bigint
                 FROM redemptions r LEFT JOIN block_totals t
                   ON t.game = r.game AND t.emission = r.emission AND t.block = r.block
                 GROUP BY r.game, r.emission, r.block ORDER BY r.game, r.emission, r.block",
                &[],
            )?;
            let figures: Vec<crate::ledger::summary::BlockFigures> = blocks
                .iter()
                .map(|r| crate::ledger::summary::BlockFigures {
                    game: r.get(0),
                    emission: small(r.get(1)),
                    block: small(r.get(2)),
                    units: r.get::<_, i64>(3).unsigned_abs(),
                    winners: r.get::<_, i64>(4).unsigned_abs(),
                    paid_cents: r.get::<_, i64>(5).unsigned_abs(),
                    total_units: r.get::<_, Option<i64>>(6).map(i64::unsigned_abs),
                    total_paid_cents: r.get::<_, Option<i64>>(7).map(i64::unsigned_abs),
                })
                .collect();
            let integrity_ok: bool = tx.query_one(INTEGRITY, &[])?.try_get(0)?;
            let mut summing = crate::ledger::summary::Summing::default();
            let mut rows = tx.query_raw(
                crate::ledger::summary::SUMMARY_ROWS,
                std::iter::empty::<i64>(),
            )?;
            while let Some(r) = rows.next()? {
                summing.add(crate::ledger::summary::SummaryRow {
                    game: r.try_get(0)?,
                    emission: small(r.try_get(1)?),
                    block: small(r.try_get(2)?),
                    index: small(r.try_get(3)?),
                    unit_id: r.try_get(4)?,
                    redeemed_at: r.try_get(8)?,
                    row: crate::ledger::summary::Row {
                        lot: u8::try_from(r.try_get::<_, i64>(5)?).unwrap_or(u8::MAX),
                        prize_cents: small(r.try_get(6)?),
                        record_sha256: r.try_get(7)?,
                        price_cents: small(r.try_get(9)?),
                        record: r.try_get(10)?,
                        rules_version: u16::try_from(r.try_get::<_, i64>(11)?).ok(),
                        stopped_after_steps: r.try_get::<_, Option<i64>>(12)?.map(small),
                    },
                });
            }
            drop(rows);
            Ok((figures, summing, integrity_ok))
        })?;
        Ok(crate::ledger::Summary::of(
            &self.name,
            figures,
            summing,
            integrity_ok && self.indexes_check()?,
        ))
    }

    /// Every sale, play and redemption of `game`'s `emission`, each kind
    /// read by one streamed query, the three in one REPEATABLE READ
    /// snapshot ([`crate::ledger::emission_rows`]; the SQL text is SQLite's, its
    /// `?N` written `$N`).
    pub(super) fn read_emission_rows(
        &self,
        game: &str,
        emission: u32,
        f: &mut crate::ledger::emission_rows::EmissionReads,
    ) -> Result<(), Error> {
        use postgres::fallible_iterator::FallibleIterator as _;
        let db = |e: postgres::Error| self.read_error(&e);
        let emission = i64::from(emission);
        self.snapshot(|tx, _| {
            // An audit's read of every row may take longer than a
            // statement of the money path may.
            tx.batch_execute("SET LOCAL statement_timeout = 0")
                .map_err(db)?;
            for kind in crate::ledger::emission_rows::Kind::ALL {
                let sql = kind.sql().replace('?', "$");
                let params: [&(dyn postgres::types::ToSql + Sync); 2] = [&game, &emission];
                let mut rows = tx.query_raw(&sql, params).map_err(db)?;
                while let Some(r) = rows.next().map_err(db)? {
                    f(kind.row(&r).map_err(db)?)?;
                }
            }
            Ok(())
        })
    }

    /// amcheck's `bt_index_check` on every B-tree index of the ledger's
    /// tables, when the extension is installed and this role may run it
    /// (docs/DEPLOY.md §PostgreSQL); `true` when it is not (nothing to
    /// say). A corrupt index is an error from amcheck: `false`.
    pub(super) fn indexes_check(&self) -> Result<bool, Error> {
        let mut conn = self.conn()?;
        let usable: bool = conn
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'bt_index_check')
                   AND COALESCE(has_function_privilege(
                         (SELECT min(oid) FROM pg_proc WHERE proname = 'bt_index_check'), 'EXECUTE'),
                       false)",
                &[],
            )
            .and_then(|r| r.try_get(0))
            .map_err(|e| self.db_error(&e))?;
        if !usable {
            return Ok(true);
        }
        let indexes = conn
            .query(
                "SELECT i.indexrelid FROM pg_index i
                   JOIN pg_class t ON t.oid = i.indrelid
                   JOIN pg_class c ON c.oid = i.indexrelid
                   JOIN pg_am a ON a.oid = c.relam
                 WHERE a.amname = 'btree' AND t.relnamespace = to_regnamespace(current_schema())::oid
                   AND t.relname = ANY($1)",
                &[&LEDGER_TABLES.to_vec()],
            )
            .map_err(|e| self.db_error(&e))?;
        for index in indexes {
            let oid: postgres::types::Oid = index.get(0);
            let checked = conn.execute("SELECT bt_index_check($1::oid::regclass)", &[&oid]);
            match checked {
                Ok(_) => {}
                Err(e)
                    if e.as_db_error().is_some()
                        && e.code() != Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) =>
                {
                    return Ok(false);
                }
                Err(e) => return Err(self.db_error(&e)),
            }
        }
        Ok(true)
    }
}

/// An operator's action from its [`OPERATOR_COLUMNS`] (the first eight).
pub(super) fn operator_action(r: &postgres::Row) -> crate::ledger::operator::OperatorAction {
    let opt = |i| r.get::<_, Option<i64>>(i).map(small);
    crate::ledger::operator::OperatorAction::from_columns(
        r.get(0),
        r.get(1),
        small(r.get(2)),
        opt(3),
        opt(4),
        r.get(5),
        r.get(6),
        r.get(7),
    )
}

pub(super) fn read_head(r: &postgres::Row) -> StoredHead {
    StoredHead {
        size: r.get::<_, i64>(0).unsigned_abs(),
        root: r.get(1),
        signed_at: r.get(2),
        checkpoint: r.get(3),
        signer: Some(r.get(4)),
    }
}

/// A redemption row's facts (the columns of `crate::ledger::columns::REDEMPTION_COLUMNS`).
pub(super) fn owned_fields(row: &postgres::Row) -> OwnedFields {
    OwnedFields {
        game: row.get(2),
        emission: small(row.get(3)),
        block: small(row.get(4)),
        index: small(row.get(5)),
        unit_id: row.get(6),
        lot: u8::try_from(row.get::<_, i64>(7)).unwrap_or(u8::MAX),
        prize_cents: small(row.get(8)),
        record_sha256: row.get(9),
        redeemed_at: row.get(10),
        stopped_after_steps: row.get::<_, Option<i64>>(11).map(small),
    }
}

/// A redemption row (the columns of `crate::ledger::columns::REDEMPTION_COLUMNS`) as an entry.
pub(super) fn redemption_entry(row: &postgres::Row) -> StoredEntry {
    owned_fields(row).into_entry(
        row.get::<_, Option<i64>>(0).map(i64::unsigned_abs),
        row.get(1),
    )
}

/// A sale row (game, emission, block, unit_index, seq, leaf_hash,
/// sold_at) as an entry.
pub(super) fn sale_entry(r: &postgres::Row) -> StoredEntry {
    let (game, emission, block, index) = place(r);
    let p = Place {
        game: &game,
        emission,
        block,
        index,
    };
    let sold_at: String = r.get(6);
    LogEntry::Sale {
        unit: p,
        sold_at: &sold_at,
    }
    .stored(r.get::<_, Option<i64>>(4).map(i64::unsigned_abs), r.get(5))
}

/// The place columns (game, emission, block, unit_index) of a row.
pub(super) fn place(row: &postgres::Row) -> (String, u32, u32, u32) {
    (
        row.get(0),
        small(row.get(1)),
        small(row.get(2)),
        small(row.get(3)),
    )
}

/// The entries of rows read from each table (the columns of
/// [`LogSource::snapshot`]'s queries).
pub(super) fn stored_entries(
    redemptions: &[postgres::Row],
    sales: &[postgres::Row],
    plays: &[postgres::Row],
    claims: &[postgres::Row],
    actions: &[postgres::Row],
) -> Vec<StoredEntry> {
    let mut entries: Vec<StoredEntry> = redemptions.iter().map(redemption_entry).collect();
    entries.extend(sales.iter().map(sale_entry));
    for r in plays {
        let (game, emission, block, index) = place(r);
        let p = Place {
            game: &game,
            emission,
            block,
            index,
        };
        let (how, ended_at) = (
            r.get::<_, Option<String>>(7).unwrap_or_default(),
            r.get::<_, Option<String>>(8).unwrap_or_default(),
        );
        entries.push(
            LogEntry::PlayEnd {
                unit: p,
                steps: small(r.get(6)),
                how: &how,
                ended_at: &ended_at,
            }
            .stored(Some(r.get::<_, i64>(4).unsigned_abs()), r.get(5)),
        );
    }
    for r in claims {
        let s = EndOfClaims {
            game: r.get(0),
            emission: small(r.get(1)),
            statement: r.get(2),
            ended_at: r.get(3),
        };
        entries.push(
            LogEntry::EndOfClaims(&s).stored(Some(r.get::<_, i64>(4).unsigned_abs()), r.get(5)),
        );
    }
    for r in actions {
        let a = operator_action(r);
        entries.push(
            LogEntry::Operator(&a)
                .stored(r.get::<_, Option<i64>>(8).map(i64::unsigned_abs), r.get(9)),
        );
    }
    entries
}
