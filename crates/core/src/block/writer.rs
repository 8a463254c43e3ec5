//! Writing a made block to disk: lays out the chunk index, fills in the
//! header, seals it and writes the file atomically (docs/FORMAT.md).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use ed25519_dalek::SigningKey;
use sha2::{Digest, Sha256};

use super::build::{self, BlockSpec, BuiltBlock};
use super::{Header, IndexEntry, CHUNK_UNITS, SEAL_LEN};
use crate::derive;
use crate::error::Error;
use crate::fsutil;
use crate::merkle::Hash;
use crate::record;
use crate::seal;

/// What was written.
#[derive(Clone, Debug)]
pub struct WrittenBlock {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: Header,
    /// SHA-256 of the whole file.
    pub file_sha256: Hash,
}

/// The header and index of a made block, before the seal.
pub fn lay_out(
    built: &BuiltBlock,
    records_key: &[u8; 32],
    signer: &SigningKey,
) -> (Header, Vec<u8>) {
    let mut header = Header {
        game: built.spec.game,
        rules_version: built.spec.game.rules_version(),
        emission: built.spec.emission,
        block: built.spec.block,
        price_cents: built.spec.price_cents,
        unit_count: built.unit_count,
        record_size: record::record_size(built.spec.game) as u16,
        params: built.spec.game.params(),
        chunk_units: CHUNK_UNITS,
        chunk_count: built.chunks.len() as u32,
        seal_offset: 0,
        seed_commitment: built.seed_commitment,
        merkle_root: built.merkle_root,
        index_sha256: [0; 32],
        records_key_id: derive::records_key_id(records_key),
        signer: signer.verifying_key().to_bytes(),
        lot_table: built.lot_table.clone(),
    };
    let mut offset = header.chunks_offset();
    let mut index = Vec::with_capacity(header.index_len());
    for chunk in &built.chunks {
        IndexEntry {
            offset,
            length: chunk.ciphertext.len() as u32,
            units: chunk.units,
            subtree_root: chunk.subtree_root,
            ciphertext_sha256: Sha256::digest(&chunk.ciphertext).into(),
        }
        .encode(&mut index);
        offset += chunk.ciphertext.len() as u64;
    }
    header.seal_offset = offset;
    header.index_sha256 = Sha256::digest(&index).into();
    (header, index)
}

/// Writes `built` to `path`, sealed with `signer`. The file appears only
/// once complete and synced; an existing file is never overwritten.
pub fn write(
    built: &BuiltBlock,
    records_key: &[u8; 32],
    signer: &SigningKey,
    path: &Path,
) -> Result<WrittenBlock, Error> {
    let (header, index) = lay_out(built, records_key, signer);
    let header_bytes = header.encode();
    let signature = seal::sign(signer, &header_bytes);
    let tmp = fsutil::partial_beside(path, 0o644)?;
    let mut hasher = Sha256::new();
    {
        let mut out = BufWriter::with_capacity(1 << 20, tmp.as_file());
        let mut put = |bytes: &[u8]| -> Result<(), Error> {
            hasher.update(bytes);
            out.write_all(bytes).map_err(|e| Error::io(path, e))
        };
        put(&header_bytes)?;
        put(&index)?;
        for chunk in &built.chunks {
            put(&chunk.ciphertext)?;
        }
        put(&signature)?;
        out.flush().map_err(|e| Error::io(path, e))?;
    }
    debug_assert_eq!(
        tmp.as_file().metadata().map(|m| m.len()).unwrap_or(0),
        header.seal_offset + SEAL_LEN as u64
    );
    fsutil::commit(tmp, path, false)?;
    Ok(WrittenBlock {
        path: path.to_path_buf(),
        header,
        file_sha256: hasher.finalize().into(),
    })
}

/// Makes the block `spec` from `seed` and writes it to `path`, encrypted
/// with `records_key` and sealed with `signer`, outside any emission: how
/// tests make test-size blocks (`spec.units` below the game's block size,
/// docs/FORMAT.md §Test-size blocks) and vectors with their own keys.
pub fn make_block(
    spec: BlockSpec,
    seed: &[u8; 32],
    records_key: &[u8; 32],
    signer: &SigningKey,
    path: &Path,
) -> Result<WrittenBlock, Error> {
    let built = build::build(spec, seed, Some(records_key), &|_| {})?;
    write(&built, records_key, signer, path)
}
