//! A unit's sale and play as a ledger records them.

use serde::Serialize;

/// A unit's sale as recorded: when, and the lane of the platform that sold
/// it (`None`: the operator's own command, `issuer sell` or `mark-sold`
/// without `--platform`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SaleRow {
    /// When (the ledger's clock).
    pub sold_at: String,
    /// The selling platform's lane.
    pub lane: Option<String>,
}

impl SaleRow {
    /// Whether a caller in `lane` (`None`: the operator) may see the unit:
    /// the operator sees every unit, a platform those of its lane.
    #[must_use]
    pub fn belongs_to(&self, lane: Option<&str>) -> bool {
        lane.is_none_or(|lane| self.lane.as_deref() == Some(lane))
    }
}

/// How a play ended, as the ledger keeps it.
pub const PLAY_STOPPED: &str = "stop";
/// The play ended by itself, by the game's rules.
pub const PLAY_ENDED: &str = "end";

/// A play as recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlayRow {
    /// Steps revealed (`rolls` in the answers, today's name).
    #[serde(rename = "rolls")]
    pub steps: u32,
    /// `stop` or `end` once over.
    pub ended: Option<String>,
}

impl PlayRow {
    /// The stop the unit pays with: `Some(steps)` after a stop, `None`
    /// once played to its end.
    #[must_use]
    pub fn stop(&self) -> Option<u32> {
        (self.ended.as_deref() == Some(PLAY_STOPPED)).then_some(self.steps)
    }
}
