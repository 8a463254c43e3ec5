//! The log's tree kept as tiles (C2SP tlog-tiles layout), so a proof reads
//! a few rows, not every leaf (docs/REDEMPTION.md §Tiles).
//!
//! A tile at level 0 holds up to 256 consecutive leaf hashes: tile `i`
//! those of leaves `256·i` to `256·i + 255`. A tile at level `L ≥ 1` holds
//! the roots of full tiles of level `L − 1`: entry `j` of level `L` is the
//! root of the perfect subtree of the `256^L` leaves from `256^L · j`. The
//! last tile of a level may be partial (fewer than 256 hashes); a tile's
//! row is its hashes, 32 bytes each, in order. Any perfect subtree, of
//! height `h` at index `k`, is then `2^(h mod 8)` consecutive entries of one
//! tile of level `h div 8`, hashed up; an RFC 9162 proof is made of such
//! subtrees, so it reads at most one tile per node (about
//! `log2(size) / 8 · 2` distinct tiles).
//!
//! This module holds no storage: a database gives it tiles through
//! [`TileSource`] and stores what [`append`] returns.

use std::collections::BTreeMap;

use ticket_issuer_core::error::Error;
use ticket_issuer_core::merkle::{self, Hash};

/// Hashes a tile holds.
pub const WIDTH: u64 = 256;

/// Levels of the tree a tile level spans.
const HEIGHT: u32 = 8;

/// A tile's place: (level, index).
pub type TileId = (u8, u64);

/// Where tiles are read from.
pub trait TileSource {
    /// The tile's hashes as stored (empty when there is none).
    fn tile(&mut self, id: TileId) -> Result<Vec<Hash>, Error>;
}

/// Tiles read once each, counted.
pub struct Cached<'s> {
    source: &'s mut dyn TileSource,
    tiles: BTreeMap<TileId, Vec<Hash>>,
    /// Tiles read from the source.
    pub reads: u64,
}

