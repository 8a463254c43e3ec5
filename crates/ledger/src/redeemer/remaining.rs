//! Prizes remaining (docs/REDEMPTION.md §Prizes remaining), per emission
//! and block of a game on sale, two ways:
//!
//! - **What players are shown** ([`RevealedPrizes`], `GET /v1/remaining`):
//!   the prizes already revealed (an outcome shown: a unit shown whole at
//!   its sale, a play that ended), and for a fixed-table game its lot
//!   table less those. Nothing in it depends on a unit whose outcome was
//!   not shown, so any platform may read it: a count of the prizes held by
//!   the unsold would fall by the lot of each unit sold, and tell who
//!   bought it whether to stop playing.
//! - **The operator's live view** ([`Remaining`], `issuer remaining`,
//!   `GET /v1/operator/remaining`): the prizes held by the units not yet
//!   sold, or (the top-lots watch, [`TopLots`]) not yet revealed. One
//!   mechanism for every game, by its prize model: a fixed-table game's
//!   units are counted by lot, a drawn game's by the band its prize
//!   played to the end falls in.
//!
//! Every figure is computed from the ledger's rows and the blocks'
//! records, as of a log size (`as_of`): after the reveal an auditor
//! recomputes it from the revealed units and the log up to that size.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::sale::probe;
use super::state::Redeemer;
use crate::emission::Emission;
use crate::error::Error;
use crate::game::{Game, PrizeModel};
use crate::ledger::emission_rows::EmissionRow;
use crate::ledger::ops::{UnitRef, PLAY_STOPPED};
use crate::money::Cents;
use crate::record::RecordPrefix;
use crate::status::Standing;

/// The prize bands of a drawn game, by the prize a unit pays played to
/// the end: `[from, to)` in cents (`to` `None`: no upper bound).
pub const BANDS: [(u32, Option<u32>); 7] = [
    (0, Some(1)),
    (1, Some(100)),
    (100, Some(500)),
    (500, Some(1_000)),
    (1_000, Some(10_000)),
    (10_000, Some(100_000)),
    (100_000, None),
];

/// One class of prize and how many unsold units hold it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq, Eq)]
pub struct PrizeLine {
    /// The lot's name (a fixed-table game), or the band in words (a drawn
    /// game: `"0"`, `"0.01 to 0.99"`, …, `"1000 or more"`).
    pub prize: String,
    /// The lot's amount, euros (a fixed-table game).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<String>,
    /// The band's bounds, euros: from, and to (exclusive; absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The band's upper bound, euros, exclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Units of the block holding it (the lot table's count; a drawn
    /// game: of the whole block).
    pub in_block: u64,
    /// Of those, units not sold yet.
    pub remaining: u64,
}

/// One block.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct BlockRemaining {
    /// Block number.
    pub block: u32,
    /// On sale, suspended or withdrawn (a withdrawn block's unsold units
    /// are never sold: its `unsold` is 0 and its lines' `remaining` too).
    pub standing: Standing,
    /// Units in the block.
    pub units: u64,
    /// Units sold (voided sales included: never sold again).
    pub sold: u64,
    /// Units left to sell.
    pub unsold: u64,
    /// Unsold units withdrawn.
    pub withdrawn: u64,
    /// Per lot or band, highest first.
    pub prizes: Vec<PrizeLine>,
}

/// One emission.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct EmissionRemaining {
    /// Emission number.
    pub emission: u32,
    /// Units left to sell in it.
    pub unsold: u64,
    /// Its blocks at the price asked.
    pub blocks: Vec<BlockRemaining>,
    /// Per lot or band, summed over its blocks.
    pub prizes: Vec<PrizeLine>,
}

/// Prizes remaining of a game at a price (`kind: "remaining"`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Remaining {
    /// Game slug.
    pub game: &'static str,
    /// Unit price, euros.
    pub price: String,
    /// `lots` (a fixed-table game) or `bands` (a drawn game).
    pub counted_by: &'static str,
    /// The log size the figures are of: every sale in the log of this size
    /// is counted, none after (`null` when the ledger kept changing while
    /// read, or on PostgreSQL with sales queued for the sequencer).
    pub as_of: Option<u64>,
    /// Units left to sell, every emission.
    pub unsold: u64,
    /// Per lot or band, every emission.
    pub prizes: Vec<PrizeLine>,
    /// The game's emissions on sale at the price (closed, not revealed,
    /// claims not ended), in order.
    pub emissions: Vec<EmissionRemaining>,
}

