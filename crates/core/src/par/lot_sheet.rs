//! A fixed-table game's figures at one price, from its lot table: every
//! figure a ratio of the table's integers.

use num_bigint::BigInt;
use serde::Serialize;

use super::figures::{euros, line, one_in, x, Exact};
use crate::error::Error;
use crate::game::Game;
use crate::money::Cents;

/// One lot of the table.
#[derive(Clone, Debug, Serialize)]
pub struct LotLine {
    /// The lot's code in records.
    pub code: u8,
    /// Its name (`chandelier-3`, …).
    pub name: &'static str,
    /// Its amount in euros.
    pub amount: String,
    /// The amount as a multiple of the stake.
    pub multiple: Exact,
    /// Lots per block.
    pub count: u32,
    /// Probability that a unit wins it.
    pub probability: Exact,
    /// "1 chance sur": 1 / probability.
    pub one_in: Exact,
    /// Its share of the return to player.
    pub rtp_share: Exact,
}

/// The PAR sheet of one price.
#[derive(Clone, Debug, Serialize)]
pub struct TableSheet {
    /// Game slug.
    pub game: &'static str,
    /// Price of a unit in euros.
    pub price: String,
    /// Units of a block.
    pub block_units: u32,
    /// Winning units of a block.
    pub winners: u64,
    /// Sales of a block in euros.
    pub block_sales: String,
    /// Sum of a block's lots in euros.
    pub block_prizes: String,
    /// Return to player: prizes / sales.
    pub rtp: Exact,
    /// Probability that a unit wins something.
    pub hit_frequency: Exact,
    /// 1 / hit frequency.
    pub one_in: Exact,
    /// Expected prize of a unit in euros.
    pub expected_prize: Exact,
    /// The largest lot in euros.
    pub max_lot: String,
    /// The largest lot as a multiple of the stake.
    pub max_multiple: Exact,
    /// Every lot, highest first.
    pub lots: Vec<LotLine>,
}

/// The sheet of `game` (a fixed-table game) at `price_cents`.
pub fn sheet(game: Game, price_cents: u32) -> Result<TableSheet, Error> {
    let table = game.lot_table(price_cents)?;
    let units = game.block_units();
    let price = BigInt::from(price_cents);
    let of_units = |n: u64| Exact::ratio(n, units);
    let lots: Vec<LotLine> = table
        .tiers
        .iter()
        .map(|t| {
            let probability = of_units(u64::from(t.count));
            LotLine {
                code: t.code,
                name: game.lot_name(t.code).unwrap_or("?"),
                amount: Cents::from(t.amount_cents).to_string(),
                multiple: Exact::ratio(t.amount_cents, price.clone()),
                count: t.count,
                one_in: one_in(&probability).expect("every tier has lots"),
                rtp_share: Exact::ratio(
                    u64::from(t.count) * u64::from(t.amount_cents),
                    price.clone() * units,
                ),
                probability,
            }
        })
        .collect();
    let total = table.total_cents();
    let hit_frequency = of_units(table.winners());
    let max_cents = table
        .tiers
        .iter()
        .map(|t| t.amount_cents)
        .max()
        .unwrap_or(0);
    Ok(TableSheet {
        game: game.slug(),
        price: Cents::from(price_cents).to_string(),
        block_units: units,
        winners: table.winners(),
        block_sales: Cents::from(u64::from(price_cents) * u64::from(units)).to_string(),
        block_prizes: Cents::from(total).to_string(),
        rtp: Exact::ratio(total, price.clone() * units),
        one_in: one_in(&hit_frequency).expect("a block has winners"),
        hit_frequency,
        expected_prize: Exact(euros(total) / BigInt::from(units)),
        max_lot: Cents::from(max_cents).to_string(),
        max_multiple: Exact::ratio(max_cents, price),
        lots,
    })
}

impl TableSheet {
    /// The sheet as text, appended to `out`.
    pub fn write_text(&self, out: &mut String) {
        let s = self;
        line!(
            out,
            "PAR sheet: {} at {} € (every block of {} units holds the lot table of article 3)",
            s.game,
            s.price,
            s.block_units
        );
        line!(
            out,
            "  return to player  {}  ({})",
            x(&s.rtp),
            s.rtp.fraction()
        );
        line!(
            out,
            "  hit frequency     {}  (1 in {}; {} winners a block)",
            x(&s.hit_frequency),
            s.one_in.decimal(2),
            s.winners
        );
        line!(
            out,
            "  expected prize    {} € (block: {} € of prizes for {} € of sales)",
            x(&s.expected_prize),
            s.block_prizes,
            s.block_sales
        );
        line!(
            out,
            "  largest lot       {} € = {}× the stake",
            s.max_lot,
            s.max_multiple.decimal(2)
        );
        let mut row = |cells: [&str; 7]| {
            line!(
                out,
                "  {:<16} {:>9} {:>9} {:>10} {:>16} {:>12} {:>16}",
                cells[0],
                cells[1],
                cells[2],
                cells[3],
                cells[4],
                cells[5],
                cells[6]
            )
        };
        row([
            "lot",
            "amount €",
            "× stake",
            "per block",
            "probability",
            "1 in",
            "RTP share",
        ]);
        for l in &s.lots {
            row([
                l.name,
                &l.amount,
                &l.multiple.decimal(2),
                &l.count.to_string(),
                &x(&l.probability),
                &l.one_in.decimal(2),
                &x(&l.rtp_share),
            ]);
        }
        line!(out);
    }
}
