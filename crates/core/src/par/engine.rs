//! The cross-checks any drawn game gets from its own exact figures: a
//! Monte Carlo through its engine (the code that generates and redeems its
//! units), played to the end, and a sealed block's units, each compared
//! with the return to player and hit frequency the game computed exactly.

use rayon::prelude::*;
use serde::Serialize;

use super::sample::{block_figures, Expected};
use super::{line, x, z, Estimate, Exact, ParRequest, ParSheet};
use crate::error::Error;
use crate::game::Game;
use crate::money::Cents;
use crate::rng::Stream;

/// A drawn game's exact figures at one price, played to the end.
#[derive(Clone, Debug, Serialize)]
pub struct DrawnFigures {
    /// Price of a unit in euros.
    pub price: String,
    /// Return to player: expected prize / price.
    pub rtp: Exact,
    /// Probability that a unit wins something.
    pub hit_frequency: Exact,
}

/// Units drawn and played to the end by the game's engine.
#[derive(Clone, Debug, Serialize)]
pub struct EngineSample {
    /// Units drawn.
    pub units: u64,
    /// Return to player against the exact figure.
    pub rtp: Estimate,
    /// Hit frequency against the exact figure.
    pub hit_frequency: Estimate,
}

/// Draws `units` units of `game` at `price_cents` from `seed` (unit `i`
/// from stream `i + 1`, as a block's units are) and plays each to the end.
pub fn engine_sample(
    game: Game,
    price_cents: u32,
    units: u64,
    seed: &[u8; 32],
    exact: &DrawnFigures,
) -> EngineSample {
    // (units, sum of prizes, sum of squared prizes, winners), in cents.
    let (n, sum, squares, wins) = (0..units)
        .into_par_iter()
        .fold(
            || (0u64, 0u128, 0u128, 0u64, Vec::new()),
            |(n, sum, squares, wins, mut payload), i| {
                payload.clear();
                let played = game.generate_payload(&mut Stream::new(seed, i + 1), 0, &mut payload);
                let prize = u128::from(played.prize.amount().unwrap_or(0));
                (
                    n + 1,
                    sum + prize,
                    squares + prize * prize,
                    wins + u64::from(prize > 0),
                    payload,
                )
            },
        )
        .map(|(n, sum, squares, wins, _)| (n, sum, squares, wins))
        .reduce(
            || (0, 0, 0, 0),
            |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3),
        );
    EngineSample {
        units: n,
        rtp: Estimate::from_sums(n, sum, squares, price_cents.into(), &exact.rtp),
        hit_frequency: Estimate::from_sums(n, wins.into(), wins.into(), 1, &exact.hit_frequency),
    }
}

/// The PAR sheet of a drawn game from its exact figures at each price
/// (`exact` gives them for a price in cents): the figures, a Monte Carlo
/// through the engine and, if asked, a sealed block, checked against them.
pub fn par_sheet(
    game: Game,
    request: &ParRequest<'_>,
    exact: impl Fn(u32) -> DrawnFigures,
) -> Result<ParSheet, Error> {
    let prices = match request.price_cents {
        Some(cents) => vec![cents],
        None => game.prices_cents().to_vec(),
    };
    let mut text = String::new();
    let mut sheets = Vec::new();
    let mut samples = Vec::new();
    for &cents in &prices {
        let figures = exact(cents);
        let sample = engine_sample(
            game,
            cents,
            request.samples,
            &request.seed("units"),
            &figures,
        );
        line!(
            text,
            "PAR sheet: {} at {} € (played to the end; exact figures from the game)",
            game.slug(),
            Cents::from(cents)
        );
        line!(
            text,
            "  return to player  {}  ({})",
            x(&figures.rtp),
            figures.rtp.fraction()
        );
        line!(text, "  hit frequency     {}", x(&figures.hit_frequency));
        line!(
            text,
            "  cross-check: {} units drawn and played by the game engine: RTP {}, hit {}",
            sample.units,
            z(&sample.rtp),
            z(&sample.hit_frequency)
        );
        sheets.push(figures);
        samples.push(sample);
    }
    let block = request
        .block
        .map(|block| {
            block_figures(
                block,
                Expected::Figures {
                    rtp: &sheets[0].rtp,
                    hit_frequency: &sheets[0].hit_frequency,
                },
            )
        })
        .transpose()?;
    let mut sheet = ParSheet::default()
        .with("exact", &sheets)
        .with("monte_carlo", &samples);
    if let Some(block) = &block {
        block.write_text(&mut text);
        sheet = sheet.with("block", block);
    }
    sheet.text = text;
    Ok(sheet)
}
