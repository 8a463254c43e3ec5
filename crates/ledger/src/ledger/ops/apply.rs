//! A batch applied: its operations in order, each under its key and lane,
//! the answers kept under their keys once the batch is done.

use std::collections::HashMap;

use super::batch::Batch;
use super::done::Done;
use super::kept::{kind_of, KeptAnswer, KeptRow};
use super::op::{Keyed, Laned, Op};
use super::request::UnitRef;
use super::tx::LedgerTx;
use crate::error::Error;
use crate::game::Game;
use crate::ledger::log::Place;
use crate::ledger::operator::{Action, OperatorAction};

/// Applies `ops` in order in the caller's transaction `tx`, at time `at`,
/// appending to its log ([`LedgerTx::log_edge`]) or queueing; one outcome
/// per operation, each redemption's with the log's size and root after the
/// batch. `Err`: the transaction failed and must be rolled back (nothing
/// is recorded).
pub fn apply(
    tx: &mut dyn LedgerTx,
    at: &str,
    ops: &[Op],
) -> Result<Vec<Result<Done, Error>>, Error> {
    let mut batch = Batch {
        tx,
        at,
        gates: HashMap::new(),
        cursors: HashMap::new(),
        lane: None,
        batches: HashMap::new(),
    };
    let units: Vec<Place> = ops
        .iter()
        .filter_map(|op| match op.unkeyed() {
            Op::Redeem(e) => Some(UnitRef::of_entry(e).place()),
            Op::Play(o) => Some(o.unit.place()),
            Op::Operator(OperatorAction {
                action: Action::Void,
                game,
                emission,
                block: Some(block),
                index: Some(index),
                ..
            }) => Game::from_slug(game).map(|g| Place {
                game: g.slug(),
                emission: *emission,
                block: *block,
                index: *index,
            }),
            _ => None,
        })
        .collect();
    // A batch's keys `KEY#n` with `KEY` itself: two batches under one key
    // take turns, so the second sees the first's units (and is refused).
    let keys: Vec<&str> = ops
        .iter()
        .filter_map(|op| match op {
            Op::Keyed(k) => Some(k.key.as_str()),
            _ => None,
        })
        .flat_map(|key| [Some(key), batch_key(key)])
        .flatten()
        .collect();
    batch.tx.prefetch(&units, &keys)?;
    let mut outcomes: Vec<Result<Done, Error>> = Vec::with_capacity(ops.len());
    // Keys applied in this batch: the first operation under each, to keep
    // its answer once the batch is done (and to answer a second use).
    let mut keyed: HashMap<&str, usize> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        let outcome = match op {
            Op::Keyed(k) => match keyed.get(k.key.as_str()) {
                Some(&first) => same_key_again(k, ops, &outcomes, first),
                None => {
                    let outcome = batch.keyed(k)?;
                    if outcome.is_ok() {
                        keyed.insert(&k.key, i);
                    }
                    outcome
                }
            },
            op => batch.one(op)?,
        };
        outcomes.push(outcome);
    }
    batch.write_cursors()?;
    if let Some(frontier) = batch.tx.log_edge() {
        let size = frontier.size();
        let root = hex::encode(frontier.root());
        for c in outcomes.iter_mut().flatten() {
            if let Done::Redeemed(c) = c {
                if c.seq.is_some() && c.root.is_none() {
                    c.tree_size = Some(size);
                    c.root = Some(root.clone());
                }
            }
        }
    }
    for (key, i) in keyed {
        let (Op::Keyed(k), Ok(done)) = (&ops[i], &outcomes[i]) else {
            continue;
        };
        if batch.tx.kept(key)?.is_none() {
            let row = KeptRow {
                request: hex::encode(k.request),
                what: k.what.clone(),
                answer: KeptAnswer::of(done),
            };
            batch.tx.keep(key, &row, at)?;
        }
    }
    Ok(outcomes)
}

/// The batch key `KEY` of a batch unit's key `KEY#n`.
fn batch_key(key: &str) -> Option<&str> {
    key.rsplit_once('#').map(|(batch, _)| batch)
}

/// A key used twice in one batch: the second answers what the first did,
/// or is refused when its request differs.
fn same_key_again(
    k: &Keyed,
    ops: &[Op],
    outcomes: &[Result<Done, Error>],
    first: usize,
) -> Result<Done, Error> {
    match (&ops[first], &outcomes[first]) {
        (Op::Keyed(f), Ok(done)) if f.request == k.request => Ok(done.clone()),
        (Op::Keyed(f), _) => Err(Error::IdempotencyKeyReused {
            key: k.client_key().to_string(),
            first: kind_of(&f.what).to_string(),
        }),
        _ => Err(Error::Internal {
            what: "a kept key points at an operation without a key".into(),
        }),
    }
}

impl Batch<'_> {
    /// One operation without a key.
    fn one(&mut self, op: &Op) -> Result<Result<Done, Error>, Error> {
        match op {
            Op::Redeem(e) => self.redeem(e),
            Op::Sell {
                game,
                price_cents,
                blocks,
                vet,
            } => self.sell(*game, *price_cents, blocks, vet),
            Op::MarkSold { unit, unit_id } => self.mark_sold(*unit, unit_id),
            Op::Play(o) => self.play(o),
            Op::EndClaims(s) => self.end_claims(s),
            Op::Operator(a) => self.operator(a),
            Op::Keyed(k) => self.keyed(k),
            Op::Laned(l) => self.laned(l),
            Op::Restore(r) => self.restore(r),
        }
    }

    /// An operation in a platform's lane: a unit of another lane (or of
    /// none, or not sold) refused as unknown, before anything else is read
    /// of it; a sale recorded as the lane's.
    fn laned(&mut self, l: &Laned) -> Result<Result<Done, Error>, Error> {
        if l.own_units_only {
            if let Some((p, id)) = l.op.asked_unit() {
                let own = self
                    .tx
                    .sale(p)?
                    .is_some_and(|s| s.belongs_to(Some(&l.lane)));
                if !own {
                    return Ok(Err(Error::UnknownUnit { id: id.to_string() }));
                }
            }
        }
        let outer = self.lane.replace(l.lane.clone());
        let done = self.one(&l.op);
        self.lane = outer;
        done
    }

    /// An operation under a key: the kept answer when the key was used for
    /// the same request, a refusal when for another, else the operation.
    fn keyed(&mut self, k: &Keyed) -> Result<Result<Done, Error>, Error> {
        let reused = |first: &str| {
            Ok(Err(Error::IdempotencyKeyReused {
                key: k.client_key().to_string(),
                first: first.to_string(),
            }))
        };
        let Some(row) = self.tx.kept(&k.key)? else {
            // A unit of a batch: the batch's key, read in this
            // transaction, must not be another batch's.
            if let Some(batch) = batch_key(&k.key) {
                let first = match self.batches.get(batch) {
                    Some(request) => Some(hex::encode(request)),
                    None => self.tx.kept_batch(batch)?,
                };
                match first {
                    Some(first) if first != hex::encode(k.request) => return reused("batch"),
                    Some(_) => {}
                    None => {
                        self.batches.insert(batch.to_string(), k.request);
                    }
                }
            }
            return self.one(&k.op);
        };
        if row.request != hex::encode(k.request) {
            return reused(row.kind());
        }
        Ok(row.answer.done().ok_or_else(|| Error::Internal {
            what: format!(
                "the answer kept under key {:?} names an unknown game",
                k.key
            ),
        }))
    }
}
