//! A reveal file (docs/EMISSIONS.md §Reveal): a closed emission's block
//! seeds and records key, published once its claims have ended.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{echo, Error};
use crate::fsutil;
use crate::records_key::{self, RecordsKeyFile};
use crate::shares::Contributions;

pub(crate) const REVEAL_KIND: &str = "ticket-issuer emission reveal";

/// One revealed seed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct RevealedSeed {
    /// Block number.
    pub block: u32,
    /// The block seed, hex.
    pub seed: String,
}

/// A reveal file (docs/EMISSIONS.md §Reveal).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Reveal {
    /// Always "ticket-issuer emission reveal".
    pub kind: String,
    /// Game slug.
    pub game: String,
    /// The emission's number within its game.
    pub emission: u32,
    /// The emission's records key (64 hex digits in the file, checked when
    /// read).
    #[serde(with = "crate::hex_serde::key")]
    pub records_key: [u8; 32],
    /// For an emission made from shares: every party's share and the beacon
    /// round's value, which give every seed (docs/EMISSIONS.md §A seed no
    /// one party controls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_shares: Option<Contributions>,
    /// The seeds.
    pub blocks: Vec<RevealedSeed>,
}

impl Reveal {
    /// Reads a reveal file.
    pub fn read(path: &Path) -> Result<Reveal, Error> {
        let bytes = fsutil::read_small(path, fsutil::REVEAL_LIMIT)?;
        Reveal::parse(path, &bytes)
    }

    /// Parses and checks a reveal file's bytes; `path` names them in messages.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Reveal, Error> {
        let reveal: Reveal = serde_json::from_slice(bytes).map_err(|e| Error::BadFile {
            path: path.to_path_buf(),
            reason: format!("not a reveal file ({e})"),
        })?;
        if reveal.kind != REVEAL_KIND {
            return Err(Error::BadFile {
                path: path.to_path_buf(),
                reason: format!("kind is {:?}, expected {REVEAL_KIND:?}", echo(&reveal.kind)),
            });
        }
        Ok(reveal)
    }

    /// The emission's records key, as a records key file.
    pub fn records_key_file(&self) -> RecordsKeyFile {
        RecordsKeyFile {
            kind: records_key::KIND.into(),
            game: self.game.clone(),
            emission: self.emission,
            block: None,
            key: self.records_key,
        }
    }

    /// The seed of `block`: `NoSuchBlock` if the reveal lists no such
    /// block, `BadFile` (naming `path`, where the reveal was read) if its
    /// seed is malformed.
    pub fn block_seed(&self, block: u32, path: &Path) -> Result<[u8; 32], Error> {
        match self.seed(block) {
            Some(Ok(seed)) => Ok(seed),
            Some(Err(reason)) => Err(Error::BadFile {
                path: path.to_path_buf(),
                reason,
            }),
            None => Err(Error::NoSuchBlock {
                game: self.game.clone(),
                emission: self.emission,
                block,
                blocks: self.blocks.iter().map(|b| b.block).collect(),
            }),
        }
    }

    /// The seed of `block`, if revealed and well formed.
    pub fn seed(&self, block: u32) -> Option<Result<[u8; 32], String>> {
        self.blocks.iter().find(|b| b.block == block).map(|b| {
            hex::decode(&b.seed)
                .ok()
                .and_then(|v| <[u8; 32]>::try_from(v).ok())
                .ok_or_else(|| format!("block {block}'s seed is not 64 hex digits"))
        })
    }
}
