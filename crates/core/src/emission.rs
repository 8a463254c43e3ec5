//! Emissions (article 2): numbered blocks generated into the store, the
//! signed manifest that commits to them before sale, closing, and the
//! reveal of their seeds afterwards (docs/EMISSIONS.md).

use std::path::{Path, PathBuf};

use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};

use crate::block::build::{self, BlockSpec};
use crate::block::reader::BlockFile;
use crate::block::writer;
use crate::block::BlockSummary;
use crate::error::Error;
use crate::fsutil;
use crate::game::Game;
use crate::money::Cents;
use crate::seal;
use crate::shares::{Contributions, GivenShares, SeedShares};
use crate::store::{Secrets, Store};
use crate::verify::file_sha256;

pub use crate::block_choice::BlockChoice;
use crate::manifest::MANIFEST_KIND;
pub use crate::manifest::{claims_deadline, manifest_game, Manifest, ManifestBlock};
use crate::reveal::REVEAL_KIND;
pub use crate::reveal::{Reveal, RevealedSeed};

/// A generation in progress, saved so an interrupted run can be finished
/// by running the same command again.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Pending {
    game: String,
    price_cents: u32,
    first_block: u32,
    count: u32,
    explicit: bool,
    /// Made by `--until-block`: the plan ends at `first_block + count - 1`.
    #[serde(default)]
    until: bool,
    /// Units per block; absent in plans written before it was recorded
    /// (then the game's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    units: Option<u32>,
}

impl Pending {
    fn last_block(&self) -> u32 {
        self.first_block + self.count.saturating_sub(1)
    }
}

/// How many times a reader reads a manifest and its signature that do not
/// match before it reports the signature as failed, 10, 20, 40 and 80 ms
/// apart ([`Emission::read_signed_manifest`]).
const MANIFEST_READS: u32 = 5;

/// How long `Emission::lock` waits for a lock held elsewhere.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// A manifest's bytes as read with its signature.
pub struct SignedManifest {
    /// The file they were read from (`manifest.json`, or `.next` during a
    /// save).
    pub path: PathBuf,
    /// Its bytes as read.
    pub bytes: Vec<u8>,
    /// The signature read with them is the trusted key's signature of them.
    pub signed: bool,
}

impl SignedManifest {
    fn new(path: PathBuf, bytes: Vec<u8>, signed: bool) -> SignedManifest {
        SignedManifest {
            path,
            bytes,
            signed,
        }
    }
}

/// An emission's exclusive lock, held by `generate`, `close` and `reveal`
/// for their whole run (released when dropped, or when the process dies).
pub struct EmissionLock {
    _dir: std::fs::File,
}

/// A block made (or found already made) by `generate`.
#[derive(Clone, Debug, Serialize)]
pub struct GeneratedBlock {
    /// The block.
    #[serde(flatten)]
    pub summary: BlockSummary,
    /// False when an interrupted run had already sealed it.
    #[serde(skip)]
    pub fresh: bool,
}

impl From<&GeneratedBlock> for ManifestBlock {
    fn from(g: &GeneratedBlock) -> ManifestBlock {
        let g = &g.summary;
        ManifestBlock {
            block: g.block,
            price: g.price.clone(),
            units: g.units,
            merkle_root: g.merkle_root.clone(),
            file_sha256: g.file_sha256.clone(),
            seed_commitment: g.seed_commitment.clone(),
            file: Path::new(&g.path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }
}

/// An emission in a store.
pub struct Emission<'s> {
    store: &'s Store,
    /// Its game.
    pub game: Game,
    /// Its number.
    pub number: u32,
    /// Units per block of the blocks `generate` makes.
    units: u32,
    /// The shares handed over, for an emission made from shares.
    given: Option<GivenShares>,
}

impl<'s> Emission<'s> {
    /// Emission `number` of `game` in `store`.
    pub fn new(store: &'s Store, game: Game, number: u32) -> Emission<'s> {
        Emission {
            store,
            game,
            number,
            units: game.block_units(),
            given: None,
        }
    }

    /// The same emission, given its parties' shares (and its beacon
    /// round's value): what `generate` of an emission made from shares
    /// needs, and what `reveal` publishes when the store does not keep
    /// them. Each is checked against the manifest's commitments.
    pub fn with_shares(self, given: GivenShares) -> Emission<'s> {
        Emission {
            given: Some(given),
            ..self
        }
    }

