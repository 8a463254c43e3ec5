//! Trésors Ensablés' strategies replayed (docs/PAR.md §Cross-checks):
//! on units drawn and played by the game engine itself (the code that
//! generates and redeems units), and on the units of a sealed block,
//! beside the block's figures played to the end
//! ([`crate::par::sample::block_figures`]). Each figure comes with its
//! standard error and its z-score against the exact value; a wrong
//! engine, draw or exact method shows up as a large |z|.

use rayon::prelude::*;
use serde::Serialize;

use super::exact::{jackpot_cents, ExactSheet, Strategy, PRICE_CENTS, STRATEGIES};
use crate::block::authentic::AuthenticBlock;
use crate::error::Error;
use crate::evidence::report::judge_tests;
use crate::evidence::report::StatTest;
use crate::game::tresors::{End, Unit, CHESTS, GOLD};
use crate::game::{Game, GameUnit};
use crate::par::sample::{block_figures_with, Expected, UnitTally};
use crate::par::{line, z, BlockVerdict, Estimate, Exact};
use crate::rng::Stream;
use crate::stats;
use num_traits::ToPrimitive;

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
    /// Units whose gold chest paid its top value (10 000 €).
    jackpots: u64,
}

/// Per-strategy sums over units.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
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
        self.jackpots += b.jackpots;
        self
    }
}

impl UnitTally for Tally {
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
        self.add_unit(&Unit::decode(payload)?)
    }
}

impl Tally {
    /// [`UnitTally::add`] of a unit decoded already (the audit's tally
    /// decodes each unit once for all it counts).
    pub(crate) fn add_unit(&mut self, unit: &Unit) -> Result<(), String> {
        let jackpot = jackpot_cents();
        self.units += 1;
        for (strategy, sums) in STRATEGIES.iter().zip(self.sums.iter_mut()) {
            let stop = stop_point(unit, *strategy);
            let played = GameUnit::outcome(unit, stop).map_err(|e| format!("{e:?}"))?;
            let prize = u128::from(played.prize.amount().unwrap_or(0));
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
            sums.jackpots += u64::from(jackpot);
            sums.rolls += u64::from(outcome.rolls);
            sums.rolls_squares += u64::from(outcome.rolls).pow(2);
        }
        Ok(())
    }