impl Remaining {
    /// The figures of `emissions` (the totals summed over them), as of
    /// the log size `as_of`.
    #[must_use]
    pub fn of(
        game: Game,
        price_cents: u32,
        emissions: Vec<EmissionRemaining>,
        as_of: Option<u64>,
    ) -> Remaining {
        Remaining {
            game: game.slug(),
            price: Cents::from(price_cents).to_string(),
            counted_by: counted_by(game),
            as_of,
            unsold: emissions.iter().map(|e| e.unsold).sum(),
            prizes: sum_lines(emissions.iter().map(|e| &e.prizes)),
            emissions,
        }
    }

    /// The figures of several ledgers' emissions as one (a node with
    /// several ledgers): their emissions in order, the totals summed;
    /// `as_of` is `null` (each ledger's log has its own size).
    #[must_use]
    pub fn merged(game: Game, price_cents: u32, parts: Vec<Remaining>) -> Remaining {
        let (emissions, as_of) = merge(parts, |p| p.as_of, |p| p.emissions, |e| e.emission);
        Remaining::of(game, price_cents, emissions, as_of)
    }
}

/// Several ledgers' figures as one list of emissions, in order, and the
/// log size they are of: the one part's, none of several (each ledger's
/// log has its own size).
fn merge<P, E>(
    parts: Vec<P>,
    as_of: impl Fn(&P) -> Option<u64>,
    emissions: impl Fn(P) -> Vec<E>,
    number: impl Fn(&E) -> u32,
) -> (Vec<E>, Option<u64>) {
    let size = match parts.as_slice() {
        [one] => as_of(one),
        _ => None,
    };
    let mut all: Vec<E> = parts.into_iter().flat_map(emissions).collect();
    all.sort_by_key(number);
    (all, size)
}

/// How a game's prizes are counted: by lot or by band.
fn counted_by(game: Game) -> &'static str {
    match game.prize_model() {
        PrizeModel::FixedTable => "lots",
        PrizeModel::Drawn => "bands",
    }
}

/// Whether a game's top lots are left to win (`status --alert-top-lots K`).
#[derive(Clone, Debug, Serialize)]
pub struct TopLots {
    /// Game slug.
    pub game: &'static str,
    /// Unit price, euros.
    pub price: String,
    /// The K highest lots (or bands) the blocks hold, highest first.
    pub top: Vec<String>,
    /// Units whose outcome is not revealed yet that hold one of them.
    pub remaining: u64,
    /// Units left to sell.
    pub unsold: u64,
    /// None of them is left while units still are: players would buy
    /// tickets that can no longer win the top prizes.
    pub gone: bool,
    /// The blocks on sale (emission, block): those a stop suspends.
    #[serde(skip)]
    pub on_sale: Vec<(u32, u32)>,
}

impl Remaining {
    /// The `k` highest lots (or bands) its blocks hold: how many are left.
    #[must_use]
    pub fn top(&self, k: usize) -> TopLots {
        let lines: Vec<&PrizeLine> = self
            .prizes
            .iter()
            .filter(|l| l.in_block > 0)
            .take(k)
            .collect();
        let remaining = lines.iter().map(|l| l.remaining).sum();
        TopLots {
            game: self.game,
            price: self.price.clone(),
            top: lines.iter().map(|l| l.prize.clone()).collect(),
            remaining,
            unsold: self.unsold,
            gone: remaining == 0 && self.unsold > 0,
            on_sale: self
                .emissions
                .iter()
                .flat_map(|e| {
                    e.blocks
                        .iter()
                        .filter(|b| b.standing == Standing::OnSale)
                        .map(|b| (e.emission, b.block))
                })
                .collect(),
        }
    }
}

impl TopLots {
    /// A unit with record prefix `held` holds one of the top lots (or
    /// falls in one of the top bands).
    #[must_use]
    pub fn holds(&self, held: &RecordPrefix) -> bool {
        Game::from_slug(self.game)
            .and_then(|game| class_of(game, held))
            .is_some_and(|class| self.top.contains(&class))
    }
}

