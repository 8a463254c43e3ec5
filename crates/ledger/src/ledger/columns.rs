//! Column lists both databases read a row back by, in the order their
//! readers take them.

/// A redemption's place in the log and its hashed facts
/// ([`crate::ledger::log::OwnedFields`]).
pub const REDEMPTION_COLUMNS: &str =
    "seq, leaf_hash, game, emission, block, unit_index, unit_id, lot,
    prize_cents, record_sha256, redeemed_at, stopped_after_rolls";

/// SQL (SQLite and PostgreSQL alike) matching a note with two signature
/// lines or more: the log's and a witness's.
pub const COSIGNED_NOTE: &str = "checkpoint LIKE '%— %— %'";
