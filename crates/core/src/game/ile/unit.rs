//! The unit model: the boussole's directions, the map's squares, the
//! chests and throws, a unit's map, and its play under the rules (every
//! throw stays on the map, never lands twice on a square, start included,
//! and lands on a chest; the judge gives the lot of the four uncovered).

use serde::Serialize;

use super::regulation::{
    fill_index, judge, verdict_table, Content, CHESTS, MAP_HEIGHT, MAP_WIDTH, NO_LOT, SQUARES,
    THROWS,
};

/// A compass direction of the boussole (article 4.1); the discriminant is
/// its code (the order of [`Direction::ALL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Direction {
    /// North: y − 1.
    N,
    /// North-east: x + 1, y − 1.
    NE,
    /// East: x + 1.
    E,
    /// South-east: x + 1, y + 1.
    SE,
    /// South: y + 1.
    S,
    /// South-west: x − 1, y + 1.
    SW,
    /// West: x − 1.
    W,
    /// North-west: x − 1, y − 1.
    NW,
}

impl Direction {
    /// Every direction, in code order (the order moves are enumerated in).
    pub const ALL: [Direction; 8] = [
        Direction::N,
        Direction::NE,
        Direction::E,
        Direction::SE,
        Direction::S,
        Direction::SW,
        Direction::W,
        Direction::NW,
    ];

    /// The change of (x, y) for one step; x grows eastward, y southward.
    pub fn delta(self) -> (i32, i32) {
        match self {
            Direction::N => (0, -1),
            Direction::NE => (1, -1),
            Direction::E => (1, 0),
            Direction::SE => (1, 1),
            Direction::S => (0, 1),
            Direction::SW => (-1, 1),
            Direction::W => (-1, 0),
            Direction::NW => (-1, -1),
        }
    }

    /// "N", "NE", …
    pub fn name(self) -> &'static str {
        match self {
            Direction::N => "N",
            Direction::NE => "NE",
            Direction::E => "E",
            Direction::SE => "SE",
            Direction::S => "S",
            Direction::SW => "SW",
            Direction::W => "W",
            Direction::NW => "NW",
        }
    }

    /// The boussole's letters as a French player reads them: "N", "NE",
    /// "E", "SE", "S", "SO", "O", "NO".
    pub fn french(self) -> &'static str {
        match self {
            Direction::SW => "SO",
            Direction::W => "O",
            Direction::NW => "NO",
            other => other.name(),
        }
    }

    pub(super) fn code(self) -> u8 {
        self as u8
    }
}

/// A square of the map: x counts columns from the west edge, y rows from the
/// north edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Square {
    /// Column, 0 = westmost.
    pub x: u8,
    /// Row, 0 = northmost.
    pub y: u8,
}

impl Square {
    pub(super) fn number(self) -> usize {
        usize::from(self.y) * usize::from(MAP_WIDTH) + usize::from(self.x)
    }

    pub(super) fn from_number(n: usize) -> Square {
        Square {
            x: (n % usize::from(MAP_WIDTH)) as u8,
            y: (n / usize::from(MAP_WIDTH)) as u8,
        }
    }

    /// The square `steps` squares away in `direction`, if on the map.
    pub(super) fn moved(self, direction: Direction, steps: u8) -> Option<Square> {
        let (dx, dy) = direction.delta();
        let x = i32::from(self.x) + dx * i32::from(steps);
        let y = i32::from(self.y) + dy * i32::from(steps);
        let on_map =
            (0..i32::from(MAP_WIDTH)).contains(&x) && (0..i32::from(MAP_HEIGHT)).contains(&y);
        on_map.then_some(Square {
            x: x as u8,
            y: y as u8,
        })
    }
}

/// A chest on the map and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chest {
    /// Where it stands.
    pub square: Square,
    /// What is under it.
    pub content: Content,
}

/// One throw: the boussole's direction and the compteur's step count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throw {
    /// Direction of the move.
    pub direction: Direction,
    /// Squares moved, at least 1.
    pub steps: u8,
}

/// One unit's map: start square, nine chests (sorted by square, north-west
/// first) and four throws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Where the pion starts.
    pub start: Square,
    /// The nine chests, in square order (row by row from the north-west).
    pub chests: [Chest; CHESTS],
    /// The four throws, in play order.
    pub throws: [Throw; THROWS],
}

impl Unit {
    /// Plays the unit under the rules of docs/GAMES.md and returns the lot
    /// it reveals (0: none), or the first rule it breaks.
    pub fn play(&self) -> Result<u8, String> {
        // Chests by square: a bit mask and a content table (this runs for
        // every unit a verification or an export reads).
        let mut chest_squares = 0u64;
        let mut content_at = [0u8; SQUARES];
        for (i, c) in self.chests.iter().enumerate() {
            let n = c.square.number();
            if c.square == self.start {
                return Err(format!("chest {i} stands on the start square"));
            }
            if chest_squares & 1 << n != 0 {
                return Err(format!(
                    "two chests on square ({}, {})",
                    c.square.x, c.square.y
                ));
            }
            chest_squares |= 1 << n;
            content_at[n] = c.content as u8;
        }
        let landings = self.landings()?;
        let mut uncovered = [0u8; THROWS];
        for (i, square) in landings.iter().enumerate() {
            let n = square.number();
            if chest_squares & 1 << n == 0 {
                return Err(format!(
                    "throw {} lands on ({}, {}) where there is no chest",
                    i + 1,
                    square.x,
                    square.y
                ));
            }
            uncovered[i] = content_at[n];
        }
        match verdict_table()[fill_index(&uncovered)] {
            NO_LOT => judge(&uncovered.map(|c| Content::ALL[usize::from(c)])),
            lot => Ok(lot),
        }
    }

    /// The squares the four throws land on, checking each move stays on the
    /// map and never lands on a square already visited.
    pub fn landings(&self) -> Result<[Square; THROWS], String> {
        let mut at = self.start;
        let mut landings = [at; THROWS];
        for (i, t) in self.throws.iter().enumerate() {
            if t.steps == 0 {
                return Err(format!("throw {} has 0 steps", i + 1));
            }
            at = at.moved(t.direction, t.steps).ok_or_else(|| {
                format!(
                    "throw {} ({} {}) leaves the map from ({}, {})",
                    i + 1,
                    t.direction.name(),
                    t.steps,
                    at.x,
                    at.y
                )
            })?;
            if at == self.start || landings[..i].contains(&at) {
                return Err(format!(
                    "throw {} lands again on ({}, {})",
                    i + 1,
                    at.x,
                    at.y
                ));
            }
            landings[i] = at;
        }
        Ok(landings)
    }
}
