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
    /// An input that is not a regular file (FIFO, directory, device):
    /// reading it could block forever or never end.
    #[error("{} is {what}, not a regular file; give the path of a file", path.display())]
    NotRegularFile {
        /// The path.
        path: PathBuf,
        /// What it is.
        what: &'static str,
    },
    /// A small input (key, manifest, reveal, record) larger than its cap.
    #[error("{} is larger than {limit} bytes, the most such a file holds (docs/SECURITY.md §Hostile files); is it the right file?", path.display())]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// The cap, bytes.
        limit: u64,
    },
    /// An output file that exists, written without `--force`.
    #[error("{} already exists; refusing to overwrite it (pass --force to replace it, or choose another path)", path.display())]
    OutputExists {
        /// The existing file.
        path: PathBuf,
    },
    /// An output path inside the store's `keys/` folder, which only
    /// `keygen` writes.
    #[error("refusing to write {}: it is inside the store's keys folder {}, which only `issuer keygen` writes (even with --force); choose another path", path.display(), keys.display())]
    InsideKeys {
        /// The output path.
        path: PathBuf,
        /// The keys folder.
        keys: PathBuf,
    },
    /// The store's signing key does not match its public key.
    #[error("signing key {} does not match the store's public key {}: one of them was replaced; restore the store's own key pair", private.display(), public.display())]
    SigningKeyMismatch {
        /// The private key file.
        private: PathBuf,
        /// The public key file.
        public: PathBuf,
    },
    /// An emission begun with another master secret than the store's.
    #[error("emission {emission}: its manifest {} was made with another master secret than {}; restore the master secret it was generated with (nothing was written)", manifest.display(), master.display())]
    MasterSecretMismatch {
        /// The emission.
        emission: u32,
        /// Its manifest.
        manifest: PathBuf,
        /// The store's master secret file.
        master: PathBuf,
    },
    /// A `keys/` folder others may write: they could swap the keys.
    #[error("keys folder {} has permissions {mode:o}: others can replace the keys in it; run `chmod 700 {}`", path.display(), path.display())]
    LooseKeysFolder {
        /// The folder.
        path: PathBuf,
        /// Its mode bits.
        mode: u32,
    },
    /// Another `generate`, `close` or `reveal` is working on this emission.
    #[error("emission {emission} is busy: another generate, close or reveal holds {}; wait for it to finish and run again", lock.display())]
    EmissionBusy {
        /// The emission.
        emission: u32,
        /// The lock file.
        lock: PathBuf,
    },
    /// A read-only command pointed at a store folder that does not exist.
    #[error("no store at {}: check --store (or $ISSUER_STORE); nothing was created", store.display())]
    NoStore {
        /// The store folder.
        store: PathBuf,
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
            | Error::EmissionState { .. }
            | Error::OutputExists { .. }
            | Error::InsideKeys { .. }
            | Error::EmissionBusy { .. } => EXIT_REFUSED,
            _ => EXIT_BAD_INPUT,
        }
    }
}