/// The line a unit is counted in: its lot's name (a fixed-table game), its
/// band's (a drawn game); `None` for a fixed-table game's losing unit.
fn class_of(game: Game, held: &RecordPrefix) -> Option<String> {
    match game.prize_model() {
        PrizeModel::FixedTable => game.lot_name(held.lot).map(str::to_string),
        PrizeModel::Drawn => BANDS
            .iter()
            .find(|(from, to)| held.prize_cents >= *from && to.is_none_or(|t| held.prize_cents < t))
            .map(|&(from, to)| band_name(from, to)),
    }
}

/// How many reads are tried for a stable `as_of`.
const TRIES: usize = 4;

impl Redeemer {
    /// Prizes remaining in `game`'s unsold units at `price_cents` (the
    /// operator's live view).
    pub fn remaining(&self, game: Game, price_cents: u32) -> Result<Remaining, Error> {
        self.remaining_by(game, price_cents, Taken::Sold)
    }

    /// The figures as of one log size, `taken` telling which units are
    /// counted out.
    fn remaining_by(&self, game: Game, price_cents: u32, taken: Taken) -> Result<Remaining, Error> {
        game.check_price(price_cents)?;
        let (emissions, as_of) = self.as_of(|| self.remaining_once(game, price_cents, taken))?;
        Ok(Remaining::of(game, price_cents, emissions, as_of))
    }

    /// `read`, tried until the log's size is the same before and after
    /// it (at most [`TRIES`] times): its result and that size (`None` if it
    /// never held still).
    fn as_of<T>(&self, read: impl Fn() -> Result<T, Error>) -> Result<(T, Option<u64>), Error> {
        let mut tries = 0;
        loop {
            let before = self.ledger.head()?.map(|h| h.size);
            let figures = read()?;
            let after = self.ledger.head()?.map(|h| h.size);
            tries += 1;
            if before == after {
                return Ok((figures, Some(after.unwrap_or(0))));
            }
            if tries == TRIES {
                return Ok((figures, None));
            }
        }
    }

    /// The top `k` lots (or bands) of every game and price on sale (an
    /// emission closed, not revealed, its claims not ended), counted in
    /// the units whose outcome is not revealed yet: the figures move only
    /// when an outcome is shown.
    pub fn top_lots(&self, k: usize) -> Result<Vec<TopLots>, Error> {
        let mut out = Vec::new();
        for game in Game::all() {
            for &price in game.prices_cents() {
                let remaining = self.remaining_by(game, price, Taken::Revealed)?;
                if !remaining.emissions.is_empty() {
                    out.push(remaining.top(k));
                }
            }
        }
        Ok(out)
    }

    /// Every emission of `game` on sale with its blocks at `price_cents`
    /// and their standing, and what the ledger holds of its units:
    /// `each(emission, rows, blocks)`.
    fn on_sale<T>(
        &self,
        game: Game,
        price_cents: u32,
        mut each: impl FnMut(u32, &UnitRows, Vec<(u32, Standing)>) -> Result<Option<T>, Error>,
    ) -> Result<Vec<T>, Error> {
        let mut out = Vec::new();
        let store = &self.units.store;
        for number in store.emissions(game) {
            if !self.routes_here(game, number) {
                continue;
            }
            let emission = Emission::new(store, game, number);
            let Some(manifest) = emission.load_manifest(&self.units.keys.public_key)? else {
                continue;
            };
            if !manifest.closed || emission.is_revealed() {
                continue;
            }
            let gate = self.ledger.gate(game, number)?.unwrap_or_default();
            if gate.claims_ended.is_some() {
                continue;
            }
            let mut rows = UnitRows::default();
            self.ledger.emission_rows(game, number, &mut |row| {
                match row {
                    EmissionRow::Sale(at) => {
                        rows.sold.insert((at.block, at.index));
                    }
                    EmissionRow::Play(p) if p.ended.is_some() => {
                        let stop = (p.ended.as_deref() == Some(PLAY_STOPPED))
                            .then(|| u32::try_from(p.rolls).unwrap_or(u32::MAX));
                        rows.ended.insert((p.at.block, p.at.index), stop);
                    }
                    _ => {}
                }
                Ok(())
            })?;
            let blocks = manifest
                .blocks
                .iter()
                .filter(|b| Cents::parse_price(&b.price) == Some(price_cents))
                .map(|b| {
                    let standing = match (gate.withdrawn(b.block), gate.suspended(b.block)) {
                        (Some(_), _) => Standing::Withdrawn,
                        (None, Some(_)) => Standing::Suspended,
                        (None, None) => Standing::OnSale,
                    };
                    (b.block, standing)
                })
                .collect::<Vec<_>>();
            if blocks.is_empty() {
                continue;
            }
            out.extend(each(number, &rows, blocks)?);
        }
        Ok(out)
    }

