//! The ledger in a shared PostgreSQL database (docs/REDEMPTION.md
//! §PostgreSQL), for any number of redemption nodes: a second
//! [`LedgerStorage`], same rows, same log, same signed heads as SQLite.
//!
//! Each commit runs at READ COMMITTED with no lock shared by every
//! operation: exactly once is the primary key (game, emission, block,
//! unit_index), inserted with `ON CONFLICT DO NOTHING`, so the database
//! refuses a second row whatever the application believed. An entry is
//! committed queued (a `pending` number, no `seq`) and placed in the log
//! after the commit by the sequencer ([`super::pg_sequencer`]), which also
//! keeps the blocks' totals. An end of claims takes its emission's
//! advisory lock exclusively, and every operation on a unit of the emission
//! takes it shared before it reads whether claims ended: no payment
//! commits after an end of claims it did not see.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use postgres::{IsolationLevel, NoTls};
use r2d2_postgres::PostgresConnectionManager;

use super::backend::{Backend, LogReads, UnitReads};
use super::claims::EndOfClaims;
use super::log::{
    self, LedgerKey, LogEntry, LogSource, OwnedFields, Place, Snapshot, StoredEntry, StoredHead,
};
use super::operator::{Action, Gate, OperatorAction, Why};
use super::ops::{self, Done, KeptRow, LedgerTx, Logged, Op, PlayRow, SaleRow};
use super::pg_sequencer::Sequencer;
use super::tiles::{self, TileId};
use super::writer::LedgerStorage;
use super::{Entry, Recorded};
use crate::error::Error;
use crate::game::Game;
use crate::merkle::{Frontier, Hash};
use crate::store::Store;

/// The schema version this build writes (`ledger_schema.version`).
pub const SCHEMA_VERSION: i64 = 10;

/// Connections kept per process beside the writers': the sequencer's and
/// reads.
const POOL_SIZE: u32 = 6;

/// Every session's bounds: a lock waited for at most 1 s, a statement run
/// at most 10 s (a migration and an audit's reads lift them).
pub const SESSION_TIMEOUTS: &str = "-c lock_timeout=1000 -c statement_timeout=10000";

/// How long a request waits for a connection before "unavailable".
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Version 1 of the schema.
const SCHEMA_V1: &str = "
CREATE TABLE redemptions (
    game          TEXT   NOT NULL,
    emission      BIGINT NOT NULL,
    block         BIGINT NOT NULL,
    unit_index    BIGINT NOT NULL,
    unit_id       TEXT   NOT NULL,
    price_cents   BIGINT NOT NULL,
    lot           BIGINT NOT NULL,
    prize_cents   BIGINT NOT NULL,
    record_sha256 TEXT   NOT NULL,
    record        BYTEA  NOT NULL,
    rules_version BIGINT NOT NULL,
    stopped_after_rolls BIGINT,
    redeemed_at   TEXT   NOT NULL,
    seq           BIGINT NOT NULL UNIQUE,
    leaf_hash     BYTEA  NOT NULL,
    PRIMARY KEY (game, emission, block, unit_index)
);
CREATE TABLE block_totals (
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    block       BIGINT NOT NULL,
    units       BIGINT NOT NULL,
    paid_cents  BIGINT NOT NULL,
    PRIMARY KEY (game, emission, block)
);
CREATE TABLE log_state (
    one       BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    frontier  BYTEA   NOT NULL
);
INSERT INTO log_state (frontier) VALUES ('\\x0000000000000000');
CREATE TABLE ledger_heads (
    size        BIGINT PRIMARY KEY,
    root        BYTEA  NOT NULL,
    signed_at   TEXT   NOT NULL,
    checkpoint  TEXT   NOT NULL,
    signer      TEXT   NOT NULL
);
CREATE TABLE claims_ended (
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    statement   TEXT   NOT NULL,
    ended_at    TEXT   NOT NULL,
    PRIMARY KEY (game, emission)
);
";

/// Version 2: sales and plays (issue 13), in the log beside redemptions.
const SCHEMA_V2: &str = "
CREATE TABLE sales (
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    block       BIGINT NOT NULL,
    unit_index  BIGINT NOT NULL,
    sold_at     TEXT   NOT NULL,
    seq         BIGINT NOT NULL UNIQUE,
    leaf_hash   BYTEA  NOT NULL,
    PRIMARY KEY (game, emission, block, unit_index)
);
CREATE TABLE sale_cursor (
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    block       BIGINT NOT NULL,
    next_index  BIGINT NOT NULL,
    PRIMARY KEY (game, emission, block)
);
CREATE TABLE plays (
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    block       BIGINT NOT NULL,
    unit_index  BIGINT NOT NULL,
    rolls       BIGINT NOT NULL,
    ended       TEXT,
    ended_at    TEXT,
    updated_at  TEXT   NOT NULL,
    seq         BIGINT UNIQUE,
    leaf_hash   BYTEA,
    PRIMARY KEY (game, emission, block, unit_index)
);
";

/// Version 3: answers kept under idempotency keys (issue 19). Keys compare
/// bytewise (`COLLATE "C"`), so a batch's keys `KEY#n` are one index range.
const SCHEMA_V3: &str = "
CREATE TABLE idempotency (
    key         TEXT COLLATE \"C\" PRIMARY KEY,
    request     TEXT NOT NULL,
    what        TEXT NOT NULL,
    answer      TEXT NOT NULL,
    kept_at     TEXT NOT NULL
);
";

/// Version 4: an end of claims is a log entry (issue 21). Rows published
/// before have no seq until a node adopts them ([`PgStorage::open`]).
const SCHEMA_V4: &str = "
ALTER TABLE claims_ended ADD COLUMN seq BIGINT UNIQUE, ADD COLUMN leaf_hash BYTEA;
";

/// Version 5: entries are committed queued and sequenced after (issue
/// 21): a `pending` number from one sequence orders the queue; an entry's
/// `seq` and leaf hash are set by the sequencer. Ends of claims published
/// before they were logged are queued now, oldest first.
const SCHEMA_V5: &str = "
CREATE SEQUENCE log_pending;
ALTER TABLE redemptions ADD COLUMN pending BIGINT UNIQUE,
    ALTER COLUMN seq DROP NOT NULL, ALTER COLUMN leaf_hash DROP NOT NULL;
ALTER TABLE sales ADD COLUMN pending BIGINT UNIQUE,
    ALTER COLUMN seq DROP NOT NULL, ALTER COLUMN leaf_hash DROP NOT NULL;
ALTER TABLE plays ADD COLUMN pending BIGINT UNIQUE;
ALTER TABLE claims_ended ADD COLUMN pending BIGINT UNIQUE;
CREATE INDEX redemptions_queue ON redemptions (pending) WHERE seq IS NULL;
CREATE INDEX sales_queue ON sales (pending) WHERE seq IS NULL;
CREATE INDEX plays_queue ON plays (pending) WHERE seq IS NULL;
UPDATE claims_ended SET pending = q.n FROM (
    SELECT game, emission, nextval('log_pending') AS n FROM (
        SELECT game, emission FROM claims_ended WHERE seq IS NULL ORDER BY ended_at, game, emission
    ) o
) q WHERE claims_ended.game = q.game AND claims_ended.emission = q.emission;
";

/// Version 6: the log's tree as tiles (docs/REDEMPTION.md §Tiles), filled
/// by the sequencer (from every leaf, once, on a ledger written before).
const SCHEMA_V6: &str = "
CREATE TABLE log_tiles (
    level   SMALLINT NOT NULL,
    idx     BIGINT   NOT NULL,
    hashes  BYTEA    NOT NULL,
    PRIMARY KEY (level, idx)
);
";

/// The server's refusal of a login or of the connection's settings, which
/// no retry mends: an authentication failure (SQLSTATE class 28), an
/// unknown database (3D000), a setting refused, or settings that cannot
/// connect (no user).
fn refusal(e: &postgres::Error) -> Option<String> {
    use postgres::error::SqlState;
    let refused = match e.code() {
        Some(code) => {
            code.code().starts_with("28")
                || *code == SqlState::INVALID_CATALOG_NAME
                || *code == SqlState::INVALID_PARAMETER_VALUE
                || *code == SqlState::UNDEFINED_OBJECT
        }
        None => e.to_string().starts_with("invalid configuration"),
    };
    refused.then(|| db_text(e))
}

/// Version 7: the ledger's identity (issue 22), which the emissions sold
/// through it record (docs/REDEMPTION.md §One ledger per emission).
const SCHEMA_V7: &str = "
CREATE TABLE ledger_identity (id TEXT NOT NULL);
INSERT INTO ledger_identity (id) VALUES (replace(gen_random_uuid()::text, '-', ''));
";

/// Version 8: the operator's actions (issue 25), in the log like the
/// rest (docs/REDEMPTION.md §Suspend, withdraw and void).
const SCHEMA_V8: &str = "
CREATE TABLE operator_actions (
    id          BIGSERIAL PRIMARY KEY,
    action      TEXT   NOT NULL,
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    block       BIGINT,
    unit_index  BIGINT,
    reason      TEXT   NOT NULL,
    by_name     TEXT   NOT NULL,
    at          TEXT   NOT NULL,
    pending     BIGINT UNIQUE,
    seq         BIGINT UNIQUE,
    leaf_hash   BYTEA
);
CREATE INDEX operator_actions_emission ON operator_actions (game, emission);
CREATE UNIQUE INDEX operator_voids
    ON operator_actions (game, emission, block, unit_index) WHERE action = 'void';
