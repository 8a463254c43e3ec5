//! Finding and authenticating units (docs/REDEMPTION.md §Order of checks,
//! steps 3 to 8): each authenticated block kept, a bounded cache of opened
//! chunks, and a unit found, authenticated and played into what a
//! redemption answers and the ledger row it records.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::redemption::{OwnedKeys, Redemption};
use crate::block::authentic::{AuthenticBlock, OpenedChunk};
use crate::derive;
use crate::emission::Emission;
use crate::error::Error;
use crate::game::{Game, GameUnit, StopRefusal};
use crate::ledger::Entry;
use crate::merkle::{self, Hash, PerfectTree};
use crate::money::Cents;
use crate::record::PREFIX_SIZE;
use crate::store::Store;
use crate::unit_id::UnitId;
use crate::verify::check_unit_played;

/// Opened chunks kept (each about 4096 records and their leaf hashes).
pub const CHUNK_CACHE: usize = 64;

/// A block: game code, emission, block.
type BlockKey = (u16, u32, u32);

/// What the store lacks of a block asked for: the emission's folder or
/// the block's file (where it would be).
pub(crate) enum Missing {
    Emission(PathBuf),
    Block(PathBuf),
}

/// A unit found and authenticated, ready to record: the answer without
/// its ledger time, and the ledger row.
pub struct Authenticated {
    /// What the redemption answers (no `redeemed_at` yet).
    pub redemption: Redemption,
    pub(super) entry: Entry,
}

impl Authenticated {
    /// The unit's payload (its record after the prefix), as authenticated.
    #[must_use]
    pub fn payload(&self) -> &[u8] {
        self.entry.record.get(PREFIX_SIZE..).unwrap_or_default()
    }
}

/// An opened chunk and, when it is full (a power of two of records), its
/// tree's levels, so a unit's path inside it is a lookup.
pub(super) struct CachedChunk {
    pub(super) opened: OpenedChunk,
    tree: Option<PerfectTree>,
}

/// Recently opened chunks, oldest first out.
#[derive(Default)]
struct ChunkCache {
    chunks: HashMap<(BlockKey, u32), Arc<CachedChunk>>,
    order: VecDeque<(BlockKey, u32)>,
}

impl ChunkCache {
    fn get(&self, key: &(BlockKey, u32)) -> Option<Arc<CachedChunk>> {
        self.chunks.get(key).cloned()
    }

    fn put(&mut self, key: (BlockKey, u32), chunk: Arc<CachedChunk>) {
        if self.chunks.insert(key, chunk).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > CHUNK_CACHE {
            if let Some(old) = self.order.pop_front() {
                self.chunks.remove(&old);
            }
        }
    }
}

/// Finds and authenticates units (the ID, the block, the record and its
/// proof), keeping each authenticated block and the recent chunks. Shared
/// with the ledger writer, which vets a unit before its sale is recorded.
pub(crate) struct Units {
    pub(super) store: Store,
    pub(super) keys: OwnedKeys,
    blocks: Mutex<HashMap<BlockKey, Arc<AuthenticBlock>>>,
    chunks: Mutex<ChunkCache>,
}

