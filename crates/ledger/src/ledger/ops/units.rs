//! The operations on units: a redemption, a sale, a unit marked sold, a
//! play step (docs/REDEMPTION.md §Sales and plays).

use super::batch::{borrowed, Batch};
use super::done::{Done, Played, Sold};
use super::request::{ForSale, PlayAction, PlayOrder, UnitRef, Vetter};
use super::rows::{PlayRow, PLAY_ENDED, PLAY_STOPPED};
use crate::error::Error;
use crate::game::Game;
use crate::ledger::log::{self, Place};
use crate::ledger::{Committed, Entry};
use crate::money::Cents;

impl Batch<'_> {
    pub(super) fn redeem(&mut self, e: &Entry) -> Result<Result<Done, Error>, Error> {
        let unit = UnitRef::of_entry(e);
        let p = unit.place();
        if let Err(refused) = self.in_play(unit)? {
            return Ok(Err(refused));
        }
        let already = |(at, prize): (String, u32)| Error::AlreadyRedeemed {
            id: e.unit_id.clone(),
            at,
            prize: Cents::from(prize),
        };
        if let Some(first) = self.tx.redemption(p)? {
            return Ok(Err(already(first)));
        }
        if self.tx.sale(p)?.is_none() {
            return Ok(Err(Error::NotSold {
                id: e.unit_id.clone(),
            }));
        }
        if let Some(at) = self.tx.voided(p)? {
            return Ok(Err(Error::Voided {
                id: e.unit_id.clone(),
                at,
            }));
        }
        if e.game.step_by_step() {
            let play = self.tx.play(p)?.unwrap_or_default();
            if play.ended.is_none() {
                return Ok(Err(Error::PlayUnfinished {
                    id: e.unit_id.clone(),
                    steps: play.steps,
                }));
            }
            if play.stop() != e.stopped_after_steps {
                return Ok(Err(Error::BadStop {
                    id: e.unit_id.clone(),
                    reason: format!(
                        "the ledger's play {} after {}; the unit is paid as played",
                        if play.stop().is_some() {
                            "stopped"
                        } else {
                            "ended by itself"
                        },
                        crate::words::plural(play.steps, "step")
                    ),
                }));
            }
        }
        let at = self.at;
        let logged = self.append(|seq| log::LogEntry::Redemption(e.fields(at)).line(seq));
        if !self.tx.insert_redemption(e, at, borrowed(&logged))? {
            let first = self.tx.redemption(p)?.unwrap_or_default();
            return Ok(Err(already(first)));
        }
        self.push(logged);
        Ok(Ok(Done::Redeemed(Committed::at(logged, at))))
    }

    /// Records the sale of `p`, at the next log position (`None`: queued).
    pub(super) fn record_sale(&mut self, p: Place) -> Result<Option<u64>, Error> {
        let at = self.at;
        let logged = self.append(|seq| {
            log::LogEntry::Sale {
                unit: p,
                sold_at: at,
            }
            .line(seq)
        });
        let lane = self.lane.clone();
        self.tx
            .insert_sale(p, at, lane.as_deref(), borrowed(&logged))?;
        self.push(logged);
        Ok(logged.map(|(seq, _)| seq))
    }

    pub(super) fn sell(
        &mut self,
        game: Game,
        price_cents: u32,
        blocks: &[ForSale],
        vet: &Vetter,
    ) -> Result<Result<Done, Error>, Error> {
        let mut ended = Vec::new();
        let mut withdrawn = Vec::new();
        let mut suspended = Vec::new();
        for b in blocks {
            match self.open(game, b.emission) {
                Ok(()) => {}
                // Named in the answer if nothing else is left to sell.
                Err(Error::ClaimsEnded { emission, .. }) => {
                    if !ended.contains(&emission) {
                        ended.push(emission);
                    }
                    continue;
                }
                // The ledger could not be read: a failure, not a refusal.
                Err(failed) => return Err(failed),
            }
            let gate = self.gate(game, b.emission)?;
            if let Some((level, _)) = gate.withdrawn(b.block) {
                let named = match level {
                    None => format!("emission {}", b.emission),
                    Some(block) => format!("emission {} block {block}", b.emission),
                };
                if !withdrawn.contains(&named) {
                    withdrawn.push(named);
                }
                continue;
            }
            if let Some((level, why)) = gate.suspended(b.block) {
                suspended.push((*b, level, why.clone()));
                continue;
            }
            let slug = game.slug();
            let place = |index| Place {
                game: slug,
                emission: b.emission,
                block: b.block,
                index,
            };
            // Past units sold by `mark-sold`, in one query.
            let cursor = self.cursor(slug, b.emission, b.block)?;
            let next = self
                .tx
                .first_unsold(slug, b.emission, b.block, cursor)?
                .min(b.units);
            if next != cursor {
                self.move_cursor(slug, b.emission, b.block, next);
            }
            if next >= b.units {
                continue;
            }
            let index = next;
            let unit = UnitRef {
                game,
                emission: b.emission,
                block: b.block,
                index,
            };
            // Nothing is recorded for a unit that cannot be handed out; the
            // cursor stays, so the refusal repeats until the block is mended.
            let vetted = match (vet.0)(unit) {
                Ok(vetted) => vetted,
                Err(refused) => return Ok(Err(refused)),
            };
            let seq = self.record_sale(place(index))?;
            let next = self
                .tx
                .first_unsold(slug, b.emission, b.block, index + 1)?
                .min(b.units);
            self.move_cursor(slug, b.emission, b.block, next);
            return Ok(Ok(Done::Sold(Sold {
                unit,
                sold_at: self.at.to_string(),
                seq,
                block_sold_out: next >= b.units,
                vetted: Some(vetted),
            })));
        }
        // Nothing to sell: a suspended block with units left is named
        // (selling resumes with it), else the game is sold out.
        for (b, level, why) in suspended {
            let cursor = self.cursor(game.slug(), b.emission, b.block)?;
            if self
                .tx
                .first_unsold(game.slug(), b.emission, b.block, cursor)?
                < b.units
            {
                return Ok(Err(Error::Suspended {
                    game: game.slug(),
                    emission: b.emission,
                    block: level,
                    at: why.at,
                }));
            }
        }
        Ok(Err(Error::SoldOut {
            game: game.slug(),
            price: Cents::from(price_cents),
            ended,
            withdrawn,
        }))
    }

    pub(super) fn mark_sold(
        &mut self,
        unit: UnitRef,
        unit_id: &str,
    ) -> Result<Result<Done, Error>, Error> {
        if let Err(refused) = self.in_play(unit)? {
            return Ok(Err(refused));
        }
        if let Some((block, why)) = self.gate(unit.game, unit.emission)?.withdrawn(unit.block) {
            return Ok(Err(Error::Withdrawn {
                game: unit.game.slug(),
                emission: unit.emission,
                block,
                at: why.at.clone(),
            }));
        }
        // The block's cursor first: a database whose sales of a block take
        // turns takes its turn here, before reading the unit's sale.
        let slug = unit.game.slug();
        let cursor = self.cursor(slug, unit.emission, unit.block)?;
        if let Some(sale) = self.tx.sale(unit.place())? {
            return Ok(Err(Error::AlreadySold {
                id: unit_id.to_string(),
                at: sale.sold_at,
            }));
        }
        let seq = self.record_sale(unit.place())?;
        // The cursor follows units marked in order (`mark-sold --all`), so
        // the next sale starts past them.
        if cursor == unit.index {
            self.move_cursor(slug, unit.emission, unit.block, unit.index + 1);
        }
        Ok(Ok(Done::Sold(Sold {
            unit,
            sold_at: self.at.to_string(),
            seq,
            block_sold_out: false,
            vetted: None,
        })))
    }

    pub(super) fn play(&mut self, o: &PlayOrder) -> Result<Result<Done, Error>, Error> {
        let p = o.unit.place();
        let id = || o.unit_id.clone();
        // Two steps of one play at once (two nodes) would both read the
        // same play and write over each other.
        self.tx.lock_unit(p)?;
        if self.tx.sale(p)?.is_none() {
            return Ok(Err(Error::NotSold { id: id() }));
        }
        if let Some(at) = self.tx.voided(p)? {
            return Ok(Err(Error::Voided { id: id(), at }));
        }
        let mut row = self.tx.play(p)?.unwrap_or_default();
        let replay = |row: PlayRow| {
            Ok(Ok(Done::Played(Played {
                play: row,
                replayed: true,
                seq: None,
            })))
        };
        let over = |row: &PlayRow| Error::PlayOver {
            id: id(),
            steps: row.steps,
            stopped: row.stop().is_some(),
        };
        match o.action {
            PlayAction::Step(n) if n >= 1 && n <= row.steps => return replay(row),
            PlayAction::Stop if row.ended.as_deref() == Some(PLAY_STOPPED) => return replay(row),
            _ if row.ended.is_some() => return Ok(Err(over(&row))),
            _ => {}
        }
        if let Err(refused) = self.in_play(o.unit)? {
            return Ok(Err(refused));
        }
        match o.action {
            PlayAction::Step(n) if n != row.steps + 1 => {
                return Ok(Err(Error::StepOutOfOrder {
                    id: id(),
                    asked: n,
                    next: row.steps + 1,
                }))
            }
            PlayAction::Step(n) => {
                row.steps = n;
                if n >= o.end_step {
                    row.ended = Some(PLAY_ENDED.into());
                }
            }
            PlayAction::Stop => {
                if o.first_stop.is_none_or(|f| row.steps < f) {
                    return Ok(Err(Error::BadStop {
                        id: id(),
                        reason: o.unit.game.early_stop_refusal(row.steps),
                    }));
                }
                row.ended = Some(PLAY_STOPPED.into());
            }
        }
        let at = self.at;
        let logged = row.ended.as_ref().and_then(|how| {
            self.append(|seq| {
                log::LogEntry::PlayEnd {
                    unit: p,
                    steps: row.steps,
                    how,
                    ended_at: at,
                }
                .line(seq)
            })
        });
        self.tx.put_play(p, &row, at, borrowed(&logged))?;
        self.push(logged);
        Ok(Ok(Done::Played(Played {
            play: row,
            replayed: false,
            seq: logged.map(|(s, _)| s),
        })))
    }
}
