//! Selling and playing units (docs/REDEMPTION.md §Sales and plays): the
//! ledger hands out each unit once, in block then index order, and records
//! each step of a play (a game played step by step) before the player sees
//! it.

use serde::Serialize;

use super::asker::Asker;
use super::disclosure::UnitInPlay;
use super::keyed::KeyedRequest;
use super::play_view::{FirstShown, PlayView};
use super::state::Redeemer;
use super::units::{Located, Units};
use crate::derive::CHECK_CODE_LEN;
use crate::emission::Emission;
use crate::error::Error;
use crate::game::{Game, Tape};
use crate::ledger::ops::{
    Done, ForSale, Op, PlayAction, PlayOrder, PlayRow, Sold, UnitRef, Vetted, Vetter, PLAY_STOPPED,
};
use crate::ledger::receipt::Receipt;
use crate::money::Cents;
use crate::record::RecordPrefix;
use crate::unit_id::UnitId;

/// A unit sold: its ID and what the player's screen needs before play.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Sale {
    /// The unit ID.
    pub id: String,
    /// Game slug.
    pub game: &'static str,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Unit index.
    pub index: u32,
    /// Price, euros.
    pub price: String,
    /// When the ledger recorded the sale.
    pub sold_at: String,
    /// The sale is in the ledger's log (`false`: durable and queued for
    /// the sequencer, docs/REDEMPTION.md §Sequencing).
    pub sequenced: bool,
    /// The sale's entry in the ledger's log, once sequenced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_entry: Option<u64>,
    /// This sale took the block's last unsold unit.
    pub block_sold_out: bool,
    /// When asked for: the sale's receipt against the published
    /// checkpoint (docs/REDEMPTION.md §Receipts), `null` while the entry
    /// is not under it; absent when not asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Option<Receipt>>,
    /// What the player's screen shows: a whole L'île au trésor unit (map,
    /// chests, throws); a Trésors Ensablés board only.
    pub unit: serde_json::Value,
    /// The outcome this sale shows for the first time (a game shown whole
    /// at its sale, a sale not answered again from its key): never
    /// answered; the service's top-lots watch reads it.
    #[serde(skip)]
    pub first_shown: Option<FirstShown>,
}

/// What `mark-sold` did.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Marked {
    /// Units recorded as sold now.
    pub marked: u64,
    /// Units that were sold already (left as they were).
    pub already_sold: u64,
}

impl Redeemer {
    /// The blocks of `game` at `price_cents` on sale, in sale order: those
    /// of its closed emissions (commitments published), not revealed, in
    /// emission then block order (of emission `only`, when given). The
    /// ledger skips emissions whose claims ended.
    fn blocks_for_sale(
        &self,
        game: Game,
        price_cents: u32,
        only: Option<u32>,
    ) -> Result<Vec<ForSale>, Error> {
        let mut blocks = Vec::new();
        let emissions = self.units.store.emissions(game);
        for number in emissions
            .into_iter()
            .filter(|n| only.is_none_or(|o| o == *n) && self.routes_here(game, *n))
        {
            let emission = Emission::new(&self.units.store, game, number);
            let Some(manifest) = emission.load_manifest(&self.units.keys.public_key)? else {
                continue;
            };
            if !manifest.closed || emission.is_revealed() {
                continue;
            }
            blocks.extend(
                manifest
                    .blocks
                    .iter()
                    .filter(|b| Cents::parse_price(&b.price) == Some(price_cents))
                    .map(|b| ForSale {
                        emission: number,
                        block: b.block,
                        units: b.units,
                    }),
            );
        }
        Ok(blocks)
    }

    /// Sells the next unsold unit of `game` at `price_cents`; returns once
    /// the sale is durable. The unit is authenticated before its sale is
    /// recorded: a sale that fails records nothing.
    pub fn sell(&self, game: Game, price_cents: u32) -> Result<Sale, Error> {
        self.sell_keyed(game, price_cents, None)
    }

    /// [`Redeemer::sell`] under an idempotency key: the same key again
    /// answers the same sale (docs/API.md §Idempotency).
    pub fn sell_keyed(
        &self,
        game: Game,
        price_cents: u32,
        key: Option<&str>,
    ) -> Result<Sale, Error> {
        self.sell_as(&Asker::Operator, game, price_cents, key, None)
    }

    /// [`Redeemer::sell`] from emission `emission` only (`issuer demo`
    /// sells from the emission it has just made, older ones
    /// notwithstanding); `sold_out` when it has nothing left.
    pub fn sell_from(&self, game: Game, price_cents: u32, emission: u32) -> Result<Sale, Error> {
        self.sell_as(&Asker::Operator, game, price_cents, None, Some(emission))
    }

