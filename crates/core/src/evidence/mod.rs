//! The auditor's kit (docs/AUDIT.md): the evidence a test lab certifies
//! about an emission, computed from what an auditor is handed (block
//! files, the public key, records keys; never a signing key or the master
//! secret). This module holds the report's shape and the tests that do
//! not depend on a game; a game adds its own through
//! [`crate::analysis::GameAnalysis::audit_tally`].
//!
//! - [`report`]: the figures of `report.json` and of the HTML page.
//! - [`block`]: one block's units read once, and the tests on them.
//! - [`tally`]: what a game adds to them ([`GameTally`]).
//! - [`payout`]: the French payout rule (CSI art. D.322-10).
//!
//! Every statistical test gives its statistic, degrees of freedom and
//! p-value; verdicts are at each level asked, raw and after Holm's
//! correction over the whole report ([`report::AuditReport::judge`]).
//! A test that cannot run says why instead of passing.

pub mod block;
pub mod payout;
pub mod proof;
pub mod report;
pub mod tally;

pub use block::{audit_block, BlockAudit};
pub use report::{
    AuditReport, BlockEvidence, Check, LedgerBlock, LedgerEvidence, LevelVerdict, LotCount, Plot,
    PlotKind, Series, StatTest, Verdict,
};
pub use tally::{GameTally, TallyScope};
