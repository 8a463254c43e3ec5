//! One block's units read once (each re-checked against the rules), its
//! lot table met or not, and the tests every game gets (docs/AUDIT.md
//! §Tests): winners over equal position bins, per lot where counts allow,
//! the runs of wins and losses, the gaps between winners against the
//! geometric law, the lag-1 serial correlation of prizes. A game adds its
//! own tests through its [`GameTally`]; the emission-level tests over
//! every block are [`emission_tests`].

use rayon::prelude::*;
use serde::Serialize;

use super::report::{BlockEvidence, Check, LotCount, Plot, PlotKind, Series, StatTest};
pub use super::tally::{fit, independence, GameFindings, GameTally, TallyScope};
use crate::block::authentic::AuthenticBlock;
use crate::derive::CHECK_CODE_LEN;
use crate::error::Error;
use crate::game::PrizeModel;
use crate::money::Cents;
use crate::record::PREFIX_SIZE;
use crate::stats;

/// Equal position bins of the winners test, at most.
pub const POSITION_BINS: usize = 100;
/// Winners expected per bin, at least, in the position tests.
const PER_BIN: u64 = 50;
/// A prize at least this many times the price is a top prize (a drawn
/// game; a fixed-table game's top prizes are its three highest lots).
pub const TOP_MULTIPLE: u64 = 100;
/// Classes of the gaps plot.
const GAP_PLOT_CLASSES: u64 = 25;

/// One unit as the outcome file lists it.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct UnitOutcome {
    /// Its position in the block.
    pub index: u32,
    /// Its check code (part of its ID).
    pub check_code: [u8; CHECK_CODE_LEN],
    /// Its lot code (0: none).
    pub lot: u8,
    /// Its prize played to the end, cents.
    pub prize_cents: u32,
}

/// A block audited.
pub struct BlockAudit {
    /// Its facts.
    pub evidence: BlockEvidence,
    /// Every unit, in index order.
    pub outcomes: Vec<UnitOutcome>,
    /// Its tests.
    pub tests: Vec<StatTest>,
    /// Its hard checks.
    pub checks: Vec<Check>,
    /// Its plots.
    pub plots: Vec<Plot>,
    /// Positions of its top prizes, as (index + ½) / units.
    pub top_positions: Vec<f64>,
    /// Winners per position bin ([`POSITION_BINS`] equal bins).
    pub winner_bins: Vec<u64>,
}

/// Reads every unit of `block` (each re-checked against the rules), and
/// gives its facts, tests and plots. `file_sha256` is the file's digest
/// (hex), as its verification computed it.
pub fn audit_block(block: &AuthenticBlock, file_sha256: &str) -> Result<BlockAudit, Error> {
    let h = &block.file.header;
    let game = h.game;
    let (outcomes, tally) = read_units(block)?;
    let scope = format!("block {}", h.block);
    let id = format!("block-{}", h.block);
    let units = u64::from(h.unit_count);
    let price = h.price_cents;
    let winners = outcomes.iter().filter(|o| o.prize_cents > 0).count() as u64;
    let paid_cents: u64 = outcomes.iter().map(|o| u64::from(o.prize_cents)).sum();

    let LotTableFindings {
        mut checks,
        lots,
        top_lots,
    } = lot_table_findings(block, &outcomes, paid_cents, &id, &scope);
    let is_top = |o: &UnitOutcome| match game.prize_model() {
        PrizeModel::FixedTable => top_lots.contains(&o.lot),
        PrizeModel::Drawn => u64::from(o.prize_cents) >= TOP_MULTIPLE * u64::from(price),
    };
    let top_positions: Vec<f64> = outcomes
        .iter()
        .filter(|o| is_top(o))
        .map(|o| (f64::from(o.index) + 0.5) / units as f64)
        .collect();

    let winner_bins = position_bins(&outcomes, units, |o| o.prize_cents > 0);
    let (mut tests, mut plots) = sequence_tests(block, &outcomes, &winner_bins, &id, &scope);
    let mut figures = serde_json::Value::Null;
    if let Some(tally) = &tally {
        let found = tally.findings(&TallyScope {
            scope: &scope,
            id: &id,
            units,
            price_cents: price,
        });
        tests.extend(found.tests);
        checks.extend(found.checks);
        plots.extend(found.plots);
        figures = found.figures;
    }
    let evidence = BlockEvidence {
        emission: h.emission,
        block: h.block,
        path: block.file.path().display().to_string(),
        file_sha256: file_sha256.to_string(),
        merkle_root: hex::encode(h.merkle_root),
        units,
        price: Cents::from(price).to_string(),
        price_cents: price,
        winners,
        paid_cents,
        paid: Cents::from(paid_cents).to_string(),
        lots,
        outcomes_file: outcomes_file_name(h.emission, h.block),
        game_figures: figures,
    };
    Ok(BlockAudit {
        evidence,
        outcomes,
        tests,
        checks,
        plots,
        top_positions,
        winner_bins,
    })
}

