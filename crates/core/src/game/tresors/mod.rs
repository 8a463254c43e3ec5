//! « Trésors Ensablés » (`tresors-ensables`, IDs `TE-…`), a drawn game at
//! 1 €: a board of 61 squares (annex article 3.2), ten chests whose values
//! are drawn from their tables (3.3.2), a dice tape played one roll at a
//! time with a life gauge, and a stop allowed from the first chest.
//! Every reading of the regulation made here is written in docs/GAMES.md;
//! the payload layout is docs/FORMAT.md §Trésors Ensablés payload.
//!
//! One file per concept, every public item re-exported here:
//! - `regulation`: the constants, the rules of the series, the chests'
//!   value tables, the lot codes and block sizes;
//! - `unit`: the unit model (squares, a unit) and its rule check;
//! - `generate`: a unit's generation from its stream;
//! - `codec`: the payload, encoded and decoded;
//! - `play`: the play engine (rolls, life, stops, outcome);
//! - `view`: the export view and fields, the text picture, the tape;
//! - `picture`: the unit drawn after a number of rolls (text or SVG),
//!   from the board and the rolls shown only;
//! - [`par`]: the game's PAR sheet (exact figures, optimal play and the
//!   cross-checks of its stopping strategies);
//! - `audit`: its tally over a block's units, and [`analysis`]: its
//!   [`crate::analysis::GameAnalysis`] (a layer above its rules, as
//!   [`par`] is);
//! - here: [`Rules`], the game as the shared machinery sees it.

pub mod analysis;
mod audit;
mod codec;
mod generate;
pub mod par;
mod picture;
mod play;
mod regulation;
mod square;
mod unit;
mod view;

pub use codec::PAYLOAD_SIZE;
pub use play::{End, Outcome, Play, Step, StopRefused};
use regulation::series_start;
pub use regulation::{
    chest_square, weighted_cents, ChestKind, ChestTable, GoldChoice, Rule, BOARD_SQUARES, BRONZE,
    CHESTS, DEFAULT_BLOCK_UNITS, GOLD, GOLD_ALTERNATIVES, GOLD_SQUARE, LOT_GOLD, LOT_STOPPED,
    MAX_BLOCK_UNITS, MAX_LIFE, MAX_PRIZE_CENTS, MAX_ROLLS, MIN_ROLLS, RULES, RULE_DENOMINATOR,
    SERIES, SILVER,
};
pub use square::Square;
pub use unit::Unit;
pub use view::{UnitView, PICTURE_LEGEND};

use crate::rng::Stream;

/// Trésors Ensablés as the shared machinery sees it (`super::GameRules`).
pub struct Rules;

impl Outcome {
    /// The outcome as a lot code and prize: gold reached, stopped with
    /// gains, or nothing.
    fn played(&self) -> super::Played {
        let lot = match self.end {
            End::Gold => LOT_GOLD,
            End::Stopped => LOT_STOPPED,
            End::Death => 0,
        };
        super::Played {
            lot,
            prize: super::Prize::Amount(self.prize_cents),
        }
    }
}

impl super::GameRules for Rules {
    fn slug(&self) -> &'static str {
        "tresors-ensables"
    }

    fn code(&self) -> u16 {
        2
    }

    fn id_prefix(&self) -> &'static str {
        "TE"
    }

    fn rules_version(&self) -> u16 {
        1
    }

    fn params(&self) -> [u8; 2] {
        [GOLD_SQUARE, MAX_LIFE]
    }

    fn payload_size(&self) -> usize {
        PAYLOAD_SIZE
    }

    fn prices_cents(&self) -> &'static [u32] {
        // Article 2: a unit costs 1 €.
        &[100]
    }

    fn prize_model(&self) -> super::PrizeModel {
        super::PrizeModel::Drawn
    }

    fn block_units(&self) -> u32 {
        DEFAULT_BLOCK_UNITS
    }

    fn max_units(&self) -> u32 {
        MAX_BLOCK_UNITS
    }

    fn generate_payload(&self, stream: &mut Stream, _lot: u8, out: &mut Vec<u8>) -> super::Played {
        let unit = Unit::generate(stream);
        unit.encode(out);
        unit.start().finish().played()
    }

    fn decode(&self, payload: &[u8]) -> Result<Box<dyn super::GameUnit>, super::InvalidUnit> {
        Ok(Box::new(Unit::decode(payload)?))
    }

    fn lot_name(&self, code: u8) -> Option<&'static str> {
        match code {
            LOT_GOLD => Some("coffre-or"),
            LOT_STOPPED => Some("arret"),
            _ => None,
        }
    }

    fn step_by_step(&self) -> bool {
        true
    }

    fn early_stop_refusal(&self, rolls: u32) -> String {
        format!(
            "no chest opened after {}; the player must roll until a first gain (3.2.4, 3.2.6)",
            crate::words::plural(rolls, "roll")
        )
    }
}

/// A unit as the shared machinery asks it: played roll by roll, with a
/// stop once a gain has been found.
impl super::GameUnit for Unit {
    fn outcome(&self, stop: Option<u32>) -> Result<super::Played, super::StopRefusal> {
        self.play(stop)
            .map(|o| o.played())
            .map_err(|e| super::StopRefusal::Refused(e.to_string()))
    }

    fn write_export_fields(&self, out: &mut Vec<u8>) {
        Unit::write_export_fields(self, out);
    }

    fn picture(&self, stop: Option<u32>) -> Result<String, super::StopRefusal> {
        Unit::picture(self, stop).map_err(|e| super::StopRefusal::Refused(e.to_string()))
    }

    fn drawing(&self, moment: super::Moment) -> Result<super::Picture, super::StopRefusal> {
        Unit::drawing(self, moment)
    }

    /// The board only: the dice and the chests' contents stay on the
    /// server until a roll reveals them.
    fn sale_view(&self) -> serde_json::Value {
        serde_json::json!({
            "board": self.board.iter().map(|q| q.token()).collect::<Vec<_>>(),
            "life": MAX_LIFE,
        })
    }

    fn tape(&self) -> Option<super::Tape> {
        Some(Unit::tape(self))
    }
}

#[cfg(test)]
mod tests;
