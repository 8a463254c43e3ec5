//! A long-lived redeemer (docs/REDEMPTION.md §Redeemer): it keeps each
//! block it has authenticated (header, index, seal: checked once) and a
//! bounded cache of opened chunks, and splits a redemption in two steps:
//! [`Redeemer::authenticate`] (the ID, the block, the unit and its proof:
//! no write) and [`Redeemer::record`] (the ledger, through its one
//! group-committing writer). The command line and the service both redeem
//! through it.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod block_seal;
mod disclosure;
mod keyed;
mod operator;
mod picture;
mod receipts;
pub mod recover;
mod remaining;
mod sale;
mod window;
pub use block_seal::BlockSeal;
pub use disclosure::{Check, Disclosure, UnitInPlay};
pub use keyed::batch_parts;
pub use operator::Acted;
pub use picture::PictureAsk;
pub use receipts::{EntryReceipt, UnitReceipts};
pub use remaining::{
    BlockRemaining, BlockRevealed, EmissionRemaining, EmissionRevealed, PrizeLine, Remaining,
    RevealedLine, RevealedPrizes, TopLots,
};
use sale::probe;
pub use sale::{FirstShown, Marked, PlayView, Sale};
pub use window::{Asker, Window};

use ed25519_dalek::VerifyingKey;
use rayon::prelude::*;

use crate::binding::Bindings;
use crate::block::authentic::{AuthenticBlock, OpenedChunk};
use crate::derive;
use crate::emission::Emission;
use crate::error::Error;
use crate::game::{Game, GameUnit, StopRefusal};
use crate::ledger::ops::{Done, Op, PlayRow, UnitRef};
use crate::ledger::published::Publication;
use crate::ledger::target::LedgerTarget;
use crate::ledger::writer::GroupCommit;
use crate::ledger::{Committed, Entry, BUSY_TIMEOUT};
use crate::merkle::{self, Hash, PerfectTree};
use crate::money::Cents;
use crate::record::PREFIX_SIZE;
use crate::redeem::{OwnedKeys, Redemption};
use crate::store::Store;
use crate::unit_id::UnitId;
use crate::verify::check_unit_played;
use keyed::KeyedRequest;

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
    entry: Entry,
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
struct CachedChunk {
    opened: OpenedChunk,
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
    store: Store,
    keys: OwnedKeys,
    blocks: Mutex<HashMap<BlockKey, Arc<AuthenticBlock>>>,
    chunks: Mutex<ChunkCache>,
}

/// Redeems units of one store with one set of keys, for as long as it
/// lives (a command, a service).
pub struct Redeemer {
    units: Arc<Units>,
    /// Which ledger each emission written about is sold through.
    bindings: Bindings,
    writer: Mutex<Option<Arc<GroupCommit>>>,
    /// How long a caller waits for a write's outcome
    /// ([`crate::ledger::writer::ANSWER_DEADLINE`] unless set).
    answer_within: Duration,
    /// The head this store remembers of the ledger, once its identity was
    /// read (recover.rs).
    head_memory: std::sync::OnceLock<Arc<crate::ledger::remembered::HeadMemory>>,
    busy: Duration,
    ledger: LedgerTarget,
    /// The head receipts are made against.
    publication: Publication,
}

