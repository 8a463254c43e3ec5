//! Records keys handed to someone without the master secret: an auditor or
//! a redemption service (`issuer keys export-records-key`). A file holds one
//! emission's key (which opens every block of it) or one block's key.
//!
//! ```json
//! {"kind":"ticket-issuer records key","game":"ile-au-tresor","emission":7,"block":null,"key":"<64 hex>"}
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::block::reader::BlockFile;
use crate::derive;
use crate::error::{echo, Error};
use crate::fsutil;
use crate::game::Game;
use crate::store::Secrets;

/// The `kind` of every records key file.
pub const KIND: &str = "ticket-issuer records key";

/// A records key file's contents. The key is held parsed (a malformed one
/// never gets past `read`), and `Debug` does not print it.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RecordsKeyFile {
    /// Always "ticket-issuer records key".
    pub kind: String,
    /// The game's slug.
    pub game: String,
    /// The emission.
    pub emission: u32,
    /// The block, or null for an emission key.
    pub block: Option<u32>,
    /// The key (64 hex digits in the file).
    #[serde(with = "hex_key")]
    pub key: [u8; 32],
}

impl std::fmt::Debug for RecordsKeyFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordsKeyFile")
            .field("kind", &self.kind)
            .field("game", &self.game)
            .field("emission", &self.emission)
            .field("block", &self.block)
            .field("key", &"<redacted>")
            .finish()
    }
}

pub(crate) use crate::hex_serde::key as hex_key;

impl RecordsKeyFile {
    /// The key file of an emission (`block` None) or of one block.
    pub fn export(
        secrets: &Secrets,
        game: Game,
        emission: u32,
        block: Option<u32>,
    ) -> RecordsKeyFile {
        let key = match block {
            None => secrets.emission_records_key(game, emission),
            Some(b) => secrets.block_records_key(game, emission, b),
        };
        RecordsKeyFile {
            kind: KIND.into(),
            game: game.slug().into(),
            emission,
            block,
            key,
        }
    }

    /// Reads and checks a key file.
    pub fn read(path: &Path) -> Result<RecordsKeyFile, Error> {
        let bytes = fsutil::read_small(path, fsutil::KEY_FILE_LIMIT)?;
        RecordsKeyFile::parse(path, &bytes)
    }

    /// Parses and checks a key file's bytes; `path` names them in messages.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<RecordsKeyFile, Error> {
        let bad = |reason: String| Error::BadKey {
            path: path.to_path_buf(),
            reason,
        };
        let file: RecordsKeyFile = serde_json::from_slice(bytes)
            .map_err(|e| bad(format!("not a records key file ({e})")))?;
        if file.kind != KIND {
            return Err(bad(format!(
                "kind is {:?}, expected {KIND:?}",
                echo(&file.kind)
            )));
        }
        Ok(file)
    }
}

/// Where records keys come from for one run: the issuer's secrets, key
/// files (`--records-key`, any number: each emission's or block's own), or
/// nowhere (structure-only checks).
#[derive(Default, Clone, Copy)]
pub struct KeyAccess<'a> {
    /// The issuer's secrets, when the store has them.
    pub secrets: Option<&'a Secrets>,
    /// Records key files given with --records-key, with where each was read.
    pub files: &'a [(RecordsKeyFile, PathBuf)],
}

impl KeyAccess<'_> {
    /// The records key of `block`, checked against its header's key id: a
    /// key file for its game and emission (and its block, if the file is a
    /// block's), else the one derived from the secrets. `Ok(None)` when no
    /// key is available.
    pub fn records_key(&self, block: &BlockFile) -> Result<Option<[u8; 32]>, Error> {
        let h = &block.header;
        let wrong = |reason: String| Error::WrongRecordsKey {
            path: block.path().to_path_buf(),
            reason,
        };
        let fits = |f: &RecordsKeyFile| {
            f.game == h.game.slug()
                && f.emission == h.emission
                && f.block.is_none_or(|b| b == h.block)
        };
        let (key, source) = match self.files.iter().find(|(f, _)| fits(f)) {
            Some((file, path)) => {
                let key = match file.block {
                    None => derive::block_records_key(&file.key, h.block),
                    Some(_) => file.key,
                };
                (key, format!("the key in {}", path.display()))
            }
            None => match self.secrets {
                Some(secrets) => (
                    secrets.block_records_key(h.game, h.emission, h.block),
                    "the key derived from this store's master secret".to_string(),
                ),
                None if self.files.is_empty() => return Ok(None),
                None => {
                    let given: Vec<String> = self
                        .files
                        .iter()
                        .map(|(f, p)| {
                            let block = f.block.map(|b| format!(" block {b}")).unwrap_or_default();
                            format!(
                                "{} ({} emission {}{block})",
                                p.display(),
                                f.game,
                                f.emission
                            )
                        })
                        .collect();
                    return Err(wrong(format!(
                        "no records key given is for {}: {}",
                        block.describe(),
                        given.join(", ")
                    )));
                }
            },
        };
        if derive::records_key_id(&key) != h.records_key_id {
            return Err(wrong(format!(
                "{source} is not this block's records key (key id {} expected); was the block made by another issuer store?",
                hex::encode(&h.records_key_id[..8])
            )));
        }
        Ok(Some(key))
    }
}

/// The default file name for an exported key.
pub fn default_file_name(game: Game, emission: u32, block: Option<u32>) -> PathBuf {
    match block {
        None => format!("records-key-{}-e{emission}.json", game.slug()),
        Some(b) => format!("records-key-{}-e{emission}-b{b}.json", game.slug()),
    }
    .into()
}
