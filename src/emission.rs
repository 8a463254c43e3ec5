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
use crate::game::{cents_to_euros, parse_price, Game};
use crate::seal;
use crate::store::{Secrets, Store};
use crate::verify::file_sha256;

const MANIFEST_KIND: &str = "ticket-issuer emission manifest";
const REVEAL_KIND: &str = "ticket-issuer emission reveal";

/// One block as the manifest lists it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ManifestBlock {
    /// Block number.
    pub block: u32,
    /// Unit price in euros (decimal string).
    pub price: String,
    /// Units.
    pub units: u32,
    /// RFC 9162 root over its records, hex.
    pub merkle_root: String,
    /// SHA-256 of the block file, hex.
    pub file_sha256: String,
    /// SHA-256 of its seed, hex.
    pub seed_commitment: String,
    /// The file's name in the emission folder.
    pub file: String,
}

/// The signed list of an emission's blocks (docs/EMISSIONS.md §Manifest).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    /// Always "ticket-issuer emission manifest".
    pub kind: String,
    /// Manifest format version (1).
    pub version: u32,
    /// Game slug.
    pub game: String,
    /// Emission number.
    pub emission: u32,
    /// True once closed: no more blocks.
    pub closed: bool,
    /// The issuer's Ed25519 public key, hex.
    pub issuer_public_key: String,
    /// The blocks, by number.
    pub blocks: Vec<ManifestBlock>,
}

/// A generation in progress, saved so an interrupted run can be finished
/// by running the same command again.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Pending {
    game: String,
    price_cents: u32,
    first_block: u32,
    count: u32,
    explicit: bool,
}

/// Which blocks to generate.
#[derive(Clone, Copy, Debug)]
pub enum BlockChoice {
    /// Exactly this block number.
    Number(u32),
    /// This many more blocks, numbered on from the emission's last.
    Count(u32),
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
}

