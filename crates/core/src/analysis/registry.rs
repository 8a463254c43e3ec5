//! Which analysis is each game's: the built-in games' here, a game made
//! elsewhere's by [`register`]; and the calls on [`Game`] that go through
//! it, so that `game.par_sheet(…)` reads as before.

use std::sync::RwLock;

use super::game::{table_return_figures, GameAnalysis};
use crate::error::Error;
use crate::evidence::payout::{InstantCategory, ReturnFigure};
use crate::evidence::tally::GameTally;
use crate::game::{ile, tresors, Game, GameRules};
use crate::par::{ParOption, ParRequest, ParSheet};

/// The built-in games' analyses, beside their rules (`game::handle`).
static BUILT_IN: [(Game, &dyn GameAnalysis); 2] = [
    (Game::ILE_AU_TRESOR, &ile::analysis::Analysis),
    (Game::TRESORS_ENSABLES, &tresors::analysis::Analysis),
];

/// The analyses registered at run time, by header code.
static REGISTERED: RwLock<Vec<(u16, &'static dyn GameAnalysis)>> = RwLock::new(Vec::new());

/// Registers a game made outside this crate, its rules ([`Game::register`])
/// and its analysis together; registering it again gives it back.
pub fn register(
    rules: &'static dyn GameRules,
    analysis: &'static dyn GameAnalysis,
) -> Result<Game, String> {
    let game = Game::register(rules)?;
    let mut list = REGISTERED.write().unwrap_or_else(|p| p.into_inner());
    if !list.iter().any(|(code, _)| *code == game.code()) {
        list.push((game.code(), analysis));
    }
    Ok(game)
}

/// The analysis of `game`, if it has one.
pub fn analysis_of(game: Game) -> Option<&'static dyn GameAnalysis> {
    if let Some((_, analysis)) = BUILT_IN.iter().find(|(g, _)| *g == game) {
        return Some(*analysis);
    }
    let list = REGISTERED.read().unwrap_or_else(|p| p.into_inner());
    list.iter()
        .find(|(code, _)| *code == game.code())
        .map(|(_, analysis)| *analysis)
}

impl Game {
    /// The options of the game's PAR sheet ([`GameAnalysis::par_options`]).
    pub fn par_options(self) -> &'static [ParOption] {
        analysis_of(self).map_or(&[], |a| a.par_options())
    }

    /// The game's PAR sheet ([`GameAnalysis::par_sheet`]); refused for a
    /// game registered without an analysis.
    pub fn par_sheet(self, request: &ParRequest<'_>) -> Result<ParSheet, Error> {
        match analysis_of(self) {
            Some(analysis) => analysis.par_sheet(self, request),
            None => Err(Error::Internal {
                what: format!(
                    "game {} has no PAR sheet (no analysis registered)",
                    self.slug()
                ),
            }),
        }
    }

    /// A fresh audit tally of the game ([`GameAnalysis::audit_tally`]).
    pub fn audit_tally(self) -> Option<Box<dyn GameTally>> {
        analysis_of(self).and_then(|a| a.audit_tally())
    }

    /// The figures of its return at `price_cents`
    /// ([`GameAnalysis::return_figures`]).
    pub fn return_figures(self, price_cents: u32) -> Vec<ReturnFigure> {
        match analysis_of(self) {
            Some(analysis) => analysis.return_figures(self, price_cents),
            None => table_return_figures(self, price_cents),
        }
    }

    /// Its kind under the payout rule ([`GameAnalysis::instant_category`]).
    pub fn instant_category(self) -> InstantCategory {
        analysis_of(self).map_or(InstantCategory::Undeclared, |a| a.instant_category())
    }
}
