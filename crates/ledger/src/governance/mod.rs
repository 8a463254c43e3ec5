//! Governance and the reports made of the ledger: what decides whether an
//! action may go ahead, and what the ledger is shown to say. One folder,
//! one file per concern:
//!
//! - [`approval`]: dual control, the approvals signed by two approvers;
//! - [`binding`]: one ledger per emission (its `ledger.json`);
//! - [`closing`]: the end of an emission's claims and its signed closing
//!   statement;
//! - [`reconcile`]: the ledger against an audit's blocks (a folder: the
//!   per-block comparison, the rows read, the findings, the ledger's own
//!   checks);
//! - [`routing`]: several ledgers on one node, each emission routed to
//!   one (the operator's routing table);
//! - [`status`]: what a store holds (`issuer status`).
//!
//! The reports (reconcile, status, closing) are not a folder of their own:
//! the closing statement is both a report (the reconciliation's figures)
//! and a governed action (dual control, the binding), so governance and
//! its reports are read side by side here. This file only declares the
//! modules; the crate root re-exports them under their old names
//! (`ticket_issuer_ledger::approval`, `…::reconcile`, …).

pub mod approval;
pub mod binding;
pub mod closing;
pub mod reconcile;
pub mod routing;
pub mod status;
