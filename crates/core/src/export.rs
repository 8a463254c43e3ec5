//! `issuer export`: every unit of a block as one JSON object per line, in
//! block order, in the schema auditors' tools read (docs/FORMAT.md §Export).

use std::io::Write;

use rayon::prelude::*;

use crate::block::authentic::AuthenticBlock;
use crate::error::Error;
use crate::money::{push_decimal, Cents};
use crate::record::RecordPrefix;
use crate::unit_id::UnitId;

/// How the export's destination is named in errors.
const OUTPUT: &str = "<export output>";

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

/// The start of one JSON line: `{`, the common fields `id`, `index`,
/// `prize`, `lot` and the comma before the game's own (docs/FORMAT.md
/// §Export). Lines are written by hand, byte for byte what serde_json
/// writes for the same values (tested): every string is an ID, a decimal,
/// or a token of the game, none needs escaping.
fn write_common_fields(block: &AuthenticBlock, prefix: &RecordPrefix, out: &mut Vec<u8>) {
    let game = block.file.header.game;
    out.extend_from_slice(br#"{"id":""#);
    unit_id(block, prefix).write_to(out);
    out.extend_from_slice(br#"","index":"#);
    push_decimal(out, u64::from(prefix.index));
    out.extend_from_slice(br#","prize":""#);
    Cents::from(prefix.prize_cents).write(out);
    match game.lot_name(prefix.lot) {
        Some(name) => {
            out.extend_from_slice(br#"","lot":""#);
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(br#"","#);
        }
        None => out.extend_from_slice(br#"","lot":null,"#),
    }
}

/// Appends the JSON lines of chunk `chunk` to `lines`, each unit
/// re-checked against the rules: the line is written as its payload is
/// played (one decoding), and the block is rejected, its lines dropped,
/// if the unit's lot or prize then disagree with its play.
fn chunk_lines(block: &AuthenticBlock, chunk: u32, lines: &mut Vec<u8>) -> Result<(), Error> {
    let game = block.file.header.game;
    block.for_each_unit_played(chunk, |prefix, payload| {
        write_common_fields(block, prefix, lines);
        let unit = game.decode(payload)?;
        let played = unit.play_to_end()?;
        unit.write_export_fields(lines);
        lines.extend_from_slice(b"}\n");
        Ok(played)
    })
}

/// Exports every unit of `block` to `out`, re-checking each against the
/// rules as it goes, telling `progress` the units of each chunk written;
/// returns the number of lines written. Chunks are turned into text in
/// parallel, two per thread at a time, into buffers reused from window to
/// window (bounded memory, no fresh pages), and written in block order.
pub fn export_jsonl(
    block: &AuthenticBlock,
    out: &mut impl Write,
    progress: &dyn Fn(u64),
) -> Result<u64, Error> {
    let h = &block.file.header;
    let window = (rayon::current_num_threads() * 2).max(1);
    let mut buffers: Vec<Vec<u8>> = vec![Vec::new(); window];
    let mut lines = 0u64;
    let mut first = 0;
    while first < h.chunk_count {
        let last = (first + window as u32).min(h.chunk_count);
        let done: Vec<Result<(), Error>> = buffers
            .par_iter_mut()
            .zip(first..last)
            .map(|(buffer, chunk)| {
                buffer.clear();
                chunk_lines(block, chunk, buffer)
            })
            .collect();
        for ((chunk, result), buffer) in (first..last).zip(done).zip(&buffers) {
            result?;
            out.write_all(buffer)
                .map_err(|e| Error::io(OUTPUT.as_ref(), e))?;
            let units = h.units_in_chunk(chunk);
            lines += u64::from(units);
            progress(u64::from(units));
        }
        first = last;
    }
    out.flush().map_err(|e| Error::io(OUTPUT.as_ref(), e))?;
    Ok(lines)
}
