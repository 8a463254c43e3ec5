//! Cross-checks of the exact figures (docs/PAR.md §Cross-checks): units
//! drawn and played by the game engine itself (the code that generates and
//! redeems units), and the units of a sealed block. Each figure comes with
//! its standard error and its z-score against the exact value; a wrong
//! engine, draw or exact method shows up as a large |z|.

use rayon::prelude::*;
use serde::Serialize;

use super::table::TableSheet;
use super::tresors::{jackpot_cents, ExactSheet, Strategy, PRICE_CENTS, STRATEGIES};
use super::{line, z, Estimate, Exact};
use crate::block::authentic::AuthenticBlock;
use crate::error::Error;
use crate::game::tresors::{End, Unit, CHESTS};
use crate::game::Game;
use crate::record::PREFIX_SIZE;
use crate::rng::Stream;

/// Sums over units of one strategy's figures: integer sums, so the means
/// are exact up to the final division.
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    prize: u128,
    prize_squares: u128,
    /// The prize without the gold chest's top value.
    core: u128,
    core_squares: u128,
    wins: u64,
    gold: u64,
    rolls: u64,
    rolls_squares: u64,
}

/// Per-strategy sums over units.
#[derive(Clone, Debug, Default)]
struct Tally {
    units: u64,
    sums: [Sums; STRATEGIES.len()],
}

impl Sums {
    fn merge(mut self, b: Sums) -> Sums {
        self.prize += b.prize;
        self.prize_squares += b.prize_squares;
        self.core += b.core;
        self.core_squares += b.core_squares;
        self.wins += b.wins;
        self.gold += b.gold;
        self.rolls += b.rolls;
        self.rolls_squares += b.rolls_squares;
        self
    }
}

impl Tally {
    fn merge(mut self, other: Tally) -> Tally {
        self.units += other.units;
        for (a, b) in self.sums.iter_mut().zip(other.sums) {
            *a = a.merge(b);
        }
        self
    }

    /// Plays the unit of `payload` under every strategy: the stop point
    /// from the unit's rolls, the prize from the game's redemption path
    /// (`GameRules::outcome`).
    fn add(&mut self, payload: &[u8]) -> Result<(), String> {
        let game = Game::TRESORS_ENSABLES;
        let jackpot = jackpot_cents();
        let unit = Unit::decode(payload)?;
        self.units += 1;
        for (strategy, sums) in STRATEGIES.iter().zip(self.sums.iter_mut()) {
            let stop = stop_point(&unit, *strategy);
            let played = game.outcome(payload, stop).map_err(|e| format!("{e:?}"))?;
            let prize = u128::from(played.prize_cents.unwrap_or(0));
            let outcome = unit.play(stop).map_err(|e| e.to_string())?;
            let jackpot = outcome.end == End::Gold && unit.chest_cents(CHESTS - 1) == jackpot;
            let core = prize
                - if jackpot {
                    u128::from(jackpot_cents())
                } else {
                    0
                };
            sums.prize += prize;
            sums.prize_squares += prize * prize;
            sums.core += core;
            sums.core_squares += core * core;
            sums.wins += u64::from(prize > 0);
            sums.gold += u64::from(outcome.end == End::Gold);
            sums.rolls += u64::from(outcome.rolls);
            sums.rolls_squares += u64::from(outcome.rolls).pow(2);
        }
        Ok(())
    }

    fn figures(&self, exact: &ExactSheet) -> Vec<SampledStrategy> {
        let n = self.units;
        STRATEGIES
            .iter()
            .zip(&self.sums)
            .zip(&exact.strategies)
            .map(|((s, sums), x)| {
                let share = |count: u64, exact: &Exact| {
                    Estimate::from_sums(n, count.into(), count.into(), 1, exact)
                };
                SampledStrategy {
                    strategy: s.name(),
                    rtp: Estimate::from_sums(
                        n,
                        sums.prize,
                        sums.prize_squares,
                        PRICE_CENTS.into(),
                        &x.rtp,
                    ),
                    rtp_without_jackpot: Estimate::from_sums(
                        n,
                        sums.core,
                        sums.core_squares,
                        PRICE_CENTS.into(),
                        &x.rtp_without_jackpot,
                    ),
                    hit_frequency: share(sums.wins, &x.hit_frequency),
                    gold_alive: share(sums.gold, &x.gold_alive),
                    expected_rolls: Estimate::from_sums(
                        n,
                        sums.rolls.into(),
                        sums.rolls_squares.into(),
                        1,
                        &x.expected_rolls,
                    ),
                }
            })
            .collect()
    }
}

/// Where `strategy` presses « Arrêter » on this unit: right after the
/// chest whose gains reach its threshold, unless the play ends first
/// (`None`: played to the end).
pub fn stop_point(unit: &Unit, strategy: Strategy) -> Option<u32> {
    strategy.threshold_cents()?;
    for step in unit.steps() {
        if step.end.is_some() {
            return None;
        }
        if step.chest_cents.is_some() && strategy.stops_at(step.found_cents) {
            return Some(step.roll);
        }
    }
    None
}

/// One strategy's figures from samples, against the exact ones.
#[derive(Clone, Debug, Serialize)]
pub struct SampledStrategy {
    /// The strategy's name.
    pub strategy: String,
    /// Return to player.
    pub rtp: Estimate,
    /// Return to player without the gold chest's top value: the one to
    /// judge by, as a sample seldom holds a 10 000 € prize (docs/PAR.md).
    pub rtp_without_jackpot: Estimate,
    /// Probability of a prize.
    pub hit_frequency: Estimate,
    /// Probability of reaching the gold chest alive.
    pub gold_alive: Estimate,
    /// Rolls until the unit ends.
    pub expected_rolls: Estimate,
}

