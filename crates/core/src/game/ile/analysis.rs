//! L'île au trésor's analysis: its PAR sheet (straight from its lot
//! table), its audit tally and its kind under the payout rule.

use super::audit::Tally;
use crate::analysis::GameAnalysis;
use crate::error::Error;
use crate::evidence::payout::InstantCategory;
use crate::evidence::tally::GameTally;
use crate::game::Game;
use crate::par::{table, ParRequest, ParSheet};

/// L'île au trésor as the PAR sheet and the audit see it.
pub struct Analysis;

impl GameAnalysis for Analysis {
    /// Straight from the lot table (article 3).
    fn par_sheet(&self, game: Game, request: &ParRequest<'_>) -> Result<ParSheet, Error> {
        table::par_sheet(game, request)
    }

    fn audit_tally(&self) -> Option<Box<dyn GameTally>> {
        Some(Box::<Tally>::default())
    }

    /// A pool of units issued in emissions of 450,000, each decided in
    /// advance: a scratch game (docs/GAMES.md §Payout rule).
    fn instant_category(&self) -> InstantCategory {
        InstantCategory::Scratch
    }
}
