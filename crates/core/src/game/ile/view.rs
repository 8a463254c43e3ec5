//! What is shown of a unit: its serialisable view (`export`, `redeem
//! --json`), the same fields written by hand from texts built once (export
//! writes every unit), and the text picture with its legend.

use serde::Serialize;

use super::regulation::{Content, MAP_HEIGHT, MAP_WIDTH, MAX_STEPS, SQUARES};
use super::unit::{Chest, Direction, Square, Throw, Unit};

/// The legend printed under a unit's picture.
pub const PICTURE_LEGEND: &str =
    "@ start; 1-4 landing of each throw with what it uncovered (C chandelier, S singe, P saphir, T tete de mort, X empty chest); # chest left closed\n";

impl Unit {
    /// The serialisable view used by `export` and `redeem --json`.
    pub fn view(&self) -> UnitView {
        UnitView {
            map: MapSize {
                width: MAP_WIDTH,
                height: MAP_HEIGHT,
            },
            start: self.start,
            chests: self
                .chests
                .iter()
                .map(|c| ChestView {
                    x: c.square.x,
                    y: c.square.y,
                    content: c.content.name(),
                })
                .collect(),
            throws: self
                .throws
                .iter()
                .map(|t| ThrowView {
                    direction: t.direction.name(),
                    steps: t.steps,
                })
                .collect(),
        }
    }

    /// Appends the unit's export fields (the members of [`Unit::view`] as
    /// serde_json writes them) to `out`: copies of the text of its start,
    /// chests and throws, written once (export writes every unit).
    pub fn write_export_fields(&self, out: &mut Vec<u8>) {
        let text = export_text();
        out.extend_from_slice(&text.heads[self.start.number()]);
        for (i, c) in self.chests.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(
                &text.chests[c.square.number() * Content::ALL.len() + c.content as usize],
            );
        }
        out.extend_from_slice(br#"],"throws":["#);
        for (i, t) in self.throws.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match text
                .throws
                .get(usize::from(t.direction.code()) * THROW_TEXTS + usize::from(t.steps))
            {
                Some(bytes) if t.steps <= MAX_STEPS => out.extend_from_slice(bytes),
                _ => write_throw(t, out),
            }
        }
        out.push(b']');
    }

    /// The map as text, as the player sees it once all four throws are
    /// played: `@` the start, `1C` … `4X` each landing with what it
    /// uncovered, `#` the chests left closed, then a legend line.
    pub fn picture(&self) -> String {
        let landings = self.landings().ok();
        let mut out = String::new();
        for y in 0..MAP_HEIGHT {
            for x in 0..MAP_WIDTH {
                let sq = Square { x, y };
                let landed = landings
                    .as_ref()
                    .and_then(|l| l.iter().position(|s| *s == sq));
                let chest = self.chests.iter().find(|c| c.square == sq);
                let cell = match (chest, landed) {
                    (Some(c), Some(n)) => format!("{}{}", n + 1, c.content.letter()),
                    (Some(_), None) => " #".to_string(),
                    (None, _) if sq == self.start => " @".to_string(),
                    (None, _) => " .".to_string(),
                };
                if x > 0 {
                    out.push(' ');
                }
                out.push_str(&cell);
            }
            out.push('\n');
        }
        out.push_str(PICTURE_LEGEND);
        out
    }
}

/// Throw texts per direction: steps 0 to MAX_STEPS (others are written
/// when met).
const THROW_TEXTS: usize = MAX_STEPS as usize + 1;

/// The export text of every start square (with the members before the
/// chests), chest (square × content) and throw (direction × steps).
struct ExportText {
    heads: Vec<Vec<u8>>,
    chests: Vec<Vec<u8>>,
    throws: Vec<Vec<u8>>,
}

fn export_text() -> &'static ExportText {
    static TEXT: std::sync::OnceLock<ExportText> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let text = |write: &dyn Fn(&mut Vec<u8>)| {
            let mut out = Vec::new();
            write(&mut out);
            out
        };
        let squares = (0..SQUARES).map(Square::from_number);
        ExportText {
            heads: squares
                .clone()
                .map(|sq| text(&|o| write_head(sq, o)))
                .collect(),
            chests: squares
                .flat_map(|square| Content::ALL.map(|content| Chest { square, content }))
                .map(|c| text(&|o| write_chest(&c, o)))
                .collect(),
            throws: Direction::ALL
                .iter()
                .flat_map(|&direction| (0..=MAX_STEPS).map(move |steps| Throw { direction, steps }))
                .map(|t| text(&|o| write_throw(&t, o)))
                .collect(),
        }
    })
}

fn small(out: &mut Vec<u8>, n: u8) {
    crate::money::push_decimal(out, u64::from(n));
}

/// `"map":{…},"start":{…},"chests":[`
fn write_head(start: Square, out: &mut Vec<u8>) {
    out.extend_from_slice(br#""map":{"width":"#);
    small(out, MAP_WIDTH);
    out.extend_from_slice(br#","height":"#);
    small(out, MAP_HEIGHT);
    out.extend_from_slice(br#"},"start":{"x":"#);
    small(out, start.x);
    out.extend_from_slice(br#","y":"#);
    small(out, start.y);
    out.extend_from_slice(br#"},"chests":["#);
}

/// `{"x":…,"y":…,"content":"…"}`
fn write_chest(c: &Chest, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"x":"#);
    small(out, c.square.x);
    out.extend_from_slice(br#","y":"#);
    small(out, c.square.y);
    out.extend_from_slice(br#","content":""#);
    out.extend_from_slice(c.content.name().as_bytes());
    out.extend_from_slice(br#""}"#);
}

/// `{"direction":"…","steps":…}`
fn write_throw(t: &Throw, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"direction":""#);
    out.extend_from_slice(t.direction.name().as_bytes());
    out.extend_from_slice(br#"","steps":"#);
    small(out, t.steps);
    out.push(b'}');
}

/// Map size, as exported.
#[derive(Serialize)]
pub struct MapSize {
    /// Columns.
    pub width: u8,
    /// Rows.
    pub height: u8,
}

/// A chest, as exported.
#[derive(Serialize)]
pub struct ChestView {
    /// Column.
    pub x: u8,
    /// Row.
    pub y: u8,
    /// `chandelier`, `singe`, `saphir`, `tete_de_mort` or `vide`.
    pub content: &'static str,
}

/// A throw, as exported.
#[derive(Serialize)]
pub struct ThrowView {
    /// `N`, `NE`, … `NW`.
    pub direction: &'static str,
    /// Squares moved.
    pub steps: u8,
}

/// A unit's map, as exported (field order is the export schema's).
#[derive(Serialize)]
pub struct UnitView {
    /// Map size.
    pub map: MapSize,
    /// Start square of the pion.
    pub start: Square,
    /// The nine chests.
    pub chests: Vec<ChestView>,
    /// The four throws.
    pub throws: Vec<ThrowView>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn hand_written_export_fields_are_serde_json_byte_for_byte() {
        let seed = [0x42; 32];
        for i in 0..3_000u64 {
            let unit = Unit::generate(&mut Stream::new(&seed, i + 1), (i % 10) as u8);
            let mut ours = Vec::new();
            unit.write_export_fields(&mut ours);
            assert_eq!(ours, crate::game::serde_members(unit.view()), "unit {i}");
        }
    }
}
