//! The per-block comparison: a block's units as the ledger has them
//! ([`tally`]), the block reopened for its sealed records when its game is
//! played step by step ([`open_block`]).

use std::path::Path;

use ed25519_dalek::VerifyingKey;
use rayon::prelude::*;

use super::findings::Found;
use super::rows::BlockRows;
use super::unit::Unit;
use crate::block::authentic::AuthenticBlock;
use crate::block::reader::BlockFile;
use crate::error::Error;
use crate::evidence::BlockAudit;
use crate::game::Game;
use crate::records_key::KeyAccess;

/// The block of `audit` opened again for its records (a game played step
/// by step), refused unless it is the block audited: the same game,
/// emission, block and sealed Merkle root. Its seal is checked with the
/// signer its header names: the audit checked that signer is the
/// issuer's for this Merkle root, and every record read is checked
/// against that root.
pub(super) fn open_block(
    game: Game,
    audit: &BlockAudit,
    keys: &KeyAccess<'_>,
) -> Result<AuthenticBlock, Error> {
    let path = Path::new(&audit.evidence.path);
    let signer = BlockFile::open(path)?.header.signer;
    let changed = |reason: String| Error::BlockRejected {
        path: path.to_path_buf(),
        reason,
    };
    let signer = VerifyingKey::from_bytes(&signer)
        .map_err(|e| changed(format!("its header's signer is not a key ({e})")))?;
    let block = AuthenticBlock::open(path, &signer, *keys, "audit")?;
    let h = &block.file.header;
    let e = &audit.evidence;
    if h.game != game
        || h.emission != e.emission
        || h.block != e.block
        || hex::encode(h.merkle_root) != e.merkle_root
    {
        return Err(changed(
            "it is no longer the block audited (another Merkle root): audit it again".into(),
        ));
    }
    Ok(block)
}

/// A block's units as the ledger has them: its figures and findings. For
/// a game played step by step, `block` is the block reopened for the
/// records of every unit sold, played or paid, each chunk read once.
pub(super) fn tally(
    game: Game,
    audit: &BlockAudit,
    rows: &BlockRows,
    block: Option<&AuthenticBlock>,
) -> Result<Found, Error> {
    let mut units: Vec<u32> = rows
        .sales
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(i, _)| i as u32)
        .chain(rows.plays.keys().copied())
        .chain(rows.paid.keys().copied())
        .chain(rows.voided.iter().copied())
        .collect();
    units.sort_unstable();
    units.dedup();
    let winners = audit.outcomes.iter().filter(|o| o.prize_cents > 0).count();
    let unit = Unit {
        game,
        audit,
        rows,
        win_rate: winners as f64 / audit.outcomes.len().max(1) as f64,
        table: match block {
            Some(b) => b.regulation.clone(),
            None => game.lot_table(audit.evidence.price_cents)?,
        },
    };
    let Some(block) = block else {
        let mut found = Found::default();
        for &index in &units {
            unit.add(index, None, &mut found);
        }
        return Ok(found);
    };
    let h = &block.file.header;
    let per_chunk = h.chunk_units.max(1);
    let size = usize::from(h.record_size);
    let mut chunks: Vec<(u32, &[u32])> = Vec::new();
    for group in units.chunk_by(|a, b| a / per_chunk == b / per_chunk) {
        chunks.push((group[0] / per_chunk, group));
    }
    let found = chunks
        .par_iter()
        .map(|&(chunk, indices)| {
            let records = block.chunk_records(chunk)?.records;
            let mut found = Found::default();
            for &index in indices {
                let at = (index - chunk * per_chunk) as usize * size;
                let record = records
                    .get(at..at + size)
                    .ok_or_else(|| Error::BlockRejected {
                        path: block.file.path().to_path_buf(),
                        reason: format!("chunk {chunk} has no record {index}"),
                    })?;
                unit.add(index, Some(record), &mut found);
            }
            Ok(found)
        })
        .collect::<Result<Vec<Found>, Error>>()?;
    Ok(found.into_iter().fold(Found::default(), |mut all, f| {
        all.merge(f);
        all
    }))
}