    fn remaining_once(
        &self,
        game: Game,
        price_cents: u32,
        taken: Taken,
    ) -> Result<Vec<EmissionRemaining>, Error> {
        self.on_sale(game, price_cents, |number, rows, on_sale| {
            let out = match taken {
                Taken::Sold => rows.sold.clone(),
                Taken::Revealed => rows.revealed(game).map(|(at, _)| at).collect(),
            };
            let mut blocks = Vec::new();
            for (block, standing) in on_sale {
                let unit = UnitRef {
                    game,
                    emission: number,
                    block,
                    index: 0,
                };
                blocks.push(self.block_remaining(unit, price_cents, standing, &rows.sold, &out)?);
            }
            Ok(Some(EmissionRemaining {
                emission: number,
                unsold: blocks.iter().map(|b| b.unsold).sum(),
                prizes: sum_lines(blocks.iter().map(|b| &b.prizes)),
                blocks,
            }))
        })
    }

    /// One block's figures: every record's prefix read (lot, prize played
    /// to the end) and classed, counted as remaining unless `out`.
    fn block_remaining(
        &self,
        unit: UnitRef,
        price_cents: u32,
        standing: Standing,
        sold: &BTreeSet<(u32, u32)>,
        out: &BTreeSet<(u32, u32)>,
    ) -> Result<BlockRemaining, Error> {
        let id = probe(unit);
        let block = self.units.block(&id, &id.to_string())?;
        let units = block.file.header.unit_count;
        let size = usize::from(block.file.header.record_size);
        let mut classes = Classes::new(unit.game, price_cents, units)?;
        let withdrawn = standing == Standing::Withdrawn;
        for chunk in 0..block.file.index.len() as u32 {
            let opened = block.chunk_records(chunk)?;
            for record in opened.records.chunks_exact(size) {
                let prefix = RecordPrefix::parse(record).ok_or_else(|| Error::BlockRejected {
                    path: block.file.path().to_path_buf(),
                    reason: format!("chunk {chunk}: a record is too short"),
                })?;
                let left = !out.contains(&(unit.block, prefix.index));
                classes.count(prefix.lot, prefix.prize_cents, left && !withdrawn);
            }
        }
        let sold_units = sold.iter().filter(|(b, _)| *b == unit.block).count() as u64;
        let left = u64::from(units).saturating_sub(sold_units);
        Ok(BlockRemaining {
            block: unit.block,
            standing,
            units: u64::from(units),
            sold: sold_units,
            unsold: if withdrawn { 0 } else { left },
            withdrawn: if withdrawn { left } else { 0 },
            prizes: classes.lines,
        })
    }
}

/// The classes a block's units are counted in, by the game's prize model.
struct Classes {
    model: PrizeModel,
    /// A fixed-table game's lot codes, in line order.
    codes: Vec<u8>,
    lines: Vec<PrizeLine>,
}

impl Classes {
    fn new(game: Game, price_cents: u32, units: u32) -> Result<Classes, Error> {
        let model = game.prize_model();
        let euros = |c: u32| Cents::from(c).to_string();
        let (codes, lines) = match model {
            PrizeModel::FixedTable => {
                let table = game.lot_table_for(price_cents, units)?;
                table
                    .tiers
                    .iter()
                    .map(|t| {
                        let line = PrizeLine {
                            prize: game.lot_name(t.code).unwrap_or("?").to_string(),
                            amount: Some(euros(t.amount_cents)),
                            from: None,
                            to: None,
                            in_block: 0,
                            remaining: 0,
                        };
                        (t.code, line)
                    })
                    .unzip()
            }
            PrizeModel::Drawn => (
                Vec::new(),
                BANDS
                    .iter()
                    .rev()
                    .map(|&(from, to)| PrizeLine {
                        prize: band_name(from, to),
                        amount: None,
                        from: Some(euros(from)),
                        to: to.map(euros),
                        in_block: 0,
                        remaining: 0,
                    })
                    .collect(),
            ),
        };
        Ok(Classes {
            model,
            codes,
            lines,
        })
    }

