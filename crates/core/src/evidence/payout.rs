//! The French payout rule (Code de la sécurité intérieure, art. D.322-10;
//! docs/AUDIT.md §Payout rule quotes it): each figure of a game's return
//! against each band, exactly (rational arithmetic).

use num_bigint::BigInt;
use num_rational::BigRational;
use serde::Serialize;

use crate::par::Exact;

/// Which kind of instant lottery game a game is under D.322-10 II
/// (docs/GAMES.md says why each game is what it is).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstantCategory {
    /// « Jeu de grattage »: a pool of units issued in emissions, each
    /// decided in advance (62 % to 75 % to winners).
    Scratch,
    /// « Jeu à aléa immédiat »: each play drawn on the spot from published
    /// probabilities (65 % to 75 % to winners).
    ImmediateDraw,
    /// Not declared by the game: only the expectation band (I) is judged.
    Undeclared,
}

/// A figure of a game's return the payout rule is checked against.
#[derive(Clone, Debug, Serialize)]
pub struct ReturnFigure {
    /// In words ("PAR sheet: the lot table at 1 €", "PAR sheet: never stop").
    pub figure: String,
    /// The share of stakes paid to winners.
    pub rate: Exact,
    /// The rule is judged on it (the return the game is built to give);
    /// other figures are a player's own choices, reported only.
    pub binding: bool,
    /// How it is known (exact, or an estimate with its standard error).
    pub note: String,
    /// An estimate's standard error, as a share of stakes (`None`: exact).
    pub standard_error: Option<f64>,
}

/// One band of D.322-10.
struct Band {
    article: &'static str,
    what: &'static str,
    /// The band's ends, as fractions of stakes (numerator, denominator).
    low: (i64, i64),
    high: (i64, i64),
}

/// I: every lottery game's mathematical expectation.
const EXPECTATION: Band = Band {
    article: "D.322-10 I",
    what: "mathematical expectation of a lottery game",
    low: (45, 100),
    high: (75, 100),
};
/// II 1°: a scratch game's share to winners.
const SCRATCH: Band = Band {
    article: "D.322-10 II 1°",
    what: "share of stakes to winners of a « jeu de grattage »",
    low: (62, 100),
    high: (75, 100),
};
/// II 2°: an immediate-draw game's share to winners.
const IMMEDIATE: Band = Band {
    article: "D.322-10 II 2°",
    what: "share of stakes to winners of a « jeu à aléa immédiat »",
    low: (65, 100),
    high: (75, 100),
};
/// III: the average over every scratch game and many emissions.
const SCRATCH_AVERAGE: Band = Band {
    article: "D.322-10 III",
    what: "average share to winners over all scratch games and a significant number of emissions",
    low: (50, 100),
    high: (705, 1000),
};

/// One figure against one band.
#[derive(Clone, Debug, Serialize)]
pub struct BandCheck {
    /// The figure, in words ("PAR sheet: never stop").
    pub figure: String,
    /// Where it comes from: `par` (exact) or `blocks` (the sealed units).
    pub source: String,
    /// The return, as a share of stakes (12 decimals).
    pub rate: String,
    /// The article and band.
    pub article: String,
    /// What the band bounds.
    pub band: String,
    /// The band's ends, as shares of stakes.
    pub low: String,
    /// Its high end.
    pub high: String,
    /// The band applies to this game (its category).
    pub applies: bool,
    /// The figure is within the band.
    pub met: bool,
    /// The band is judged on this figure: a miss fails the audit. Other
    /// figures (a player's own strategy) are reported, not judged.
    pub binding: bool,
    /// Why it meets or misses, in words.
    pub why: String,
    /// An estimate's standard error (share of stakes); absent for an
    /// exact figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standard_error: Option<f64>,
    /// An estimate outside the band: by how many standard errors, and
    /// whether that is beyond the 99 % one-sided bound (z > 2.326). A miss
    /// that is not significant may be the estimate's noise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub z: Option<f64>,
    /// Whether `z` is significant at 99 % (one-sided).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub significant: Option<bool>,
}

/// The one-sided 99 % quantile of the standard normal law.
pub const Z_99: f64 = 2.326_347_874_040_841;

