//! [`PgLedger`]: a pool of connections to the shared database, its
//! errors, and a unit's row looked up.

use super::conn::{
    db_text, prepared, redact, refusal, small, writers, Manager, PgConn, Pool, CONNECT_TIMEOUT,
    POOL_SIZE, SESSION_TIMEOUTS,
};
use super::sql::{sale_row, SALE_ROW};
use std::path::PathBuf;
use std::sync::Arc;

use postgres::NoTls;
use r2d2_postgres::PostgresConnectionManager;

use crate::error::Error;
use crate::game::Game;
use crate::ledger::ops::SaleRow;
use crate::ledger::ops::{self};
use crate::ledger::Recorded;

/// A PostgreSQL ledger: its name (the URL without password) and a pool.
#[derive(Clone)]
pub struct PgLedger {
    pub(super) name: String,
    pub(super) pool: Pool,
    /// The pool's connection settings (URL and libpq environment).
    pub(super) config: Arc<postgres::Config>,
    /// The head this node remembers of the log (a writer's: its
    /// sequencer checks each turn that the log extends it, and remembers
    /// each head it signs; docs/REDEMPTION.md §The log never goes
    /// backwards).
    pub(super) memory: Option<Arc<crate::ledger::remembered::HeadMemory>>,
    /// When the schema was last found current ([`PgLedger::check_schema`]),
    /// shared by the clones: the per-request reads check it at most once
    /// every [`super::schema::SCHEMA_RECHECK`] (issue 38: it was one more
    /// round trip, unprepared, on every redemption).
    pub(super) schema_seen: Arc<std::sync::Mutex<Option<std::time::Instant>>>,
}

impl PgLedger {
    /// A pool on `url` (`postgres://…`); connects lazily, so a node starts
    /// while the database is down and answers "unavailable" until it is up.
    pub fn connect(url: &str) -> Result<PgLedger, Error> {
        let config: postgres::Config = url.parse().map_err(|e| Error::BadLedgerUrl {
            url: redact(url),
            reason: format!("{e}"),
        })?;
        let mut config = config;
        super::env::apply(&mut config);
        config.connect_timeout(CONNECT_TIMEOUT);
        // A lock held elsewhere (a node's, an operator's psql) or a stuck
        // statement answers `ledger_unavailable` (503, retry) in bounded
        // time, not never (docs/DEPLOY.md §Exactly once). Kept beside any
        // options the URL gives.
        let options = match config.get_options() {
            Some(given) => format!("{given} {SESSION_TIMEOUTS}"),
            None => SESSION_TIMEOUTS.to_string(),
        };
        config.options(&options);
        let pool = r2d2::Pool::builder()
            .max_size(POOL_SIZE + u32::try_from(writers()).unwrap_or(1))
            .connection_timeout(CONNECT_TIMEOUT)
            .build_unchecked(Manager(PostgresConnectionManager::new(
                config.clone(),
                NoTls,
            )));
        Ok(PgLedger {
            name: redact(url),
            pool,
            config: Arc::new(config),
            memory: None,
            schema_seen: Arc::default(),
        })
    }

    /// The ledger's name in messages: its URL without the password.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A database failure as the operator needs it: the server's message
    /// (and detail), not only "db error".
    pub(super) fn db_error(&self, e: &postgres::Error) -> Error {
        self.unavailable(db_text(e))
    }

    pub(super) fn unavailable(&self, reason: impl std::fmt::Display) -> Error {
        Error::LedgerUnavailable {
            path: PathBuf::from(&self.name),
            reason: reason.to_string(),
        }
    }

    /// A read's failure: an absent schema names its remedy.
    pub(super) fn read_error(&self, e: &postgres::Error) -> Error {
        if e.code() == Some(&postgres::error::SqlState::UNDEFINED_TABLE) {
            self.unavailable(format!(
                "the database has no ledger schema (or an older one); run `issuer ledger migrate --ledger {}`",
                self.name
            ))
        } else {
            self.db_error(e)
        }
    }

    pub(super) fn conn(&self) -> Result<r2d2::PooledConnection<Manager>, Error> {
        if let Some(conn) = self.pool.try_get() {
            return Ok(conn);
        }
        if self.pool.state().connections == 0 {
            // No connection yet (a command's first, or the database was
            // away): one attempt of our own says a refused login at once
            // (`ledger_login_refused`, not retried) and an unreachable
            // server with its cause, not after the pool's retries.
            if let Err(e) = self.config.connect(NoTls) {
                return Err(match refusal(&e) {
                    Some(reason) => Error::LedgerLoginRefused {
                        ledger: self.name.clone(),
                        reason,
                    },
                    None => self.unavailable(format!("cannot reach the database: {}", db_text(&e))),
                });
            }
        }
        self.pool
            .get()
            .map_err(|e| self.unavailable(format!("cannot reach the database: {e}")))
    }

    /// The unit's sale, by one statement outside any transaction (a
    /// statement is a snapshot of its own), prepared once a connection.
    pub fn sale(&self, u: ops::UnitRef) -> Result<Option<SaleRow>, Error> {
        Ok(self.unit_row(SALE_ROW, u)?.as_ref().map(sale_row))
    }

    /// The first redemption of a unit, if any.
    pub fn lookup(
        &self,
        game: Game,
        emission: u32,
        block: u32,
        index: u32,
    ) -> Result<Option<Recorded>, Error> {
        let row = self.unit_row(
            "SELECT redeemed_at, prize_cents, seq FROM redemptions
             WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
            ops::UnitRef {
                game,
                emission,
                block,
                index,
            },
        )?;
        Ok(row.map(|r| Recorded {
            redeemed_at: r.get(0),
            prize_cents: small(r.get(1)),
            seq: r.get::<_, Option<i64>>(2).map(i64::unsigned_abs),
        }))
    }

    /// The first row of `sql` whose four parameters are the unit `u`, a
    /// statement prepared once a connection, outside any transaction.
    pub(super) fn unit_row(
        &self,
        sql: &'static str,
        u: ops::UnitRef,
    ) -> Result<Option<postgres::Row>, Error> {
        let mut conn = self.conn()?;
        let PgConn { client, statements } = &mut *conn;
        let statement = prepared(client, statements, sql).map_err(|e| self.read_error(&e))?;
        client
            .query_opt(
                &statement,
                &[
                    &u.game.slug(),
                    &i64::from(u.emission),
                    &i64::from(u.block),
                    &i64::from(u.index),
                ],
            )
            .map_err(|e| self.read_error(&e))
    }
}
