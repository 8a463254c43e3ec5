//! PAR sheets (docs/PAR.md): the figures a test lab certifies before a
//! game is sold. Return to player, hit frequency and the odds of every
//! prize, exact where the mathematics allows (rational arithmetic, no
//! floats), and cross-checks of the exact figures against the game engine
//! and against sealed blocks. This is the shared machinery; a game's own
//! PAR code (its exact method, its strategies) lives in its folder under
//! [`crate::game`].
//!
//! - [`table`]: a fixed-table game, straight from its lot table.
//! - [`engine`]: the cross-checks any drawn game gets from its own exact
//!   figures (Monte Carlo through its engine, a sealed block's units).
//! - [`sample`]: a sealed block's units against the exact figures, played
//!   to the end, with the game's own tally of every unit if it keeps one.
//!
//! A game gives its sheet through [`crate::game::GameRules::par_sheet`];
//! a fixed-table game that gives none gets [`table`]'s.

pub mod engine;
pub mod sample;
pub mod table;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use serde::Serialize;

use crate::block::authentic::AuthenticBlock;
use crate::derive;
use crate::game::Fields;

/// Appends a line to a sheet's text (writing to a `String` cannot fail).
macro_rules! line {
    ($out:expr) => {
        $out.push('\n')
    };
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($out, $($arg)*);
    }};
}
pub(crate) use line;

/// What `issuer par` asks of a game ([`crate::game::GameRules::par_sheet`]).
pub struct ParRequest<'a> {
    /// The price; `None`: every price of the game.
    pub price_cents: Option<u32>,
    /// Boards drawn for optimal play (a game the player sees a board of).
    pub boards: u64,
    /// How many of those are also solved in exact arithmetic.
    pub exact_boards: u64,
    /// Units of the Monte Carlo through the game engine.
    pub samples: u64,
    /// The seed of the draws; `None`: [`default_seed`] of each purpose.
    pub seed: Option<[u8; 32]>,
    /// A sealed block of the game (at the price) to check against the sheet.
    pub block: Option<&'a AuthenticBlock>,
}

impl ParRequest<'_> {
    /// The seed of the draws for `what` (`units`, `boards`).
    pub fn seed(&self, what: &str) -> [u8; 32] {
        self.seed.unwrap_or_else(|| default_seed(what))
    }
}

/// A game's PAR sheet: the members `par --json` prints after `game`, and
/// the same as text.
#[derive(Clone, Debug, Default)]
pub struct ParSheet {
    /// The JSON members, in order.
    pub members: Fields,
    /// The sheet as text.
    pub text: String,
    /// With a block: whether it passed its checks against the sheet
    /// (`issuer par --block` exits 1 when not).
    pub block_ok: Option<bool>,
}

/// A block's verdict against a PAR sheet, at one level, and why.
#[derive(Clone, Debug, Serialize)]
pub struct BlockVerdict {
    /// The level.
    pub level: f64,
    /// The block agrees with the sheet.
    pub pass: bool,
    /// Why, in words.
    pub reason: String,
    /// The tests judged (Holm over them), if any.
    pub tests: Vec<crate::evidence::StatTest>,
}

impl BlockVerdict {
    /// The verdict as a line of text.
    pub fn line(&self) -> String {
        let at = match self.level {
            0.0 => "(exact)".to_string(),
            level => format!("at {level}"),
        };
        format!(
            "  verdict {at}: {} — {}",
            if self.pass { "pass" } else { "FAIL" },
            self.reason
        )
    }
}

impl ParSheet {
    /// This sheet and member `name` (any serialisable figure) last.
    pub fn with(mut self, name: &'static str, value: &impl Serialize) -> ParSheet {
        let value = serde_json::to_value(value).expect("PAR figures serialise");
        self.members = self.members.with(name, value);
        self
    }
}

/// An exact figure as text.
pub fn x(e: &Exact) -> String {
    e.decimal(TEXT_PLACES)
}

/// An estimate and its z-score as text.
pub fn z(e: &Estimate) -> String {
    format!("{:.6} ±{:.6} z {:+.2}", e.mean, e.standard_error, e.z)
}

/// Decimal places of an exact figure in text output (the issue asks for
/// at least 10).
pub const TEXT_PLACES: u32 = 12;
/// Decimal places of an exact figure's `decimal` string in JSON.
pub const JSON_PLACES: u32 = 20;

/// An exact figure: a rational number. Printed as a decimal rounded half
/// away from zero; in JSON as `{"decimal": "…", "fraction": "n/d"}`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Exact(pub BigRational);

