//! The operations of a ledger transaction, as a caller asks them: alone,
//! under an idempotency key, or in a platform's lane.

use super::keys::client_key;
use super::request::{ForSale, PlayOrder, UnitRef, Vetter};
use super::restored::Restored;
use crate::game::Game;
use crate::ledger::claims::EndOfClaims;
use crate::ledger::log::Place;
use crate::ledger::operator::OperatorAction;
use crate::ledger::Entry;

/// One operation of a ledger transaction.
#[derive(Clone, Debug)]
pub enum Op {
    /// Pay a unit (once; it must be sold, and a Trésors Ensablés unit's play
    /// over with the stop the entry names).
    Redeem(Entry),
    /// Sell the next unsold unit of `blocks`, in their order.
    Sell {
        /// The game.
        game: Game,
        /// The price, in cents (for messages).
        price_cents: u32,
        /// The blocks on sale, in sale order.
        blocks: Vec<ForSale>,
        /// Checks the unit picked before its sale is recorded.
        vet: Vetter,
    },
    /// Record a unit as sold (distributed by other means).
    MarkSold {
        /// The unit.
        unit: UnitRef,
        /// Its ID as printed.
        unit_id: String,
    },
    /// A play step.
    Play(PlayOrder),
    /// Publish the issuer's end of claims of an emission (docs/REDEMPTION.md
    /// §End of claims): a log entry like a sale. The first published
    /// stands; one stored before ends of claims were logged is logged as
    /// stored (adopted).
    EndClaims(EndOfClaims),
    /// An operator's action (docs/REDEMPTION.md §Suspend, withdraw and
    /// void): a log entry; its `at` is set as it commits.
    Operator(OperatorAction),
    /// An operation under an idempotency key.
    Keyed(Keyed),
    /// An operation done for a sales platform, in its lane.
    Laned(Laned),
    /// An entry of the published log put back at its place
    /// (`issuer ledger recover`, docs/REDEMPTION.md §Recovery).
    Restore(Box<Restored>),
}

impl Op {
    /// The emissions (game, number) it may write about.
    #[must_use]
    pub fn emissions(&self) -> Vec<(Game, u32)> {
        match self.unkeyed() {
            Op::Redeem(e) => vec![(e.game, e.emission)],
            Op::Sell { game, blocks, .. } => blocks.iter().map(|b| (*game, b.emission)).collect(),
            Op::MarkSold { unit, .. } => vec![(unit.game, unit.emission)],
            Op::Play(order) => vec![(order.unit.game, order.unit.emission)],
            Op::EndClaims(s) => Game::from_slug(&s.game)
                .map(|g| vec![(g, s.emission)])
                .unwrap_or_default(),
            Op::Operator(a) => Game::from_slug(&a.game)
                .map(|g| vec![(g, a.emission)])
                .unwrap_or_default(),
            Op::Keyed(_) | Op::Laned(_) | Op::Restore(_) => Vec::new(),
        }
    }

    /// The operation itself, under however many keys and lanes.
    #[must_use]
    pub fn unkeyed(&self) -> &Op {
        match self {
            Op::Keyed(k) => k.op.unkeyed(),
            Op::Laned(l) => l.op.unkeyed(),
            op => op,
        }
    }

    /// The unit it asks about, where it names one that must be sold (a
    /// redemption, a play step): its place and ID.
    #[must_use]
    pub fn asked_unit(&self) -> Option<(Place<'static>, &str)> {
        match self.unkeyed() {
            Op::Redeem(e) => Some((UnitRef::of_entry(e).place(), e.unit_id.as_str())),
            Op::Play(o) => Some((o.unit.place(), o.unit_id.as_str())),
            _ => None,
        }
    }
}

/// An operation under a client's idempotency key (docs/API.md
/// §Idempotency): applied once; the same key and request again answers
/// what the first did; the same key with another request is refused.
#[derive(Clone, Debug)]
pub struct Keyed {
    /// The client's key (checked by [`check_key`]).
    pub key: String,
    /// SHA-256 of the request, as [`request_digest`] makes it.
    pub request: [u8; 32],
    /// What the first use was, for the refusal's message.
    pub what: String,
    /// The operation.
    pub op: Box<Op>,
}

impl Keyed {
    /// The key as its client gave it (the stored key, scoped by the
    /// platform's lane, is `LANE/KEY`: neither a lane nor a key holds `/`).
    #[must_use]
    pub fn client_key(&self) -> &str {
        client_key(&self.key)
    }
}

/// An operation done for a sales platform, in its lane (docs/SECURITY.md
/// §Each platform in its own lane): a sale it makes is recorded as its
/// own; a unit it asks about must be one of its own, else the answer is
/// [`Error::UnknownUnit`], whatever the unit is, and nothing is recorded.
#[derive(Clone, Debug)]
pub struct Laned {
    /// The platform's lane: its token's name.
    pub lane: String,
    /// Units of other lanes are refused as unknown (a platform); `false`:
    /// the caller may act on any unit (a token with the operator role),
    /// its sales still recorded in its lane.
    pub own_units_only: bool,
    /// The operation.
    pub op: Box<Op>,
}
