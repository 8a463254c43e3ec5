//! What a square of the board holds (3.2.1).

use serde::Serialize;

/// What a square of the board holds (3.2.1). The discriminant is the code
/// stored in payloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Square {
    /// The start square (0), « Départ ».
    Start = 0,
    /// A blank square, « vierge »: no effect.
    Blank = 1,
    /// « point de vie +1 ».
    LifePlus1 = 2,
    /// « point de vie +2 ».
    LifePlus2 = 3,
    /// « Piège »: one life point lost.
    Trap1 = 4,
    /// « Piège »: two life points lost.
    Trap2 = 5,
    /// « Piège »: three life points lost.
    Trap3 = 6,
    /// A bronze chest (6, 18, 30, 42, 54).
    Bronze = 7,
    /// A silver chest (12, 24, 36, 48).
    Silver = 8,
    /// The gold chest (60).
    Gold = 9,
}

impl Square {
    /// Every square kind, in code order.
    pub const ALL: [Square; 10] = [
        Square::Start,
        Square::Blank,
        Square::LifePlus1,
        Square::LifePlus2,
        Square::Trap1,
        Square::Trap2,
        Square::Trap3,
        Square::Bronze,
        Square::Silver,
        Square::Gold,
    ];

    pub(super) fn from_code(code: u8) -> Option<Square> {
        Square::ALL.get(usize::from(code)).copied()
    }

    /// The export token: `start`, `blank`, `life+1`, …, `gold`.
    pub fn token(self) -> &'static str {
        match self {
            Square::Start => "start",
            Square::Blank => "blank",
            Square::LifePlus1 => "life+1",
            Square::LifePlus2 => "life+2",
            Square::Trap1 => "trap-1",
            Square::Trap2 => "trap-2",
            Square::Trap3 => "trap-3",
            Square::Bronze => "bronze",
            Square::Silver => "silver",
            Square::Gold => "gold",
        }
    }

    /// The change of life points when the player lands here.
    pub fn life_change(self) -> i8 {
        match self {
            Square::LifePlus1 => 1,
            Square::LifePlus2 => 2,
            Square::Trap1 => -1,
            Square::Trap2 => -2,
            Square::Trap3 => -3,
            _ => 0,
        }
    }
}

/// Squares serialise as their export token.
impl Serialize for Square {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.token())
    }
}
