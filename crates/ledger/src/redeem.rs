//! Redeeming a unit by ID (docs/REDEMPTION.md): the ID is checked before any
//! file is touched; then only the header, index and the unit's own chunk
//! are read and authenticated; the outcome comes with an RFC 9162 inclusion
//! proof; the ledger records it exactly once. The work is done by a
//! [`Redeemer`]; [`redeem()`] is one redemption with a fresh one.

use crate::error::Error;
use crate::store::Store;
use crate::unit_id::UnitId;

pub use crate::redeemer::{OwnedKeys, RedeemKeys, Redeemer, Redemption};

/// Checks unit `id` (range and check code before any file is read), finds
/// and authenticates its unit, plays it with the player's `stop` (the rolls
/// played before "Arrêter"; `None`: to the end) and records it in the
/// ledger (a unit played step by step: as its play was recorded). With
/// `replay_only`, records nothing and reads no ledger: the whole unit at
/// that stop, an operator's or auditor's replay with the keys
/// ([`Redeemer::replay`]; a platform checks with [`Redeemer::check`]).
pub fn redeem(
    store: &Store,
    keys: &RedeemKeys,
    id: &UnitId,
    stop: Option<u32>,
    replay_only: bool,
) -> Result<Redemption, Error> {
    let redeemer = Redeemer::new(store.clone(), OwnedKeys::of(keys));
    if replay_only {
        redeemer.replay(id, stop)
    } else {
        redeemer.redeem(id, stop)
    }
}