CREATE INDEX operator_actions_queue ON operator_actions (pending) WHERE seq IS NULL;
";

/// Version 9: each sale's platform lane (issue 34; docs/SECURITY.md §Each
/// platform in its own lane): a sale made before has none, the
/// operator's alone.
const SCHEMA_V9: &str = "ALTER TABLE sales ADD COLUMN lane TEXT;";

/// Version 10: the log's one signing key (issue 35; docs/DEPLOY.md
/// §Machines and secrets), as a signed-note verifier key: every node signs
/// heads with it. A ledger upgraded keeps its latest head's signer; a new
/// one is claimed by its first node.
const SCHEMA_V10: &str = "
ALTER TABLE ledger_identity ADD COLUMN log_key TEXT;
UPDATE ledger_identity SET log_key = (SELECT signer FROM ledger_heads ORDER BY size DESC LIMIT 1);
";

/// [`super::sqlite_tx::FIRST_UNSOLD`] with PostgreSQL's parameters (`$1`
/// for `?1`).
static FIRST_UNSOLD: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| super::sqlite_tx::FIRST_UNSOLD.replace('?', "$"));

type Pool = r2d2::Pool<Manager>;

/// Statements prepared on one connection, by their text: prepared once
/// per connection, not once per transaction (a prepare is a round trip).
type Statements = HashMap<&'static str, postgres::Statement>;

/// A pooled connection with its prepared statements.
pub(super) struct PgConn {
    client: postgres::Client,
    statements: Statements,
}

impl std::ops::Deref for PgConn {
    type Target = postgres::Client;
    fn deref(&self) -> &postgres::Client {
        &self.client
    }
}

impl std::ops::DerefMut for PgConn {
    fn deref_mut(&mut self) -> &mut postgres::Client {
        &mut self.client
    }
}

/// r2d2's PostgreSQL manager, its connections keeping their statements.
pub(super) struct Manager(PostgresConnectionManager<NoTls>);

impl r2d2::ManageConnection for Manager {
    type Connection = PgConn;
    type Error = postgres::Error;

    fn connect(&self) -> Result<PgConn, postgres::Error> {
        Ok(PgConn {
            client: self.0.connect()?,
            statements: HashMap::new(),
        })
    }

    fn is_valid(&self, conn: &mut PgConn) -> Result<(), postgres::Error> {
        self.0.is_valid(&mut conn.client)
    }

    fn has_broken(&self, conn: &mut PgConn) -> bool {
        self.0.has_broken(&mut conn.client)
    }
}

/// A PostgreSQL ledger: its name (the URL without password) and a pool.
#[derive(Clone)]
pub struct PgLedger {
    name: String,
    pool: Pool,
    /// The pool's connection settings (URL and libpq environment).
    config: Arc<postgres::Config>,
    /// The head this node remembers of the log (a writer's: its
    /// sequencer checks each turn that the log extends it, and remembers
    /// each head it signs; docs/REDEMPTION.md §The log never goes
    /// backwards).
    pub(super) memory: Option<Arc<super::remembered::HeadMemory>>,
}

/// Records a unit once, queued: no row is inserted when its key is there
/// already.
const INSERT_REDEMPTION: &str = "
INSERT INTO redemptions (game, emission, block, unit_index, unit_id, price_cents, lot, prize_cents,
    record_sha256, record, rules_version, stopped_after_rolls, redeemed_at, pending)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, nextval('log_pending'))
ON CONFLICT (game, emission, block, unit_index) DO NOTHING RETURNING pending, redeemed_at";

/// Adds units sequenced to their block's running totals.
pub(super) const ADD_TO_TOTALS: &str = "
INSERT INTO block_totals (game, emission, block, units, paid_cents) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (game, emission, block) DO UPDATE
SET units = block_totals.units + excluded.units,
    paid_cents = block_totals.paid_cents + excluded.paid_cents";

/// The current time in the database, as the ledger writes it.
/// Milliseconds, as the SQLite ledger writes them (`strftime('%f')`): the
/// time goes into hashed leaves, so both backends write one format
/// (docs/REDEMPTION.md §Tamper-evident log). Rows written before issue 19
/// keep their microseconds: a leaf is recomputed from the stored text.
pub(super) const NOW: &str =
    "SELECT to_char(date_trunc('milliseconds', clock_timestamp()) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

