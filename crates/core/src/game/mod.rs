//! The games and the one interface the shared machinery calls them by.
//!
//! A game is a folder that implements [`GameRules`] (its constants, unit
//! model, record payload, rule check, play, export line, picture, PAR
//! sheet and refusal texts) and one line in `BUILT_IN`; a game made
//! elsewhere (a studio's, a test's) registers at run time with
//! [`Game::register`]. Shared modules (block, verify, export, the ledger,
//! the service, the CLI) hold a [`Game`] and call through it; a play is
//! seen through the game-neutral [`Tape`] of [`play`].

pub mod ile;
pub mod picture;
pub mod play;
pub mod tresors;

pub use picture::{Moment, Picture};
pub use play::{Ending, Fields, State, Step, Tape};

use serde::Serialize;

use crate::error::Error;
use crate::money::Cents;
use crate::rng::Stream;

/// Every game the tool issues, in header-code order. Registering a new
/// game of the product is one line here; a game made elsewhere (a studio's,
/// a test's) is added at run time by [`Game::register`].
static BUILT_IN: [&dyn GameRules; 2] = [&ile::Rules, &tresors::Rules];

/// The games registered at run time, after [`BUILT_IN`].
static REGISTERED: std::sync::RwLock<Vec<&'static dyn GameRules>> =
    std::sync::RwLock::new(Vec::new());

/// The games registered at run time (a poisoned lock still holds a sound
/// list: registration pushes one complete element).
fn registered() -> Vec<&'static dyn GameRules> {
    match REGISTERED.read() {
        Ok(games) => games.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// How a game's prizes are decided (docs/GAMES.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PrizeModel {
    /// Every block holds exactly the regulation's lot table, shuffled in;
    /// a unit's prize is its lot's amount in that table.
    FixedTable,
    /// Every unit is drawn from the regulation's published probabilities;
    /// a unit's prize is what its play gives.
    Drawn,
}

/// What a unit pays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prize {
    /// The amount of its lot in the block's lot table (a fixed-table game:
    /// the table is the block's, at the block's price).
    Lot,
    /// An amount in cents the unit's play gave (a drawn game).
    Amount(u32),
}

impl Prize {
    /// The amount a drawn game's play gave (`None`: the block's table
    /// decides).
    pub fn amount(self) -> Option<u32> {
        match self {
            Prize::Amount(cents) => Some(cents),
            Prize::Lot => None,
        }
    }
}

/// What playing a unit gives: its lot (0: none) and its prize.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Played {
    /// The lot code (0: none); names from [`GameRules::lot_name`].
    pub lot: u8,
    /// What the unit pays.
    pub prize: Prize,
}

/// A payload the game cannot read, or whose unit breaks its rules; the
/// message says which rule or byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidUnit(pub String);

impl std::fmt::Display for InvalidUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for InvalidUnit {
    fn from(message: String) -> InvalidUnit {
        InvalidUnit(message)
    }
}

impl From<InvalidUnit> for String {
    fn from(invalid: InvalidUnit) -> String {
        invalid.0
    }
}

/// A unit of a game, decoded once from its payload ([`GameRules::decode`]):
/// the game's own type behind the one interface the shared machinery asks
/// its questions through (outcome at a stop, export line, picture, sale
/// view, steps).
pub trait GameUnit: Send {
    /// The outcome when the player stopped after `stop` steps (`None`:
    /// played to the end), every rule checked; `Err` says why the stop is
    /// not allowed or which rule the unit breaks.
    fn outcome(&self, stop: Option<u32>) -> Result<Played, StopRefusal>;
    /// Appends the game's fields of an export line (docs/FORMAT.md §Export)
    /// to `out` as JSON object members, comma-separated, without braces:
    /// exactly what serde_json writes for the game's view (tested).
    fn write_export_fields(&self, out: &mut Vec<u8>);
    /// What the player sees, as text, up to `stop` (`None`: the end).
    fn picture(&self, stop: Option<u32>) -> Result<String, StopRefusal>;
    /// The unit drawn by its game at `moment` of its play (docs/GAMES.md
    /// §What a picture shows): nothing beyond the steps the moment shows.
    /// By default, the lines of [`GameUnit::picture`] as played to a stop;
    /// a game played step by step draws its own.
    fn drawing(&self, moment: Moment) -> Result<Picture, StopRefusal> {
        let Moment::Paid(stop) = moment else {
            return Err(StopRefusal::Refused(
                "this game draws no picture part-way through a play".into(),
            ));
        };
        let mut drawn = Picture {
            title: String::new(),
            rows: Vec::new(),
            path: Vec::new(),
            notes: Vec::new(),
            steps: 0,
        };
        for line in self.picture(stop)?.lines() {
            drawn.note(line, picture::Tone::Plain, "line");
        }
        Ok(drawn)
    }
    /// What a sale hands the player's screen (docs/API.md §Sales): all of
    /// a unit revealed whole; only what is shown before the first step of
    /// a unit played step by step.
    fn sale_view(&self) -> serde_json::Value;
    /// The steps of a unit played one at a time ([`Tape`]); `None` for a
    /// game whose units are revealed whole.
    fn tape(&self) -> Option<Tape> {
        None
    }
    /// The outcome played to the end, every rule checked.
    fn play_to_end(&self) -> Result<Played, InvalidUnit> {
        self.outcome(None).map_err(|e| match e {
            StopRefusal::Refused(m) | StopRefusal::Invalid(m) => InvalidUnit(m),
        })
    }
}

