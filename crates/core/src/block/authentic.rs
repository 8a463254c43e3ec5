//! A block opened for use (export, redeem, show): its seal, index digest and
//! index roots are checked before anything in it is believed, and each
//! chunk is checked against the index as it is read, so one unit can be
//! authenticated from the header, the index and its own chunk alone.

use std::path::Path;

use ed25519_dalek::VerifyingKey;
use sha2::{Digest, Sha256};

use super::reader::BlockFile;
use super::unit_check::{check_unit, check_unit_played};
use super::SEAL_LEN;
use crate::error::Error;
use crate::game::{LotTable, Played};
use crate::merkle::{self, Hash};
use crate::record::RecordPrefix;
use crate::records_key::KeyAccess;
use crate::seal;

/// A block whose header and index are authenticated, with its records key.
pub struct AuthenticBlock {
    /// The file.
    pub file: BlockFile,
    /// The regulation's lot table for the block's price.
    pub regulation: LotTable,
    records_key: [u8; 32],
}

impl AuthenticBlock {
    /// Opens `path` for `what` ("export", "redeem"): checks the seal against
    /// `trusted`, the index digest and the index roots against the sealed
    /// Merkle root, and obtains the records key.
    pub fn open(
        path: &Path,
        trusted: &VerifyingKey,
        keys: KeyAccess,
        what: &str,
    ) -> Result<AuthenticBlock, Error> {
        let file = BlockFile::open(path)?;
        let reject = |reason: String| Error::BlockRejected {
            path: path.to_path_buf(),
            reason,
        };
        let h = &file.header;
        if file.file_len != h.seal_offset + SEAL_LEN as u64 {
            return Err(reject(format!(
                "file is {} bytes, its header says {}",
                file.file_len,
                h.seal_offset + SEAL_LEN as u64
            )));
        }
        if h.game.is_test_size(h.unit_count) {
            return Err(reject(format!(
                "it is a test-size block of {} units (a {} block holds {}); only `verify` of tests reads it",
                h.unit_count,
                h.game.slug(),
                h.game.block_units()
            )));
        }
        if h.signer != trusted.to_bytes() {
            return Err(reject(
                "it is sealed by another key than the issuer's".into(),
            ));
        }
        let sealed = file
            .seal
            .as_ref()
            .is_some_and(|s| seal::verify(trusted, &file.header_bytes, s));
        if !sealed {
            return Err(reject("its seal does not verify".into()));
        }
        if !file.index_digest_ok() {
            return Err(reject(
                "its chunk index does not match the sealed digest".into(),
            ));
        }
        let roots: Vec<Hash> = file.index.iter().map(|e| e.subtree_root).collect();
        if merkle::root_from_hashes(&roots) != h.merkle_root {
            return Err(reject(
                "its chunk roots do not make the sealed Merkle root".into(),
            ));
        }
        let regulation = h.game.lot_table(h.price_cents)?;
        let records_key = keys
            .records_key(&file)?
            .ok_or_else(|| Error::NeedRecordsKey {
                what: what.to_string(),
                block: file.describe(),
            })?;
        Ok(AuthenticBlock {
            file,
            regulation,
            records_key,
        })
    }

    /// The records of chunk `chunk`, read, checked against the index
    /// (ciphertext digest, then subtree root) and decrypted, with their leaf
    /// hashes (computed for the check, kept for inclusion proofs).
    pub fn chunk_records(&self, chunk: u32) -> Result<OpenedChunk, Error> {
        let reject = |reason: String| Error::BlockRejected {
            path: self.file.path().to_path_buf(),
            reason,
        };
        let entry = *self.file.entry(chunk)?;
        let ciphertext = self.file.read_ciphertext(chunk)?;
        let digest: Hash = Sha256::digest(&ciphertext).into();
        if digest != entry.ciphertext_sha256 {
            return Err(reject(format!(
                "chunk {chunk} does not match its sealed digest"
            )));
        }
        let records = self
            .file
            .open_chunk(chunk, &ciphertext, &self.records_key)
            .map_err(|p| reject(format!("chunk {chunk}: {p}")))?;
        let size = usize::from(self.file.header.record_size);
        let leaves = crate::block::build::leaf_hashes(&records, size);
        if merkle::root_from_hashes(&leaves) != entry.subtree_root {
            return Err(reject(format!(
                "chunk {chunk}'s records do not hash to its sealed subtree root"
            )));
        }
        Ok(OpenedChunk { records, leaves })
    }

    /// Reads chunk `chunk` and hands `each` every unit of it, in order,
    /// once the unit is checked against the rules (`unit_check::check_unit`):
    /// its record prefix and its whole record. A unit that fails the check,
    /// or that `each` refuses, rejects the block naming the unit.
    pub fn for_each_checked_unit(
        &self,
        chunk: u32,
        mut each: impl FnMut(&RecordPrefix, &[u8]) -> Result<(), String>,
    ) -> Result<(), Error> {
        let h = &self.file.header;
        self.each_unit(chunk, |position, record| {
            check_unit(h, &self.regulation, position, record)
                .map_err(|(_, m)| m)
                .and_then(|prefix| each(&prefix, record))
        })
    }

    /// Checks every unit of chunk `chunk` as [`Self::for_each_checked_unit`]
    /// does, `play` playing each payload instead of the game's
    /// `play_to_end` (`unit_check::check_unit_played`): it is given the record
    /// prefix (index checked, the rest not yet) and the payload.
    pub fn for_each_unit_played(
        &self,
        chunk: u32,
        mut play: impl FnMut(&RecordPrefix, &[u8]) -> Result<Played, String>,
    ) -> Result<(), Error> {
        let h = &self.file.header;
        self.each_unit(chunk, |position, record| {
            check_unit_played(h, &self.regulation, position, record, &mut play)
                .map(|_| ())
                .map_err(|(_, m)| m)
        })
    }

    /// Reads chunk `chunk` and runs `unit` on each record with its position
    /// in the block; the first refusal rejects the block naming the unit.
    fn each_unit(
        &self,
        chunk: u32,
        mut unit: impl FnMut(u32, &[u8]) -> Result<(), String>,
    ) -> Result<(), Error> {
        let h = &self.file.header;
        let size = usize::from(h.record_size);
        let records = self.chunk_records(chunk)?.records;
        for (i, record) in records.chunks_exact(size).enumerate() {
            let position = chunk * h.chunk_units + i as u32;
            unit(position, record).map_err(|m| Error::BlockRejected {
                path: self.file.path().to_path_buf(),
                reason: format!("unit {position}: {m}"),
            })?;
        }
        Ok(())
    }
}

/// A chunk's records, authenticated, and their RFC 9162 leaf hashes.
pub struct OpenedChunk {
    /// The records, concatenated, in unit order.
    pub records: Vec<u8>,
    /// One leaf hash per record.
    pub leaves: Vec<Hash>,
}
