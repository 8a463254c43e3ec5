//! What of a unit an answer may show (docs/REDEMPTION.md §What an answer
//! shows): the one rule every answer of the service and of the commands a
//! platform scripts is built through. A unit revealed whole (L'île au
//! trésor) may be shown whole. A unit played step by step (Trésors
//! Ensablés) may be shown whole only once its play is over; before that,
//! only the rolls already revealed, and a refusal is the same whatever the
//! rolls to come hold.

use serde::Serialize;

use super::play_view::PlayView;
use super::redemption::Redemption;
use crate::error::Error;
use crate::ledger::ops::PlayRow;
use crate::unit_id::UnitId;

/// How much of a unit an answer may carry now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disclosure {
    /// All of it: record, proof, outcome and prize. `stop` is the stop it
    /// is paid with: the recorded one for a unit played step by step
    /// (`None`: played to its end); none for a unit revealed whole.
    Whole {
        /// The recorded stop.
        stop: Option<u32>,
    },
    /// A unit played step by step whose play is not over (or not begun, or
    /// not sold): only the first `rolls` rolls.
    Partial {
        /// The unit is sold.
        sold: bool,
        /// Rolls revealed.
        rolls: u32,
    },
}

impl Disclosure {
    /// The disclosure of a unit played step by step, `sold` or not, whose
    /// recorded play is `play`.
    #[must_use]
    pub fn of(sold: bool, play: Option<&PlayRow>) -> Disclosure {
        match play {
            Some(p) if p.ended.is_some() => Disclosure::Whole { stop: p.stop() },
            p => Disclosure::Partial {
                sold,
                rolls: p.map_or(0, |p| p.steps),
            },
        }
    }
}

/// The stop a unit shown whole is played with: for a game played step by
/// step, the `recorded` one (a different `asked` stop is refused); for a
/// game revealed whole, the one asked (which the game then refuses).
pub(super) fn paid_stop(
    id: &UnitId,
    asked: Option<u32>,
    recorded: Option<u32>,
) -> Result<Option<u32>, Error> {
    if !id.game.step_by_step() {
        return Ok(asked);
    }
    if asked.is_some() && asked != recorded {
        return Err(Error::BadStop {
            id: id.to_string(),
            reason: match recorded {
                Some(rolls) => format!("the ledger's play stopped after {rolls} rolls; the unit is paid as played (omit the stop)"),
                None => "the ledger's play ended by itself; the unit is paid as played (omit the stop)".into(),
            },
        });
    }
    Ok(recorded)
}

/// The refusal of a stop asked of a unit whose play is not over: the same
/// for every stop.
pub(super) fn unfinished(id: &UnitId, sold: bool, steps: u32) -> Error {
    if sold {
        Error::PlayUnfinished {
            id: id.to_string(),
            steps,
        }
    } else {
        Error::NotSold { id: id.to_string() }
    }
}

/// A check of a unit whose play is not over: what its player was shown.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct UnitInPlay {
    /// The unit ID, normalised.
    pub id: String,
    /// Game slug.
    pub game: String,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Unit index.
    pub index: u32,
    /// Always true: the answer holds no record, proof, outcome or prize.
    pub in_play: bool,
    /// The unit is sold.
    pub sold: bool,
    /// The play so far: the rolls revealed, nothing beyond.
    pub play: PlayView,
}

/// What a check answers.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Check {
    /// The whole unit and what its redemption pays.
    Whole(Redemption),
    /// A unit whose play is not over.
    InPlay(UnitInPlay),
}
