//! Trésors Ensablés' audit tally (docs/AUDIT.md §Trésors Ensablés): every
//! draw the regulation specifies against its published probabilities (the
//! dice, the series of 3.2.2 as the rules place and draw them, each
//! chest's values of 3.3.2), the prizes played to the end against their
//! exact law, and the block's return under each strategy of the PAR sheet,
//! judged fairly for the 10,000 € lot: the return without it by its
//! z-score, and the count of 10,000 € lots by the Poisson law.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use num_traits::ToPrimitive;
use serde_json::json;

use super::par::exact::{exact_sheet, prize_law_to_end, ExactSheet, PRICE_CENTS};
use super::par::kernel::{series_distribution, SERIES_DENOMINATOR};
use super::par::sample::{strategy_tests, SampledStrategy, Tally as StrategyTally};
use super::{series_start, ChestKind, Unit, CHESTS, MIN_ROLLS, SERIES};
use crate::evidence::block::{fit, GameFindings, GameTally, TallyScope};
use crate::evidence::{Plot, PlotKind, Series, StatTest};
use crate::par::sample::UnitTally;

/// The exact figures and laws, computed once per process.
struct Laws {
    sheet: ExactSheet,
    /// Series codes → index, and each series' probability.
    series: BTreeMap<[u8; 5], usize>,
    series_p: Vec<f64>,
    /// The prize played to the end: (cents, probability).
    prizes: Vec<(u32, f64)>,
}

fn laws() -> &'static Laws {
    static LAWS: OnceLock<Laws> = OnceLock::new();
    LAWS.get_or_init(|| {
        let distribution = series_distribution();
        Laws {
            sheet: exact_sheet(),
            series: distribution
                .iter()
                .enumerate()
                .map(|(i, (s, _))| (s.map(|q| q as u8), i))
                .collect(),
            series_p: distribution
                .iter()
                .map(|(_, w)| *w as f64 / SERIES_DENOMINATOR as f64)
                .collect(),
            prizes: prize_law_to_end()
                .into_iter()
                .map(|(c, p)| (c, p.to_f64().unwrap_or(f64::NAN)))
                .collect(),
        }
    })
}

/// The kinds of chests, in the order of the tally's rows.
const KINDS: [ChestKind; 3] = [ChestKind::Bronze, ChestKind::Silver, ChestKind::Gold];

/// A block's draws.
#[derive(Default)]
pub(crate) struct Tally {
    /// Faces of the first ten dice of every unit (every tape has ten).
    faces: [u64; 6],
    /// Series by their index in the exact law.
    series: Vec<u64>,
    /// Chest values by kind (bronze, silver, gold), by their line in 3.3.2.
    chests: [Vec<u64>; 3],
    /// Prizes played to the end: cents → units.
    prizes: BTreeMap<u32, u64>,
    /// Every strategy replayed.
    strategies: StrategyTally,
}

impl GameTally for Tally {
    fn add(&mut self, _index: u32, payload: &[u8], prize_cents: u32) -> Result<(), String> {
        let laws = laws();
        let unit = Unit::decode(payload)?;
        for &d in &unit.dice()[..MIN_ROLLS] {
            self.faces[usize::from(d) - 1] += 1;
        }
        if self.series.is_empty() {
            self.series = vec![0; laws.series_p.len()];
            for (k, kind) in KINDS.iter().enumerate() {
                self.chests[k] = vec![0; kind.table().cents.len()];
            }
        }
        for s in 0..SERIES {
            let first = series_start(s);
            let mut codes = [0u8; 5];
            for (c, q) in codes.iter_mut().zip(&unit.board()[first..first + 5]) {
                *c = *q as u8;
            }
            let i = laws
                .series
                .get(&codes)
                .ok_or_else(|| format!("series {} is none the rules can draw", s + 1))?;
            self.series[*i] += 1;
        }
        for k in 0..CHESTS {
            let row = KINDS
                .iter()
                .position(|&kind| kind == ChestKind::of_chest(k))
                .unwrap_or(0);
            self.chests[row][usize::from(unit.chest_index(k))] += 1;
        }
        *self.prizes.entry(prize_cents).or_default() += 1;
        self.strategies.add_unit(&unit)
    }

