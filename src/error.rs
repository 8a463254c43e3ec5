//! The library's error type: one variant per distinct failure, each message
//! saying what went wrong, where, and what to do. `exit_code` maps each to
//! the documented exit status (README §Exit codes).

use std::path::{Path, PathBuf};

use rust_decimal::Decimal;

use crate::block::HeaderProblem;

/// Exit status: a check failed or the request was refused.
pub const EXIT_REFUSED: i32 = 1;
/// Exit status: bad usage or unreadable input.
pub const EXIT_BAD_INPUT: i32 = 2;

/// Everything that can go wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A block file's header can't be read: not a block, an unknown format
    /// version, or cut short.
    #[error("{}: {problem}", path.display())]
    UnreadableBlock {
        /// The file.
        path: PathBuf,
        /// What is wrong with its header.
        problem: HeaderProblem,
    },
    /// Refusing to overwrite something that exists.
    #[error("{} already exists; refusing to overwrite it", path.display())]
    AlreadyExists {
        /// What exists.
        path: PathBuf,
    },
    /// The store has no keys.
    #[error("no issuer keys in store {}; run `issuer keygen --store {}` first", store.display(), store.display())]
    NoKeys {
        /// The store folder.
        store: PathBuf,
    },
    /// A key file is not what it should be.
    #[error("key file {}: {reason}", path.display())]
    BadKey {
        /// The key file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A records key that does not open this block.
    #[error("{}: {reason}", path.display())]
    WrongRecordsKey {
        /// The block file.
        path: PathBuf,
        /// Which key was given and which is needed.
        reason: String,
    },
    /// The records key is needed and was not available.
    #[error("{what} needs the records key of {block}: run it with the issuer's store, or pass --records-key FILE (from `issuer keys export-records-key`)")]
    NeedRecordsKey {
        /// The operation.
        what: String,
        /// The block.
        block: String,
    },
    /// A game name the tool does not know.
    #[error("unknown game {name:?}; known games: {known}")]
    UnknownGame {
        /// What was given.
        name: String,
        /// The known slugs.
        known: String,
    },
    /// A price the game's regulation does not sell at.
    #[error("{game} is not sold at {price} €; its prices are {allowed} €")]
    UnsupportedPrice {
        /// The game.
        game: &'static str,
        /// The price asked for, as given.
        price: String,
        /// The allowed prices.
        allowed: String,
    },
    /// A unit ID that is not well formed.
    #[error("unit ID {id:?} is malformed: {reason}")]
    MalformedId {
        /// What was given.
        id: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A unit ID whose check code is wrong: mistyped or invented.
    #[error("unit ID {id} is not valid: its check code does not match (mistyped or invented ID); nothing was recorded")]
    CheckCodeMismatch {
        /// The ID.
        id: String,
    },
    /// A unit ID whose index is beyond the block's size.
    #[error("unit ID {id}: index {index} is out of range (a block holds units 0 to {last}); nothing was recorded")]
    IndexOutOfRange {
        /// The ID.
        id: String,
        /// The index.
        index: u32,
        /// The last valid index.
        last: u32,
    },
    /// A unit ID naming an emission the store does not have.
    #[error("unit ID {id}: this store has no emission {emission} of {game} ({}); nothing was recorded", path.display())]
    UnknownEmission {
        /// The ID.
        id: String,
        /// The game's slug.
        game: &'static str,
        /// Emission.
        emission: u32,
        /// Where the emission would be.
        path: PathBuf,
    },
    /// A unit ID naming a block the store does not have.
    #[error("unit ID {id}: no block {block} of emission {emission} in this store ({}); nothing was recorded", path.display())]
    UnknownBlock {
        /// The ID.
        id: String,
        /// Emission.
        emission: u32,
        /// Block.
        block: u32,
        /// Where the block would be.
        path: PathBuf,
    },
    /// A block that fails its checks, so nothing in it is trusted.
    #[error("{}: block refused: {reason}", path.display())]
    BlockRejected {
        /// The block file.
        path: PathBuf,
        /// The first failed check.
        reason: String,
    },
    /// A unit already redeemed.
    #[error("unit {id} was already redeemed at {at} (paid {prize} €); refusing to pay it twice")]
    AlreadyRedeemed {
        /// The ID.
        id: String,
        /// When it was redeemed.
        at: String,
        /// What it paid.
        prize: Decimal,
    },
    /// The ledger database failed.
    #[error("ledger {}: {source}", path.display())]
    Ledger {
        /// The ledger file.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// An emission operation that its state forbids.
    #[error("emission {emission}: {reason}")]
    EmissionState {
        /// The emission.
        emission: u32,
        /// Why it is refused.
        reason: String,
    },
    /// A file of the tool's own (manifest, seeds, key file) that is malformed.
    #[error("{}: {reason}", path.display())]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A block size outside the game's bounds.
    #[error("{game}: a block of {units} units is out of bounds; a block holds 1 to {max} units")]
    BlockUnits {
        /// The game's slug.
        game: &'static str,
        /// The units asked for.
        units: u32,
        /// The most a block of the game holds.
        max: u32,
    },
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The documented exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::CheckCodeMismatch { .. }
            | Error::IndexOutOfRange { .. }
            | Error::UnknownEmission { .. }
            | Error::UnknownBlock { .. }
            | Error::BlockRejected { .. }
            | Error::AlreadyRedeemed { .. }
            | Error::AlreadyExists { .. }
            | Error::EmissionState { .. } => EXIT_REFUSED,
            Error::BlockUnits { .. } => EXIT_BAD_INPUT,
            _ => EXIT_BAD_INPUT,
        }
    }
}