/// Everything the shared machinery needs from a game. Payloads are the
/// game's part of a unit record (docs/FORMAT.md §Unit record).
pub trait GameRules: Send + Sync + 'static {
    /// The name on the command line, in paths, labels and reports.
    fn slug(&self) -> &'static str;
    /// The code stored in block headers.
    fn code(&self) -> u16;
    /// The prefix of unit IDs.
    fn id_prefix(&self) -> &'static str;
    /// Version of the unit model (payload and rules), stored in headers and
    /// ledger rows.
    fn rules_version(&self) -> u16;
    /// Two parameter bytes stored in the header.
    fn params(&self) -> [u8; 2];
    /// Bytes of the payload.
    fn payload_size(&self) -> usize;
    /// Prices the game is sold at, in cents.
    fn prices_cents(&self) -> &'static [u32];
    /// How prizes are decided.
    fn prize_model(&self) -> PrizeModel;
    /// Units of a production block by default (for a fixed-table game,
    /// exactly; fewer is a test-size block).
    fn block_units(&self) -> u32;
    /// The most units a block of the game may hold.
    fn max_units(&self) -> u32;
    /// A fixed-table game's regulation lot table for a full block at
    /// `price_cents` (`None` at a price it is not sold at, and always for
    /// a drawn game, which has none).
    fn regulation_table(&self, price_cents: u32) -> Option<LotTable> {
        let _ = price_cents;
        None
    }
    /// Draws a unit's payload from its own stream into `out`; `lot` is the
    /// lot a fixed-table game's unit must win (a drawn game ignores it).
    /// Returns what the unit gives played to the end, from the unit just
    /// drawn (without decoding it again).
    fn generate_payload(&self, stream: &mut Stream, lot: u8, out: &mut Vec<u8>) -> Played;
    /// Decodes a payload into the game's unit, once; what the shared
    /// machinery then asks of it goes through [`GameUnit`].
    fn decode(&self, payload: &[u8]) -> Result<Box<dyn GameUnit>, InvalidUnit>;
    /// The name of lot `code`, `None` for 0 or an unknown code.
    fn lot_name(&self, code: u8) -> Option<&'static str>;
    /// Units are played one step at a time and paid as played (their
    /// [`GameUnit::tape`] is `Some`; a test holds every game to it).
    fn step_by_step(&self) -> bool {
        false
    }
    /// The game's PAR sheet (docs/PAR.md): what `issuer par` prints. A
    /// fixed-table game can give [`crate::par::table::par_sheet`]; a drawn
    /// game its exact figures through [`crate::par::engine::par_sheet`],
    /// which adds the cross-checks.
    fn par_sheet(
        &self,
        request: &crate::par::ParRequest<'_>,
    ) -> Result<crate::par::ParSheet, Error>;
    /// What the game tallies over a block's units for the audit (its
    /// draws against the regulation, presentation neutrality; docs/AUDIT.md):
    /// a fresh tally, one per chunk. `None`: the shared tests only.
    fn audit_tally(&self) -> Option<Box<dyn crate::evidence::GameTally>> {
        None
    }
    /// The figures of the game's return at `price_cents` that the payout
    /// rule is checked against (docs/AUDIT.md §Payout rule): by default
    /// its regulation lot table's, binding; a game where the player
    /// decides gives one per strategy of its PAR sheet.
    fn return_figures(&self, price_cents: u32) -> Vec<crate::evidence::payout::ReturnFigure> {
        match self.regulation_table(price_cents) {
            Some(table) => {
                let stakes = u64::from(self.block_units()) * u64::from(price_cents);
                vec![crate::evidence::payout::ReturnFigure {
                    figure: format!(
                        "PAR sheet: the lot table at {} €",
                        crate::money::Cents::from(price_cents)
                    ),
                    rate: crate::par::Exact::ratio(table.total_cents(), stakes.max(1)),
                    binding: true,
                    note: "exact: the table's total over a block's stakes".into(),
                }]
            }
            None => Vec::new(),
        }
    }
    /// The game's kind under the French payout rule (CSI art. D.322-10 II;
    /// docs/GAMES.md says why each game is what it is).
    fn instant_category(&self) -> crate::evidence::payout::InstantCategory {
        crate::evidence::payout::InstantCategory::Undeclared
    }
    /// Why a stop after `steps` steps, before [`Tape::first_stop`], is
    /// refused, in the game's words (citing its rules).
    fn early_stop_refusal(&self, steps: u32) -> String {
        format!("no stop is allowed after {steps} steps")
    }
}

