//! A sealed block's units against a sheet's exact figures (docs/PAR.md
//! §Cross-checks): every unit re-checked against the rules, the prizes of
//! its records summed, and the return to player and hit frequency played
//! to the end compared with the exact ones, each with its standard error
//! and its z-score; a wrong engine, draw or exact method shows up as a
//! large |z|. A game that also replays a block's units its own way (a
//! game with stops: its stopping strategies) gives its [`UnitTally`] to
//! [`block_figures_with`], from its own PAR code in its folder.

use rayon::prelude::*;
use serde::Serialize;

use super::lot_sheet::TableSheet;
use super::{line, z, Estimate, Exact};
use crate::block::authentic::AuthenticBlock;
use crate::error::Error;
use crate::money::Cents;
use crate::record::PREFIX_SIZE;

/// Sums over units of the prizes in their records: integer sums, so the
/// means are exact up to the final division.
#[derive(Clone, Copy, Debug, Default)]
struct PrizeSums {
    prize: u128,
    prize_squares: u128,
    wins: u64,
}

impl PrizeSums {
    fn merge(mut self, b: PrizeSums) -> PrizeSums {
        self.prize += b.prize;
        self.prize_squares += b.prize_squares;
        self.wins += b.wins;
        self
    }
}

/// What a game gathers from every unit of a block beside the figures
/// played to the end (e.g. the unit replayed under each of its stopping
/// strategies): one tally per chunk of the block, in parallel, then
/// merged.
pub trait UnitTally: Default + Send {
    /// Adds the unit of `payload` (the game's part of its record); `Err`
    /// says why it cannot be replayed.
    fn add(&mut self, payload: &[u8]) -> Result<(), String>;
    /// The tally of both sets of units.
    fn merge(self, other: Self) -> Self;
}

/// No tally: the figures played to the end only.
impl UnitTally for () {
    fn add(&mut self, _payload: &[u8]) -> Result<(), String> {
        Ok(())
    }

    fn merge(self, _other: ()) {}
}

/// A block's units against the sheet.
#[derive(Clone, Debug, Serialize)]
pub struct BlockFigures {
    /// The block file.
    pub path: String,
    /// Its game.
    pub game: &'static str,
    /// Units in the block.
    pub units: u64,
    /// Price of its units in euros.
    pub price: String,
    /// Played to the end: return to player and hit frequency, from the
    /// records' prizes, against the exact figures.
    pub rtp: Estimate,
    /// Share of winning units.
    pub hit_frequency: Estimate,
}

/// The exact figures a block is checked against.
pub enum Expected<'a> {
    /// A fixed-table game's sheet at the block's price.
    Table(&'a TableSheet),
    /// A drawn game's return to player and hit frequency, played to the end.
    Figures {
        /// Return to player.
        rtp: &'a Exact,
        /// Share of winning units.
        hit_frequency: &'a Exact,
    },
}

impl BlockFigures {
    /// The figures as text, appended to `out`.
    pub fn write_text(&self, out: &mut String) {
        line!(
            out,
            "\ncross-check: block {} ({} units at {} €), played to the end",
            self.path,
            self.units,
            self.price
        );
        line!(out, "  RTP            {}", z(&self.rtp));
        line!(out, "  hit frequency  {}", z(&self.hit_frequency));
    }
}

/// Reads every unit of an authenticated block (each re-checked against
/// the rules) and compares its figures with `expected`.
pub fn block_figures(
    block: &AuthenticBlock,
    expected: Expected<'_>,
) -> Result<BlockFigures, Error> {
    block_figures_with::<()>(block, expected).map(|(figures, ())| figures)
}

/// [`block_figures`], and the game's tally `T` of every unit of the block.
pub fn block_figures_with<T: UnitTally>(
    block: &AuthenticBlock,
    expected: Expected<'_>,
) -> Result<(BlockFigures, T), Error> {
    let h = &block.file.header;
    let chunks: Vec<u32> = (0..h.chunk_count).collect();
    let per_chunk = chunks
        .par_iter()
        .map(|&chunk| {
            let mut tally = T::default();
            let mut played = PrizeSums::default();
            block.for_each_checked_unit(chunk, |prefix, record| {
                let prize = u128::from(prefix.prize_cents);
                played.prize += prize;
                played.prize_squares += prize * prize;
                played.wins += u64::from(prize > 0);
                tally.add(&record[PREFIX_SIZE..])
            })?;
            Ok((tally, played))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let (tally, played) = per_chunk
        .into_iter()
        .fold((T::default(), PrizeSums::default()), |(t, p), (t2, p2)| {
            (t.merge(t2), p.merge(p2))
        });
    let units = u64::from(h.unit_count);
    let (exact_rtp, exact_hit) = match expected {
        Expected::Table(sheet) => (&sheet.rtp, &sheet.hit_frequency),
        Expected::Figures { rtp, hit_frequency } => (rtp, hit_frequency),
    };
    let figures = BlockFigures {
        path: block.file.path().display().to_string(),
        game: h.game.slug(),
        units,
        price: Cents::from(h.price_cents).to_string(),
        rtp: Estimate::from_sums(
            units,
            played.prize,
            played.prize_squares,
            h.price_cents.into(),
            exact_rtp,
        ),
        hit_frequency: Estimate::from_sums(
            units,
            played.wins.into(),
            played.wins.into(),
            1,
            exact_hit,
        ),
    };
    Ok((figures, tally))
}