    fn merge(&mut self, other: Box<dyn GameTally>) {
        let Ok(o) = other.into_any().downcast::<Tally>() else {
            unreachable!("a chunk's tally is made by the same game");
        };
        let o = *o;
        for (a, b) in self.faces.iter_mut().zip(o.faces) {
            *a += b;
        }
        add(&mut self.series, &o.series);
        for (a, b) in self.chests.iter_mut().zip(&o.chests) {
            add(a, b);
        }
        for (c, n) in o.prizes {
            *self.prizes.entry(c).or_default() += n;
        }
        let mine = std::mem::take(&mut self.strategies);
        self.strategies = mine.merge(o.strategies);
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }

    fn findings(&self, s: &TallyScope<'_>) -> GameFindings {
        let laws = laws();
        let mut tests = Vec::new();
        let mut plots = Vec::new();
        // `x`: the names of the table's lines, when the fit is plotted.
        let mut fits =
            |what: &str, slug: &str, observed: &[u64], p: &[f64], x: Option<Vec<String>>| {
                let id = format!("{}/{slug}", s.id);
                let name = format!("{what} against the regulation's probabilities");
                if observed.iter().sum::<u64>() == 0 {
                    tests.push(StatTest::not_run(
                        id,
                        s.scope,
                        &name,
                        "Pearson chi-square",
                        "no draw in the block".into(),
                    ));
                    return;
                }
                tests.push(StatTest::chi_square(id, s.scope, &name, &fit(observed, p)));
                if let Some(x) = x {
                    plots.push(expected_plot(s, slug, what, observed, p, x));
                }
            };
        fits(
            "dice faces (the first ten rolls of every unit)",
            "dice",
            &self.faces,
            &[1.0 / 6.0; 6],
            Some((1..=6).map(|face| face.to_string()).collect()),
        );
        fits(
            "series of five squares (3.2.2: the rules' placement and outcomes)",
            "series",
            &self.series,
            &laws.series_p,
            None,
        );
        for (k, kind) in KINDS.iter().enumerate() {
            let t = kind.table();
            let p: Vec<f64> = t
                .weights
                .iter()
                .map(|&w| f64::from(w) / f64::from(t.denominator))
                .collect();
            fits(
                &format!("{} chest values (3.3.2)", kind.name()),
                &format!("chest-{}", kind.name()),
                &self.chests[k],
                &p,
                Some(
                    t.cents
                        .iter()
                        .map(|&c| format!("{} €", crate::money::Cents::from(c)))
                        .collect(),
                ),
            );
        }
        // The prizes played to the end, against their exact law.
        let (prizes, observed, p) = self.prizes_test(s, laws);
        tests.push(prizes);
        plots.push(prizes_plot(s, &observed, &p));
        // The return under each strategy.
        let sampled = self.strategies.figures(&laws.sheet);
        tests.extend(strategy_tests(
            s.scope,
            s.id,
            s.units,
            &sampled,
            &laws.sheet,
        ));
        plots.push(return_plot(s, &sampled, &laws.sheet));
        GameFindings {
            tests,
            checks: Vec::new(),
            plots,
            figures: json!({
                "price": crate::money::Cents::from(PRICE_CENTS).to_string(),
                "strategies": sampled,
                "exact": laws.sheet.strategies.iter().map(|x| json!({
                    "strategy": x.strategy,
                    "rtp": x.rtp.decimal(12),
                    "rtp_without_jackpot": x.rtp_without_jackpot.decimal(12),
                    "gold_alive": x.gold_alive.decimal(12),
                })).collect::<Vec<_>>(),
            }),
        }
    }
}

