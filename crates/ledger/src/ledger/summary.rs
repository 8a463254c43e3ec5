//! The ledger's summary (`issuer ledger`): per-block figures, the digest
//! over every row, each row replayed against its lot; computed the same way
//! from either database's rows.

use std::path::Path;

use serde::Serialize;
use sha2::{Digest as _, Sha256};
use ticket_issuer_core::game::Game;
use ticket_issuer_core::money::Cents;
use ticket_issuer_core::record::PREFIX_SIZE;

/// Per-block figures of the ledger.
#[derive(Clone, Debug, Serialize)]
pub struct BlockLine {
    /// Game slug.
    pub game: String,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Units redeemed.
    pub units: u64,
    /// Of which winners.
    pub winners: u64,
    /// Amount paid (euros in JSON).
    pub paid: Cents,
    /// True iff the running total equals the sum of the rows' prizes and
    /// every row's prize is its lot's amount at the block's price.
    pub reconciled: bool,
}

/// The ledger's summary (`issuer ledger`).
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The database file.
    pub path: String,
    /// Per block.
    pub blocks: Vec<BlockLine>,
    /// Units redeemed in all.
    pub units: u64,
    /// Amount paid in all (euros in JSON).
    pub paid: Cents,
    /// SHA-256 over every row in key order (docs/REDEMPTION.md §Digest).
    pub digest: String,
    /// SQLite's integrity_check said "ok".
    pub integrity_ok: bool,
    /// Every block reconciles.
    pub reconciled: bool,
}

impl Summary {
    /// The summary of a ledger that does not exist yet: nothing redeemed.
    pub fn empty(path: &Path) -> Summary {
        Summary {
            path: path.display().to_string(),
            blocks: Vec::new(),
            units: 0,
            paid: Cents::ZERO,
            digest: hex::encode(Sha256::digest(b"")),
            integrity_ok: true,
            reconciled: true,
        }
    }
}

/// What each block's units have been through (`issuer status`): sold, play
/// ended, redeemed and paid; queued entries count (they are durable). The
/// same text for every database.
pub(crate) const ACTIVITY: &str = "
SELECT game, emission, block, CAST(SUM(sold) AS BIGINT), CAST(SUM(played) AS BIGINT),
       CAST(SUM(redeemed) AS BIGINT), CAST(SUM(paid) AS BIGINT), CAST(SUM(voided) AS BIGINT)
FROM (
    SELECT game, emission, block, COUNT(*) AS sold, 0 AS played, 0 AS redeemed, 0 AS paid,
           0 AS voided
    FROM sales GROUP BY game, emission, block
    UNION ALL
    SELECT game, emission, block, 0, COUNT(*), 0, 0, 0
    FROM plays WHERE ended IS NOT NULL GROUP BY game, emission, block
    UNION ALL
    SELECT game, emission, block, 0, 0, COUNT(*), SUM(prize_cents), 0
    FROM redemptions GROUP BY game, emission, block
    UNION ALL
    SELECT game, emission, block, 0, 0, 0, 0, COUNT(*)
    FROM operator_actions WHERE action = 'void' GROUP BY game, emission, block
) AS t
GROUP BY game, emission, block ORDER BY game, emission, block";

/// One block's activity in the ledger ([`ACTIVITY`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockActivity {
    /// Game slug.
    pub game: String,
    /// Emission number.
    pub emission: u32,
    /// Block number.
    pub block: u32,
    /// Units sold.
    pub sold: u64,
    /// Plays that ended (Trésors Ensablés).
    pub played: u64,
    /// Units redeemed.
    pub redeemed: u64,
    /// Amount paid, cents.
    pub paid_cents: u64,
    /// Sales voided (refunded, never paid; counted in `sold`).
    pub voided: u64,
}

/// Every redemption in key order, as the summary reads it (the same text
/// for every database).
pub(crate) const SUMMARY_ROWS: &str =
    "SELECT game, emission, block, unit_index, unit_id, lot, prize_cents, record_sha256,
            redeemed_at, price_cents, record, rules_version, stopped_after_rolls
     FROM redemptions ORDER BY game, emission, block, unit_index";

/// One redemption as the summary reads it.
pub(crate) struct SummaryRow {
    pub(crate) game: String,
    pub(crate) emission: u32,
    pub(crate) block: u32,
    pub(crate) index: u32,
    pub(crate) unit_id: String,
    pub(crate) redeemed_at: String,
    pub(crate) row: Row,
}