impl PgLedger {
    /// A pool on `url` (`postgres://…`); connects lazily, so a node starts
    /// while the database is down and answers "unavailable" until it is up.
    pub fn connect(url: &str) -> Result<PgLedger, Error> {
        let config: postgres::Config = url.parse().map_err(|e| Error::BadLedgerUrl {
            url: redact(url),
            reason: format!("{e}"),
        })?;
        let mut config = config;
        super::pg_env::apply(&mut config);
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
    fn read_error(&self, e: &postgres::Error) -> Error {
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

    /// Creates the schema, or upgrades it to [`SCHEMA_VERSION`]; returns
    /// the version found and the version now. Safe to run from several
    /// places at once (an advisory lock serialises them).
    pub fn migrate(&self) -> Result<(i64, i64), Error> {
        let db = |e: postgres::Error| self.db_error(&e);
        let mut conn = self.conn()?;
        let mut tx = conn.transaction().map_err(db)?;
        // A migration may wait for the nodes' locks and rewrite big tables.
        tx.batch_execute("SET LOCAL lock_timeout = '60s'; SET LOCAL statement_timeout = 0")
            .map_err(db)?;
        tx.execute("SELECT pg_advisory_xact_lock(7106601)", &[])
            .map_err(db)?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS ledger_schema (version BIGINT NOT NULL)")
            .map_err(db)?;
        let found: i64 = tx
            .query_opt("SELECT version FROM ledger_schema", &[])
            .map_err(db)?
            .map_or(0, |r| r.get(0));
        if found > SCHEMA_VERSION {
            return Err(self.unavailable(super::backend::newer_schema(found, SCHEMA_VERSION)));
        }
        if found == 0 {
            tx.batch_execute(SCHEMA_V1).map_err(db)?;
            tx.execute("INSERT INTO ledger_schema (version) VALUES (1)", &[])
                .map_err(db)?;
        }
        if found < 2 {
            tx.batch_execute(SCHEMA_V2).map_err(db)?;
        }
        if found < 3 {
            tx.batch_execute(SCHEMA_V3).map_err(db)?;
        }
        if found < 4 {
            tx.batch_execute(SCHEMA_V4).map_err(db)?;
        }
        if found < 5 {
            tx.batch_execute(SCHEMA_V5).map_err(db)?;
        }
        if found < 6 {
            tx.batch_execute(SCHEMA_V6).map_err(db)?;
        }
        if found < 7 {
            tx.batch_execute(SCHEMA_V7).map_err(db)?;
        }
        if found < 8 {
            tx.batch_execute(SCHEMA_V8).map_err(db)?;
        }
        if found < 9 {
            tx.batch_execute(SCHEMA_V9).map_err(db)?;
        }
        if found < 10 {
            tx.batch_execute(SCHEMA_V10).map_err(db)?;
        }
        tx.execute("UPDATE ledger_schema SET version = $1", &[&SCHEMA_VERSION])
            .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok((found, SCHEMA_VERSION))
    }

    /// Refuses a database whose schema is missing or of another version.
    pub fn check_schema(&self) -> Result<(), Error> {
        let mut conn = self.conn()?;
        let version = conn
            .query_opt("SELECT version FROM ledger_schema", &[])
            .map(|r| r.map(|r| r.get::<_, i64>(0)));
        match version {
            Ok(Some(SCHEMA_VERSION)) => Ok(()),
            Ok(Some(found)) if found > SCHEMA_VERSION => {
                Err(self.unavailable(super::backend::newer_schema(found, SCHEMA_VERSION)))
            }
            Ok(found) => Err(self.unavailable(format!(
                "the ledger schema is version {}, this issuer needs {SCHEMA_VERSION}; run `issuer ledger migrate --ledger {}`",
                found.unwrap_or(0),
                self.name
            ))),
            Err(e) if e.code() == Some(&postgres::error::SqlState::UNDEFINED_TABLE) => {
                Err(self.unavailable(format!(
                    "the database has no ledger schema; run `issuer ledger migrate --ledger {}`",
                    self.name
                )))
            }
            Err(e) => Err(self.db_error(&e)),
        }
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

    /// The first row of `sql` whose first four parameters are the unit `u`.
    fn unit_row(&self, sql: &str, u: ops::UnitRef) -> Result<Option<postgres::Row>, Error> {
        self.conn()?
            .query_opt(
                sql,
                &[
                    &u.game.slug(),
                    &i64::from(u.emission),
                    &i64::from(u.block),
                    &i64::from(u.index),
                ],
            )
            .map_err(|e| self.read_error(&e))
    }

    /// A READ COMMITTED transaction on `client`.
    fn begin<'c>(
        &self,
        client: &'c mut postgres::Client,
    ) -> Result<postgres::Transaction<'c>, Error> {
        client
            .build_transaction()
            .isolation_level(IsolationLevel::ReadCommitted)
            .start()
            .map_err(|e| self.db_error(&e))
    }

    /// Applies `ops` in one transaction ([`super::ops::apply`]), their
    /// entries queued for the sequencer. As [`super::Ledger::commit`].
    pub fn commit(&self, ops: &[Op]) -> Result<Vec<Result<Done, Error>>, Error> {
        let mut conn = self.conn()?;
        let PgConn { client, statements } = &mut *conn;
        let mut tx = self.begin(client)?;
        let mut pg = PgTx {
            tx: &mut tx,
            ledger: self,
            statements,
            queued: None,
            writing: true,
            read_ahead: HashMap::new(),
        };
        let at: String = pg
            .query_opt(NOW, &[])?
            .map(|r| r.get(0))
            .unwrap_or_default();
        let outcomes = ops::apply(&mut pg, &at, ops)?;
        let queued = pg.queued;
        if let Err(e) = tx.commit() {
            drop(conn);
            return self.resolve(ops, outcomes, queued, &e);
        }
        Ok(outcomes)
    }

    /// Stores the signed head of `frontier` (a head is never replaced).
    pub(super) fn store_head(
        &self,
        tx: &mut postgres::Transaction,
        frontier: &Frontier,
        key: &LedgerKey,
        at: &str,
    ) -> Result<String, Error> {
        let root = frontier.root();
        let size = i64::try_from(frontier.size()).unwrap_or(i64::MAX);
        let note = key.sign_checkpoint(frontier.size(), &root);
        tx.execute(
            "UPDATE log_state SET frontier = $1",
            &[&frontier.to_bytes()],
        )
        .map_err(|e| self.db_error(&e))?;
        let stored = tx
            .execute(
                "INSERT INTO ledger_heads (size, root, signed_at, checkpoint, signer)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (size) DO NOTHING",
                &[
                    &size,
                    &&root[..],
                    &at,
                    &note,
                    &log::verifier_key(&key.public()),
                ],
            )
            .map_err(|e| self.db_error(&e))?;
        if stored == 0 {
            return Err(Error::LedgerDamaged {
                path: PathBuf::from(&self.name),
                reason: format!(
                    "a signed head of size {} is stored already while log_state is behind it; nothing was sequenced; run `issuer ledger verify`",
                    frontier.size()
                ),
            });
        }
        Ok(note)
    }

    /// After a failed COMMIT, whose outcome is unknown: looks it up. A
    /// commit that queued an entry wrote a row with a `pending` number and
    /// a time no other commit has ([`QueuedRow`]): if that row is there,
    /// every outcome stands; if
    /// not, nothing was recorded (retry). A roll that ended nothing is
    /// looked up in its play. Never guesses.
    fn resolve(
        &self,
        ops: &[Op],
        outcomes: Vec<Result<Done, Error>>,
        queued: Option<QueuedRow>,
        cause: &postgres::Error,
    ) -> Result<Vec<Result<Done, Error>>, Error> {
        let unknown = |reason: String| Error::LedgerOutcomeUnknown {
            path: PathBuf::from(&self.name),
            reason: format!("commit: {cause}; lookup: {reason}"),
        };
        let mut conn = self.pool.get().map_err(|e| unknown(e.to_string()))?;
        let committed = match queued {
            Some(QueuedRow { table, pending, at }) => conn
                .query_opt(
                    &format!(
                        "SELECT 1 FROM {table} WHERE pending = $1 AND {} = $2",
                        time_column(table)
                    ),
                    &[&pending, &at],
                )
                .map_err(|e| unknown(e.to_string()))?
                .is_some(),
            None => false,
        };
        let mut resolved = Vec::with_capacity(outcomes.len());
        for (op, outcome) in ops.iter().zip(outcomes) {
            let kept = |conn: &mut postgres::Client, op: &Op| {
                let Op::Keyed(k) = op else {
                    return Ok(false);
                };
                conn.query_opt("SELECT request FROM idempotency WHERE key = $1", &[&k.key])
                    .map_err(|e| unknown(e.to_string()))
                    .map(|r| r.is_some_and(|r| r.get::<_, String>(0) == hex::encode(k.request)))
            };
            let stands = committed
                || match (&outcome, op.unkeyed()) {
                    (Err(_), _) => true,
                    // Kept under its key: by this commit or an earlier one.
                    (Ok(_), _) if kept(&mut conn, op)? => true,
                    (Ok(Done::Played(p)), Op::Play(o)) if p.seq.is_none() => {
                        let u = o.unit.place();
                        p.replayed
                            || conn
                                .query_opt(
                                    "SELECT rolls FROM plays
                                 WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                                    &[
                                        &u.game,
                                        &i64::from(u.emission),
                                        &i64::from(u.block),
                                        &i64::from(u.index),
                                    ],
                                )
                                .map_err(|e| unknown(e.to_string()))?
                                .is_some_and(|r| small(r.get(0)) >= p.play.rolls)
                    }
                    (Ok(_), _) => false,
                };
            resolved.push(if stands {
                outcome
            } else {
                Err(self.unavailable(format!("the commit failed ({cause})")))
            });
        }
        Ok(resolved)
    }
}

impl PgLedger {
    /// Runs the unit reads `f` ([`LedgerTx`]) in one read-only REPEATABLE
    /// READ transaction.
    fn unit_snapshot<T>(
        &self,
        f: impl FnOnce(&mut dyn LedgerTx) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.snapshot(|tx, statements| {
            f(&mut PgTx {
                tx,
                ledger: self,
                statements,
                queued: None,
                writing: false,
                read_ahead: HashMap::new(),
            })
        })
    }

    /// Runs `read` in one read-only REPEATABLE READ transaction: one
    /// snapshot of every table.
    fn read<T>(
        &self,
        read: impl FnOnce(&mut postgres::Transaction) -> Result<T, postgres::Error>,
    ) -> Result<T, Error> {
        // An audit's read of every row may take longer than a statement
        // of the money path may.
        self.snapshot(|tx, _| {
            tx.batch_execute("SET LOCAL statement_timeout = 0")
                .and_then(|()| read(tx))
                .map_err(|e| self.db_error(&e))
        })
    }

    /// `f` in one read-only REPEATABLE READ transaction.
    fn snapshot<T>(
        &self,
        f: impl FnOnce(&mut postgres::Transaction, &mut Statements) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let db = |e: postgres::Error| self.db_error(&e);
        let mut conn = self.conn()?;
        let PgConn { client, statements } = &mut *conn;
        let mut tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(db)?;
        let out = f(&mut tx, statements)?;
        tx.commit().map_err(db)?;
        Ok(out)
    }

    /// Per-block counts and amounts, each block reconciled against its
    /// running totals and each row replayed from its record, streamed (not
    /// held in memory), with the ledger digest and the database's integrity
    /// checks ([`INTEGRITY`]); as [`super::Ledger::summary`].
    pub fn summary(&self) -> Result<super::Summary, Error> {
        use postgres::fallible_iterator::FallibleIterator as _;
        let (figures, summing, integrity_ok) = self.read(|tx| {
            let blocks = tx.query(
                "SELECT r.game, r.emission, r.block, COUNT(*), SUM((r.lot <> 0)::int)::bigint,
                        SUM(r.prize_cents)::bigint,
                        -- The totals are the sequencer's: with the queue.
                        COALESCE(MAX(t.units), 0)
                          + COUNT(*) FILTER (WHERE r.seq IS NULL AND r.pending IS NOT NULL),
                        (COALESCE(MAX(t.paid_cents), 0) + COALESCE(SUM(r.prize_cents)
                          FILTER (WHERE r.seq IS NULL AND r.pending IS NOT NULL), 0))::bigint
                 FROM redemptions r LEFT JOIN block_totals t
                   ON t.game = r.game AND t.emission = r.emission AND t.block = r.block
                 GROUP BY r.game, r.emission, r.block ORDER BY r.game, r.emission, r.block",
                &[],
            )?;
            let figures: Vec<super::BlockFigures> = blocks
                .iter()
                .map(|r| super::BlockFigures {
                    game: r.get(0),
                    emission: small(r.get(1)),
                    block: small(r.get(2)),
                    units: r.get::<_, i64>(3).unsigned_abs(),
                    winners: r.get::<_, i64>(4).unsigned_abs(),
                    paid_cents: r.get::<_, i64>(5).unsigned_abs(),
                    total_units: r.get::<_, Option<i64>>(6).map(i64::unsigned_abs),
                    total_paid_cents: r.get::<_, Option<i64>>(7).map(i64::unsigned_abs),
                })
                .collect();
            let integrity_ok: bool = tx.query_one(INTEGRITY, &[])?.try_get(0)?;
            let mut summing = super::Summing::default();
            let mut rows = tx.query_raw(super::SUMMARY_ROWS, std::iter::empty::<i64>())?;
            while let Some(r) = rows.next()? {
                summing.add(super::SummaryRow {
                    game: r.try_get(0)?,
                    emission: small(r.try_get(1)?),
                    block: small(r.try_get(2)?),
                    index: small(r.try_get(3)?),
                    unit_id: r.try_get(4)?,
                    redeemed_at: r.try_get(8)?,
                    row: super::Row {
                        lot: u8::try_from(r.try_get::<_, i64>(5)?).unwrap_or(u8::MAX),
                        prize_cents: small(r.try_get(6)?),
                        record_sha256: r.try_get(7)?,
                        price_cents: small(r.try_get(9)?),
                        record: r.try_get(10)?,
                        rules_version: u16::try_from(r.try_get::<_, i64>(11)?).ok(),
                        stopped_after_rolls: r.try_get::<_, Option<i64>>(12)?.map(small),
                    },
                });
            }
            drop(rows);
            Ok((figures, summing, integrity_ok))
        })?;
        Ok(super::Summary::of(
            &self.name,
            figures,
            summing,
            integrity_ok && self.indexes_check()?,
        ))
    }

