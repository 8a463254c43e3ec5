//! Trésors Ensablés, exact: the return to player and the play's
//! distribution under the stopping strategies of the PAR sheet, in integer
//! arithmetic over one common denominator (docs/PAR.md §Exact method).
//! The figures come from chaining the segments' kernels ([`super::kernel`]).

use num_bigint::BigInt;
use num_rational::BigRational;
use serde::Serialize;

use super::kernel::{Chain, Kernels};
pub use super::strategy::{Strategy, STRATEGIES};
use crate::game::tresors::{
    weighted_cents, ChestTable, GoldChoice, CHESTS, GOLD, GOLD_ALTERNATIVES, MAX_PRIZE_CENTS,
};
use crate::money::Cents;
use crate::par::{line, x, Exact, TEXT_PLACES};

/// The price of a unit in cents (article 2: 1 €).
pub const PRICE_CENTS: u32 = 100;

/// The exact figures of one strategy.
#[derive(Clone, Debug, Serialize)]
pub struct StrategyFigures {
    /// The strategy's name.
    pub strategy: String,
    /// Return to player: expected prize / price.
    pub rtp: Exact,
    /// The return from every prize but the gold chest's top value
    /// (10 000 €, 1 in 100,000): a unit that finds it counts it as 0. The
    /// figure a sample can check with a useful z-score (docs/PAR.md).
    pub rtp_without_jackpot: Exact,
    /// Probability that the unit pays something.
    pub hit_frequency: Exact,
    /// Probability of dying (life 0).
    pub death: Exact,
    /// Probability of stopping with gains.
    pub stopped: Exact,
    /// Probability of reaching the gold chest alive (square 60).
    pub gold_alive: Exact,
    /// Expected number of rolls until the unit ends (death, stop or 60).
    pub expected_rolls: Exact,
    /// Probability that 0, 1, …, 10 chests were opened when it ended.
    pub chests_opened: Vec<Exact>,
}

/// The RTP of the never-stop play under one admissible gold table.
#[derive(Clone, Debug, Serialize)]
pub struct GoldAlternative {
    /// Which line gives up the extra 1/100,000 (`from 1 €`, …).
    pub name: &'static str,
    /// Whether the game uses it.
    pub used: bool,
    /// The gold chest's mean value in euros.
    pub gold_mean: Exact,
    /// The never-stop RTP with it.
    pub rtp_never_stop: Exact,
    /// That RTP minus the game's.
    pub difference: Exact,
}

/// Trésors Ensablés' exact figures.
#[derive(Clone, Debug, Serialize)]
pub struct ExactSheet {
    /// Price of a unit in euros.
    pub price: String,
    /// The largest prize in euros (3.3.4).
    pub max_prize: String,
    /// The largest prize as a multiple of the stake.
    pub max_multiple: Exact,
    /// One line per strategy, [`STRATEGIES`] order.
    pub strategies: Vec<StrategyFigures>,
    /// The never-stop RTP under each admissible gold table.
    pub gold_alternatives: Vec<GoldAlternative>,
}

/// Computes the sheet's exact figures.
pub fn exact_sheet() -> ExactSheet {
    let kernels = Kernels::new();
    let strategies: Vec<Chain> = STRATEGIES.iter().map(|&s| kernels.chain(s)).collect();
    let gold_alternatives = {
        let never = &strategies[0];
        let used = never.rtp(&chest_mean_cents(&GOLD));
        GOLD_ALTERNATIVES
            .iter()
            .map(|choice| {
                let mean = gold_choice_mean_cents(choice);
                let rtp = never.rtp(&mean);
                GoldAlternative {
                    name: choice.name,
                    used: choice.weights == *GOLD.weights,
                    gold_mean: Exact(mean / BigInt::from(100)),
                    difference: Exact(&rtp - &used),
                    rtp_never_stop: Exact(rtp),
                }
            })
            .collect()
    };
    ExactSheet {
        price: Cents::from(PRICE_CENTS).to_string(),
        max_prize: Cents::from(MAX_PRIZE_CENTS).to_string(),
        max_multiple: Exact::ratio(MAX_PRIZE_CENTS, PRICE_CENTS),
        strategies: STRATEGIES
            .iter()
            .zip(&strategies)
            .map(|(s, chain)| chain.figures(*s))
            .collect(),
        gold_alternatives,
    }
}

