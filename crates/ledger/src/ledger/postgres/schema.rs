//! The PostgreSQL ledger's schema (docs/REDEMPTION.md §Schema versions):
//! one SQL file a version under `schema/`, applied in order from the one
//! migration list, [`MIGRATIONS`], in one transaction.

use super::ledger::PgLedger;

use crate::error::Error;

/// Every version's SQL, oldest first (each file says what its version
/// added): a ledger at version `n` runs those after `n`.
pub(crate) const MIGRATIONS: [(i64, &str); 10] = [
    (1, include_str!("schema/001.sql")),
    (2, include_str!("schema/002.sql")),
    (3, include_str!("schema/003.sql")),
    (4, include_str!("schema/004.sql")),
    (5, include_str!("schema/005.sql")),
    (6, include_str!("schema/006.sql")),
    (7, include_str!("schema/007.sql")),
    (8, include_str!("schema/008.sql")),
    (9, include_str!("schema/009.sql")),
    (10, include_str!("schema/010.sql")),
];

/// How long a schema found current is taken as current by the reads
/// every request makes ([`PgLedger::check_schema_recent`]).
pub const SCHEMA_RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// The schema version this build writes (`ledger_schema.version`).
pub const SCHEMA_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].0;

impl PgLedger {
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
            return Err(
                self.unavailable(crate::ledger::backend::newer_schema(found, SCHEMA_VERSION))
            );
        }
        for &(version, sql) in &MIGRATIONS {
            if found < version {
                tx.batch_execute(sql).map_err(db)?;
                if version == 1 {
                    tx.execute("INSERT INTO ledger_schema (version) VALUES (1)", &[])
                        .map_err(db)?;
                }
            }
        }
        tx.execute("UPDATE ledger_schema SET version = $1", &[&SCHEMA_VERSION])
            .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok((found, SCHEMA_VERSION))
    }

    /// [`PgLedger::check_schema`], skipped when it passed less than
    /// [`SCHEMA_RECHECK`] ago: for the reads every request makes. A schema
    /// dropped in between is still named by the read that fails
    /// ([`PgLedger::read_error`]).
    pub fn check_schema_recent(&self) -> Result<(), Error> {
        let seen = *self.schema_seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.is_some_and(|at| at.elapsed() < SCHEMA_RECHECK) {
            return Ok(());
        }
        self.check_schema()
    }

    /// Refuses a database whose schema is missing or of another version.
    pub fn check_schema(&self) -> Result<(), Error> {
        *self.schema_seen.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let mut conn = self.conn()?;
        let version = conn
            .query_opt("SELECT version FROM ledger_schema", &[])
            .map(|r| r.map(|r| r.get::<_, i64>(0)));
        match version {
            Ok(Some(SCHEMA_VERSION)) => {
                *self.schema_seen.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some(std::time::Instant::now());
                Ok(())
            }
            Ok(Some(found)) if found > SCHEMA_VERSION => {
                Err(self.unavailable(crate::ledger::backend::newer_schema(found, SCHEMA_VERSION)))
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
}
