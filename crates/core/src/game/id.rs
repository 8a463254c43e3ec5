//! A game's identity as derivation and encryption name it.

/// The facts of a game that name its seeds, keys and chunks (docs/FORMAT.md):
/// its slug, header code and rules version. What `derive` and the chunk
/// cipher take, instead of the whole game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GameId {
    /// The name in derivation labels.
    pub slug: &'static str,
    /// The code in block headers and a chunk's associated data.
    pub code: u16,
    /// The version of the unit model (part of a chunk's nonce).
    pub rules_version: u16,
}
