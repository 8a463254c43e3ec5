//! Redeeming (docs/REDEMPTION.md §Redeemer): a unit authenticated, then
//! recorded, alone, in a batch or under an idempotency key; a check, a
//! replay, and what of a unit an answer may show.

use rayon::prelude::*;

use super::asker::Asker;
use super::disclosure::{self, Check, Disclosure};
use super::keyed::KeyedRequest;
use super::redemption::Redemption;
use super::state::Redeemer;
use super::units::Authenticated;
use crate::error::Error;
use crate::ledger::ops::{Done, Op, PlayRow, UnitRef};
use crate::ledger::Committed;
use crate::unit_id::UnitId;

impl Redeemer {
    /// Redeems `id`: authenticates it, then records it; returns once the
    /// redemption is durable. A unit played step by step is paid as the
    /// ledger recorded its play; a `stop` given must be that one.
    pub fn redeem(&self, id: &UnitId, stop: Option<u32>) -> Result<Redemption, Error> {
        self.redeem_keyed(id, stop, None)
    }

    /// [`Redeemer::redeem`] under an idempotency key: the same key again
    /// answers the same redemption (docs/API.md §Idempotency).
    pub fn redeem_keyed(
        &self,
        id: &UnitId,
        stop: Option<u32>,
        key: Option<&str>,
    ) -> Result<Redemption, Error> {
        self.redeem_as(&Asker::Operator, id, stop, key)
    }

    /// [`Redeemer::redeem_keyed`] for `asker`: a platform's own units only.
    pub(super) fn redeem_as(
        &self,
        asker: &Asker,
        id: &UnitId,
        stop: Option<u32>,
        key: Option<&str>,
    ) -> Result<Redemption, Error> {
        let stop_text = stop.map(|s| s.to_string()).unwrap_or_default();
        let key = key
            .map(|k| KeyedRequest::new(asker.lane(), k, &["redeem", &id.to_string(), &stop_text]))
            .transpose()?;
        let unit = self.to_redeem(asker, id, stop)?;
        self.record_keyed(asker, vec![(unit, key)])
            .pop()
            .unwrap_or_else(|| {
                Err(Error::Internal {
                    what: "the ledger writer gave no outcome".into(),
                })
            })
    }

    /// A batch under idempotency key `key`, whose request is `request`
    /// ([`batch_parts`](super::keyed::batch_parts) of its lines as given): unit `i` of `units`
    /// is kept under `KEY#i`. The same key with another batch is refused
    /// whole.
    pub fn redeem_batch_keyed(
        &self,
        units: &[(UnitId, Option<u32>)],
        key: &str,
        request: &str,
    ) -> Result<Vec<Result<Redemption, Error>>, Error> {
        self.redeem_batch_as(&Asker::Operator, units, key, request)
    }

    /// [`Redeemer::redeem_batch_keyed`] for `asker`. The key's earlier
    /// batch is read here to refuse a reuse at once; the ledger checks it
    /// again in each unit's transaction, where it holds.
    pub(super) fn redeem_batch_as(
        &self,
        asker: &Asker,
        units: &[(UnitId, Option<u32>)],
        key: &str,
        request: &str,
    ) -> Result<Vec<Result<Redemption, Error>>, Error> {
        let batch = KeyedRequest::new(asker.lane(), key, &["batch", request])?;
        let earlier = self
            .ledger
            .read(self.busy, |tx| tx.kept_batch(batch.key()))?
            .flatten();
        if earlier.is_some_and(|r| r != batch.request_hex()) {
            return Err(Error::IdempotencyKeyReused {
                key: key.to_string(),
                first: "batch".into(),
            });
        }
        let keys: Vec<_> = (0..units.len())
            .map(|i| Some(batch.unit_of_batch(i)))
            .collect();
        Ok(self.redeem_many_keyed(asker, units, &keys))
    }

    /// Redeems each of `units` independently; those that authenticate are
    /// recorded together (one commit when they fit one batch).
    pub fn redeem_many(&self, units: &[(UnitId, Option<u32>)]) -> Vec<Result<Redemption, Error>> {
        self.redeem_many_keyed(&Asker::Operator, units, &[])
    }

