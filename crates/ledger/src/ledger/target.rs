//! Which ledger a command or a node uses: the store's SQLite file (the
//! default) or a shared PostgreSQL database (`--ledger postgres://…`).

use std::time::Duration;

use super::claims::EndOfClaims;
use super::log::{self, Head, LogSource};
use super::ops::{LedgerTx, Op, PlayRow, UnitRef};
use super::pg::{PgLedger, PgStorage};
use super::writer::{GroupCommit, LedgerStorage as _, SqliteStorage};
use super::{Ledger, Recorded, Summary};
use crate::error::Error;
use crate::game::Game;
use crate::store::Store;

/// A ledger: the store's SQLite file or a PostgreSQL database.
#[derive(Clone)]
pub enum LedgerTarget {
    /// The SQLite ledger in the store.
    Store(Store),
    /// A shared PostgreSQL ledger.
    Postgres(PgLedger),
}

impl LedgerTarget {
    /// `url` when given (`postgres://…`), else `store`'s own ledger.
    pub fn new(store: &Store, url: Option<&str>) -> Result<LedgerTarget, Error> {
        match url {
            Some(url) => Ok(LedgerTarget::Postgres(PgLedger::connect(url)?)),
            None => Ok(LedgerTarget::Store(store.clone())),
        }
    }

    /// The ledger's name in messages (a path, or a URL without password).
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            LedgerTarget::Store(store) => store.ledger_path().display().to_string(),
            LedgerTarget::Postgres(pg) => pg.name().to_string(),
        }
    }

    /// The one writer of this ledger for this process; heads are signed
    /// with `store`'s ledger key.
    pub fn writer(&self, store: &Store, busy: Duration) -> Result<GroupCommit, Error> {
        match self {
            LedgerTarget::Store(own) => GroupCommit::start(SqliteStorage::open(own, busy)?),
            LedgerTarget::Postgres(pg) => {
                let storage = PgStorage::open(pg.clone(), store)?;
                GroupCommit::start_many(vec![storage; super::pg::writers()])
            }
        }
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
        match self {
            LedgerTarget::Store(store) => {
                match Ledger::open_existing_waiting(&store.ledger_path(), busy)? {
                    Some(ledger) => ledger.lookup(game, emission, block, index),
                    None => Ok(None),
                }
            }
            LedgerTarget::Postgres(pg) => pg.lookup(game, emission, block, index),
        }
    }

    /// The latest signed head with its signer's verifier key; `None` when
    /// nothing was recorded yet. Creates nothing.
    pub fn head(&self) -> Result<Option<Head>, Error> {
        let Some(mut head) = self.with_log(log::head)?.flatten() else {
            return Ok(None);
        };
        // The store's ledger keeps no signer beside its heads: its key is
        // the store's.
        if let (LedgerTarget::Store(store), None) = (self, &head.verifier_key) {
            let public = log::public_path(store);
            if public.exists() {
                head.verifier_key = Some(log::verifier_key(&crate::seal::read_public(&public)?));
            }
        }
        Ok(Some(head))
    }

    /// The ledger's summary (nothing recorded when there is no ledger yet).
    pub fn summary(&self) -> Result<Summary, Error> {
        match self {
            LedgerTarget::Store(store) => {
                let path = store.ledger_path();
                match Ledger::open_existing(&path)? {
                    Some(ledger) => ledger.summary(),
                    None => Ok(Summary::empty(&path)),
                }
            }
            LedgerTarget::Postgres(pg) => {
                pg.check_schema()?;
                pg.summary()
            }
        }
    }

    /// The unit's play, if any; creates nothing.
    pub fn play(&self, unit: UnitRef, busy: Duration) -> Result<Option<PlayRow>, Error> {
        match self {
            LedgerTarget::Store(store) => {
                match Ledger::open_existing_waiting(&store.ledger_path(), busy)? {
                    Some(ledger) => ledger.play(unit),
                    None => Ok(None),
                }
            }
            LedgerTarget::Postgres(pg) => {
                // Read before any write: a missing schema names its remedy.
                pg.check_schema()?;
                pg.play(unit)
            }
        }
    }

    /// When the unit was sold, if it was; creates nothing.
    pub fn sale(&self, unit: UnitRef, busy: Duration) -> Result<Option<String>, Error> {
        match self {
            LedgerTarget::Store(store) => {
                match Ledger::open_existing_waiting(&store.ledger_path(), busy)? {
                    Some(ledger) => ledger.sale(unit),
                    None => Ok(None),
                }
            }
            LedgerTarget::Postgres(pg) => pg.sale(unit),
        }
    }

    /// Runs the reads `f` on this ledger in one snapshot (`None`: no SQLite
    /// ledger yet); creates nothing.
    pub fn read<T>(
        &self,
        busy: Duration,
        f: impl FnOnce(&mut dyn LedgerTx) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        match self {
            LedgerTarget::Store(store) => {
                match Ledger::open_existing_waiting(&store.ledger_path(), busy)? {
                    Some(ledger) => ledger.read(f).map(Some),
                    None => Ok(None),
                }
            }
            LedgerTarget::Postgres(pg) => {
                pg.check_schema()?;
                pg.read_units(f).map(Some)
            }
        }
    }

    /// Runs `f` on this ledger as a log (`None`: no SQLite ledger yet).
    pub fn with_log<T>(
        &self,
        f: impl FnOnce(&dyn LogSource) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        match self {
            LedgerTarget::Store(store) => match Ledger::open_existing(&store.ledger_path())? {
                Some(ledger) => f(&ledger).map(Some),
                None => Ok(None),
            },
            LedgerTarget::Postgres(pg) => f(pg).map(Some),
        }
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
        let ops = [Op::EndClaims(statement.clone())];
        let outcomes = match self {
            LedgerTarget::Store(own) => {
                SqliteStorage::open(own, super::BUSY_TIMEOUT)?.commit(&ops)?
            }
            LedgerTarget::Postgres(pg) => PgStorage::open(pg.clone(), store)?.commit(&ops)?,
        };
        for outcome in outcomes {
            outcome?;
        }
        self.end_of_claims(game, statement.emission)?
            .ok_or_else(|| Error::Internal {
                what: "the end of claims just published is not in the ledger".into(),
            })
    }

    /// The end of claims of `game`'s emission published in this ledger.
    pub fn end_of_claims(&self, game: Game, emission: u32) -> Result<Option<EndOfClaims>, Error> {
        match self {
            LedgerTarget::Store(store) => match Ledger::open_existing(&store.ledger_path())? {
                Some(ledger) => ledger.end_of_claims(game, emission),
                None => Ok(None),
            },
            LedgerTarget::Postgres(pg) => pg.end_of_claims(game, emission),
        }
    }
}
