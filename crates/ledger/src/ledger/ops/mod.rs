//! What one ledger transaction does, written once for both databases: a
//! batch of operations (redeem, sell, mark sold, a play step, an end of
//! claims) is applied in order inside a transaction the caller holds, each
//! at most once, each that changes what a unit is or whether it is paid
//! (sold, played to its end, paid, its emission's claims ended) appended to
//! the log (docs/REDEMPTION.md §Sales and plays). The databases differ only
//! in the few reads and writes of [`LedgerTx`].

mod acts;
mod apply;
mod batch;
mod done;
mod kept;
mod keys;
mod op;
mod request;
mod restored;
mod rows;
mod tx;
mod units;

#[cfg(test)]
mod tests;

pub use apply::apply;
pub use done::{Done, Played, Sold};
pub use kept::{KeptAnswer, KeptRow};
pub use keys::{check_key, check_lane, client_key, request_digest, scoped_key, MAX_KEY_LEN};
pub use op::{Keyed, Laned, Op};
pub use request::{ForSale, PlayAction, PlayOrder, UnitRef, Vetted, Vetter};
pub use restored::{Restored, RestoredRow};
pub use rows::{PlayRow, SaleRow, PLAY_ENDED, PLAY_STOPPED};
pub use tx::{LedgerTx, Logged};
