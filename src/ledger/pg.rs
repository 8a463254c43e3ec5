//! The ledger in a shared PostgreSQL database (docs/REDEMPTION.md
//! §PostgreSQL), for any number of redemption nodes: a second
//! [`LedgerStorage`], same rows, same log, same signed heads as SQLite.
//!
//! Each commit runs at READ COMMITTED and first locks the one row of
//! `log_state` (`FOR UPDATE`): committers (and `end-claims`) take turns, so
//! the log position `seq` the database hands out is gapless and the end of
//! claims read in the transaction is the latest published. Exactly once is
//! the primary key (game, emission, block, unit_index), inserted with
//! `ON CONFLICT DO NOTHING`: the database refuses a second row whatever the
//! application believed.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use ed25519_dalek::VerifyingKey;
use postgres::{IsolationLevel, NoTls};
use r2d2_postgres::PostgresConnectionManager;

use super::claims::EndOfClaims;
use super::log::{self, Head, LedgerKey, LogFinding, LogReport};
use super::writer::LedgerStorage;
use super::{Committed, Entry, Recorded};
use crate::error::Error;
use crate::game::{cents_to_euros, Game};
use crate::merkle::{self, Frontier};
use crate::store::Store;

/// The schema version this build writes (`ledger_schema.version`).
pub const SCHEMA_VERSION: i64 = 1;

/// Connections kept per process.
const POOL_SIZE: u32 = 4;

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

type Pool = r2d2::Pool<PostgresConnectionManager<NoTls>>;

/// A PostgreSQL ledger: its name (the URL without password) and a pool.
#[derive(Clone)]
pub struct PgLedger {
    name: String,
    pool: Pool,
}

