//! Optimal play of Trésors Ensablés by a player who sees the board but
//! neither the dice nor the chests' contents (docs/PAR.md §Optimal play).
//!
//! Per board, backward induction over (square, life, gains found): before
//! each roll a player who has opened a chest may stop and take the gains,
//! or roll; the value of rolling is the mean over the six faces of where
//! the die lands (a chest adds its value, drawn from its table; a trap or
//! life square changes the life; life 0 is worth nothing; square 60 is
//! worth the gains plus the gold chest's mean). The same induction runs in
//! f64 over many boards and in exact rationals on a few, which must agree.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use rayon::prelude::*;
use serde::Serialize;

use super::exact::PRICE_CENTS;
use crate::game::tresors::{ChestKind, Square, Unit, BOARD_SQUARES, GOLD, GOLD_SQUARE, MAX_LIFE};
use crate::par::{Estimate, Exact};
use crate::rng::Stream;

/// Every chest value is a multiple of 10 cents: gains are indexed in
/// steps of 10 cents.
const STEP_CENTS: u32 = 10;

/// A number the induction can run in: f64 for speed, [`BigRational`] for
/// exactness.
pub trait Value: Clone + PartialOrd {
    /// `numerator / denominator`.
    fn ratio(numerator: u64, denominator: u64) -> Self;
    /// `self + other`.
    fn plus(&self, other: &Self) -> Self;
    /// `self × other`.
    fn times(&self, other: &Self) -> Self;
}

impl Value for f64 {
    fn ratio(numerator: u64, denominator: u64) -> f64 {
        numerator as f64 / denominator as f64
    }
    fn plus(&self, other: &f64) -> f64 {
        self + other
    }
    fn times(&self, other: &f64) -> f64 {
        self * other
    }
}

impl Value for BigRational {
    fn ratio(numerator: u64, denominator: u64) -> BigRational {
        BigRational::new(numerator.into(), denominator.into())
    }
    fn plus(&self, other: &BigRational) -> BigRational {
        self + other
    }
    fn times(&self, other: &BigRational) -> BigRational {
        self * other
    }
}

/// How the player decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Stop whenever the gains are worth more than rolling on.
    Optimal,
    /// Never stop.
    NeverStop,
}

/// A chest's values as (steps of 10 cents, probability).
fn chest_steps<V: Value>(kind: ChestKind) -> Vec<(usize, V)> {
    let table = kind.table();
    table
        .cents
        .iter()
        .zip(table.weights)
        .map(|(&c, &w)| {
            (
                (c / STEP_CENTS) as usize,
                V::ratio(u64::from(w), u64::from(table.denominator)),
            )
        })
        .collect()
}

/// The expected prize in cents of a unit with `board`, played by `policy`
/// from the start with full life.
pub fn board_value<V: Value>(board: &[Square; BOARD_SQUARES], policy: Policy) -> V {
    let squares = usize::from(GOLD_SQUARE);
    // The most gains (in steps) that can have been found on square p: the
    // top values of the chests at or before p.
    let mut most = vec![0usize; squares];
    for p in 1..squares {
        most[p] = most[p - 1];
        if p % 6 == 0 {
            let table = ChestKind::of_chest(p / 6 - 1).table();
            most[p] += (table.cents.iter().max().copied().unwrap_or(0) / STEP_CENTS) as usize;
        }
    }
    let bronze = chest_steps::<V>(ChestKind::Bronze);
    let silver = chest_steps::<V>(ChestKind::Silver);
    let gold_mean = V::ratio(GOLD.weighted_cents(), u64::from(GOLD.denominator));
    let zero = V::ratio(0, 1);
    let sixth = V::ratio(1, 6);
    let lives = usize::from(MAX_LIFE);
    // The gains of k steps, in cents, as a value.
    let cents: Vec<V> = (0..=most[squares - 1])
        .map(|k| V::ratio((k as u64) * u64::from(STEP_CENTS), 1))
        .collect();
    // value[p * lives + life − 1][k]: standing on p with that life and k
    // steps of gains, the square applied, before deciding.
    let mut value: Vec<Vec<V>> = vec![Vec::new(); squares * lives];
    for p in (0..squares).rev() {
        for life in 1..=MAX_LIFE {
            let mut roll = vec![zero.clone(); most[p] + 1];
            for die in 1..=6 {
                let q = (p + die).min(squares);
                if q == squares {
                    // The gold chest: the gains plus its mean; the end.
                    for (sum, c) in roll.iter_mut().zip(&cents) {
                        *sum = sum.plus(&c.plus(&gold_mean));
                    }
                } else if q % 6 == 0 {
                    let chest = if (q / 6 - 1) % 2 == 0 {
                        &bronze
                    } else {
                        &silver
                    };
                    let after = &value[q * lives + usize::from(life) - 1];
                    for (step, prob) in chest {
                        for (sum, v) in roll.iter_mut().zip(&after[*step..]) {
                            *sum = sum.plus(&prob.times(v));
                        }
                    }
                } else {
                    let next = i16::from(life) + i16::from(board[q].life_change());
                    // Life 0 is worth nothing: no term.
                    if next > 0 {
                        let l = next.min(i16::from(MAX_LIFE)) as usize;
                        for (sum, v) in roll.iter_mut().zip(&value[q * lives + l - 1]) {
                            *sum = sum.plus(v);
                        }
                    }
                }
            }
            let decided = roll
                .into_iter()
                .zip(&cents)
                .enumerate()
                .map(|(k, (sum, stop))| {
                    let go_on = sum.times(&sixth);
                    // k = 0: no chest opened yet, the player must roll.
                    match policy {
                        Policy::Optimal if k > 0 && *stop > go_on => stop.clone(),
                        _ => go_on,
                    }
                })
                .collect();
            value[p * lives + usize::from(life) - 1] = decided;
        }
    }
    value[usize::from(MAX_LIFE) - 1][0].clone()
}