    /// The line of a unit of `lot` paying `prize_cents`: its lot's (a
    /// fixed-table game; none for a losing unit), its band's (a drawn
    /// game).
    fn line(&self, lot: u8, prize_cents: u32) -> Option<usize> {
        match self.model {
            PrizeModel::FixedTable => self.codes.iter().position(|c| *c == lot),
            PrizeModel::Drawn => BANDS
                .iter()
                .rev()
                .position(|(from, to)| prize_cents >= *from && to.is_none_or(|t| prize_cents < t)),
        }
    }

    /// Counts one unit (and as remaining when `left`).
    fn count(&mut self, lot: u8, prize_cents: u32, left: bool) {
        if let Some(line) = self
            .line(lot, prize_cents)
            .and_then(|l| self.lines.get_mut(l))
        {
            line.in_block += 1;
            line.remaining += u64::from(left);
        }
    }
}

/// Which units the operator's figures count out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Taken {
    /// Those sold: the prizes left to sell.
    Sold,
    /// Those whose outcome was shown: the prizes left to reveal.
    Revealed,
}

/// What the ledger holds of an emission's units: those sold, and the
/// plays that ended with their stops (`None`: played to the end).
#[derive(Default)]
struct UnitRows {
    sold: BTreeSet<(u32, u32)>,
    ended: BTreeMap<(u32, u32), Option<u32>>,
}

impl UnitRows {
    /// The units whose outcome has been shown, with the stop it was shown
    /// at: a game revealed whole shows it with the sale; a game played
    /// step by step when its play ends.
    fn revealed(&self, game: Game) -> Box<dyn Iterator<Item = ((u32, u32), Option<u32>)> + '_> {
        if game.step_by_step() {
            Box::new(self.ended.iter().map(|(at, stop)| (*at, *stop)))
        } else {
            Box::new(self.sold.iter().map(|at| (*at, None)))
        }
    }
}

/// One class of prize as players are shown it (`GET /v1/remaining`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq, Eq)]
pub struct RevealedLine {
    /// The lot's name (a fixed-table game), or the band in words (a drawn
    /// game).
    pub prize: String,
    /// The lot's amount, euros (a fixed-table game).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<String>,
    /// The band's lower bound, euros (a drawn game).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The band's upper bound, euros, exclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Units holding it by the lot table (a fixed-table game; a drawn
    /// game has no table: absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_table: Option<u64>,
    /// Outcomes shown so far in this class (a drawn game: by the prize
    /// paid, as played).
    pub revealed: u64,
    /// Not revealed yet: `in_table − revealed` (a fixed-table game).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remaining: Option<u64>,
}

/// One block, as players are shown it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct BlockRevealed {
    /// Block number.
    pub block: u32,
    /// On sale, suspended or withdrawn (a withdrawn block is left out of
    /// its emission's and the game's sums: its units are not for sale).
    pub standing: Standing,
    /// Units in the block.
    pub units: u64,
    /// Units sold.
    pub sold: u64,
    /// Units whose outcome was shown.
    pub revealed: u64,
    /// Per lot or band, highest first.
    pub prizes: Vec<RevealedLine>,
}

/// One emission, as players are shown it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct EmissionRevealed {
    /// Emission number.
    pub emission: u32,
    /// Its blocks at the price asked.
    pub blocks: Vec<BlockRevealed>,
    /// Per lot or band, summed over its blocks not withdrawn.
    pub prizes: Vec<RevealedLine>,
}