    /// A sale for `asker`, recorded in its lane (of emission `only`, when
    /// given).
    pub(super) fn sell_as(
        &self,
        asker: &Asker,
        game: Game,
        price_cents: u32,
        key: Option<&str>,
        only: Option<u32>,
    ) -> Result<Sale, Error> {
        game.check_price(price_cents)?;
        let key = key
            .map(|k| {
                KeyedRequest::new(
                    asker.lane(),
                    k,
                    &["sale", game.slug(), &price_cents.to_string()],
                )
            })
            .transpose()?;
        let blocks = self.blocks_for_sale(game, price_cents, only)?;
        let units = std::sync::Arc::clone(&self.units);
        let vet = Vetter(std::sync::Arc::new(move |unit| {
            units.sale_view(unit).map(|(id, shown, prefix)| Vetted {
                id: id.to_string(),
                shown,
                prefix,
            })
        }));
        let op = Op::Sell {
            game,
            price_cents,
            blocks,
            vet,
        };
        match self.apply_one(asker.op(key, op))? {
            Done::Sold(sold) => self.sale_answer(&sold, price_cents),
            _ => Err(self.wrong_answer()),
        }
    }

    /// The sale recorded under idempotency key `key`, answered as when it
    /// was made.
    pub fn sale_under_key(&self, key: &str) -> Result<Sale, Error> {
        self.sale_under_key_as(&Asker::Operator, key)
    }

    /// The sale `asker` made under its key `key` (another lane's key is
    /// unknown to it).
    pub(super) fn sale_under_key_as(&self, asker: &Asker, key: &str) -> Result<Sale, Error> {
        crate::ledger::ops::check_key(key)?;
        let no_sale = || Error::NoSaleUnderKey {
            key: key.to_string(),
        };
        let stored = crate::ledger::ops::scoped_key(asker.lane(), key);
        let row = self
            .ledger
            .read(self.busy, |tx| tx.kept(&stored))?
            .flatten()
            .ok_or_else(no_sale)?;
        match row.answer.done() {
            Some(Done::Sold(sold)) if row.kind() == "sale" => {
                let u = sold.unit;
                let price = Emission::new(&self.units.store, u.game, u.emission)
                    .load_manifest(&self.units.keys.public_key)?
                    .and_then(|m| {
                        let b = m.blocks.iter().find(|b| b.block == u.block)?;
                        Cents::parse_price(&b.price)
                    })
                    .ok_or_else(no_sale)?;
                self.sale_answer(&sold, price)
            }
            _ => Err(no_sale()),
        }
    }

    /// What a sale answers: the unit's ID and what the player is shown
    /// before play.
    fn sale_answer(&self, sold: &Sold, price_cents: u32) -> Result<Sale, Error> {
        let unit = sold.unit;
        // Vetted in the sale's transaction; a sale answered again from its
        // key is authenticated now (and shows nothing for the first time).
        let (id, view, first) = match &sold.vetted {
            Some(v) => (v.id.clone(), v.shown.clone(), v.prefix),
            None => {
                let (id, view, _) = self.units.sale_view(unit)?;
                (id.to_string(), view, None)
            }
        };
        let first_shown = first
            .filter(|_| !unit.game.step_by_step())
            .map(|held| FirstShown {
                game: unit.game,
                price_cents,
                held,
            });
        Ok(Sale {
            id,
            game: unit.game.slug(),
            emission: unit.emission,
            block: unit.block,
            index: unit.index,
            price: Cents::from(price_cents).to_string(),
            sold_at: sold.sold_at.clone(),
            sequenced: sold.seq.is_some(),
            ledger_entry: sold.seq,
            block_sold_out: sold.block_sold_out,
            receipt: None,
            unit: view,
            first_shown,
        })
    }

    /// Records `ids` as sold (distributed by other means) in `platform`'s
    /// lane (`None`: the operator's alone), each of a closed emission and
    /// authenticated first; nothing is recorded if one is refused.
    pub fn mark_sold(&self, ids: &[UnitId], platform: Option<&str>) -> Result<Marked, Error> {
        let mut ops = Vec::with_capacity(ids.len());
        let mut closed = std::collections::HashSet::new();
        for id in ids {
            if closed.insert((id.game, id.emission)) {
                self.require_closed(id.game, id.emission)?;
            }
            self.units.locate(id)?;
            ops.push(Op::MarkSold {
                unit: UnitRef::of(id),
                unit_id: id.to_string(),
            });
        }
        self.mark(ops, platform)
    }

