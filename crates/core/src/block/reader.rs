//! Reading a block file: its header, index and seal, and any one chunk by
//! random access, so a single unit can be authenticated without reading
//! the whole block. Every digest is taken over the bytes as read.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{Header, HeaderProblem, IndexEntry, FIXED_HEADER_LEN, SEAL_LEN};
use crate::cipher::{self, ChunkPlace, OpenProblem};
use crate::error::Error;

/// Where a block's bytes come from: a file on disk, or bytes already in
/// memory (a block received over the wire; the fuzz targets).
enum Source {
    File(File),
    Memory(Vec<u8>),
}

impl Source {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        match self {
            Source::File(file) => file.read_at(buf, offset),
            Source::Memory(bytes) => {
                let start = usize::try_from(offset).map_or(bytes.len(), |o| o.min(bytes.len()));
                let n = buf.len().min(bytes.len() - start);
                buf[..n].copy_from_slice(&bytes[start..start + n]);
                Ok(n)
            }
        }
    }
}

/// An open block file.
pub struct BlockFile {
    path: PathBuf,
    source: Source,
    /// Length of the file as found.
    pub file_len: u64,
    /// The parsed header.
    pub header: Header,
    /// The header bytes as read (what the seal signs).
    pub header_bytes: Vec<u8>,
    /// The index bytes as read (may be short if the file is truncated).
    pub index_bytes: Vec<u8>,
    /// The parsed index entries (complete entries only).
    pub index: Vec<IndexEntry>,
    /// The seal, if the file is long enough to hold one where the header
    /// says it is.
    pub seal: Option<[u8; 64]>,
}

/// Reads up to `len` bytes at `offset`: fewer where the file ends first,
/// so a corrupt length never allocates more than the file holds.
fn read_at(
    source: &Source,
    path: &Path,
    file_len: u64,
    offset: u64,
    len: usize,
) -> Result<Vec<u8>, Error> {
    let available = file_len.saturating_sub(offset);
    let len = len.min(usize::try_from(available).unwrap_or(usize::MAX));
    let mut buf = vec![0u8; len];
    let mut done = 0;
    while done < len {
        match source.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    buf.truncate(done);
    Ok(buf)
}

impl BlockFile {
    /// Opens `path` and reads header, index and seal. Fails only when the
    /// header itself can't be read (not a block, unknown version, cut
    /// short); a short index or missing seal is left for the checks.
    pub fn open(path: &Path) -> Result<BlockFile, Error> {
        let file = crate::fsutil::open_regular(path)?;
        let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        BlockFile::from_source(path, Source::File(file), file_len)
    }

    /// SHA-256 of the whole file, read through the descriptor every check
    /// reads (not the path again: a file put in its place meanwhile is not
    /// what was checked), up to the length found at open.
    pub fn sha256(&self) -> Result<crate::merkle::Hash, Error> {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        let mut offset = 0u64;
        while offset < self.file_len {
            let piece = read_at(&self.source, &self.path, self.file_len, offset, 1 << 20)?;
            if piece.is_empty() {
                break;
            }
            hasher.update(&piece);
            offset += piece.len() as u64;
        }
        Ok(hasher.finalize().into())
    }

    /// A block held in memory, read exactly as [`BlockFile::open`] reads a
    /// file; `path` only names it in messages.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<BlockFile, Error> {
        let len = bytes.len() as u64;
        BlockFile::from_source(path, Source::Memory(bytes), len)
    }

    fn from_source(path: &Path, source: Source, file_len: u64) -> Result<BlockFile, Error> {
        let unreadable = |problem: HeaderProblem| Error::UnreadableBlock {
            path: path.to_path_buf(),
            problem,
        };
        let prefix = read_at(&source, path, file_len, 0, 12)?;
        let header_len = Header::announced_len(&prefix).map_err(unreadable)?;
        let header_bytes = read_at(&source, path, file_len, 0, header_len.max(FIXED_HEADER_LEN))?;
        let header = Header::parse(&header_bytes).map_err(unreadable)?;
        let header_bytes = header_bytes[..header.encoded_len()].to_vec();
        let index_bytes = read_at(
            &source,
            path,
            file_len,
            header.index_offset(),
            header.index_len(),
        )?;
        let index = IndexEntry::parse_all(&index_bytes);
        let seal_bytes = read_at(&source, path, file_len, header.seal_offset, SEAL_LEN)?;
        let seal = <[u8; 64]>::try_from(seal_bytes.as_slice()).ok();
        Ok(BlockFile {
            path: path.to_path_buf(),
            source,
            file_len,
            header,
            header_bytes,
            index_bytes,
            index,
            seal,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// "emission 7 block 3" for messages.
    pub fn describe(&self) -> String {
        format!(
            "{} emission {} block {}",
            self.header.game.slug(),
            self.header.emission,
            self.header.block
        )
    }

    /// True iff the index bytes hash to the header's index digest.
    pub fn index_digest_ok(&self) -> bool {
        let digest: [u8; 32] = Sha256::digest(&self.index_bytes).into();
        self.index_bytes.len() == self.header.index_len() && digest == self.header.index_sha256
    }

    /// Reads chunk `chunk`'s ciphertext as stored (possibly short, if the
    /// file is truncated).
    pub fn read_ciphertext(&self, chunk: u32) -> Result<Vec<u8>, Error> {
        let entry = self.entry(chunk)?;
        read_at(
            &self.source,
            &self.path,
            self.file_len,
            entry.offset,
            entry.length as usize,
        )
    }

    /// Index entry `chunk`.
    pub fn entry(&self, chunk: u32) -> Result<&IndexEntry, Error> {
        self.index
            .get(chunk as usize)
            .ok_or_else(|| Error::UnreadableBlock {
                path: self.path.clone(),
                problem: HeaderProblem::Field(format!("no index entry for chunk {chunk}")),
            })
    }

    /// Where chunk `chunk` belongs (its AEAD associated data).
    pub fn place(&self, chunk: u32) -> ChunkPlace {
        ChunkPlace {
            game: self.header.game.id(),
            emission: self.header.emission,
            block: self.header.block,
            chunk,
            units: self.header.units_in_chunk(chunk),
            price_cents: self.header.price_cents,
            rules_version: self.header.rules_version,
        }
    }

    /// Decrypts and decompresses a chunk read as `ciphertext`.
    pub fn open_chunk(
        &self,
        chunk: u32,
        ciphertext: &[u8],
        records_key: &[u8; 32],
    ) -> Result<Vec<u8>, OpenProblem> {
        let expected =
            self.header.units_in_chunk(chunk) as usize * usize::from(self.header.record_size);
        cipher::open_chunk(records_key, &self.place(chunk), ciphertext, expected)
    }
}
