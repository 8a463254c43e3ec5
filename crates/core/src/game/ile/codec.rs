//! The unit payload (docs/FORMAT.md §Île au trésor payload): its size,
//! encoding and decoding. Decoding checks the layout only (size, map size,
//! squares on the map, known codes); the rules are [`Unit::play`]'s.

use super::regulation::{Content, CHESTS, MAP_HEIGHT, MAP_WIDTH, THROWS};
use super::unit::{Chest, Direction, Square, Throw, Unit};

/// Bytes of a unit payload: map size, start, 9 chests, 4 throws.
pub const PAYLOAD_SIZE: usize = 4 + CHESTS * 3 + THROWS * 2;

impl Unit {
    /// Appends the payload layout of docs/FORMAT.md §Île au trésor payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut payload = [0u8; PAYLOAD_SIZE];
        payload[..4].copy_from_slice(&[MAP_WIDTH, MAP_HEIGHT, self.start.x, self.start.y]);
        for (b, c) in payload[4..].chunks_exact_mut(3).zip(&self.chests) {
            b.copy_from_slice(&[c.square.x, c.square.y, c.content as u8]);
        }
        for (b, t) in payload[4 + 3 * CHESTS..]
            .chunks_exact_mut(2)
            .zip(&self.throws)
        {
            b.copy_from_slice(&[t.direction.code(), t.steps]);
        }
        out.extend_from_slice(&payload);
    }

    /// Decodes a payload; fails on a wrong size, map size or unknown code.
    pub fn decode(payload: &[u8]) -> Result<Unit, String> {
        if payload.len() != PAYLOAD_SIZE {
            return Err(format!(
                "payload is {} bytes, expected {PAYLOAD_SIZE}",
                payload.len()
            ));
        }
        if payload[0] != MAP_WIDTH || payload[1] != MAP_HEIGHT {
            return Err(format!(
                "map is {}×{}, this model is {MAP_WIDTH}×{MAP_HEIGHT}",
                payload[0], payload[1]
            ));
        }
        // The message is built only on failure: decode runs for every unit
        // a verification or an export reads.
        let square = |x: u8, y: u8, what: &dyn Fn() -> String| {
            if x < MAP_WIDTH && y < MAP_HEIGHT {
                Ok(Square { x, y })
            } else {
                Err(format!("{} at ({x}, {y}) is off the map", what()))
            }
        };
        let start = square(payload[2], payload[3], &|| "start".into())?;
        let mut chests = [Chest {
            square: start,
            content: Content::Vide,
        }; CHESTS];
        for (i, chest) in chests.iter_mut().enumerate() {
            let b = &payload[4 + 3 * i..7 + 3 * i];
            let content = Content::from_code(b[2])
                .ok_or_else(|| format!("chest {i} has unknown content code {}", b[2]))?;
            *chest = Chest {
                square: square(b[0], b[1], &|| format!("chest {i}"))?,
                content,
            };
        }
        let mut throws = [Throw {
            direction: Direction::N,
            steps: 0,
        }; THROWS];
        for (i, throw) in throws.iter_mut().enumerate() {
            let b = &payload[4 + 3 * CHESTS + 2 * i..6 + 3 * CHESTS + 2 * i];
            let direction = Direction::ALL
                .get(usize::from(b[0]))
                .copied()
                .ok_or_else(|| format!("throw {} has unknown direction code {}", i + 1, b[0]))?;
            *throw = Throw {
                direction,
                steps: b[1],
            };
        }
        Ok(Unit {
            start,
            chests,
            throws,
        })
    }
}
