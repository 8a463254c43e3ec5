//! ticket-issuer: builds, seals, verifies and redeems blocks of pre-decided
//! online instant-game units (see README.md and docs/).
//!
//! The pipeline, one module per concept:
//! [`game`] (lot tables and unit models) → [`rng`] (the reproducible stream)
//! → [`record`] (fixed-width unit records) → [`merkle`] (RFC 9162 tree)
//! → [`cipher`] (chunk encryption) → [`block`] (the sealed file) →
//! [`verify`], [`export`], [`ledger`] (redemption).
//!
//! ```
//! use ticket_issuer::emission::{BlockChoice, Emission};
//! use ticket_issuer::game::Game;
//! use ticket_issuer::records_key::KeyAccess;
//! use ticket_issuer::store::Store;
//! use ticket_issuer::verify::{verify_block, VerifyOptions};
//!
//! # fn main() -> Result<(), ticket_issuer::Error> {
//! let dir = tempfile::tempdir().expect("a temp dir");
//! let store = Store::new(dir.path().join("issuer-data"));
//! store.keygen()?;
//! let secrets = store.secrets()?;
//! // Block 1 of emission 1, 450,000 units at 1 € (100 cents).
//! let made = Emission::new(&store, Game::IleAuTresor, 1)
//!     .generate(&secrets, 100, BlockChoice::Number(1), &|_units| {})?;
//! let trusted = store.public_key()?;
//! let report = verify_block(
//!     made[0].summary.path.as_ref(),
//!     &VerifyOptions {
//!         public_key: &trusted,
//!         keys: KeyAccess { secrets: Some(&secrets), file: None },
//!         revealed_seed: None,
//!         allow_test_sizes: false,
//!     },
//! )?;
//! assert!(report.ok && report.complete);
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

pub mod block;
pub mod cipher;
pub mod derive;
pub mod error;
pub mod fsutil;
pub mod game;
pub mod merkle;
pub mod record;
pub mod rng;
pub mod seal;
pub mod store;
pub mod unit_id;

pub use error::Error;
pub mod audit;
pub mod cli;
pub mod emission;
pub mod export;
pub mod ledger;
pub mod records_key;
pub mod redeem;
pub mod verify;
