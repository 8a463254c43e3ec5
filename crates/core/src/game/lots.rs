//! Lot tables: the lots of a block, as a regulation lists them.

use serde::Serialize;

/// One line of a lot table: `count` lots of `amount_cents`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LotTier {
    /// The lot's code in unit records (1, 2, …; 0 means no lot).
    pub code: u8,
    /// How many units of a block win this lot.
    pub count: u32,
    /// The lot's amount in cents.
    pub amount_cents: u32,
}

/// The lots of one block, as the regulation's table lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LotTable {
    /// Price of a unit of the block, in cents.
    pub price_cents: u32,
    /// The tiers, highest lot first.
    pub tiers: Vec<LotTier>,
}

impl LotTable {
    /// Number of winning units.
    pub fn winners(&self) -> u64 {
        self.tiers.iter().map(|t| u64::from(t.count)).sum()
    }

    /// The sum of all lots, in cents.
    pub fn total_cents(&self) -> u64 {
        self.tiers
            .iter()
            .map(|t| u64::from(t.count) * u64::from(t.amount_cents))
            .sum()
    }

    /// The amount of lot `code` in cents (0 for code 0); `None` if the
    /// table has no such lot.
    pub fn amount_cents(&self, code: u8) -> Option<u32> {
        if code == 0 {
            return Some(0);
        }
        self.tiers
            .iter()
            .find(|t| t.code == code)
            .map(|t| t.amount_cents)
    }

    /// The block's lot codes in table order, losers (0) last: the sequence
    /// the block shuffle starts from.
    pub fn unshuffled_lots(&self, units: u32) -> Vec<u8> {
        let mut lots = Vec::with_capacity(units as usize);
        for tier in &self.tiers {
            lots.extend(std::iter::repeat_n(tier.code, tier.count as usize));
        }
        lots.resize(units as usize, 0);
        lots
    }
}
