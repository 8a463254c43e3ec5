//! The regulation's numbers (annex article 3): the board's size, the
//! life gauge, the three rules that draw a series' squares (3.2.2), the
//! chests' value tables (3.3.2) with the admissible gold tables, the lot
//! codes and the block sizes.

use super::square::Square;

/// The last square, which holds the gold chest (3.2.3).
pub const GOLD_SQUARE: u8 = 60;
/// Squares on the board, the start (0) included (3.2.1).
pub const BOARD_SQUARES: usize = GOLD_SQUARE as usize + 1;
/// Chests on the board: squares 6, 12, …, 60 (3.2.3).
pub const CHESTS: usize = 10;
/// Series of five drawn squares between the chests (3.2.2).
pub const SERIES: usize = 10;
/// The full life gauge the player starts with; it never holds more (3.1.3).
pub const MAX_LIFE: u8 = 3;
/// Longest dice tape: sixty 1s (a die that reaches or passes 60 stops on 60,
/// so a 1 always moves exactly one square).
pub const MAX_ROLLS: usize = GOLD_SQUARE as usize;
/// Shortest dice tape: ten 6s.
pub const MIN_ROLLS: usize = 10;
/// The largest prize of a unit, in cents: 10 010,50 € (3.3.4).
pub const MAX_PRIZE_CENTS: u32 = 1_001_050;

/// One of the three rules of 3.2.2: the squares it can give, each with its
/// weight out of [`RULE_DENOMINATOR`], and the published "1 chance sur"
/// figure of each.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// (square, weight, published odds) in the table's order.
    pub outcomes: [(Square, u32, &'static str); 3],
}

/// The rules' probabilities are weights out of 10 (0.3 / 0.4 / 0.3).
pub const RULE_DENOMINATOR: u32 = 10;

/// Rules 1, 2 and 3 of 3.2.2, in the table's order.
pub const RULES: [Rule; 3] = [
    Rule {
        outcomes: [
            (Square::Blank, 3, "3.33"),
            (Square::LifePlus1, 4, "2.50"),
            (Square::LifePlus2, 3, "3.33"),
        ],
    },
    Rule {
        outcomes: [
            (Square::Trap1, 3, "3.33"),
            (Square::Trap2, 4, "2.50"),
            (Square::Trap3, 3, "3.33"),
        ],
    },
    Rule {
        outcomes: [
            (Square::Trap1, 3, "3.33"),
            (Square::Blank, 4, "2.50"),
            (Square::LifePlus1, 3, "3.33"),
        ],
    },
];

/// A chest's kind (3.2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChestKind {
    /// Bronze: 0.10, 0.20 or 0.50 €.
    Bronze,
    /// Silver: 0.50, 1 or 2 €.
    Silver,
    /// Gold: 1 € to 10 000 €.
    Gold,
}

/// The values a chest can hold (3.3.2): amounts in cents, each with its
/// weight out of `denominator`, and the published "1 chance sur" figure.
#[derive(Clone, Copy, Debug)]
pub struct ChestTable {
    /// The weights' common denominator (a power of ten).
    pub denominator: u32,
    /// The values in cents, in the table's order.
    pub cents: &'static [u32],
    /// The weight of each value; they sum to `denominator`.
    pub weights: &'static [u32],
    /// The regulation's "1 chance sur" figure of each value.
    pub published_odds: &'static [&'static str],
}

impl ChestTable {
    /// Σ value × weight, in cents: the table's mean times its denominator.
    pub fn weighted_cents(&self) -> u64 {
        weighted_cents(self.cents, self.weights)
    }
}

/// Σ value × weight of values in cents and their weights.
pub fn weighted_cents(cents: &[u32], weights: &[u32]) -> u64 {
    cents
        .iter()
        .zip(weights)
        .map(|(&c, &w)| u64::from(c) * u64::from(w))
        .sum()
}

/// The bronze chest: 0.6 / 0.23 / 0.17 (the only weights out of 100 that
/// reproduce 1.67 / 4.35 / 5.88).
pub const BRONZE: ChestTable = ChestTable {
    denominator: 100,
    cents: &[10, 20, 50],
    weights: &[60, 23, 17],
    published_odds: &["1.67", "4.35", "5.88"],
};