impl Exact {
    /// `numerator / denominator`.
    pub fn ratio(numerator: impl Into<BigInt>, denominator: impl Into<BigInt>) -> Exact {
        Exact(BigRational::new(numerator.into(), denominator.into()))
    }

    /// The value as a decimal string with `places` places, rounded half
    /// away from zero ("0.700000000000").
    pub fn decimal(&self, places: u32) -> String {
        let scale = BigInt::from(10u32).pow(places);
        let scaled = self.0.abs() * BigRational::from_integer(scale);
        let half = BigRational::new(BigInt::one(), BigInt::from(2));
        let rounded = (scaled + half).floor().to_integer();
        let mut digits = rounded.to_string();
        let places = places as usize;
        if digits.len() <= places {
            digits = format!("{}{digits}", "0".repeat(places + 1 - digits.len()));
        }
        let (int, frac) = digits.split_at(digits.len() - places);
        let sign = if self.0.is_negative() && !rounded.is_zero() {
            "-"
        } else {
            ""
        };
        match places {
            0 => format!("{sign}{int}"),
            _ => format!("{sign}{int}.{frac}"),
        }
    }

    /// The value as the fraction "n/d" in lowest terms ("7/10", "3").
    pub fn fraction(&self) -> String {
        self.0.to_string()
    }

    /// The nearest f64, for statistics only (z-scores), never for money.
    pub fn to_f64(&self) -> f64 {
        self.0.to_f64().unwrap_or(f64::NAN)
    }
}

impl Serialize for Exact {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Exact", 2)?;
        st.serialize_field("decimal", &self.decimal(JSON_PLACES))?;
        st.serialize_field("fraction", &self.fraction())?;
        st.end()
    }
}

/// "1 in X": the reciprocal of a probability (`None` for a probability of
/// zero).
pub fn one_in(probability: &Exact) -> Option<Exact> {
    (!probability.0.is_zero()).then(|| Exact(probability.0.recip()))
}

/// A figure estimated from samples (a Monte Carlo, a block's units),
/// compared with its exact value. f64: statistics only.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// The sample mean.
    pub mean: f64,
    /// Its standard error (sample standard deviation / √n).
    pub standard_error: f64,
    /// (mean − exact) / standard error; 0 when both are equal, and
    /// infinite when they differ with no sampling error.
    pub z: f64,
}

impl Estimate {
    /// An estimate from `n` samples with sum `sum` and sum of squares
    /// `squares`, each sample divided by `per` (e.g. cents per price),
    /// compared with `exact`; the mean's difference from `exact` is taken
    /// exactly, so a block that pays exactly its table has z = 0.
    pub fn from_sums(n: u64, sum: u128, squares: u128, per: u64, exact: &Exact) -> Estimate {
        let samples = u128::from(n);
        let mean = BigRational::new(BigInt::from(sum), BigInt::from(samples * u128::from(per)));
        let diff = (&mean - &exact.0).to_f64().unwrap_or(f64::NAN);
        // Sample variance with n − 1, from the exact integer sums.
        let variance = if n > 1 {
            let centred = (squares * samples).saturating_sub(sum * sum) as f64;
            centred / (n as f64 * (n as f64 - 1.0)) / (per as f64).powi(2)
        } else {
            0.0
        };
        let standard_error = (variance / n as f64).sqrt();
        Estimate {
            mean: mean.to_f64().unwrap_or(f64::NAN),
            standard_error,
            z: if diff == 0.0 {
                0.0
            } else {
                diff / standard_error
            },
        }
    }

    /// An estimate of mean `mean` with standard error `standard_error`.
    pub fn of(mean: f64, standard_error: f64, exact: &Exact) -> Estimate {
        let diff = mean - exact.to_f64();
        let z = if diff == 0.0 {
            0.0
        } else {
            diff / standard_error
        };
        Estimate {
            mean,
            standard_error,
            z,
        }
    }
}

/// The fixed seed of a PAR computation's random draws (Monte Carlo units,
/// boards for optimal play): SHA-256 of `ticket-issuer/v1/par/<what>`, so
/// anyone can reproduce the sheet (docs/PAR.md).
pub fn default_seed(what: &str) -> [u8; 32] {
    derive::sha256(format!("ticket-issuer/v1/par/{what}").as_bytes())
}

/// Cents as an exact number of euros.
pub fn euros(cents: impl Into<BigInt>) -> BigRational {
    BigRational::new(cents.into(), BigInt::from(100))
}

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
