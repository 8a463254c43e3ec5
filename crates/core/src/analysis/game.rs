//! [`GameAnalysis`]: what a game gives the PAR sheet and the audit.

use crate::error::Error;
use crate::evidence::payout::{InstantCategory, ReturnFigure};
use crate::evidence::tally::GameTally;
use crate::game::Game;
use crate::money::Cents;
use crate::par::{Exact, ParOption, ParRequest, ParSheet};

/// A game's analysis (docs/PAR.md, docs/AUDIT.md): taken from the units
/// it authenticates and the game's own rules, never from a block type.
pub trait GameAnalysis: Send + Sync + 'static {
    /// The game's PAR sheet (docs/PAR.md): what `issuer par` prints. A
    /// fixed-table game can give [`crate::par::table::par_sheet`]; a drawn
    /// game its exact figures through [`crate::par::engine::par_sheet`],
    /// which adds the cross-checks.
    fn par_sheet(&self, game: Game, request: &ParRequest<'_>) -> Result<ParSheet, Error>;
    /// The options its PAR sheet takes (`issuer par --option NAME=N`),
    /// read back with [`ParRequest::option`]. None by default.
    fn par_options(&self) -> &'static [ParOption] {
        &[]
    }
    /// What the game tallies over a block's units for the audit (its
    /// draws against the regulation, presentation neutrality; docs/AUDIT.md):
    /// a fresh tally, one per chunk. `None`: the shared tests only.
    fn audit_tally(&self) -> Option<Box<dyn GameTally>> {
        None
    }
    /// The figures of the game's return at `price_cents` that the payout
    /// rule is checked against (docs/AUDIT.md §Payout rule): by default
    /// its regulation lot table's ([`table_return_figures`]); a game where
    /// the player decides gives one per strategy of its PAR sheet.
    fn return_figures(&self, game: Game, price_cents: u32) -> Vec<ReturnFigure> {
        table_return_figures(game, price_cents)
    }
    /// The game's kind under the French payout rule (CSI art. D.322-10 II;
    /// docs/GAMES.md says why each game is what it is).
    fn instant_category(&self) -> InstantCategory {
        InstantCategory::Undeclared
    }
}

/// The return of a fixed-table game at `price_cents`: its regulation lot
/// table's, binding (none for a drawn game).
pub fn table_return_figures(game: Game, price_cents: u32) -> Vec<ReturnFigure> {
    match game.regulation_table(price_cents) {
        Some(table) => {
            let stakes = u64::from(game.block_units()) * u64::from(price_cents);
            vec![ReturnFigure {
                figure: format!("PAR sheet: the lot table at {} €", Cents::from(price_cents)),
                rate: Exact::ratio(table.total_cents(), stakes.max(1)),
                binding: true,
                note: "exact: the table's total over a block's stakes".into(),
                standard_error: None,
            }]
        }
        None => Vec::new(),
    }
}
