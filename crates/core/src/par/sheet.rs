//! What a PAR sheet is asked ([`ParRequest`]) and what it gives
//! ([`ParSheet`], [`BlockVerdict`]).

use serde::Serialize;

use super::figures::default_seed;
use crate::block::authentic::AuthenticBlock;
use crate::game::Fields;

/// What `issuer par` asks of a game ([`crate::analysis::GameAnalysis::par_sheet`]).
pub struct ParRequest<'a> {
    /// The price; `None`: every price of the game.
    pub price_cents: Option<u32>,
    /// Boards drawn for optimal play (a game the player sees a board of).
    pub boards: u64,
    /// How many of those are also solved in exact arithmetic.
    pub exact_boards: u64,
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