impl Tally {
    /// The prizes played to the end against their exact law (a support
    /// check first: an amount the rules cannot give fails it), with the
    /// observed counts and the law's probabilities, for the plot.
    fn prizes_test(&self, s: &TallyScope<'_>, laws: &Laws) -> (StatTest, Vec<u64>, Vec<f64>) {
        let observed: Vec<u64> = laws
            .prizes
            .iter()
            .map(|(c, _)| self.prizes.get(c).copied().unwrap_or(0))
            .collect();
        let unexpected: u64 = self
            .prizes
            .iter()
            .filter(|(&c, _)| laws.prizes.binary_search_by_key(&c, |(v, _)| *v).is_err())
            .map(|(_, n)| n)
            .sum();
        let p: Vec<f64> = laws.prizes.iter().map(|(_, p)| *p).collect();
        let id = format!("{}/prizes", s.id);
        let name = "prizes played to the end against the exact law of the PAR mathematics";
        let test = if unexpected > 0 {
            StatTest::ran(
                id,
                s.scope,
                name,
                "support check",
                unexpected as f64,
                None,
                0.0,
            )
            .noted(format!(
                "{unexpected} units pay an amount the rules cannot give"
            ))
        } else {
            StatTest::chi_square(id, s.scope, name, &fit(&observed, &p))
        };
        (test, observed, p)
    }
}

/// The return without the 10,000 € lot found under each strategy, beside
/// the exact figure and its 99 % band; and each strategy's exact return
/// with the lot, against the band of D.322-10 II 2° drawn as lines (65 %
/// and 75 %: the rule is judged on never stop, docs/AUDIT.md §The payout
/// rule).
fn return_plot(s: &TallyScope<'_>, sampled: &[SampledStrategy], sheet: &ExactSheet) -> Plot {
    let mut points = Vec::new();
    let mut exact_points = Vec::new();
    let mut whole = Vec::new();
    let mut bands = Vec::new();
    for (i, (got, exact)) in sampled.iter().zip(&sheet.strategies).enumerate() {
        let e = &got.rtp_without_jackpot;
        let x = i as f64;
        let exact_f = exact.rtp_without_jackpot.0.to_f64().unwrap_or(f64::NAN);
        points.push([x, e.mean]);
        exact_points.push([x, exact_f]);
        whole.push([x, exact.rtp.0.to_f64().unwrap_or(f64::NAN)]);
        let half = 2.576 * e.standard_error;
        bands.push([exact_f - half, exact_f + half]);
    }
    let mut exact_series = Series::new("exact, with its 99 % band", exact_points);
    exact_series.band = bands;
    Plot {
        id: format!("{}-return", s.id),
        section: "return".into(),
        title: format!(
            "{}: return per strategy, without the 10,000 € lot (found, exact) and with it (exact), against the band of D.322-10 II 2°",
            s.scope
        ),
        x_label: "the player's strategy".into(),
        y_label: "return to player".into(),
        x_categories: sampled.iter().map(|g| g.strategy.to_string()).collect(),
        kind: PlotKind::Points,
        lines: vec![
            ("D.322-10 II 2° floor, 65 %".into(), 0.65),
            ("ceiling, 75 %".into(), 0.75),
        ],
        series: vec![
            Series::new("found, without the lot", points),
            exact_series,
            Series::new("exact, with the 10,000 € lot", whole),
        ],
    }
}