/// Records a unit once: no row is inserted when its key is there already.
const INSERT_REDEMPTION: &str = "
INSERT INTO redemptions (game, emission, block, unit_index, unit_id, price_cents, lot, prize_cents,
    record_sha256, record, rules_version, stopped_after_rolls, redeemed_at, seq, leaf_hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
ON CONFLICT (game, emission, block, unit_index) DO NOTHING";

/// Adds a recorded unit to its block's running totals.
const ADD_TO_TOTALS: &str = "
INSERT INTO block_totals (game, emission, block, units, paid_cents) VALUES ($1, $2, $3, 1, $4)
ON CONFLICT (game, emission, block) DO UPDATE
SET units = block_totals.units + 1, paid_cents = block_totals.paid_cents + excluded.paid_cents";

/// The current time in the database, as the ledger writes it.
const NOW: &str =
    "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";

impl PgLedger {
    /// A pool on `url` (`postgres://…`); connects lazily, so a node starts
    /// while the database is down and answers "unavailable" until it is up.
    pub fn connect(url: &str) -> Result<PgLedger, Error> {
        let config: postgres::Config = url.parse().map_err(|e| Error::BadLedgerUrl {
            url: redact(url),
            reason: format!("{e}"),
        })?;
        let mut config = config;
        config.connect_timeout(CONNECT_TIMEOUT);
        let pool = r2d2::Pool::builder()
            .max_size(POOL_SIZE)
            .connection_timeout(CONNECT_TIMEOUT)
            .build_unchecked(PostgresConnectionManager::new(config, NoTls));
        Ok(PgLedger {
            name: redact(url),
            pool,
        })
    }

    /// The ledger's name in messages: its URL without the password.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    fn unavailable(&self, reason: impl std::fmt::Display) -> Error {
        Error::LedgerUnavailable {
            path: PathBuf::from(&self.name),
            reason: reason.to_string(),
        }
    }

    fn conn(&self) -> Result<r2d2::PooledConnection<PostgresConnectionManager<NoTls>>, Error> {
        self.pool
            .get()
            .map_err(|e| self.unavailable(format!("cannot reach the database: {e}")))
    }

    /// Creates the schema, or upgrades it to [`SCHEMA_VERSION`]; returns
    /// the version found and the version now. Safe to run from several
    /// places at once (an advisory lock serialises them).
    pub fn migrate(&self) -> Result<(i64, i64), Error> {
        let db = |e: postgres::Error| self.unavailable(e);
        let mut conn = self.conn()?;
        let mut tx = conn.transaction().map_err(db)?;
        tx.execute("SELECT pg_advisory_xact_lock(7106601)", &[])
            .map_err(db)?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS ledger_schema (version BIGINT NOT NULL)")
            .map_err(db)?;
        let found: i64 = tx
            .query_opt("SELECT version FROM ledger_schema", &[])
            .map_err(db)?
            .map_or(0, |r| r.get(0));
        if found > SCHEMA_VERSION {
            return Err(self.unavailable(format!(
                "the schema is version {found}, newer than this issuer's {SCHEMA_VERSION}; upgrade the issuer"
            )));
        }
        if found == 0 {
            tx.batch_execute(SCHEMA_V1).map_err(db)?;
            tx.execute(
                "INSERT INTO ledger_schema (version) VALUES ($1)",
                &[&SCHEMA_VERSION],
            )
            .map_err(db)?;
        }
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
            Err(e) => Err(self.unavailable(e)),
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
        let row = self
            .conn()?
            .query_opt(
                "SELECT redeemed_at, prize_cents FROM redemptions
                 WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                &[
                    &game.slug(),
                    &i64::from(emission),
                    &i64::from(block),
                    &i64::from(index),
                ],
            )
            .map_err(|e| self.unavailable(e))?;
        Ok(row.map(|r| Recorded {
            redeemed_at: r.get(0),
            prize_cents: small(r.get(1)),
        }))
    }

    /// Publishes `statement` (the first end of claims stands), after every
    /// commit under way: a redemption that commits after this returns sees
    /// it.
    pub fn publish_end_of_claims(&self, statement: &EndOfClaims) -> Result<(), Error> {
        let db = |e: postgres::Error| self.unavailable(e);
        let mut conn = self.conn()?;
        let mut tx = conn.transaction().map_err(db)?;
        tx.execute("SELECT one FROM log_state FOR UPDATE", &[])
            .map_err(db)?;
        tx.execute(
            "INSERT INTO claims_ended (game, emission, statement, ended_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (game, emission) DO NOTHING",
            &[
                &statement.game,
                &i64::from(statement.emission),
                &statement.statement,
                &statement.ended_at,
            ],
        )
        .map_err(db)?;
        tx.commit().map_err(db)
    }

    /// The published end of claims of `game`'s emission, if any.
    pub fn end_of_claims(&self, game: Game, emission: u32) -> Result<Option<EndOfClaims>, Error> {
        let row = self
            .conn()?
            .query_opt(
                "SELECT statement, ended_at FROM claims_ended WHERE game=$1 AND emission=$2",
                &[&game.slug(), &i64::from(emission)],
            )
            .map_err(|e| self.unavailable(e))?;
        Ok(row.map(|r| EndOfClaims {
            game: game.slug().into(),
            emission,
            statement: r.get(0),
            ended_at: r.get(1),
        }))
    }

    /// The latest head signed by `signer` (a node's ledger key), if any:
    /// a node serves the heads it signed, which its own key verifies.
    pub fn head_signed_by(&self, signer: &VerifyingKey) -> Result<Option<Head>, Error> {
        let row = self
            .conn()?
            .query_opt(
                "SELECT size, root, signed_at, checkpoint FROM ledger_heads
                 WHERE signer = $1 ORDER BY size DESC LIMIT 1",
                &[&log::verifier_key(signer)],
            )
            .map_err(|e| self.unavailable(e))?;
        Ok(row.map(|r| {
            let size = u64::try_from(r.get::<_, i64>(0)).unwrap_or_default();
            let root: Vec<u8> = r.get(1);
            let mut head = Head::from_row(size, &root, r.get(2), r.get(3));
            head.verifier_key = Some(log::verifier_key(signer));
            head
        }))
    }

    /// Records `entries` in one transaction, each at most once, refusing
    /// units of an emission whose claim period the issuer ended; signs the
    /// new head with `key`. As [`super::Ledger::commit`].
    pub fn commit(
        &self,
        entries: &[Entry],
        key: &LedgerKey,
    ) -> Result<Vec<Result<Committed, Error>>, Error> {
        let db = |e: postgres::Error| self.unavailable(e);
        let mut conn = self.conn()?;
        let mut tx = conn
            .build_transaction()
            .isolation_level(IsolationLevel::ReadCommitted)
            .start()
            .map_err(db)?;
        let kept: Vec<u8> = tx
            .query_one("SELECT frontier FROM log_state FOR UPDATE", &[])
            .map_err(db)?
            .get(0);
        let mut frontier = Frontier::from_bytes(&kept).ok_or_else(|| Error::LedgerDamaged {
            path: PathBuf::from(&self.name),
            reason: "log_state holds no valid frontier".into(),
        })?;
        let old_size = frontier.size();
        let at: String = tx.query_one(NOW, &[]).map_err(db)?.get(0);
        // Prepared once per batch: each unit then costs two round trips.
        let insert = tx.prepare(INSERT_REDEMPTION).map_err(db)?;
        let add_to_totals = tx.prepare(ADD_TO_TOTALS).map_err(db)?;
        // Read once per emission in the batch, under the lock above.
        let mut ended: HashMap<(&str, i64), Option<String>> = HashMap::new();
        let mut outcomes = Vec::with_capacity(entries.len());
        for entry in entries {
            let (game, emission) = (entry.game.slug(), i64::from(entry.emission));
            let (block, index) = (i64::from(entry.block), i64::from(entry.index));
            if let std::collections::hash_map::Entry::Vacant(slot) = ended.entry((game, emission)) {
                let row = tx
                    .query_opt(
                        "SELECT ended_at FROM claims_ended WHERE game=$1 AND emission=$2",
                        &[&game, &emission],
                    )
                    .map_err(db)?;
                slot.insert(row.map(|r| r.get(0)));
            }
            if let Some(Some(at)) = ended.get(&(game, emission)) {
                outcomes.push(Err(Error::ClaimsEnded {
                    game,
                    emission: entry.emission,
                    at: at.clone(),
                }));
                continue;
            }
            let seq = frontier.size();
            let leaf = merkle::leaf_hash(log::entry_line(seq, &entry.fields(&at)).as_bytes());
            let inserted = tx
                .execute(
                    &insert,
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
                        &i64::try_from(seq).unwrap_or(i64::MAX),
                        &&leaf[..],
                    ],
                )
                .map_err(db)?;
            if inserted == 0 {
                let first = tx
                    .query_one(
                        "SELECT redeemed_at, prize_cents FROM redemptions
                         WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                        &[&game, &emission, &block, &index],
                    )
                    .map_err(db)?;
                outcomes.push(Err(Error::AlreadyRedeemed {
                    id: entry.unit_id.clone(),
                    at: first.get(0),
                    prize: cents_to_euros(small(first.get(1))),
                }));
                continue;
            }
            tx.execute(
                &add_to_totals,
                &[&game, &emission, &block, &i64::from(entry.prize_cents)],
            )
            .map_err(db)?;
            frontier.push(leaf);
            outcomes.push(Ok(Committed::at(seq, &leaf, &at)));
        }
        let root = frontier.root();
        if frontier.size() > old_size {
            let size = i64::try_from(frontier.size()).unwrap_or(i64::MAX);
            tx.execute(
                "UPDATE log_state SET frontier = $1",
                &[&frontier.to_bytes()],
            )
            .map_err(db)?;
            tx.execute(
                "INSERT INTO ledger_heads (size, root, signed_at, checkpoint, signer)
                 VALUES ($1, $2, $3, $4, $5)",
                &[
                    &size,
                    &&root[..],
                    &at,
                    &key.sign_checkpoint(frontier.size(), &root),
                    &log::verifier_key(&key.public()),
                ],
            )
            .map_err(db)?;
        }
        Committed::under(&mut outcomes, frontier.size(), &root);
        if let Err(e) = tx.commit() {
            drop(conn);
            return self.resolve(entries, outcomes, &e);
        }
        Ok(outcomes)
    }

    /// After a failed COMMIT, whose outcome is unknown: looks each unit up.
    /// One recorded at this commit's position keeps its outcome; one that is
    /// not was not recorded (retry). Never guesses.
    fn resolve(
        &self,
        entries: &[Entry],
        outcomes: Vec<Result<Committed, Error>>,
        cause: &postgres::Error,
    ) -> Result<Vec<Result<Committed, Error>>, Error> {
        let unknown = |reason: String| Error::LedgerOutcomeUnknown {
            path: PathBuf::from(&self.name),
            reason: format!("commit: {cause}; lookup: {reason}"),
        };
        let mut conn = self.pool.get().map_err(|e| unknown(e.to_string()))?;
        let mut resolved = Vec::with_capacity(outcomes.len());
        for (entry, outcome) in entries.iter().zip(outcomes) {
            let Ok(committed) = outcome else {
                resolved.push(outcome);
                continue;
            };
            let row = conn
                .query_opt(
                    "SELECT seq, leaf_hash FROM redemptions
                     WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4",
                    &[
                        &entry.game.slug(),
                        &i64::from(entry.emission),
                        &i64::from(entry.block),
                        &i64::from(entry.index),
                    ],
                )
                .map_err(|e| unknown(e.to_string()))?;
            let ours = row.is_some_and(|r| {
                u64::try_from(r.get::<_, i64>(0)).ok() == Some(committed.seq)
                    && hex::encode(r.get::<_, Vec<u8>>(1)) == committed.leaf_hash
            });
            resolved.push(if ours {
                Ok(committed)
            } else {
                Err(self.unavailable(format!("the commit failed ({cause})")))
            });
        }
        Ok(resolved)
    }
}