/// The summary's one pass over every redemption, in key order: the ledger
/// digest, and the blocks with a row that does not replay (its record is
/// not the one its digest names, or playing it with its stop under its
/// rules version gives another lot or prize; a row without a record, from
/// an older ledger, is checked against its lot's amount at its price).
#[derive(Default)]
pub(crate) struct Summing {
    digest: Digest,
    wrong: Vec<(String, u32, u32)>,
}

impl Summing {
    pub(crate) fn add(&mut self, r: SummaryRow) {
        self.digest.add(
            &r.game,
            r.emission,
            r.block,
            r.index,
            &r.unit_id,
            r.row.lot,
            r.row.prize_cents,
            &r.row.record_sha256,
            &r.redeemed_at,
        );
        let replays = Game::from_slug(&r.game).is_some_and(|g| r.row.replays(g));
        let key = (r.game, r.emission, r.block);
        if !replays && !self.wrong.contains(&key) {
            self.wrong.push(key);
        }
    }
}

/// The ledger digest: SHA-256 over every redemption in key order, each as
/// the line `game|emission|block|index|unit_id|lot|prize_cents|record_sha256|redeemed_at\n`.
#[derive(Default)]
pub(crate) struct Digest(Sha256);

impl Digest {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        index: u32,
        unit_id: &str,
        lot: u8,
        prize_cents: u32,
        record_sha256: &str,
        redeemed_at: &str,
    ) {
        self.0.update(
            format!(
                "{game}|{emission}|{block}|{index}|{unit_id}|{lot}|{prize_cents}|{record_sha256}|{redeemed_at}\n"
            )
            .as_bytes(),
        );
    }

    pub(crate) fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

/// One block's figures as the database sums them, with its running totals.
pub(crate) struct BlockFigures {
    pub(crate) game: String,
    pub(crate) emission: u32,
    pub(crate) block: u32,
    pub(crate) units: u64,
    pub(crate) winners: u64,
    pub(crate) paid_cents: u64,
    pub(crate) total_units: Option<u64>,
    pub(crate) total_paid_cents: Option<u64>,
}

impl Summary {
    /// The summary of the ledger `path` from its blocks' figures, the blocks
    /// with a row that does not replay, its digest and integrity check.
    pub(crate) fn of(
        path: &str,
        figures: Vec<BlockFigures>,
        summing: Summing,
        integrity_ok: bool,
    ) -> Summary {
        let Summing { digest, wrong } = summing;
        let wrong_prizes = &wrong;
        let mut blocks = Vec::new();
        let (mut units, mut paid) = (0u64, 0u64);
        for f in figures {
            let reconciled = f.total_units == Some(f.units)
                && f.total_paid_cents == Some(f.paid_cents)
                && !wrong_prizes.contains(&(f.game.clone(), f.emission, f.block));
            units += f.units;
            paid += f.paid_cents;
            blocks.push(BlockLine {
                game: f.game,
                emission: f.emission,
                block: f.block,
                units: f.units,
                winners: f.winners,
                paid: Cents::from(f.paid_cents),
                reconciled,
            });
        }
        let reconciled = blocks.iter().all(|b| b.reconciled);
        Summary {
            path: path.to_string(),
            blocks,
            units,
            paid: Cents::from(paid),
            digest: hex::encode(digest.finish()),
            integrity_ok,
            reconciled,
        }
    }
}

/// The stored facts of one row that its replay is checked against.
pub(crate) struct Row {
    pub(crate) price_cents: u32,
    pub(crate) lot: u8,
    pub(crate) prize_cents: u32,
    pub(crate) record_sha256: String,
    pub(crate) record: Option<Vec<u8>>,
    pub(crate) rules_version: Option<u16>,
    pub(crate) stopped_after_steps: Option<u32>,
}

impl Row {
    /// True when the row's lot and prize are what its unit gives.
    pub(crate) fn replays(&self, game: Game) -> bool {
        let Ok(table) = game.lot_table(self.price_cents) else {
            return false;
        };
        let Some(record) = &self.record else {
            // An older row: only the lot's amount can be checked.
            return table.amount_cents(self.lot) == Some(self.prize_cents);
        };
        let payload = record.get(PREFIX_SIZE..).unwrap_or_default();
        self.rules_version == Some(game.rules_version())
            && hex::encode(Sha256::digest(record)) == self.record_sha256
            && game
                .decode(payload)
                .ok()
                .and_then(|unit| unit.outcome(self.stopped_after_steps).ok())
                .is_some_and(|played| {
                    played.lot == self.lot
                        && game.prize_cents(&played, &table) == Some(self.prize_cents)
                })
    }
}
