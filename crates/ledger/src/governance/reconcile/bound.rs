//! The `ledger/bound` check: the ledger read is the one the emission's
//! `ledger.json` names ([`crate::governance::binding`]).

use std::path::Path;

use crate::error::Error;
use crate::evidence::{BlockAudit, Check};
use crate::governance::binding;
use crate::ledger::target::LedgerTarget;

/// Whether the ledger read is the one the emission is bound to.
pub(super) fn bound_check(
    target: &LedgerTarget,
    blocks: &[BlockAudit],
    exists: bool,
) -> Result<Check, Error> {
    let dir = blocks
        .first()
        .and_then(|b| Path::new(&b.evidence.path).parent());
    let bound = match dir {
        Some(dir) => binding::bound_ledger(dir)?,
        None => None,
    };
    let identity = match exists {
        true => target.identity(false)?,
        false => None,
    };
    let name = target.describe();
    let (ok, detail) = match (&bound, &identity) {
        (None, None) => (
            true,
            format!("the emission is bound to no ledger and there is none at {name}: nothing of it was recorded"),
        ),
        (None, Some(id)) => (
            true,
            format!("the emission is bound to no ledger yet; read {name} (id {id})"),
        ),
        (Some(b), Some(id)) if *id == b.ledger_id => (
            true,
            format!("the emission is bound to this ledger, {name} (id {id})"),
        ),
        (Some(b), id) => (
            false,
            format!(
                "the emission is bound to {} (id {}), the ledger read is {name} (id {}): pass --ledger",
                b.ledger,
                b.ledger_id,
                id.as_deref().unwrap_or("none: there is no ledger there")
            ),
        ),
    };
    Ok(Check::new(
        "ledger/bound".into(),
        "ledger",
        "the ledger read is the one the emission was sold through",
        ok,
        detail,
    ))
}