/// `a += b`, cell by cell (an empty `a` takes `b`).
fn add(a: &mut Vec<u64>, b: &[u64]) {
    if a.is_empty() {
        a.extend_from_slice(b);
        return;
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Counts against expected counts, as bars and a line; `x` names the
/// table's lines (a die's faces, a chest's values).
fn expected_plot(
    s: &TallyScope<'_>,
    slug: &str,
    what: &str,
    observed: &[u64],
    p: &[f64],
    x: Vec<String>,
) -> Plot {
    let n = observed.iter().sum::<u64>() as f64;
    Plot {
        id: format!("{}-{slug}", s.id),
        section: "draws".into(),
        title: format!("{}: {what}", s.scope),
        x_label: "line of the regulation's table".into(),
        y_label: "draws".into(),
        x_categories: x,
        kind: PlotKind::Bars,
        lines: Vec::new(),
        series: vec![
            Series::indexed("found", observed.iter().map(|&c| c as f64)),
            Series::indexed("expected", p.iter().map(|&p| p * n)),
        ],
    }
}

/// Bands of euros the prize plot groups amounts into (upper bounds, cents).
const PRIZE_BANDS: [u32; 9] = [0, 500, 1_000, 1_500, 2_000, 3_000, 5_000, 10_000, u32::MAX];

/// The prizes played to the end by band, against their exact law.
fn prizes_plot(s: &TallyScope<'_>, observed: &[u64], p: &[f64]) -> Plot {
    let laws = laws();
    let n = observed.iter().sum::<u64>() as f64;
    let mut found = [0f64; PRIZE_BANDS.len()];
    let mut expected = [0f64; PRIZE_BANDS.len()];
    for (((cents, _), &o), &p) in laws.prizes.iter().zip(observed).zip(p) {
        let band = PRIZE_BANDS.iter().position(|&b| *cents <= b).unwrap_or(0);
        found[band] += o as f64;
        expected[band] += p * n;
    }
    Plot {
        id: format!("{}-prizes", s.id),
        section: "draws".into(),
        title: format!("{}: prizes played to the end", s.scope),
        x_label: "prize band".into(),
        y_label: "units".into(),
        x_categories: PRIZE_BANDS
            .iter()
            .zip(std::iter::once(&0).chain(&PRIZE_BANDS))
            .map(|(&upper, &lower)| match upper {
                0 => "0".to_string(),
                u32::MAX => format!("> {} €", crate::money::Cents::from(lower)),
                _ => format!("≤ {} €", crate::money::Cents::from(upper)),
            })
            .collect(),
        kind: PlotKind::Bars,
        lines: Vec::new(),
        series: vec![
            Series::indexed("found", found.iter().copied()),
            Series::indexed("exact law", expected.iter().copied()),
        ],
    }
}

/// Boards drawn for the optimal player's return in the payout figures.
const OPTIMAL_BOARDS: u64 = 20_000;

/// Trésors Ensablés' return figures for the payout rule: each strategy of
/// the PAR sheet, exact (never stopping is binding: it is the prize each
/// sealed unit holds played to the end), and the optimal player's, an
/// estimate over boards drawn from the PAR sheet's default seed.
pub(crate) fn return_figures() -> Vec<crate::evidence::payout::ReturnFigure> {
    use crate::evidence::payout::ReturnFigure;
    use crate::par::Exact;
    let sheet = &laws().sheet;
    let mut out: Vec<ReturnFigure> = sheet
        .strategies
        .iter()
        .map(|s| ReturnFigure {
            figure: format!("PAR sheet: a player who plays {}", s.strategy),
            rate: s.rtp.clone(),
            binding: s.strategy == "never-stop",
            note: "exact (rational arithmetic)".into(),
            standard_error: None,
        })
        .collect();
    let optimal = super::par::optimal::optimal_sheet(
        OPTIMAL_BOARDS,
        &crate::par::default_seed("boards"),
        0,
        &sheet.strategies[0].rtp,
    );
    let micro = (optimal.rtp * 1e6).round() as i64;
    out.push(ReturnFigure {
        figure: "PAR sheet: a player who sees the board and plays optimally".into(),
        rate: Exact::ratio(micro, 1_000_000),
        binding: false,
        note: format!(
            "an estimate over {} boards: {:.6} ± {:.6} (standard error)",
            optimal.boards, optimal.rtp, optimal.standard_error
        ),
        standard_error: Some(optimal.standard_error),
    });
    out
}

#[cfg(test)]
mod tests {
    use num_bigint::BigInt;
    use num_rational::BigRational;

    use super::*;

    #[test]
    fn the_prize_law_sums_to_one_and_its_mean_is_the_never_stop_return() {
        let law = prize_law_to_end();
        let total: BigRational = law.iter().map(|(_, p)| p).sum();
        assert_eq!(total, BigRational::from_integer(1.into()));
        let mean: BigRational = law
            .iter()
            .map(|(c, p)| p * BigInt::from(*c))
            .sum::<BigRational>()
            / BigInt::from(PRICE_CENTS);
        assert_eq!(mean, exact_sheet().strategies[0].rtp.0);
        // The largest prize is the regulation's (3.3.4).
        assert_eq!(law.last().unwrap().0, super::super::MAX_PRIZE_CENTS);
    }
}
