//! « L'île au trésor » (`ile-au-tresor`, IDs `IAT-…`), an instant game at
//! 0.5, 1 or 2 €: nine chests stand on a map; a pion makes four throws (a
//! boussole direction and a compteur step count), and the four chests it
//! lands on decide the lot. Its regulation is
//! `../shared/rules/ile-au-tresor.txt` (articles 2 to 4); every reading of
//! it made here, and the map size (our choice), is written in
//! docs/GAMES.md §L'île au trésor; the payload layout is docs/FORMAT.md
//! §Île au trésor payload.
//!
//! One file per concept, every public item re-exported here:
//! - `regulation`: the constants, what a chest holds, the lot tables
//!   (articles 3 and 4.5) and the judge of four uncovered contents;
//! - `unit`: the unit model (directions, squares, chests, throws, the map)
//!   and its play under the rules;
//! - `generate`: a unit's generation from its stream;
//! - `codec`: the payload, encoded and decoded;
//! - `view`: the export view and fields, and the text picture;
//! - `picture`: the unit drawn at a point of its play (text or SVG);
//! - `audit`: its tally over a block's units, and [`analysis`]: its
//!   [`crate::analysis::GameAnalysis`] (a layer above its rules);
//! - here: [`Rules`], the game as the shared machinery sees it.

pub mod analysis;
mod audit;
mod codec;
mod generate;
mod picture;
mod regulation;
mod unit;
mod view;

pub use codec::PAYLOAD_SIZE;
pub use regulation::{
    judge, lot_name, lot_table, Content, ARTICLE_3, ARTICLE_4_5, BLOCK_UNITS, CHESTS, MAP_HEIGHT,
    MAP_WIDTH, MAX_STEPS, THROWS,
};
pub use unit::{Chest, Direction, Square, Throw, Unit};
pub use view::{ChestView, MapSize, ThrowView, UnitView, PICTURE_LEGEND};

use super::{GameUnit, InvalidUnit, LotTable, Played, Prize, StopRefusal};
use crate::rng::Stream;

/// L'île au trésor as the shared machinery sees it (`super::GameRules`).
pub struct Rules;

/// Its prices, in cents (article 3: 0.5, 1 and 2 €).
const PRICES_CENTS: [u32; 3] = [50, 100, 200];

impl super::GameRules for Rules {
    fn slug(&self) -> &'static str {
        "ile-au-tresor"
    }

    fn code(&self) -> u16 {
        1
    }

    fn id_prefix(&self) -> &'static str {
        "IAT"
    }

    fn rules_version(&self) -> u16 {
        1
    }

    fn params(&self) -> [u8; 2] {
        [MAP_WIDTH, MAP_HEIGHT]
    }

    fn payload_size(&self) -> usize {
        PAYLOAD_SIZE
    }

    fn prices_cents(&self) -> &'static [u32] {
        &PRICES_CENTS
    }

    fn prize_model(&self) -> super::PrizeModel {
        super::PrizeModel::FixedTable
    }

    fn block_units(&self) -> u32 {
        BLOCK_UNITS
    }

    fn max_units(&self) -> u32 {
        BLOCK_UNITS
    }

    fn regulation_table(&self, price_cents: u32) -> Option<LotTable> {
        lot_table(price_cents)
    }

    fn generate_payload(&self, stream: &mut Stream, lot: u8, out: &mut Vec<u8>) -> Played {
        Unit::generate(stream, lot).encode(out);
        // The unit was drawn to win exactly `lot` (its fill is redrawn until
        // the four uncovered chests do).
        Played {
            lot,
            prize: Prize::Lot,
        }
    }

    fn decode(&self, payload: &[u8]) -> Result<Box<dyn GameUnit>, InvalidUnit> {
        Ok(Box::new(Unit::decode(payload)?))
    }

    fn lot_name(&self, code: u8) -> Option<&'static str> {
        lot_name(code)
    }
}

/// A unit as the shared machinery asks it: revealed whole, no stop.
impl GameUnit for Unit {
    fn outcome(&self, stop: Option<u32>) -> Result<Played, StopRefusal> {
        if let Some(rolls) = stop {
            return Err(StopRefusal::Refused(format!(
                "L'île au trésor has no stop: its four throws are always played (asked to stop after {rolls})"
            )));
        }
        Ok(Played {
            lot: self.play().map_err(StopRefusal::Invalid)?,
            prize: Prize::Lot,
        })
    }

    fn write_export_fields(&self, out: &mut Vec<u8>) {
        Unit::write_export_fields(self, out);
    }

    fn picture(&self, stop: Option<u32>) -> Result<String, StopRefusal> {
        if stop.is_some() {
            return Err(StopRefusal::Refused("L'île au trésor has no stop".into()));
        }
        Ok(Unit::picture(self))
    }

    fn drawing(&self, moment: super::Moment) -> Result<super::Picture, StopRefusal> {
        Unit::drawing(self, moment)
    }

    fn sale_view(&self) -> serde_json::Value {
        serde_json::to_value(self.view()).expect("a unit view is plain JSON")
    }
}
