//! The block format's constants that its lowest layers name: the magic
//! bytes and the format version (docs/FORMAT.md §Header), part of every
//! chunk's associated data and nonce as well as of the header.

/// Magic bytes opening every block file (§Header).
pub const MAGIC: [u8; 8] = *b"TKTBLOCK";
/// The block format version this code writes and reads.
pub const FORMAT_VERSION: u16 = 1;
