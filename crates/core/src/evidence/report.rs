//! The audit report's figures: what `report.json` holds and the HTML page
//! shows (docs/AUDIT.md §Report). Floats here are statistics, never money:
//! amounts are integer cents or euro strings.

use serde::Serialize;

use crate::stats;

/// The version of `report.json`'s shape.
pub const SCHEMA: u32 = 1;

/// The levels every test is judged at unless asked otherwise.
pub const DEFAULT_LEVELS: [f64; 2] = [0.01, 0.05];

/// A test's verdict at one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// p ≥ the level.
    Pass,
    /// p < the level: the test flags the data.
    Fail,
    /// The test could not run (too few counts); see its note.
    NotRun,
}

/// A test's verdicts at one level.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LevelVerdict {
    /// The level (e.g. 0.01).
    pub level: f64,
    /// On the raw p-value.
    pub raw: Verdict,
    /// On the Holm-adjusted p-value (the family: every test of the report).
    pub adjusted: Verdict,
}

/// One statistical test.
#[derive(Clone, Debug, Serialize)]
pub struct StatTest {
    /// A stable identifier, e.g. `block-2/winners-per-bin`.
    pub id: String,
    /// What it is about: `block 2`, `emission`.
    pub scope: String,
    /// What is tested, in words.
    pub name: String,
    /// The method, e.g. "Pearson chi-square".
    pub method: String,
    /// The statistic (chi-square, z, D, a count).
    pub statistic: Option<f64>,
    /// Degrees of freedom, when the statistic has them.
    pub dof: Option<f64>,
    /// The p-value (`None`: not run).
    pub p: Option<f64>,
    /// The p-value after Holm's correction over every test of the report.
    pub p_adjusted: Option<f64>,
    /// The verdict at each level.
    pub verdicts: Vec<LevelVerdict>,
    /// Why it did not run, or what the figure means.
    pub note: String,
}

impl StatTest {
    /// A test that ran.
    pub fn ran(
        id: String,
        scope: &str,
        name: &str,
        method: &str,
        statistic: f64,
        dof: Option<f64>,
        p: f64,
    ) -> StatTest {
        StatTest {
            id,
            scope: scope.to_string(),
            name: name.to_string(),
            method: method.to_string(),
            statistic: Some(statistic),
            dof,
            p: Some(p.clamp(0.0, 1.0)),
            p_adjusted: None,
            verdicts: Vec::new(),
            note: String::new(),
        }
    }

    /// A chi-square test that ran.
    pub fn chi_square(id: String, scope: &str, name: &str, c: &stats::ChiSquare) -> StatTest {
        StatTest::ran(
            id,
            scope,
            name,
            "Pearson chi-square (cells expected < 5 merged)",
            c.stat,
            Some(c.dof as f64),
            c.p,
        )
    }

    /// A test that could not run, and why.
    pub fn not_run(id: String, scope: &str, name: &str, method: &str, why: String) -> StatTest {
        StatTest {
            id,
            scope: scope.to_string(),
            name: name.to_string(),
            method: method.to_string(),
            statistic: None,
            dof: None,
            p: None,
            p_adjusted: None,
            verdicts: Vec::new(),
            note: why,
        }
    }

    /// This test with `note`.
    pub fn noted(mut self, note: impl Into<String>) -> StatTest {
        self.note = note.into();
        self
    }

    /// Whether it fails at `level` after the correction (a test not yet
    /// judged, or not run, does not fail).
    pub fn fails_at(&self, level: f64) -> bool {
        self.p_adjusted.is_some_and(|p| p < level)
    }
}

/// A hard check: no statistics, it holds or it does not.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// A stable identifier, e.g. `block-2/lot-table`.
    pub id: String,
    /// What it is about.
    pub scope: String,
    /// What is checked.
    pub name: String,
    /// It holds (or, not done, does not fail the audit).
    pub ok: bool,
    /// It was made: false for a check the audit could not make yet (the
    /// seeds before the reveal), which the report says is *not done*,
    /// never *holds*.
    pub done: bool,
    /// The figures, or what does not hold, or what remains to do.
    pub detail: String,
}

impl Check {
    /// A check.
    pub fn new(id: String, scope: &str, name: &str, ok: bool, detail: String) -> Check {
        Check {
            id,
            scope: scope.to_string(),
            name: name.to_string(),
            ok,
            done: true,
            detail,
        }
    }

    /// A check the audit could not make yet: it does not fail the audit,
    /// and the report says it is not done and what remains (`detail`).
    pub fn not_done(id: String, scope: &str, name: &str, detail: String) -> Check {
        Check {
            done: false,
            ..Check::new(id, scope, name, true, detail)
        }
    }
}

/// How a plot draws its series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlotKind {
    /// Bars of the first series, the others as lines over them.
    Bars,
    /// Points (x, y).
    Points,
    /// Lines through the points.
    Lines,
}