    /// Every sale, play and redemption of `game`'s `emission`, each kind
    /// read by one streamed query, the three in one REPEATABLE READ
    /// snapshot ([`super::emission_rows`]; the SQL text is SQLite's, its
    /// `?N` written `$N`).
    fn read_emission_rows(
        &self,
        game: &str,
        emission: u32,
        f: &mut super::emission_rows::EmissionReads,
    ) -> Result<(), Error> {
        use postgres::fallible_iterator::FallibleIterator as _;
        let db = |e: postgres::Error| self.read_error(&e);
        let emission = i64::from(emission);
        self.snapshot(|tx, _| {
            // An audit's read of every row may take longer than a
            // statement of the money path may.
            tx.batch_execute("SET LOCAL statement_timeout = 0")
                .map_err(db)?;
            for kind in super::emission_rows::Kind::ALL {
                let sql = kind.sql().replace('?', "$");
                let params: [&(dyn postgres::types::ToSql + Sync); 2] = [&game, &emission];
                let mut rows = tx.query_raw(&sql, params).map_err(db)?;
                while let Some(r) = rows.next().map_err(db)? {
                    f(kind.row(&r).map_err(db)?)?;
                }
            }
            Ok(())
        })
    }

    /// amcheck's `bt_index_check` on every B-tree index of the ledger's
    /// tables, when the extension is installed and this role may run it
    /// (docs/DEPLOY.md §PostgreSQL); `true` when it is not (nothing to
    /// say). A corrupt index is an error from amcheck: `false`.
    fn indexes_check(&self) -> Result<bool, Error> {
        let mut conn = self.conn()?;
        let usable: bool = conn
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'bt_index_check')
                   AND COALESCE(has_function_privilege(
                         (SELECT min(oid) FROM pg_proc WHERE proname = 'bt_index_check'), 'EXECUTE'),
                       false)",
                &[],
            )
            .and_then(|r| r.try_get(0))
            .map_err(|e| self.db_error(&e))?;
        if !usable {
            return Ok(true);
        }
        let indexes = conn
            .query(
                "SELECT i.indexrelid FROM pg_index i
                   JOIN pg_class t ON t.oid = i.indrelid
                   JOIN pg_class c ON c.oid = i.indexrelid
                   JOIN pg_am a ON a.oid = c.relam
                 WHERE a.amname = 'btree' AND t.relnamespace = to_regnamespace(current_schema())::oid
                   AND t.relname = ANY($1)",
                &[&LEDGER_TABLES.to_vec()],
            )
            .map_err(|e| self.db_error(&e))?;
        for index in indexes {
            let oid: postgres::types::Oid = index.get(0);
            let checked = conn.execute("SELECT bt_index_check($1::oid::regclass)", &[&oid]);
            match checked {
                Ok(_) => {}
                Err(e)
                    if e.as_db_error().is_some()
                        && e.code() != Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) =>
                {
                    return Ok(false);
                }
                Err(e) => return Err(self.db_error(&e)),
            }
        }
        Ok(true)
    }
}

/// The ledger's tables.
const LEDGER_TABLES: [&str; 11] = [
    "redemptions",
    "block_totals",
    "log_state",
    "ledger_heads",
    "sales",
    "sale_cursor",
    "plays",
    "idempotency",
    "claims_ended",
    "log_tiles",
    "operator_actions",
];

/// The database's integrity as the ledger can see it without privileges:
/// no checksum failure reported for the database (with data checksums
/// on), and no redemption, sale or end of claims that is neither in the
/// log nor queued for it (a row inserted behind the ledger's back).
const INTEGRITY: &str = "SELECT
    COALESCE((SELECT checksum_failures FROM pg_stat_database WHERE datname = current_database()), 0) = 0
    AND NOT EXISTS (SELECT 1 FROM redemptions WHERE seq IS NULL AND pending IS NULL)
    AND NOT EXISTS (SELECT 1 FROM sales WHERE seq IS NULL AND pending IS NULL)
    AND NOT EXISTS (SELECT 1 FROM claims_ended WHERE seq IS NULL AND pending IS NULL)
    AND NOT EXISTS (SELECT 1 FROM operator_actions WHERE seq IS NULL AND pending IS NULL)";

/// The last level-0 tile: how many leaves the tiles cover.
pub(super) const LAST_TILE: &str =
    "SELECT idx, hashes FROM log_tiles WHERE level = 0 ORDER BY idx DESC LIMIT 1";

/// Entries queued for the sequencer.
const QUEUED: &str = "SELECT
    (SELECT COUNT(*) FROM redemptions WHERE seq IS NULL AND pending IS NOT NULL)
  + (SELECT COUNT(*) FROM sales WHERE seq IS NULL AND pending IS NOT NULL)
  + (SELECT COUNT(*) FROM plays WHERE seq IS NULL AND pending IS NOT NULL)
  + (SELECT COUNT(*) FROM claims_ended WHERE seq IS NULL AND pending IS NOT NULL)
  + (SELECT COUNT(*) FROM operator_actions WHERE seq IS NULL AND pending IS NOT NULL)";

/// [`super::operator::COLUMNS`], its numbers read as PostgreSQL's BIGINT.
const OPERATOR_COLUMNS: &str = super::operator::COLUMNS;

/// An operator's action from its [`OPERATOR_COLUMNS`] (the first eight).
pub(super) fn operator_action(r: &postgres::Row) -> super::operator::OperatorAction {
    let opt = |i| r.get::<_, Option<i64>>(i).map(small);
    super::operator::OperatorAction::from_columns(
        r.get(0),
        r.get(1),
        small(r.get(2)),
        opt(3),
        opt(4),
        r.get(5),
        r.get(6),
        r.get(7),
    )
}

/// The head columns, as read back.
const HEAD_COLUMNS: &str = "size, root, signed_at, checkpoint, signer";

fn read_head(r: &postgres::Row) -> StoredHead {
    StoredHead {
        size: r.get::<_, i64>(0).unsigned_abs(),
        root: r.get(1),
        signed_at: r.get(2),
        checkpoint: r.get(3),
        signer: Some(r.get(4)),
    }
}

/// A redemption row's facts (the columns of `super::columns::REDEMPTION_COLUMNS`).
pub(super) fn owned_fields(row: &postgres::Row) -> OwnedFields {
    OwnedFields {
        game: row.get(2),
        emission: small(row.get(3)),
        block: small(row.get(4)),
        index: small(row.get(5)),
        unit_id: row.get(6),
        lot: u8::try_from(row.get::<_, i64>(7)).unwrap_or(u8::MAX),
        prize_cents: small(row.get(8)),
        record_sha256: row.get(9),
        redeemed_at: row.get(10),
        stopped_after_rolls: row.get::<_, Option<i64>>(11).map(small),
    }
}

/// A redemption row (the columns of `super::columns::REDEMPTION_COLUMNS`) as an entry.
fn redemption_entry(row: &postgres::Row) -> StoredEntry {
    owned_fields(row).into_entry(
        row.get::<_, Option<i64>>(0).map(i64::unsigned_abs),
        row.get(1),
    )
}

/// A sale row (game, emission, block, unit_index, seq, leaf_hash,
/// sold_at) as an entry.
fn sale_entry(r: &postgres::Row) -> StoredEntry {
    let (game, emission, block, index) = place(r);
    let p = Place {
        game: &game,
        emission,
        block,
        index,
    };
    let sold_at: String = r.get(6);
    LogEntry::Sale {
        unit: p,
        sold_at: &sold_at,
    }
    .stored(r.get::<_, Option<i64>>(4).map(i64::unsigned_abs), r.get(5))
}

/// The place columns (game, emission, block, unit_index) of a row.
fn place(row: &postgres::Row) -> (String, u32, u32, u32) {
    (
        row.get(0),
        small(row.get(1)),
        small(row.get(2)),
        small(row.get(3)),
    )
}

/// The entries of rows read from each table (the columns of
/// [`LogSource::snapshot`]'s queries).
fn stored_entries(
    redemptions: &[postgres::Row],
    sales: &[postgres::Row],
    plays: &[postgres::Row],
    claims: &[postgres::Row],
    actions: &[postgres::Row],
) -> Vec<StoredEntry> {
    let mut entries: Vec<StoredEntry> = redemptions.iter().map(redemption_entry).collect();
    entries.extend(sales.iter().map(sale_entry));
    for r in plays {
        let (game, emission, block, index) = place(r);
        let p = Place {
            game: &game,
            emission,
            block,
            index,
        };
        let (how, ended_at) = (
            r.get::<_, Option<String>>(7).unwrap_or_default(),
            r.get::<_, Option<String>>(8).unwrap_or_default(),
        );
        entries.push(
            LogEntry::PlayEnd {
                unit: p,
                rolls: small(r.get(6)),
                how: &how,
                ended_at: &ended_at,
            }
            .stored(Some(r.get::<_, i64>(4).unsigned_abs()), r.get(5)),
        );
    }
    for r in claims {
        let s = EndOfClaims {
            game: r.get(0),
            emission: small(r.get(1)),
            statement: r.get(2),
            ended_at: r.get(3),
        };
        entries.push(
            LogEntry::EndOfClaims(&s).stored(Some(r.get::<_, i64>(4).unsigned_abs()), r.get(5)),
        );
    }
    for r in actions {
        let a = operator_action(r);
        entries.push(
            LogEntry::Operator(&a)
                .stored(r.get::<_, Option<i64>>(8).map(i64::unsigned_abs), r.get(9)),
        );
    }
    entries
}

