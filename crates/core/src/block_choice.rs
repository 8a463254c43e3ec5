//! Which blocks `issuer generate` makes ([`BlockChoice`]).

/// Which blocks to generate.
#[derive(Clone, Copy, Debug)]
pub enum BlockChoice {
    /// Exactly this block number, refused past a gap (`block_gap`).
    Number(u32),
    /// Exactly this block number, leaving a gap if it must.
    LeavingGap(u32),
    /// This many more blocks, numbered on from the emission's last.
    Count(u32),
    /// Every block from 1 to this one that the emission lacks; with none
    /// lacking, nothing is made (safe to rerun).
    Until(u32),
}
