//! The figures of a PAR sheet: exact ([`Exact`], rational, no floats) and
//! estimated ([`Estimate`]), as text and JSON, and the seeds of its draws.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use serde::Serialize;

use crate::derive;

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