    /// The same emission, whose new blocks hold `units` units (a drawn
    /// game only: a fixed-table game's blocks hold exactly its table).
    pub fn with_units(self, units: u32) -> Result<Emission<'s>, Error> {
        let game = self.game;
        if game.is_test_size(units) {
            return Err(Error::FixedBlockSize {
                game: game.slug(),
                units,
                required: game.block_units(),
            });
        }
        if units == 0 || units > game.max_units() {
            return Err(Error::BlockUnits {
                game: game.slug(),
                units,
                max: game.max_units(),
            });
        }
        Ok(Emission { units, ..self })
    }

    /// Its folder.
    pub fn dir(&self) -> PathBuf {
        self.store.emission_dir(self.game, self.number)
    }

    /// The manifest file.
    pub fn manifest_path(&self) -> PathBuf {
        self.dir().join("manifest.json")
    }

    /// The manifest's detached signature (64 raw bytes, Ed25519).
    pub fn signature_path(&self) -> PathBuf {
        self.dir().join("manifest.json.sig")
    }

    /// A manifest being saved, until its signature and it are both in place.
    fn next_manifest_path(&self) -> PathBuf {
        self.dir().join("manifest.json.next")
    }

    fn pending_path(&self) -> PathBuf {
        self.dir().join("pending.json")
    }

    /// Where `reveal` records that the seeds are out.
    pub fn revealed_marker(&self) -> PathBuf {
        self.dir().join("revealed")
    }

    /// Reads the manifest and checks its signature; `None` if the emission
    /// has none yet.
    /// It reads only: an interrupted save is completed by `recover`, which
    /// the writing commands run first.
    pub fn load_manifest(&self, trusted: &VerifyingKey) -> Result<Option<Manifest>, Error> {
        match self.read_signed_manifest(trusted)? {
            None => Ok(None),
            Some(read) if read.signed => Manifest::parse(&read.path, &read.bytes).map(Some),
            Some(read) => Err(bad_signature(read.path, &self.signature_path())),
        }
    }

    /// Reads the manifest and its signature as one unit, though
    /// `save_manifest` replaces them one after the other; `None` if the
    /// emission has no manifest yet.
    ///
    /// A save of manifest N signed T over manifest M signed S goes: (w1)
    /// `.next` = N, (w2) signature = T, (w3) `manifest.json` = N, (w4) `.next`
    /// removed, each step atomic. A read takes (r1) `manifest.json`, then (r2)
    /// the signature, then, if they do not match, (r3) `.next`:
    /// - r2 before w2: M and S, which match.
    /// - r1 after w3: N, and r2 (later still) T, which match.
    /// - r1 before w3, r2 after w2: M and T, torn. Then r3 is after w2: before
    ///   w4 it reads N, which T signs: the manifest being put in place (what
    ///   `recover` completes after a crash), taken. After w4 `.next` is gone
    ///   (or is a later save's, which T does not sign) and `manifest.json` is
    ///   N already: the pair is read again.
    ///
    /// Only a save tearing every one of `MANIFEST_READS` reads in a row (each
    /// a few microseconds, against a save's fsyncs, and further apart each
    /// time) makes a sound pair look unsigned; a pair that never matches is reported unsigned (`signed` is
    /// false, the bytes of `manifest.json` as last read).
    pub fn read_signed_manifest(
        &self,
        trusted: &VerifyingKey,
    ) -> Result<Option<SignedManifest>, Error> {
        let path = self.manifest_path();
        let mut attempt = 1;
        loop {
            let Some(bytes) = fsutil::read_small_if_exists(&path, fsutil::MANIFEST_LIMIT)? else {
                return Ok(None);
            };
            let signature = self.read_signature()?;
            let signs = |bytes: &[u8]| signature.is_some_and(|s| seal::verify(trusted, bytes, &s));
            if signs(&bytes) {
                return Ok(Some(SignedManifest::new(path, bytes, true)));
            }
            let next_path = self.next_manifest_path();
            if let Some(next) = fsutil::read_small_if_exists(&next_path, fsutil::MANIFEST_LIMIT)? {
                if signs(&next) {
                    return Ok(Some(SignedManifest::new(next_path, next, true)));
                }
            }
            if attempt == MANIFEST_READS {
                return Ok(Some(SignedManifest::new(path, bytes, false)));
            }
            // 10, 20, 40, 80 ms: a save in progress moves on meanwhile.
            std::thread::sleep(std::time::Duration::from_millis(5 << attempt));
            attempt += 1;
        }
    }

