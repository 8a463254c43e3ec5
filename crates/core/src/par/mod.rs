//! PAR sheets (docs/PAR.md): the figures a test lab certifies before a
//! game is sold. Return to player, hit frequency and the odds of every
//! prize, exact where the mathematics allows (rational arithmetic, no
//! floats), and cross-checks of the exact figures against the game engine
//! and against sealed blocks. This is the shared machinery; a game's own
//! PAR code (its exact method, its strategies) lives in its folder under
//! [`crate::game`].
//!
//! - [`figures`]: exact and estimated figures, as text and JSON.
//! - [`sheet`]: what is asked of a game ([`ParRequest`]) and what it gives.
//! - [`table`]: a fixed-table game, straight from its lot table.
//! - [`engine`]: the cross-checks any drawn game gets from its own exact
//!   figures (Monte Carlo through its engine, a sealed block's units).
//! - [`sample`]: a sealed block's units against the exact figures, played
//!   to the end, with the game's own tally of every unit if it keeps one.
//!
//! A game gives its sheet through [`crate::analysis::GameAnalysis::par_sheet`];
//! a fixed-table game that gives none gets [`table`]'s.

pub mod engine;
pub mod figures;
mod lot_sheet;
pub mod sample;
pub mod sheet;
pub mod table;

pub(crate) use figures::line;
pub use figures::{default_seed, euros, one_in, x, z, Estimate, Exact, JSON_PLACES, TEXT_PLACES};
pub use sheet::{BlockVerdict, ParOption, ParRequest, ParSheet};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_round_half_away_from_zero() {
        assert_eq!(Exact::ratio(7, 10).decimal(3), "0.700");
        assert_eq!(Exact::ratio(2, 3).decimal(4), "0.6667");
        assert_eq!(Exact::ratio(1, 8).decimal(2), "0.13");
        assert_eq!(Exact::ratio(-1, 8).decimal(2), "-0.13");
        assert_eq!(Exact::ratio(-1, 1000).decimal(2), "0.00");
        assert_eq!(Exact::ratio(450_000, 119_604).decimal(2), "3.76");
        assert_eq!(Exact::ratio(10_000, 1).decimal(0), "10000");
        assert_eq!(Exact::ratio(1, 3).fraction(), "1/3");
        assert_eq!(Exact::ratio(6, 2).fraction(), "3");
    }

    #[test]
    fn estimates_from_integer_sums() {
        // Samples 0, 2, 4: mean 2, sample variance 4, standard error 2/√3.
        let e = Estimate::from_sums(3, 6, 20, 1, &Exact::ratio(2, 1));
        assert_eq!(e.mean, 2.0);
        assert!((e.standard_error - 2.0 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(e.z, 0.0);
        // Divided by 2: mean 1, standard error 1/√3, z = √3 against 0.
        let e = Estimate::from_sums(3, 6, 20, 2, &Exact::ratio(0, 1));
        assert_eq!(e.mean, 1.0);
        assert!((e.z - 3f64.sqrt()).abs() < 1e-9);
    }
}
