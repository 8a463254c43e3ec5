//! The one storage interface every ledger database implements: the write
//! path ([`LedgerStorage`] over [`LedgerTx`], written once in
//! [`super::ops`]), the reads, the log, the summary and the schema. The
//! store's SQLite file (`sqlite/`) and a shared PostgreSQL database
//! (`postgres/`) are its two implementations, each a folder; a third
//! database is one more folder, checked by the same conformance suite
//! (tests/it/conformance.rs; docs/ARCHITECTURE.md §A third database).
//! Nothing above this trait names a database: [`super::target`] picks one.

use std::path::PathBuf;
use std::time::Duration;

use super::emission_rows::EmissionReads;
use super::log::LogSource;
use super::ops::{LedgerTx, SaleRow, UnitRef};
use super::writer::LedgerStorage;
use super::{BlockActivity, Recorded, Summary};
use crate::error::Error;
use crate::store::Store;

/// The reads `f` of [`Backend::read_units`].
pub type UnitReads<'f> = dyn FnMut(&mut dyn LedgerTx) -> Result<(), Error> + 'f;

/// The log reads `f` of [`Backend::with_log`].
pub type LogReads<'f> = dyn FnMut(&dyn LogSource) -> Result<(), Error> + 'f;

/// A ledger database. Reads create nothing: on a ledger that does not
/// exist yet they report `false` (nothing was ever recorded).
pub trait Backend: Send + Sync {
    /// The database's name in messages (a path, or a URL without its
    /// password).
    fn name(&self) -> String;

    /// Brings the schema to this build's version, creating it if needed;
    /// returns the version found (0: none) and the version now. Safe to
    /// run from several processes at once.
    fn migrate(&self) -> Result<(i64, i64), Error>;

    /// The storages the writer commits through (one per writer thread),
    /// signing heads with `signer`'s ledger key (made if needed); waits at
    /// most `busy` for another writer's lock.
    fn storages(
        &self,
        signer: &Store,
        busy: Duration,
    ) -> Result<Vec<Box<dyn LedgerStorage>>, Error>;

    /// Runs `f` in one read-only snapshot; `false` when there is no ledger.
    fn read_units(&self, busy: Duration, f: &mut UnitReads) -> Result<bool, Error>;

    /// The unit's sale, read alone (the read every request of a platform
    /// makes, [`crate::redeemer`]'s window); `None` when there is no
    /// ledger. By default one [`Backend::read_units`]; a database may do
    /// it in fewer round trips (PostgreSQL: one statement, its own
    /// snapshot, no transaction around it).
    fn sale(&self, unit: UnitRef, busy: Duration) -> Result<Option<Option<SaleRow>>, Error> {
        let mut out = None;
        self.read_units(busy, &mut |tx| {
            out = Some(tx.sale(unit.place())?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The first redemption of `unit` with its log index, if any.
    fn lookup(&self, unit: UnitRef, busy: Duration) -> Result<Option<Recorded>, Error>;

    /// Runs `f` on the ledger as a log; `false` when there is no ledger.
    fn with_log(&self, f: &mut LogReads) -> Result<bool, Error>;

    /// Adds witnesses' cosignatures to the stored head of `size`: its note
    /// becomes `cosigned` if it is still `note` (`false`: it changed
    /// meanwhile, e.g. another node stored its cosignatures first).
    fn cosign_head(&self, size: u64, note: &str, cosigned: &str) -> Result<bool, Error>;

    /// The verifier key file of heads stored without their signer (the
    /// store's SQLite ledger is signed with the store's own key).
    fn default_signer(&self) -> Option<PathBuf> {
        None
    }

    /// Per-block counts and amounts, reconciled, each row replayed, with
    /// the digest and the database's own integrity check (nothing recorded
    /// when there is no ledger yet).
    fn summary(&self) -> Result<Summary, Error>;

    /// The ledger's identity: a random name made with its schema, which
    /// the emissions sold through it record. `create`: makes the ledger
    /// (SQLite) if there is none yet (asked before a first write); else
    /// `None` when there is none.
    fn identity(&self, create: bool) -> Result<Option<String>, Error>;

    /// Puts published entries back (`ledger recover`) where the ledger
    /// sequences them itself (PostgreSQL: [`super::postgres::PgLedger::put_back`],
    /// signed with `signer`'s ledger key); `None` where they go through
    /// the ledger's writers as operations (the store's SQLite ledger).
    fn put_back(
        &self,
        _signer: &Store,
        _entries: &[super::ops::Restored],
    ) -> Result<Option<PutBack>, Error> {
        Ok(None)
    }

    /// What each block's units have been through: sold, play ended,
    /// redeemed, paid (empty when there is no ledger yet).
    fn activity(&self) -> Result<Vec<BlockActivity>, Error>;

    /// Every sale, play and redemption of `game`'s (a slug) `emission`,
    /// handed to `f` row by row: each kind read by one query, the three in
    /// one read-only snapshot (what an audit reconciles, `crate::reconcile`;
    /// [`super::emission_rows`]); `false` when there is no ledger.
    fn emission_rows(
        &self,
        game: &str,
        emission: u32,
        f: &mut EmissionReads,
    ) -> Result<bool, Error>;
}

/// Why a ledger of a newer issuer's schema is refused (every database).
pub(crate) fn newer_schema(found: i64, ours: i64) -> String {
    format!("the ledger's schema is version {found}, newer than this issuer's {ours}; upgrade the issuer")
}

/// What putting published entries back did ([`Backend::put_back`]).
#[derive(Clone, Debug)]
pub struct PutBack {
    /// The new head's note (signed with the log's key).
    pub note: String,
    /// Rows the restored database held queued (acknowledged, not yet
    /// sequenced when it was copied) that the published log places: given
    /// its places.
    pub queued_placed: u64,
    /// Queued rows the published log does not hold: sequenced after the
    /// entries put back, as any queued row.
    pub queued_after: u64,
}
