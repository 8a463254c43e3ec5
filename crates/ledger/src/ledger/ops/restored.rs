//! Entries of the published log put back at their places in a ledger
//! restored from an older copy (docs/REDEMPTION.md §Recovery).

use super::request::UnitRef;
use super::rows::PlayRow;
use crate::ledger::claims::EndOfClaims;
use crate::ledger::log::LogEntry;
use crate::ledger::operator::OperatorAction;
use crate::ledger::Entry;

/// An entry of the published log, to put back at its place `seq` of a
/// ledger restored from an older copy: its row, whose leaf data is `line`
/// (checked by the caller: the row's own line is the published one).
#[derive(Clone, Debug)]
pub struct Restored {
    /// Its place in the log.
    pub seq: u64,
    /// Its leaf data as published.
    pub line: String,
    /// The row it makes.
    pub row: RestoredRow,
}

/// The row of a [`Restored`] entry, one per kind of the log.
#[derive(Clone, Debug)]
pub enum RestoredRow {
    /// A sale, in `lane` where it is known (the log does not hold it).
    Sale {
        /// The unit.
        unit: UnitRef,
        /// When it was sold.
        sold_at: String,
        /// The platform's lane, where known.
        lane: Option<String>,
    },
    /// A play that ended.
    Play {
        /// The unit.
        unit: UnitRef,
        /// The play as it ended.
        play: PlayRow,
        /// When.
        ended_at: String,
    },
    /// A redemption, its facts read again from the unit's sealed block.
    Redemption {
        /// The unit's facts.
        entry: Entry,
        /// When it was paid.
        redeemed_at: String,
    },
    /// An end of claims, its statement signed again.
    EndOfClaims(EndOfClaims),
    /// An operator's action.
    Operator(OperatorAction),
}

impl RestoredRow {
    /// The leaf data the row makes at `seq` (what `ledger verify` reads
    /// back).
    #[must_use]
    pub fn line(&self, seq: u64) -> String {
        match self {
            RestoredRow::Sale { unit, sold_at, .. } => LogEntry::Sale {
                unit: unit.place(),
                sold_at,
            }
            .line(seq),
            RestoredRow::Play {
                unit,
                play,
                ended_at,
            } => LogEntry::PlayEnd {
                unit: unit.place(),
                steps: play.steps,
                how: play.ended.as_deref().unwrap_or_default(),
                ended_at,
            }
            .line(seq),
            RestoredRow::Redemption { entry, redeemed_at } => {
                LogEntry::Redemption(entry.fields(redeemed_at)).line(seq)
            }
            RestoredRow::EndOfClaims(s) => LogEntry::EndOfClaims(s).line(seq),
            RestoredRow::Operator(a) => LogEntry::Operator(a).line(seq),
        }
    }
}
