//! Which ledger a command or a node uses: the store's SQLite file (the
//! default) or a shared PostgreSQL database (`--ledger postgres://…`),
//! both behind one [`Backend`]: what is written here is written once for
//! every database.

use std::sync::Arc;
use std::time::Duration;

use super::backend::Backend;
use super::claims::EndOfClaims;
use super::emission_rows::EmissionReads;
use super::log::{self, Head, LogSource};
use super::ops::{LedgerTx, Op, PlayRow, SaleRow, UnitRef};
use super::postgres::PgLedger;
use super::sqlite::SqliteLedger;
use super::writer::GroupCommit;
use super::{BlockActivity, Recorded, Summary};
use crate::error::Error;
use crate::game::Game;
use crate::store::Store;

/// A ledger: the store's SQLite file or a PostgreSQL database.
#[derive(Clone)]
pub struct LedgerTarget {
    backend: Arc<dyn Backend>,
}

impl LedgerTarget {
    /// `url` when given (`postgres://…`), else `store`'s own ledger.
    pub fn new(store: &Store, url: Option<&str>) -> Result<LedgerTarget, Error> {
        match url {
            Some(url) => Ok(LedgerTarget::on(PgLedger::connect(url)?)),
            None => Ok(LedgerTarget::of_store(store)),
        }
    }

    /// The store's own SQLite ledger.
    #[must_use]
    pub fn of_store(store: &Store) -> LedgerTarget {
        LedgerTarget::on(SqliteLedger::new(store))
    }

    /// The ledger `backend` (any database).
    pub fn on(backend: impl Backend + 'static) -> LedgerTarget {
        LedgerTarget {
            backend: Arc::new(backend),
        }
    }

    /// The ledger's name in messages (a path, or a URL without password).
    #[must_use]
    pub fn describe(&self) -> String {
        self.backend.name()
    }

    /// Creates or upgrades the ledger's schema: the versions before and
    /// after.
    pub fn migrate(&self) -> Result<(i64, i64), Error> {
        self.backend.migrate()
    }

    /// The one writer of this ledger for this process; heads are signed
    /// with `store`'s ledger key.
    pub fn writer(&self, store: &Store, busy: Duration) -> Result<GroupCommit, Error> {
        GroupCommit::start_many(self.backend.storages(store, busy)?)
    }

    /// [`LedgerTarget::writer`] whose callers wait at most `within` for an
    /// outcome.
    pub fn writer_within(
        &self,
        store: &Store,
        busy: Duration,
        within: Duration,
    ) -> Result<GroupCommit, Error> {
        GroupCommit::start_bounded(
            self.backend.storages(store, busy)?,
            super::writer::QUEUE_CAPACITY,
            within,
        )
    }

    /// The first redemption of a unit, if any; creates nothing.
    pub fn lookup(
        &self,
        game: Game,
        emission: u32,
        block: u32,
        index: u32,
        busy: Duration,
    ) -> Result<Option<Recorded>, Error> {
        let unit = UnitRef {
            game,
            emission,
            block,
            index,
        };
        self.backend.lookup(unit, busy)
    }

    /// The latest signed head with its signer's verifier key; `None` when
    /// nothing was recorded yet. Creates nothing.
    pub fn head(&self) -> Result<Option<Head>, Error> {
        let Some(mut head) = self.with_log(log::head)?.flatten() else {
            return Ok(None);
        };
        if let (Some(public), None) = (self.backend.default_signer(), &head.verifier_key) {
            if public.exists() {
                head.verifier_key = Some(log::verifier_key(&crate::seal::read_public(&public)?));
            }
        }
        Ok(Some(head))
    }

    /// The ledger's summary (nothing recorded when there is no ledger yet).
    pub fn summary(&self) -> Result<Summary, Error> {
        self.backend.summary()
    }

    /// What each block's units have been through (`issuer status`);
    /// creates nothing.
    pub fn activity(&self) -> Result<Vec<BlockActivity>, Error> {
        self.backend.activity()
    }

    /// Every sale, play and redemption of `game`'s `emission`, handed to
    /// `f` row by row, each kind read once in one snapshot
    /// ([`Backend::emission_rows`]); `false` when there is no ledger yet.
    /// Creates nothing.
    pub fn emission_rows(
        &self,
        game: Game,
        emission: u32,
        f: &mut EmissionReads,
    ) -> Result<bool, Error> {
        self.backend.emission_rows(game.slug(), emission, f)
    }