/// One board computed both ways.
#[derive(Clone, Debug, Serialize)]
pub struct ExactBoard {
    /// The board's number among the drawn boards (its stream).
    pub board: u64,
    /// The optimal RTP in f64.
    pub float: f64,
    /// The optimal RTP exactly.
    pub exact: Exact,
    /// |float − exact|.
    pub difference: f64,
}

/// Optimal play over boards drawn from the generator.
#[derive(Clone, Debug, Serialize)]
pub struct OptimalSheet {
    /// Boards averaged.
    pub boards: u64,
    /// The seed the boards were drawn from (hex): board i is the board of
    /// the unit drawn from stream i of this seed.
    pub seed: String,
    /// The mean optimal RTP and its standard error.
    pub rtp: f64,
    /// Standard error of `rtp`.
    pub standard_error: f64,
    /// The never-stop RTP averaged over the same boards by the same
    /// induction, against the exact figure.
    pub never_stop: Estimate,
    /// The first boards computed in exact arithmetic too.
    pub exact_boards: Vec<ExactBoard>,
}

/// The board of the unit drawn from stream `i` of `seed`.
pub fn drawn_board(seed: &[u8; 32], i: u64) -> [Square; BOARD_SQUARES] {
    *Unit::generate(&mut Stream::new(seed, i)).board()
}

/// Optimal play averaged over `boards` boards of `seed`, with the first
/// `exact_boards` also computed exactly; `never_stop_exact` is the exact
/// never-stop RTP the never-stop average is checked against.
pub fn optimal_sheet(
    boards: u64,
    seed: &[u8; 32],
    exact_boards: u64,
    never_stop_exact: &Exact,
) -> OptimalSheet {
    let price = f64::from(PRICE_CENTS);
    let values: Vec<(f64, f64)> = (0..boards)
        .into_par_iter()
        .map(|i| {
            let board = drawn_board(seed, i);
            (
                board_value::<f64>(&board, Policy::Optimal) / price,
                board_value::<f64>(&board, Policy::NeverStop) / price,
            )
        })
        .collect();
    let stats = |pick: fn(&(f64, f64)) -> f64| {
        let n = values.len() as f64;
        let mean = values.iter().map(pick).sum::<f64>() / n;
        let var = values.iter().map(|v| (pick(v) - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, (var / n).sqrt())
    };
    let (rtp, standard_error) = stats(|v| v.0);
    let (never_mean, never_se) = stats(|v| v.1);
    let exact_boards = (0..exact_boards.min(boards))
        .into_par_iter()
        .map(|i| {
            let exact: BigRational =
                board_value::<BigRational>(&drawn_board(seed, i), Policy::Optimal)
                    / BigInt::from(PRICE_CENTS);
            let float = values[i as usize].0;
            ExactBoard {
                board: i,
                float,
                difference: (float - exact.to_f64().unwrap_or(f64::NAN)).abs(),
                exact: Exact(exact),
            }
        })
        .collect();
    OptimalSheet {
        boards,
        seed: hex::encode(seed),
        rtp,
        standard_error,
        never_stop: Estimate::of(never_mean, never_se, never_stop_exact),
        exact_boards,
    }
}
