//! What a game is to the shared machinery: [`GameRules`] (generation and
//! decoding) and [`GameUnit`] (a decoded unit's questions).

use serde::Serialize;

use super::lots::LotTable;
use super::picture::{self, Moment, Picture};
use super::play::Tape;
use crate::rng::Stream;

/// How a game's prizes are decided (docs/GAMES.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
