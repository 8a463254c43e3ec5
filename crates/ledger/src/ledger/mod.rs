//! The ledger (docs/REDEMPTION.md): sales, play ends and redemptions, each
//! recorded at most once under a primary key, in the store's SQLite
//! database ([`sqlite`]) or a shared PostgreSQL one ([`postgres`]), chosen by
//! [`target`] behind one storage interface ([`backend`]). What one
//! transaction does is written once for both ([`ops`]); its rows are an
//! append-only log hashed into an RFC 9162 tree whose heads are signed
//! (the `ticket-issuer-log` crate, re-exported as [`log`]); one writer per
//! process commits operations in batches ([`writer`]). This file only
//! declares and re-exports.

pub mod backend;
pub use ticket_issuer_log::{claims, log, published, receipt, tiles, witnessed};
pub mod columns;
pub mod emission_rows;
pub mod entry;
pub mod operator;
pub mod ops;
pub mod postgres;
pub mod remembered;
pub mod sqlite;
pub mod summary;
pub mod target;
pub mod writer;

pub use entry::{Committed, Entry, Recorded};
pub use sqlite::{Ledger, BUSY_TIMEOUT, SQLITE_SCHEMA_VERSION};
pub use summary::{BlockActivity, BlockLine, Summary};
