//! One unit's record checked against its game's rules and its block's
//! lot table: what verify, export and a redemption run on every unit.

use serde::Serialize;

use super::Header;
use crate::game::{LotTable, Played};
use crate::money::Cents;
use crate::record::RecordPrefix;

/// What kind of check failed (tests assert on this).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The file is shorter than its header says.
    Truncated,
    /// Bytes after the seal.
    TrailingBytes,
    /// Index entries that do not tile the chunk area, or wrong unit counts.
    IndexLayout,
    /// The index does not hash to the header's index digest.
    IndexDigest,
    /// The index's chunk roots do not make the header's Merkle root.
    IndexRoots,
    /// The header names another signer than the trusted key.
    WrongSigner,
    /// The seal is not a valid signature of the header.
    SealInvalid,
    /// A chunk's ciphertext does not match its digest in the index.
    ChunkDigest,
    /// A chunk fails authenticated decryption.
    Decrypt,
    /// A chunk's plaintext is not a zstd frame of the right size.
    Decompress,
    /// A record stands at another index than it says.
    UnitIndex,
    /// A unit breaks the game rules.
    UnitRules,
    /// A unit's recorded lot or prize differs from what its play reveals.
    UnitLot,
    /// A unit's check code is not the one derived from the block seed.
    CheckCode,
    /// A chunk's records do not hash to its subtree root in the index.
    SubtreeRoot,
    /// The records do not hash to the header's Merkle root.
    MerkleRoot,
    /// The header's lot table is not the regulation's.
    LotTable,
    /// The units' lots are not exactly the regulation's lot counts.
    LotCounts,
    /// The units' prizes do not total the regulation's amount.
    Total,
    /// The seed does not match the header's seed commitment.
    SeedCommitment,
    /// Regenerating the block from its seed gives another root.
    Regeneration,
    /// A test-size block (fewer units than the game's blocks hold), refused
    /// unless the options allow test sizes.
    BlockSize,
    /// A chunk's plaintext is not exactly one zstd frame (two frames, or
    /// bytes after the frame).
    ChunkFrames,
    /// A chunk's frame holds another number of records than the chunk.
    RecordCount,
}

/// Checks one record at position `position` of a block against the game
/// rules and the regulation's table; returns its prefix.
pub fn check_unit(
    header: &Header,
    table: &LotTable,
    position: u32,
    record: &[u8],
) -> Result<RecordPrefix, (FailureKind, String)> {
    check_unit_played(header, table, position, record, |_, payload| {
        header.game.play_to_end(payload).map_err(String::from)
    })
}

/// [`check_unit`], the play of the payload being `play`'s (given the
/// record's prefix, once its index is checked, and the payload): export
/// plays and writes each unit with one decoding.
pub fn check_unit_played(
    header: &Header,
    table: &LotTable,
    position: u32,
    record: &[u8],
    play: impl FnOnce(&RecordPrefix, &[u8]) -> Result<Played, String>,
) -> Result<RecordPrefix, (FailureKind, String)> {
    // Every message is built only on failure: this runs for every unit.
    let prefix = RecordPrefix::parse(record)
        .ok_or_else(|| (FailureKind::UnitRules, "record too short".to_string()))?;
    if prefix.index != position {
        return Err((
            FailureKind::UnitIndex,
            format!("record says it is unit {}", prefix.index),
        ));
    }
    let game = header.game;
    let played = play(&prefix, &record[crate::record::PREFIX_SIZE..])
        .map_err(|e| (FailureKind::UnitRules, e))?;
    let name = |lot: u8| game.lot_name(lot).unwrap_or("no lot");
    if played.lot != prefix.lot {
        return Err((
            FailureKind::UnitLot,
            format!(
                "its play gives {} but the record says {}",
                name(played.lot),
                name(prefix.lot)
            ),
        ));
    }
    let amount = game.prize_cents(&played, table).ok_or_else(|| {
        (
            FailureKind::UnitLot,
            format!("lot code {} is not in the lot table", prefix.lot),
        )
    })?;
    if amount != prefix.prize_cents {
        return Err((
            FailureKind::UnitLot,
            format!(
                "prize {} € recorded for {}, its play gives {} €",
                Cents::from(prefix.prize_cents),
                name(prefix.lot),
                Cents::from(amount)
            ),
        ));
    }
    Ok(prefix)
}