impl<'s> Cached<'s> {
    /// Reads through `source`.
    pub fn new(source: &'s mut dyn TileSource) -> Cached<'s> {
        Cached {
            source,
            tiles: BTreeMap::new(),
            reads: 0,
        }
    }

    fn tile(&mut self, id: TileId) -> Result<&Vec<Hash>, Error> {
        if !self.tiles.contains_key(&id) {
            let tile = self.source.tile(id)?;
            self.reads += 1;
            self.tiles.insert(id, tile);
        }
        Ok(&self.tiles[&id])
    }

    /// The root of the perfect subtree of height `h` at index `k` (the
    /// `2^h` leaves from `k · 2^h`).
    fn perfect(&mut self, h: u32, k: u64) -> Result<Hash, Error> {
        let (level, up) = (h / HEIGHT, h % HEIGHT);
        let first = k << up;
        let (index, offset) = (first / WIDTH, (first % WIDTH) as usize);
        let count = 1usize << up;
        let tile = self.tile((level as u8, index))?;
        let entries = tile
            .get(offset..offset + count)
            .ok_or_else(|| missing(level, index, offset + count))?;
        Ok(merkle::root_from_hashes(entries))
    }

    /// MTH of the leaves `[a, b)`, `a` aligned as RFC 9162's recursion
    /// makes it (the left part of every split is a perfect subtree).
    fn mth(&mut self, a: u64, b: u64) -> Result<Hash, Error> {
        let n = b - a;
        if n.is_power_of_two() && a.is_multiple_of(n) {
            return self.perfect(n.trailing_zeros(), a >> n.trailing_zeros());
        }
        let k = split(n);
        let left = self.mth(a, a + k)?;
        let right = self.mth(a + k, b)?;
        Ok(merkle::node_hash(&left, &right))
    }

    /// RFC 9162 §2.1.3 inclusion proof of leaf `index` in the tree of the
    /// first `size` leaves, bottom-up.
    pub fn inclusion_proof(&mut self, index: u64, size: u64) -> Result<Vec<Hash>, Error> {
        let mut proof = Vec::new();
        self.path(index, 0, size, &mut proof)?;
        Ok(proof)
    }

    fn path(&mut self, m: u64, a: u64, b: u64, out: &mut Vec<Hash>) -> Result<(), Error> {
        if b - a <= 1 {
            return Ok(());
        }
        let k = split(b - a);
        if m < a + k {
            self.path(m, a, a + k, out)?;
            out.push(self.mth(a + k, b)?);
        } else {
            self.path(m, a + k, b, out)?;
            out.push(self.mth(a, a + k)?);
        }
        Ok(())
    }

    /// RFC 9162 §2.1.4 consistency proof from size `old` to size `new`.
    pub fn consistency_proof(&mut self, old: u64, new: u64) -> Result<Vec<Hash>, Error> {
        let mut proof = Vec::new();
        if old > 0 && old < new {
            self.subproof(old, 0, new, true, &mut proof)?;
        }
        Ok(proof)
    }

    /// The root of the first `size` leaves.
    pub fn root(&mut self, size: u64) -> Result<Hash, Error> {
        if size == 0 {
            return Ok(merkle::empty_root());
        }
        self.mth(0, size)
    }

    fn subproof(
        &mut self,
        m: u64,
        a: u64,
        b: u64,
        whole: bool,
        out: &mut Vec<Hash>,
    ) -> Result<(), Error> {
        let n = b - a;
        if m == n {
            if !whole {
                out.push(self.mth(a, b)?);
            }
            return Ok(());
        }
        let k = split(n);
        if m <= k {
            self.subproof(m, a, a + k, whole, out)?;
            out.push(self.mth(a + k, b)?);
        } else {
            self.subproof(m - k, a + k, b, false, out)?;
            out.push(self.mth(a, a + k)?);
        }
        Ok(())
    }
}

/// The largest power of two below `n` (n ≥ 2).
fn split(n: u64) -> u64 {
    1 << (63 - (n - 1).leading_zeros())
}

fn missing(level: u32, index: u64, width: usize) -> Error {
    Error::LedgerDamaged {
        path: "log_tiles".into(),
        reason: format!(
            "tile {level}/{index} holds fewer than the {width} hashes the log's size needs; run `issuer ledger verify`"
        ),
    }
}

/// Appends `leaves` to a tree of `size` leaves: every tile that changes,
/// with its new hashes (a level-0 tile gains leaves; a tile that fills
/// adds its root to the level above, and so on up).
pub fn append(
    source: &mut dyn TileSource,
    size: u64,
    leaves: &[Hash],
) -> Result<BTreeMap<TileId, Vec<Hash>>, Error> {
    let mut changed: BTreeMap<TileId, Vec<Hash>> = BTreeMap::new();
    for (j, leaf) in leaves.iter().enumerate() {
        let mut position = size + j as u64;
        let mut hash = *leaf;
        let mut level = 0u8;
        loop {
            let id = (level, position / WIDTH);
            let tile = match changed.entry(id) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => e.insert(source.tile(id)?),
            };
            let offset = (position % WIDTH) as usize;
            if tile.len() != offset {
                return Err(Error::LedgerDamaged {
                    path: "log_tiles".into(),
                    reason: format!(
                        "tile {level}/{} holds {} hashes where {offset} were expected; run `issuer ledger verify`",
                        id.1,
                        tile.len()
                    ),
                });
            }
            tile.push(hash);
            if tile.len() as u64 != WIDTH {
                break;
            }
            // A full tile: its root is an entry of the level above.
            hash = merkle::root_from_hashes(tile);
            position /= WIDTH;
            level += 1;
        }
    }
    Ok(changed)
}

/// A tile's hashes as stored (32 bytes each).
#[must_use]
pub fn encode(hashes: &[Hash]) -> Vec<u8> {
    hashes.concat()
}