impl ExactSheet {
    /// The exact figures as text, appended to `out`.
    pub fn write_text(&self, out: &mut String) {
        let e = self;
        line!(
            out,
            "PAR sheet: tresors-ensables at {} € (exact: rational arithmetic over the boards, dice and chests)",
            e.price
        );
        let mut row = |cells: [&str; 7]| {
            line!(
                out,
                "  {:<12} {:>15} {:>15} {:>15} {:>15} {:>15} {:>15}",
                cells[0],
                cells[1],
                cells[2],
                cells[3],
                cells[4],
                cells[5],
                cells[6]
            )
        };
        row([
            "strategy",
            "RTP",
            "hit frequency",
            "gold alive",
            "death",
            "stopped",
            "rolls",
        ]);
        for s in &e.strategies {
            row([
                &s.strategy,
                &x(&s.rtp),
                &x(&s.hit_frequency),
                &x(&s.gold_alive),
                &x(&s.death),
                &x(&s.stopped),
                &x(&s.expected_rolls),
            ]);
        }
        line!(out, "  chests opened when the unit ends, never stopping:");
        for (n, p) in e.strategies[0].chests_opened.iter().enumerate() {
            line!(out, "    {n:>2}: {}", x(p));
        }
        line!(
            out,
            "  largest prize {} € = {}× the stake (3.3.4)",
            e.max_prize,
            e.max_multiple.decimal(2)
        );
        line!(
            out,
            "  gold chest tables admitted by the published odds (never-stop RTP):"
        );
        for g in &e.gold_alternatives {
            line!(
                out,
                "    {:<10} mean {} €  RTP {}  {}",
                g.name,
                g.gold_mean.decimal(5),
                x(&g.rtp_never_stop),
                if g.used {
                    "(used by the game)".to_string()
                } else {
                    format!("differs by {}", g.difference.decimal(TEXT_PLACES + 2))
                }
            );
        }
    }
}

/// The mean of a chest table in cents, exactly.
pub fn chest_mean_cents(table: &ChestTable) -> BigRational {
    weighted_mean(table.cents, table.weights, table.denominator)
}

/// Σ cents × weight / denominator.
fn weighted_mean(cents: &[u32], weights: &[u32], denominator: u32) -> BigRational {
    BigRational::new(weighted_cents(cents, weights).into(), denominator.into())
}

/// The gold chest's mean in cents with its top value counted as 0.
fn gold_mean_without_jackpot_cents() -> BigRational {
    let top = GOLD.cents.len() - 1;
    weighted_mean(&GOLD.cents[..top], &GOLD.weights[..top], GOLD.denominator)
}

/// The gold chest's top value (10 000 €) in cents.
pub fn jackpot_cents() -> u32 {
    GOLD.cents[GOLD.cents.len() - 1]
}

/// The gold chest's mean in cents under an admissible weight set.
fn gold_choice_mean_cents(choice: &GoldChoice) -> BigRational {
    weighted_mean(GOLD.cents, &choice.weights, GOLD.denominator)
}

impl Chain {
    /// The RTP with a gold chest of mean `gold_mean` cents.
    fn rtp(&self, gold_mean: &BigRational) -> BigRational {
        let prizes = &self.stopped.gains + &self.gold.gains + &self.gold.p * gold_mean;
        prizes / BigInt::from(PRICE_CENTS)
    }

    fn figures(&self, strategy: Strategy) -> StrategyFigures {
        let opened = (0..=CHESTS)
            .map(|n| Exact(&self.death.opened[n] + &self.stopped.opened[n] + &self.gold.opened[n]))
            .collect();
        StrategyFigures {
            strategy: strategy.name(),
            rtp: Exact(self.rtp(&chest_mean_cents(&GOLD))),
            rtp_without_jackpot: Exact(self.rtp(&gold_mean_without_jackpot_cents())),
            hit_frequency: Exact(&self.stopped.p + &self.gold.p),
            death: Exact(self.death.p.clone()),
            stopped: Exact(self.stopped.p.clone()),
            gold_alive: Exact(self.gold.p.clone()),
            expected_rolls: Exact(&self.death.rolls + &self.stopped.rolls + &self.gold.rolls),
            chests_opened: opened,
        }
    }
}

/// The exact law of a unit's prize played to the end (never stopping),
/// in cents, by increasing amount: 0 on a death; on reaching the gold
/// chest alive, the chests found on the way plus the gold chest's value.
/// The gains on the way are tracked by chaining the segments under a
/// threshold no play reaches.
pub fn prize_law_to_end() -> Vec<(u32, BigRational)> {
    let chain = Kernels::new().chain(Strategy::Reach(u32::MAX));
    let alive: BigRational = chain.gold_found.iter().map(|(_, p)| p).sum();
    let mut law: std::collections::BTreeMap<u32, BigRational> = std::collections::BTreeMap::new();
    law.insert(0, BigRational::from_integer(1.into()) - alive);
    let denominator = BigInt::from(GOLD.denominator);
    for (found, p) in &chain.gold_found {
        for (&gold, &w) in GOLD.cents.iter().zip(GOLD.weights) {
            let share = p * BigRational::new(BigInt::from(w), denominator.clone());
            *law.entry(found + gold)
                .or_insert_with(|| BigRational::from_integer(0.into())) += share;
        }
    }
    law.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::tresors::par::kernel::zero;

    #[test]
    fn every_play_ends_once() {
        let sheet = exact_sheet();
        for s in &sheet.strategies {
            let total = &s.death.0 + &s.stopped.0 + &s.gold_alive.0;
            assert_eq!(total, BigRational::from_integer(1.into()), "{}", s.strategy);
            let opened = s.chests_opened.iter().fold(zero(), |sum, p| sum + &p.0);
            assert_eq!(opened, BigRational::from_integer(1.into()));
        }
        let never = &sheet.strategies[0];
        assert_eq!(never.stopped.0, zero());
        assert_eq!(never.hit_frequency, never.gold_alive);
        assert_eq!(sheet.gold_alternatives[0].difference.0, zero());
        assert!(sheet.gold_alternatives[0].used);
    }
}
