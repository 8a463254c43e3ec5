//! One unit against its rows ([`Unit`]): its sale, play and payments
//! checked against its audited outcome (and, played step by step, its
//! sealed record replayed), and what it still owes.

use sha2::{Digest as _, Sha256};

use super::findings::Found;
use super::replay::Replay;
use super::rows::{BlockRows, Paid, Play};
use super::words::{cents, place, stop_words};
use crate::evidence::block::UnitOutcome;
use crate::evidence::BlockAudit;
use crate::game::{Game, LotTable};
use crate::ledger::emission_rows::At;
use crate::money::Cents;
use crate::record::PREFIX_SIZE;
use crate::unit_id::UnitId;

/// What a block's units are checked against.
pub(super) struct Unit<'a> {
    pub(super) game: Game,
    pub(super) audit: &'a BlockAudit,
    pub(super) rows: &'a BlockRows,
    pub(super) table: LotTable,
    /// The share of the block's units that win something.
    pub(super) win_rate: f64,
}

impl Unit<'_> {
    /// The audited outcome of unit `index`.
    fn outcome(&self, index: u32) -> Option<&UnitOutcome> {
        let outcomes = &self.audit.outcomes;
        match outcomes.get(index as usize) {
            Some(o) if o.index == index => Some(o),
            _ => outcomes
                .binary_search_by_key(&index, |o| o.index)
                .ok()
                .map(|i| &outcomes[i]),
        }
    }

    /// Checks unit `index` (sold, played or paid) and adds what it comes to
    /// to `found`; `record` is its sealed record (a game played step by
    /// step).
    pub(super) fn add(&self, index: u32, record: Option<&[u8]>, found: &mut Found) {
        let e = &self.audit.evidence;
        let at = At {
            block: e.block,
            index,
        };
        let Some(outcome) = self.outcome(index) else {
            found
                .payments
                .add(|| format!("{}: not among the audited outcomes", place(at)));
            return;
        };
        let sold = self.rows.sales.get(index as usize).is_some_and(|&n| n > 0);
        let play = self.rows.plays.get(&index).copied();
        let paid: &[Paid] = self.rows.paid.get(&index).map_or(&[], Vec::as_slice);
        let replay = record.map(|r| Replay {
            digest: Sha256::digest(r).into(),
            unit: self
                .game
                .decode(r.get(PREFIX_SIZE..).unwrap_or_default())
                .map_err(|e| e.0),
        });
        if !paid.is_empty() && !sold {
            found
                .paid_unsold
                .add(|| format!("{} paid, never sold", place(at)));
        }
        let voided = self.rows.voided.contains(&index);
        if voided {
            found.voids.add(outcome.prize_cents > 0, self.win_rate);
        }
        if voided && (!paid.is_empty() || play.is_some() || !sold) {
            found.voided.add(|| {
                format!(
                    "{} voided, yet {}",
                    place(at),
                    match (paid.is_empty(), play.is_some()) {
                        (false, _) => "paid",
                        (true, true) => "played",
                        (true, false) => "never sold",
                    }
                )
            });
        }
        if play.is_some() && !sold {
            found
                .played_unsold
                .add(|| format!("{} played, never sold", place(at)));
        }
        if let (Some(play), Some(replay)) = (play, &replay) {
            if let Err(why) = self.play_allowed(play, replay) {
                found.plays.add(|| format!("{}: {why}", place(at)));
            }
        }
        for row in paid {
            if let Err(why) = self.payment(at, outcome, row, replay.as_ref()) {
                found.payments.add(|| format!("{}: {why}", place(at)));
            }
            if replay.is_some() {
                let recorded = play.and_then(Play::pays_at);
                if recorded != Some(row.stop) {
                    found.as_played.add(|| {
                        let paid_at = stop_words(row.stop);
                        match recorded {
                            None => {
                                format!("{} paid ({paid_at}) while its play is not over", place(at))
                            }
                            Some(r) => format!(
                                "{} paid {paid_at}, its play recorded {}",
                                place(at),
                                stop_words(r)
                            ),
                        }
                    });
                }
            }
        }
        if !sold {
            return;
        }
        let price = e.price_cents;
        // What the unit pays as its play was recorded, once over.
        let recorded_at = match (&replay, play.and_then(Play::pays_at), paid.first()) {
            (None, _, Some(_)) => Some(None),
            (None, _, None) => None,
            (Some(_), Some(stop), _) => Some(stop),
            (Some(_), None, Some(row)) => Some(row.stop),
            (Some(_), None, None) => None,
        };
        let prize_as_recorded = |stop: Option<i64>| match (&replay, stop) {
            (Some(r), stop) => r
                .prize(self.game, &self.table, stop)
                .map_or(outcome.prize_cents, |(_, p)| p),
            (None, _) => outcome.prize_cents,
        };
        if let Some(stop) = recorded_at {
            let paid_cents = paid.iter().map(|r| i128::from(r.prize_cents)).sum();
            found
                .over
                .add(price, paid_cents, prize_as_recorded(stop), stop.is_some());
        }
        // A voided sale owes nothing: it was refunded.
        if paid.is_empty() && !voided {
            let owed = match (&replay, recorded_at) {
                (Some(_), Some(stop)) => prize_as_recorded(stop),
                (Some(r), None) => r.most(
                    self.game,
                    &self.table,
                    play.map_or(0, |p| p.rolls),
                    outcome.prize_cents,
                ),
                (None, _) => outcome.prize_cents,
            };
            if owed > 0 {
                found.unclaimed += 1;
                found.liability_cents += u64::from(owed);
            }
        }
    }

    /// Whether the unit allows its play as recorded.
    fn play_allowed(&self, play: Play, replay: &Replay) -> Result<(), String> {
        if play.unknown_end {
            return Err("its play's end is neither a stop nor the end".into());
        }
        let end = replay
            .end_step()
            .ok_or_else(|| "its sealed record has no steps to replay".to_string())?;
        let rolls = play.rolls;
        match play.stopped {
            Some(false) if rolls != i64::from(end) => Err(format!(
                "its play ended by itself after {rolls} steps, its unit ends after {end}"
            )),
            Some(true) => self
                .replay_stop(replay, rolls)
                .map_err(|why| format!("its play stopped after {rolls} steps: {why}")),
            None if rolls < 0 || rolls >= i64::from(end) => Err(format!(
                "its play goes on after {rolls} steps, its unit ends after {end}"
            )),
            _ => Ok(()),
        }
    }

    fn replay_stop(&self, replay: &Replay, rolls: i64) -> Result<(), String> {
        replay.prize(self.game, &self.table, Some(rolls)).map(drop)
    }

    /// Whether payment `row` of the unit at `at` is what it gives.
    fn payment(
        &self,
        at: At,
        outcome: &UnitOutcome,
        row: &Paid,
        replay: Option<&Replay>,
    ) -> Result<(), String> {
        let e = &self.audit.evidence;
        let id = UnitId {
            game: self.game,
            emission: e.emission,
            block: at.block,
            index: at.index,
            check_code: outcome.check_code,
        };
        if row.unit_id.parse::<UnitId>().ok() != Some(id) {
            return Err(format!("paid as {:?}, the unit is {id}", row.unit_id));
        }
        if row.price_cents != i64::from(e.price_cents) {
            return Err(format!(
                "paid at a price of {} €, the block's is {} €",
                cents(row.price_cents),
                Cents::from(e.price_cents)
            ));
        }
        let (lot, prize) = match replay {
            None => {
                if row.stop.is_some() {
                    return Err("paid with a stop, its game has none".into());
                }
                (outcome.lot, outcome.prize_cents)
            }
            Some(replay) => {
                let sealed = hex::encode(replay.digest);
                if row.record != Some(replay.digest) || row.record_sha256 != sealed {
                    return Err(format!(
                        "paid for a record (SHA-256 {}, recorded as {}) that is not the sealed block's ({sealed})",
                        row.record.map_or("none".into(), hex::encode),
                        row.record_sha256
                    ));
                }
                if row.rules_version != Some(i64::from(self.game.rules_version())) {
                    return Err(format!(
                        "played under rules version {:?}, the game's is {}",
                        row.rules_version,
                        self.game.rules_version()
                    ));
                }
                replay
                    .prize(self.game, &self.table, row.stop)
                    .map_err(|why| {
                        format!("its record does not replay {}: {why}", stop_words(row.stop))
                    })?
            }
        };
        if row.lot != i64::from(lot) || row.prize_cents != i64::from(prize) {
            return Err(format!(
                "paid lot {} and {} €, its unit gives lot {lot} and {} € {}",
                row.lot,
                cents(row.prize_cents),
                Cents::from(prize),
                stop_words(row.stop)
            ));
        }
        Ok(())
    }
}