/// A player's decision the rules don't allow, or a payload that can't be
/// played; the message says which.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopRefusal {
    /// The stop is not allowed there (or the game has no stop).
    Refused(String),
    /// The payload breaks the rules.
    Invalid(String),
}

/// A game the tool can issue: a handle on its [`GameRules`]. Equal games
/// have equal header codes.
#[derive(Clone, Copy)]
pub struct Game(&'static dyn GameRules);

impl PartialEq for Game {
    fn eq(&self, other: &Game) -> bool {
        self.code() == other.code()
    }
}

impl Eq for Game {}

impl std::hash::Hash for Game {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.code().hash(state);
    }
}

impl std::fmt::Debug for Game {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.slug())
    }
}

impl std::ops::Deref for Game {
    type Target = dyn GameRules;
    fn deref(&self) -> &(dyn GameRules + 'static) {
        self.0
    }
}

impl Game {
    /// « L'île au trésor » (rules: ile-au-tresor.txt).
    pub const ILE_AU_TRESOR: Game = Game(&ile::Rules);
    /// « Trésors Ensablés » (rules: tresors-ensables.txt).
    pub const TRESORS_ENSABLES: Game = Game(&tresors::Rules);

    /// Every game: the built-in ones in code order, then those registered.
    pub fn all() -> impl Iterator<Item = Game> {
        BUILT_IN.iter().copied().chain(registered()).map(Game)
    }

    /// Adds a game made outside this crate (a studio's, a test's) to every
    /// look-up: by code (block headers), slug and ID prefix. Refused when
    /// one of those is already another game's; registering the same game
    /// again (the same code, slug and prefix) gives it back.
    pub fn register(rules: &'static dyn GameRules) -> Result<Game, String> {
        let mut games = REGISTERED.write().unwrap_or_else(|p| p.into_inner());
        let new = Game(rules);
        for game in BUILT_IN.iter().chain(games.iter()).map(|r| Game(*r)) {
            // (Not by address: a game's rules are often a zero-sized type,
            // and those may all share one.)
            let same = [
                game.code() == new.code(),
                game.slug() == new.slug(),
                game.id_prefix() == new.id_prefix(),
            ];
            if same == [true; 3] {
                return Ok(game);
            }
            if same.contains(&true) {
                return Err(format!(
                    "game {} (code {}, prefix {}) clashes with {} (code {}, prefix {})",
                    new.slug(),
                    new.code(),
                    new.id_prefix(),
                    game.slug(),
                    game.code(),
                    game.id_prefix()
                ));
            }
        }
        games.push(rules);
        Ok(new)
    }

    /// The slugs of every game, for messages.
    pub fn known() -> String {
        Game::all().map(|g| g.slug()).collect::<Vec<_>>().join(", ")
    }

    /// The game with header code `code`, if any.
    pub fn from_code(code: u16) -> Option<Game> {
        Game::all().find(|g| g.code() == code)
    }

    /// The game named `slug` on the command line.
    pub fn from_slug(slug: &str) -> Option<Game> {
        Game::all().find(|g| g.slug() == slug)
    }

    /// The game whose unit IDs start with `prefix`.
    pub fn from_id_prefix(prefix: &str) -> Option<Game> {
        Game::all().find(|g| g.id_prefix() == prefix)
    }

