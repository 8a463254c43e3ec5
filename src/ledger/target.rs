//! Which ledger a command or a node uses: the store's SQLite file (the
//! default) or a shared PostgreSQL database (`--ledger postgres://…`).

use std::time::Duration;

use super::claims::EndOfClaims;
use super::log::{self, Head};
use super::pg::{PgLedger, PgStorage};
use super::writer::{GroupCommit, SqliteStorage};
use super::{Ledger, Recorded};
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
            LedgerTarget::Postgres(pg) => GroupCommit::start(PgStorage::open(pg.clone(), store)?),
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

    /// Publishes the issuer's end of claims; returns the one in the ledger
    /// (the first published stands).
    pub fn publish_end_of_claims(
        &self,
        game: Game,
        statement: &EndOfClaims,
    ) -> Result<EndOfClaims, Error> {
        match self {
            LedgerTarget::Store(store) => {
                Ledger::open(&store.ledger_path())?.publish_end_of_claims(statement)?;
            }
            LedgerTarget::Postgres(pg) => {
                pg.check_schema()?;
                pg.publish_end_of_claims(statement)?;
            }
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

    /// The latest signed head this node serves, with its verifier key: the
    /// store ledger's latest head, or on PostgreSQL the latest head signed
    /// with `store`'s ledger key (none before this node signed one).
    pub fn latest_head(&self, store: &Store) -> Result<Option<Head>, Error> {
        match self {
            LedgerTarget::Store(own) => log::latest_head(own),
            LedgerTarget::Postgres(pg) => {
                let public = log::public_path(store);
                if !public.exists() {
                    return Ok(None);
                }
                pg.head_signed_by(&crate::seal::read_public(&public)?)
            }
        }
    }
}
