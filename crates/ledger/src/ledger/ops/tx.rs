//! The reads and writes each database implements inside its own
//! transaction: all that differs between them.

use super::kept::KeptRow;
use super::rows::{PlayRow, SaleRow};
use crate::error::Error;
use crate::ledger::claims::EndOfClaims;
use crate::ledger::log::Place;
use crate::ledger::operator::{Gate, OperatorAction};
use crate::ledger::Entry;
use crate::merkle::{Frontier, Hash};

/// The reads and writes a ledger transaction needs; each database
/// implements them inside its own transaction.
pub trait LedgerTx {
    /// The log's right edge when this transaction appends each entry as
    /// its operation commits (one writer: SQLite); `None` when entries are
    /// queued and the sequencer appends them after the commit (PostgreSQL,
    /// docs/REDEMPTION.md §Sequencing), or when the transaction only reads.
    fn log_edge(&mut self) -> Option<&mut Frontier>;
    /// The standing of `game`'s `emission` ([`Gate`]): when its end of
    /// claims was published, and the suspensions and withdrawals in force.
    /// A database whose writers run at once waits here for an operator's
    /// action on the emission under way ([`LedgerTx::lock_gate`]).
    fn gate(&mut self, game: &str, emission: u32) -> Result<Gate, Error>;
    /// Makes this transaction the only one reading or changing the
    /// standing of `game`'s `emission` until it ends (an operator's action
    /// waits for the operations under way; a database whose writers
    /// already take turns does nothing).
    fn lock_gate(&mut self, _game: &str, _emission: u32) -> Result<(), Error> {
        Ok(())
    }
    /// Writes an operator's action at log entry `logged` (`None`: queued).
    fn insert_action(&mut self, a: &OperatorAction, logged: Logged) -> Result<(), Error>;
    /// When the unit's sale was voided.
    fn voided(&mut self, p: Place) -> Result<Option<String>, Error>;
    /// The end of claims of `game`'s `emission` as stored, with its log
    /// entry (`None` for a row stored before ends of claims were logged).
    fn claims_row(
        &mut self,
        game: &str,
        emission: u32,
    ) -> Result<Option<(EndOfClaims, Option<u64>)>, Error>;
    /// Writes the end of claims `s` at log entry `logged` (`None`: queued
    /// for the sequencer): a new row, or the stored unlogged one (the same
    /// facts) given its place in the log.
    fn log_claims_end(&mut self, s: &EndOfClaims, logged: Logged) -> Result<(), Error>;
    /// The unit's redemption: when, and the prize paid.
    fn redemption(&mut self, p: Place) -> Result<Option<(String, u32)>, Error>;
    /// Inserts a redemption at log entry `logged` (`None`: queued), and
    /// adds it to its block's totals when it is logged; `false` when the
    /// unit has one already (nothing written).
    fn insert_redemption(&mut self, e: &Entry, at: &str, logged: Logged) -> Result<bool, Error>;
    /// The unit's sale: when, and in which platform's lane.
    fn sale(&mut self, p: Place) -> Result<Option<SaleRow>, Error>;
    /// Inserts a sale in `lane` (`None`: the operator's) at log entry
    /// `logged` (`None`: queued).
    fn insert_sale(
        &mut self,
        p: Place,
        at: &str,
        lane: Option<&str>,
        logged: Logged,
    ) -> Result<(), Error>;
    /// The first index of a block that may be unsold.
    fn sale_cursor(&mut self, game: &str, emission: u32, block: u32) -> Result<u32, Error>;
    /// The first index from `from` up that has no sale (one query, however
    /// many units in a row are sold: `mark-sold --all` sells a whole block);
    /// may be `units` or more when none is left.
    fn first_unsold(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        from: u32,
    ) -> Result<u32, Error>;
    /// Moves a block's cursor.
    fn set_sale_cursor(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        next: u32,
    ) -> Result<(), Error>;
    /// The unit's play.
    fn play(&mut self, p: Place) -> Result<Option<PlayRow>, Error>;
    /// Before the batch: takes the locks of its idempotency `keys` and of
    /// its `units` (redeemed or played) all at once, in one order (so two
    /// batches never wait for each other), and reads ahead what it will
    /// ask of the units (their redemptions and sales). A database whose
    /// writers take turns does nothing.
    fn prefetch(&mut self, _units: &[Place], _keys: &[&str]) -> Result<(), Error> {
        Ok(())
    }
    /// Makes the operations on unit `p` take turns until the transaction
    /// ends (a database whose writers already take turns does nothing).
    fn lock_unit(&mut self, _p: Place) -> Result<(), Error> {
        Ok(())
    }
    /// The row kept under an idempotency key.
    fn kept(&mut self, key: &str) -> Result<Option<KeptRow>, Error>;
    /// Keeps `row` under `key` (a new key: the caller looked it up in the
    /// same transaction).
    fn keep(&mut self, key: &str, row: &KeptRow, at: &str) -> Result<(), Error>;
    /// The request digest (hex) kept under any of a batch's keys `KEY#n`.
    fn kept_batch(&mut self, key: &str) -> Result<Option<String>, Error>;
    /// Writes the unit's play; when it just ended, `logged` is its log
    /// entry (`None`: queued).
    fn put_play(&mut self, p: Place, row: &PlayRow, at: &str, logged: Logged) -> Result<(), Error>;
}

/// An entry's place in the log as its operation commits: `Some((seq,
/// leaf))` when the commit appends it (SQLite, one writer), `None` when it
/// is queued and the sequencer appends it after the commit (PostgreSQL,
/// docs/REDEMPTION.md §Sequencing).
pub type Logged<'a> = Option<(u64, &'a Hash)>;
