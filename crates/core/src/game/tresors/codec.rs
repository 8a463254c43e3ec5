//! The payload of docs/FORMAT.md §Trésors Ensablés payload, encoded and
//! decoded.

use super::{Square, Unit, BOARD_SQUARES, CHESTS, MAX_ROLLS, MIN_ROLLS};

/// Bytes of a unit payload: 60 squares, 10 chests and 60 dice at 4 bits
/// each, and one byte for the tape length.
pub const PAYLOAD_SIZE: usize = 30 + 5 + 1 + 30;

impl Unit {
    /// Appends the payload of docs/FORMAT.md §Trésors Ensablés payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        push_nibbles(out, self.board[1..].iter().map(|&q| q as u8));
        push_nibbles(out, self.chests);
        out.push(self.rolls);
        push_nibbles(out, self.dice);
    }

    /// Decodes a payload and checks it ([`Unit::check`]); refuses anything
    /// a generator cannot produce, naming the square, chest or die.
    pub fn decode(payload: &[u8]) -> Result<Unit, String> {
        if payload.len() != PAYLOAD_SIZE {
            return Err(format!(
                "payload is {} bytes, expected {PAYLOAD_SIZE}",
                payload.len()
            ));
        }
        let nibble = |offset: usize, i: usize| {
            let b = payload[offset + i / 2];
            if i.is_multiple_of(2) {
                b >> 4
            } else {
                b & 0x0f
            }
        };
        let mut board = [Square::Start; BOARD_SQUARES];
        for (n, square) in board.iter_mut().enumerate().skip(1) {
            let code = nibble(0, n - 1);
            *square = Square::from_code(code)
                .ok_or_else(|| format!("square {n} has unknown code {code}"))?;
        }
        let mut chests = [0u8; CHESTS];
        for (k, chest) in chests.iter_mut().enumerate() {
            *chest = nibble(30, k);
        }
        let rolls = usize::from(payload[35]);
        if !(MIN_ROLLS..=MAX_ROLLS).contains(&rolls) {
            return Err(format!(
                "dice tape length is {rolls}, a tape has {MIN_ROLLS} to {MAX_ROLLS} rolls"
            ));
        }
        let mut dice = [0u8; MAX_ROLLS];
        for (i, die) in dice.iter_mut().enumerate() {
            *die = nibble(36, i);
            if i >= rolls && *die != 0 {
                return Err(format!(
                    "die slot {} is {} after the tape's end ({rolls} rolls); it must be 0",
                    i + 1,
                    *die
                ));
            }
        }
        let unit = Unit {
            board,
            chests,
            dice,
            rolls: rolls as u8,
        };
        unit.check()?;
        Ok(unit)
    }
}

/// Appends `values` (each < 16) two per byte, the first in the high nibble;
/// an odd count leaves the last low nibble 0.
fn push_nibbles(out: &mut Vec<u8>, values: impl IntoIterator<Item = u8>) {
    let mut high = None;
    for v in values {
        match high.take() {
            None => high = Some(v),
            Some(h) => out.push(h << 4 | v),
        }
    }
    if let Some(h) = high {
        out.push(h << 4);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::tresors::MAX_PRIZE_CENTS;
    use crate::rng::Stream;
    use proptest::prelude::*;

    // ---- generated units ----

    /// A separate replay of the rules: the prize of stopping after `stop`
    /// rolls (`None`: to the end), or `None` if that stop is not allowed.
    fn replay(unit: &Unit, stop: Option<usize>) -> Option<u32> {
        let (board, dice) = (unit.board(), unit.dice());
        if stop.is_some_and(|k| k >= dice.len()) {
            return None;
        }
        let (mut at, mut life, mut found, mut opened) = (0usize, 3i32, 0u32, 0);
        for (i, &die) in dice.iter().enumerate() {
            if stop == Some(i) {
                return (opened > 0).then_some(found);
            }
            at = (at + usize::from(die)).min(60);
            if at % 6 == 0 {
                found += unit.chest_cents(at / 6 - 1);
                opened += 1;
            } else {
                life = (life + i32::from(board[at].life_change())).min(3);
                if life <= 0 {
                    return stop.is_none().then_some(0);
                }
            }
        }
        stop.is_none().then_some(found)
    }

    proptest! {
        #[test]
        fn generated_units_round_trip_check_and_play(seed in any::<[u8; 32]>(), stream in any::<u64>()) {
            let u = Unit::generate(&mut Stream::new(&seed, stream));
            prop_assert_eq!(u.check(), Ok(()));
            let mut payload = Vec::new();
            u.encode(&mut payload);
            prop_assert_eq!(payload.len(), PAYLOAD_SIZE);
            prop_assert_eq!(Unit::decode(&payload), Ok(u));
            let end = u.play(None).unwrap();
            prop_assert!(end.prize_cents <= MAX_PRIZE_CENTS);
            prop_assert_eq!(Some(end.prize_cents), replay(&u, None));
            prop_assert_eq!(end.prize_cents, u.prize_to_end_cents());
            for k in 0..=u.dice().len() + 1 {
                let ours = u.play(Some(k as u32)).ok().map(|o| o.prize_cents);
                prop_assert_eq!(ours, replay(&u, Some(k)), "stop after {}", k);
            }
        }
    }

    proptest! {
        #[test]
        fn decode_never_panics_and_accepts_only_canonical_bytes(
            bytes in proptest::collection::vec(any::<u8>(), PAYLOAD_SIZE),
            seed in any::<[u8; 32]>(),
            flips in proptest::collection::vec((0..PAYLOAD_SIZE, 0u8..8), 1..4),
        ) {
            if let Ok(u) = Unit::decode(&bytes) {
                let mut again = Vec::new();
                u.encode(&mut again);
                prop_assert_eq!(again, bytes);
            }
            // Flipped bits of a real payload: refused, or another valid unit
            // whose encoding is exactly the bytes read.
            let mut payload = Vec::new();
            Unit::generate(&mut Stream::new(&seed, 1)).encode(&mut payload);
            for (at, bit) in flips {
                payload[at] ^= 1 << bit;
            }
            if let Ok(u) = Unit::decode(&payload) {
                let mut again = Vec::new();
                u.encode(&mut again);
                prop_assert_eq!(again, payload);
            }
        }
    }
}