/// Prizes of a game at a price as players are shown them (`kind:
/// "remaining"`, `GET /v1/remaining`): public facts and revealed outcomes
/// only.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RevealedPrizes {
    /// Game slug.
    pub game: &'static str,
    /// Unit price, euros.
    pub price: String,
    /// `lots` (a fixed-table game) or `bands` (a drawn game).
    pub counted_by: &'static str,
    /// The log size the figures are of (`null` when the ledger kept
    /// changing while read, or on PostgreSQL with entries queued for the
    /// sequencer).
    pub as_of: Option<u64>,
    /// Units of the blocks on sale or suspended.
    pub units: u64,
    /// Of those, sold.
    pub sold: u64,
    /// Of those, whose outcome was shown.
    pub revealed: u64,
    /// Per lot or band, every emission.
    pub prizes: Vec<RevealedLine>,
    /// The game's emissions on sale at the price (closed, not revealed,
    /// claims not ended), in order.
    pub emissions: Vec<EmissionRevealed>,
}

impl RevealedPrizes {
    /// The figures of `emissions` (totals over their blocks not
    /// withdrawn), as of the log size `as_of`.
    #[must_use]
    pub fn of(
        game: Game,
        price_cents: u32,
        emissions: Vec<EmissionRevealed>,
        as_of: Option<u64>,
    ) -> RevealedPrizes {
        let counted = || {
            emissions
                .iter()
                .flat_map(|e| &e.blocks)
                .filter(|b| b.standing != Standing::Withdrawn)
        };
        RevealedPrizes {
            game: game.slug(),
            price: Cents::from(price_cents).to_string(),
            counted_by: counted_by(game),
            as_of,
            units: counted().map(|b| b.units).sum(),
            sold: counted().map(|b| b.sold).sum(),
            revealed: counted().map(|b| b.revealed).sum(),
            prizes: sum_revealed(emissions.iter().map(|e| &e.prizes)),
            emissions,
        }
    }

    /// Several ledgers' figures as one, as [`Remaining::merged`].
    #[must_use]
    pub fn merged(game: Game, price_cents: u32, parts: Vec<RevealedPrizes>) -> RevealedPrizes {
        let (emissions, as_of) = merge(parts, |p| p.as_of, |p| p.emissions, |e| e.emission);
        RevealedPrizes::of(game, price_cents, emissions, as_of)
    }
}

impl Redeemer {
    /// The prizes of `game` at `price_cents` as players are shown them:
    /// the outcomes revealed so far, and for a fixed-table game its lot
    /// table less those. Only the revealed units' records are read.
    pub fn revealed_prizes(&self, game: Game, price_cents: u32) -> Result<RevealedPrizes, Error> {
        game.check_price(price_cents)?;
        let (emissions, as_of) = self.as_of(|| {
            self.on_sale(game, price_cents, |number, rows, on_sale| {
                let mut blocks = Vec::new();
                for (block, standing) in on_sale {
                    let unit = UnitRef {
                        game,
                        emission: number,
                        block,
                        index: 0,
                    };
                    blocks.push(self.block_revealed(unit, price_cents, standing, rows)?);
                }
                let counted = blocks.iter().filter(|b| b.standing != Standing::Withdrawn);
                Ok(Some(EmissionRevealed {
                    emission: number,
                    prizes: sum_revealed(counted.map(|b| &b.prizes)),
                    blocks,
                }))
            })
        })?;
        Ok(RevealedPrizes::of(game, price_cents, emissions, as_of))
    }