    /// [`Redeemer::redeem_many`] for `asker`, unit `i` under key `keys[i]`
    /// when given.
    pub(super) fn redeem_many_keyed(
        &self,
        asker: &Asker,
        units: &[(UnitId, Option<u32>)],
        keys: &[Option<KeyedRequest>],
    ) -> Vec<Result<Redemption, Error>> {
        let authenticated: Vec<_> = units
            .par_iter()
            .map(|(id, stop)| self.to_redeem(asker, id, *stop))
            .collect();
        let mut outcomes: Vec<Option<Result<Redemption, Error>>> = Vec::with_capacity(units.len());
        let mut ready = Vec::new();
        let mut places = Vec::new();
        for (i, unit) in authenticated.into_iter().enumerate() {
            match unit {
                Ok(unit) => {
                    ready.push((unit, keys.get(i).cloned().flatten()));
                    places.push(i);
                    outcomes.push(None);
                }
                Err(e) => outcomes.push(Some(Err(e))),
            }
        }
        for (i, outcome) in places.into_iter().zip(self.record_keyed(asker, ready)) {
            outcomes[i] = Some(outcome);
        }
        outcomes
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| {
                    Err(Error::Internal {
                        what: "a unit of the batch got no outcome".into(),
                    })
                })
            })
            .collect()
    }

    /// A unit authenticated and played as it is paid (§What an answer
    /// shows): a unit whose play is not over is played to its end whatever
    /// the stop asked, so that the ledger's refusal (`not_sold`,
    /// `play_unfinished`) is the same for every stop and tells nothing of
    /// the rolls to come.
    /// A platform's unit of another lane is refused as unknown first,
    /// before anything of it is read.
    fn to_redeem(
        &self,
        asker: &Asker,
        id: &UnitId,
        asked: Option<u32>,
    ) -> Result<Authenticated, Error> {
        self.vouch(asker, id)?;
        let located = self.units.locate(id)?;
        let stop = match self.disclosure(id)? {
            Disclosure::Whole { stop } => disclosure::paid_stop(id, asked, stop)?,
            Disclosure::Partial { .. } => None,
        };
        located.play(stop)
    }

    /// What redeeming `id` would give, and whether it was redeemed already;
    /// records nothing and creates no ledger. A unit whose play is not over
    /// answers only what its player was shown ([`Check::InPlay`]); once it
    /// is over, what its redemption pays (the recorded play), and a `stop`
    /// given must be the recorded one.
    pub fn check(&self, id: &UnitId, stop: Option<u32>) -> Result<Check, Error> {
        let located = self.units.locate(id)?;
        match self.disclosure(id)? {
            Disclosure::Partial { sold, rolls } => {
                if stop.is_some() {
                    return Err(disclosure::unfinished(id, sold, rolls));
                }
                Ok(Check::InPlay(self.in_play(id, &located, sold, rolls)?))
            }
            Disclosure::Whole { stop: recorded } => {
                let stop = disclosure::paid_stop(id, stop, recorded)?;
                let mut r = located.play(stop)?.redemption;
                // A check creates nothing: no ledger yet means not redeemed yet.
                let earlier =
                    self.ledger
                        .lookup(id.game, id.emission, id.block, id.index, self.busy)?;
                // Its log entry too, once sequenced (`sequenced: false`
                // until then).
                r.ledger_entry = earlier.as_ref().map(Committed::recorded);
                r.already_redeemed_at = earlier.map(|e| e.redeemed_at);
                Ok(Check::Whole(r))
            }
        }
    }

    /// The whole unit `id` played with `stop`, whatever its play: an
    /// operator's or auditor's replay with the keys (`show --reveal-all`),
    /// never a platform's answer. Reads no ledger, records nothing.
    pub fn replay(&self, id: &UnitId, stop: Option<u32>) -> Result<Redemption, Error> {
        Ok(self.units.locate(id)?.play(stop)?.redemption)
    }

    /// What of `id` an answer may show now ([`Disclosure`]): read from the
    /// ledger for a unit played step by step.
    pub fn disclosure(&self, id: &UnitId) -> Result<Disclosure, Error> {
        if !id.game.step_by_step() {
            return Ok(Disclosure::Whole { stop: None });
        }
        let (sold, play) = self.sale_and_play(id)?;
        Ok(Disclosure::of(sold, play.as_ref()))
    }

    /// Whether `id` is sold and its play, from one snapshot of the ledger
    /// (not sold, no play: no ledger yet).
    pub(super) fn sale_and_play(&self, id: &UnitId) -> Result<(bool, Option<PlayRow>), Error> {
        let p = UnitRef::of(id).place();
        let read = self.ledger.read(self.busy, |tx| {
            let play = tx.play(p)?;
            let sold = play.is_some() || tx.sale(p)?.is_some();
            Ok((sold, play))
        })?;
        Ok(read.unwrap_or((false, None)))
    }

    /// Records authenticated units, each at most once; returns when they
    /// are durable. One outcome per unit, in order.
    pub fn record(&self, units: Vec<Authenticated>) -> Vec<Result<Redemption, Error>> {
        self.record_keyed(
            &Asker::Operator,
            units.into_iter().map(|u| (u, None)).collect(),
        )
    }

    /// [`Redeemer::record`] for `asker`, each unit under its key when
    /// given.
    fn record_keyed(
        &self,
        asker: &Asker,
        units: Vec<(Authenticated, Option<KeyedRequest>)>,
    ) -> Vec<Result<Redemption, Error>> {
        let (answers, ops): (Vec<_>, Vec<_>) = units
            .into_iter()
            .map(|(u, key)| (u.redemption, asker.op(key, Op::Redeem(u.entry))))
            .unzip();
        answers
            .into_iter()
            .zip(self.submit(ops))
            .map(|(r, outcome)| match outcome? {
                Done::Redeemed(committed) => Ok(redeemed(r, committed)),
                _ => Err(Error::Internal {
                    what: "the ledger answered a redemption with another operation".into(),
                }),
            })
            .collect()
    }
}

/// A redemption recorded as `committed`.
fn redeemed(mut r: Redemption, committed: Committed) -> Redemption {
    r.redeemed_at = Some(committed.redeemed_at.clone());
    r.ledger_entry = Some(committed);
    r
}