impl<'s> Emission<'s> {
    /// Emission `number` of `game` in `store`.
    pub fn new(store: &'s Store, game: Game, number: u32) -> Emission<'s> {
        Emission {
            store,
            game,
            number,
        }
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

    fn state_error(&self, reason: String) -> Error {
        Error::EmissionState {
            emission: self.number,
            reason,
        }
    }

    /// Reads the manifest and checks its signature; `None` if the emission
    /// has none yet.
    pub fn load_manifest(&self, trusted: &VerifyingKey) -> Result<Option<Manifest>, Error> {
        let path = self.manifest_path();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path, e)),
        };
        let sig_path = self.signature_path();
        let sig = std::fs::read(&sig_path).map_err(|e| Error::io(&sig_path, e))?;
        let signs = |data: &[u8]| {
            <[u8; 64]>::try_from(sig.as_slice()).is_ok_and(|s| seal::verify(trusted, data, &s))
        };
        if signs(&bytes) {
            return Manifest::parse(&path, &bytes).map(Some);
        }
        // A save interrupted between the signature and the manifest: the
        // new manifest waits in its `.next` file, which the signature signs.
        let next_path = self.next_manifest_path();
        match std::fs::read(&next_path) {
            Ok(next) if signs(&next) => {
                fsutil::write_atomic(&path, &next, 0o644, true)?;
                std::fs::remove_file(&next_path).map_err(|e| Error::io(&next_path, e))?;
                Manifest::parse(&path, &next).map(Some)
            }
            Ok(_) => Err(bad_signature(path, &sig_path)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(bad_signature(path, &sig_path))
            }
            Err(e) => Err(Error::io(&next_path, e)),
        }
    }

    fn save_manifest(&self, manifest: &Manifest, secrets: &Secrets) -> Result<(), Error> {
        let mut bytes = serde_json::to_vec_pretty(manifest).expect("a manifest serialises");
        bytes.push(b'\n');
        let signature = seal::sign(&secrets.signing, &bytes);
        // New manifest aside, then its signature, then the manifest: a crash
        // at any point leaves either the old signed pair or a signature that
        // the `.next` file matches, which `load_manifest` completes.
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
        game.lot_table(price_cents)?;
        let trusted = secrets.signing.verifying_key();
        let mut manifest = self.load_manifest(&trusted)?.unwrap_or_else(|| Manifest {
            kind: MANIFEST_KIND.into(),
            version: 1,
            game: game.slug().into(),
            emission: self.number,
            closed: false,
            issuer_public_key: hex::encode(trusted.to_bytes()),
            blocks: Vec::new(),
        });
        if manifest.game != game.slug() {
            return Err(self.state_error(format!(
                "it is an emission of {}, not {}",
                manifest.game,
                game.slug()
            )));
        }
        if manifest.closed {
            return Err(self.state_error("it is closed: no more blocks may be added".into()));
        }
        fsutil::clean_partials(&self.dir())?;
        let pending = self.plan(&manifest, game, price_cents, choice)?;
        let mut done = Vec::new();
        for block in pending.first_block..pending.first_block + pending.count {
            let spec = BlockSpec {
                game,
                emission: self.number,
                block,
                price_cents,
            };
            let generated = self.generate_block(secrets, spec, &manifest, progress)?;
            if !manifest.blocks.iter().any(|b| b.block == block) {
                manifest.blocks.push(ManifestBlock::from(&generated));
                manifest.blocks.sort_by_key(|b| b.block);
                self.save_manifest(&manifest, secrets)?;
            }
            done.push(generated);
        }
        let pending_path = self.pending_path();
        std::fs::remove_file(&pending_path).map_err(|e| Error::io(&pending_path, e))?;
        Ok(done)
    }

    /// The blocks this command is to make: a saved unfinished plan of the
    /// same command, or a new one numbered on from the last block.
    fn plan(
        &self,
        manifest: &Manifest,
        game: Game,
        price_cents: u32,
        choice: BlockChoice,
    ) -> Result<Pending, Error> {
        let path = self.pending_path();
        let last = manifest.blocks.iter().map(|b| b.block).max().unwrap_or(0);
        let wanted = match choice {
            BlockChoice::Number(b) => Pending {
                game: game.slug().into(),
                price_cents,
                first_block: b,
                count: 1,
                explicit: true,
            },
            BlockChoice::Count(n) => Pending {
                game: game.slug().into(),
                price_cents,
                first_block: last + 1,
                count: n,
                explicit: false,
            },
        };
        if path.exists() {
            let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
            let saved: Pending = serde_json::from_str(&text).map_err(|e| Error::BadFile {
                path: path.clone(),
                reason: format!(
                    "unreadable unfinished-generation record ({e}); remove it to start afresh"
                ),
            })?;
            let same = saved.game == wanted.game
                && saved.price_cents == wanted.price_cents
                && saved.count == wanted.count
                && saved.explicit == wanted.explicit
                && (!saved.explicit || saved.first_block == wanted.first_block);
            if same {
                return Ok(saved);
            }
            return Err(self.state_error(format!(
                "an earlier generation was interrupted: blocks {} to {} at {} €; run that command again to finish it first",
                saved.first_block,
                saved.first_block + saved.count - 1,
                cents_to_euros(saved.price_cents)
            )));
        }
        if wanted.count == 0 {
            return Err(self.state_error("asked to generate 0 blocks".into()));
        }
        if let BlockChoice::Number(b) = choice {
            if b == 0 {
                return Err(self.state_error("blocks are numbered from 1".into()));
            }
            let file = self.store.block_path(self.game, self.number, b);
            if manifest.blocks.iter().any(|m| m.block == b) || file.exists() {
                return Err(Error::AlreadyExists { path: file });
            }
        }
        std::fs::create_dir_all(self.dir()).map_err(|e| Error::io(&self.dir(), e))?;
        let bytes = serde_json::to_vec(&wanted).expect("a plan serialises");
        fsutil::write_atomic(&path, &bytes, 0o644, true)?;
        Ok(wanted)
    }

    /// Makes one block, or keeps it if a sealed, valid file is already there.
    fn generate_block(
        &self,
        secrets: &Secrets,
        spec: BlockSpec,
        manifest: &Manifest,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<GeneratedBlock, Error> {
        let path = self.store.block_path(spec.game, spec.emission, spec.block);
        let seed = secrets.block_seed(spec.game, spec.emission, spec.block);
        if path.exists() {
            let kept = self.existing_block(&path, spec, &seed, secrets)?;
            if let Some(listed) = manifest.blocks.iter().find(|b| b.block == spec.block) {
                if listed.file_sha256 != kept.summary.file_sha256 {
                    return Err(self.state_error(format!(
                        "{} differs from the manifest's block {}; run `issuer verify --emission {}`",
                        path.display(),
                        spec.block,
                        self.number
                    )));
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
            return Err(self.state_error(format!(
                "{} is in the way and is not the sealed block {} at {} €; move it aside and run again",
                path.display(),
                spec.block,
                cents_to_euros(spec.price_cents)
            )));
        }
        Ok(GeneratedBlock {
            summary: BlockSummary::new(path, h, &file_sha256(path)?),
            fresh: false,
        })
    }

    /// Closes the emission: no more blocks may be added.
    pub fn close(&self, secrets: &Secrets) -> Result<Manifest, Error> {
        let mut manifest = self.require_manifest(&secrets.signing.verifying_key())?;
        if self.pending_path().exists() {
            return Err(self.state_error(
                "a generation is unfinished; run it again to finish it before closing".into(),
            ));
        }
        if !manifest.closed {
            manifest.closed = true;
            self.save_manifest(&manifest, secrets)?;
        }
        Ok(manifest)
    }

    /// The manifest, which must exist.
    pub fn require_manifest(&self, trusted: &VerifyingKey) -> Result<Manifest, Error> {
        self.load_manifest(trusted)?.ok_or_else(|| {
            self.state_error(format!(
                "no such emission in store {}",
                self.store.root().display()
            ))
        })
    }

    /// The reveal of a closed emission: every block's seed and the
    /// emission's records key. Marks the emission revealed.
    pub fn reveal(&self, secrets: &Secrets) -> Result<Reveal, Error> {
        let manifest = self.require_manifest(&secrets.signing.verifying_key())?;
        if !manifest.closed {
            return Err(self.state_error(format!(
                "it is not closed; run `issuer close --emission {}` first (no seed is revealed while blocks may still be added)",
                self.number
            )));
        }
        let game = manifest_game(&manifest, &self.manifest_path())?;
        let reveal = Reveal {
            kind: REVEAL_KIND.into(),
            game: manifest.game.clone(),
            emission: self.number,
            records_key: hex::encode(secrets.emission_records_key(game, self.number)),
            blocks: manifest
                .blocks
                .iter()
                .map(|b| RevealedSeed {
                    block: b.block,
                    seed: hex::encode(secrets.block_seed(game, self.number, b.block)),
                })
                .collect(),
        };
        fsutil::write_atomic(&self.revealed_marker(), b"revealed\n", 0o644, true)?;
        Ok(reveal)
    }

    /// True once `reveal` has been run: the emission's IDs are then
    /// computable by anyone, so redemption is closed.
    pub fn is_revealed(&self) -> bool {
        self.revealed_marker().exists()
    }
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

/// The game a manifest names.
pub fn manifest_game(manifest: &Manifest, path: &Path) -> Result<Game, Error> {
    Game::from_slug(&manifest.game).ok_or_else(|| Error::BadFile {
        path: path.to_path_buf(),
        reason: format!("unknown game {:?}", manifest.game),
    })
}

impl Manifest {
    /// Parses and checks manifest bytes (kind, version, prices) after their
    /// signature was checked; `path` names them in messages.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Manifest, Error> {
        let manifest: Manifest = serde_json::from_slice(bytes).map_err(|e| Error::BadFile {
            path: path.to_path_buf(),
            reason: format!("not a manifest ({e})"),
        })?;
        if manifest.kind != MANIFEST_KIND || manifest.version != 1 {
            return Err(Error::BadFile {
                path: path.to_path_buf(),
                reason: format!(
                    "kind {:?} version {} is not a manifest this issuer reads",
                    manifest.kind, manifest.version
                ),
            });
        }
        for b in &manifest.blocks {
            if parse_price(&b.price).is_none() {
                return Err(Error::BadFile {
                    path: path.to_path_buf(),
                    reason: format!("block {} has an unreadable price {:?}", b.block, b.price),
                });
            }
        }
        Ok(manifest)
    }
}

/// One revealed seed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct RevealedSeed {
    /// Block number.
    pub block: u32,
    /// The block seed, hex.
    pub seed: String,
}

/// A reveal file (docs/EMISSIONS.md §Reveal).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Reveal {
    /// Always "ticket-issuer emission reveal".
    pub kind: String,
    /// Game slug.
    pub game: String,
    /// Emission.
    pub emission: u32,
    /// The emission's records key, hex.
    pub records_key: String,
    /// The seeds.
    pub blocks: Vec<RevealedSeed>,
}