/// A game's tally over some of a block's units.
type ChunkTally = Box<dyn GameTally>;

/// Every unit of `block` in index order, each re-checked against the
/// rules (chunks in parallel), and the game's tally over them, if it
/// keeps one.
fn read_units(block: &AuthenticBlock) -> Result<(Vec<UnitOutcome>, Option<ChunkTally>), Error> {
    let h = &block.file.header;
    let chunks: Vec<u32> = (0..h.chunk_count).collect();
    let per_chunk = chunks
        .par_iter()
        .map(|&chunk| {
            let mut tally = h.game.audit_tally();
            let mut outcomes = Vec::with_capacity(h.chunk_units as usize);
            block.for_each_checked_unit(chunk, |prefix, record| {
                outcomes.push(UnitOutcome {
                    index: prefix.index,
                    check_code: prefix.check_code,
                    lot: prefix.lot,
                    prize_cents: prefix.prize_cents,
                });
                match tally.as_mut() {
                    Some(t) => t.add(prefix.index, &record[PREFIX_SIZE..], prefix.prize_cents),
                    None => Ok(()),
                }
            })?;
            Ok((outcomes, tally))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let mut outcomes = Vec::with_capacity(h.unit_count as usize);
    let mut tally: Option<ChunkTally> = None;
    for (chunk_outcomes, chunk_tally) in per_chunk {
        outcomes.extend(chunk_outcomes);
        match (&mut tally, chunk_tally) {
            (Some(t), Some(more)) => t.merge(more),
            (None, more) => tally = more,
            (Some(_), None) => {}
        }
    }
    Ok((outcomes, tally))
}

/// A fixed-table block's lot counts, its lot-table and total-paid
/// checks, and its top lots (the three highest); nothing for a drawn game.
struct LotTableFindings {
    checks: Vec<Check>,
    lots: Vec<LotCount>,
    top_lots: Vec<u8>,
}

fn lot_table_findings(
    block: &AuthenticBlock,
    outcomes: &[UnitOutcome],
    paid_cents: u64,
    id: &str,
    scope: &str,
) -> LotTableFindings {
    let game = block.file.header.game;
    let units = u64::from(block.file.header.unit_count);
    let table = &block.regulation;
    let mut checks = Vec::new();
    let mut lots = Vec::new();
    // The top prizes: a fixed-table game's three highest lots; a drawn
    // game's prizes of at least TOP_MULTIPLE times the price.
    let mut top_lots: Vec<u8> = Vec::new();
    if game.prize_model() == PrizeModel::FixedTable {
        let mut found = [0u64; 256];
        for o in outcomes {
            found[usize::from(o.lot)] += 1;
        }
        let mut all_met = true;
        for tier in &table.tiers {
            let count = u64::from(tier.count);
            all_met &= found[usize::from(tier.code)] == count;
            lots.push(LotCount {
                lot: tier.code,
                name: game.lot_name(tier.code).unwrap_or("?").to_string(),
                amount: Cents::from(tier.amount_cents).to_string(),
                expected: count,
                found: found[usize::from(tier.code)],
            });
        }
        let listed: u64 = table.tiers.iter().map(|t| u64::from(t.count)).sum();
        let losers_expected = units.saturating_sub(listed);
        all_met &= found[0] == losers_expected;
        lots.push(LotCount {
            lot: 0,
            name: "no lot".into(),
            amount: "0.00".into(),
            expected: losers_expected,
            found: found[0],
        });
        let expected_paid = table.total_cents();
        checks.push(Check::new(
            format!("{id}/lot-table"),
            scope,
            "the block holds exactly the regulation's lot table",
            all_met,
            if all_met {
                "every lot's count is the table's".into()
            } else {
                lots.iter()
                    .filter(|l| l.found != l.expected)
                    .map(|l| format!("{}: {} found, {} expected", l.name, l.found, l.expected))
                    .collect::<Vec<_>>()
                    .join("; ")
            },
        ));
        checks.push(Check::new(
            format!("{id}/total-paid"),
            scope,
            "the block pays the table's total",
            paid_cents == expected_paid,
            format!(
                "{} € paid played to the end, the table's total is {} €",
                Cents::from(paid_cents),
                Cents::from(expected_paid)
            ),
        ));
        let mut tiers: Vec<_> = table.tiers.iter().filter(|t| t.amount_cents > 0).collect();
        tiers.sort_by_key(|t| std::cmp::Reverse(t.amount_cents));
        top_lots = tiers.iter().take(3).map(|t| t.code).collect();
    }
    LotTableFindings {
        checks,
        lots,
        top_lots,
    }
}

/// The tests on the order of a block's units: winners (and each lot)
/// over equal position bins, runs, gaps between winners, serial
/// correlation of prizes; with the winners-per-bin and gaps plots.
fn sequence_tests(
    block: &AuthenticBlock,
    outcomes: &[UnitOutcome],
    winner_bins: &[u64],
    id: &str,
    scope: &str,
) -> (Vec<StatTest>, Vec<Plot>) {
    let game = block.file.header.game;
    let units = u64::from(block.file.header.unit_count);
    let table = &block.regulation;
    let winners: u64 = winner_bins.iter().sum();
    let mut tests = Vec::new();
    let mut plots = Vec::new();
    tests.push(winners_per_bin(
        format!("{id}/winners-per-bin"),
        scope,
        "winners",
        winner_bins,
    ));
    plots.push(bins_plot(
        &format!("{id}-winners-per-bin"),
        &format!("{scope}: winners per position bin"),
        winner_bins,
        winners,
    ));
    if game.prize_model() == PrizeModel::FixedTable {
        for tier in table.tiers.iter().filter(|t| t.count > 0) {
            let name = game.lot_name(tier.code).unwrap_or("?");
            let bins = position_bins(outcomes, units, |o| o.lot == tier.code);
            tests.push(winners_per_bin(
                format!("{id}/lot-{}-per-bin", tier.code),
                scope,
                &format!("lot {name}"),
                &bins,
            ));
        }
    }
    let wins: Vec<bool> = outcomes.iter().map(|o| o.prize_cents > 0).collect();
    tests.push(match stats::runs_test(&wins) {
        Some(z) => StatTest::ran(
            format!("{id}/runs"),
            scope,
            "runs of winning and losing units",
            "Wald–Wolfowitz runs test (normal)",
            z.stat,
            None,
            z.p,
        ),
        None => StatTest::not_run(
            format!("{id}/runs"),
            scope,
            "runs of winning and losing units",
            "Wald–Wolfowitz runs test (normal)",
            "needs at least 20 units, winners and losers both".into(),
        ),
    });
    let gaps = winner_gaps(&wins);
    let p_win = winners as f64 / units as f64;
    let gap_name = "gaps between winners against the geometric law";
    tests.push(match stats::gap_test(&gaps, p_win) {
        Some(c) => StatTest::chi_square(format!("{id}/gaps"), scope, gap_name, &c),
        None => StatTest::not_run(
            format!("{id}/gaps"),
            scope,
            gap_name,
            "gap test (chi-square)",
            format!(
                "{} gaps: too few for two classes expected 5 times",
                gaps.len()
            ),
        ),
    });
    plots.push(gaps_plot(id, scope, &gaps, p_win));
    let prizes: Vec<f64> = outcomes.iter().map(|o| f64::from(o.prize_cents)).collect();
    tests.push(match stats::serial_correlation(&prizes) {
        Some(z) => StatTest::ran(
            format!("{id}/serial"),
            scope,
            "lag-1 serial correlation of prizes",
            "lag-1 autocorrelation (normal)",
            z.stat,
            None,
            z.p,
        ),
        None => StatTest::not_run(
            format!("{id}/serial"),
            scope,
            "lag-1 serial correlation of prizes",
            "lag-1 autocorrelation (normal)",
            "needs at least 20 units and prizes that vary".into(),
        ),
    });

    (tests, plots)
}

/// The outcome file of block `block` of emission `emission`.
pub fn outcomes_file_name(emission: u32, block: u32) -> String {
    format!("outcomes-e{emission}-b{block}.tsv")
}

/// Units of `outcomes` that `counts` over [`POSITION_BINS`] equal bins of
/// positions.
fn position_bins(
    outcomes: &[UnitOutcome],
    units: u64,
    counts: impl Fn(&UnitOutcome) -> bool,
) -> Vec<u64> {
    let mut bins = vec![0u64; POSITION_BINS];
    for o in outcomes.iter().filter(|o| counts(o)) {
        let bin = (u64::from(o.index) * POSITION_BINS as u64 / units.max(1)) as usize;
        bins[bin.min(POSITION_BINS - 1)] += 1;
    }
    bins
}

/// The bins merged into as many groups of adjacent bins as the counts
/// allow ([`PER_BIN`] expected each), at most [`POSITION_BINS`]: each
/// group's count and its share of the positions.
fn grouped(bins: &[u64]) -> (Vec<u64>, Vec<f64>) {
    let total: u64 = bins.iter().sum();
    let groups = (total / PER_BIN).clamp(1, bins.len() as u64) as usize;
    let mut counts = vec![0u64; groups];
    let mut shares = vec![0f64; groups];
    for (i, &n) in bins.iter().enumerate() {
        let g = i * groups / bins.len();
        counts[g] += n;
        shares[g] += 1.0 / bins.len() as f64;
    }
    (counts, shares)
}

/// Chi-square of counts over position bins against uniform (the bins are
/// equal in units up to one unit; adjacent bins merged to keep
/// [`PER_BIN`] expected).
pub fn winners_per_bin(id: String, scope: &str, what: &str, bins: &[u64]) -> StatTest {
    let name = format!("{what} over equal position bins");
    let (groups, shares) = grouped(bins);
    let total: u64 = groups.iter().sum();
    if groups.len() < 2 {
        return StatTest::not_run(
            id,
            scope,
            &name,
            "Pearson chi-square",
            format!(
                "{}: too few for two bins expected {PER_BIN} times each",
                crate::words::plural(total, "unit")
            ),
        );
    }
    let c = stats::chi_square(&groups, &shares);
    StatTest::chi_square(id, scope, &name, &c)
        .noted(format!("{} bins, {total} units", groups.len()))
}

/// Losing units between consecutive winners.
fn winner_gaps(wins: &[bool]) -> Vec<u64> {
    let mut gaps = Vec::new();
    let mut last: Option<usize> = None;
    for (i, &w) in wins.iter().enumerate() {
        if w {
            if let Some(l) = last {
                gaps.push((i - l - 1) as u64);
            }
            last = Some(i);
        }
    }
    gaps
}

/// A bars plot of counts per position bin, with the expected line.
fn bins_plot(id: &str, title: &str, bins: &[u64], total: u64) -> Plot {
    let expected = total as f64 / bins.len() as f64;
    Plot {
        id: id.to_string(),
        section: "positions".into(),
        title: title.to_string(),
        x_label: "position bin (1 % of the block each)".into(),
        y_label: "winners".into(),
        x_categories: Vec::new(),
        kind: PlotKind::Bars,
        lines: Vec::new(),
        series: vec![
            Series::indexed("found", bins.iter().map(|&n| n as f64)),
            Series::new(
                "expected",
                (0..bins.len()).map(|i| [i as f64, expected]).collect(),
            ),
        ],
    }
}

/// The gaps between winners against the geometric law.
fn gaps_plot(id: &str, scope: &str, gaps: &[u64], p: f64) -> Plot {
    let mut found = vec![0u64; GAP_PLOT_CLASSES as usize];
    for &g in gaps.iter().filter(|&&g| g < GAP_PLOT_CLASSES) {
        found[g as usize] += 1;
    }
    let n = gaps.len() as f64;
    Plot {
        id: format!("{id}-gaps"),
        section: "positions".into(),
        title: format!("{scope}: gaps between winners against the geometric law"),
        x_label: "losing units between two winners".into(),
        y_label: "gaps".into(),
        x_categories: Vec::new(),
        kind: PlotKind::Bars,
        lines: Vec::new(),
        series: vec![
            Series::indexed("found", found.iter().map(|&c| c as f64)),
            Series::new(
                "geometric",
                (0..GAP_PLOT_CLASSES)
                    .map(|k| [k as f64, n * (1.0 - p).powi(k as i32) * p])
                    .collect(),
            ),
        ],
    }
}

/// The tests and plots over every block of an emission: winners over
/// position bins pooled across blocks, and the Kolmogorov–Smirnov test of
/// the top prizes' positions against uniform.
pub fn emission_tests(blocks: &[BlockAudit]) -> (Vec<StatTest>, Vec<Plot>) {
    let scope = "emission";
    let mut tests = Vec::new();
    let mut pooled = vec![0u64; POSITION_BINS];
    for b in blocks {
        for (p, n) in pooled.iter_mut().zip(&b.winner_bins) {
            *p += n;
        }
    }
    tests.push(winners_per_bin(
        "emission/winners-per-bin".into(),
        scope,
        "winners",
        &pooled,
    ));
    let positions: Vec<f64> = blocks
        .iter()
        .flat_map(|b| b.top_positions.iter().copied())
        .collect();
    let ks_name = "top prizes' positions across blocks against uniform";
    let ks_method = "one-sample Kolmogorov–Smirnov";
    tests.push(match stats::ks_uniform(&positions) {
        Some(ks) => StatTest::ran(
            "emission/top-positions".into(),
            scope,
            ks_name,
            ks_method,
            ks.d,
            None,
            ks.p,
        )
        .noted(format!("{} top prizes", ks.n)),
        None => StatTest::not_run(
            "emission/top-positions".into(),
            scope,
            ks_name,
            ks_method,
            format!(
                "{} top prizes in the blocks audited: at least 5 are needed",
                positions.len()
            ),
        ),
    });
    let plot = Plot {
        id: "emission-top-positions".into(),
        section: "positions".into(),
        title: format!(
            "top prizes (a fixed-table game's three highest lots; a drawn game's prizes of at least {TOP_MULTIPLE} times the price): position in their block, one dot each"
        ),
        x_label: "position in the block (0 = first unit, 1 = last)".into(),
        y_label: "block".into(),
        x_categories: Vec::new(),
        kind: PlotKind::Points,
        lines: Vec::new(),
        series: vec![Series::new(
            format!("top prizes ({})", positions.len()),
            blocks
                .iter()
                .flat_map(|b| {
                    let block = f64::from(b.evidence.block);
                    b.top_positions.iter().map(move |&x| [x, block])
                })
                .collect(),
        )],
    };
    let pooled_plot = bins_plot(
        "emission-winners-per-bin",
        "emission: winners per position bin, blocks pooled",
        &pooled,
        pooled.iter().sum(),
    );
    (tests, vec![pooled_plot, plot])
}
