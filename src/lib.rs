//! ticket-issuer: builds, seals, verifies and redeems blocks of pre-decided
//! online instant-game units (see README.md and docs/).
//!
//! The pipeline, one module per concept:
//! [`game`] (lot tables and unit models) → [`rng`] (the reproducible stream)
//! → [`record`] (fixed-width unit records) → [`merkle`] (RFC 9162 tree)
//! → chunk encryption → [`block`] (the sealed file) →
//! [`verify`], [`export`], [`ledger`] (redemption).
//!
//! A program built on the library (a redemption service, an auditor's
//! tool) starts from the types re-exported at the root: [`Store`],
//! [`Emission`], [`verify_block`] and [`verify_emission`], [`redeem()`] and
//! the long-lived [`Redeemer`], [`Ledger`], [`UnitId`], [`Game`] and
//! [`Error`] (whose [`ErrorKind`] an edge maps to an exit code or an HTTP
//! status). [`service`] is redemption over HTTP (docs/API.md). The command line is the
//! binary's own (`src/cli/`): it parses, calls the library and prints.
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
//! let made = Emission::new(&store, Game::ILE_AU_TRESOR, 1)
//!     .generate(&secrets, 100, BlockChoice::Number(1), &|_units| {})?;
//! let trusted = store.public_key()?;
//! let report = verify_block(
//!     made[0].summary.path.as_ref(),
//!     &VerifyOptions::new(&trusted, KeyAccess { secrets: Some(&secrets), file: None }),
//! )?;
//! assert!(report.ok && report.complete);
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

// The format and its checks: what an auditor's program builds on.
pub mod block;
pub mod derive;
pub mod merkle;
pub mod record;
pub mod rng;
pub mod seal;
pub mod verify;

// The games.
pub mod game;
pub mod unit_id;

// The issuer's store and what it does.
pub mod audit;
pub mod emission;
pub mod export;
pub mod ledger;
pub mod par;
pub mod records_key;
pub mod redeem;
pub mod redeemer;
pub mod service;
pub mod status;
pub mod store;

pub mod error;

// Mechanisms behind the modules above, not an interface of their own.
pub(crate) mod cipher;
pub(crate) mod fsutil;
pub(crate) mod stats;

// The short list a service or another program starts from.
pub use audit::{verify_emission, EmissionReport};
pub use emission::{BlockChoice, Emission, Manifest, Reveal};
pub use error::{Error, ErrorKind, ErrorReport};
pub use fsutil::Output;
pub use game::Game;
pub use ledger::Ledger;
pub use records_key::{KeyAccess, RecordsKeyFile};
pub use redeem::{redeem, OwnedKeys, RedeemKeys, Redemption};
pub use redeemer::Redeemer;
pub use status::{store_status, StoreStatus};
pub use store::{Secrets, Store};
pub use unit_id::UnitId;
pub use verify::{verify_block, BlockReport, Scope, VerifyOptions};

/// Internals this project's own tests, fuzz targets and benchmarks reach
/// into (to forge chunks, to probe size caps). Not an interface: it may
/// change in any release.
#[doc(hidden)]
pub mod test_support {
    pub use crate::cipher::{seal_chunk, ChunkPlace, OpenProblem};
    pub use crate::fsutil::{read_small, KEY_FILE_LIMIT};
    pub use crate::stats::{chi_square, ChiSquare};
}