/// Figures from played units, against the exact ones.
#[derive(Clone, Debug, Serialize)]
pub struct Sampled {
    /// Where the units come from: `engine` or the block file's path.
    pub source: String,
    /// Units played.
    pub units: u64,
    /// One line per strategy.
    pub strategies: Vec<SampledStrategy>,
}

/// A Monte Carlo of Trésors Ensablés: unit i is drawn by the generator
/// (`GameRules::generate_payload`) from stream i of `seed`, then played
/// by every strategy through the redemption path.
pub fn engine_sample(units: u64, seed: &[u8; 32], exact: &ExactSheet) -> Sampled {
    const BATCH: u64 = 4096;
    let game = Game::TRESORS_ENSABLES;
    let tally = (0..units.div_ceil(BATCH))
        .into_par_iter()
        .map(|batch| {
            let mut tally = Tally::default();
            let mut payload = Vec::with_capacity(game.payload_size());
            for i in batch * BATCH..((batch + 1) * BATCH).min(units) {
                payload.clear();
                game.generate_payload(&mut Stream::new(seed, i), 0, &mut payload);
                tally
                    .add(&payload)
                    .expect("the generator makes valid units");
            }
            tally
        })
        .reduce(Tally::default, Tally::merge);
    Sampled {
        source: "engine".into(),
        units: tally.units,
        strategies: tally.figures(exact),
    }
}

/// A block's units against the sheet.
#[derive(Clone, Debug, Serialize)]
pub struct BlockFigures {
    /// The block file.
    pub path: String,
    /// Its game.
    pub game: &'static str,
    /// Units in the block.
    pub units: u64,
    /// Price of its units in euros.
    pub price: String,
    /// Played to the end: return to player and hit frequency, from the
    /// records' prizes, against the exact figures.
    pub rtp: Estimate,
    /// Share of winning units.
    pub hit_frequency: Estimate,
    /// Trésors Ensablés: every strategy replayed on the block's units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategies: Option<Vec<SampledStrategy>>,
}

/// The exact figures a block is checked against.
pub enum Expected<'a> {
    /// A fixed-table game's sheet at the block's price.
    Table(&'a TableSheet),
    /// Trésors Ensablés' exact figures.
    Drawn(&'a ExactSheet),
    /// A drawn game's return to player and hit frequency, played to the end.
    Figures {
        /// Return to player.
        rtp: &'a Exact,
        /// Share of winning units.
        hit_frequency: &'a Exact,
    },
}

impl BlockFigures {
    /// The figures as text, appended to `out`.
    pub fn write_text(&self, out: &mut String) {
        line!(
            out,
            "\ncross-check: block {} ({} units at {} €), played to the end",
            self.path,
            self.units,
            self.price
        );
        line!(out, "  RTP            {}", z(&self.rtp));
        line!(out, "  hit frequency  {}", z(&self.hit_frequency));
        if let Some(s) = &self.strategies {
            write_sampled(s, out);
        }
    }
}

/// Each strategy's estimates as text, appended to `out`.
pub fn write_sampled(strategies: &[SampledStrategy], out: &mut String) {
    for s in strategies {
        line!(
            out,
            "  {:<12} RTP {}  RTP without 10 000 € {}  hit {}  gold {}  rolls {}",
            s.strategy,
            z(&s.rtp),
            z(&s.rtp_without_jackpot),
            z(&s.hit_frequency),
            z(&s.gold_alive),
            z(&s.expected_rolls)
        );
    }
}

/// Reads every unit of an authenticated block (each re-checked against
/// the rules) and compares its figures with `expected`.
pub fn block_figures(
    block: &AuthenticBlock,
    expected: Expected<'_>,
) -> Result<BlockFigures, Error> {
    let h = &block.file.header;
    let chunks: Vec<u32> = (0..h.chunk_count).collect();
    // Trésors Ensablés' strategies are replayed on its own units only.
    let drawn = matches!(expected, Expected::Drawn(_));
    let per_chunk = chunks
        .par_iter()
        .map(|&chunk| {
            let mut tally = Tally::default();
            let mut played = Sums::default();
            block.for_each_checked_unit(chunk, |prefix, record| {
                let prize = u128::from(prefix.prize_cents);
                played.prize += prize;
                played.prize_squares += prize * prize;
                played.wins += u64::from(prize > 0);
                match drawn {
                    true => tally.add(&record[PREFIX_SIZE..]),
                    false => Ok(()),
                }
            })?;
            Ok((tally, played))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let (tally, played) = per_chunk
        .into_iter()
        .fold((Tally::default(), Sums::default()), |(t, p), (t2, p2)| {
            (t.merge(t2), p.merge(p2))
        });
    let units = u64::from(h.unit_count);
    let (exact_rtp, exact_hit, strategies) = match expected {
        Expected::Table(sheet) => (&sheet.rtp, &sheet.hit_frequency, None),
        Expected::Figures { rtp, hit_frequency } => (rtp, hit_frequency, None),
        Expected::Drawn(sheet) => (
            &sheet.strategies[0].rtp,
            &sheet.strategies[0].hit_frequency,
            Some(tally.figures(sheet)),
        ),
    };
    Ok(BlockFigures {
        path: block.file.path().display().to_string(),
        game: h.game.slug(),
        units,
        price: crate::game::cents_to_euros(h.price_cents).to_string(),
        rtp: Estimate::from_sums(
            units,
            played.prize,
            played.prize_squares,
            h.price_cents.into(),
            exact_rtp,
        ),
        hit_frequency: Estimate::from_sums(
            units,
            played.wins.into(),
            played.wins.into(),
            1,
            exact_hit,
        ),
        strategies,
    })
}