/// One series of a plot: points (x, y), and for an estimate with a band,
/// its low and high ends (`band`, same length as `points`).
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// Its name in the legend.
    pub name: String,
    /// The points.
    pub points: Vec<[f64; 2]>,
    /// A band (low, high) per point, e.g. a 99 % confidence interval.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub band: Vec<[f64; 2]>,
}

impl Series {
    /// A series of points.
    pub fn new(name: impl Into<String>, points: Vec<[f64; 2]>) -> Series {
        Series {
            name: name.into(),
            points,
            band: Vec::new(),
        }
    }

    /// A series of `values` at x = 0, 1, 2, … (a bar per class).
    pub fn indexed(name: impl Into<String>, values: impl IntoIterator<Item = f64>) -> Series {
        let points = values
            .into_iter()
            .enumerate()
            .map(|(i, y)| [i as f64, y])
            .collect();
        Series::new(name, points)
    }
}

/// A plot of the report: data only; the page draws it.
#[derive(Clone, Debug, Serialize)]
pub struct Plot {
    /// A stable identifier (the page's anchor), e.g. `block-2-winners-per-bin`.
    pub id: String,
    /// The section it belongs to (`positions`, `draws`, `return`, …).
    pub section: String,
    /// Its title.
    pub title: String,
    /// The x axis.
    pub x_label: String,
    /// The y axis.
    pub y_label: String,
    /// The names of x = 0, 1, 2, … when x is a category (a strategy, a
    /// chest's content, a prize band): the axis is labelled with them, not
    /// with numbers. Empty for a numeric x.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub x_categories: Vec<String>,
    /// How to draw it.
    pub kind: PlotKind,
    /// The series; the first is the observed one.
    pub series: Vec<Series>,
    /// Horizontal reference lines (name, y): the bands a figure is
    /// judged against.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<(String, f64)>,
}

/// A lot of a block's table: expected against found.
#[derive(Clone, Debug, Serialize)]
pub struct LotCount {
    /// The lot code.
    pub lot: u8,
    /// Its name.
    pub name: String,
    /// Its amount, euros.
    pub amount: String,
    /// Units of the lot the regulation's table gives the block.
    pub expected: u64,
    /// Units of the lot in the block.
    pub found: u64,
}

/// One block's facts.
#[derive(Clone, Debug, Serialize)]
pub struct BlockEvidence {
    /// The emission it belongs to (from its header).
    pub emission: u32,
    /// The block's number.
    pub block: u32,
    /// The block file.
    pub path: String,
    /// SHA-256 of the file.
    pub file_sha256: String,
    /// The sealed Merkle root.
    pub merkle_root: String,
    /// Units.
    pub units: u64,
    /// Price, euros.
    pub price: String,
    /// Price, cents.
    pub price_cents: u32,
    /// Winning units (played to the end).
    pub winners: u64,
    /// Total of the units' prizes played to the end, cents.
    pub paid_cents: u64,
    /// Total of the units' prizes played to the end, euros.
    pub paid: String,
    /// A fixed-table game's lot table, met or not.
    pub lots: Vec<LotCount>,
    /// The outcome file written for the block (in the output folder).
    pub outcomes_file: String,
    /// The game's own figures on the block (e.g. the return under each
    /// strategy), as JSON.
    pub game_figures: serde_json::Value,
}

/// One block as the ledger sees it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LedgerBlock {
    /// The block's number.
    pub block: u32,
    /// Units in the block.
    pub units: u64,
    /// Units sold.
    pub sold: u64,
    /// Units not sold.
    pub unsold: u64,
    /// Plays that ended (a game played step by step).
    pub played: u64,
    /// Units redeemed.
    pub redeemed: u64,
    /// Amount paid, cents.
    pub paid_cents: u64,
    /// Units whose sale was voided (refunded: never paid, not owed).
    pub voided: u64,
    /// Sold units that won (played to their recorded end, or to the end
    /// for a game revealed whole) and are not redeemed.
    pub unclaimed: u64,
    /// What those would pay, cents: the liability outstanding.
    pub liability_cents: u64,
    /// Stakes of the units sold, cents.
    pub stakes_cents: u64,
}

/// The ledger's reconciliation of an emission.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LedgerEvidence {
    /// The ledger (a path, or a URL without its password).
    pub ledger: String,
    /// Per block.
    pub blocks: Vec<LedgerBlock>,
    /// Its checks: every paid unit sold, nothing sold or paid twice, every
    /// payment equal to its unit's outcome, the heads verify.
    pub checks: Vec<Check>,
    /// Paid over stakes of the units sold and played out.
    pub realised_return: Option<f64>,
    /// The return the game's figures give for those units.
    pub expected_return: Option<f64>,
    /// A 99 % band around the expected return for that many units.
    pub band_99: Option<[f64; 2]>,
}

