//! ticket-issuer: builds, seals, verifies and redeems blocks of pre-decided
//! online instant-game units (see README.md and docs/ARCHITECTURE.md).
//!
//! The work is in the workspace's crates: `ticket-issuer-core` (games,
//! records, Merkle tree, seal, block file, verification: what an auditor's
//! tool needs, with no server or database), `ticket-issuer-log` (the signed
//! log with no database), `ticket-issuer-ledger` (the SQLite and PostgreSQL
//! ledgers, the redeemer, governance), `ticket-issuer-service` (HTTP) and
//! `ticket-issuer-report` (the audit's page). This crate is the `issuer`
//! binary; its library gathers them under one name for the binary, the
//! tests, the benchmarks and the fuzz targets, and holds the command line
//! ([`cli`]), so that a binary with one more game registered (the
//! `third-game` example) runs the same commands.

#![deny(missing_docs)]

// The command line names this library `ticket_issuer`, as a user of it
// would.
extern crate self as ticket_issuer;

/// The `issuer` command line: [`cli::main`] parses, calls the library and
/// prints; `src/main.rs` only calls it.
#[allow(missing_docs)]
pub mod cli;

pub use ticket_issuer_core::*;
pub use ticket_issuer_ledger::{
    approval, binding, closing, ledger, reconcile, redeem, redeemer, routing, status, witness,
};
pub use ticket_issuer_ledger::{
    store_status, Ledger, OwnedKeys, RedeemKeys, Redeemer, Redemption, StoreStatus,
};
pub use ticket_issuer_report as report_html;
pub use ticket_issuer_service as service;
