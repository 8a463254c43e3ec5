//! The log of the store's SQLite ledger (docs/REDEMPTION.md §Tamper-evident
//! log): where [`super::log`]'s entries, heads and tiles are stored, read
//! back and appended to inside a commit. The log itself (entries, signed
//! heads, proofs, verification) knows no database.

use std::path::Path;

use rusqlite::{params, OptionalExtension, Transaction};

use super::columns::REDEMPTION_COLUMNS;
use super::log::{
    contiguous, decoded, in_order, tile_error, LedgerKey, LogEntry, LogSource, OwnedFields, Place,
    Snapshot, StoredEntry, StoredHead,
};
use super::tiles::{self, TileId, TileSource};
use super::Ledger;
use crate::error::Error;
use crate::merkle::{Frontier, Hash};

/// Brings `frontier` up to the log as stored (another process may have
/// appended since): starts from the latest head's kept frontier when it is
/// ahead (so a new process does not reread the whole log), then reads the
/// leaf hashes after it.
pub(super) fn catch_up(
    tx: &Transaction,
    frontier: &mut Frontier,
    path: &Path,
) -> Result<(), Error> {
    let err = |source: rusqlite::Error| Error::Ledger {
        path: path.to_path_buf(),
        source: source.into(),
    };
    let kept: Option<Option<Vec<u8>>> = tx
        .prepare_cached("SELECT frontier FROM ledger_heads ORDER BY size DESC LIMIT 1")
        .and_then(|mut s| s.query_row([], |r| r.get(0)).optional())
        .map_err(err)?;
    if let Some(kept) = kept.flatten().and_then(|b| Frontier::from_bytes(&b)) {
        if kept.size() > frontier.size() {
            *frontier = kept;
        }
    }
    for leaf in stored_leaves(tx, frontier.size(), path)? {
        frontier.push(leaf);
    }
    Ok(())
}

/// The stored leaf hashes of the SQLite ledger from entry `from` on, in
/// order.
fn stored_leaves(tx: &Transaction, from: u64, path: &Path) -> Result<Vec<Hash>, Error> {
    let err = |source: rusqlite::Error| Error::Ledger {
        path: path.to_path_buf(),
        source: source.into(),
    };
    let mut stmt = tx
        .prepare_cached("SELECT seq, leaf_hash FROM log_leaves WHERE seq >= ?1 ORDER BY seq")
        .map_err(err)?;
    let rows = stmt
        .query_map(params![from], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(err)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    contiguous(from, rows, path)
}

/// The SQLite ledger's tiles inside a transaction.
pub(super) struct SqliteTiles<'t>(pub(super) &'t rusqlite::Connection);

impl TileSource for SqliteTiles<'_> {
    fn tile(&mut self, (level, index): TileId) -> Result<Vec<Hash>, Error> {
        let bytes: Option<Vec<u8>> = self
            .0
            .prepare_cached("SELECT hashes FROM log_tiles WHERE level = ?1 AND idx = ?2")
            .and_then(|mut s| s.query_row(params![level, index], |r| r.get(0)).optional())
            .map_err(|e| tile_error(level, index, &e))?;
        decoded(level, index, bytes)
    }
}

/// Leaves an SQLite ledger's tiles cover (from its last level-0 tile).
fn sqlite_tiles_covered(conn: &rusqlite::Connection) -> Result<u64, rusqlite::Error> {
    let last: Option<(u64, Vec<u8>)> = conn
        .prepare_cached(
            "SELECT idx, hashes FROM log_tiles WHERE level = 0 ORDER BY idx DESC LIMIT 1",
        )?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(tiles::covered(last.map(|(i, b)| (i, b.len() / 32))))
}

/// Brings the tiles up to the log's `size` leaves (docs/REDEMPTION.md
/// §Tiles): the leaves past the last tile are read (those of this commit,
/// or, once, every leaf of a ledger written before tiles) and appended.
pub(super) fn extend_tiles(tx: &Transaction, size: u64, path: &Path) -> Result<(), Error> {
    let err = |source: rusqlite::Error| Error::Ledger {
        path: path.to_path_buf(),
        source: source.into(),
    };
    let covered = sqlite_tiles_covered(tx).map_err(err)?;
    if covered >= size {
        return Ok(());
    }
    let leaves = stored_leaves(tx, covered, path)?;
    let changed = tiles::append(&mut SqliteTiles(tx), covered, &leaves)?;
    let mut put = tx
        .prepare_cached("INSERT OR REPLACE INTO log_tiles (level, idx, hashes) VALUES (?1, ?2, ?3)")
        .map_err(err)?;
    for ((level, index), hashes) in changed {
        put.execute(params![level, index, tiles::encode(&hashes)])
            .map_err(err)?;
    }
    Ok(())
}

/// Signs and stores the head of `frontier`, keeping the frontier beside it.
/// A signed head is never replaced: a head of that size stored already
/// means the log was cut back below it (rows deleted) and is growing again
/// over it, and is refused as a damaged ledger.
pub(super) fn store_head(
    tx: &Transaction,
    key: &LedgerKey,
    frontier: &Frontier,
    at: &str,
    path: &Path,
) -> Result<String, Error> {
    let root = frontier.root();
    let note = key.sign_checkpoint(frontier.size(), &root);
    let inserted = tx
        .prepare_cached(
            "INSERT INTO ledger_heads (size, root, signed_at, checkpoint, frontier)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (size) DO NOTHING",
        )
        .and_then(|mut s| {
            s.execute(params![
                frontier.size(),
                &root[..],
                at,
                &note,
                frontier.to_bytes()
            ])
        })
        .map_err(|source| Error::Ledger {
            path: path.to_path_buf(),
            source: source.into(),
        })?;
    if inserted == 0 {
        return Err(Error::LedgerDamaged {
            path: path.to_path_buf(),
            reason: format!(
                "a signed head of size {} is stored already: the log was cut back below it and would grow over it; nothing was recorded; run `issuer ledger verify`",
                frontier.size()
            ),
        });
    }
    Ok(note)
}

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
            stopped_after_rolls: r.get(11)?,
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
                rolls: r.get(6)?,
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
        let s = super::claims::EndOfClaims {
            game: r.get(0)?,
            emission: r.get(1)?,
            statement: r.get(2)?,
            ended_at: r.get(3)?,
        };
        out.push(LogEntry::EndOfClaims(&s).stored(Some(r.get(4)?), r.get(5)?));
    }
    let mut stmt = conn.prepare(&format!(
        "SELECT {}, seq, leaf_hash FROM operator_actions WHERE seq IS NOT NULL{clause}",
        super::operator::COLUMNS
    ))?;
    let mut rows = stmt.query(bounds)?;
    while let Some(r) = rows.next()? {
        let a = super::operator::OperatorAction::from_columns(
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
                    super::columns::COSIGNED_NOTE
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
