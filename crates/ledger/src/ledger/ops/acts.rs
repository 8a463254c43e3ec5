//! The operations on emissions and on the log itself: an end of claims,
//! an operator's action (suspend, resume, withdraw, void, closing), an
//! entry put back from the published log.

use super::batch::{borrowed, Batch};
use super::done::Done;
use super::restored::{Restored, RestoredRow};
use crate::error::Error;
use crate::game::Game;
use crate::ledger::claims::EndOfClaims;
use crate::ledger::log::{self, Place};
use crate::ledger::operator::{Action, OperatorAction, Why};
use crate::merkle;
use crate::money::Cents;

impl Batch<'_> {
    /// Puts a published entry back at its place: only at the log's end
    /// (entries come back in order), only with entries placed inline.
    /// Answered as an action done at its entry.
    pub(super) fn restore(&mut self, r: &Restored) -> Result<Result<Done, Error>, Error> {
        let Some(frontier) = self.tx.log_edge() else {
            return Err(Error::Internal {
                what: "a log entry can be put back only where entries are placed as they commit"
                    .into(),
            });
        };
        if frontier.size() != r.seq {
            return Err(Error::Internal {
                what: format!(
                    "entry {} put back where the log has {} entries",
                    r.seq,
                    frontier.size()
                ),
            });
        }
        let leaf = merkle::leaf_hash(r.line.as_bytes());
        let logged = Some((r.seq, &leaf));
        match &r.row {
            RestoredRow::Sale {
                unit,
                sold_at,
                lane,
            } => self
                .tx
                .insert_sale(unit.place(), sold_at, lane.as_deref(), logged)?,
            RestoredRow::Play {
                unit,
                play,
                ended_at,
            } => self.tx.put_play(unit.place(), play, ended_at, logged)?,
            RestoredRow::Redemption { entry, redeemed_at } => {
                self.tx.insert_redemption(entry, redeemed_at, logged)?;
            }
            RestoredRow::EndOfClaims(s) => self.tx.log_claims_end(s, logged)?,
            RestoredRow::Operator(a) => self.tx.insert_action(a, logged)?,
        }
        self.push(Some((r.seq, leaf)));
        Ok(Ok(Done::Acted {
            seq: Some(r.seq),
            at: String::new(),
            already: false,
        }))
    }

    /// Ends the claims of `s`'s emission: appended to the log, unless they
    /// ended before (the first end stands; one stored unlogged is logged
    /// now, as stored). Later operations of the batch see it.
    pub(super) fn end_claims(&mut self, s: &EndOfClaims) -> Result<Result<Done, Error>, Error> {
        let Some(game) = Game::from_slug(&s.game) else {
            return Ok(Err(Error::Internal {
                what: format!("an end of claims names the unknown game {:?}", s.game),
            }));
        };
        let s = match self.tx.claims_row(game.slug(), s.emission)? {
            Some((_, Some(seq))) => return Ok(Ok(Done::ClaimsEnded { seq: Some(seq) })),
            // Queued already: the sequencer logs it.
            Some((_, None)) if self.tx.log_edge().is_none() => {
                return Ok(Ok(Done::ClaimsEnded { seq: None }))
            }
            Some((stored, None)) => stored,
            None => s.clone(),
        };
        let logged = self.append(|seq| log::LogEntry::EndOfClaims(&s).line(seq));
        self.tx.log_claims_end(&s, borrowed(&logged))?;
        self.push(logged);
        self.gate(game, s.emission)?.claims_ended = Some(s.ended_at.clone());
        Ok(Ok(Done::ClaimsEnded {
            seq: logged.map(|(seq, _)| seq),
        }))
    }

    /// An operator's action (docs/REDEMPTION.md §Suspend, withdraw and
    /// void), checked against the emission's standing: appended to the
    /// log, or answered `already` when in force.
    pub(super) fn operator(&mut self, a: &OperatorAction) -> Result<Result<Done, Error>, Error> {
        let Some(game) = Game::from_slug(&a.game) else {
            return Ok(Err(Error::Internal {
                what: format!("an operator action names the unknown game {:?}", a.game),
            }));
        };
        if a.action == Action::Void {
            return self.void(game, a);
        }
        if a.action == Action::Closing {
            return self.closing(game, a);
        }
        // The operations under way on the emission first; its standing
        // read again after (another node may have acted since).
        self.tx.lock_gate(game.slug(), a.emission)?;
        self.gates.remove(&(game.slug(), a.emission));
        if let Err(refused) = self.open(game, a.emission) {
            return Ok(Err(refused));
        }
        let gate = self.gate(game, a.emission)?;
        let level = gate.level(a.block);
        let in_force = match a.action {
            Action::Suspend => level.suspended.as_ref(),
            Action::Withdraw => level.withdrawn.as_ref(),
            Action::Resume | Action::Void | Action::Closing | Action::EarlyEnd => None,
        };
        if let Some(why) = in_force {
            return Ok(Ok(Done::Acted {
                seq: None,
                at: why.at.clone(),
                already: true,
            }));
        }
        if a.action == Action::Resume && level.suspended.is_none() {
            if let Some(why) = &level.withdrawn {
                return Ok(Err(Error::WithdrawalIsPermanent {
                    game: game.slug(),
                    emission: a.emission,
                    block: a.block,
                    at: why.at.clone(),
                }));
            }
            let held = match a.block {
                Some(b) => gate.suspended(b).map(|(_, why)| {
                    format!(
                        "the whole emission is suspended since {}: resume it without --block",
                        why.at
                    )
                }),
                None => gate
                    .blocks
                    .iter()
                    .find_map(|(b, s)| s.suspended.as_ref().map(|why| (b, why)))
                    .map(|(b, why)| {
                        format!(
                            "block {b} is suspended since {}: resume it with --block {b}",
                            why.at
                        )
                    }),
            };
            // Nothing suspended at this level nor holding it: resumed
            // already (a retry, another operator's resume). As a second
            // suspend is, it is answered, recording nothing (issue 39).
            if held.is_none() {
                return Ok(Ok(Done::Acted {
                    seq: None,
                    at: self.at.to_string(),
                    already: true,
                }));
            }
            return Ok(Err(Error::NotSuspended {
                game: game.slug(),
                emission: a.emission,
                block: a.block,
                held,
            }));
        }
        let done = self.act(a)?;
        let why = Why {
            at: self.at.to_string(),
            reason: a.reason.clone(),
        };
        self.gate(game, a.emission)?.apply(a.action, a.block, why);
        Ok(Ok(done))
    }

    /// Publishes an emission's closing statement once its claims ended;
    /// the first stands.
    pub(super) fn closing(
        &mut self,
        game: Game,
        a: &OperatorAction,
    ) -> Result<Result<Done, Error>, Error> {
        self.tx.lock_gate(game.slug(), a.emission)?;
        self.gates.remove(&(game.slug(), a.emission));
        let gate = self.gate(game, a.emission)?;
        if gate.claims_ended.is_none() {
            return Ok(Err(Error::ClaimsNotEnded {
                game: game.slug(),
                emission: a.emission,
                ledger: "this ledger".into(),
            }));
        }
        if let Some(why) = &gate.closing {
            return Ok(Ok(Done::Acted {
                seq: None,
                at: why.at.clone(),
                already: true,
            }));
        }
        let done = self.act(a)?;
        let why = Why {
            at: self.at.to_string(),
            reason: a.reason.clone(),
        };
        self.gate(game, a.emission)?
            .apply(Action::Closing, None, why);
        Ok(Ok(done))
    }

    /// Voids a sale before its play began: the unit's operations take
    /// turns with it, so a void racing a first roll is one or the other.
    pub(super) fn void(
        &mut self,
        game: Game,
        a: &OperatorAction,
    ) -> Result<Result<Done, Error>, Error> {
        let (Some(block), Some(index)) = (a.block, a.index) else {
            return Ok(Err(Error::Internal {
                what: "a void names no unit".into(),
            }));
        };
        let p = Place {
            game: game.slug(),
            emission: a.emission,
            block,
            index,
        };
        let id = || a.unit_id.clone().unwrap_or_else(|| a.scope());
        self.tx.lock_unit(p)?;
        if let Err(refused) = self.open(game, a.emission) {
            return Ok(Err(refused));
        }
        if let Some(at) = self.tx.voided(p)? {
            return Ok(Ok(Done::Acted {
                seq: None,
                at,
                already: true,
            }));
        }
        if let Some((at, prize)) = self.tx.redemption(p)? {
            return Ok(Err(Error::AlreadyRedeemed {
                id: id(),
                at,
                prize: Cents::from(prize),
            }));
        }
        if self.tx.sale(p)?.is_none() {
            return Ok(Err(Error::NotSold { id: id() }));
        }
        if let Some(play) = self.tx.play(p)? {
            if play.steps > 0 || play.ended.is_some() {
                return Ok(Err(Error::PlayStarted {
                    id: id(),
                    steps: play.steps,
                }));
            }
        }
        Ok(Ok(self.act(a)?))
    }

    /// Records `a` now, at the next log position.
    pub(super) fn act(&mut self, a: &OperatorAction) -> Result<Done, Error> {
        let mut acted = a.clone();
        acted.at = self.at.to_string();
        let logged = self.append(|seq| acted.line(seq));
        self.tx.insert_action(&acted, borrowed(&logged))?;
        self.push(logged);
        Ok(Done::Acted {
            seq: logged.map(|(seq, _)| seq),
            at: acted.at,
            already: false,
        })
    }
}