    /// `manifest.json.sig` as 64 bytes; `None` if absent or of another size.
    fn read_signature(&self) -> Result<Option<[u8; 64]>, Error> {
        let sig = fsutil::read_small_if_exists(&self.signature_path(), fsutil::SIGNATURE_LIMIT)
            .or_else(|e| match e {
                Error::FileTooLarge { .. } => Ok(None),
                e => Err(e),
            })?;
        Ok(sig.and_then(|s| <[u8; 64]>::try_from(s.as_slice()).ok()))
    }

    /// True when `manifest.json.sig` is the issuer's signature of `bytes`.
    fn signature_verifies(&self, trusted: &VerifyingKey, bytes: &[u8]) -> Result<bool, Error> {
        Ok(self
            .read_signature()?
            .is_some_and(|s| seal::verify(trusted, bytes, &s)))
    }

    /// Takes the emission's exclusive lock, or refuses if another command
    /// holds it for `LOCK_PATIENCE`. The lock is on the emission folder
    /// itself (flock), so it leaves no file behind and dies with its process.
    ///
    /// It waits a moment before refusing because a flock is held by every
    /// copy of the descriptor: a process that spawns a program (another
    /// thread's `Command`) briefly copies all its descriptors into the child,
    /// until the child's `exec` closes them, so the lock a command has just
    /// released can still be held for a few milliseconds. Another `generate`,
    /// `close` or `reveal` holds it for far longer and is still refused.
    pub fn lock(&self) -> Result<EmissionLock, Error> {
        let dir = self.dir();
        let started = std::time::Instant::now();
        loop {
            let file = std::fs::File::open(&dir).map_err(|e| Error::io(&dir, e))?;
            match file.try_lock() {
                Ok(()) => return Ok(EmissionLock { _dir: file }),
                Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_PATIENCE => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Error::EmissionBusy {
                        emission: self.number,
                        lock: dir,
                    })
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&dir, e)),
            }
        }
    }

    /// The lock of an emission that must already exist.
    fn lock_existing(&self) -> Result<EmissionLock, Error> {
        if !self.dir().is_dir() {
            return Err(self.no_such_emission());
        }
        self.lock()
    }

    /// Clears what a killed run left (under the lock, before anything else):
    /// `.partial` files are removed, and an interrupted manifest save is
    /// completed (its `.next` copy is signed) or dropped (it is not: the
    /// signed manifest in place is the current one). Afterwards no
    /// `manifest.json.next` is left, whatever the kill interrupted.
    fn recover(&self, trusted: &VerifyingKey) -> Result<(), Error> {
        fsutil::clean_partials(&self.dir())?;
        let next_path = self.next_manifest_path();
        let Some(next) = fsutil::read_small_if_exists(&next_path, fsutil::MANIFEST_LIMIT)? else {
            return Ok(());
        };
        let path = self.manifest_path();
        let current = fsutil::read_small_if_exists(&path, fsutil::MANIFEST_LIMIT)?;
        let current_signed = match &current {
            Some(bytes) => self.signature_verifies(trusted, bytes)?,
            None => false,
        };
        if !current_signed && self.signature_verifies(trusted, &next)? {
            fsutil::write_atomic(&path, &next, 0o644, true)?;
        }
        std::fs::remove_file(&next_path).map_err(|e| Error::io(&next_path, e))?;
        fsutil::sync_dir(&self.dir())
    }

    /// The manifest for a writing command, checked against the store's
    /// master secret: an emission begun with another one is refused.
    fn load_checked(&self, secrets: &Secrets) -> Result<Option<Manifest>, Error> {
        let Some(manifest) = self.load_manifest(&secrets.signing.verifying_key())? else {
            return Ok(None);
        };
        let game = manifest_game(&manifest, &self.manifest_path())?;
        let same_master = match &manifest.master_commitment {
            Some(c) => *c == hex::encode(secrets.master_commitment(game, self.number)),
            // Written before the commitment existed: its first block's seed
            // commitment binds the master secret just as well.
            None => manifest.blocks.first().is_none_or(|b| {
                let seed = crate::derive::block_seed(secrets.master(), game, self.number, b.block);
                b.seed_commitment == hex::encode(crate::derive::seed_commitment(&seed))
            }),
        };
        if !same_master {
            return Err(Error::MasterSecretMismatch {
                emission: self.number,
                manifest: self.manifest_path(),
                master: self.store.master_path(),
            });
        }
        Ok(Some(manifest))
    }

    fn no_such_emission(&self) -> Error {
        Error::NoSuchEmission {
            emission: self.number,
            store: self.store.root().to_path_buf(),
        }
    }

    /// A manifest for this emission, with no block yet.
    fn new_manifest(&self, secrets: &Secrets) -> Manifest {
        Manifest {
            kind: MANIFEST_KIND.into(),
            version: 1,
            game: self.game.slug().into(),
            emission: self.number,
            closed: false,
            issuer_public_key: hex::encode(secrets.signing.verifying_key().to_bytes()),
            master_commitment: Some(hex::encode(
                secrets.master_commitment(self.game, self.number),
            )),
            seed_shares: None,
            claims_until: None,
            blocks: Vec::new(),
        }
    }

    pub(crate) fn save_manifest(
        &self,
        manifest: &mut Manifest,
        secrets: &Secrets,
    ) -> Result<(), Error> {
        let game = manifest_game(manifest, &self.manifest_path())?;
        manifest.master_commitment =
            Some(hex::encode(secrets.master_commitment(game, self.number)));
        manifest.version = manifest.format_version();
        let mut bytes = serde_json::to_vec_pretty(manifest).expect("a manifest serialises");
        bytes.push(b'\n');
        let signature = seal::sign(&secrets.signing, &bytes);
        // New manifest aside, then its signature, then the manifest: a crash
        // at any point leaves either the old signed pair or a signature that
        // the `.next` file matches, which `recover` completes.
        let next_path = self.next_manifest_path();
        fsutil::write_atomic(&next_path, &bytes, 0o644, true)?;
        fsutil::write_atomic(&self.signature_path(), &signature, 0o644, true)?;
        fsutil::write_atomic(&self.manifest_path(), &bytes, 0o644, true)?;
        std::fs::remove_file(&next_path).map_err(|e| Error::io(&next_path, e))
    }

    /// Generates blocks (docs/EMISSIONS.md §Generation). Blocks already
    /// sealed by an interrupted run of the same command are kept.
    pub fn generate(
        &self,
        secrets: &Secrets,
        price_cents: u32,
        choice: BlockChoice,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<GeneratedBlock>, Error> {
        let game = self.game;
        game.check_price(price_cents)?;
        if self.given.is_some() && !self.dir().is_dir() {
            // Refused before the emission's folder is made.
            return Err(Error::NoShareCommitments {
                emission: self.number,
            });
        }
        if !self.dir().is_dir() {
            self.store.check_emission_number_free(game, self.number)?;
        }
        let trusted = secrets.signing.verifying_key();
        std::fs::create_dir_all(self.dir()).map_err(|e| Error::io(&self.dir(), e))?;
        let _lock = self.lock()?;
        self.recover(&trusted)?;
        let mut manifest = self
            .load_checked(secrets)?
            .unwrap_or_else(|| self.new_manifest(secrets));
        if manifest.game != game.slug() {
            return Err(Error::EmissionOfAnotherGame {
                emission: self.number,
                found: manifest.game,
                asked: game.slug(),
            });
        }
        if manifest.closed {
            return Err(Error::EmissionClosed {
                emission: self.number,
            });
        }
        // Every share is checked before anything is written.
        let contributions = self.contributions(&manifest, true)?;
        let Some(pending) = self.plan(&manifest, game, price_cents, choice)? else {
            // `--until-block` with every block there: report them, make none.
            return match choice {
                BlockChoice::Until(last) => {
                    (1..=last).map(|b| self.kept_block(&manifest, b)).collect()
                }
                _ => Ok(Vec::new()),
            };
        };
        if let Some(c) = &contributions {
            self.keep(&mut manifest, c, secrets)?;
        }
        let seed_key = seed_key(secrets, game, self.number, contributions.as_ref());
        let mut done = Vec::new();
        if pending.until {
            for block in 1..pending.first_block {
                done.push(self.kept_block(&manifest, block)?);
            }
        }
        for block in pending.first_block..=pending.last_block() {
            if pending.until && manifest.blocks.iter().any(|b| b.block == block) {
                done.push(self.kept_block(&manifest, block)?);
                continue;
            }
            let spec = BlockSpec {
                game,
                emission: self.number,
                block,
                price_cents,
                units: pending.units.unwrap_or(self.units),
            };
            let generated = self.generate_block(secrets, spec, &seed_key, &manifest, progress)?;
            if !manifest.blocks.iter().any(|b| b.block == block) {
                manifest.blocks.push(ManifestBlock::from(&generated));
                manifest.blocks.sort_by_key(|b| b.block);
                self.save_manifest(&mut manifest, secrets)?;
            }
            done.push(generated);
        }
        let pending_path = self.pending_path();
        std::fs::remove_file(&pending_path).map_err(|e| Error::io(&pending_path, e))?;
        Ok(done)
    }

    /// The blocks this command is to make: a saved unfinished plan of the
    /// same command, or a new one numbered on from the last block. `None`
    /// when `--until-block` finds nothing lacking.
    fn plan(
        &self,
        manifest: &Manifest,
        game: Game,
        price_cents: u32,
        choice: BlockChoice,
    ) -> Result<Option<Pending>, Error> {
        let path = self.pending_path();
        let last = manifest.blocks.iter().map(|b| b.block).max().unwrap_or(0);
        let listed = |b: u32| manifest.blocks.iter().any(|m| m.block == b);
        let plan = |first_block, count, explicit, until| Pending {
            game: game.slug().into(),
            price_cents,
            first_block,
            count,
            explicit,
            until,
            units: Some(self.units),
        };
        let wanted = match choice {
            BlockChoice::Number(b) | BlockChoice::LeavingGap(b) => plan(b, 1, true, false),
            BlockChoice::Count(n) => plan(last + 1, n, false, false),
            BlockChoice::Until(m) => {
                let first = (1..=m).find(|b| !listed(*b)).unwrap_or(m + 1);
                plan(first, (m + 1).saturating_sub(first), false, true)
            }
        };
        if let Some(saved) = self.saved_plan()? {
            let same_kind = saved.game == wanted.game
                && saved.price_cents == wanted.price_cents
                && saved.units.unwrap_or(game.block_units()) == self.units;
            let same = match choice {
                // Finishing any plan that ends at the same block gives the
                // same emission.
                BlockChoice::Until(m) => same_kind && saved.last_block() == m,
                _ => {
                    same_kind
                        && !saved.until
                        && saved.count == wanted.count
                        && saved.explicit == wanted.explicit
                        && (!saved.explicit || saved.first_block == wanted.first_block)
                }
            };
            if same {
                return Ok(Some(saved));
            }
            return Err(self.unfinished(&saved));
        }
        match choice {
            BlockChoice::Number(0) | BlockChoice::LeavingGap(0) | BlockChoice::Until(0) => {
                return Err(Error::InvalidBlockChoice {
                    emission: self.number,
                    reason: "blocks are numbered from 1",
                })
            }
            BlockChoice::Number(b) | BlockChoice::LeavingGap(b) => {
                let file = self.store.block_path(self.game, self.number, b);
                if listed(b) || file.exists() {
                    return Err(Error::AlreadyExists { path: file });
                }
                if b > last + 1 && matches!(choice, BlockChoice::Number(_)) {
                    let (emission, next) = (self.number, last + 1);
                    return Err(Error::BlockGap {
                        emission,
                        block: b,
                        next,
                    });
                }
            }
            BlockChoice::Until(_) if wanted.count == 0 => return Ok(None),
            _ if wanted.count == 0 => {
                return Err(Error::InvalidBlockChoice {
                    emission: self.number,
                    reason: "asked to generate 0 blocks",
                })
            }
            _ => {}
        }
        let bytes = serde_json::to_vec(&wanted).expect("a plan serialises");
        fsutil::write_atomic(&path, &bytes, 0o644, true)?;
        Ok(Some(wanted))
    }

    /// A block the manifest already lists, reported as kept once its file
    /// is found to be the one listed.
    fn kept_block(&self, manifest: &Manifest, block: u32) -> Result<GeneratedBlock, Error> {
        let path = self.store.block_path(self.game, self.number, block);
        let listed = manifest.blocks.iter().find(|b| b.block == block);
        let sha = file_sha256(&path)?;
        if listed.is_none_or(|l| l.file_sha256 != hex::encode(sha)) {
            return Err(Error::BlockDiffersFromManifest {
                emission: self.number,
                block,
                path,
            });
        }
        Ok(GeneratedBlock {
            summary: BlockSummary::new(&path, &BlockFile::open(&path)?.header, &sha),
            fresh: false,
        })
    }

    /// The unfinished-generation record, if a run was interrupted.
    fn saved_plan(&self) -> Result<Option<Pending>, Error> {
        let path = self.pending_path();
        fsutil::read_small_if_exists(&path, fsutil::PENDING_LIMIT)?
            .map(|bytes| {
                serde_json::from_slice::<Pending>(&bytes).map_err(|e| Error::BadFile {
                    path: path.clone(),
                    reason: format!(
                        "unreadable unfinished-generation record ({e}); remove it to start afresh"
                    ),
                })
            })
            .transpose()
    }

    fn unfinished(&self, saved: &Pending) -> Error {
        Error::GenerationUnfinished {
            emission: self.number,
            first: saved.first_block,
            last: saved.last_block(),
            price: Cents::from(saved.price_cents),
        }
    }

    /// The contributions an emission's seeds derive from: `None` for one
    /// whose seeds come from the master secret (shares given to it are
    /// refused); for one made from shares, the shares given, each checked
    /// against its commitment and never one already given to another
    /// emission of the store, or else (not when `generating`) the ones the
    /// store kept, checked alike. Writes nothing.
    fn contributions(
        &self,
        manifest: &Manifest,
        generating: bool,
    ) -> Result<Option<Contributions>, Error> {
        let (game, emission) = (self.game, self.number);
        let Some(ceremony) = &manifest.seed_shares else {
            return match self.given {
                Some(_) => Err(Error::NoShareCommitments { emission }),
                None => Ok(None),
            };
        };
        if let Some(given) = &self.given {
            let contributions = ceremony.accept(game, emission, given)?;
            for s in &contributions.shares {
                if let Some((other, number)) =
                    self.store.emission_with_share(&s.share, game, emission)?
                {
                    return Err(Error::ShareMismatch {
                        emission,
                        party: s.party.clone(),
                        reason: format!(
                            "was given to {} emission {number} already: a reveal makes its shares public, so a share serves one emission only (`issuer share new`)",
                            other.slug()
                        ),
                    });
                }
            }
            return Ok(Some(contributions));
        }
        let kept = match generating {
            true => None,
            false => self.store.kept_shares(game, emission)?,
        };
        match kept {
            Some(kept) => {
                ceremony.check(game, emission, &kept)?;
                Ok(Some(kept))
            }
            None => Err(Error::SharesNeeded {
                emission,
                what: format!(
                    "the share of every party ({}) with --shares FILE…{}",
                    ceremony.parties(),
                    match generating {
                        true => "",
                        false => " (this store keeps none of its shares)",
                    }
                ),
            }),
        }
    }

    /// Keeps the contributions in the store (the block seeds and the
    /// reveal derive from them) and records the beacon round's value in the
    /// manifest, both before the first block: later generations must give
    /// the same.
    fn keep(
        &self,
        manifest: &mut Manifest,
        contributions: &Contributions,
        secrets: &Secrets,
    ) -> Result<(), Error> {
        self.store
            .keep_shares(self.game, self.number, contributions)?;
        let named = manifest
            .seed_shares
            .as_mut()
            .and_then(|c| c.beacon.as_mut());
        if let (Some(named), Some(output)) = (named, &contributions.beacon) {
            if named.value.is_none() {
                named.value = Some(output.value.clone());
                self.save_manifest(manifest, secrets)?;
            }
        }
        Ok(())
    }

    /// Makes one block, its seed derived from `seed_key` (the master
    /// secret, or the emission's share-derived key), or keeps it if a
    /// sealed, valid file is already there.
    fn generate_block(
        &self,
        secrets: &Secrets,
        spec: BlockSpec,
        seed_key: &[u8; 32],
        manifest: &Manifest,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<GeneratedBlock, Error> {
        let path = self.store.block_path(spec.game, spec.emission, spec.block);
        let seed = crate::derive::block_seed(seed_key, spec.game, spec.emission, spec.block);
        if path.exists() {
            let kept = self.existing_block(&path, spec, &seed, secrets)?;
            if let Some(listed) = manifest.blocks.iter().find(|b| b.block == spec.block) {
                if listed.file_sha256 != kept.summary.file_sha256 {
                    return Err(Error::BlockDiffersFromManifest {
                        emission: self.number,
                        block: spec.block,
                        path,
                    });
                }
            }
            progress(u64::from(kept.summary.units));
            return Ok(kept);
        }
        let key = secrets.block_records_key(spec.game, spec.emission, spec.block);
        let built = build::build(spec, &seed, Some(&key), progress)?;
        let written = writer::write(&built, &key, &secrets.signing, &path)?;
        Ok(GeneratedBlock {
            summary: BlockSummary::new(&path, &written.header, &written.file_sha256),
            fresh: true,
        })
    }

    /// A block file found in place by a rerun: kept if it is this spec's
    /// block, sealed by this issuer; anything else is refused, never deleted.
    fn existing_block(
        &self,
        path: &Path,
        spec: BlockSpec,
        seed: &[u8; 32],
        secrets: &Secrets,
    ) -> Result<GeneratedBlock, Error> {
        let file = BlockFile::open(path)?;
        let h = &file.header;
        let trusted = secrets.signing.verifying_key();
        let sealed = file
            .seal
            .as_ref()
            .is_some_and(|s| seal::verify(&trusted, &file.header_bytes, s));
        let matches = h.game == spec.game
            && h.emission == spec.emission
            && h.block == spec.block
            && h.price_cents == spec.price_cents
            && h.seed_commitment == crate::derive::seed_commitment(seed)
            && file.file_len == h.seal_offset + crate::block::SEAL_LEN as u64;
        if !(sealed && matches) {
            return Err(Error::BlockInTheWay {
                emission: self.number,
                block: spec.block,
                price: Cents::from(spec.price_cents),
                path: path.to_path_buf(),
            });
        }
        Ok(GeneratedBlock {
            summary: BlockSummary::new(path, h, &file_sha256(path)?),
            fresh: false,
        })
    }

    /// Begins an emission made from shares: a manifest with no block that
    /// records every party's commitment and the beacon round named, signed
    /// (docs/EMISSIONS.md §A seed no one party controls). Refused for an
    /// emission that exists.
    pub fn commit_shares(
        &self,
        secrets: &Secrets,
        ceremony: SeedShares,
    ) -> Result<Manifest, Error> {
        if let Some(reason) = ceremony.malformed() {
            return Err(Error::Internal { what: reason });
        }
        std::fs::create_dir_all(self.dir()).map_err(|e| Error::io(&self.dir(), e))?;
        let _lock = self.lock()?;
        self.recover(&secrets.signing.verifying_key())?;
        if self.load_checked(secrets)?.is_some() {
            return Err(Error::AlreadyExists {
                path: self.manifest_path(),
            });
        }
        if let Some(saved) = self.saved_plan()? {
            return Err(self.unfinished(&saved));
        }
        let mut manifest = self.new_manifest(secrets);
        manifest.seed_shares = Some(ceremony);
        self.save_manifest(&mut manifest, secrets)?;
        Ok(manifest)
    }

    /// Closes the emission: no more blocks may be added.
    pub fn close(&self, secrets: &Secrets) -> Result<Manifest, Error> {
        self.close_until(secrets, None)
    }

    /// [`Emission::close`], recording the claim period's end
    /// `claims_until` (a time [`claims_deadline`] made). Closing again
    /// changes nothing; a deadline other than the one recorded is refused.
    pub fn close_until(
        &self,
        secrets: &Secrets,
        claims_until: Option<&str>,
    ) -> Result<Manifest, Error> {
        let (_lock, mut manifest) = self.start_writing(secrets)?;
        if let Some(saved) = self.saved_plan()? {
            return Err(self.unfinished(&saved));
        }
        if manifest.closed {
            if let Some(asked) = claims_until {
                if manifest.claims_until.as_deref() != Some(asked) {
                    return Err(Error::BadFile {
                        path: self.manifest_path(),
                        reason: format!(
                            "emission {} was closed with {}; a closed emission's claim deadline is not changed",
                            self.number,
                            manifest
                                .claims_until
                                .as_deref()
                                .map_or("no claim deadline".to_string(), |d| format!("claims until {d}"))
                        ),
                    });
                }
            }
            return Ok(manifest);
        }
        manifest.closed = true;
        manifest.claims_until = claims_until.map(str::to_string);
        self.save_manifest(&mut manifest, secrets)?;
        Ok(manifest)
    }

    /// The manifest, which must exist.
    pub fn require_manifest(&self, trusted: &VerifyingKey) -> Result<Manifest, Error> {
        self.load_manifest(trusted)?
            .ok_or_else(|| self.no_such_emission())
    }

    /// For `close` and `reveal`: the lock (the caller holds it until its
    /// work is done), leftovers recovered, the manifest checked against the
    /// master secret.
    fn start_writing(&self, secrets: &Secrets) -> Result<(EmissionLock, Manifest), Error> {
        let lock = self.lock_existing()?;
        self.recover(&secrets.signing.verifying_key())?;
        let manifest = self
            .load_checked(secrets)?
            .ok_or_else(|| self.no_such_emission())?;
        Ok((lock, manifest))
    }

    /// The reveal of a closed emission: every block's seed and the
    /// emission's records key. Marks the emission revealed.
    pub fn reveal(&self, secrets: &Secrets) -> Result<Reveal, Error> {
        self.reveal_once(secrets, || Ok(()))
    }

    /// [`Emission::reveal`] once `ready` agrees, asked after the emission
    /// is found closed (`reveal` asks the ledger for the end of claims).
    pub fn reveal_once(
        &self,
        secrets: &Secrets,
        ready: impl FnOnce() -> Result<(), Error>,
    ) -> Result<Reveal, Error> {
        let (_lock, manifest) = self.start_writing(secrets)?;
        if !manifest.closed {
            return Err(Error::EmissionNotClosed {
                emission: self.number,
            });
        }
        let contributions = self.contributions(&manifest, false)?;
        ready()?;
        let reveal = self.reveal_of(&manifest, secrets, contributions)?;
        fsutil::write_atomic(&self.revealed_marker(), b"revealed\n", 0o644, true)?;
        Ok(reveal)
    }

    /// What the reveal of the emission of `manifest` holds: every listed
    /// block's seed and the emission's records key, and for an emission
    /// made from shares, its `contributions`, which give those seeds.
    fn reveal_of(
        &self,
        manifest: &Manifest,
        secrets: &Secrets,
        contributions: Option<Contributions>,
    ) -> Result<Reveal, Error> {
        let game = manifest_game(manifest, &self.manifest_path())?;
        let seed_key = seed_key(secrets, game, self.number, contributions.as_ref());
        Ok(Reveal {
            kind: REVEAL_KIND.into(),
            game: manifest.game.clone(),
            emission: self.number,
            records_key: secrets.emission_records_key(game, self.number),
            seed_shares: contributions,
            blocks: manifest
                .blocks
                .iter()
                .map(|b| RevealedSeed {
                    block: b.block,
                    seed: hex::encode(crate::derive::block_seed(
                        &seed_key,
                        game,
                        self.number,
                        b.block,
                    )),
                })
                .collect(),
        })
    }

    /// The reveal of an emission that `reveal` revealed, made again from
    /// the issuer's store (the same seeds and key; nothing is written).
    /// Refused, `NotRevealed`, before the reveal or in a store without the
    /// master secret (an auditor's: the reveal file is then the source).
    pub fn revealed(&self) -> Result<Reveal, Error> {
        let revealed = self.is_revealed();
        let not_revealed = || Error::NotRevealed {
            game: self.game.slug(),
            emission: self.number,
            revealed,
            store: self.store.root().to_path_buf(),
        };
        if !revealed || !self.store.master_path().exists() {
            return Err(not_revealed());
        }
        let secrets = self.store.secrets()?;
        let manifest = self
            .load_checked(&secrets)?
            .ok_or_else(|| self.no_such_emission())?;
        // An emission made from shares this store does not keep: its
        // reveal file is the source.
        let contributions = self.contributions(&manifest, false).map_err(|e| match e {
            Error::SharesNeeded { .. } => not_revealed(),
            e => e,
        })?;
        self.reveal_of(&manifest, &secrets, contributions)
    }

    /// True once `reveal` has been run: the emission's IDs are then
    /// computable by anyone, so redemption is closed.
    pub fn is_revealed(&self) -> bool {
        self.revealed_marker().exists()
    }
}

/// The key emission `emission`'s block seeds derive from: its
/// contributions' seed key if it is made from shares, else the master
/// secret.
fn seed_key(
    secrets: &Secrets,
    game: Game,
    emission: u32,
    contributions: Option<&Contributions>,
) -> [u8; 32] {
    contributions.map_or(*secrets.master(), |c| c.seed_key(game, emission))
}

fn bad_signature(path: PathBuf, sig_path: &Path) -> Error {
    Error::BadFile {
        path,
        reason: format!(
            "the manifest's signature ({}) does not verify with the issuer key: the manifest was altered or signed by another key",
            sig_path.display()
        ),
    }
}