/// Locks `m`, carrying on after a panic elsewhere (the data are caches).
pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Units {
    /// Finds and authenticates `store`'s units with `keys`.
    pub(super) fn new(store: Store, keys: OwnedKeys) -> Units {
        Units {
            store,
            keys,
            blocks: Mutex::new(HashMap::new()),
            chunks: Mutex::new(ChunkCache::default()),
        }
    }

    /// The block of `id`, authenticated once (steps 6 and 7).
    pub(super) fn block(
        &self,
        id: &UnitId,
        normalised: &str,
    ) -> Result<Arc<AuthenticBlock>, Error> {
        self.block_at(id.game, id.emission, id.block, |missing| match missing {
            Missing::Emission(path) => Error::UnknownEmission {
                id: normalised.to_string(),
                game: id.game.slug(),
                emission: id.emission,
                path,
            },
            Missing::Block(path) => Error::UnknownBlock {
                id: normalised.to_string(),
                emission: id.emission,
                block: id.block,
                path,
            },
        })
    }

    /// Block `block` of `game`'s emission `emission`, authenticated once
    /// and kept; `missing` says what the store lacks, in the asker's words.
    pub(crate) fn block_at(
        &self,
        game: Game,
        emission: u32,
        block: u32,
        missing: impl FnOnce(Missing) -> Error,
    ) -> Result<Arc<AuthenticBlock>, Error> {
        let key = (game.code(), emission, block);
        if let Some(b) = lock(&self.blocks).get(&key) {
            return Ok(Arc::clone(b));
        }
        let emission_dir = self.store.emission_dir(game, emission);
        if !emission_dir.is_dir() {
            return Err(missing(Missing::Emission(emission_dir)));
        }
        let path: PathBuf = self.store.block_path(game, emission, block);
        if !path.exists() {
            return Err(missing(Missing::Block(path)));
        }
        let authentic =
            AuthenticBlock::open(&path, &self.keys.public_key, self.keys.access(), "redeem")?;
        let h = &authentic.file.header;
        if (h.game, h.emission, h.block) != (game, emission, block) {
            return Err(Error::BlockRejected {
                path,
                reason: format!(
                    "the file holds {}, not the block asked for",
                    authentic.file.describe()
                ),
            });
        }
        let authentic = Arc::new(authentic);
        lock(&self.blocks).insert(key, Arc::clone(&authentic));
        Ok(authentic)
    }

    /// Chunk `chunk` of `block`, from the cache or opened and checked.
    pub(super) fn chunk(
        &self,
        key: BlockKey,
        block: &AuthenticBlock,
        chunk: u32,
    ) -> Result<Arc<CachedChunk>, Error> {
        if let Some(c) = lock(&self.chunks).get(&(key, chunk)) {
            return Ok(c);
        }
        let opened = block.chunk_records(chunk)?;
        let tree = PerfectTree::new(&opened.leaves);
        let opened = Arc::new(CachedChunk { opened, tree });
        lock(&self.chunks).put((key, chunk), Arc::clone(&opened));
        Ok(opened)
    }

    /// Steps 3 to 8 of docs/REDEMPTION.md §Order of checks: the unit `id`
    /// is found and authenticated, with its inclusion proof. Writes
    /// nothing, plays nothing.
    pub(crate) fn locate(&self, id: &UnitId) -> Result<Located, Error> {
        let normalised = id.to_string();
        let out_of_range = |units: u32| Error::IndexOutOfRange {
            id: normalised.clone(),
            index: id.index,
            last: units - 1,
        };
        if id.index >= id.game.max_units() {
            return Err(out_of_range(id.game.max_units()));
        }
        if let Some(secrets) = &self.keys.secrets {
            // An emission made from shares the store does not keep: the
            // check code is compared with the authenticated record instead.
            if let Some(seed) = secrets.block_seed(id.game, id.emission, id.block)? {
                if !same_code(&derive::check_code(&seed, id.index), &id.check_code) {
                    return Err(Error::CheckCodeMismatch { id: normalised });
                }
            }
        }
        // Checked on every request: an emission may be revealed while a
        // service runs.
        if Emission::new(&self.store, id.game, id.emission).is_revealed() {
            return Err(Error::EmissionRevealed {
                emission: id.emission,
            });
        }
        let block = self.block(id, &normalised)?;
        let h = &block.file.header;
        let reject = |reason: String| Error::BlockRejected {
            path: block.file.path().to_path_buf(),
            reason,
        };
        if id.index >= h.unit_count {
            return Err(out_of_range(h.unit_count));
        }
        let chunk = id.index / h.chunk_units;
        let in_chunk = (id.index % h.chunk_units) as usize;
        let cached = self.chunk((id.game.code(), id.emission, id.block), &block, chunk)?;
        let opened = &cached.opened;
        let size = usize::from(h.record_size);
        let record = &opened.records[in_chunk * size..(in_chunk + 1) * size];
        // Decoded once: the rule check, and then every question the sale,
        // the play or the redemption asks, go to this one decoded unit.
        let mut decoded = None;
        let prefix = check_unit_played(h, &block.regulation, id.index, record, |_, payload| {
            let unit = id.game.decode(payload)?;
            let played = unit.play_to_end()?;
            decoded = Some(unit);
            Ok(played)
        })
        .map_err(|(_, m)| reject(format!("unit {}: {m}", id.index)))?;
        let unit = decoded.ok_or_else(|| reject(format!("unit {}: not played", id.index)))?;
        if !same_code(&prefix.check_code, &id.check_code) {
            return Err(Error::CheckCodeMismatch { id: normalised });
        }
        let roots: Vec<Hash> = block.file.index.iter().map(|e| e.subtree_root).collect();
        // A full chunk's path is read from its kept tree; a partial (last)
        // chunk's is computed. Either way it is checked against the sealed
        // root below.
        let proof = match &cached.tree {
            Some(tree) => tree
                .path(in_chunk)
                .zip(merkle::inclusion_proof(&roots, chunk as usize))
                .map(|(mut inside, above)| {
                    inside.extend(above);
                    inside
                }),
            None => {
                merkle::chunked_inclusion_proof(&opened.leaves, in_chunk, &roots, chunk as usize)
            }
        }
        .ok_or_else(|| reject("no inclusion proof can be built for this unit".into()))?;
        if !merkle::verify_inclusion(
            &opened.leaves[in_chunk],
            u64::from(id.index),
            u64::from(h.unit_count),
            &proof,
            &h.merkle_root,
        ) {
            return Err(reject(
                "the unit's inclusion proof does not reach the sealed root".into(),
            ));
        }
        Ok(Located {
            id: *id,
            normalised,
            unit,
            record: record.to_vec(),
            proof,
            block: Arc::clone(&block),
        })
    }
}

