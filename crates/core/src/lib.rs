//! ticket-issuer's core: the games and their units, the reproducible
//! draws, fixed-width unit records, the RFC 9162 Merkle tree, the Ed25519
//! seal, chunk encryption, the block file and its verification, unit IDs,
//! money, stores and emission manifests. What an auditor's tool or another
//! program builds on: it depends on no server, database or command-line
//! crate (docs/ARCHITECTURE.md).
//!
//! The pipeline, one module per concept:
//! [`game`] (lot tables and unit models) → [`rng`] (the reproducible stream)
//! → [`record`] (fixed-width unit records) → [`merkle`] (RFC 9162 tree)
//! → chunk encryption → [`block`] (the sealed file) → [`verify`],
//! [`export`]. The ledger (sales, plays, redemptions) is the
//! `ticket-issuer-ledger` crate; the HTTP service `ticket-issuer-service`.
//!
//! ```
//! use ticket_issuer_core::emission::{BlockChoice, Emission};
//! use ticket_issuer_core::game::Game;
//! use ticket_issuer_core::records_key::KeyAccess;
//! use ticket_issuer_core::store::Store;
//! use ticket_issuer_core::verify::{verify_block, VerifyOptions};
//!
//! # fn main() -> Result<(), ticket_issuer_core::Error> {
//! let dir = tempfile::tempdir().expect("a temp dir");
//! let store = Store::new(dir.path().join("issuer-data"));
//! store.keygen()?;
//! let secrets = store.secrets()?;
//! // Block 1 of emission 1, 450,000 units at 1 € (100 cents).
//! let made = Emission::new(&store, Game::ILE_AU_TRESOR, 1)
//!     .generate(&secrets, 100, BlockChoice::Number(1), &|_units| {})?;
//! let trusted = store.public_key()?;
//! let report = verify_block(
//!     made[0].summary.path.as_ref(),
//!     &VerifyOptions::new(&trusted, KeyAccess { secrets: Some(&secrets), files: &[] }),
//! )?;
//! assert!(report.ok && report.complete);
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

// The format and its checks: what an auditor's program builds on.
pub mod block;
pub mod derive;
pub mod format;
pub mod merkle;
pub mod record;
pub mod rng;
pub mod seal;
pub mod verify;
pub mod words;

// The games, their money and their unit IDs.
pub mod game;
pub mod money;
pub mod unit_id;

// A game's analysis: PAR sheets, audit tallies.
pub mod analysis;

// The issuer's store and its emissions.
pub mod audit;
pub mod block_choice;
pub mod emission;
pub mod evidence;
pub mod export;
pub mod key_files;
pub mod manifest;
pub mod par;
pub mod records_key;
pub mod reveal;
pub mod shares;
pub mod store;

pub mod error;

// Mechanisms behind the modules above, not an interface of their own: the
// ledger crate and this project's tests reach into them.
pub(crate) mod cipher;
#[doc(hidden)]
pub mod fsutil;
pub(crate) mod hex_serde;

// Statistical tests of draws, for an auditor's kit (f64, never money).
pub mod stats;

// The short list another program starts from.
pub use audit::{verify_emission, EmissionReport};
pub use emission::{BlockChoice, Emission, Manifest, Reveal};
pub use error::{Error, ErrorKind, ErrorReport};
pub use fsutil::Output;
pub use game::Game;
pub use money::Cents;
pub use records_key::{KeyAccess, RecordsKeyFile};
pub use store::{Secrets, Store};
pub use unit_id::UnitId;
pub use verify::{verify_block, BlockReport, Scope, VerifyOptions};

/// Internals this project's own tests, fuzz targets and benchmarks reach
/// into (to forge chunks, to probe size caps). Not an interface: hidden
/// from the docs, it may change in any release. Compiled in every build,
/// not behind a feature: a feature only the tests turn on made
/// `cargo test` and `cargo run` build the libraries twice (issue 37).
/// Nothing here bypasses a key: forging a sealed block needs the store's
/// secrets, as `generate` does.
#[doc(hidden)]
pub mod test_support {
    pub use crate::cipher::{seal_chunk, ChunkPlace, OpenProblem};
    pub use crate::fsutil::{read_small, KEY_FILE_LIMIT};
    pub use crate::stats::{chi_square, ChiSquare};

    use crate::block::reader::BlockFile;
    use crate::block::writer::{self, WrittenBlock};
    use crate::emission::Emission;
    use crate::error::Error;
    use crate::game::Game;
    use crate::store::Store;

    /// Replaces block `block` of `game`'s emission `emission` in `store`
    /// with a block of the same public facts (game, emission, block,
    /// price, size, seed commitment) whose records are `records`
    /// (concatenated, in index order), encrypted with the block's records
    /// key and sealed with the store's signing key; the emission's signed
    /// manifest is written again with the block's new root and digest.
    /// How a test builds a second world that agrees with the first on
    /// everything public (tests/it/noninterference.rs).
    pub fn reseal_block(
        store: &Store,
        game: Game,
        emission: u32,
        block: u32,
        records: &[u8],
    ) -> Result<WrittenBlock, Error> {
        let secrets = store.secrets()?;
        let path = store.block_path(game, emission, block);
        let h = BlockFile::open(&path)?.header;
        let spec = crate::block::build::BlockSpec {
            game,
            emission,
            block,
            price_cents: h.price_cents,
            units: h.unit_count,
        };
        let key = secrets.block_records_key(game, emission, block);
        let built = crate::block::build::from_records(spec, h.seed_commitment, &key, records)?;
        std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        let written = writer::write(&built, &key, &secrets.signing, &path)?;
        let emission = Emission::new(store, game, emission);
        let mut manifest = emission.require_manifest(&secrets.signing.verifying_key())?;
        for b in manifest.blocks.iter_mut().filter(|b| b.block == block) {
            b.merkle_root = hex::encode(written.header.merkle_root);
            b.file_sha256 = hex::encode(written.file_sha256);
        }
        emission.save_manifest(&mut manifest, &secrets)?;
        Ok(written)
    }
}
