//! A game's analysis, the layer above its rules: its PAR sheet, its
//! audit tally, the figures of its return and its kind under the payout
//! rule ([`GameAnalysis`]). A game registers its analysis beside its rules
//! ([`register`]); the built-in games are listed in `registry.rs`.
//!
//! - `game`: the trait, and what a game without its own analysis gets;
//! - `registry`: which analysis is each game's, and the calls on
//!   [`crate::game::Game`] that go through it (`game.par_sheet(…)`).

mod game;
mod registry;

pub use game::{table_return_figures, GameAnalysis};
pub use registry::{analysis_of, register};
