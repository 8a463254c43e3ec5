//! The unit record: a fixed-width, little-endian byte layout shared by every
//! game (docs/FORMAT.md §Unit record): a 14-byte common prefix, then the
//! game's payload. Merkle leaves are these bytes exactly.

use crate::derive::{self, CHECK_CODE_LEN};
use crate::game::{Game, PrizeModel};
use crate::rng::Stream;

/// Bytes of the common prefix: index, check code, lot, prize.
pub const PREFIX_SIZE: usize = 4 + CHECK_CODE_LEN + 1 + 4;

/// Size of a whole record of `game`.
pub fn record_size(game: Game) -> usize {
    PREFIX_SIZE + game.payload_size()
}

/// The common prefix of a record, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordPrefix {
    /// The unit's position in its block.
    pub index: u32,
    /// The unit's check code (part of its ID).
    pub check_code: [u8; CHECK_CODE_LEN],
    /// The unit's lot code (0: no lot).
    pub lot: u8,
    /// The lot's amount in cents (0 for a losing unit).
    pub prize_cents: u32,
}

impl RecordPrefix {
    /// Reads the prefix of `record` (at least `PREFIX_SIZE` bytes).
    pub fn parse(record: &[u8]) -> Option<RecordPrefix> {
        let b = record.get(..PREFIX_SIZE)?;
        let mut check_code = [0u8; CHECK_CODE_LEN];
        check_code.copy_from_slice(&b[4..4 + CHECK_CODE_LEN]);
        Some(RecordPrefix {
            index: u32::from_le_bytes(b[0..4].try_into().ok()?),
            check_code,
            lot: b[9],
            prize_cents: u32::from_le_bytes(b[10..14].try_into().ok()?),
        })
    }

    /// The prefix's bytes, in the layout [`RecordPrefix::parse`] reads.
    fn bytes(&self) -> [u8; PREFIX_SIZE] {
        let mut b = [0u8; PREFIX_SIZE];
        b[0..4].copy_from_slice(&self.index.to_le_bytes());
        b[4..4 + CHECK_CODE_LEN].copy_from_slice(&self.check_code);
        b[9] = self.lot;
        b[10..14].copy_from_slice(&self.prize_cents.to_le_bytes());
        b
    }
}

/// Appends the record of unit `index` of a block with seed `seed` (whose
/// check codes are `codes`): its payload is drawn from stream `index + 1`
/// of the seed (stream 0 is the block's lot shuffle). A fixed-table game's
/// unit must win `lot` of `prize_cents`; a drawn game's prefix holds what
/// its payload pays played to the end (docs/FORMAT.md §Unit record).
pub fn build(
    game: Game,
    seed: &[u8; 32],
    codes: &derive::CheckCodes,
    index: u32,
    lot: u8,
    prize_cents: u32,
    out: &mut Vec<u8>,
) {
    // The payload is drawn first (into its place after the prefix): a drawn
    // game's lot and prize are what it pays, known once it is drawn.
    let start = out.len();
    out.resize(start + PREFIX_SIZE, 0);
    let mut stream = Stream::new(seed, u64::from(index) + 1);
    let played = game.generate_payload(&mut stream, lot, out);
    debug_assert_eq!(
        game.play_to_end(&out[start + PREFIX_SIZE..]),
        Ok(played),
        "a generated unit plays by the rules"
    );
    let (lot, prize_cents) = match game.prize_model() {
        PrizeModel::FixedTable => (lot, prize_cents),
        PrizeModel::Drawn => (played.lot, played.prize.amount().unwrap_or(0)),
    };
    let prefix = RecordPrefix {
        index,
        check_code: codes.code(index),
        lot,
        prize_cents,
    };
    out[start..start + PREFIX_SIZE].copy_from_slice(&prefix.bytes());
}
