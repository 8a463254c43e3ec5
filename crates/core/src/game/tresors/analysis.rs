//! Trésors Ensablés' analysis: its PAR sheet ([`super::par`]), its audit
//! tally, the figures of its return and its kind under the payout rule.

use super::audit::{return_figures, Tally};
use super::par::{par_sheet, OPTIONS};
use crate::analysis::GameAnalysis;
use crate::error::Error;
use crate::evidence::payout::{InstantCategory, ReturnFigure};
use crate::evidence::tally::GameTally;
use crate::game::Game;
use crate::par::{ParOption, ParRequest, ParSheet};

/// Trésors Ensablés as the PAR sheet and the audit see it.
pub struct Analysis;

impl GameAnalysis for Analysis {
    fn par_sheet(&self, _game: Game, request: &ParRequest<'_>) -> Result<ParSheet, Error> {
        par_sheet(request)
    }

    fn par_options(&self) -> &'static [ParOption] {
        &OPTIONS
    }

    fn audit_tally(&self) -> Option<Box<dyn GameTally>> {
        Some(Box::<Tally>::default())
    }

    fn return_figures(&self, _game: Game, _price_cents: u32) -> Vec<ReturnFigure> {
        return_figures()
    }

    /// « Jeu à tirages immédiats en ligne » (its regulation's title): each
    /// unit drawn from published probabilities, an immediate-draw game
    /// (docs/GAMES.md §Payout rule).
    fn instant_category(&self) -> InstantCategory {
        InstantCategory::ImmediateDraw
    }
}
