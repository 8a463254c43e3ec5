//! The log of the store's SQLite ledger (docs/REDEMPTION.md §Tamper-evident
//! log): where [`crate::ledger::log`]'s entries, heads and tiles are stored, read
//! back and appended to inside a commit. The log itself (entries, signed
//! heads, proofs, verification) knows no database.

use rusqlite::{params, OptionalExtension};

use super::append::{sqlite_tiles_covered, SqliteTiles};
use super::ledger::Ledger;
use crate::error::Error;
use crate::ledger::columns::REDEMPTION_COLUMNS;
use crate::ledger::log::{
    in_order, LogEntry, LogSource, OwnedFields, Place, Snapshot, StoredEntry, StoredHead,
};
use crate::ledger::tiles::{TileId, TileSource};
use crate::merkle::Hash;

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
            stopped_after_steps: r.get(11)?,
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

/// The entry of row `r`, whose first four columns are its unit's place
/// (game, emission, block, index): `entry` makes it from that place.
fn at_place(
    r: &rusqlite::Row,
    entry: impl FnOnce(Place) -> Result<StoredEntry, rusqlite::Error>,
) -> Result<StoredEntry, rusqlite::Error> {
    let game: String = r.get(0)?;
    entry(Place {
        game: &game,
        emission: r.get(1)?,
        block: r.get(2)?,
        index: r.get(3)?,
    })
}

/// Positions `[from, to)` of the log as an SQL condition on `seq` (each
/// table's `seq` is indexed), or every row.
#[derive(Clone, Copy)]
struct Range(Option<(u64, u64)>);

impl Range {
    /// `AND seq >= ?1 AND seq < ?2`, or nothing.
    fn clause(self) -> &'static str {
        match self.0 {
            Some(_) => " AND seq >= ?1 AND seq < ?2",
            None => "",
        }
    }

    /// The clause's parameters.
    fn params(self) -> Vec<u64> {
        self.0.map_or_else(Vec::new, |(from, to)| vec![from, to])
    }
}

/// Every sale, finished play, logged end of claims and operator's action
/// of an SQLite ledger (those in `range`).
fn read_sales_and_plays(
    conn: &rusqlite::Connection,
    range: Range,
) -> Result<Vec<StoredEntry>, rusqlite::Error> {
    let (clause, bounds) = (range.clause(), range.params());
    let bounds = rusqlite::params_from_iter(bounds.iter());
    let mut out = Vec::new();
    let mut stmt = conn.prepare(&format!(
        "SELECT game, emission, block, unit_index, seq, leaf_hash, sold_at FROM sales
         WHERE seq IS NOT NULL{clause}"
    ))?;
    let mut rows = stmt.query(bounds.clone())?;
    while let Some(r) = rows.next()? {
        out.push(at_place(r, |unit| {
            let sold_at: String = r.get(6)?;
            Ok(LogEntry::Sale {
                unit,
                sold_at: &sold_at,
            }
            .stored(r.get(4)?, r.get(5)?))
        })?);
    }
    let mut stmt = conn.prepare(&format!(
        "SELECT game, emission, block, unit_index, seq, leaf_hash, rolls, ended, ended_at
         FROM plays WHERE seq IS NOT NULL{clause}"
    ))?;
    let mut rows = stmt.query(bounds.clone())?;
    while let Some(r) = rows.next()? {
        out.push(at_place(r, |unit| {
            let how = r.get::<_, Option<String>>(7)?.unwrap_or_default();
            let ended_at = r.get::<_, Option<String>>(8)?.unwrap_or_default();
            Ok(LogEntry::PlayEnd {
                unit,
                steps: r.get(6)?,
                how: &how,
                ended_at: &ended_at,
            }
            .stored(Some(r.get(4)?), Some(r.get(5)?)))
        })?);
    }
    // A claims row without a seq is a pre-log row (written before ends of
    // claims were logged): not an entry; a writer adopts it into the log
    // when it next opens the ledger.
    let mut stmt = conn.prepare(&format!(
        "SELECT game, emission, statement, ended_at, seq, leaf_hash
         FROM claims_ended WHERE seq IS NOT NULL{clause}"
    ))?;
    let mut rows = stmt.query(bounds.clone())?;
    while let Some(r) = rows.next()? {
        let s = crate::ledger::claims::EndOfClaims {
            game: r.get(0)?,
            emission: r.get(1)?,
            statement: r.get(2)?,
            ended_at: r.get(3)?,
        };
        out.push(LogEntry::EndOfClaims(&s).stored(Some(r.get(4)?), r.get(5)?));
    }
    let mut stmt = conn.prepare(&format!(
        "SELECT {}, seq, leaf_hash FROM operator_actions WHERE seq IS NOT NULL{clause}",
        crate::ledger::operator::COLUMNS
    ))?;
    let mut rows = stmt.query(bounds)?;
    while let Some(r) = rows.next()? {
        let a = crate::ledger::operator::OperatorAction::from_columns(
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            r.get(7)?,
        );
        out.push(LogEntry::Operator(&a).stored(r.get(8)?, r.get(9)?));
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
            entries.extend(read_sales_and_plays(&self.conn, Range(None))?);
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

    fn latest_witnessed_head(&self) -> Result<Option<StoredHead>, Error> {
        self.conn
            .query_row(
                &format!(
                    "SELECT {HEAD_COLUMNS} FROM ledger_heads WHERE {} ORDER BY size DESC LIMIT 1",
                    crate::ledger::columns::COSIGNED_NOTE
                ),
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

    fn sale_entry(&self, p: Place) -> Result<Option<StoredEntry>, Error> {
        self.conn
            .query_row(
                "SELECT game, emission, block, unit_index, seq, leaf_hash, sold_at FROM sales
                 WHERE game=?1 AND emission=?2 AND block=?3 AND unit_index=?4",
                params![p.game, p.emission, p.block, p.index],
                |r| {
                    at_place(r, |unit| {
                        let sold_at: String = r.get(6)?;
                        Ok(LogEntry::Sale {
                            unit,
                            sold_at: &sold_at,
                        }
                        .stored(r.get(4)?, r.get(5)?))
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    fn entries(&self, from: u64, to: u64) -> Result<Vec<String>, Error> {
        let read = || -> Result<Vec<StoredEntry>, rusqlite::Error> {
            // One read transaction: the tables of one moment.
            self.conn.execute_batch("BEGIN")?;
            let mut entries = read_redemptions(
                &self.conn,
                "WHERE seq >= ?1 AND seq < ?2",
                params![from, to],
            )?;
            entries.extend(read_sales_and_plays(&self.conn, Range(Some((from, to))))?);
            Ok(entries)
        };
        let entries = read();
        let _ = self.conn.execute_batch("COMMIT");
        in_order(from, entries.map_err(|e| self.err(e))?, &self.path)
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
                let leaf = LogEntry::Redemption(f.borrow()).leaf(next);
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