/// A tile's hashes from its stored bytes; `None` when not a multiple of 32.
#[must_use]
pub fn decode(bytes: &[u8]) -> Option<Vec<Hash>> {
    if !bytes.len().is_multiple_of(32) || bytes.len() as u64 > WIDTH * 32 {
        return None;
    }
    Some(
        bytes
            .chunks_exact(32)
            .map(|c| Hash::try_from(c).expect("32 bytes"))
            .collect(),
    )
}

/// Leaves the level-0 tiles cover, from the last one (`None`: no tile).
#[must_use]
pub fn covered(last: Option<(u64, usize)>) -> u64 {
    last.map_or(0, |(index, width)| index * WIDTH + width as u64)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[derive(Default)]
    struct Memory(HashMap<TileId, Vec<Hash>>);

    impl TileSource for Memory {
        fn tile(&mut self, id: TileId) -> Result<Vec<Hash>, Error> {
            Ok(self.0.get(&id).cloned().unwrap_or_default())
        }
    }

    fn leaves(n: u64) -> Vec<Hash> {
        (0..n)
            .map(|i| merkle::leaf_hash(&i.to_be_bytes()))
            .collect()
    }

    /// Appends in uneven batches, as commits do.
    fn tiled(all: &[Hash]) -> Memory {
        let mut store = Memory::default();
        let mut size = 0u64;
        for chunk in all.chunks(97).flat_map(|c| c.chunks(41)) {
            let changed = append(&mut store, size, chunk).unwrap();
            store.0.extend(changed);
            size += chunk.len() as u64;
        }
        store
    }

    #[test]
    fn proofs_from_tiles_are_the_proofs_from_every_leaf_and_read_few_tiles() {
        let all = leaves(70_000);
        let mut store = tiled(&all);
        // Level 2 holds the root of the first 65,536 leaves.
        assert_eq!(
            store.0[&(2, 0)],
            vec![merkle::root_from_hashes(&all[..65_536])]
        );
        for size in [
            1u64, 2, 3, 255, 256, 257, 511, 1000, 65_535, 65_536, 65_537, 70_000,
        ] {
            let prefix = &all[..size as usize];
            let mut tiles = Cached::new(&mut store);
            assert_eq!(
                tiles.root(size).unwrap(),
                merkle::root_from_hashes(prefix),
                "root {size}"
            );
            for index in [0, size / 3, size / 2, size - 1] {
                let from_tiles = tiles.inclusion_proof(index, size).unwrap();
                let expected = merkle::inclusion_proof(prefix, index as usize).unwrap();
                assert_eq!(from_tiles, expected, "inclusion {index} of {size}");
            }
            for old in [1, size / 2, size.saturating_sub(1), size] {
                if old == 0 {
                    continue;
                }
                let from_tiles = tiles.consistency_proof(old, size).unwrap();
                let expected = merkle::consistency_proof(prefix, old as usize).unwrap_or_default();
                assert_eq!(from_tiles, expected, "consistency {old} → {size}");
            }
        }
        let mut tiles = Cached::new(&mut store);
        tiles.inclusion_proof(12_345, 70_000).unwrap();
        assert!(tiles.reads <= 8, "{} tiles read", tiles.reads);
    }

    #[test]
    fn a_tile_out_of_step_with_the_log_is_damage_not_a_wrong_proof() {
        let all = leaves(300);
        let mut store = tiled(&all);
        store.0.get_mut(&(0, 1)).unwrap().pop();
        assert!(matches!(
            append(&mut store, 300, &leaves(1)),
            Err(Error::LedgerDamaged { .. })
        ));
        assert!(matches!(
            Cached::new(&mut store).inclusion_proof(0, 300),
            Err(Error::LedgerDamaged { .. })
        ));
        assert_eq!(decode(&encode(&all[..3])).unwrap(), all[..3]);
        assert!(decode(&[0; 33]).is_none());
    }
}
