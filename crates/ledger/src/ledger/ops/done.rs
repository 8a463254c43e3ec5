//! What an operation did, once durable.

use serde::Serialize;

use super::request::{UnitRef, Vetted};
use super::rows::PlayRow;
use crate::ledger::Committed;

/// A sale, once durable.
#[derive(Clone, Debug, Serialize)]
pub struct Sold {
    /// The unit sold.
    #[serde(skip)]
    pub unit: UnitRef,
    /// When the sale was recorded (the ledger's clock).
    pub sold_at: String,
    /// Its log entry; `None` while queued for the sequencer (PostgreSQL).
    pub seq: Option<u64>,
    /// No unsold unit is left in its block.
    pub block_sold_out: bool,
    /// What vetting found, for a sale just made (none for a unit marked
    /// sold, or a sale answered again from its idempotency key).
    #[serde(skip)]
    pub vetted: Option<Vetted>,
}

/// A play step, once durable.
#[derive(Clone, Debug, Serialize)]
pub struct Played {
    /// The play now.
    pub play: PlayRow,
    /// The step was done before (a retry): nothing changed.
    pub replayed: bool,
    /// The play's log entry, when this step ended it and it is sequenced
    /// (an ended play without one is queued for the sequencer).
    pub seq: Option<u64>,
}

/// What an operation did.
#[derive(Clone, Debug)]
pub enum Done {
    /// The unit is paid.
    Redeemed(Committed),
    /// A unit was sold, or marked sold.
    Sold(Sold),
    /// A play step.
    Played(Played),
    /// The emission's claims are ended, at log entry `seq` (this one's, or
    /// the first's when they had ended before).
    ClaimsEnded {
        /// The end of claims' log entry; `None` while queued.
        seq: Option<u64>,
    },
    /// An operator's action is recorded.
    Acted {
        /// Its log entry; `None` while queued (or when `already`).
        seq: Option<u64>,
        /// When it was recorded (the first's, when `already`).
        at: String,
        /// It was in force already (a suspension of what is suspended, a
        /// withdrawal of what is withdrawn, a void of a voided sale):
        /// nothing new was recorded.
        already: bool,
    },
}