    /// The lot table a block at `price_cents` carries in its header: a
    /// fixed-table game's regulation table for a full block, a drawn
    /// game's empty one. Refused at a price the game is not sold at.
    pub fn lot_table(self, price_cents: u32) -> Result<LotTable, Error> {
        self.check_price(price_cents)?;
        match self.prize_model() {
            PrizeModel::FixedTable => self
                .regulation_table(price_cents)
                .ok_or_else(|| self.unsupported_price(Cents::from(price_cents).to_string())),
            PrizeModel::Drawn => Ok(LotTable {
                price_cents,
                tiers: Vec::new(),
            }),
        }
    }

    /// Refuses a price (in cents) the game is not sold at.
    pub fn check_price(self, price_cents: u32) -> Result<(), Error> {
        if self.prices_cents().contains(&price_cents) {
            Ok(())
        } else {
            Err(self.unsupported_price(Cents::from(price_cents).to_string()))
        }
    }

    /// Decodes `payload` and plays it to the end, every rule checked.
    pub fn play_to_end(self, payload: &[u8]) -> Result<Played, InvalidUnit> {
        self.decode(payload)?.play_to_end()
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

    /// True when a block of `units` units is a test-size block, which only
    /// tests may use: a fixed-table game's block smaller than the
    /// regulation's (a drawn game has no test size).
    pub fn is_test_size(self, units: u32) -> bool {
        self.prize_model() == PrizeModel::FixedTable && units != self.block_units()
    }

    /// The price `price` (euros, as given) in cents, which the game must be
    /// sold at; `None`: the game's only price (refused where it has several).
    pub fn price_cents(self, price: Option<&str>) -> Result<u32, Error> {
        let cents = match (price, self.prices_cents()) {
            (Some(price), _) => Cents::parse_price(price)
                .ok_or_else(|| self.unsupported_price(price.to_string()))?,
            (None, [only]) => *only,
            (None, _) => return Err(Error::PriceNeeded { game: self.slug() }),
        };
        self.check_price(cents)?;
        Ok(cents)
    }

    /// The error for a price (as given) this game is not sold at.
    pub fn unsupported_price(self, price: String) -> Error {
        Error::UnsupportedPrice {
            game: self.slug(),
            price,
            allowed: self
                .prices_cents()
                .iter()
                .map(|&c| Cents::from(c).to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The prize in cents of `played` in a block whose lot table is
    /// `table`; `None` when the lot is not in the table.
    pub fn prize_cents(self, played: &Played, table: &LotTable) -> Option<u32> {
        match played.prize {
            Prize::Amount(cents) => Some(cents),
            Prize::Lot => table.amount_cents(played.lot),
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

/// A game's fields as serde_json writes its view, without braces: what
/// each game's hand-written export fields are tested against.
#[cfg(test)]
pub(crate) fn serde_members(view: impl Serialize) -> Vec<u8> {
    let mut json = serde_json::to_vec(&view).expect("a view is plain JSON");
    json.remove(0);
    json.pop();
    json
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unit_id::UnitId;

    #[test]
    fn a_game_played_step_by_step_gives_a_tape_and_only_then() {
        for game in Game::all() {
            for i in 0..200u64 {
                let mut payload = Vec::new();
                let played =
                    game.generate_payload(&mut Stream::new(&[7; 32], i + 1), 0, &mut payload);
                let unit = game.decode(&payload).unwrap();
                assert_eq!(unit.tape().is_some(), game.step_by_step(), "{game:?}");
                if game.prize_model() == PrizeModel::Drawn {
                    assert_eq!(unit.play_to_end(), Ok(played), "{game:?} unit {i}");
                }
            }
        }
    }

    #[test]
    fn unit_ids_are_written_as_display_writes_them() {
        for (game, index, code) in [
            (Game::ILE_AU_TRESOR, 0, [0u8; 5]),
            (Game::ILE_AU_TRESOR, 449_999, [0xff; 5]),
            (Game::TRESORS_ENSABLES, 123_456, [1, 2, 3, 4, 5]),
        ] {
            let id = UnitId {
                game,
                emission: 7,
                block: 12,
                index,
                check_code: code,
            };
            let mut out = Vec::new();
            id.write_to(&mut out);
            assert_eq!(String::from_utf8(out).unwrap(), id.to_string());
        }
    }
}
