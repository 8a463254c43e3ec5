//! Appending to the SQLite ledger's log inside a commit: the frontier
//! caught up with what is stored, the tiles extended, the new head signed
//! and stored.

use std::path::Path;

use rusqlite::{params, OptionalExtension, Transaction};

use crate::error::Error;
use crate::ledger::log::{contiguous, decoded, tile_error, LedgerKey};
use crate::ledger::tiles::{self, TileId, TileSource};
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
pub(super) fn sqlite_tiles_covered(conn: &rusqlite::Connection) -> Result<u64, rusqlite::Error> {
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
