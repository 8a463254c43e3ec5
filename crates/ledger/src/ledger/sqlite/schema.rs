//! The SQLite ledger's schema (docs/REDEMPTION.md §Schema versions): one
//! SQL file a version under `schema/`, applied in order by the one
//! migration list, [`MIGRATIONS`], in an immediate transaction.

use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

/// Switches the database to WAL (which then persists in the file). The
/// switch needs an exclusive lock that SQLite will not wait for (it skips
/// the busy handler there to avoid deadlock), so when several processes
/// create the ledger at once the losers retry until `busy` has passed.
pub(crate) fn set_wal(conn: &Connection, busy: Duration) -> Result<(), rusqlite::Error> {
    let deadline = Instant::now() + busy;
    loop {
        match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
            // SQLite keeps its old mode where WAL can't work (some network
            // file systems): refuse rather than run with weaker durability.
            Ok(mode) if !mode.eq_ignore_ascii_case("wal") => {
                return Err(rusqlite::Error::InvalidParameterName(format!(
                    "the ledger's file system does not support WAL (journal mode stays {mode}); put the store on a local disk"
                )))
            }
            Ok(_) => return Ok(()),
            Err(e)
                if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Adds the columns of `added` that `table`, written before them, lacks.
fn add_missing_columns(
    conn: &Connection,
    table: &str,
    added: &[(&str, &str)],
) -> Result<(), rusqlite::Error> {
    let mut stmt = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
    let have: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for &(name, kind) in added {
        if !have.iter().any(|h| h == name) {
            match conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {name} {kind}")) {
                // Another process added it since we looked.
                Err(e) if e.to_string().contains("duplicate column name") => {}
                other => other?,
            }
        }
    }
    Ok(())
}

/// One version of the schema: the columns it adds to tables written before
/// it (SQLite has no `ADD COLUMN IF NOT EXISTS`), then its SQL.
pub(crate) struct Migration {
    /// The version it brings the ledger to.
    pub(crate) version: i64,
    /// Per table, the (column, type) pairs added where missing, before
    /// `sql` (one look at each table's columns).
    pub(crate) columns: &'static [(&'static str, &'static [(&'static str, &'static str)])],
    /// Its statements (idempotent: `IF NOT EXISTS`).
    pub(crate) sql: &'static str,
}

/// Every version, oldest first. Every step is idempotent: a ledger written
/// before versions were kept (version 0, in any shape older builds left) is
/// brought up by running them all. Columns added after the first ledgers
/// were written: `record` (the unit's record, so a row can be replayed),
/// `rules_version` and `stopped_after_rolls` (the player's decision); older
/// rows hold NULL there and are checked against their lot table instead.
/// `seq` and `leaf_hash` place a row in the log (docs/REDEMPTION.md
/// §Tamper-evident log); rows of `claims_ended` written before ends of
/// claims entered the log hold NULL there until a writer adopts them.
pub(crate) const MIGRATIONS: [Migration; 6] = [
    Migration {
        version: 1,
        columns: &[],
        sql: include_str!("schema/001_redemptions.sql"),
    },
    Migration {
        version: 2,
        columns: &[(
            "redemptions",
            &[
                ("record", "BLOB"),
                ("rules_version", "INTEGER"),
                ("stopped_after_rolls", "INTEGER"),
                ("seq", "INTEGER"),
                ("leaf_hash", "BLOB"),
            ],
        )],
        sql: include_str!("schema/002_log.sql"),
    },
    Migration {
        version: 3,
        columns: &[("claims_ended", &[("seq", "INTEGER"), ("leaf_hash", "BLOB")])],
        sql: include_str!("schema/003_claims_in_log.sql"),
    },
    Migration {
        version: 4,
        columns: &[],
        sql: include_str!("schema/004_identity.sql"),
    },
    Migration {
        version: 5,
        columns: &[],
        sql: include_str!("schema/005_operator_actions.sql"),
    },
    // 6: each sale's platform lane (issue 34): a sale made before has
    // none, the operator's alone (docs/SECURITY.md §Each platform in its
    // own lane).
    Migration {
        version: 6,
        columns: &[("sales", &[("lane", "TEXT")])],
        sql: "",
    },
];

/// The SQLite ledger's schema version this build writes (`PRAGMA
/// user_version`): the last migration's.
pub const SQLITE_SCHEMA_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].version;

impl Migration {
    fn apply(&self, conn: &Connection) -> Result<(), rusqlite::Error> {
        for &(table, added) in self.columns {
            add_missing_columns(conn, table, added)?;
        }
        conn.execute_batch(self.sql)
    }
}

/// The schema version of the ledger in `conn`.
pub(crate) fn user_version(conn: &Connection) -> Result<i64, rusqlite::Error> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Brings the ledger in `conn` to [`SQLITE_SCHEMA_VERSION`] in one
/// immediate transaction (processes opening an old ledger at once take
/// turns; the second finds it done). Returns the version found; a newer
/// one is left alone for the caller to refuse. Writes nothing when the
/// schema is current, or when the file is read-only (read as it is).
pub(crate) fn migrate_schema(conn: &Connection, read_only: bool) -> Result<i64, rusqlite::Error> {
    let found = user_version(conn)?;
    if found >= SQLITE_SCHEMA_VERSION || read_only {
        return Ok(found);
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let done = (|| {
        let now = user_version(conn)?;
        for m in &MIGRATIONS {
            if now < m.version {
                m.apply(conn)?;
            }
        }
        if now < SQLITE_SCHEMA_VERSION {
            conn.pragma_update(None, "user_version", SQLITE_SCHEMA_VERSION)?;
        }
        conn.execute_batch("COMMIT")
    })();
    if done.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    done.map(|()| found)
}
