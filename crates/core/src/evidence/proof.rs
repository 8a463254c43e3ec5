//! A unit's inclusion proof for an auditor, read-only and at any time
//! (after the reveal too, when redemption refuses the emission): the
//! unit's record, its outcome, and its RFC 9162 path to the block's sealed
//! Merkle root, checked before it is given.

use serde::Serialize;

use crate::block::authentic::AuthenticBlock;
use crate::error::Error;
use crate::merkle::{self, Hash};
use crate::money::Cents;
use crate::record::RecordPrefix;
use crate::unit_id::UnitId;

/// What `issuer audit --prove ID` writes for a unit (`proofs/ID.json`).
#[derive(Clone, Debug, Serialize)]
pub struct UnitProof {
    /// The unit ID.
    pub id: String,
    /// Its lot (none: null) and prize played to the end, euros.
    pub lot: Option<&'static str>,
    /// The prize played to the end, euros.
    pub prize: String,
    /// The record, hex (the Merkle leaf's data).
    pub record: String,
    /// Leaf index (= unit index).
    pub leaf_index: u64,
    /// Leaves in the block's tree.
    pub tree_size: u64,
    /// RFC 9162 §2.1.3 inclusion proof, bottom-up, hex.
    pub inclusion_proof: Vec<String>,
    /// The block's sealed Merkle root, hex.
    pub merkle_root: String,
    /// The block file.
    pub block_file: String,
}

/// The proof of unit `id` in `block` (the block `id` names), checked
/// against the sealed root; the ID's check code must be the record's.
pub fn unit_proof(block: &AuthenticBlock, id: &UnitId) -> Result<UnitProof, Error> {
    let h = &block.file.header;
    let reject = |reason: String| Error::BlockRejected {
        path: block.file.path().to_path_buf(),
        reason,
    };
    if id.index >= h.unit_count {
        return Err(Error::IndexOutOfRange {
            id: id.to_string(),
            index: id.index,
            last: h.unit_count - 1,
        });
    }
    let chunk = id.index / h.chunk_units;
    let in_chunk = (id.index % h.chunk_units) as usize;
    let opened = block.chunk_records(chunk)?;
    let size = usize::from(h.record_size);
    let record = &opened.records[in_chunk * size..(in_chunk + 1) * size];
    let prefix = RecordPrefix::parse(record)
        .ok_or_else(|| reject(format!("unit {}: record too short", id.index)))?;
    if prefix.check_code != id.check_code {
        return Err(Error::CheckCodeMismatch { id: id.to_string() });
    }
    let roots: Vec<Hash> = block.file.index.iter().map(|e| e.subtree_root).collect();
    let proof = merkle::chunked_inclusion_proof(&opened.leaves, in_chunk, &roots, chunk as usize)
        .filter(|p| {
            merkle::verify_inclusion(
                &opened.leaves[in_chunk],
                u64::from(id.index),
                u64::from(h.unit_count),
                p,
                &h.merkle_root,
            )
        })
        .ok_or_else(|| {
            reject(format!(
                "unit {}: no proof reaches the sealed root",
                id.index
            ))
        })?;
    Ok(UnitProof {
        id: id.to_string(),
        lot: h.game.lot_name(prefix.lot),
        prize: Cents::from(prefix.prize_cents).to_string(),
        record: hex::encode(record),
        leaf_index: u64::from(id.index),
        tree_size: u64::from(h.unit_count),
        inclusion_proof: proof.iter().map(hex::encode).collect(),
        merkle_root: hex::encode(h.merkle_root),
        block_file: block.file.path().display().to_string(),
    })
}
