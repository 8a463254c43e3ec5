//! The library's error type: one variant per distinct failure, each message
//! saying what went wrong, where, and what to do. Every variant has a
//! [`ErrorKind`] from a small closed set and a stable [`Error::code`]; the
//! command line maps kinds to exit codes and a service maps them to HTTP
//! statuses, each at its own edge.

//!
//! Files: `kind` ([`ErrorKind`], [`HeaderProblem`]), `variants` ([`Error`]),
//! `codes` (each variant's code and kind), `report` ([`ErrorReport`]).

mod codes;
mod kind;
mod report;
mod variants;

pub use codes::CODES;
pub use kind::{echo, ErrorKind, HeaderProblem};
pub use report::ErrorReport;
pub use variants::Error;
