//! How a finding names a unit, an amount and a stop.

use crate::ledger::emission_rows::At;
use crate::money::Cents;

/// A unit's place in words.
pub(super) fn place(at: At) -> String {
    format!("block {} unit {}", at.block, at.index)
}

/// An amount of cents as euros (a negative one as such).
pub(super) fn cents(c: i64) -> String {
    match u64::try_from(c) {
        Ok(c) => Cents::from(c).to_string(),
        Err(_) => format!("-{}", Cents::from(c.unsigned_abs())),
    }
}

/// A stop in words.
pub(super) fn stop_words(stop: Option<i64>) -> String {
    match stop {
        Some(s) => format!("stopped after {s} steps"),
        None => "at its end".into(),
    }
}
