//! Unit IDs: `<GAME>-<emission>-<block>-<index>-<check>`, e.g.
//! `IAT-7-1-123456-7KD2M9QX` (docs/FORMAT.md §Unit ID).
//!
//! The check code is 40 bits derived from the block's secret seed, written
//! in Crockford base32 (8 characters, case-insensitive, I/L read as 1 and O
//! as 0), so a mistyped or invented ID is refused instead of being read as
//! another unit, and IDs can't be listed without the secret or the block.

use std::fmt;

use crate::derive::CHECK_CODE_LEN;
use crate::error::{echo, Error};
use crate::game::Game;

const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const CHECK_CHARS: usize = 8;

/// A parsed unit ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitId {
    /// The game.
    pub game: Game,
    /// The emission number.
    pub emission: u32,
    /// The block number within the emission.
    pub block: u32,
    /// The unit's index within the block.
    pub index: u32,
    /// The check code.
    pub check_code: [u8; CHECK_CODE_LEN],
}

impl UnitId {
    /// The check code in its written form (8 characters of [`ALPHABET`]).
    fn check_chars(&self) -> [u8; CHECK_CHARS] {
        let mut value = self
            .check_code
            .iter()
            .fold(0u64, |v, b| v << 8 | u64::from(*b));
        let mut check = [0u8; CHECK_CHARS];
        for c in check.iter_mut().rev() {
            *c = ALPHABET[(value & 31) as usize];
            value >>= 5;
        }
        check
    }

    /// Appends the written ID (as `Display` writes it) to `out` without
    /// the formatting machinery: export writes one per unit.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        use crate::money::push_decimal;
        out.extend_from_slice(self.game.id_prefix().as_bytes());
        for n in [self.emission, self.block, self.index] {
            out.push(b'-');
            push_decimal(out, u64::from(n));
        }
        out.push(b'-');
        out.extend_from_slice(&self.check_chars());
    }
}

impl fmt::Display for UnitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let check = self.check_chars();
        write!(
            f,
            "{}-{}-{}-{}-{}",
            self.game.id_prefix(),
            self.emission,
            self.block,
            self.index,
            std::str::from_utf8(&check).unwrap_or("?")
        )
    }
}

fn decode_char(c: u8) -> Option<u64> {
    let c = match c.to_ascii_uppercase() {
        b'I' | b'L' => b'1',
        b'O' => b'0',
        other => other,
    };
    ALPHABET.iter().position(|&a| a == c).map(|p| p as u64)
}

impl std::str::FromStr for UnitId {
    type Err = Error;

    /// Parses the syntax only; the check code is verified against the
    /// issuer's secret by the caller.
    fn from_str(text: &str) -> Result<UnitId, Error> {
        let bad = |reason: String| Error::MalformedId {
            id: text.to_string(),
            reason,
        };
        let parts: Vec<&str> = text.trim().split('-').collect();
        let [prefix, emission, block, index, check] = parts.as_slice() else {
            return Err(bad(format!(
                "expected 5 parts GAME-EMISSION-BLOCK-INDEX-CHECK, found {}",
                parts.len()
            )));
        };
        let game = Game::from_id_prefix(&prefix.to_ascii_uppercase())
            .ok_or_else(|| bad(format!("unknown game prefix {:?}", echo(prefix))))?;
        let number = |s: &str, what: &str| {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(format!("{what} {:?} is not a number", echo(s))));
            }
            s.parse::<u32>()
                .map_err(|_| bad(format!("{what} {} is too large", echo(s))))
        };
        let emission = number(emission, "emission")?;
        let block = number(block, "block")?;
        let index = number(index, "index")?;
        if check.len() != CHECK_CHARS {
            return Err(bad(format!(
                "check code {:?} has {} characters, expected {CHECK_CHARS}",
                echo(check),
                check.len()
            )));
        }
        let mut value = 0u64;
        for c in check.bytes() {
            let v = decode_char(c).ok_or_else(|| {
                bad(format!(
                    "check code has an invalid character {:?}",
                    c as char
                ))
            })?;
            value = value << 5 | v;
        }
        let bytes = value.to_be_bytes();
        let mut check_code = [0u8; CHECK_CODE_LEN];
        check_code.copy_from_slice(&bytes[8 - CHECK_CODE_LEN..]);
        Ok(UnitId {
            game,
            emission,
            block,
            index,
            check_code,
        })
    }
}
