//! The emission's rows as read from the ledger ([`Read`]), grouped by
//! block ([`BlockRows`]), and the checks made as they are read: every row
//! names a unit of an audited block, no unit sold, played or paid twice.

use std::collections::HashMap;

use sha2::{Digest as _, Sha256};

use super::findings::Problems;
use super::words::{cents, place};
use crate::evidence::BlockAudit;
use crate::ledger::emission_rows::{At, EmissionRow, PaidRow, PlayRead};
use crate::ledger::ops::{PLAY_ENDED, PLAY_STOPPED};

/// A payment row as kept for its checks (its record reduced to a digest).
pub(super) struct Paid {
    pub(super) unit_id: String,
    pub(super) price_cents: i64,
    pub(super) lot: i64,
    pub(super) prize_cents: i64,
    /// SHA-256 of the row's record, if it has one.
    pub(super) record: Option<[u8; 32]>,
    /// The row's `record_sha256`, as stored.
    pub(super) record_sha256: String,
    pub(super) rules_version: Option<i64>,
    pub(super) stop: Option<i64>,
}

impl Paid {
    fn of(row: PaidRow) -> Paid {
        Paid {
            record: row.record.as_deref().map(|r| Sha256::digest(r).into()),
            unit_id: row.unit_id,
            price_cents: row.price_cents,
            lot: row.lot,
            prize_cents: row.prize_cents,
            record_sha256: row.record_sha256,
            rules_version: row.rules_version,
            stop: row.stopped_after_steps,
        }
    }
}

/// A play row as kept.
#[derive(Clone, Copy)]
pub(super) struct Play {
    pub(super) rolls: i64,
    /// `Some(true)`: stopped; `Some(false)`: ended by itself; `None`: goes
    /// on. An `ended` the ledger never writes reads as going on, and is
    /// found by `plays-allowed`.
    pub(super) stopped: Option<bool>,
    /// `ended` holds something the ledger never writes.
    pub(super) unknown_end: bool,
}

impl Play {
    fn of(row: &PlayRead) -> Play {
        let stopped = match row.ended.as_deref() {
            Some(PLAY_STOPPED) => Some(true),
            Some(PLAY_ENDED) => Some(false),
            _ => None,
        };
        Play {
            rolls: row.rolls,
            stopped,
            unknown_end: row.ended.is_some() && stopped.is_none(),
        }
    }

    /// The stop it pays at once over (`Some(None)`: its end).
    pub(super) fn pays_at(self) -> Option<Option<i64>> {
        match self.stopped {
            Some(true) => Some(Some(self.rolls)),
            Some(false) => Some(None),
            None => None,
        }
    }
}

/// One block's rows.
#[derive(Default)]
pub(super) struct BlockRows {
    /// Sale rows per unit (saturating).
    pub(super) sales: Vec<u8>,
    pub(super) sold: u64,
    pub(super) plays: HashMap<u32, Play>,
    pub(super) ended: u64,
    /// Payment rows per unit, in the order read.
    pub(super) paid: HashMap<u32, Vec<Paid>>,
    pub(super) paid_cents: i128,
    /// Units whose sale was voided.
    pub(super) voided: std::collections::BTreeSet<u32>,
}

/// What was read of the emission, by block.
pub(super) struct Read {
    /// Block number → position in `blocks`, with its unit count.
    by_number: HashMap<u32, (usize, u32)>,
    pub(super) blocks: Vec<BlockRows>,
    /// Rows read: sales, plays, payments, voids.
    pub(super) rows: [u64; 4],
    pub(super) stray: Problems,
    pub(super) sold_twice: Problems,
    pub(super) played_twice: Problems,
    pub(super) paid_twice: Problems,
}

impl Read {
    pub(super) fn new(blocks: &[BlockAudit]) -> Read {
        Read {
            by_number: blocks
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let units = u32::try_from(b.evidence.units).unwrap_or(u32::MAX);
                    (b.evidence.block, (i, units))
                })
                .collect(),
            blocks: blocks
                .iter()
                .map(|b| BlockRows {
                    sales: vec![0; usize::try_from(b.evidence.units).unwrap_or(0)],
                    ..BlockRows::default()
                })
                .collect(),
            rows: [0; 4],
            stray: Problems::default(),
            sold_twice: Problems::default(),
            played_twice: Problems::default(),
            paid_twice: Problems::default(),
        }
    }

    /// The block of `at`, if it is a unit of an audited block; else the
    /// row is a stray one.
    fn block<'a>(
        by_number: &HashMap<u32, (usize, u32)>,
        blocks: &'a mut [BlockRows],
        stray: &mut Problems,
        at: At,
        kind: &str,
    ) -> Option<&'a mut BlockRows> {
        match by_number.get(&at.block) {
            Some(&(i, units)) if at.index < units => Some(&mut blocks[i]),
            _ => {
                stray.add(|| format!("a {kind} of {}", place(at)));
                None
            }
        }
    }

    pub(super) fn add(&mut self, row: EmissionRow) {
        let (at, kind, n) = match &row {
            EmissionRow::Sale(at) => (*at, "sale", 0),
            EmissionRow::Play(play) => (play.at, "play", 1),
            EmissionRow::Redemption(paid) => (paid.at, "payment", 2),
            EmissionRow::Void(void) => (void.at, "void", 3),
        };
        self.rows[n] += 1;
        let Some(b) = Read::block(&self.by_number, &mut self.blocks, &mut self.stray, at, kind)
        else {
            return;
        };
        match row {
            EmissionRow::Sale(_) => {
                let count = &mut b.sales[at.index as usize];
                *count = count.saturating_add(1);
                match *count {
                    1 => b.sold += 1,
                    _ => self.sold_twice.add(|| format!("{} sold again", place(at))),
                }
            }
            EmissionRow::Play(play) => {
                if b.plays.contains_key(&at.index) {
                    self.played_twice
                        .add(|| format!("{} has a second play", place(at)));
                    return;
                }
                let play = Play::of(&play);
                b.ended += u64::from(play.stopped.is_some());
                b.plays.insert(at.index, play);
            }
            EmissionRow::Redemption(row) => {
                b.paid_cents += i128::from(row.prize_cents);
                let rows = b.paid.entry(at.index).or_default();
                if !rows.is_empty() {
                    self.paid_twice.add(|| {
                        format!(
                            "{} paid again ({} € after {} €)",
                            place(at),
                            cents(row.prize_cents),
                            cents(rows[0].prize_cents)
                        )
                    });
                }
                rows.push(Paid::of(row));
            }
            EmissionRow::Void(_) => {
                b.voided.insert(at.index);
            }
        }
    }
}