/// `figure` against every band of D.322-10 for a game of `category`, as
/// [`bands`]; an estimate's miss says how many standard errors it is
/// beyond the band, and whether that is significant at 99 %.
pub fn bands_of(category: InstantCategory, figure: &ReturnFigure, source: &str) -> Vec<BandCheck> {
    let mut out = bands(
        category,
        &figure.figure,
        source,
        &figure.rate,
        figure.binding,
    );
    let Some(se) = figure.standard_error.filter(|se| *se > 0.0) else {
        return out;
    };
    for b in &mut out {
        b.standard_error = Some(se);
        if !b.applies || b.met {
            continue;
        }
        let (rate, low, high) = (
            b.rate.parse::<f64>().unwrap_or(f64::NAN),
            b.low.parse::<f64>().unwrap_or(f64::NAN),
            b.high.parse::<f64>().unwrap_or(f64::NAN),
        );
        let z = if rate > high {
            (rate - high) / se
        } else {
            (low - rate) / se
        };
        let significant = z > Z_99;
        b.z = Some(z);
        b.significant = Some(significant);
        b.why.push_str(&format!(
            "; an estimate with standard error {:.2} points: {z:.2} standard errors beyond the band, {} at 99 % (one-sided, z > {Z_99:.3})",
            se * 100.0,
            if significant { "significant" } else { "not significant" }
        ));
    }
    out
}

/// `rate` (a share of stakes) against every band of D.322-10 for a game
/// of `category`; `binding`: the figure the rule is judged on.
pub fn bands(
    category: InstantCategory,
    figure: &str,
    source: &str,
    rate: &Exact,
    binding: bool,
) -> Vec<BandCheck> {
    let mut out = Vec::new();
    for (band, applies, why_not) in [
        (&EXPECTATION, true, ""),
        (
            &SCRATCH,
            category == InstantCategory::Scratch,
            "not a scratch game (docs/GAMES.md)",
        ),
        (
            &IMMEDIATE,
            category == InstantCategory::ImmediateDraw,
            "not an immediate-draw game (docs/GAMES.md)",
        ),
        (
            &SCRATCH_AVERAGE,
            false,
            "an average over every scratch game of the operator and many emissions: not judged on one game's emission",
        ),
    ] {
        let fraction = |(n, d): (i64, i64)| BigRational::new(BigInt::from(n), BigInt::from(d));
        let (low, high) = (fraction(band.low), fraction(band.high));
        let met = rate.0 >= low && rate.0 <= high;
        let points = |r: &BigRational| Exact(r * BigInt::from(100)).decimal(2);
        let why = if !applies {
            why_not.to_string()
        } else if met {
            format!(
                "{} % is within {} % to {} %",
                points(&rate.0),
                points(&low),
                points(&high)
            )
        } else if rate.0 < low {
            format!(
                "{} % is below the floor of {} % by {} points",
                points(&rate.0),
                points(&low),
                points(&(&low - &rate.0))
            )
        } else {
            format!(
                "{} % is above the ceiling of {} % by {} points",
                points(&rate.0),
                points(&high),
                points(&(&rate.0 - &high))
            )
        };
        out.push(BandCheck {
            figure: figure.to_string(),
            source: source.to_string(),
            rate: rate.decimal(12),
            article: band.article.to_string(),
            band: band.what.to_string(),
            low: Exact(low).decimal(3),
            high: Exact(high).decimal(3),
            applies,
            met,
            binding: binding && applies,
            why,
            standard_error: None,
            z: None,
            significant: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seventy_percent_meets_the_scratch_band_and_sixty_misses_the_immediate_one() {
        let seventy = Exact::ratio(7, 10);
        let b = bands(InstantCategory::Scratch, "table", "par", &seventy, true);
        assert!(b.iter().filter(|b| b.applies).all(|b| b.met), "{b:?}");
        assert_eq!(b.iter().filter(|b| b.binding).count(), 2);
        let sixty = Exact::ratio(60, 100);
        let b = bands(InstantCategory::ImmediateDraw, "x", "par", &sixty, true);
        let immediate = b.iter().find(|b| b.article == "D.322-10 II 2°").unwrap();
        assert!(immediate.applies && !immediate.met);
        assert!(immediate
            .why
            .contains("below the floor of 65.00 % by 5.00 points"));
        let expectation = b.iter().find(|b| b.article == "D.322-10 I").unwrap();
        assert!(expectation.met);
        // The ends are inside the band.
        let b = bands(
            InstantCategory::Scratch,
            "x",
            "par",
            &Exact::ratio(3, 4),
            true,
        );
        assert!(b.iter().filter(|b| b.applies).all(|b| b.met));
    }
}