/// The silver chest: the bronze weights on 0.50 / 1 / 2 €.
pub const SILVER: ChestTable = ChestTable {
    denominator: 100,
    cents: &[50, 100, 200],
    weights: &[60, 23, 17],
    published_odds: &["1.67", "4.35", "5.88"],
};

/// The gold chest's values in cents.
const GOLD_CENTS: [u32; 6] = [100, 200, 500, 1_000, 10_000, 1_000_000];
/// The gold chest's published odds.
const GOLD_ODDS: [&str; 6] = ["1.43", "6.67", "10.00", "20.41", "1000.00", "100000.00"];

/// A way to make the gold chest's published odds exact: weights out of
/// 100,000 summing to 100,000 that reproduce every published figure.
#[derive(Clone, Copy, Debug)]
pub struct GoldChoice {
    /// Which line gives up the 0.00001 the plain reciprocals have too much.
    pub name: &'static str,
    /// Weights of 1, 2, 5, 10, 100 and 10 000 €, out of 100,000.
    pub weights: [u32; 6],
}

/// The admissible gold weights that differ from the plain reciprocals
/// (0.7, 0.15, 0.1, 0.049, 0.001, 0.00001, which sum to 1.00001) by one
/// 0.00001 taken from a single line. The first is the one used
/// (docs/GAMES.md says why); the others are data for RTP comparisons.
pub const GOLD_ALTERNATIVES: [GoldChoice; 4] = [
    GoldChoice {
        name: "from 1 €",
        weights: [69_999, 15_000, 10_000, 4_900, 100, 1],
    },
    GoldChoice {
        name: "from 2 €",
        weights: [70_000, 14_999, 10_000, 4_900, 100, 1],
    },
    GoldChoice {
        name: "from 5 €",
        weights: [70_000, 15_000, 9_999, 4_900, 100, 1],
    },
    GoldChoice {
        name: "from 10 €",
        weights: [70_000, 15_000, 10_000, 4_899, 100, 1],
    },
];

/// The gold chest, with the first of [`GOLD_ALTERNATIVES`].
pub const GOLD: ChestTable = ChestTable {
    denominator: 100_000,
    cents: &GOLD_CENTS,
    weights: &GOLD_ALTERNATIVES[0].weights,
    published_odds: &GOLD_ODDS,
};

impl ChestKind {
    /// The kind of chest `k` (0 … 9, on square 6 × (k + 1)).
    pub fn of_chest(k: usize) -> ChestKind {
        match k {
            9 => ChestKind::Gold,
            k if k % 2 == 1 => ChestKind::Silver,
            _ => ChestKind::Bronze,
        }
    }

    /// Its value table.
    pub fn table(self) -> &'static ChestTable {
        match self {
            ChestKind::Bronze => &BRONZE,
            ChestKind::Silver => &SILVER,
            ChestKind::Gold => &GOLD,
        }
    }

    /// The board square of this kind.
    pub fn square(self) -> Square {
        match self {
            ChestKind::Bronze => Square::Bronze,
            ChestKind::Silver => Square::Silver,
            ChestKind::Gold => Square::Gold,
        }
    }

    /// "bronze", "silver", "gold".
    pub fn name(self) -> &'static str {
        self.square().token()
    }
}

/// The square of chest `k` (0 … 9).
pub fn chest_square(k: usize) -> u8 {
    6 * (k as u8 + 1)
}

/// The first square of series `s` (0 … 9): squares 6s + 1 … 6s + 5.
pub(super) fn series_start(s: usize) -> usize {
    6 * s + 1
}

/// Lot code of a unit that reaches the gold chest alive.
pub const LOT_GOLD: u8 = 1;
/// Lot code of a unit whose player stopped with gains.
pub const LOT_STOPPED: u8 = 2;