/// A unit found and authenticated, not played yet.
pub(crate) struct Located {
    id: UnitId,
    normalised: String,
    /// The unit as its game decoded it, once, when it was authenticated.
    pub(crate) unit: Box<dyn GameUnit>,
    pub(super) record: Vec<u8>,
    proof: Vec<Hash>,
    pub(super) block: Arc<AuthenticBlock>,
}

impl Located {
    /// The error for a payload the block's own checks passed but the game
    /// cannot read.
    pub(crate) fn reject(&self, reason: impl std::fmt::Display) -> Error {
        Error::BlockRejected {
            path: self.block.file.path().to_path_buf(),
            reason: format!("unit {}: {reason}", self.id.index),
        }
    }

    /// The unit played with `stop` (`None`: to the end): its outcome, the
    /// answer and the ledger row to record.
    pub(crate) fn play(&self, stop: Option<u32>) -> Result<Authenticated, Error> {
        let id = &self.id;
        let h = &self.block.file.header;
        let played = self.unit.outcome(stop).map_err(|e| match e {
            StopRefusal::Refused(reason) => Error::BadStop {
                id: self.normalised.clone(),
                reason,
            },
            StopRefusal::Invalid(m) => self.reject(m),
        })?;
        let prize_cents = id
            .game
            .prize_cents(&played, &self.block.regulation)
            .ok_or_else(|| self.reject(format!("lot {} has no amount", played.lot)))?;
        let record = &self.record;
        let entry = Entry {
            game: id.game,
            emission: id.emission,
            block: id.block,
            index: id.index,
            unit_id: self.normalised.clone(),
            price_cents: h.price_cents,
            lot: played.lot,
            prize_cents,
            record_sha256: hex::encode(derive::sha256(record)),
            record: record.clone(),
            rules_version: h.rules_version,
            stopped_after_steps: stop,
        };
        let redemption = Redemption {
            id: self.normalised.clone(),
            game: id.game.slug().into(),
            emission: id.emission,
            block: id.block,
            index: id.index,
            lot: id.game.lot_name(played.lot),
            prize: Cents::from(prize_cents).to_string(),
            stopped_after_steps: stop,
            record: hex::encode(record),
            leaf_index: u64::from(id.index),
            tree_size: u64::from(h.unit_count),
            inclusion_proof: self.proof.iter().map(hex::encode).collect(),
            merkle_root: hex::encode(h.merkle_root),
            redeemed_at: None,
            already_redeemed_at: None,
            ledger_entry: None,
            receipt: None,
        };
        Ok(Authenticated { redemption, entry })
    }
}

/// Compares check codes without an early exit.
fn same_code(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
