//! What each caller may learn, in one place (docs/SECURITY.md §What each
//! role may learn): a [`Window`] on the redeemer for one [`Asker`]. Every
//! answer the service gives a token is built through one. A platform's
//! window shows its own units only: a unit another platform sold, or one
//! not sold, or one that does not exist, is answered alike
//! ([`Error::UnknownUnit`], after the same one read of the ledger), and
//! nothing is recorded for it; its idempotency keys are its own; its
//! aggregates count only what has been revealed. The operator's window
//! shows every unit.

use super::asker::Asker;
use super::block_seal::BlockSeal;
use super::disclosure::Check;
use super::picture::PictureAsk;
use super::play_view::PlayView;
use super::receipts::UnitReceipts;
use super::redemption::Redemption;
use super::remaining::RevealedPrizes;
use super::sale::Sale;
use super::state::Redeemer;
use crate::error::Error;
use crate::game::Game;
use crate::game::Picture;
use crate::ledger::ops::{PlayAction, UnitRef};
use crate::unit_id::UnitId;

/// The redeemer as one caller sees it.
pub struct Window<'r> {
    redeemer: &'r Redeemer,
    asker: Asker,
}

impl Redeemer {
    /// The redeemer as `asker` sees it.
    #[must_use]
    pub fn window(&self, asker: Asker) -> Window<'_> {
        Window {
            redeemer: self,
            asker,
        }
    }

    /// Refuses a unit `asker` may not see, as an ID that names no unit,
    /// after one read of the unit's sale (whatever the unit is, so the
    /// refusal's timing is the same for every such ID).
    pub(super) fn vouch(&self, asker: &Asker, id: &UnitId) -> Result<(), Error> {
        if !asker.own_units_only() {
            return Ok(());
        }
        let sale = self.ledger.sale(UnitRef::of(id), self.busy)?;
        if sale.is_some_and(|s| s.belongs_to(asker.lane())) {
            Ok(())
        } else {
            Err(Error::UnknownUnit { id: id.to_string() })
        }
    }
}

impl Window<'_> {
    /// Who it is for.
    #[must_use]
    pub fn asker(&self) -> &Asker {
        &self.asker
    }

    /// Sells the next unsold unit of `game` at `price_cents`, in the
    /// caller's lane ([`Redeemer::sell_keyed`]).
    pub fn sell(&self, game: Game, price_cents: u32, key: Option<&str>) -> Result<Sale, Error> {
        self.redeemer
            .sell_as(&self.asker, game, price_cents, key, None)
    }

    /// The caller's sale under its key `key`.
    pub fn sale_under_key(&self, key: &str) -> Result<Sale, Error> {
        self.redeemer.sale_under_key_as(&self.asker, key)
    }

    /// `sale` with its receipt.
    pub fn sale_with_receipt(&self, sale: Sale) -> Result<Sale, Error> {
        self.redeemer.sale_with_receipt(sale)
    }

    /// A check of the caller's unit `id` ([`Redeemer::check`]).
    pub fn check(&self, id: &UnitId, stop: Option<u32>) -> Result<Check, Error> {
        self.redeemer.vouch(&self.asker, id)?;
        self.redeemer.check(id, stop)
    }

    /// One play step of the caller's unit `id` ([`Redeemer::play_keyed`]).
    pub fn play(
        &self,
        id: &UnitId,
        action: PlayAction,
        key: Option<&str>,
    ) -> Result<PlayView, Error> {
        self.redeemer.vouch(&self.asker, id)?;
        self.redeemer.play_as(&self.asker, id, action, key)
    }

    /// Where the play of the caller's unit `id` stands.
    pub fn play_state(&self, id: &UnitId) -> Result<PlayView, Error> {
        self.redeemer.vouch(&self.asker, id)?;
        self.redeemer.play_state(id)
    }

    /// The picture of the caller's unit `id` as its play stands.
    pub fn play_picture(&self, id: &UnitId) -> Result<Picture, Error> {
        self.redeemer.vouch(&self.asker, id)?;
        self.redeemer.play_picture(id)
    }

    /// A picture of the caller's unit `id` ([`Redeemer::picture`]); never
    /// the whole unit for a platform.
    pub fn picture(&self, id: &UnitId, ask: PictureAsk) -> Result<Picture, Error> {
        self.redeemer.vouch(&self.asker, id)?;
        let ask = PictureAsk {
            reveal_all: ask.reveal_all && !self.asker.own_units_only(),
            ..ask
        };
        self.redeemer.picture(id, ask)
    }

    /// The receipts of the caller's unit `id`.
    pub fn receipts(&self, id: &UnitId) -> Result<UnitReceipts, Error> {
        self.redeemer.vouch(&self.asker, id)?;
        self.redeemer.receipts(id)
    }

    /// Redeems the caller's unit `id` ([`Redeemer::redeem_keyed`]).
    pub fn redeem(
        &self,
        id: &UnitId,
        stop: Option<u32>,
        key: Option<&str>,
    ) -> Result<Redemption, Error> {
        self.redeemer.redeem_as(&self.asker, id, stop, key)
    }

    /// `r` with its receipt.
    pub fn with_receipt(&self, r: Redemption) -> Result<Redemption, Error> {
        self.redeemer.with_receipt(r)
    }

    /// Redeems each of the caller's `units` ([`Redeemer::redeem_many`]);
    /// under `key` (with `request`, [`batch_parts`](super::keyed::batch_parts) of the lines),
    /// as [`Redeemer::redeem_batch_keyed`] does.
    pub fn redeem_batch(
        &self,
        units: &[(UnitId, Option<u32>)],
        key: Option<(&str, &str)>,
    ) -> Result<Vec<Result<Redemption, Error>>, Error> {
        match key {
            Some((key, request)) => self
                .redeemer
                .redeem_batch_as(&self.asker, units, key, request),
            None => Ok(self.redeemer.redeem_many_keyed(&self.asker, units, &[])),
        }
    }

    /// The prizes revealed so far and those left to reveal, of `game` at
    /// `price_cents`: the same for every caller (public facts and what
    /// was revealed only).
    pub fn prizes_remaining(&self, game: Game, price_cents: u32) -> Result<RevealedPrizes, Error> {
        self.redeemer.revealed_prizes(game, price_cents)
    }

    /// A block's sealed header (public facts).
    pub fn block_seal(&self, game: Game, emission: u32, block: u32) -> Result<BlockSeal, Error> {
        self.redeemer.block_seal(game, emission, block)
    }
}