    pub(crate) fn figures(&self, exact: &ExactSheet) -> Vec<SampledStrategy> {
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
                    jackpots: sums.jackpots,
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
    /// Units whose gold chest paid its top value (10 000 €): judged by
    /// their count against the Poisson law (docs/AUDIT.md).
    pub jackpots: u64,
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

/// A block's units against the sheet: played to the end, from the
/// records' prizes, and every strategy replayed on them.
#[derive(Clone, Debug, Serialize)]
pub struct BlockFigures {
    /// The block and its figures played to the end, against the
    /// never-stop figures.
    #[serde(flatten)]
    pub played: crate::par::sample::BlockFigures,
    /// Every strategy replayed on the block's units.
    pub strategies: Vec<SampledStrategy>,
    /// The verdict, judged fairly for the 10,000 € lot.
    pub verdict: BlockVerdict,
}

impl BlockFigures {
    /// The figures as text, appended to `out`.
    pub fn write_text(&self, out: &mut String) {
        self.played.write_text(out);
        write_sampled(&self.strategies, out);
        line!(out, "{}", self.verdict.line());
    }
}

/// Reads every unit of an authenticated block of the game (each re-checked
/// against the rules), compares its prizes with the never-stop figures and
/// replays every strategy on it.
pub fn block_figures(block: &AuthenticBlock, exact: &ExactSheet) -> Result<BlockFigures, Error> {
    let never = &exact.strategies[0];
    let expected = Expected::Figures {
        rtp: &never.rtp,
        hit_frequency: &never.hit_frequency,
    };
    let (played, tally) = block_figures_with::<Tally>(block, expected)?;
    let strategies = tally.figures(exact);
    let verdict = block_verdict(played.units, &strategies, exact);
    Ok(BlockFigures {
        played,
        strategies,
        verdict,
    })
}

/// The level `par --block` judges a block at.
const LEVEL: f64 = 0.01;

/// A block's verdict: each strategy's return without the 10,000 € lot by
/// its z-score and the count of 10,000 € lots by the Poisson law
/// ([`strategy_tests`]), Holm over them.
fn block_verdict(units: u64, strategies: &[SampledStrategy], exact: &ExactSheet) -> BlockVerdict {
    let mut tests = strategy_tests("block", "block", units, strategies, exact);
    judge_tests(&mut tests, &[LEVEL]);
    let failing: Vec<String> = tests
        .iter()
        .filter(|t| t.fails_at(LEVEL))
        .map(|t| {
            format!(
                "{} ({}; p {:.2e} after Holm)",
                t.name,
                t.note,
                t.p_adjusted.unwrap_or(0.0)
            )
        })
        .collect();
    let reason = if failing.is_empty() {
        format!(
            "each strategy's return without the 10,000 € lot is within its sampling error, and the count of 10,000 € lots agrees with the Poisson law ({} tests, Holm). The RTP z-score above is no test: it counts the 10,000 € lot (never stopping: {}), whose presence or absence alone moves a block's return by 10,000 € over its stakes, while the block's own sample variance cannot show it",
            tests.len(),
            tests
                .iter()
                .find(|t| t.id == "block/jackpots-never-stop")
                .map_or("", |t| t.note.as_str())
        )
    } else {
        failing.join("; ")
    };
    BlockVerdict {
        level: LEVEL,
        pass: failing.is_empty(),
        reason,
        tests,
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

/// The tests of a block's return under each strategy, fair for the
/// 10,000 € lot (docs/AUDIT.md §Trésors Ensablés): the return without that
/// lot against its exact figure by its z-score (every other prize is at
/// most 10.50 €, so the mean is near normal), and the count of 10,000 €
/// lots against the Poisson law of mean units × P(gold chest reached) ×
/// 1/100,000 (a 450,000-unit block expects fewer than one: its presence or
/// absence alone moves the block's return by about 2 points, which is why
/// the return with it is no test).
pub(crate) fn strategy_tests(
    scope: &str,
    id: &str,
    units: u64,
    sampled: &[SampledStrategy],
    sheet: &ExactSheet,
) -> Vec<StatTest> {
    let jackpot_p = f64::from(GOLD.weights[GOLD.weights.len() - 1]) / f64::from(GOLD.denominator);
    let mut tests = Vec::new();
    for (got, exact) in sampled.iter().zip(&sheet.strategies) {
        let e = &got.rtp_without_jackpot;
        tests.push(
            StatTest::ran(
                format!("{id}/rtp-{}", got.strategy),
                scope,
                &format!("return without the 10,000 € lot, playing {}", got.strategy),
                "z-score against the exact figure (normal)",
                e.z,
                None,
                stats::normal_two_sided_p(e.z),
            )
            .noted(format!(
                "{:.6} found, {} exact, standard error {:.6}",
                e.mean,
                exact.rtp_without_jackpot.decimal(6),
                e.standard_error
            )),
        );
        let gold_alive = exact.gold_alive.0.to_f64().unwrap_or(f64::NAN);
        let lambda = units as f64 * gold_alive * jackpot_p;
        tests.push(
            StatTest::ran(
                format!("{id}/jackpots-{}", got.strategy),
                scope,
                &format!("10,000 € lots won, playing {}", got.strategy),
                "exact Poisson test (two-sided)",
                got.jackpots as f64,
                None,
                stats::poisson_two_sided_p(got.jackpots, lambda),
            )
            .noted(format!("{} found, {lambda:.3} expected", got.jackpots)),
        );
    }
    tests
}
