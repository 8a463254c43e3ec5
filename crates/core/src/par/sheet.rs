//! What a PAR sheet is asked ([`ParRequest`]) and what it gives
//! ([`ParSheet`], [`BlockVerdict`]).

use std::collections::BTreeMap;

use serde::Serialize;

use super::figures::default_seed;
use crate::block::authentic::AuthenticBlock;
use crate::game::Fields;

/// What `issuer par` asks of a game ([`crate::analysis::GameAnalysis::par_sheet`]).
pub struct ParRequest<'a> {
    /// The price; `None`: every price of the game.
    pub price_cents: Option<u32>,
    /// The game's own options, by name (`issuer par --option NAME=N`),
    /// each one the game declares ([`ParOption`]); one left out takes
    /// its default.
    pub options: BTreeMap<String, u64>,
    /// Units of the Monte Carlo through the game engine.
    pub samples: u64,
    /// The seed of the draws; `None`: [`default_seed`] of each purpose.
    pub seed: Option<[u8; 32]>,
    /// A sealed block of the game (at the price) to check against the sheet.
    pub block: Option<&'a AuthenticBlock>,
}

impl ParRequest<'_> {
    /// The seed of the draws for `what` (`units`, `boards`).
    pub fn seed(&self, what: &str) -> [u8; 32] {
        self.seed.unwrap_or_else(|| default_seed(what))
    }

    /// The value of the game's option `option`: the one asked for, or
    /// its default.
    pub fn option(&self, option: &ParOption) -> u64 {
        self.options
            .get(option.name)
            .copied()
            .unwrap_or(option.default)
    }
}

/// An option of a game's PAR sheet: a count the game's own computation
/// takes (Trésors Ensablés: the boards drawn for optimal play), passed
/// through `issuer par --option NAME=N` without the command knowing it.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ParOption {
    /// Its name on the command line.
    pub name: &'static str,
    /// What it counts.
    pub help: &'static str,
    /// Its value when not given.
    pub default: u64,
    /// The least and most it may be.
    pub range: (u64, u64),
}

impl ParOption {
    /// `NAME=N` given for a game that declares `declared`: the name and a
    /// value in range, or why not (naming the game's options).
    pub fn parse(declared: &[ParOption], given: &str) -> Result<(String, u64), String> {
        let names = || match declared {
            [] => "it has none".to_string(),
            _ => format!(
                "its options: {}",
                declared
                    .iter()
                    .map(|o| format!("{} ({}, default {})", o.name, o.help, o.default))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        };
        let (name, value) = given
            .split_once('=')
            .ok_or_else(|| format!("`{given}` is not NAME=N; {}", names()))?;
        let option = declared
            .iter()
            .find(|o| o.name == name)
            .ok_or_else(|| format!("no PAR option `{name}`; {}", names()))?;
        let value: u64 = value
            .parse()
            .ok()
            .filter(|v| (option.range.0..=option.range.1).contains(v))
            .ok_or_else(|| {
                format!(
                    "{name}={value}: give a whole number from {} to {}",
                    option.range.0, option.range.1
                )
            })?;
        Ok((name.to_string(), value))
    }
}

/// A game's PAR sheet: the members `par --json` prints after `game`, and
/// the same as text.
#[derive(Clone, Debug, Default)]
pub struct ParSheet {
    /// The JSON members, in order.
    pub members: Fields,
    /// The sheet as text.
    pub text: String,
    /// With a block: whether it passed its checks against the sheet
    /// (`issuer par --block` exits 1 when not).
    pub block_ok: Option<bool>,
}

/// A block's verdict against a PAR sheet, at one level, and why.
#[derive(Clone, Debug, Serialize)]
pub struct BlockVerdict {
    /// The level.
    pub level: f64,
    /// The block agrees with the sheet.
    pub pass: bool,
    /// Why, in words.
    pub reason: String,
    /// The tests judged (Holm over them), if any.
    pub tests: Vec<crate::evidence::StatTest>,
}

impl BlockVerdict {
    /// The verdict as a line of text.
    pub fn line(&self) -> String {
        let at = match self.level {
            0.0 => "(exact)".to_string(),
            level => format!("at {level}"),
        };
        format!(
            "  verdict {at}: {} — {}",
            if self.pass { "pass" } else { "FAIL" },
            self.reason
        )
    }
}

impl ParSheet {
    /// This sheet and member `name` (any serialisable figure) last.
    pub fn with(mut self, name: &'static str, value: &impl Serialize) -> ParSheet {
        let value = serde_json::to_value(value).expect("PAR figures serialise");
        self.members = self.members.with(name, value);
        self
    }
}
