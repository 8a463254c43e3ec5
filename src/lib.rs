//! ticket-issuer: builds, seals, verifies and redeems blocks of pre-decided
//! online instant-game units (see README.md and docs/).
//!
//! The pipeline, one module per concept:
//! [`game`] (lot tables and unit models) → [`rng`] (the reproducible stream)
//! → [`record`] (fixed-width unit records) → [`merkle`] (RFC 9162 tree)
//! → [`cipher`] (chunk encryption) → [`block`] (the sealed file) →
//! [`verify`], [`export`], [`ledger`] (redemption).

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
