//! The unit model: what a square holds (3.2.1), a unit (its board, its
//! chests' values and its dice tape) and the rule check every unit passes.

use super::square::Square;
use super::{
    chest_square, series_start, ChestKind, BOARD_SQUARES, CHESTS, GOLD_SQUARE, MAX_ROLLS, RULES,
    SERIES,
};

/// One unit: its board, the value of each of its ten chests and its dice
/// tape.
///
/// INVARIANT: every `Unit` passes [`Unit::check`] (it is built only by
/// `generate`, `decode` or `from_parts`), so the tape ends exactly on 60.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    pub(super) board: [Square; BOARD_SQUARES],
    pub(super) chests: [u8; CHESTS],
    pub(super) dice: [u8; MAX_ROLLS],
    pub(super) rolls: u8,
}

impl Unit {
    /// A board with the start and the ten chests in place, the rest blank.
    pub(super) fn fixed_board() -> [Square; BOARD_SQUARES] {
        let mut board = [Square::Blank; BOARD_SQUARES];
        board[0] = Square::Start;
        for k in 0..CHESTS {
            board[usize::from(chest_square(k))] = ChestKind::of_chest(k).square();
        }
        board
    }

    /// A unit from its parts (chest value indices into each chest's table),
    /// refused unless it passes [`Unit::check`].
    pub fn from_parts(
        board: [Square; BOARD_SQUARES],
        chests: [u8; CHESTS],
        dice: &[u8],
    ) -> Result<Unit, String> {
        if dice.len() > MAX_ROLLS {
            return Err(format!(
                "dice tape has {} rolls; at most {MAX_ROLLS} can reach square 60",
                dice.len()
            ));
        }
        let mut tape = [0u8; MAX_ROLLS];
        tape[..dice.len()].copy_from_slice(dice);
        let unit = Unit {
            board,
            chests,
            dice: tape,
            rolls: dice.len() as u8,
        };
        unit.check()?;
        Ok(unit)
    }

    /// The 61 squares, the start first.
    pub fn board(&self) -> &[Square; BOARD_SQUARES] {
        &self.board
    }

    /// The dice tape, in roll order.
    pub fn dice(&self) -> &[u8] {
        &self.dice[..usize::from(self.rolls)]
    }

    /// The value index of chest `k` (0 … 9) in its kind's table.
    pub fn chest_index(&self, k: usize) -> u8 {
        self.chests[k]
    }

    /// The value of chest `k` (0 … 9) in cents.
    pub fn chest_cents(&self, k: usize) -> u32 {
        ChestKind::of_chest(k).table().cents[usize::from(self.chests[k])]
    }

    /// The rule check (docs/GAMES.md): start and chests in place, each
    /// series a possible draw of 3.2.2, chest values in their tables, dice
    /// 1 … 6 and a tape that ends exactly at the roll reaching 60.
    pub fn check(&self) -> Result<(), String> {
        let fixed = Self::fixed_board();
        for (n, (&have, &want)) in self.board.iter().zip(fixed.iter()).enumerate() {
            let fixed_square = n == 0 || n % 6 == 0;
            if fixed_square && have != want {
                return Err(format!(
                    "square {n} is {}, the regulation puts {} there (3.2.3)",
                    have.token(),
                    want.token()
                ));
            }
        }
        for s in 0..SERIES {
            let first = series_start(s);
            let series = &self.board[first..first + 5];
            if !series_possible(series) {
                return Err(format!(
                    "squares {first}-{} ({}) are not one square from each of rules 1, 2 and 3 and two blanks (3.2.2)",
                    first + 4,
                    series.iter().map(|q| q.token()).collect::<Vec<_>>().join(" ")
                ));
            }
        }
        for k in 0..CHESTS {
            let kind = ChestKind::of_chest(k);
            let len = kind.table().cents.len();
            if usize::from(self.chests[k]) >= len {
                return Err(format!(
                    "chest {} (square {}, {}) has value code {}, its table has {len} values (3.3.2)",
                    k + 1,
                    chest_square(k),
                    kind.name(),
                    self.chests[k]
                ));
            }
        }
        let mut position = 0u8;
        for (i, &die) in self.dice().iter().enumerate() {
            if !(1..=6).contains(&die) {
                return Err(format!("die {} is {die}, not 1 to 6", i + 1));
            }
            if position == GOLD_SQUARE {
                return Err(format!(
                    "die {} comes after the tape reached square 60 at die {i}",
                    i + 1
                ));
            }
            position = (position + die).min(GOLD_SQUARE);
        }
        if position != GOLD_SQUARE {
            return Err(format!(
                "dice tape ends on square {position} after {} rolls; it must end at the roll reaching 60",
                self.rolls
            ));
        }
        Ok(())
    }
}

/// Whether five squares are one outcome of each rule plus two blanks, in
/// any places (3.2.2): only the multiset matters, as any three distinct
/// offsets can be drawn.
fn series_possible(series: &[Square]) -> bool {
    let mut have = [0u8; Square::ALL.len()];
    for &q in series {
        have[q as usize] += 1;
    }
    let [r1, r2, r3] = RULES.map(|r| r.outcomes.map(|(q, _, _)| q));
    // Five squares to take out of five: all found means the same multiset.
    let takes_all = |squares: [Square; 5]| {
        let mut left = have;
        squares.iter().all(|&q| {
            let n = &mut left[q as usize];
            *n = n.wrapping_sub(1);
            *n != u8::MAX
        })
    };
    r2.iter().any(|&b| {
        r3.iter().any(|&c| {
            r1.iter()
                .any(|&a| takes_all([a, b, c, Square::Blank, Square::Blank]))
        })
    })
}