    /// Records every unit of `game`'s closed emission `emission` as sold,
    /// in `platform`'s lane (`None`: the operator's alone).
    pub fn mark_emission_sold(
        &self,
        game: Game,
        emission: u32,
        platform: Option<&str>,
    ) -> Result<Marked, Error> {
        let manifest = self.require_closed(game, emission)?;
        let mut total = Marked::default();
        for b in &manifest.blocks {
            let probe = probe(UnitRef {
                game,
                emission,
                block: b.block,
                index: 0,
            });
            let block = self.units.block(&probe, &probe.to_string())?;
            let h = &block.file.header;
            let size = usize::from(h.record_size);
            for chunk in 0..block.file.index.len() as u32 {
                let opened = block.chunk_records(chunk)?;
                let ops = opened
                    .records
                    .chunks_exact(size)
                    .map(|record| {
                        let prefix =
                            RecordPrefix::parse(record).ok_or_else(|| Error::BlockRejected {
                                path: block.file.path().to_path_buf(),
                                reason: format!("chunk {chunk}: a record is too short"),
                            })?;
                        let id = UnitId {
                            index: prefix.index,
                            check_code: prefix.check_code,
                            ..probe
                        };
                        Ok(Op::MarkSold {
                            unit: UnitRef::of(&id),
                            unit_id: id.to_string(),
                        })
                    })
                    .collect::<Result<Vec<_>, Error>>()?;
                let marked = self.mark(ops, platform)?;
                total.marked += marked.marked;
                total.already_sold += marked.already_sold;
            }
        }
        Ok(total)
    }

    /// Applies mark-sold operations in `platform`'s lane; a unit sold
    /// already is counted, any other refusal stops.
    fn mark(&self, ops: Vec<Op>, platform: Option<&str>) -> Result<Marked, Error> {
        let asker = platform.map_or(Asker::Operator, |p| Asker::OperatorToken(p.to_string()));
        let ops = ops.into_iter().map(|op| asker.op(None, op)).collect();
        let mut marked = Marked::default();
        for outcome in self.submit(ops) {
            match outcome {
                Ok(_) => marked.marked += 1,
                Err(Error::AlreadySold { .. }) => marked.already_sold += 1,
                Err(e) => return Err(e),
            }
        }
        Ok(marked)
    }

    /// The manifest of a closed emission; refuses one not closed.
    pub fn require_closed(
        &self,
        game: Game,
        emission: u32,
    ) -> Result<crate::emission::Manifest, Error> {
        let manifest = Emission::new(&self.units.store, game, emission)
            .require_manifest(&self.units.keys.public_key)?;
        if !manifest.closed {
            return Err(Error::EmissionNotClosed { emission });
        }
        Ok(manifest)
    }

    /// The tape of `id`, authenticated.
    fn tape(&self, id: &UnitId) -> Result<Tape, Error> {
        self.units.tape(id, &self.units.locate(id)?)
    }

    /// Plays one step of `id` (a roll, or the stop); durable before it is
    /// answered, applied once (a retried roll or stop is answered again).
    pub fn play(&self, id: &UnitId, action: PlayAction) -> Result<PlayView, Error> {
        self.play_keyed(id, action, None)
    }

    /// [`Redeemer::play`] under an idempotency key.
    pub fn play_keyed(
        &self,
        id: &UnitId,
        action: PlayAction,
        key: Option<&str>,
    ) -> Result<PlayView, Error> {
        self.play_as(&Asker::Operator, id, action, key)
    }

    /// A play step for `asker` (a platform: of its own unit only, checked
    /// again in the step's transaction).
    pub(super) fn play_as(
        &self,
        asker: &Asker,
        id: &UnitId,
        action: PlayAction,
        key: Option<&str>,
    ) -> Result<PlayView, Error> {
        let normalised = id.to_string();
        let lane = asker.lane();
        let key = key
            .map(|k| match action {
                PlayAction::Step(n) => {
                    KeyedRequest::new(lane, k, &["roll", &normalised, &n.to_string()])
                }
                PlayAction::Stop => KeyedRequest::new(lane, k, &["stop", &normalised]),
            })
            .transpose()?;
        let located = self.units.locate(id)?;
        let tape = self.units.tape(id, &located)?;
        let op = Op::Play(PlayOrder {
            unit: UnitRef::of(id),
            unit_id: normalised,
            action,
            first_stop: tape.first_stop,
            end_step: tape.end_step(),
        });
        let played = match self.apply_one(asker.op(key, op))? {
            Done::Played(p) => p,
            _ => return Err(self.wrong_answer()),
        };
        let mut view = match action {
            PlayAction::Step(n) => {
                let step = &tape.first(n)[(n as usize - 1).min(tape.steps.len())..];
                match &played.play.ended {
                    // A step retried once the play is over (stopped or
                    // ended since): the step again, and the play as it is
                    // now, over, so a client that trusts `over` stops.
                    Some(_) if played.replayed => PlayView::at(
                        id,
                        &tape,
                        played.play.steps,
                        played.play.stop().is_some(),
                        step,
                    ),
                    _ => PlayView::at(id, &tape, n, false, step),
                }
            }
            PlayAction::Stop => PlayView::at(id, &tape, played.play.steps, true, &[]),
        };
        view.replayed = played.replayed;
        view.ledger_entry = played.seq;
        if view.over && !view.replayed {
            view.sequenced = Some(played.seq.is_some());
            view.first_shown = RecordPrefix::parse(&located.record).map(|held| FirstShown {
                game: id.game,
                price_cents: located.block.file.header.price_cents,
                held,
            });
        }
        Ok(view)
    }

