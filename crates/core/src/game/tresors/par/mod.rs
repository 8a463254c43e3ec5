//! Trésors Ensablés' PAR sheet (docs/PAR.md): the returns of the stopping
//! strategies that matter and the play's distribution, exact (rational
//! arithmetic, no floats); optimal play per board; and cross-checks of the
//! exact figures against the game engine and against sealed blocks. The
//! shared machinery of PAR sheets (exact numbers, estimates, a block's
//! figures played to the end) is [`crate::par`].
//!
//! - [`exact`]: the exact figures of every strategy, by a series-by-series
//!   kernel ([`kernel`]: the board's ten series are independent of each
//!   other and of the dice, and every path lands in each six-square
//!   segment);
//! - [`optimal`]: the best stopping play of a player who sees the board;
//! - [`sample`]: every strategy replayed on units drawn by the engine and
//!   on a sealed block's units;
//! - here: [`par_sheet`], the sheet `issuer par` prints.

pub mod exact;
pub mod kernel;
pub mod optimal;
pub mod sample;
mod strategy;

use exact::exact_sheet;
use optimal::optimal_sheet;
use sample::{block_figures, engine_sample, write_sampled};

use crate::error::Error;
use crate::par::{line, x, z, ParOption, ParRequest, ParSheet};

/// `boards`: boards drawn from the generator for optimal play.
pub const BOARDS: ParOption = ParOption {
    name: "boards",
    help: "boards drawn from the generator for optimal play",
    default: 20_000,
    range: (2, 10_000_000),
};

/// `exact-boards`: how many of those boards are also solved in exact
/// arithmetic (about 0.3 s each).
pub const EXACT_BOARDS: ParOption = ParOption {
    name: "exact-boards",
    help: "of those boards, how many are also solved in exact arithmetic (about 0.3 s each)",
    default: 3,
    range: (0, 100),
};

/// Trésors Ensablés' PAR options.
pub const OPTIONS: [ParOption; 2] = [BOARDS, EXACT_BOARDS];

/// Trésors Ensablés' PAR sheet: the exact figures, optimal play on drawn
/// boards, a Monte Carlo through the engine and, if asked, a sealed block,
/// each checked against the exact figures.
pub fn par_sheet(request: &ParRequest<'_>) -> Result<ParSheet, Error> {
    let exact = exact_sheet();
    let never = exact.strategies[0].rtp.clone();
    let optimal = optimal_sheet(
        request.option(&BOARDS),
        &request.seed("boards"),
        request.option(&EXACT_BOARDS),
        &never,
    );
    let sampled = engine_sample(request.samples, &request.seed("units"), &exact);
    let block = request
        .block
        .map(|block| block_figures(block, &exact))
        .transpose()?;
    let mut text = String::new();
    exact.write_text(&mut text);
    let o = &optimal;
    line!(
        text,
        "\noptimal play (a player who sees the board, not the dice nor the chests): RTP {:.6} ± {:.6} over {} boards drawn from seed {}",
        o.rtp, o.standard_error, o.boards, o.seed
    );
    line!(
        text,
        "  never-stop RTP by the same induction on those boards: {}",
        z(&o.never_stop)
    );
    for b in &o.exact_boards {
        line!(
            text,
            "  board {} in exact arithmetic: {} (f64 differs by {:.1e})",
            b.board,
            x(&b.exact),
            b.difference
        );
    }
    line!(
        text,
        "\ncross-check: {} units drawn and played by the game engine (z = (estimate − exact) / standard error)",
        sampled.units
    );
    write_sampled(&sampled.strategies, &mut text);
    let mut sheet = ParSheet::default()
        .with("exact", &exact)
        .with("optimal", &optimal)
        .with("monte_carlo", &sampled);
    if let Some(block) = &block {
        block.write_text(&mut text);
        sheet = sheet.with("block", block);
        sheet.block_ok = Some(block.verdict.pass);
    }
    sheet.text = text;
    Ok(sheet)
}