impl LogSource for PgLedger {
    fn log_name(&self) -> String {
        self.name.clone()
    }

    fn snapshot(&self) -> Result<Snapshot, Error> {
        // Rows queued for the sequencer are counted, not read: they are not
        // in the log yet. A row with neither seq nor pending number was
        // inserted behind the ledger's back.
        let (redemptions, sales, plays, claims, actions, heads, pending, tiles) = self.read(|tx| {
            Ok((
                tx.query(
                    &format!(
                        "SELECT {} FROM redemptions WHERE seq IS NOT NULL OR pending IS NULL",
                        super::columns::REDEMPTION_COLUMNS
                    ),
                    &[],
                )?,
                tx.query(
                    "SELECT game, emission, block, unit_index, seq, leaf_hash, sold_at FROM sales
                     WHERE seq IS NOT NULL OR pending IS NULL",
                    &[],
                )?,
                tx.query(
                    "SELECT game, emission, block, unit_index, seq, leaf_hash, rolls, ended, ended_at
                     FROM plays WHERE seq IS NOT NULL",
                    &[],
                )?,
                // Rows without a seq are pre-log rows (see the SQLite
                // ledger's `read_sales_and_plays`).
                tx.query(
                    "SELECT game, emission, statement, ended_at, seq, leaf_hash
                     FROM claims_ended WHERE seq IS NOT NULL",
                    &[],
                )?,
                tx.query(
                    &format!(
                        "SELECT {OPERATOR_COLUMNS}, seq, leaf_hash FROM operator_actions
                         WHERE seq IS NOT NULL OR pending IS NULL"
                    ),
                    &[],
                )?,
                tx.query(&format!("SELECT {HEAD_COLUMNS} FROM ledger_heads"), &[])?,
                tx.query_one(QUEUED, &[])?.get::<_, i64>(0).unsigned_abs(),
                tx.query("SELECT level, idx, hashes FROM log_tiles", &[])?,
            ))
        })?;
        let entries = stored_entries(&redemptions, &sales, &plays, &claims, &actions);
        Ok(Snapshot {
            entries,
            heads: heads.iter().map(read_head).collect(),
            pending,
            tiles: tiles
                .iter()
                .map(|r| {
                    let level = u8::try_from(r.get::<_, i16>(0)).unwrap_or(u8::MAX);
                    ((level, r.get::<_, i64>(1).unsigned_abs()), r.get(2))
                })
                .collect(),
        })
    }

    fn latest_head(&self) -> Result<Option<StoredHead>, Error> {
        let row = self
            .conn()?
            .query_opt(
                &format!("SELECT {HEAD_COLUMNS} FROM ledger_heads ORDER BY size DESC LIMIT 1"),
                &[],
            )
            .map_err(|e| self.db_error(&e))?;
        Ok(row.as_ref().map(read_head))
    }

    fn latest_witnessed_head(&self) -> Result<Option<StoredHead>, Error> {
        let row = self
            .conn()?
            .query_opt(
                &format!(
                    "SELECT {HEAD_COLUMNS} FROM ledger_heads WHERE {} ORDER BY size DESC LIMIT 1",
                    super::columns::COSIGNED_NOTE
                ),
                &[],
            )
            .map_err(|e| self.db_error(&e))?;
        Ok(row.as_ref().map(read_head))
    }

    fn entries(&self, from: u64, to: u64) -> Result<Vec<String>, Error> {
        let (from_i, to_i) = (
            i64::try_from(from).unwrap_or(i64::MAX),
            i64::try_from(to).unwrap_or(i64::MAX),
        );
        // Each table's `seq` is unique, so indexed; queued rows have none.
        let range = "seq >= $1 AND seq < $2";
        let (redemptions, sales, plays, claims, actions) = self.read(|tx| {
            Ok((
                tx.query(
                    &format!(
                        "SELECT {} FROM redemptions WHERE {range}",
                        super::columns::REDEMPTION_COLUMNS
                    ),
                    &[&from_i, &to_i],
                )?,
                tx.query(
                    &format!(
                        "SELECT game, emission, block, unit_index, seq, leaf_hash, sold_at FROM sales
                         WHERE {range}"
                    ),
                    &[&from_i, &to_i],
                )?,
                tx.query(
                    &format!(
                        "SELECT game, emission, block, unit_index, seq, leaf_hash, rolls, ended, ended_at
                         FROM plays WHERE {range}"
                    ),
                    &[&from_i, &to_i],
                )?,
                tx.query(
                    &format!(
                        "SELECT game, emission, statement, ended_at, seq, leaf_hash
                         FROM claims_ended WHERE {range}"
                    ),
                    &[&from_i, &to_i],
                )?,
                tx.query(
                    &format!(
                        "SELECT {OPERATOR_COLUMNS}, seq, leaf_hash FROM operator_actions WHERE {range}"
                    ),
                    &[&from_i, &to_i],
                )?,
            ))
        })?;
        let entries = stored_entries(&redemptions, &sales, &plays, &claims, &actions);
        log::in_order(from, entries, std::path::Path::new(&self.name))
    }

    fn tile(&self, (level, index): TileId) -> Result<Vec<Hash>, Error> {
        let row = self
            .conn()?
            .query_opt(
                "SELECT hashes FROM log_tiles WHERE level = $1 AND idx = $2",
                &[&i16::from(level), &i64::try_from(index).unwrap_or(i64::MAX)],
            )
            .map_err(|e| self.read_error(&e))?;
        log::decoded(level, index, row.map(|r| r.get(0)))
    }

    fn tiles_covered(&self) -> Result<u64, Error> {
        let row = self
            .conn()?
            .query_opt(LAST_TILE, &[])
            .map_err(|e| self.read_error(&e))?;
        Ok(tiles::covered(row.map(|r| {
            (
                r.get::<_, i64>(0).unsigned_abs(),
                r.get::<_, Vec<u8>>(1).len() / 32,
            )
        })))
    }

    fn redemption_entry(&self, p: Place) -> Result<Option<StoredEntry>, Error> {
        let row = self
            .conn()?
            .query_opt(
                &format!(
                    "SELECT {} FROM redemptions WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                    super::columns::REDEMPTION_COLUMNS
                ),
                &[
                    &p.game,
                    &i64::from(p.emission),
                    &i64::from(p.block),
                    &i64::from(p.index),
                ],
            )
            .map_err(|e| self.db_error(&e))?;
        Ok(row.as_ref().map(redemption_entry))
    }

    fn sale_entry(&self, p: Place) -> Result<Option<StoredEntry>, Error> {
        let row = self
            .conn()?
            .query_opt(
                "SELECT game, emission, block, unit_index, seq, leaf_hash, sold_at FROM sales
                 WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                &[
                    &p.game,
                    &i64::from(p.emission),
                    &i64::from(p.block),
                    &i64::from(p.index),
                ],
            )
            .map_err(|e| self.db_error(&e))?;
        Ok(row.as_ref().map(sale_entry))
    }
}

/// [`LedgerTx`] inside a PostgreSQL transaction; statements are prepared
/// once per transaction.
struct PgTx<'t, 'c> {
    tx: &'t mut postgres::Transaction<'c>,
    ledger: &'t PgLedger,
    statements: &'t mut Statements,
    /// An entry this transaction queued ([`QueuedRow`]):
    /// its row is there once the commit is.
    queued: Option<QueuedRow>,
    /// A writing transaction (not a read-only snapshot).
    writing: bool,
    /// Each unit's redemption and sale as [`LedgerTx::prefetch`] read them
    /// for the batch (one query); dropped when a lock is taken, after
    /// which they may be stale, and per unit when it is written.
    read_ahead: HashMap<OwnedPlace, ReadAhead>,
}

/// A unit's place, owned.
type OwnedPlace = (String, u32, u32, u32);

/// A unit's redemption (time, prize), sale time and void time, read ahead.
type ReadAhead = (Option<(String, u32)>, Option<SaleRow>, Option<String>);

fn owned(p: Place) -> OwnedPlace {
    (p.game.to_string(), p.emission, p.block, p.index)
}

impl PgTx<'_, '_> {
    fn statement(&mut self, sql: &'static str) -> Result<postgres::Statement, Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.tx.prepare(sql).map_err(|e| self.ledger.db_error(&e))?;
        self.statements.insert(sql, s.clone());
        Ok(s)
    }

