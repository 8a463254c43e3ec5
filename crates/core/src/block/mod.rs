//! The sealed block file (docs/FORMAT.md): header, chunk index, encrypted
//! chunks, seal. This module holds the byte layout; `build` makes a block's
//! contents, `writer` puts them on disk atomically and `reader` gives random
//! access to what a file holds.

pub mod authentic;
pub mod build;
pub mod reader;
pub mod unit_check;
pub mod writer;

use serde::Serialize;

use crate::game::{Game, LotTable, LotTier};
use crate::merkle::Hash;
use crate::money::Cents;

pub use crate::format::{FORMAT_VERSION, MAGIC};
/// Length of the header before its lot table.
pub const FIXED_HEADER_LEN: usize = 213;
/// Length of one lot-table tier in the header.
pub const TIER_LEN: usize = 9;
/// Length of one chunk index entry.
pub const INDEX_ENTRY_LEN: usize = 80;
/// Length of the seal (an Ed25519 signature).
pub const SEAL_LEN: usize = 64;
/// Units per chunk: a power of two, so chunks are complete Merkle subtrees.
pub const CHUNK_UNITS: u32 = 4096;

pub use crate::error::HeaderProblem;

/// The block header (§Header). Everything a reader needs to find, decrypt
/// and check the rest; the seal signs its bytes as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The game the units belong to.
    pub game: Game,
    /// The game's unit-model version.
    pub rules_version: u16,
    /// Emission number.
    pub emission: u32,
    /// Block number within the emission.
    pub block: u32,
    /// Unit price in cents.
    pub price_cents: u32,
    /// Units in the block.
    pub unit_count: u32,
    /// Bytes per unit record.
    pub record_size: u16,
    /// Game parameters (L'île au trésor: map width, height).
    pub params: [u8; 2],
    /// Units per chunk.
    pub chunk_units: u32,
    /// Number of chunks.
    pub chunk_count: u32,
    /// File offset of the seal (= file length − 64).
    pub seal_offset: u64,
    /// SHA-256 of the block seed.
    pub seed_commitment: Hash,
    /// RFC 9162 root over the plaintext unit records.
    pub merkle_root: Hash,
    /// SHA-256 of the chunk index bytes.
    pub index_sha256: Hash,
    /// Identifier of the records key (derive::records_key_id).
    pub records_key_id: Hash,
    /// The issuer's Ed25519 public key that made the seal.
    pub signer: [u8; 32],
    /// The lot table the block claims to hold.
    pub lot_table: LotTable,
}

fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

fn hash_at(b: &[u8], at: usize) -> Hash {
    let mut h = [0u8; 32];
    h.copy_from_slice(&b[at..at + 32]);
    h
}

impl Header {
    /// Length of this header in bytes, as encoded.
    pub fn encoded_len(&self) -> usize {
        FIXED_HEADER_LEN + TIER_LEN * self.lot_table.tiers.len()
    }

    /// Offset of the chunk index (right after the header).
    pub fn index_offset(&self) -> u64 {
        self.encoded_len() as u64
    }

    /// Length of the chunk index.
    pub fn index_len(&self) -> usize {
        INDEX_ENTRY_LEN * self.chunk_count as usize
    }

    /// Offset of the first chunk.
    pub fn chunks_offset(&self) -> u64 {
        self.index_offset() + self.index_len() as u64
    }

