//! What a game adds to a block's audit: its tally over the units
//! ([`GameTally`]), what it is told ([`TallyScope`]) and finds
//! ([`GameFindings`]), and the chi-square tests games use.

use std::any::Any;

use super::report::{Check, Plot, StatTest};
use crate::stats;

/// What a game's tally is told about the block it tallied.
pub struct TallyScope<'a> {
    /// In words: `block 2`.
    pub scope: &'a str,
    /// In identifiers: `block-2`.
    pub id: &'a str,
    /// Units in the block.
    pub units: u64,
    /// Price of its units, cents.
    pub price_cents: u32,
}

/// What a game finds on a block beside the shared tests.
#[derive(Default)]
pub struct GameFindings {
    /// Its tests.
    pub tests: Vec<StatTest>,
    /// Its hard checks.
    pub checks: Vec<Check>,
    /// Its plots.
    pub plots: Vec<Plot>,
    /// Its figures (e.g. the return under each strategy), as JSON.
    pub figures: serde_json::Value,
}

/// What a game gathers from every unit of a block for the audit (its
/// draws against the regulation, presentation neutrality, its strategies):
/// one tally per chunk, in parallel, then merged.
pub trait GameTally: Send {
    /// Adds unit `index` of `payload` (the game's part of its record) and
    /// its prize played to the end; `Err` says why it cannot be read.
    fn add(&mut self, index: u32, payload: &[u8], prize_cents: u32) -> Result<(), String>;
    /// Adds another chunk's tally (of the same game: made by the same
    /// [`crate::analysis::GameAnalysis::audit_tally`]).
    fn merge(&mut self, other: Box<dyn GameTally>);
    /// This tally as `Any`, for [`GameTally::merge`] to take it back.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    /// The tests, checks, plots and figures of the whole block.
    fn findings(&self, scope: &TallyScope<'_>) -> GameFindings;
}

/// Pearson's chi-square test of independence of a table of counts (rows:
/// groups, e.g. winners and losers; columns: categories). Columns with no
/// count are dropped; `None` with fewer than 2 rows or columns left, or
/// a cell expected fewer than 5 times.
pub fn independence(table: &[Vec<u64>]) -> Option<stats::ChiSquare> {
    let columns = table.first()?.len();
    let kept: Vec<usize> = (0..columns)
        .filter(|&j| table.iter().map(|r| r[j]).sum::<u64>() > 0)
        .collect();
    let rows: Vec<u64> = table
        .iter()
        .map(|r| kept.iter().map(|&j| r[j]).sum())
        .collect();
    if kept.len() < 2 || rows.iter().filter(|&&n| n > 0).count() < 2 {
        return None;
    }
    let total: u64 = rows.iter().sum();
    let mut stat = 0.0;
    for (r, row) in table.iter().enumerate() {
        if rows[r] == 0 {
            continue;
        }
        for &j in &kept {
            let column: u64 = table.iter().map(|row| row[j]).sum();
            let expected = rows[r] as f64 * column as f64 / total as f64;
            if expected < 5.0 {
                return None;
            }
            let d = row[j] as f64 - expected;
            stat += d * d / expected;
        }
    }
    let dof = (rows.iter().filter(|&&n| n > 0).count() - 1) * (kept.len() - 1);
    Some(stats::ChiSquare {
        stat,
        dof,
        p: stats::chi_square_sf(stat, dof),
    })
}

/// Counts against probabilities, cells merged in order until each is
/// expected at least 5 times (one pass; the last short cell joins the one
/// before), then Pearson's chi-square.
pub fn fit(observed: &[u64], probabilities: &[f64]) -> stats::ChiSquare {
    let n: u64 = observed.iter().sum();
    let mut cells: Vec<(u64, f64)> = Vec::new();
    let mut open = (0u64, 0.0f64);
    for (&o, &p) in observed.iter().zip(probabilities) {
        open.0 += o;
        open.1 += p;
        if open.1 * n as f64 >= 5.0 {
            cells.push(open);
            open = (0, 0.0);
        }
    }
    if open.0 > 0 || open.1 > 0.0 {
        match cells.last_mut() {
            Some(last) => {
                last.0 += open.0;
                last.1 += open.1;
            }
            None => cells.push(open),
        }
    }
    let (o, p): (Vec<u64>, Vec<f64>) = cells.into_iter().unzip();
    stats::chi_square(&o, &p)
}