    fn query_opt(
        &mut self,
        sql: &'static str,
        values: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Option<postgres::Row>, Error> {
        let s = self.statement(sql)?;
        self.tx
            .query_opt(&s, values)
            .map_err(|e| self.ledger.db_error(&e))
    }

    fn execute(
        &mut self,
        sql: &'static str,
        values: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<u64, Error> {
        let s = self.statement(sql)?;
        self.tx
            .execute(&s, values)
            .map_err(|e| self.ledger.db_error(&e))
    }
}

/// A place as the four key parameters.
fn key(p: Place<'_>) -> (&str, i64, i64, i64) {
    (
        p.game,
        i64::from(p.emission),
        i64::from(p.block),
        i64::from(p.index),
    )
}

impl LedgerTx for PgTx<'_, '_> {
    /// Entries are queued; the sequencer appends them after the commit.
    fn log_edge(&mut self) -> Option<&mut Frontier> {
        None
    }

    fn gate(&mut self, game: &str, emission: u32) -> Result<Gate, Error> {
        // The lock before the reads, in a statement of its own (READ
        // COMMITTED reads as of each statement's start): an end of claims
        // or an operator's action being published is waited for, then
        // seen. The statements go in one round trip (the simple protocol;
        // a game slug is [a-z-]).
        if !game.bytes().all(|c| c.is_ascii_lowercase() || c == b'-') {
            return Err(Error::Internal {
                what: format!("the game slug {game:?} is not of a-z and -"),
            });
        }
        let replies = self
            .tx
            .simple_query(&format!(
                "SELECT pg_advisory_xact_lock_shared(hashtext('claims/{game}'), {});
                 SELECT ended_at FROM claims_ended WHERE game='{game}' AND emission={emission};
                 SELECT action, block, at, reason FROM operator_actions
                 WHERE game='{game}' AND emission={emission} AND action <> 'void' ORDER BY id",
                emission as i32
            ))
            .map_err(|e| self.ledger.db_error(&e))?;
        let mut gate = Gate::default();
        for m in &replies {
            let postgres::SimpleQueryMessage::Row(r) = m else {
                continue;
            };
            match r.columns()[0].name() {
                "ended_at" => gate.claims_ended = r.get(0).map(str::to_string),
                "action" => {
                    let Some(action) = r.get(0).and_then(Action::parse) else {
                        continue;
                    };
                    let block = r.get(1).and_then(|b| b.parse().ok());
                    let why = Why {
                        at: r.get(2).unwrap_or_default().to_string(),
                        reason: r.get(3).unwrap_or_default().to_string(),
                    };
                    gate.apply(action, block, why);
                }
                _ => {}
            }
        }
        Ok(gate)
    }

    fn lock_gate(&mut self, game: &str, emission: u32) -> Result<(), Error> {
        // The same lock an end of claims takes: the operations under way on
        // the emission finish first, the next wait and then see it.
        self.read_ahead.clear();
        self.query_opt(
            "SELECT pg_advisory_xact_lock(hashtext('claims/' || $1), $2::int)",
            &[&game, &(emission as i32)],
        )
        .map(drop)
    }

    fn insert_action(&mut self, a: &OperatorAction, logged: Logged) -> Result<(), Error> {
        deferred(logged)?;
        let row = self.query_opt(
            "INSERT INTO operator_actions (action, game, emission, block, unit_index, reason,
                 by_name, at, pending)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, nextval('log_pending')) RETURNING pending, at",
            &[
                &a.action.word(),
                &a.game,
                &i64::from(a.emission),
                &a.block.map(i64::from),
                &a.index.map(i64::from),
                &a.reason,
                &a.by,
                &a.at,
            ],
        )?;
        self.queue("operator_actions", row.as_ref());
        Ok(())
    }

    fn voided(&mut self, p: Place) -> Result<Option<String>, Error> {
        if let Some((_, _, voided)) = self.read_ahead.get(&owned(p)) {
            return Ok(voided.clone());
        }
        let (g, e, b, i) = key(p);
        Ok(self
            .query_opt(
                "SELECT at FROM operator_actions WHERE game=$1 AND emission=$2 AND block=$3
                 AND unit_index=$4 AND action = 'void'",
                &[&g, &e, &b, &i],
            )?
            .map(|r| r.get(0)))
    }

    fn prefetch(&mut self, units: &[Place], keys: &[&str]) -> Result<(), Error> {
        if !keys.is_empty() {
            let lock = self.statement(
                "SELECT pg_advisory_xact_lock(hashtext('idempotency'), k) FROM (
                     SELECT DISTINCT hashtext(key) AS k FROM unnest($1::text[]) AS key ORDER BY 1
                 ) sorted",
            )?;
            self.tx
                .query(&lock, &[&keys])
                .map_err(|e| self.ledger.db_error(&e))?;
        }
        if units.is_empty() {
            return Ok(());
        }
        let games: Vec<&str> = units.iter().map(|p| p.game).collect();
        let column =
            |f: fn(&Place) -> u32| -> Vec<i64> { units.iter().map(|p| i64::from(f(p))).collect() };
        let (emissions, blocks, indexes) = (
            column(|p| p.emission),
            column(|p| p.block),
            column(|p| p.index),
        );
        // The units' locks first, all in one order: two batches redeeming
        // the same units in other orders would each wait for the other's
        // uncommitted row (a deadlock) where they now take turns.
        let lock = self.statement(
            "SELECT pg_advisory_xact_lock(k, i) FROM (
                 SELECT DISTINCT hashtext('unit/' || g || '/' || e::text || '/' || b::text) AS k,
                        i::int AS i
                 FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) AS u(g, e, b, i)
                 ORDER BY 1, 2
             ) sorted",
        )?;
        self.tx
            .query(&lock, &[&games, &emissions, &blocks, &indexes])
            .map_err(|e| self.ledger.db_error(&e))?;
        let s = self.statement(
            "SELECT u.g, u.e, u.b, u.i, r.redeemed_at, r.prize_cents, s.sold_at, v.at, s.lane
             FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) AS u(g, e, b, i)
             LEFT JOIN redemptions r
               ON r.game = u.g AND r.emission = u.e AND r.block = u.b AND r.unit_index = u.i
             LEFT JOIN sales s
               ON s.game = u.g AND s.emission = u.e AND s.block = u.b AND s.unit_index = u.i
             LEFT JOIN operator_actions v
               ON v.action = 'void' AND v.game = u.g AND v.emission = u.e AND v.block = u.b
                  AND v.unit_index = u.i",
        )?;
        let rows = self
            .tx
            .query(&s, &[&games, &emissions, &blocks, &indexes])
            .map_err(|e| self.ledger.db_error(&e))?;
        for r in rows {
            let unit = (
                r.get::<_, String>(0),
                small(r.get(1)),
                small(r.get(2)),
                small(r.get(3)),
            );
            let redemption = r
                .get::<_, Option<String>>(4)
                .map(|at| (at, small(r.get::<_, Option<i64>>(5).unwrap_or_default())));
            let sale = r.get::<_, Option<String>>(6).map(|sold_at| SaleRow {
                sold_at,
                lane: r.get(8),
            });
            self.read_ahead.insert(unit, (redemption, sale, r.get(7)));
        }
        Ok(())
    }

    fn claims_row(
        &mut self,
        game: &str,
        emission: u32,
    ) -> Result<Option<(EndOfClaims, Option<u64>)>, Error> {
        // Waits for the operations on the emission's units under way.
        self.read_ahead.clear();
        self.query_opt(
            "SELECT pg_advisory_xact_lock(hashtext('claims/' || $1), $2::int)",
            &[&game, &(emission as i32)],
        )?;
        Ok(self
            .query_opt(
                "SELECT statement, ended_at, seq FROM claims_ended WHERE game=$1 AND emission=$2",
                &[&game, &i64::from(emission)],
            )?
            .map(|r| {
                (
                    EndOfClaims {
                        game: game.into(),
                        emission,
                        statement: r.get(0),
                        ended_at: r.get(1),
                    },
                    r.get::<_, Option<i64>>(2).map(i64::unsigned_abs),
                )
            }))
    }

    fn log_claims_end(&mut self, s: &EndOfClaims, logged: Logged) -> Result<(), Error> {
        deferred(logged)?;
        let row = self.query_opt(
            "INSERT INTO claims_ended (game, emission, statement, ended_at, pending)
             VALUES ($1, $2, $3, $4, nextval('log_pending'))
             ON CONFLICT (game, emission) DO NOTHING RETURNING pending, ended_at",
            &[&s.game, &i64::from(s.emission), &s.statement, &s.ended_at],
        )?;
        self.queue("claims_ended", row.as_ref());
        Ok(())
    }

    fn redemption(&mut self, p: Place) -> Result<Option<(String, u32)>, Error> {
        if let Some((redemption, _, _)) = self.read_ahead.get(&owned(p)) {
            return Ok(redemption.clone());
        }
        let (g, e, b, i) = key(p);
        Ok(self
            .query_opt(
                "SELECT redeemed_at, prize_cents FROM redemptions WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                &[&g, &e, &b, &i],
            )?
            .map(|r| (r.get(0), small(r.get(1)))))
    }

    fn insert_redemption(
        &mut self,
        entry: &Entry,
        at: &str,
        logged: Logged,
    ) -> Result<bool, Error> {
        deferred(logged)?;
        self.read_ahead.remove(&(
            entry.game.slug().to_string(),
            entry.emission,
            entry.block,
            entry.index,
        ));
        let (game, emission) = (entry.game.slug(), i64::from(entry.emission));
        let (block, index) = (i64::from(entry.block), i64::from(entry.index));
        let row = self.query_opt(
            INSERT_REDEMPTION,
            &[
                &game,
                &emission,
                &block,
                &index,
                &entry.unit_id,
                &i64::from(entry.price_cents),
                &i64::from(entry.lot),
                &i64::from(entry.prize_cents),
                &entry.record_sha256,
                &entry.record,
                &i64::from(entry.rules_version),
                &entry.stopped_after_rolls.map(i64::from),
                &at,
            ],
        )?;
        self.queue("redemptions", row.as_ref());
        Ok(row.is_some())
    }

    fn sale(&mut self, p: Place) -> Result<Option<SaleRow>, Error> {
        if let Some((_, sale, _)) = self.read_ahead.get(&owned(p)) {
            return Ok(sale.clone());
        }
        let (g, e, b, i) = key(p);
        Ok(self
            .query_opt(
                "SELECT sold_at, lane FROM sales WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                &[&g, &e, &b, &i],
            )?
            .map(|r| SaleRow {
                sold_at: r.get(0),
                lane: r.get(1),
            }))
    }

    fn insert_sale(
        &mut self,
        p: Place,
        at: &str,
        lane: Option<&str>,
        logged: Logged,
    ) -> Result<(), Error> {
        deferred(logged)?;
        self.read_ahead.remove(&owned(p));
        let (g, e, b, i) = key(p);
        let row = self.query_opt(
            "INSERT INTO sales (game, emission, block, unit_index, sold_at, lane, pending)
             VALUES ($1, $2, $3, $4, $5, $6, nextval('log_pending')) RETURNING pending, sold_at",
            &[&g, &e, &b, &i, &at, &lane],
        )?;
        self.queue("sales", row.as_ref());
        Ok(())
    }

    fn sale_cursor(&mut self, game: &str, emission: u32, block: u32) -> Result<u32, Error> {
        // What was read before the lock may be stale after it.
        self.read_ahead.clear();
        // Sales of one block take turns (the cursor and the first unsold
        // unit are read after the lock, in statements of their own).
        self.query_opt(
            "SELECT pg_advisory_xact_lock(hashtext('sales/' || $1 || '/' || $2::bigint::text), $3::int)",
            &[&game, &i64::from(emission), &(block as i32)],
        )?;
        Ok(self
            .query_opt(
                "SELECT next_index FROM sale_cursor WHERE game=$1 AND emission=$2 AND block=$3",
                &[&game, &i64::from(emission), &i64::from(block)],
            )?
            .map_or(0, |r| small(r.get(0))))
    }

    fn first_unsold(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        from: u32,
    ) -> Result<u32, Error> {
        Ok(self
            .query_opt(
                FIRST_UNSOLD.as_str(),
                &[
                    &game,
                    &i64::from(emission),
                    &i64::from(block),
                    &i64::from(from),
                ],
            )?
            .map_or(u32::MAX, |r| small(r.get(0))))
    }

    fn kept(&mut self, key: &str) -> Result<Option<KeptRow>, Error> {
        if self.writing {
            // A key used at once on two writers (or nodes): the second
            // waits, then finds the first's answer.
            self.query_opt(
                "SELECT pg_advisory_xact_lock(hashtext('idempotency'), hashtext($1))",
                &[&key],
            )?;
        }
        let Some(row) = self.query_opt(
            "SELECT request, what, answer FROM idempotency WHERE key = $1",
            &[&key],
        )?
        else {
            return Ok(None);
        };
        let answer: String = row.get(2);
        KeptRow::read(
            Path::new(&self.ledger.name),
            key,
            row.get(0),
            row.get(1),
            &answer,
        )
        .map(Some)
    }

    fn keep(&mut self, key: &str, row: &KeptRow, at: &str) -> Result<(), Error> {
        self.execute(
            "INSERT INTO idempotency (key, request, what, answer, kept_at) VALUES ($1, $2, $3, $4, $5)",
            &[&key, &row.request, &row.what, &row.answer_json(), &at],
        )
        .map(drop)
    }

    fn kept_batch(&mut self, key: &str) -> Result<Option<String>, Error> {
        let (from, to) = (format!("{key}#"), format!("{key}$"));
        Ok(self
            .query_opt(
                "SELECT request FROM idempotency WHERE key >= $1 AND key < $2 LIMIT 1",
                &[&from, &to],
            )?
            .map(|r| r.get(0)))
    }

    fn set_sale_cursor(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        next: u32,
    ) -> Result<(), Error> {
        self.execute(
            "INSERT INTO sale_cursor (game, emission, block, next_index) VALUES ($1, $2, $3, $4)
             ON CONFLICT (game, emission, block) DO UPDATE SET next_index = excluded.next_index",
            &[
                &game,
                &i64::from(emission),
                &i64::from(block),
                &i64::from(next),
            ],
        )
        .map(drop)
    }

    fn lock_unit(&mut self, p: Place) -> Result<(), Error> {
        self.read_ahead.clear();
        self.query_opt(
            "SELECT pg_advisory_xact_lock(hashtext('unit/' || $1 || '/' || $2::bigint::text || '/' || $3::bigint::text), $4::int)",
            &[&p.game, &i64::from(p.emission), &i64::from(p.block), &(p.index as i32)],
        )
        .map(drop)
    }

    fn play(&mut self, p: Place) -> Result<Option<PlayRow>, Error> {
        let (g, e, b, i) = key(p);
        Ok(self
            .query_opt(
                "SELECT rolls, ended FROM plays WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                &[&g, &e, &b, &i],
            )?
            .map(|r| PlayRow {
                rolls: small(r.get(0)),
                ended: r.get(1),
            }))
    }

    fn put_play(&mut self, p: Place, row: &PlayRow, at: &str, logged: Logged) -> Result<(), Error> {
        deferred(logged)?;
        let (g, e, b, i) = key(p);
        let ended_at = row.ended.as_ref().map(|_| at);
        let queued = self.query_opt(
            "INSERT INTO plays (game, emission, block, unit_index, rolls, ended, ended_at, updated_at, pending)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8,
                     CASE WHEN $6::text IS NULL THEN NULL ELSE nextval('log_pending') END)
             ON CONFLICT (game, emission, block, unit_index) DO UPDATE
             SET rolls = excluded.rolls, ended = excluded.ended, ended_at = excluded.ended_at,
                 updated_at = excluded.updated_at, pending = excluded.pending
             RETURNING pending, ended_at",
            &[
                &g,
                &e,
                &b,
                &i,
                &i64::from(row.rolls),
                &row.ended,
                &ended_at,
                &at,
            ],
        )?;
        if let Some(r) = queued.filter(|r| r.get::<_, Option<i64>>(0).is_some()) {
            self.queue("plays", Some(&r));
        }
        Ok(())
    }
}