    /// The header bytes (§Header table).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(self.encoded_len());
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        b.extend_from_slice(&(self.encoded_len() as u16).to_le_bytes());
        b.extend_from_slice(&self.game.code().to_le_bytes());
        b.extend_from_slice(&self.rules_version.to_le_bytes());
        for v in [self.emission, self.block, self.price_cents, self.unit_count] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&self.record_size.to_le_bytes());
        b.extend_from_slice(&self.params);
        b.extend_from_slice(&self.chunk_units.to_le_bytes());
        b.extend_from_slice(&self.chunk_count.to_le_bytes());
        b.extend_from_slice(&self.seal_offset.to_le_bytes());
        for h in [
            &self.seed_commitment,
            &self.merkle_root,
            &self.index_sha256,
            &self.records_key_id,
            &self.signer,
        ] {
            b.extend_from_slice(h);
        }
        b.push(self.lot_table.tiers.len() as u8);
        for t in &self.lot_table.tiers {
            b.push(t.code);
            b.extend_from_slice(&t.count.to_le_bytes());
            b.extend_from_slice(&t.amount_cents.to_le_bytes());
        }
        debug_assert_eq!(b.len(), self.encoded_len());
        b
    }

    /// The header length announced by the first 12 bytes, after checking
    /// magic and version (so a short or foreign file is named as such).
    pub fn announced_len(prefix: &[u8]) -> Result<usize, HeaderProblem> {
        if prefix.len() < 12 {
            // Whatever bytes there are must begin the magic, or this is
            // some other file, not a block cut short.
            let n = prefix.len().min(8);
            if prefix[..n] != MAGIC[..n] {
                let mut m = [0u8; 8];
                m[..n].copy_from_slice(&prefix[..n]);
                return Err(HeaderProblem::BadMagic(m));
            }
            return Err(HeaderProblem::Truncated {
                needed: FIXED_HEADER_LEN,
                found: prefix.len(),
            });
        }
        if prefix[..8] != MAGIC {
            let mut m = [0u8; 8];
            m.copy_from_slice(&prefix[..8]);
            return Err(HeaderProblem::BadMagic(m));
        }
        let version = le_u16(prefix, 8);
        if version != FORMAT_VERSION {
            return Err(HeaderProblem::UnsupportedVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        let len = usize::from(le_u16(prefix, 10));
        if len < FIXED_HEADER_LEN {
            return Err(HeaderProblem::Field(format!(
                "header length {len} is below the minimum {FIXED_HEADER_LEN}"
            )));
        }
        Ok(len)
    }

    /// Parses a header from the start of a file (`bytes` may run past it).
    pub fn parse(bytes: &[u8]) -> Result<Header, HeaderProblem> {
        let len = Header::announced_len(bytes)?;
        if bytes.len() < len {
            return Err(HeaderProblem::Truncated {
                needed: len,
                found: bytes.len(),
            });
        }
        let b = &bytes[..len];
        let field = |s: String| HeaderProblem::Field(s);
        let game_code = le_u16(b, 12);
        let game = Game::from_code(game_code)
            .ok_or_else(|| field(format!("unknown game code {game_code}")))?;
        let rules_version = le_u16(b, 14);
        if rules_version != game.rules_version() {
            return Err(field(format!(
                "unsupported {} rules version {rules_version} (this issuer knows version {})",
                game.slug(),
                game.rules_version()
            )));
        }
        let tier_count = usize::from(b[212]);
        if len != FIXED_HEADER_LEN + TIER_LEN * tier_count {
            return Err(field(format!(
                "header length {len} does not match its {tier_count} lot tiers"
            )));
        }
        let tiers = (0..tier_count)
            .map(|i| {
                let at = FIXED_HEADER_LEN + TIER_LEN * i;
                LotTier {
                    code: b[at],
                    count: le_u32(b, at + 1),
                    amount_cents: le_u32(b, at + 5),
                }
            })
            .collect();
        let mut signer = [0u8; 32];
        signer.copy_from_slice(&b[180..212]);
        let header = Header {
            game,
            rules_version,
            emission: le_u32(b, 16),
            block: le_u32(b, 20),
            price_cents: le_u32(b, 24),
            unit_count: le_u32(b, 28),
            record_size: le_u16(b, 32),
            params: [b[34], b[35]],
            chunk_units: le_u32(b, 36),
            chunk_count: le_u32(b, 40),
            seal_offset: le_u64(b, 44),
            seed_commitment: hash_at(b, 52),
            merkle_root: hash_at(b, 84),
            index_sha256: hash_at(b, 116),
            records_key_id: hash_at(b, 148),
            signer,
            lot_table: LotTable {
                price_cents: le_u32(b, 24),
                tiers,
            },
        };
        header.check_shape()?;
        Ok(header)
    }

    /// Checks the fields a reader relies on to find the rest of the file.
    fn check_shape(&self) -> Result<(), HeaderProblem> {
        let field = |s: String| Err(HeaderProblem::Field(s));
        // Sizes are the game's, so a corrupt header can't make a reader
        // allocate an index of arbitrary size.
        // Fewer units make a test-size block, which `verify` names as such.
        if self.unit_count == 0 || self.unit_count > self.game.max_units() {
            return field(format!(
                "unit count {} (a {} block holds 1 to {})",
                self.unit_count,
                self.game.slug(),
                self.game.max_units()
            ));
        }
        if self.chunk_units == 0 || !self.chunk_units.is_power_of_two() {
            return field(format!(
                "chunk size {} is not a power of two",
                self.chunk_units
            ));
        }
        if self.chunk_count != self.unit_count.div_ceil(self.chunk_units) {
            return field(format!(
                "{} chunks cannot hold {} units of {} per chunk",
                self.chunk_count, self.unit_count, self.chunk_units
            ));
        }
        let expected = crate::record::record_size(self.game);
        if usize::from(self.record_size) != expected {
            return field(format!(
                "record size {} (a {} record is {expected} bytes)",
                self.record_size,
                self.game.slug()
            ));
        }
        // Params shape the payload (the map size): other values are another
        // model, not a tampered block, so the header is unreadable.
        if self.params != self.game.params() {
            return field(format!(
                "params {:?} (a {} header has {:?})",
                self.params,
                self.game.slug(),
                self.game.params()
            ));
        }
        if self.seal_offset < self.chunks_offset() {
            return field(format!(
                "seal offset {} lies before the chunks (at {})",
                self.seal_offset,
                self.chunks_offset()
            ));
        }
        Ok(())
    }

    /// Units in chunk `chunk`.
    pub fn units_in_chunk(&self, chunk: u32) -> u32 {
        let first = chunk * self.chunk_units;
        self.chunk_units.min(self.unit_count.saturating_sub(first))
    }
}

/// One entry of the chunk index (§Chunk index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// File offset of the chunk's ciphertext.
    pub offset: u64,
    /// Length of the ciphertext.
    pub length: u32,
    /// Units in the chunk.
    pub units: u32,
    /// RFC 9162 root of the chunk's records (a subtree of the block's tree).
    pub subtree_root: Hash,
    /// SHA-256 of the chunk's ciphertext as stored.
    pub ciphertext_sha256: Hash,
}