    /// [`Backend::put_back`].
    pub fn put_back(
        &self,
        signer: &Store,
        entries: &[super::ops::Restored],
    ) -> Result<Option<super::backend::PutBack>, Error> {
        self.backend.put_back(signer, entries)
    }

    /// The ledger's identity (`Backend::identity`), made with the ledger
    /// when `create`; else `None` when there is no ledger yet.
    pub fn identity(&self, create: bool) -> Result<Option<String>, Error> {
        self.backend.identity(create)
    }

    /// The unit's play, if any; creates nothing.
    pub fn play(&self, unit: UnitRef, busy: Duration) -> Result<Option<PlayRow>, Error> {
        Ok(self.read(busy, |tx| tx.play(unit.place()))?.flatten())
    }

    /// The unit's sale (when, in which lane), if it was sold; creates
    /// nothing.
    pub fn sale(&self, unit: UnitRef, busy: Duration) -> Result<Option<SaleRow>, Error> {
        Ok(self.backend.sale(unit, busy)?.flatten())
    }

    /// Runs the reads `f` on this ledger in one snapshot (`None`: no
    /// ledger yet); creates nothing.
    pub fn read<T>(
        &self,
        busy: Duration,
        f: impl FnOnce(&mut dyn LedgerTx) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        let mut f = Some(f);
        let mut out = None;
        self.backend.read_units(busy, &mut |tx| {
            if let Some(f) = f.take() {
                out = Some(f(tx)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Runs `f` on this ledger as a log (`None`: no ledger yet).
    pub fn with_log<T>(
        &self,
        f: impl FnOnce(&dyn LogSource) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        let mut f = Some(f);
        let mut out = None;
        self.backend.with_log(&mut |source| {
            if let Some(f) = f.take() {
                out = Some(f(source)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Adds witnesses' cosignatures to the stored head of `size`
    /// ([`Backend::cosign_head`]).
    pub fn cosign_head(&self, size: u64, note: &str, cosigned: &str) -> Result<bool, Error> {
        self.backend.cosign_head(size, note, cosigned)
    }

    /// Publishes the issuer's end of claims as a log entry ([`Op::EndClaims`],
    /// under a new head signed with `store`'s ledger key); returns the one in
    /// the ledger (the first published stands).
    pub fn publish_end_of_claims(
        &self,
        store: &Store,
        game: Game,
        statement: &EndOfClaims,
    ) -> Result<EndOfClaims, Error> {
        self.commit_one(store, Op::EndClaims(statement.clone()))?;
        self.end_of_claims(game, statement.emission)?
            .ok_or_else(|| Error::Internal {
                what: "the end of claims just published is not in the ledger".into(),
            })
    }

    /// The standing of `game`'s emission in this ledger (its end of
    /// claims, suspensions and withdrawals); `None` when there is no
    /// ledger yet.
    pub fn gate(&self, game: Game, emission: u32) -> Result<Option<super::operator::Gate>, Error> {
        self.read(super::BUSY_TIMEOUT, |tx| tx.gate(game.slug(), emission))
    }

    /// Publishes an operator's action made by the issuer itself (a closing
    /// statement) as a log entry, under a new head signed with `store`'s
    /// ledger key; refusals are the action's.
    pub fn publish_action(
        &self,
        store: &Store,
        action: super::operator::OperatorAction,
    ) -> Result<(), Error> {
        self.commit_one(store, Op::Operator(action))
    }

    /// Commits one operation of the issuer's own (not through a node's
    /// writer), under a head signed with `store`'s ledger key.
    fn commit_one(&self, store: &Store, op: Op) -> Result<(), Error> {
        let mut storages = self.backend.storages(store, super::BUSY_TIMEOUT)?;
        let storage = storages.first_mut().ok_or_else(|| Error::Internal {
            what: format!("the ledger {} gave no storage to write to", self.describe()),
        })?;
        for outcome in storage.commit(&[op])? {
            outcome?;
        }
        Ok(())
    }

    /// The end of claims of `game`'s emission published in this ledger.
    pub fn end_of_claims(&self, game: Game, emission: u32) -> Result<Option<EndOfClaims>, Error> {
        let row = self.read(super::BUSY_TIMEOUT, |tx| {
            tx.claims_row(game.slug(), emission)
        })?;
        Ok(row.flatten().map(|(statement, _)| statement))
    }
}