impl PgTx<'_, '_> {
    /// Notes the entry `row` (`RETURNING pending, <its time>`) queued in
    /// `table`.
    fn queue(&mut self, table: &'static str, row: Option<&postgres::Row>) {
        if let Some(r) = row {
            self.queued = Some(QueuedRow {
                table,
                pending: r.get(0),
                at: r.get(1),
            });
        }
    }
}

/// An entry a transaction queued: its table, its `pending` number and
/// its time. The number alone does not name it after a crash or a
/// failover: numbers a transaction took and never committed are handed
/// out again (a sequence is not logged for each number), so a lookup by
/// number could find another commit's row; with the time (to the
/// millisecond, taken by this transaction) it cannot.
#[derive(Clone, Debug)]
pub(super) struct QueuedRow {
    table: &'static str,
    pending: i64,
    at: String,
}

/// The time column of a queued entry's table.
fn time_column(table: &str) -> &'static str {
    match table {
        "redemptions" => "redeemed_at",
        "sales" => "sold_at",
        "operator_actions" => "at",
        _ => "ended_at",
    }
}

/// PostgreSQL's entries are queued: a place given by the batch would be a
/// second sequencer.
fn deferred(logged: Logged) -> Result<(), Error> {
    match logged {
        None => Ok(()),
        Some(_) => Err(Error::Internal {
            what: "a PostgreSQL commit was given a log position; its entries are sequenced after"
                .into(),
        }),
    }
}

/// A PostgreSQL error's text: the server's message, detail and code for
/// an error the server sent; the client's own otherwise.
pub(super) fn db_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut text = format!("{} ({})", db.message(), db.code().code());
            if let Some(detail) = db.detail() {
                text.push_str(": ");
                text.push_str(detail);
            }
            text
        }
        None => match std::error::Error::source(e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}

/// A `u32` the ledger wrote as BIGINT.
pub(super) fn small(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// `url` without its password, to name the ledger in messages: neither
/// the URL's `user:password@` nor a `password=` parameter (`?password=…`,
/// or the key=value form's `password=…` or `password='…'`) is shown.
fn redact(url: &str) -> String {
    let url = match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_string(),
    };
    const KEY: &str = "password=";
    let mut out = String::with_capacity(url.len());
    let mut rest = url.as_str();
    while let Some(i) = rest.to_ascii_lowercase().find(KEY) {
        let start = i + KEY.len();
        out.push_str(&rest[..start]);
        out.push_str("<hidden>");
        let value = &rest[start..];
        let end = match value.strip_prefix('\'') {
            Some(quoted) => quoted.find('\'').map_or(value.len(), |e| e + 2),
            None => value
                .find(|c: char| c == '&' || c.is_whitespace())
                .unwrap_or(value.len()),
        };
        rest = &value[end..];
    }
    out.push_str(rest);
    out
}

/// A PostgreSQL ledger with the node's sequencer, which signs the heads it
/// makes with the node's ledger key. Its clones (one per writer thread,
/// [`WRITERS`]) share the sequencer, stopped (after a last drain) when the
/// last is dropped.
#[derive(Clone)]
pub struct PgStorage {
    ledger: PgLedger,
    _sequencer: Arc<Sequencer>,
}

/// Writer threads per node by default (`ISSUER_PG_WRITERS` sets it):
/// their transactions may overlap (nothing every operation shares is
/// locked), but on the 2-core machine of docs/PERFORMANCE.md one writer
/// batches best (§Shared PostgreSQL ledger, issue 21 run).
pub const WRITERS: usize = 1;

