//! Chunk confidentiality (docs/FORMAT.md §Chunks): each chunk's records are
//! compressed as one zstd frame, then encrypted with ChaCha20-Poly1305 under
//! the block's records key. The nonce is the chunk number with the price and
//! versions (unique per key: one key per block) and the associated data binds
//! the chunk to its block and position, so chunks cannot be swapped or moved
//! between blocks.

use chacha20poly1305::aead::{Aead, AeadInPlace, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};

use crate::format::{FORMAT_VERSION, MAGIC};
use crate::game::GameId;

/// zstd settings for chunk records (the writer's choice, docs/FORMAT.md
/// §Chunks): level 1 with a 2^10-entry hash table and matches of at least
/// 7 bytes; on these records smaller and faster than level 1's defaults,
/// which were smaller and faster than level 3 (docs/PERFORMANCE.md).
const ZSTD_LEVEL: i32 = 1;
const ZSTD_HASH_LOG: u32 = 10;
const ZSTD_MIN_MATCH: u32 = 7;

thread_local! {
    /// One compression context per thread, reused from chunk to chunk.
    static COMPRESSOR: std::cell::RefCell<zstd::bulk::Compressor<'static>> =
        std::cell::RefCell::new(chunk_compressor());
}

fn chunk_compressor() -> zstd::bulk::Compressor<'static> {
    use zstd::zstd_safe::CParameter;
    let mut c = zstd::bulk::Compressor::new(ZSTD_LEVEL).expect("zstd makes a context");
    for p in [
        CParameter::HashLog(ZSTD_HASH_LOG),
        CParameter::MinMatch(ZSTD_MIN_MATCH),
    ] {
        c.set_parameter(p).expect("zstd takes these parameters");
    }
    c
}

/// Where a chunk belongs: the associated data of its encryption.
#[derive(Clone, Copy, Debug)]
pub struct ChunkPlace {
    /// The block's game (its code is in the associated data).
    pub game: GameId,
    /// Emission number.
    pub emission: u32,
    /// Block number.
    pub block: u32,
    /// Chunk number within the block.
    pub chunk: u32,
    /// Units in the chunk.
    pub units: u32,
    /// Unit price in cents (part of the nonce).
    pub price_cents: u32,
    /// The game's rules version (part of the nonce).
    pub rules_version: u16,
}

impl ChunkPlace {
    /// The 28 bytes of associated data: magic, format version, game code,
    /// emission, block, chunk number, units (little-endian).
    pub fn associated_data(&self) -> Vec<u8> {
        let mut ad = Vec::with_capacity(28);
        ad.extend_from_slice(&MAGIC);
        ad.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        ad.extend_from_slice(&self.game.code.to_le_bytes());
        for v in [self.emission, self.block, self.chunk, self.units] {
            ad.extend_from_slice(&v.to_le_bytes());
        }
        ad
    }

    /// The 12-byte nonce: chunk number (u32 LE), price in cents (u32 LE),
    /// rules version (u16 LE), format version (u16 LE). The key is the
    /// block's own; the nonce names everything else that shapes a chunk's
    /// plaintext, so even a block number regenerated at another price or
    /// under another model never reuses a (key, nonce) pair.
    pub fn nonce(&self) -> [u8; 12] {
        let mut n = [0u8; 12];
        n[..4].copy_from_slice(&self.chunk.to_le_bytes());
        n[4..8].copy_from_slice(&self.price_cents.to_le_bytes());
        n[8..10].copy_from_slice(&self.rules_version.to_le_bytes());
        n[10..].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        n
    }
}

/// Why a chunk could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenProblem {
    /// The AEAD tag does not match: wrong key, or the ciphertext, its place
    /// or its associated data changed.
    Decrypt,
    /// The plaintext is not a valid zstd frame.
    Decompress(String),
    /// The plaintext holds more than one frame (or bytes after its frame):
    /// a chunk is exactly one zstd frame (docs/FORMAT.md §Chunks).
    NotOneFrame {
        /// Length of the first frame.
        frame: usize,
        /// Length of the whole plaintext.
        total: usize,
    },
    /// The frame decompresses to another size than the chunk's records.
    WrongSize {
        /// Bytes the frame holds (at most `expected` + 1 are decompressed).
        found: usize,
        /// `units` × `record_size`.
        expected: usize,
    },
}

impl std::fmt::Display for OpenProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenProblem::Decrypt => write!(
                f,
                "authenticated decryption fails (ciphertext changed or moved, or another key)"
            ),
            OpenProblem::Decompress(e) => write!(f, "records are not a valid zstd frame ({e})"),
            OpenProblem::NotOneFrame { frame, total } => write!(
                f,
                "records must be exactly one zstd frame, but the first frame is {frame} of {total} bytes"
            ),
            OpenProblem::WrongSize { found, expected } => write!(
                f,
                "the zstd frame holds {found}{} bytes of records, expected {expected}",
                if found > expected { " or more" } else { "" }
            ),
        }
    }
}

/// Compresses and encrypts a chunk's records.
pub fn seal_chunk(key: &[u8; 32], place: &ChunkPlace, records: &[u8]) -> Vec<u8> {
    let mut sealed = COMPRESSOR
        .with(|c| c.borrow_mut().compress(records))
        .expect("zstd compresses any input");
    ChaCha20Poly1305::new(Key::from_slice(key))
        .encrypt_in_place(
            Nonce::from_slice(&place.nonce()),
            &place.associated_data(),
            &mut sealed,
        )
        .expect("ChaCha20-Poly1305 encrypts any chunk below 256 GiB");
    sealed
}

/// Decrypts and decompresses a chunk; `expected_len` bounds the output.
pub fn open_chunk(
    key: &[u8; 32],
    place: &ChunkPlace,
    ciphertext: &[u8],
    expected_len: usize,
) -> Result<Vec<u8>, OpenProblem> {
    let compressed = ChaCha20Poly1305::new(Key::from_slice(key))
        .decrypt(
            Nonce::from_slice(&place.nonce()),
            Payload {
                msg: ciphertext,
                aad: &place.associated_data(),
            },
        )
        .map_err(|_| OpenProblem::Decrypt)?;
    // zstd's one-shot decoder reads concatenated frames as one stream: the
    // format allows exactly one, so the first frame must be all there is.
    let frame = zstd::zstd_safe::find_frame_compressed_size(&compressed).map_err(|code| {
        OpenProblem::Decompress(zstd::zstd_safe::get_error_name(code).to_string())
    })?;
    if frame != compressed.len() {
        return Err(OpenProblem::NotOneFrame {
            frame,
            total: compressed.len(),
        });
    }
    if let Ok(Some(declared)) = zstd::zstd_safe::get_frame_content_size(&compressed) {
        if declared != expected_len as u64 {
            return Err(OpenProblem::WrongSize {
                found: usize::try_from(declared).unwrap_or(usize::MAX),
                expected: expected_len,
            });
        }
    }
    // One byte more than expected, so a frame that is too long is noticed.
    let records = zstd::bulk::decompress(&compressed, expected_len + 1)
        .map_err(|e| OpenProblem::Decompress(e.to_string()))?;
    if records.len() != expected_len {
        return Err(OpenProblem::WrongSize {
            found: records.len(),
            expected: expected_len,
        });
    }
    Ok(records)
}
