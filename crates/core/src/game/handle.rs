//! [`Game`], the handle every layer holds, and the list of games: the
//! built-in ones and those registered at run time.

use super::id::GameId;
use super::lots::LotTable;
use super::rules::{GameRules, InvalidUnit, Played, Prize, PrizeModel};
use super::{ile, tresors};
use crate::error::Error;
use crate::money::Cents;

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
    /// The game's name as its player reads it: the title its pictures
    /// carry (« L'île au trésor », « Trésors Ensablés »), else its slug.
    pub fn display_name(self) -> String {
        let mut payload = Vec::with_capacity(self.payload_size());
        self.generate_payload(&mut crate::rng::Stream::new(&[0; 32], 0), 0, &mut payload);
        self.decode(&payload)
            .ok()
            .and_then(|unit| unit.drawing(super::Moment::After(0)).ok())
            .map(|picture| picture.title)
            .filter(|title| !title.is_empty())
            .unwrap_or_else(|| self.slug().to_string())
    }

    /// « L'île au trésor » (rules: ile-au-tresor.txt).
    pub const ILE_AU_TRESOR: Game = Game(&ile::Rules);
    /// « Trésors Ensablés » (rules: tresors-ensables.txt).
    pub const TRESORS_ENSABLES: Game = Game(&tresors::Rules);

    /// What derivation and encryption name the game by.
    pub fn id(self) -> GameId {
        GameId {
            slug: self.slug(),
            code: self.code(),
            rules_version: self.rules_version(),
        }
    }

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

impl From<Game> for GameId {
    fn from(game: Game) -> GameId {
        game.id()
    }
}