impl PgLedger {
    /// Replays the log: every entry's leaf hash from its row, positions
    /// without gaps, every signed head's root at its size and its
    /// signature by one of `signers` (the nodes' ledger keys), and each
    /// block's running totals against its rows.
    pub fn verify_log(&self, signers: &[VerifyingKey]) -> Result<LogReport, Error> {
        let db = |e: postgres::Error| self.unavailable(e);
        let mut conn = self.conn()?;
        // One snapshot for the rows, the heads and the totals.
        let mut tx = conn
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(db)?;
        let rows = tx
            .query(
                "SELECT seq, game, emission, block, unit_index, unit_id, lot, prize_cents,
                        record_sha256, redeemed_at, stopped_after_rolls, leaf_hash
                 FROM redemptions ORDER BY seq",
                &[],
            )
            .map_err(db)?;
        let heads = tx
            .query(
                "SELECT size, checkpoint FROM ledger_heads ORDER BY size",
                &[],
            )
            .map_err(db)?;
        let bad_totals = tx
            .query(
                "SELECT t.game, t.emission, t.block FROM block_totals t
                 LEFT JOIN (SELECT game, emission, block, COUNT(*) AS n, SUM(prize_cents) AS paid
                            FROM redemptions GROUP BY game, emission, block) r
                   USING (game, emission, block)
                 WHERE r.n IS DISTINCT FROM t.units OR r.paid IS DISTINCT FROM t.paid_cents",
                &[],
            )
            .map_err(db)?;
        let mut findings = Vec::new();
        let mut frontier = Frontier::default();
        let mut roots = std::collections::HashMap::new();
        let head_sizes: std::collections::HashSet<i64> =
            heads.iter().map(|h| h.get::<_, i64>(0)).collect();
        for row in &rows {
            let seq: i64 = row.get(0);
            let unit_id: String = row.get(5);
            let finding = |problem: String| LogFinding {
                entry: u64::try_from(seq).ok(),
                unit_id: Some(unit_id.clone()),
                problem,
            };
            if u64::try_from(seq).ok() != Some(frontier.size()) {
                findings.push(finding(format!(
                    "entry {} is missing (the next row is at {seq})",
                    frontier.size()
                )));
                break;
            }
            let game: String = row.get(1);
            let fields = log::EntryFields {
                game: &game,
                emission: small(row.get(2)),
                block: small(row.get(3)),
                index: small(row.get(4)),
                unit_id: &unit_id,
                lot: u8::try_from(row.get::<_, i64>(6)).unwrap_or(u8::MAX),
                prize_cents: small(row.get(7)),
                record_sha256: row.get(8),
                redeemed_at: row.get(9),
                stopped_after_rolls: row.get::<_, Option<i64>>(10).map(small),
            };
            let leaf = merkle::leaf_hash(log::entry_line(frontier.size(), &fields).as_bytes());
            if row.get::<_, Vec<u8>>(11) != leaf {
                findings.push(finding(
                    "its row is not what its leaf hash was made from".into(),
                ));
            }
            frontier.push(leaf);
            if head_sizes.contains(&(seq + 1)) {
                roots.insert(seq + 1, frontier.root());
            }
        }
        for head in &heads {
            let size: i64 = head.get(0);
            let note: String = head.get(1);
            let problem = match signers
                .iter()
                .find_map(|k| log::open_checkpoint(&note, k).ok())
            {
                None => Some("its checkpoint is not signed by any of the given ledger keys".into()),
                Some(c) if i64::try_from(c.size).ok() != Some(size) => {
                    Some(format!("its checkpoint signs size {}", c.size))
                }
                Some(c) if roots.get(&size) != Some(&c.root) => {
                    Some("the log's root at its size is not the one it signs".into())
                }
                Some(_) => None,
            };
            if let Some(problem) = problem {
                findings.push(LogFinding {
                    entry: None,
                    unit_id: None,
                    problem: format!("head of size {size}: {problem}"),
                });
            }
        }
        for t in &bad_totals {
            findings.push(LogFinding {
                entry: None,
                unit_id: None,
                problem: format!(
                    "{} emission {} block {}: the running totals are not the sum of its rows",
                    t.get::<_, String>(0),
                    t.get::<_, i64>(1),
                    t.get::<_, i64>(2)
                ),
            });
        }
        Ok(LogReport {
            size: frontier.size(),
            root: hex::encode(frontier.root()),
            heads_checked: heads.len() as u64,
            last_head_size: heads
                .last()
                .and_then(|h| u64::try_from(h.get::<_, i64>(0)).ok()),
            ok: findings.is_empty(),
            findings,
        })
    }
}

/// A `u32` the ledger wrote as BIGINT.
fn small(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// `url` without its password, to name the ledger in messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_string(),
    }
}

/// A PostgreSQL ledger with the node's key that signs the heads it makes.
pub struct PgStorage {
    ledger: PgLedger,
    key: LedgerKey,
}

impl PgStorage {
    /// The storage of `ledger`, signing with `store`'s ledger key (made if
    /// needed); refuses a database without the current schema.
    pub fn open(ledger: PgLedger, store: &Store) -> Result<PgStorage, Error> {
        ledger.check_schema()?;
        let key = LedgerKey::load_or_create(store)?;
        Ok(PgStorage { ledger, key })
    }
}

impl LedgerStorage for PgStorage {
    fn commit(&mut self, entries: &[Entry]) -> Result<Vec<Result<Committed, Error>>, Error> {
        self.ledger.commit(entries, &self.key)
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
    }
}
