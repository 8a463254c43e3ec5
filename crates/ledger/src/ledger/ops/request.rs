//! What an operation names: a unit by its place, a block on sale, a play
//! step, and the check a unit passes before it is sold.

use std::sync::Arc;

use crate::error::Error;
use crate::game::Game;
use crate::ledger::log::Place;
use crate::ledger::Entry;
use crate::record::RecordPrefix;

/// A unit, by place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UnitRef {
    /// The game.
    pub game: Game,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Unit index.
    pub index: u32,
}

impl UnitRef {
    /// The unit an ID names.
    #[must_use]
    pub fn of(id: &crate::unit_id::UnitId) -> UnitRef {
        UnitRef {
            game: id.game,
            emission: id.emission,
            block: id.block,
            index: id.index,
        }
    }

    /// The unit a redemption entry names.
    #[must_use]
    pub fn of_entry(e: &Entry) -> UnitRef {
        UnitRef {
            game: e.game,
            emission: e.emission,
            block: e.block,
            index: e.index,
        }
    }

    /// As the log names it.
    #[must_use]
    pub fn place(&self) -> Place<'static> {
        Place {
            game: self.game.slug(),
            emission: self.emission,
            block: self.block,
            index: self.index,
        }
    }
}

/// A block offered for sale: its place in the sale order and its size.
#[derive(Clone, Copy, Debug)]
pub struct ForSale {
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Units in the block.
    pub units: u32,
}

/// A step of a play (a game played step by step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayAction {
    /// Reveal roll `n` (from 1): the next roll, or a roll already revealed
    /// (a retry, answered the same).
    Step(u32),
    /// Stop here and take the gains found.
    Stop,
}

/// A play step with what the unit's record says about its tape.
#[derive(Clone, Debug)]
pub struct PlayOrder {
    /// The unit.
    pub unit: UnitRef,
    /// Its ID as printed.
    pub unit_id: String,
    /// What the player asks.
    pub action: PlayAction,
    /// The first step after which a stop is allowed (the game's
    /// [`Tape::first_stop`](crate::game::Tape::first_stop)).
    pub first_stop: Option<u32>,
    /// The step that ends the play by itself.
    pub end_step: u32,
}

/// Checks, inside the sale's transaction and before anything is
/// recorded, that the unit about to be sold can be handed out (its chunk
/// opens, its record authenticates): a sale that would fail records
/// nothing.
#[derive(Clone)]
pub struct Vetter(pub Arc<dyn Fn(UnitRef) -> Result<Vetted, Error> + Send + Sync>);

/// What vetting a unit found, carried to the sale's answer so the unit is
/// not authenticated a second time.
#[derive(Clone, Debug)]
pub struct Vetted {
    /// The unit's ID, its check code read from its record.
    pub id: String,
    /// What the player is shown before play.
    pub shown: serde_json::Value,
    /// The unit's record prefix (its lot, its prize played to the end):
    /// never answered, kept for the top-lots watch.
    pub prefix: Option<RecordPrefix>,
}

impl std::fmt::Debug for Vetter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Vetter")
    }
}