impl Reveal {
    /// Reads a reveal file.
    pub fn read(path: &Path) -> Result<Reveal, Error> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Reveal::parse(path, &bytes)
    }

    /// Parses and checks a reveal file's bytes; `path` names them in messages.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Reveal, Error> {
        let reveal: Reveal = serde_json::from_slice(bytes).map_err(|e| Error::BadFile {
            path: path.to_path_buf(),
            reason: format!("not a reveal file ({e})"),
        })?;
        if reveal.kind != REVEAL_KIND {
            return Err(Error::BadFile {
                path: path.to_path_buf(),
                reason: format!("kind is {:?}, expected {REVEAL_KIND:?}", reveal.kind),
            });
        }
        Ok(reveal)
    }

    /// The emission's records key, as a records key file.
    pub fn records_key_file(&self) -> crate::records_key::RecordsKeyFile {
        crate::records_key::RecordsKeyFile {
            kind: crate::records_key::KIND.into(),
            game: self.game.clone(),
            emission: self.emission,
            block: None,
            key: self.records_key.clone(),
        }
    }

    /// The seed of `block`, if revealed and well formed.
    pub fn seed(&self, block: u32) -> Option<Result<[u8; 32], String>> {
        self.blocks.iter().find(|b| b.block == block).map(|b| {
            hex::decode(&b.seed)
                .ok()
                .and_then(|v| <[u8; 32]>::try_from(v).ok())
                .ok_or_else(|| format!("block {block}'s seed is not 64 hex digits"))
        })
    }
}
