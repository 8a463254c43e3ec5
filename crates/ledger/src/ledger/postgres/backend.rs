//! The PostgreSQL ledger behind the storage interface: [`Backend`] for
//! [`PgLedger`], and [`PgStorage`], a writer's [`LedgerStorage`].

use super::conn::{small, writers};
use super::ledger::PgLedger;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::sequencer::Sequencer;
use crate::error::Error;
use crate::ledger::backend::{Backend, LogReads, PutBack, UnitReads};
use crate::ledger::log::LedgerKey;
use crate::ledger::ops::{self, Done, Op, SaleRow};
use crate::ledger::writer::LedgerStorage;
use crate::ledger::Recorded;
use crate::store::Store;

/// A PostgreSQL ledger with the node's sequencer, which signs the heads it
/// makes with the node's ledger key. Its clones (one per writer thread,
/// [`WRITERS`]) share the sequencer, stopped (after a last drain) when the
/// last is dropped.
#[derive(Clone)]
pub struct PgStorage {
    pub(super) ledger: PgLedger,
    _sequencer: Arc<Sequencer>,
}

impl PgStorage {
    /// The storage of `ledger`, signing with `store`'s ledger key (made if
    /// needed); refuses a database without the current schema.
    pub fn open(mut ledger: PgLedger, store: &Store) -> Result<PgStorage, Error> {
        ledger.check_schema()?;
        if let Some(identity) = Backend::identity(&ledger, false)? {
            let memory = crate::ledger::remembered::HeadMemory::of(store, &identity);
            // A database restored under this node, or a standby promoted
            // after losing entries: refused from the first write.
            memory.check_source(&ledger)?;
            ledger.memory = Some(memory);
        }
        let key = Arc::new(LedgerKey::from_signing(store.ledger_signing_key()?));
        ledger.claim_log(&key, &store.ledger_key_path())?;
        let sequencer = Arc::new(Sequencer::start(ledger.clone(), key)?);
        Ok(PgStorage {
            ledger,
            _sequencer: sequencer,
        })
    }
}

impl Backend for PgLedger {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn migrate(&self) -> Result<(i64, i64), Error> {
        PgLedger::migrate(self)
    }

    fn storages(
        &self,
        signer: &Store,
        _busy: Duration,
    ) -> Result<Vec<Box<dyn LedgerStorage>>, Error> {
        // Writers whose transactions overlap, sharing one sequencer.
        let storage = PgStorage::open(self.clone(), signer)?;
        Ok((0..writers())
            .map(|_| Box::new(storage.clone()) as Box<dyn LedgerStorage>)
            .collect())
    }

    fn read_units(&self, _busy: Duration, f: &mut UnitReads) -> Result<bool, Error> {
        // Read before any write: a missing schema names its remedy.
        self.check_schema_recent()?;
        if let Err(e) = self.unit_snapshot(f) {
            // A read that failed: the schema is checked afresh, so a
            // schema dropped since names its remedy.
            self.check_schema()?;
            return Err(e);
        }
        Ok(true)
    }

    fn sale(&self, u: ops::UnitRef, _busy: Duration) -> Result<Option<Option<SaleRow>>, Error> {
        self.check_schema_recent()?;
        PgLedger::sale(self, u).map(Some)
    }

    fn lookup(&self, u: ops::UnitRef, _busy: Duration) -> Result<Option<Recorded>, Error> {
        PgLedger::lookup(self, u.game, u.emission, u.block, u.index)
    }

    fn cosign_head(&self, size: u64, note: &str, cosigned: &str) -> Result<bool, Error> {
        self.check_schema()?;
        let size = i64::try_from(size).unwrap_or(i64::MAX);
        self.conn()?
            .execute(
                "UPDATE ledger_heads SET checkpoint = $1 WHERE size = $2 AND checkpoint = $3",
                &[&cosigned, &size, &note],
            )
            .map(|n| n == 1)
            .map_err(|e| self.db_error(&e))
    }

    fn with_log(&self, f: &mut LogReads) -> Result<bool, Error> {
        f(self)?;
        Ok(true)
    }

    fn summary(&self) -> Result<crate::ledger::Summary, Error> {
        self.check_schema()?;
        PgLedger::summary(self)
    }

    fn put_back(
        &self,
        signer: &Store,
        entries: &[ops::Restored],
    ) -> Result<Option<PutBack>, Error> {
        self.check_schema()?;
        let key = LedgerKey::from_signing(signer.ledger_signing_key()?);
        self.claim_log(&key, &signer.ledger_key_path())?;
        PgLedger::put_back(self, &key, entries).map(Some)
    }

    fn identity(&self, _create: bool) -> Result<Option<String>, Error> {
        // Made by `ledger migrate`, without which nothing is written.
        self.check_schema()?;
        self.conn()?
            .query_one("SELECT id FROM ledger_identity", &[])
            .and_then(|r| r.try_get(0))
            .map(Some)
            .map_err(|e| self.read_error(&e))
    }

    fn activity(&self) -> Result<Vec<crate::ledger::BlockActivity>, Error> {
        self.check_schema()?;
        let rows = self
            .conn()?
            .query(crate::ledger::summary::ACTIVITY, &[])
            .map_err(|e| self.read_error(&e))?;
        Ok(rows
            .iter()
            .map(|r| crate::ledger::BlockActivity {
                game: r.get(0),
                emission: small(r.get(1)),
                block: small(r.get(2)),
                sold: r.get::<_, i64>(3).unsigned_abs(),
                played: r.get::<_, i64>(4).unsigned_abs(),
                redeemed: r.get::<_, i64>(5).unsigned_abs(),
                paid_cents: r.get::<_, i64>(6).unsigned_abs(),
                voided: r.get::<_, i64>(7).unsigned_abs(),
            })
            .collect())
    }

    fn emission_rows(
        &self,
        game: &str,
        emission: u32,
        f: &mut crate::ledger::emission_rows::EmissionReads,
    ) -> Result<bool, Error> {
        self.check_schema()?;
        self.read_emission_rows(game, emission, f)?;
        Ok(true)
    }
}

impl LedgerStorage for PgStorage {
    fn commit(&mut self, ops: &[Op]) -> Result<Vec<Result<Done, Error>>, Error> {
        // The sequencer checks the log each turn; while it finds the log
        // rolled back, nothing is recorded.
        if let Some(finding) = self.ledger.memory.as_ref().and_then(|m| m.finding()) {
            return Err(Error::LedgerRolledBack {
                path: PathBuf::from(&self.ledger.name),
                reason: finding.describe(),
            });
        }
        self.ledger.commit(ops)
    }

    fn path(&self) -> PathBuf {
        PathBuf::from(&self.ledger.name)
    }
}
