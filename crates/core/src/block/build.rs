//! Making a block's contents from its seed: the lot shuffle, the unit
//! records chunk by chunk (in parallel), their Merkle subtrees and the
//! sealed (compressed, encrypted) chunks. Pure computation: no file is
//! touched, so regeneration from a revealed seed runs the same code.

use rayon::prelude::*;

use super::CHUNK_UNITS;
use crate::cipher::{self, ChunkPlace};
use crate::error::Error;
use crate::game::{Game, LotTable};
use crate::merkle::{self, Hash};
use crate::record;
use crate::rng::Stream;

/// Which block to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSpec {
    /// The game.
    pub game: Game,
    /// Emission number.
    pub emission: u32,
    /// Block number within the emission.
    pub block: u32,
    /// Unit price in cents.
    pub price_cents: u32,
    /// Units in the block: the game's `block_units()` for a production
    /// block; fewer make a test-size block, which `verify` refuses unless
    /// its options allow test sizes (docs/FORMAT.md §Test-size blocks).
    pub units: u32,
}

impl BlockSpec {
    /// "ile-au-tresor emission 7 block 3".
    pub fn describe(&self) -> String {
        format!(
            "{} emission {} block {}",
            self.game.slug(),
            self.emission,
            self.block
        )
    }
}

/// One chunk, made.
pub struct BuiltChunk {
    /// Compressed and encrypted records (empty when not sealed).
    pub ciphertext: Vec<u8>,
    /// RFC 9162 root of the chunk's records.
    pub subtree_root: Hash,
    /// Units in the chunk.
    pub units: u32,
}

/// A block's contents, ready to be written.
pub struct BuiltBlock {
    /// What was made.
    pub spec: BlockSpec,
    /// The regulation's lot table for the spec's price.
    pub lot_table: LotTable,
    /// Units in the block.
    pub unit_count: u32,
    /// SHA-256 of the seed.
    pub seed_commitment: Hash,
    /// RFC 9162 root over all records.
    pub merkle_root: Hash,
    /// The chunks, in order.
    pub chunks: Vec<BuiltChunk>,
}

/// The block's lot codes in unit order: the table's lots (highest first,
/// losers last) shuffled with our Fisher-Yates on stream 0 of the seed. A
/// drawn game's table is empty: no lot is laid out and stream 0 is unused.
pub fn lot_order(seed: &[u8; 32], table: &LotTable, units: u32) -> Vec<u8> {
    let mut lots = table.unshuffled_lots(units);
    if !table.tiers.is_empty() {
        Stream::new(seed, 0).shuffle(&mut lots);
    }
    lots
}

/// The records of units `first .. first + count` (concatenated), given the
/// block's lot order.
pub fn records(
    game: Game,
    seed: &[u8; 32],
    table: &LotTable,
    lots: &[u8],
    first: u32,
    count: u32,
) -> Vec<u8> {
    let size = record::record_size(game);
    let mut out = Vec::with_capacity(size * count as usize);
    let codes = crate::derive::CheckCodes::new(seed);
    for index in first..first + count {
        let lot = lots[index as usize];
        let prize = table.amount_cents(lot).unwrap_or(0);
        record::build(game, seed, &codes, index, lot, prize, &mut out);
    }
    out
}

/// The RFC 9162 leaf hashes of concatenated fixed-size records.
pub fn leaf_hashes(records: &[u8], record_size: usize) -> Vec<Hash> {
    records
        .chunks_exact(record_size)
        .map(merkle::leaf_hash)
        .collect()
}

/// RFC 9162 root of concatenated fixed-size records.
pub fn records_root(records: &[u8], record_size: usize) -> Hash {
    merkle::root_from_hashes(&leaf_hashes(records, record_size))
}

/// Makes a block from its seed. With a records key the chunks are sealed;
/// without one only the records' roots are computed (regeneration checks).
/// `progress` is told the number of units of each chunk as it is done.
pub fn build(
    spec: BlockSpec,
    seed: &[u8; 32],
    records_key: Option<&[u8; 32]>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<BuiltBlock, Error> {
    let game = spec.game;
    let unit_count = spec.units;
    if unit_count == 0 || unit_count > game.max_units() {
        return Err(Error::BlockUnits {
            game: game.slug(),
            units: unit_count,
            max: game.max_units(),
        });
    }
    let lot_table = game.lot_table_for(spec.price_cents, unit_count)?;
    let lots = lot_order(seed, &lot_table, unit_count);
    let chunks = seal_chunks(spec, records_key, progress, |first, units| {
        records(game, seed, &lot_table, &lots, first, units)
    });
    let roots: Vec<Hash> = chunks.iter().map(|c| c.subtree_root).collect();
    Ok(BuiltBlock {
        spec,
        lot_table,
        unit_count,
        seed_commitment: crate::derive::seed_commitment(seed),
        merkle_root: merkle::root_from_hashes(&roots),
        chunks,
    })
}

/// A block of `spec` whose records are `all` (concatenated, in index
/// order) rather than drawn from a seed, under the seed commitment
/// `seed_commitment`: how a test makes another world of the same public
/// facts (`test_support::reseal_block`). Never a product path.
pub(crate) fn from_records(
    spec: BlockSpec,
    seed_commitment: Hash,
    records_key: &[u8; 32],
    all: &[u8],
) -> Result<BuiltBlock, Error> {
    let size = record::record_size(spec.game);
    if all.len() != size * spec.units as usize {
        return Err(Error::Internal {
            what: format!(
                "{}: {} bytes of records for {} units of {size} bytes",
                spec.describe(),
                all.len(),
                spec.units
            ),
        });
    }
    let lot_table = spec.game.lot_table_for(spec.price_cents, spec.units)?;
    let chunks = seal_chunks(spec, Some(records_key), &|_| {}, |first, units| {
        all[first as usize * size..(first + units) as usize * size].to_vec()
    });
    let roots: Vec<Hash> = chunks.iter().map(|c| c.subtree_root).collect();
    Ok(BuiltBlock {
        spec,
        lot_table,
        unit_count: spec.units,
        seed_commitment,
        merkle_root: merkle::root_from_hashes(&roots),
        chunks,
    })
}

/// The chunks of `spec`, each made of `records(first, units)`, their
/// roots computed and (with a records key) sealed, in parallel.
fn seal_chunks(
    spec: BlockSpec,
    records_key: Option<&[u8; 32]>,
    progress: &(dyn Fn(u64) + Sync),
    records: impl Fn(u32, u32) -> Vec<u8> + Sync,
) -> Vec<BuiltChunk> {
    let game = spec.game;
    let unit_count = spec.units;
    let record_size = record::record_size(game);
    let chunk_count = unit_count.div_ceil(CHUNK_UNITS);
    (0..chunk_count)
        .into_par_iter()
        .map(|chunk| {
            let first = chunk * CHUNK_UNITS;
            let units = CHUNK_UNITS.min(unit_count - first);
            let recs = records(first, units);
            let subtree_root = records_root(&recs, record_size);
            let ciphertext = match records_key {
                Some(key) => {
                    let place = ChunkPlace {
                        game: game.id(),
                        emission: spec.emission,
                        block: spec.block,
                        chunk,
                        units,
                        price_cents: spec.price_cents,
                        rules_version: game.rules_version(),
                    };
                    cipher::seal_chunk(key, &place, &recs)
                }
                None => Vec::new(),
            };
            progress(u64::from(units));
            BuiltChunk {
                ciphertext,
                subtree_root,
                units,
            }
        })
        .collect()
}
