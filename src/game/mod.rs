//! The games: their lot tables (from the regulations, as data) and the
//! dispatch from the shared block machinery to each game's unit model.

pub mod ile;
pub mod tresors;

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::Serialize;

use crate::error::Error;
use crate::rng::Stream;

/// A game the tool can issue. Its numeric code is stored in block headers
/// and its slug in paths, labels and the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Game {
    /// « L'île au trésor » (rules: ile-au-tresor.txt).
    IleAuTresor,
}

impl Game {
    /// Every game, in code order.
    pub const ALL: [Game; 1] = [Game::IleAuTresor];

    /// The code stored in a block header (docs/FORMAT.md).
    pub fn code(self) -> u16 {
        match self {
            Game::IleAuTresor => 1,
        }
    }

    /// The game with header code `code`, if any.
    pub fn from_code(code: u16) -> Option<Game> {
        Game::ALL.into_iter().find(|g| g.code() == code)
    }

    /// The name used on the command line, in labels and in reports.
    pub fn slug(self) -> &'static str {
        match self {
            Game::IleAuTresor => "ile-au-tresor",
        }
    }

    /// The game named `slug` on the command line.
    pub fn from_slug(slug: &str) -> Option<Game> {
        Game::ALL.into_iter().find(|g| g.slug() == slug)
    }

    /// The prefix of this game's unit IDs.
    pub fn id_prefix(self) -> &'static str {
        match self {
            Game::IleAuTresor => "IAT",
        }
    }

    /// The game whose unit IDs start with `prefix`.
    pub fn from_id_prefix(prefix: &str) -> Option<Game> {
        Game::ALL.into_iter().find(|g| g.id_prefix() == prefix)
    }

    /// Version of the unit model (record payload and rules); stored in the
    /// header so a reader can refuse a model it does not know.
    pub fn rules_version(self) -> u16 {
        1
    }

    /// Units in every block of this game (article 2 for L'île au trésor).
    pub fn block_units(self) -> u32 {
        match self {
            Game::IleAuTresor => ile::BLOCK_UNITS,
        }
    }

    /// Size of the game's record payload (after the common record prefix).
    pub fn payload_size(self) -> usize {
        match self {
            Game::IleAuTresor => ile::PAYLOAD_SIZE,
        }
    }

    /// The two game-parameter bytes stored in the header (for L'île au
    /// trésor: map width and height).
    pub fn params(self) -> [u8; 2] {
        match self {
            Game::IleAuTresor => [ile::MAP_WIDTH, ile::MAP_HEIGHT],
        }
    }

    /// Prices this game is sold at, in cents.
    pub fn prices_cents(self) -> &'static [u32] {
        match self {
            Game::IleAuTresor => &[50, 100, 200],
        }
    }

    /// The regulation's lot table for one block at `price_cents`.
    pub fn lot_table(self, price_cents: u32) -> Result<LotTable, Error> {
        match self {
            Game::IleAuTresor => ile::lot_table(price_cents),
        }
        .ok_or_else(|| self.unsupported_price(cents_to_euros(price_cents).to_string()))
    }

    /// The lot table of a block of `units` units at `price_cents`: the
    /// regulation's for a full block; for a smaller (test-size) block each
    /// tier's count × `units` / `block_units()`, rounded down (docs/GAMES.md).
    pub fn lot_table_for(self, price_cents: u32, units: u32) -> Result<LotTable, Error> {
        let mut table = self.lot_table(price_cents)?;
        let full = u64::from(self.block_units());
        if u64::from(units) != full {
            for tier in &mut table.tiers {
                let scaled = u64::from(tier.count) * u64::from(units) / full;
                tier.count = u32::try_from(scaled).unwrap_or(u32::MAX);
            }
        }
        Ok(table)
    }

    /// The error for a price (as given) this game is not sold at.
    pub fn unsupported_price(self, price: String) -> Error {
        Error::UnsupportedPrice {
            game: self.slug(),
            price,
            allowed: self
                .prices_cents()
                .iter()
                .map(|&c| cents_to_euros(c).to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// Draws the payload of a unit that must win `lot` (0: a losing unit)
    /// from its own stream, writing `payload_size()` bytes into `out`.
    pub fn generate_payload(self, stream: &mut Stream, lot: u8, out: &mut Vec<u8>) {
        match self {
            Game::IleAuTresor => ile::Unit::generate(stream, lot).encode(out),
        }
    }

    /// Decodes a payload, checks it against the game rules, and returns the
    /// lot its play reveals (0: none).
    pub fn play_payload(self, payload: &[u8]) -> Result<u8, String> {
        match self {
            Game::IleAuTresor => ile::Unit::decode(payload)?.play(),
        }
    }

    /// The name of lot `code` ("singe-2"), `None` for 0 or an unknown code.
    pub fn lot_name(self, code: u8) -> Option<&'static str> {
        match self {
            Game::IleAuTresor => ile::lot_name(code),
        }
    }
}

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

/// Cents (an amount or a sum) as an exact decimal amount of euros
/// ("12.5", "10000", "0").
pub fn cents_to_euros(cents: impl Into<u64>) -> Decimal {
    let mut euros = Decimal::from(cents.into());
    euros
        .set_scale(2)
        .expect("a scale of 2 is within rust_decimal's 28");
    euros.normalize()
}

/// Parses a price in euros ("0.5", "1", "2", "0,5") into cents, exactly.
pub fn parse_price(text: &str) -> Option<u32> {
    let value: Decimal = text.replace(',', ".").parse().ok()?;
    // Checked: a huge decimal overflows when scaled to cents (a panic before).
    let cents = value.checked_mul(Decimal::ONE_HUNDRED)?;
    if cents.fract() != Decimal::ZERO || cents <= Decimal::ZERO {
        return None;
    }
    cents.to_u32()
}
