//! The SQLite ledger behind the storage interface: [`SqliteLedger`] (the
//! [`Backend`]: reads on kept connections, the schema, the summary) and
//! [`SqliteStorage`] (the writer's [`LedgerStorage`]).

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::ledger::{Ledger, BUSY_TIMEOUT};
use super::schema::SQLITE_SCHEMA_VERSION;
use crate::error::Error;
use crate::ledger::backend::{Backend, LogReads, UnitReads};
use crate::ledger::emission_rows::EmissionReads;
use crate::ledger::log::LedgerKey;
use crate::ledger::ops::{Done, Op, UnitRef};
use crate::ledger::writer::LedgerStorage;
use crate::ledger::{BlockActivity, Recorded, Summary};
use crate::store::Store;

/// The SQLite ledger with its signing key.
pub struct SqliteStorage {
    ledger: Ledger,
    key: LedgerKey,
}

impl SqliteStorage {
    /// Opens the store's ledger for writing (creating it and the ledger key
    /// if needed), waiting at most `busy` for another writer's lock.
    pub fn open(store: &Store, busy: Duration) -> Result<SqliteStorage, Error> {
        let key = LedgerKey::from_signing(store.ledger_signing_key()?);
        let mut ledger = Ledger::open_waiting(&store.ledger_path(), busy)?;
        ledger.guard(crate::ledger::remembered::HeadMemory::of(
            store,
            &ledger.identity()?,
        ));
        ledger.adopt_unlogged_rows()?;
        // Ends of claims published before they were logged enter the log
        // now, at its end, under a new signed head.
        let unlogged = ledger.unlogged_claims()?;
        if !unlogged.is_empty() {
            let ops: Vec<Op> = unlogged.into_iter().map(Op::EndClaims).collect();
            for outcome in ledger.commit(&ops, &key)? {
                outcome?;
            }
        }
        Ok(SqliteStorage { ledger, key })
    }
}

impl LedgerStorage for SqliteStorage {
    fn commit(&mut self, ops: &[Op]) -> Result<Vec<Result<Done, Error>>, Error> {
        self.ledger.commit(ops, &self.key)
    }

    fn path(&self) -> PathBuf {
        self.ledger.path.clone()
    }
}

/// Read connections kept open per SQLite ledger.
const READERS: usize = 4;

/// The store's SQLite ledger. Reads reuse up to [`READERS`] open
/// connections: a read does not reopen, re-check and re-chmod the file.
pub struct SqliteLedger {
    store: Store,
    path: PathBuf,
    readers: Mutex<Vec<Ledger>>,
}

impl SqliteLedger {
    /// The ledger of `store` (opened when first used).
    #[must_use]
    pub fn new(store: &Store) -> SqliteLedger {
        SqliteLedger {
            store: store.clone(),
            path: store.ledger_path(),
            readers: Mutex::new(Vec::new()),
        }
    }

    /// `f` on an open read connection; `None` when there is no ledger.
    fn with_reader<T>(
        &self,
        busy: Duration,
        f: impl FnOnce(&Ledger) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        let kept = self
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let ledger = match kept {
            Some(ledger) => {
                ledger.set_busy(busy)?;
                // A newer issuer may have upgraded the file since.
                ledger.refuse_newer_schema()?;
                ledger
            }
            None => match Ledger::open_existing_waiting(&self.path, busy)? {
                Some(ledger) => ledger,
                None => return Ok(None),
            },
        };
        let out = f(&ledger)?;
        let mut readers = self.readers.lock().unwrap_or_else(PoisonError::into_inner);
        if readers.len() < READERS {
            readers.push(ledger);
        }
        Ok(Some(out))
    }
}

impl Backend for SqliteLedger {
    fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn migrate(&self) -> Result<(i64, i64), Error> {
        let found = Ledger::schema_version_of(&self.path)?;
        Ledger::open(&self.path)?;
        Ok((found, SQLITE_SCHEMA_VERSION))
    }

    fn storages(
        &self,
        _signer: &Store,
        busy: Duration,
    ) -> Result<Vec<Box<dyn LedgerStorage>>, Error> {
        // The store's own ledger, signed with its own key; one writer:
        // SQLite's writers take turns.
        Ok(vec![Box::new(SqliteStorage::open(&self.store, busy)?)])
    }

    fn read_units(&self, busy: Duration, f: &mut UnitReads) -> Result<bool, Error> {
        Ok(self.with_reader(busy, |l| l.read(f))?.is_some())
    }

    fn lookup(&self, u: UnitRef, busy: Duration) -> Result<Option<Recorded>, Error> {
        Ok(self
            .with_reader(busy, |l| l.lookup(u.game, u.emission, u.block, u.index))?
            .flatten())
    }

    fn with_log(&self, f: &mut LogReads) -> Result<bool, Error> {
        Ok(self.with_reader(BUSY_TIMEOUT, |l| f(l))?.is_some())
    }

    fn default_signer(&self) -> Option<PathBuf> {
        Some(self.store.ledger_public_key_path())
    }

    fn cosign_head(&self, size: u64, note: &str, cosigned: &str) -> Result<bool, Error> {
        Ledger::open(&self.path)?.cosign_head(size, note, cosigned)
    }

    fn summary(&self) -> Result<Summary, Error> {
        Ok(self
            .with_reader(BUSY_TIMEOUT, Ledger::summary)?
            .unwrap_or_else(|| Summary::empty(&self.path)))
    }

    fn identity(&self, create: bool) -> Result<Option<String>, Error> {
        match create {
            true => Ledger::open(&self.path)?.identity().map(Some),
            false => self.with_reader(BUSY_TIMEOUT, Ledger::identity),
        }
    }

    fn activity(&self) -> Result<Vec<BlockActivity>, Error> {
        Ok(self
            .with_reader(BUSY_TIMEOUT, Ledger::activity)?
            .unwrap_or_default())
    }

    fn emission_rows(
        &self,
        game: &str,
        emission: u32,
        f: &mut EmissionReads,
    ) -> Result<bool, Error> {
        let read = self.with_reader(BUSY_TIMEOUT, |l| l.emission_rows(game, emission, f))?;
        Ok(read.is_some())
    }
}