/// Writer threads per node: `ISSUER_PG_WRITERS` (1 to 64), else
/// [`WRITERS`].
#[must_use]
pub fn writers() -> usize {
    std::env::var("ISSUER_PG_WRITERS")
        .ok()
        .and_then(|w| w.parse().ok())
        .filter(|w| (1..=64).contains(w))
        .unwrap_or(WRITERS)
}

impl PgLedger {
    /// One log, one identity: the ledger's heads are all signed by one key
    /// (`ledger_identity.log_key`), claimed by the first node that writes;
    /// a node holding another key (`key_file`) is refused, so two nodes
    /// never sign two logs over one ledger.
    pub fn claim_log(&self, key: &LedgerKey, key_file: &Path) -> Result<(), Error> {
        let ours = log::verifier_key(&key.public());
        let mut conn = self.conn()?;
        let db = |e: postgres::Error| self.db_error(&e);
        conn.execute(
            "UPDATE ledger_identity SET log_key = $1 WHERE log_key IS NULL",
            &[&ours],
        )
        .map_err(db)?;
        let theirs: Option<String> = conn
            .query_one("SELECT log_key FROM ledger_identity", &[])
            .map_err(db)?
            .get(0);
        match theirs {
            Some(theirs) if theirs != ours => Err(Error::BadKey {
                path: key_file.to_path_buf(),
                reason: format!(
                    "it is not the key of the log of ledger {} (the log is signed by {theirs}; this key is {ours}): every node of one ledger signs its heads with the one log key; copy keys/ledger.key.pem (0600) and keys/ledger.pub.pem from a node of this ledger, then start again (docs/DEPLOY.md §Machines and secrets)",
                    self.name
                ),
            }),
            _ => Ok(()),
        }
    }
}

/// What putting published entries back on a PostgreSQL ledger did.
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

/// A log line without its position (`kind|seq|rest` → `kind|rest`): a
/// queued row's line and a published one compare by it.
fn unplaced(line: &str) -> String {
    let mut parts = line.splitn(3, '|');
    let kind = parts.next().unwrap_or_default();
    let _seq = parts.next();
    format!("{kind}|{}", parts.next().unwrap_or_default())
}

impl PgLedger {
    /// Puts `entries` of the published log back at their places
    /// (`ledger recover`, docs/REDEMPTION.md §Recovery), in one
    /// transaction under the sequencer's lock: a row the restored database
    /// holds queued is placed where the log holds it, any other row is
    /// made again; then the tiles, the blocks' totals and one head signed
    /// with `key`. The entries must start where the log ends, in order.
    pub fn put_back(&self, key: &LedgerKey, entries: &[ops::Restored]) -> Result<PutBack, Error> {
        use super::pg_sequencer::{read_queue, ToPlace, SEQUENCER_LOCK, TABLES};
        let db = |e: postgres::Error| self.db_error(&e);
        let damaged = |reason: String| Error::LedgerDamaged {
            path: PathBuf::from(&self.name),
            reason,
        };
        let mut conn = self.conn()?;
        let PgConn { client, statements } = &mut *conn;
        let mut tx = self.begin(client)?;
        tx.batch_execute("SET LOCAL statement_timeout = 0")
            .map_err(db)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SEQUENCER_LOCK])
            .map_err(db)?;
        let kept: Vec<u8> = tx
            .query_one("SELECT frontier FROM log_state FOR UPDATE", &[])
            .map_err(db)?
            .get(0);
        let mut frontier = Frontier::from_bytes(&kept)
            .ok_or_else(|| damaged("log_state holds no valid frontier".into()))?;
        let old_size = frontier.size();
        if let Some((r, at)) = entries.iter().zip(old_size..).find(|(r, at)| r.seq != *at) {
            return Err(damaged(format!(
                "entry {} cannot be put back at place {at} (the log holds {old_size} entries); nothing was put back: run `issuer ledger recover` again",
                r.seq
            )));
        }
        let covered = tiles::covered(tx.query_opt(LAST_TILE, &[]).map_err(db)?.map(|r| {
            (
                r.get::<_, i64>(0).unsigned_abs(),
                r.get::<_, Vec<u8>>(1).len() / 32,
            )
        }));
        let queue = read_queue(&mut tx, i64::MAX).map_err(db)?;
        let mut waiting: HashMap<String, std::collections::VecDeque<(usize, i64)>> = HashMap::new();
        for (pending, q) in &queue {
            waiting
                .entry(unplaced(&q.line(0)))
                .or_default()
                .push_back((q.table(), *pending));
        }
        let mut placing = Vec::with_capacity(entries.len());
        let mut queued_placed = 0;
        {
            let mut pg = PgTx {
                tx: &mut tx,
                ledger: self,
                statements,
                queued: None,
                writing: true,
                read_ahead: HashMap::new(),
            };
            for r in entries {
                let found = waiting
                    .get_mut(&unplaced(&r.line))
                    .and_then(std::collections::VecDeque::pop_front);
                let (table, pending) = match found {
                    Some(f) => {
                        queued_placed += 1;
                        f
                    }
                    None => {
                        let q = pg.insert_restored(r)?.ok_or_else(|| damaged(format!(
                            "entry {} ({}) cannot be put back: the ledger holds a row for it the log does not; nothing was put back",
                            r.seq,
                            r.line.trim_end()
                        )))?;
                        (
                            TABLES.iter().position(|t| *t == q.table).unwrap_or(0),
                            q.pending,
                        )
                    }
                };
                let paid = match &r.row {
                    ops::RestoredRow::Redemption { entry, .. } => Some((
                        (entry.game.slug().to_string(), entry.emission, entry.block),
                        entry.prize_cents,
                    )),
                    _ => None,
                };
                placing.push(ToPlace {
                    table,
                    pending,
                    line: r.line.clone(),
                    paid,
                });
            }
        }
        let leaves = self.place_entries(&mut tx, &mut frontier, &placing)?;
        let note = self.close_turn(&mut tx, &frontier, (old_size, covered), &leaves, key)?;
        tx.commit().map_err(db)?;
        Ok(PutBack {
            note,
            queued_placed,
            queued_after: queue.len() as u64 - queued_placed,
        })
    }
}

impl PgTx<'_, '_> {
    /// Makes the row of a published entry again, queued; the row queued
    /// (`None`: the ledger holds the row already).
    fn insert_restored(&mut self, r: &ops::Restored) -> Result<Option<QueuedRow>, Error> {
        self.queued = None;
        match &r.row {
            ops::RestoredRow::Sale {
                unit,
                sold_at,
                lane,
            } => self.insert_sale(unit.place(), sold_at, lane.as_deref(), None)?,
            ops::RestoredRow::Play {
                unit,
                play,
                ended_at,
            } => self.put_play(unit.place(), play, ended_at, None)?,
            ops::RestoredRow::Redemption { entry, redeemed_at } => {
                self.insert_redemption(entry, redeemed_at, None)?;
            }
            ops::RestoredRow::EndOfClaims(s) => self.log_claims_end(s, None)?,
            ops::RestoredRow::Operator(a) => self.insert_action(a, None)?,
        }
        Ok(self.queued.take())
    }
}

impl PgStorage {
    /// The storage of `ledger`, signing with `store`'s ledger key (made if
    /// needed); refuses a database without the current schema.
    pub fn open(mut ledger: PgLedger, store: &Store) -> Result<PgStorage, Error> {
        ledger.check_schema()?;
        if let Some(identity) = Backend::identity(&ledger, false)? {
            let memory = super::remembered::HeadMemory::of(store, &identity);
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
        self.check_schema()?;
        self.unit_snapshot(f)?;
        Ok(true)
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

    fn summary(&self) -> Result<super::Summary, Error> {
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

    fn activity(&self) -> Result<Vec<super::BlockActivity>, Error> {
        self.check_schema()?;
        let rows = self
            .conn()?
            .query(super::ACTIVITY, &[])
            .map_err(|e| self.read_error(&e))?;
        Ok(rows
            .iter()
            .map(|r| super::BlockActivity {
                game: r.get(0),
                emission: small(r.get(1)),
                block: small(r.get(2)),
                sold: r.get::<_, i64>(3).unsigned_abs(),
                played: r.get::<_, i64>(4).unsigned_abs(),
                redeemed: r.get::<_, i64>(5).unsigned_abs(),
                paid_cents: r.get::<_, i64>(6).unsigned_abs(),
            })
            .collect())
    }

    fn emission_rows(
        &self,
        game: &str,
        emission: u32,
        f: &mut super::emission_rows::EmissionReads,
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_url_is_named_without_its_password() {
        assert_eq!(
            super::redact("postgres://redeem:s3cret@db:5432/ledger"),
            "postgres://redeem@db:5432/ledger"
        );
        assert_eq!(
            super::redact("postgres://db/ledger"),
            "postgres://db/ledger"
        );
        assert_eq!(
            super::redact("postgres://redeem@db/ledger?sslmode=require&password=s3cret&x=1"),
            "postgres://redeem@db/ledger?sslmode=require&password=<hidden>&x=1"
        );
        assert_eq!(
            super::redact("host=db user=redeem PASSWORD='a b' dbname=ledger"),
            "host=db user=redeem PASSWORD=<hidden> dbname=ledger"
        );
        assert_eq!(
            super::redact("host=db password=s3cret"),
            "host=db password=<hidden>"
        );
    }
}
