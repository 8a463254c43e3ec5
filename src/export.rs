//! `issuer export`: every unit of a block as one JSON object per line, in
//! block order, in the schema auditors' tools read (docs/FORMAT.md §Export).

use std::io::Write;

use serde::Serialize;

use crate::block::authentic::AuthenticBlock;
use crate::error::Error;
use crate::game::cents_to_euros;
use crate::record::{RecordPrefix, PREFIX_SIZE};
use crate::unit_id::UnitId;
use crate::verify::check_unit;

/// How the export's destination is named in errors.
const OUTPUT: &str = "<export output>";

/// One exported line: the common fields, then the game's own.
#[derive(Serialize)]
pub struct ExportLine<V: Serialize> {
    /// The unit ID.
    pub id: String,
    /// Position in the block.
    pub index: u32,
    /// Prize in euros, decimal string ("0" for a loser).
    pub prize: String,
    /// The lot's name, or null.
    pub lot: Option<&'static str>,
    /// The game's unit fields.
    #[serde(flatten)]
    pub unit: V,
}

/// The ID of the unit whose record prefix is `prefix`, in block `block`.
pub fn unit_id(block: &AuthenticBlock, prefix: &RecordPrefix) -> UnitId {
    let h = &block.file.header;
    UnitId {
        game: h.game,
        emission: h.emission,
        block: h.block,
        index: prefix.index,
        check_code: prefix.check_code,
    }
}

/// Writes one JSON line for `record` (already checked) to `out`.
pub fn write_line(
    block: &AuthenticBlock,
    prefix: &RecordPrefix,
    record: &[u8],
    out: &mut impl Write,
) -> std::io::Result<()> {
    let game = block.file.header.game;
    let common = |unit| ExportLine {
        id: unit_id(block, prefix).to_string(),
        index: prefix.index,
        prize: cents_to_euros(prefix.prize_cents).to_string(),
        lot: game.lot_name(prefix.lot),
        unit,
    };
    let fields = game
        .export_fields(&record[PREFIX_SIZE..])
        .map_err(std::io::Error::other)?;
    serde_json::to_writer(&mut *out, &common(fields))?;
    out.write_all(b"\n")
}

/// Exports every unit of `block` to `out`, re-checking each against the
/// rules as it goes, telling `progress` the units of each chunk written;
/// returns the number of lines written.
pub fn export_jsonl(
    block: &AuthenticBlock,
    out: &mut impl Write,
    progress: &dyn Fn(u64),
) -> Result<u64, Error> {
    let h = &block.file.header;
    let size = usize::from(h.record_size);
    let mut lines = 0u64;
    for chunk in 0..h.chunk_count {
        let records = block.chunk_records(chunk)?.records;
        for (i, record) in records.chunks_exact(size).enumerate() {
            let position = chunk * h.chunk_units + i as u32;
            let prefix = check_unit(h, &block.regulation, position, record).map_err(|(_, m)| {
                Error::BlockRejected {
                    path: block.file.path().to_path_buf(),
                    reason: format!("unit {position}: {m}"),
                }
            })?;
            write_line(block, &prefix, record, out).map_err(|e| Error::io(OUTPUT.as_ref(), e))?;
            lines += 1;
        }
        progress(u64::from(h.units_in_chunk(chunk)));
    }
    out.flush().map_err(|e| Error::io(OUTPUT.as_ref(), e))?;
    Ok(lines)
}