impl IndexEntry {
    /// Appends the entry's 80 bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.length.to_le_bytes());
        out.extend_from_slice(&self.units.to_le_bytes());
        out.extend_from_slice(&self.subtree_root);
        out.extend_from_slice(&self.ciphertext_sha256);
    }

    /// Reads an entry from 80 bytes.
    pub fn parse(b: &[u8]) -> IndexEntry {
        IndexEntry {
            offset: le_u64(b, 0),
            length: le_u32(b, 8),
            units: le_u32(b, 12),
            subtree_root: hash_at(b, 16),
            ciphertext_sha256: hash_at(b, 48),
        }
    }

    /// Parses a whole index.
    pub fn parse_all(index: &[u8]) -> Vec<IndexEntry> {
        index
            .chunks_exact(INDEX_ENTRY_LEN)
            .map(IndexEntry::parse)
            .collect()
    }
}

/// What identifies a block file in reports (`generate --json`, `verify`):
/// where it is, what it holds and its commitments.
#[derive(Clone, Debug, Serialize)]
pub struct BlockSummary {
    /// The file.
    pub path: String,
    /// Game slug.
    pub game: String,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Unit price in euros.
    pub price: String,
    /// Units.
    pub units: u32,
    /// The Merkle root in the header, hex.
    pub merkle_root: String,
    /// SHA-256 of the file, hex.
    pub file_sha256: String,
    /// The seed commitment in the header, hex.
    pub seed_commitment: String,
}

impl BlockSummary {
    /// The summary of the file at `path` with header `h` and digest `file_sha256`.
    pub fn new(path: &std::path::Path, h: &Header, file_sha256: &Hash) -> BlockSummary {
        BlockSummary {
            path: path.display().to_string(),
            game: h.game.slug().into(),
            emission: h.emission,
            block: h.block,
            price: Cents::from(h.price_cents).to_string(),
            units: h.unit_count,
            merkle_root: hex::encode(h.merkle_root),
            file_sha256: hex::encode(file_sha256),
            seed_commitment: hex::encode(h.seed_commitment),
        }
    }
}