/// The auditor's report on an emission (or on block files).
#[derive(Clone, Debug, Serialize)]
pub struct AuditReport {
    /// The game.
    pub game: String,
    /// The emission, when one was audited (block files may be given alone).
    pub emission: Option<u32>,
    /// The issuer version that wrote it.
    pub issuer_version: String,
    /// The levels verdicts are given at.
    pub levels: Vec<f64>,
    /// The level the command's exit status is judged at.
    pub level: f64,
    /// How multiplicity is controlled.
    pub correction: String,
    /// The manifest, keys and seals.
    pub provenance: Vec<Check>,
    /// Each block.
    pub blocks: Vec<BlockEvidence>,
    /// Hard checks (lot tables, totals, neutrality by construction).
    pub checks: Vec<Check>,
    /// Every statistical test.
    pub tests: Vec<StatTest>,
    /// The PAR sheet's figures against the blocks.
    pub par: serde_json::Value,
    /// The payout rule, per figure and band.
    pub payout: Vec<super::payout::BandCheck>,
    /// The ledger's reconciliation, if a ledger was read.
    pub ledger: Option<LedgerEvidence>,
    /// The plots.
    pub plots: Vec<Plot>,
    /// The verdict: every check holds and no test fails at `level` after
    /// the correction.
    pub ok: bool,
    /// Counts, for a glance.
    pub summary: Summary,
}

/// The report's counts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    /// Tests that ran.
    pub tests_run: usize,
    /// Tests that could not run.
    pub tests_not_run: usize,
    /// Tests failing at the level on their raw p-value.
    pub failed_raw: usize,
    /// Tests failing at the level after the correction.
    pub failed_adjusted: usize,
    /// Hard checks that do not hold (provenance, blocks, ledger, payout).
    pub checks_failed: usize,
    /// Hard checks not done yet (each says what remains to do).
    pub checks_not_done: usize,
    /// Figures outside a band of the payout rule that the rule is not
    /// judged on (reported, shown as breaches, not failing the audit).
    pub band_breaches: usize,
}

impl AuditReport {
    /// Every hard check: provenance, blocks, then the ledger's.
    pub fn all_checks(&self) -> impl Iterator<Item = &Check> {
        self.provenance
            .iter()
            .chain(&self.checks)
            .chain(self.ledger.iter().flat_map(|l| &l.checks))
    }

    /// The figures outside a band of the payout rule that the rule is not
    /// judged on (reported as breaches, not failing the audit).
    pub fn band_breaches(&self) -> impl Iterator<Item = &super::payout::BandCheck> {
        self.payout
            .iter()
            .filter(|b| b.applies && !b.met && !b.binding)
    }

    /// Applies Holm's correction over every test that ran, gives each its
    /// verdicts at every level, and sets the summary and `ok`.
    pub fn judge(&mut self) {
        let ran = judge_tests(&mut self.tests, &self.levels);
        let level = self.level;
        let checks_failed = self.all_checks().filter(|c| !c.ok).count()
            + self.payout.iter().filter(|b| b.binding && !b.met).count();
        self.summary = Summary {
            tests_run: ran,
            tests_not_run: self.tests.len() - ran,
            failed_raw: self
                .tests
                .iter()
                .filter(|t| t.p.is_some_and(|p| p < level))
                .count(),
            failed_adjusted: self.tests.iter().filter(|t| t.fails_at(level)).count(),
            checks_failed,
            checks_not_done: self.all_checks().filter(|c| !c.done).count(),
            band_breaches: self.band_breaches().count(),
        };
        self.ok = self.summary.failed_adjusted == 0 && checks_failed == 0;
    }
}

/// Applies Holm's correction over every test of `tests` that ran (the
/// family), and gives each its verdicts at every level of `levels`, raw
/// and adjusted. Returns how many ran.
pub fn judge_tests(tests: &mut [StatTest], levels: &[f64]) -> usize {
    let ran: Vec<usize> = (0..tests.len()).filter(|&i| tests[i].p.is_some()).collect();
    let raw: Vec<f64> = ran.iter().map(|&i| tests[i].p.unwrap_or(1.0)).collect();
    for (&i, adjusted) in ran.iter().zip(stats::holm(&raw)) {
        tests[i].p_adjusted = Some(adjusted);
    }
    for test in tests.iter_mut() {
        test.verdicts = levels
            .iter()
            .map(|&level| {
                let at = |p: Option<f64>| match p {
                    None => Verdict::NotRun,
                    Some(p) if p < level => Verdict::Fail,
                    Some(_) => Verdict::Pass,
                };
                LevelVerdict {
                    level,
                    raw: at(test.p),
                    adjusted: at(test.p_adjusted),
                }
            })
            .collect();
    }
    ran.len()
}
