//! The PostgreSQL ledger as a [`LogSource`]: entries, heads and tiles
//! read back for the log (crates/log).

use super::ledger::PgLedger;
use super::read::{read_head, redemption_entry, sale_entry, stored_entries};
use super::sql::{HEAD_COLUMNS, LAST_TILE, OPERATOR_COLUMNS, QUEUED};

use crate::error::Error;
use crate::ledger::log::{self, LogSource, Place, Snapshot, StoredEntry, StoredHead};
use crate::ledger::tiles::{self, TileId};
use crate::merkle::Hash;

impl LogSource for PgLedger {
    fn log_name(&self) -> String {
        self.name.clone()
    }

    fn snapshot(&self) -> Result<Snapshot, Error> {
        // Rows queued for the sequencer are counted, not read: they are not
        // in the log yet. A row with neither seq nor pending number was
        // inserted behind the ledger's back.
        let (redemptions, sales, plays, claims, actions, heads, pending, tiles) = self.read(|tx| {
            Ok((
                tx.query(
                    &format!(
                        "SELECT {} FROM redemptions WHERE seq IS NOT NULL OR pending IS NULL",
                        crate::ledger::columns::REDEMPTION_COLUMNS
                    ),
                    &[],
                )?,
                tx.query(
                    "SELECT game, emission, block, unit_index, seq, leaf_hash, sold_at FROM sales
                     WHERE seq IS NOT NULL OR pending IS NULL",
                    &[],
                )?,
                tx.query(
                    "SELECT game, emission, block, unit_index, seq, leaf_hash, rolls, ended, ended_at
                     FROM plays WHERE seq IS NOT NULL",
                    &[],
                )?,
                // Rows without a seq are pre-log rows (see the SQLite
                // ledger's `read_sales_and_plays`).
                tx.query(
                    "SELECT game, emission, statement, ended_at, seq, leaf_hash
                     FROM claims_ended WHERE seq IS NOT NULL",
                    &[],
                )?,
                tx.query(
                    &format!(
                        "SELECT {OPERATOR_COLUMNS}, seq, leaf_hash FROM operator_actions
                         WHERE seq IS NOT NULL OR pending IS NULL"
                    ),
                    &[],
                )?,
                tx.query(&format!("SELECT {HEAD_COLUMNS} FROM ledger_heads"), &[])?,
                tx.query_one(QUEUED, &[])?.get::<_, i64>(0).unsigned_abs(),
                tx.query("SELECT level, idx, hashes FROM log_tiles", &[])?,
            ))
        })?;
        let entries = stored_entries(&redemptions, &sales, &plays, &claims, &actions);
        Ok(Snapshot {
            entries,
            heads: heads.iter().map(read_head).collect(),
            pending,
            tiles: tiles
                .iter()
                .map(|r| {
                    let level = u8::try_from(r.get::<_, i16>(0)).unwrap_or(u8::MAX);
                    ((level, r.get::<_, i64>(1).unsigned_abs()), r.get(2))
                })
                .collect(),
        })
    }

    fn latest_head(&self) -> Result<Option<StoredHead>, Error> {
        let row = self
            .conn()?
            .query_opt(
                &format!("SELECT {HEAD_COLUMNS} FROM ledger_heads ORDER BY size DESC LIMIT 1"),
                &[],
            )
            .map_err(|e| self.db_error(&e))?;
        Ok(row.as_ref().map(read_head))
    }

    fn latest_witnessed_head(&self) -> Result<Option<StoredHead>, Error> {
        let row = self
            .conn()?
            .query_opt(
                &format!(
                    "SELECT {HEAD_COLUMNS} FROM ledger_heads WHERE {} ORDER BY size DESC LIMIT 1",
                    crate::ledger::columns::COSIGNED_NOTE
                ),
                &[],
            )
            .map_err(|e| self.db_error(&e))?;
        Ok(row.as_ref().map(read_head))
    }

    fn entries(&self, from: u64, to: u64) -> Result<Vec<String>, Error> {
        let (from_i, to_i) = (
            i64::try_from(from).unwrap_or(i64::MAX),
            i64::try_from(to).unwrap_or(i64::MAX),
        );
        // Each table's `seq` is unique, so indexed; queued rows have none.
        let range = "seq >= $1 AND seq < $2";
        let (redemptions, sales, plays, claims, actions) = self.read(|tx| {
            Ok((
                tx.query(
                    &format!(
                        "SELECT {} FROM redemptions WHERE {range}",
                        crate::ledger::columns::REDEMPTION_COLUMNS
                    ),
                    &[&from_i, &to_i],
                )?,
                tx.query(
                    &format!(
                        "SELECT game, emission, block, unit_index, seq, leaf_hash, sold_at FROM sales
                         WHERE {range}"
                    ),
                    &[&from_i, &to_i],
                )?,
                tx.query(
                    &format!(
                        "SELECT game, emission, block, unit_index, seq, leaf_hash, rolls, ended, ended_at
                         FROM plays WHERE {range}"
                    ),
                    &[&from_i, &to_i],
                )?,
                tx.query(
                    &format!(
                        "SELECT game, emission, statement, ended_at, seq, leaf_hash
                         FROM claims_ended WHERE {range}"
                    ),
                    &[&from_i, &to_i],
                )?,
                tx.query(
                    &format!(
                        "SELECT {OPERATOR_COLUMNS}, seq, leaf_hash FROM operator_actions WHERE {range}"
                    ),
                    &[&from_i, &to_i],
                )?,
            ))
        })?;
        let entries = stored_entries(&redemptions, &sales, &plays, &claims, &actions);
        log::in_order(from, entries, std::path::Path::new(&self.name))
    }

    fn tile(&self, (level, index): TileId) -> Result<Vec<Hash>, Error> {
        let row = self
            .conn()?
            .query_opt(
                "SELECT hashes FROM log_tiles WHERE level = $1 AND idx = $2",
                &[&i16::from(level), &i64::try_from(index).unwrap_or(i64::MAX)],
            )
            .map_err(|e| self.read_error(&e))?;
        log::decoded(level, index, row.map(|r| r.get(0)))
    }

    fn tiles_covered(&self) -> Result<u64, Error> {
        let row = self
            .conn()?
            .query_opt(LAST_TILE, &[])
            .map_err(|e| self.read_error(&e))?;
        Ok(tiles::covered(row.map(|r| {
            (
                r.get::<_, i64>(0).unsigned_abs(),
                r.get::<_, Vec<u8>>(1).len() / 32,
            )
        })))
    }

    fn redemption_entry(&self, p: Place) -> Result<Option<StoredEntry>, Error> {
        let row = self
            .conn()?
            .query_opt(
                &format!(
                    "SELECT {} FROM redemptions WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                    crate::ledger::columns::REDEMPTION_COLUMNS
                ),
                &[
                    &p.game,
                    &i64::from(p.emission),
                    &i64::from(p.block),
                    &i64::from(p.index),
                ],
            )
            .map_err(|e| self.db_error(&e))?;
        Ok(row.as_ref().map(redemption_entry))
    }

    fn sale_entry(&self, p: Place) -> Result<Option<StoredEntry>, Error> {
        let row = self
            .conn()?
            .query_opt(
                "SELECT game, emission, block, unit_index, seq, leaf_hash, sold_at FROM sales
                 WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                &[
                    &p.game,
                    &i64::from(p.emission),
                    &i64::from(p.block),
                    &i64::from(p.index),
                ],
            )
            .map_err(|e| self.db_error(&e))?;
        Ok(row.as_ref().map(sale_entry))
    }
}