    /// A check of a unit whose play is not over: the play so far.
    pub(super) fn in_play(
        &self,
        id: &UnitId,
        located: &Located,
        sold: bool,
        rolls: u32,
    ) -> Result<UnitInPlay, Error> {
        let tape = self.units.tape(id, located)?;
        Ok(UnitInPlay {
            id: id.to_string(),
            game: id.game.slug().into(),
            emission: id.emission,
            block: id.block,
            index: id.index,
            in_play: true,
            sold,
            play: PlayView::so_far(id, &tape, rolls, false),
        })
    }

    /// Where the play of `id` stands, with every roll revealed so far.
    pub fn play_state(&self, id: &UnitId) -> Result<PlayView, Error> {
        let tape = self.tape(id)?;
        let (sold, play) = self.sale_and_play(id)?;
        if !sold {
            return Err(Error::NotSold { id: id.to_string() });
        }
        let row: PlayRow = play.unwrap_or_default();
        Ok(PlayView::so_far(
            id,
            &tape,
            row.steps,
            row.ended.as_deref() == Some(PLAY_STOPPED),
        ))
    }

    /// One operation through the ledger writer.
    fn apply_one(&self, op: Op) -> Result<Done, Error> {
        self.submit(vec![op])
            .pop()
            .unwrap_or_else(|| Err(self.wrong_answer()))
    }

    fn wrong_answer(&self) -> Error {
        Error::Internal {
            what: "the ledger writer gave no outcome or another operation's".into(),
        }
    }
}

impl Units {
    /// The ID of `unit`: its check code read from its sealed record.
    fn unit_id_of(&self, unit: UnitRef) -> Result<UnitId, Error> {
        let probe = probe(unit);
        let block = self.block(&probe, &probe.to_string())?;
        let h = &block.file.header;
        let reject = |reason: String| Error::BlockRejected {
            path: block.file.path().to_path_buf(),
            reason,
        };
        if unit.index >= h.unit_count {
            return Err(reject(format!(
                "the ledger sold unit {}, beyond the block",
                unit.index
            )));
        }
        let chunk = unit.index / h.chunk_units;
        let at = (unit.index % h.chunk_units) as usize * usize::from(h.record_size);
        let cached = self.chunk((unit.game.code(), unit.emission, unit.block), &block, chunk)?;
        let prefix = cached
            .opened
            .records
            .get(at..)
            .and_then(RecordPrefix::parse)
            .ok_or_else(|| reject(format!("unit {}: no record", unit.index)))?;
        Ok(UnitId {
            check_code: prefix.check_code,
            ..probe
        })
    }

    /// The ID of `unit` and what its sale shows, the unit authenticated:
    /// what a sale needs before it is recorded.
    fn sale_view(
        &self,
        unit: UnitRef,
    ) -> Result<(UnitId, serde_json::Value, Option<RecordPrefix>), Error> {
        let id = self.unit_id_of(unit)?;
        let located = self.locate(&id)?;
        let prefix = RecordPrefix::parse(&located.record);
        Ok((id, located.unit.sale_view(), prefix))
    }

    /// The tape of the unit `located`.
    fn tape(&self, id: &UnitId, located: &Located) -> Result<Tape, Error> {
        let not_playable = || Error::NotPlayable {
            id: id.to_string(),
            game: id.game.slug(),
        };
        if !id.game.step_by_step() {
            return Err(not_playable());
        }
        located.unit.tape().ok_or_else(not_playable)
    }
}

/// An ID with the place of `unit` and no check code yet.
pub(super) fn probe(unit: UnitRef) -> UnitId {
    UnitId {
        game: unit.game,
        emission: unit.emission,
        block: unit.block,
        index: unit.index,
        check_code: [0; CHECK_CODE_LEN],
    }
}
