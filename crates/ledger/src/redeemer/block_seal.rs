//! A block's sealed header, as a client that checks what it shows fetches
//! it (docs/API.md `GET /v1/blocks/{game}/{emission}/{block}`): the header
//! bytes exactly as stored and the seal over them, so the client checks
//! the seal with the issuer's key it pinned and takes the Merkle root from
//! the sealed bytes, not from an answer's word. Public facts: block
//! numbers, headers and seals are not secret.

use serde::Serialize;

use super::state::Redeemer;
use super::units::Missing;
use crate::error::Error;
use crate::game::Game;

/// A block's header and seal, as stored (FORMAT.md §Header, §Seal).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct BlockSeal {
    /// Game slug.
    pub game: &'static str,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// The header bytes exactly as stored (bytes 0 … `header_len` − 1 of
    /// the file), hex: what the seal signs.
    pub header: String,
    /// The 64-byte Ed25519 seal over `header`, hex.
    pub seal: String,
    /// The header's `merkle_root` (offset 84), hex: a convenience, the
    /// client reads it from `header`.
    pub merkle_root: String,
    /// The header's `signer` (offset 180), hex.
    pub signer: String,
}

impl Redeemer {
    /// The sealed header of block `block` of `game`'s emission `emission`,
    /// from the block as this node authenticated it (its seal checked with
    /// the issuer's key: a block that fails is `block_rejected`, never
    /// handed out). Records nothing, reads no ledger.
    pub fn block_seal(&self, game: Game, emission: u32, block: u32) -> Result<BlockSeal, Error> {
        let authentic = self
            .units
            .block_at(game, emission, block, |missing| match missing {
                Missing::Emission(_) => Error::EmissionNotInStore {
                    game: game.slug(),
                    emission,
                },
                Missing::Block(_) => Error::BlockNotInStore {
                    game: game.slug(),
                    emission,
                    block,
                },
            })?;
        let file = &authentic.file;
        let seal = file.seal.ok_or_else(|| Error::BlockRejected {
            path: file.path().to_path_buf(),
            reason: "it has no seal".into(),
        })?;
        Ok(BlockSeal {
            game: game.slug(),
            emission,
            block,
            header: hex::encode(&file.header_bytes),
            seal: hex::encode(seal),
            merkle_root: hex::encode(file.header.merkle_root),
            signer: hex::encode(file.header.signer),
        })
    }
}