    /// One block's revealed figures: each revealed unit played as it was
    /// shown (its recorded stop) and classed by what it pays.
    fn block_revealed(
        &self,
        unit: UnitRef,
        price_cents: u32,
        standing: Standing,
        rows: &UnitRows,
    ) -> Result<BlockRevealed, Error> {
        let game = unit.game;
        let id = probe(unit);
        let block = self.units.block(&id, &id.to_string())?;
        let h = &block.file.header;
        let units = h.unit_count;
        let size = usize::from(h.record_size);
        let mut classes = Classes::new(game, price_cents, units)?;
        let shown: BTreeMap<u32, Option<u32>> = rows
            .revealed(game)
            .filter(|((b, _), _)| *b == unit.block)
            .map(|((_, index), stop)| (index, stop))
            .collect();
        let reject = |reason: String| Error::BlockRejected {
            path: block.file.path().to_path_buf(),
            reason,
        };
        // Only the chunks that hold a revealed unit are opened.
        let mut chunks: BTreeMap<u32, Vec<(u32, Option<u32>)>> = BTreeMap::new();
        for (&index, &stop) in &shown {
            chunks
                .entry(index / h.chunk_units)
                .or_default()
                .push((index, stop));
        }
        for (chunk, in_chunk) in chunks {
            let opened = block.chunk_records(chunk)?;
            for (index, stop) in in_chunk {
                let at = (index % h.chunk_units) as usize * size;
                let record = opened
                    .records
                    .get(at..at + size)
                    .ok_or_else(|| reject(format!("unit {index}: no record")))?;
                let payload = &record[crate::record::PREFIX_SIZE..];
                let played = game
                    .decode(payload)
                    .map_err(|e| reject(format!("unit {index}: {e}")))?
                    .outcome(stop)
                    .map_err(|e| reject(format!("unit {index}: {e:?}")))?;
                let prize = game.prize_cents(&played, &block.regulation).unwrap_or(0);
                classes.count(played.lot, prize, false);
            }
        }
        let table: Vec<Option<u64>> = match game.prize_model() {
            PrizeModel::FixedTable => game
                .lot_table_for(price_cents, units)?
                .tiers
                .iter()
                .map(|t| Some(u64::from(t.count)))
                .collect(),
            PrizeModel::Drawn => vec![None; classes.lines.len()],
        };
        let prizes = classes
            .lines
            .into_iter()
            .zip(table)
            .map(|(line, in_table)| RevealedLine {
                prize: line.prize,
                amount: line.amount,
                from: line.from,
                to: line.to,
                in_table,
                revealed: line.in_block,
                remaining: in_table.map(|t| t.saturating_sub(line.in_block)),
            })
            .collect();
        Ok(BlockRevealed {
            block: unit.block,
            standing,
            units: u64::from(units),
            sold: rows.sold.iter().filter(|(b, _)| *b == unit.block).count() as u64,
            revealed: shown.len() as u64,
            prizes,
        })
    }
}

/// The revealed lines of several blocks (or emissions) summed, line by
/// line.
fn sum_revealed<'a>(parts: impl Iterator<Item = &'a Vec<RevealedLine>>) -> Vec<RevealedLine> {
    let mut total: Vec<RevealedLine> = Vec::new();
    for lines in parts {
        for line in lines {
            match total.iter_mut().find(|t| t.prize == line.prize) {
                Some(t) => {
                    let add = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a + b);
                    t.in_table = add(t.in_table, line.in_table);
                    t.revealed += line.revealed;
                    t.remaining = add(t.remaining, line.remaining);
                }
                None => total.push(line.clone()),
            }
        }
    }
    total
}

/// A band in words: `"0"`, `"0.01 to 0.99"`, `"1000 or more"`.
fn band_name(from: u32, to: Option<u32>) -> String {
    match to {
        Some(1) if from == 0 => "0".into(),
        Some(to) => format!("{} to {}", Cents::from(from), Cents::from(to - 1)),
        None => format!("{} or more", Cents::from(from)),
    }
}

/// The lines of several blocks (or emissions) summed, line by line.
fn sum_lines<'a>(parts: impl Iterator<Item = &'a Vec<PrizeLine>>) -> Vec<PrizeLine> {
    let mut total: Vec<PrizeLine> = Vec::new();
    for lines in parts {
        for line in lines {
            match total.iter_mut().find(|t| t.prize == line.prize) {
                Some(t) => {
                    t.in_block += line.in_block;
                    t.remaining += line.remaining;
                }
                None => total.push(line.clone()),
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_every_prize_once_and_read_in_euros() {
        for cents in [
            0, 1, 99, 100, 499, 500, 999, 1_000, 9_999, 10_000, 1_001_050,
        ] {
            let hits = BANDS
                .iter()
                .filter(|(from, to)| cents >= *from && to.is_none_or(|t| cents < t))
                .count();
            assert_eq!(hits, 1, "{cents}");
        }
        let names: Vec<String> = BANDS.iter().map(|&(f, t)| band_name(f, t)).collect();
        assert_eq!(
            names,
            [
                "0",
                "0.01 to 0.99",
                "1 to 4.99",
                "5 to 9.99",
                "10 to 99.99",
                "100 to 999.99",
                "1000 or more"
            ]
        );
    }
}
