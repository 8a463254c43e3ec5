//! The SQLite ledger (docs/REDEMPTION.md): the store's own file, WAL and
//! synchronous FULL, one writer at a time; each entry is appended to the
//! log inside the transaction that records it.
//!
//! - `schema.rs` and `schema/*.sql`: the schema, one file a version;
//! - `ledger.rs`: [`Ledger`], one connection;
//! - `tx.rs`: its [`crate::ledger::ops::LedgerTx`];
//! - `append.rs`: the log appended inside a commit (frontier, tiles, head);
//! - `log.rs`: its [`crate::ledger::log::LogSource`] (entries, heads, tiles);
//! - `backend.rs`: [`SqliteLedger`] and [`SqliteStorage`], the storage
//!   interface.

mod append;
mod backend;
mod ledger;
mod log;
mod schema;
mod tx;

pub use backend::{SqliteLedger, SqliteStorage};
pub use ledger::{Ledger, BUSY_TIMEOUT};
pub use schema::SQLITE_SCHEMA_VERSION;
