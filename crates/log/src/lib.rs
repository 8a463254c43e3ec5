//! ticket-issuer's signed log, with no database (docs/REDEMPTION.md
//! §Tamper-evident log): typed entries and their leaf hashes (`log`), signed
//! C2SP checkpoints, the tiles of the RFC 9162 tree (`tiles`) and their
//! published layout (`published`), a player's receipt and its verifier
//! (`receipt`), the witnesses' quorum (`witnessed`), the end-of-claims
//! statement (`claims`), the operator's actions as logged (`action`), and a
//! C2SP tlog-witness (`witness`). What a receipt checker, a witness or an
//! auditor compiles: no SQL, no async runtime. A database gives the log its
//! entries and tiles through [`log::LogSource`].

#![deny(missing_docs)]

pub mod action;
pub mod checkpoint;
pub mod claims;
pub mod log;
pub mod published;
pub mod receipt;
pub mod tiles;
pub mod witness;
pub mod witnessed;
