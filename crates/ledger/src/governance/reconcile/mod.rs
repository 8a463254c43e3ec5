//! The ledger against the sealed blocks: the ledger part of `issuer audit
//! --emission N` ([`reconcile`]). The emission's sales, plays and
//! redemptions are read once per kind, in one snapshot
//! ([`LedgerTarget::emission_rows`](crate::ledger::target::LedgerTarget::emission_rows)), and set against the blocks the audit
//! has just read unit by unit ([`BlockAudit`](crate::evidence::BlockAudit)): what was sold, played and
//! paid per block, what is still owed, whether every payment is what its
//! unit gives, and the ledger's own checks (its summary, its integrity
//! check, its log under its signed heads).

mod block;
mod bound;
mod emission;
mod findings;
mod ledger_checks;
mod replay;
mod returns;
mod rows;
mod unit;
mod voids;
mod words;

pub use emission::reconcile;
