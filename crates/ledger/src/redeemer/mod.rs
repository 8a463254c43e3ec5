//! A long-lived redeemer (docs/REDEMPTION.md §Redeemer): it keeps each
//! block it has authenticated (header, index, seal: checked once) and a
//! bounded cache of opened chunks, and splits a redemption in two steps:
//! [`Redeemer::authenticate`] (the ID, the block, the unit and its proof:
//! no write) and [`Redeemer::record`] (the ledger, through its one
//! group-committing writer). The command line and the service both redeem
//! through it.
//!
//! Its files import one another downwards only: the types a redemption
//! answers and is made with (`redemption.rs`), the units found and
//! authenticated (`units.rs`), the redeemer itself (`state.rs`), and then
//! each concern in a file of its own that adds to it (`impl Redeemer`);
//! this module only declares them and says what is public.

mod asker;
mod block_seal;
mod disclosure;
mod keyed;
mod operator;
mod picture;
mod play_view;
mod receipts;
pub mod recover;
mod redeeming;
mod redemption;
mod remaining;
mod sale;
mod state;
mod units;
mod window;

pub use asker::Asker;
pub use block_seal::BlockSeal;
pub use disclosure::{Check, Disclosure, UnitInPlay};
pub use keyed::batch_parts;
pub use operator::Acted;
pub use picture::PictureAsk;
pub use play_view::{FirstShown, PlayView};
pub use receipts::{EntryReceipt, UnitReceipts};
pub use redemption::{OwnedKeys, RedeemKeys, Redemption};
pub use remaining::{
    BlockRemaining, BlockRevealed, EmissionRemaining, EmissionRevealed, PrizeLine, Remaining,
    RevealedLine, RevealedPrizes, TopLots,
};
pub use sale::{Marked, Sale};
pub use state::Redeemer;
pub use units::{Authenticated, CHUNK_CACHE};
pub use window::Window;