/// Locks `m`, carrying on after a panic elsewhere (the data are caches).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Redeemer {
    /// A redeemer of `store`'s units with `keys`. The ledger is opened on
    /// the first redemption.
    #[must_use]
    pub fn new(store: Store, keys: OwnedKeys) -> Redeemer {
        let ledger = LedgerTarget::of_store(&store);
        Redeemer {
            writer: Mutex::new(None),
            answer_within: crate::ledger::writer::ANSWER_DEADLINE,
            head_memory: std::sync::OnceLock::new(),
            busy: BUSY_TIMEOUT,
            bindings: Bindings::new(&store, &ledger),
            ledger,
            publication: Publication::Latest,
            units: Arc::new(Units {
                store,
                keys,
                blocks: Mutex::new(HashMap::new()),
                chunks: Mutex::new(ChunkCache::default()),
            }),
        }
    }

    /// Records into `ledger` (default: the store's own SQLite ledger).
    #[must_use]
    pub fn with_ledger(mut self, ledger: LedgerTarget) -> Redeemer {
        self.bindings = Bindings::new(&self.units.store, &ledger);
        self.ledger = ledger;
        self.head_memory = std::sync::OnceLock::new();
        self
    }

    /// Answers a write `ledger_outcome_unknown` once `within` has passed
    /// without its outcome (a service's bound, shorter than a platform's
    /// timeout; docs/API.md §Retries).
    #[must_use]
    pub fn with_answer_deadline(mut self, within: Duration) -> Redeemer {
        self.answer_within = within;
        self
    }

    /// Waits at most `busy` for another process's lock on the ledger before
    /// answering "unavailable" (default: a minute, as a command waits).
    #[must_use]
    pub fn with_busy_timeout(mut self, busy: Duration) -> Redeemer {
        self.busy = busy;
        self
    }

    /// Makes receipts against `publication`'s head (a node whose
    /// witnessing fails closed: the latest witnessed one).
    #[must_use]
    pub fn with_publication(mut self, publication: Publication) -> Redeemer {
        self.publication = publication;
        self
    }

    /// The head it publishes and makes receipts against.
    #[must_use]
    pub fn publication(&self) -> Publication {
        self.publication
    }

    /// The ledger it records into.
    #[must_use]
    pub fn ledger(&self) -> &LedgerTarget {
        &self.ledger
    }

    /// The store.
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.units.store
    }

    /// The issuer's public key it checks every seal with.
    #[must_use]
    pub fn public_key(&self) -> &VerifyingKey {
        &self.units.keys.public_key
    }

    /// Redeems `id`: authenticates it, then records it; returns once the
    /// redemption is durable. A unit played step by step is paid as the
    /// ledger recorded its play; a `stop` given must be that one.
    pub fn redeem(&self, id: &UnitId, stop: Option<u32>) -> Result<Redemption, Error> {
        self.redeem_keyed(id, stop, None)
    }

    /// [`Redeemer::redeem`] under an idempotency key: the same key again
    /// answers the same redemption (docs/API.md §Idempotency).
    pub fn redeem_keyed(
        &self,
        id: &UnitId,
        stop: Option<u32>,
        key: Option<&str>,
    ) -> Result<Redemption, Error> {
        self.redeem_as(&Asker::Operator, id, stop, key)
    }

    /// [`Redeemer::redeem_keyed`] for `asker`: a platform's own units only.
    fn redeem_as(
        &self,
        asker: &Asker,
        id: &UnitId,
        stop: Option<u32>,
        key: Option<&str>,
    ) -> Result<Redemption, Error> {
        let stop_text = stop.map(|s| s.to_string()).unwrap_or_default();
        let key = key
            .map(|k| KeyedRequest::new(asker.lane(), k, &["redeem", &id.to_string(), &stop_text]))
            .transpose()?;
        let unit = self.to_redeem(asker, id, stop)?;
        self.record_keyed(asker, vec![(unit, key)])
            .pop()
            .unwrap_or_else(|| {
                Err(Error::Internal {
                    what: "the ledger writer gave no outcome".into(),
                })
            })
    }

    /// A batch under idempotency key `key`, whose request is `request`
    /// ([`keyed::batch_parts`] of its lines as given): unit `i` of `units`
    /// is kept under `KEY#i`. The same key with another batch is refused
    /// whole.
    pub fn redeem_batch_keyed(
        &self,
        units: &[(UnitId, Option<u32>)],
        key: &str,
        request: &str,
    ) -> Result<Vec<Result<Redemption, Error>>, Error> {
        self.redeem_batch_as(&Asker::Operator, units, key, request)
    }

    /// [`Redeemer::redeem_batch_keyed`] for `asker`. The key's earlier
    /// batch is read here to refuse a reuse at once; the ledger checks it
    /// again in each unit's transaction, where it holds.
    fn redeem_batch_as(
        &self,
        asker: &Asker,
        units: &[(UnitId, Option<u32>)],
        key: &str,
        request: &str,
    ) -> Result<Vec<Result<Redemption, Error>>, Error> {
        let batch = KeyedRequest::new(asker.lane(), key, &["batch", request])?;
        let earlier = self
            .ledger
            .read(self.busy, |tx| tx.kept_batch(batch.key()))?
            .flatten();
        if earlier.is_some_and(|r| r != batch.request_hex()) {
            return Err(Error::IdempotencyKeyReused {
                key: key.to_string(),
                first: "batch".into(),
            });
        }
        let keys: Vec<_> = (0..units.len())
            .map(|i| Some(batch.unit_of_batch(i)))
            .collect();
        Ok(self.redeem_many_keyed(asker, units, &keys))
    }

    /// Redeems each of `units` independently; those that authenticate are
    /// recorded together (one commit when they fit one batch).
    pub fn redeem_many(&self, units: &[(UnitId, Option<u32>)]) -> Vec<Result<Redemption, Error>> {
        self.redeem_many_keyed(&Asker::Operator, units, &[])
    }

    /// [`Redeemer::redeem_many`] for `asker`, unit `i` under key `keys[i]`
    /// when given.
    fn redeem_many_keyed(
        &self,
        asker: &Asker,
        units: &[(UnitId, Option<u32>)],
        keys: &[Option<KeyedRequest>],
    ) -> Vec<Result<Redemption, Error>> {
        let authenticated: Vec<_> = units
            .par_iter()
            .map(|(id, stop)| self.to_redeem(asker, id, *stop))
            .collect();
        let mut outcomes: Vec<Option<Result<Redemption, Error>>> = Vec::with_capacity(units.len());
        let mut ready = Vec::new();
        let mut places = Vec::new();
        for (i, unit) in authenticated.into_iter().enumerate() {
            match unit {
                Ok(unit) => {
                    ready.push((unit, keys.get(i).cloned().flatten()));
                    places.push(i);
                    outcomes.push(None);
                }
                Err(e) => outcomes.push(Some(Err(e))),
            }
        }
        for (i, outcome) in places.into_iter().zip(self.record_keyed(asker, ready)) {
            outcomes[i] = Some(outcome);
        }
        outcomes
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| {
                    Err(Error::Internal {
                        what: "a unit of the batch got no outcome".into(),
                    })
                })
            })
            .collect()
    }

    /// A unit authenticated and played as it is paid (§What an answer
    /// shows): a unit whose play is not over is played to its end whatever
    /// the stop asked, so that the ledger's refusal (`not_sold`,
    /// `play_unfinished`) is the same for every stop and tells nothing of
    /// the rolls to come.
    /// A platform's unit of another lane is refused as unknown first,
    /// before anything of it is read.
    fn to_redeem(
        &self,
        asker: &Asker,
        id: &UnitId,
        asked: Option<u32>,
    ) -> Result<Authenticated, Error> {
        self.vouch(asker, id)?;
        let located = self.units.locate(id)?;
        let stop = match self.disclosure(id)? {
            Disclosure::Whole { stop } => disclosure::paid_stop(id, asked, stop)?,
            Disclosure::Partial { .. } => None,
        };
        located.play(stop)
    }

    /// What redeeming `id` would give, and whether it was redeemed already;
    /// records nothing and creates no ledger. A unit whose play is not over
    /// answers only what its player was shown ([`Check::InPlay`]); once it
    /// is over, what its redemption pays (the recorded play), and a `stop`
    /// given must be the recorded one.
    pub fn check(&self, id: &UnitId, stop: Option<u32>) -> Result<Check, Error> {
        let located = self.units.locate(id)?;
        match self.disclosure(id)? {
            Disclosure::Partial { sold, rolls } => {
                if stop.is_some() {
                    return Err(disclosure::unfinished(id, sold, rolls));
                }
                Ok(Check::InPlay(self.in_play(id, &located, sold, rolls)?))
            }
            Disclosure::Whole { stop: recorded } => {
                let stop = disclosure::paid_stop(id, stop, recorded)?;
                let mut r = located.play(stop)?.redemption;
                // A check creates nothing: no ledger yet means not redeemed yet.
                let earlier =
                    self.ledger
                        .lookup(id.game, id.emission, id.block, id.index, self.busy)?;
                // Its log entry too, once sequenced (`sequenced: false`
                // until then).
                r.ledger_entry = earlier.as_ref().map(Committed::recorded);
                r.already_redeemed_at = earlier.map(|e| e.redeemed_at);
                Ok(Check::Whole(r))
            }
        }
    }

    /// The whole unit `id` played with `stop`, whatever its play: an
    /// operator's or auditor's replay with the keys (`show --reveal-all`),
    /// never a platform's answer. Reads no ledger, records nothing.
    pub fn replay(&self, id: &UnitId, stop: Option<u32>) -> Result<Redemption, Error> {
        Ok(self.units.locate(id)?.play(stop)?.redemption)
    }

    /// What of `id` an answer may show now ([`Disclosure`]): read from the
    /// ledger for a unit played step by step.
    pub fn disclosure(&self, id: &UnitId) -> Result<Disclosure, Error> {
        if !id.game.step_by_step() {
            return Ok(Disclosure::Whole { stop: None });
        }
        let (sold, play) = self.sale_and_play(id)?;
        Ok(Disclosure::of(sold, play.as_ref()))
    }

    /// Whether `id` is sold and its play, from one snapshot of the ledger
    /// (not sold, no play: no ledger yet).
    fn sale_and_play(&self, id: &UnitId) -> Result<(bool, Option<PlayRow>), Error> {
        let p = UnitRef::of(id).place();
        let read = self.ledger.read(self.busy, |tx| {
            let play = tx.play(p)?;
            let sold = play.is_some() || tx.sale(p)?.is_some();
            Ok((sold, play))
        })?;
        Ok(read.unwrap_or((false, None)))
    }

    /// Records authenticated units, each at most once; returns when they
    /// are durable. One outcome per unit, in order.
    pub fn record(&self, units: Vec<Authenticated>) -> Vec<Result<Redemption, Error>> {
        self.record_keyed(
            &Asker::Operator,
            units.into_iter().map(|u| (u, None)).collect(),
        )
    }

    /// [`Redeemer::record`] for `asker`, each unit under its key when
    /// given.
    fn record_keyed(
        &self,
        asker: &Asker,
        units: Vec<(Authenticated, Option<KeyedRequest>)>,
    ) -> Vec<Result<Redemption, Error>> {
        let (answers, ops): (Vec<_>, Vec<_>) = units
            .into_iter()
            .map(|(u, key)| (u.redemption, asker.op(key, Op::Redeem(u.entry))))
            .unzip();
        answers
            .into_iter()
            .zip(self.submit(ops))
            .map(|(r, outcome)| match outcome? {
                Done::Redeemed(committed) => Ok(redeemed(r, committed)),
                _ => Err(Error::Internal {
                    what: "the ledger answered a redemption with another operation".into(),
                }),
            })
            .collect()
    }

    /// Applies `ops` through the ledger writer: one outcome per operation,
    /// in order. An operation about an emission sold through another
    /// ledger is refused ([`Bindings`]) and the others go on.
    pub(crate) fn submit(&self, ops: Vec<Op>) -> Vec<Result<Done, Error>> {
        let mut outcomes = Vec::with_capacity(ops.len());
        let mut passing = Vec::new();
        for op in ops {
            match self.bindings.check_ops(std::slice::from_ref(&op)) {
                Ok(()) => {
                    outcomes.push(None);
                    passing.push(op);
                }
                Err(e) => outcomes.push(Some(Err(e))),
            }
        }
        let applied = match passing.len() {
            0 => Vec::new(),
            n => match self.writer() {
                Ok(writer) => writer.apply(passing),
                Err(e) => {
                    let path = PathBuf::from(self.ledger.describe());
                    let mut errors: Vec<_> = (1..n)
                        .map(|_| Err(crate::ledger::writer::for_each_caller(&e, path.clone())))
                        .collect();
                    errors.insert(0, Err(e));
                    errors
                }
            },
        };
        let mut applied = applied.into_iter();
        outcomes
            .into_iter()
            .map(|outcome| {
                outcome.unwrap_or_else(|| {
                    applied.next().unwrap_or_else(|| {
                        Err(Error::Internal {
                            what: "the ledger writer gave fewer outcomes than operations".into(),
                        })
                    })
                })
            })
            .collect()
    }

    /// The ledger writer, started on first use.
    /// Opens the ledger's write path now rather than at the first write
    /// (a node at start): a ledger key that is not the log's, or a log
    /// that does not extend the remembered head, is said at once.
    pub fn open_writer(&self) -> Result<(), Error> {
        self.writer().map(drop)
    }

    fn writer(&self) -> Result<Arc<GroupCommit>, Error> {
        let mut slot = lock(&self.writer);
        if let Some(w) = slot.as_ref() {
            return Ok(Arc::clone(w));
        }
        let w = Arc::new(self.ledger.writer_within(
            &self.units.store,
            self.busy,
            self.answer_within,
        )?);
        *slot = Some(Arc::clone(&w));
        Ok(w)
    }
}

/// A redemption recorded as `committed`.
fn redeemed(mut r: Redemption, committed: Committed) -> Redemption {
    r.redeemed_at = Some(committed.redeemed_at.clone());
    r.ledger_entry = Some(committed);
    r
}

impl Units {
    /// The block of `id`, authenticated once (steps 6 and 7).
    fn block(&self, id: &UnitId, normalised: &str) -> Result<Arc<AuthenticBlock>, Error> {
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
    fn chunk(
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
    record: Vec<u8>,
    proof: Vec<Hash>,
    block: Arc<AuthenticBlock>,
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
            stopped_after_rolls: stop,
        };
        let redemption = Redemption {
            id: self.normalised.clone(),
            game: id.game.slug().into(),
            emission: id.emission,
            block: id.block,
            index: id.index,
            lot: id.game.lot_name(played.lot),
            prize: Cents::from(prize_cents).to_string(),
            stopped_after_rolls: stop,
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