/// The most units a block may hold (docs/GAMES.md §Trésors Ensablés blocks).
pub const MAX_BLOCK_UNITS: u32 = 10_000_000;
/// Units of a block when `--units` is not given.
pub const DEFAULT_BLOCK_UNITS: u32 = 450_000;

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal::{Decimal, RoundingStrategy};

    // ---- the regulation's published odds ----

    /// "1 chance sur" of `weight` out of `denominator`: the reciprocal,
    /// rounded half-up to hundredths, exactly.
    fn odds(weight: u32, denominator: u32) -> Decimal {
        (Decimal::from(denominator) / Decimal::from(weight))
            .round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
    }

    fn reproduces(weights: &[u32], denominator: u32, published: &[&str]) -> bool {
        weights.len() == published.len()
            && weights
                .iter()
                .zip(published)
                .all(|(&w, p)| w > 0 && odds(w, denominator) == p.parse::<Decimal>().unwrap())
    }

    #[test]
    fn rounding_is_half_up_to_hundredths() {
        assert_eq!(odds(8, 9).to_string(), "1.13"); // 1.125
        assert_eq!(odds(80, 90).to_string(), "1.13");
        assert_eq!(odds(3, 10).to_string(), "3.33");
        assert_eq!(odds(69_999, 100_000).to_string(), "1.43");
    }

    #[test]
    fn every_table_reproduces_the_published_odds_and_sums_to_one() {
        for rule in RULES {
            let weights = rule.outcomes.map(|(_, w, _)| w);
            let published = rule.outcomes.map(|(_, _, p)| p);
            assert!(reproduces(&weights, RULE_DENOMINATOR, &published));
            assert_eq!(weights.iter().sum::<u32>(), RULE_DENOMINATOR);
        }
        for table in [BRONZE, SILVER, GOLD] {
            assert!(reproduces(
                table.weights,
                table.denominator,
                table.published_odds
            ));
            assert_eq!(table.weights.iter().sum::<u32>(), table.denominator);
            assert_eq!(table.cents.len(), table.weights.len());
        }
        assert_eq!(GOLD.weights, &GOLD_ALTERNATIVES[0].weights);
        for choice in GOLD_ALTERNATIVES {
            assert!(
                reproduces(&choice.weights, 100_000, &GOLD_ODDS),
                "{}",
                choice.name
            );
            assert_eq!(
                choice.weights.iter().sum::<u32>(),
                100_000,
                "{}",
                choice.name
            );
        }
    }

    #[test]
    fn the_smallest_denominators_leave_one_choice_except_gold() {
        // Out of 10, only 3 / 4 / 3 gives 3.33 / 2.50 / 3.33.
        let rule = ["3.33", "2.50", "3.33"];
        let found: Vec<[u32; 3]> = (1..10)
            .flat_map(|a| (1..10 - a).map(move |b| [a, b, 10 - a - b]))
            .filter(|w| reproduces(w, 10, &rule))
            .collect();
        assert_eq!(found, [[3, 4, 3]]);
        // Out of 100, only 60 / 23 / 17 gives 1.67 / 4.35 / 5.88.
        let found: Vec<[u32; 3]> = (1..100)
            .flat_map(|a| (1..100 - a).map(move |b| [a, b, 100 - a - b]))
            .filter(|w| reproduces(w, 100, BRONZE.published_odds))
            .collect();
        assert_eq!(found, [[60, 23, 17]]);
        // Gold: 10 000 € needs 1/100,000. The plain reciprocals reproduce
        // the figures but sum to 100,001; taking the extra 1 from one line
        // is admissible for exactly the four lines of GOLD_ALTERNATIVES.
        let plain = [70_000, 15_000, 10_000, 4_900, 100, 1];
        assert!(reproduces(&plain, 100_000, &GOLD_ODDS));
        assert_eq!(plain.iter().sum::<u32>(), 100_001);
        let admissible: Vec<[u32; 6]> = (0..6)
            .map(|line| {
                let mut w = plain;
                w[line] -= 1;
                w
            })
            .filter(|w| reproduces(w, 100_000, &GOLD_ODDS))
            .collect();
        assert_eq!(admissible, GOLD_ALTERNATIVES.map(|c| c.weights));
    }
}
