//! The ledger in a shared PostgreSQL database (docs/REDEMPTION.md
//! §PostgreSQL), for any number of redemption nodes: a second
//! [`crate::ledger::writer::LedgerStorage`], same rows, same log, same signed heads as SQLite.
//!
//! Each commit runs at READ COMMITTED with no lock shared by every
//! operation: exactly once is the primary key (game, emission, block,
//! unit_index), inserted with `ON CONFLICT DO NOTHING`, so the database
//! refuses a second row whatever the application believed. An entry is
//! committed queued (a `pending` number, no `seq`) and placed in the log
//! after the commit by the sequencer (`sequencer.rs`), which also
//! keeps the blocks' totals. An end of claims takes its emission's
//! advisory lock exclusively, and every operation on a unit of the emission
//! takes it shared before it reads whether claims ended: no payment
//! commits after an end of claims it did not see.

//!
//! - `schema.rs` and `schema/*.sql`: the schema, one file a version;
//! - `conn.rs`, `env.rs`: the pool, its sessions, libpq's environment;
//! - `ledger.rs`: [`PgLedger`]; `sql.rs`: statements the files share;
//! - `tx.rs`: its [`crate::ledger::ops::LedgerTx`]; `commit.rs`: a batch;
//! - `sequencer.rs`: queued entries placed in the log, tiles, signed heads;
//! - `read.rs`, `log.rs`: reads, and its [`crate::ledger::log::LogSource`];
//! - `recover.rs`: the published log put back;
//! - `backend.rs`: [`PgStorage`] and the storage interface.

mod backend;
mod commit;
mod conn;
mod env;
mod ledger;
mod log;
mod read;
mod recover;
mod schema;
pub mod sequencer;
mod sql;
mod tx;

pub use backend::PgStorage;
pub use conn::SESSION_TIMEOUTS;
pub use conn::{writers, WRITERS};
pub use ledger::PgLedger;
pub use schema::SCHEMA_VERSION;
