//! ticket-issuer's ledger: every sale, play step and redemption recorded
//! exactly once, in an SQLite file or a shared PostgreSQL database, as an
//! append-only RFC 9162 log with signed C2SP checkpoints
//! (docs/REDEMPTION.md); and the [`Redeemer`] that authenticates units from
//! their sealed blocks and records them through one group-committing
//! writer. Built on `ticket-issuer-core`.

#![deny(missing_docs)]

// The core's modules, under the names this crate's modules use.
pub(crate) use ticket_issuer_core::{
    block, derive, emission, error, evidence, fsutil, game, merkle, money, record, records_key,
    seal, stats, store, unit_id, verify, words,
};

pub mod governance;
pub mod ledger;
pub mod redeem;
pub mod redeemer;
pub use governance::{approval, binding, closing, reconcile, routing, status};
pub use ticket_issuer_log::witness;

pub use governance::reconcile::reconcile;
pub use governance::status::{store_status, StoreStatus};
pub use ledger::Ledger;
pub use redeem::{redeem, OwnedKeys, RedeemKeys, Redemption};
pub use redeemer::Redeemer;
