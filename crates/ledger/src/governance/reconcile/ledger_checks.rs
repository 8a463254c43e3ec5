//! The ledger's own checks, over the whole ledger: its summary
//! reconciles, its integrity check passes, its log verifies under its
//! signed heads, and (given witnesses) its latest witnessed head carries
//! their quorum's cosignatures.

use ed25519_dalek::VerifyingKey;

use super::findings::EXAMPLES;
use crate::error::Error;
use crate::evidence::Check;
use crate::ledger::log;
use crate::ledger::target::LedgerTarget;
use crate::ledger::witnessed::{self, Quorum, WitnessCheck};

/// The ledger's own checks: its summary reconciles, its integrity check
/// passes, its log verifies under its signed heads. The figures quoted are
/// the audited emission's (`audited`) first, then the whole ledger's.
pub(super) fn ledger_checks(
    target: &LedgerTarget,
    audited: (crate::game::Game, u32),
    signers: &[VerifyingKey],
    witnesses: Option<&Quorum>,
) -> Result<Vec<Check>, Error> {
    let summary = target.summary()?;
    let unreconciled: Vec<String> = summary
        .blocks
        .iter()
        .filter(|b| !b.reconciled)
        .map(|b| format!("{} emission {} block {}", b.game, b.emission, b.block))
        .collect();
    let mut checks = vec![
        Check::new(
            "ledger/summary-reconciles".into(),
            "ledger",
            "the ledger's summary reconciles (running totals, every row replayed)",
            summary.reconciled,
            match unreconciled.is_empty() {
                true => {
                    let (game, emission) = audited;
                    let mine = || {
                        summary
                            .blocks
                            .iter()
                            .filter(|b| b.game == game.slug() && b.emission == emission)
                    };
                    let paid: u64 = mine().map(|b| b.paid.0).sum();
                    format!(
                        "this emission: {} redeemed, {} € paid; the whole ledger (every game and emission): {}, {} redeemed, {} € paid; digest {}",
                        crate::words::plural(mine().map(|b| b.units).sum::<u64>(), "unit"),
                        crate::money::Cents(paid),
                        crate::words::plural(summary.blocks.len(), "block"),
                        crate::words::plural(summary.units, "unit"),
                        summary.paid,
                        summary.digest
                    )
                }
                false => format!("does not reconcile: {}", unreconciled.join(", ")),
            },
        ),
        Check::new(
            "ledger/integrity".into(),
            "ledger",
            "the ledger database's integrity check passes",
            summary.integrity_ok,
            match summary.integrity_ok {
                true => "the database's own check passes".into(),
                false => "the database's own check fails (run `issuer ledger`)".into(),
            },
        ),
    ];
    let report = target.with_log(|source| log::verify(source, signers, None))?;
    checks.push(match report {
        None => Check::new(
            "ledger/log-verifies".into(),
            "ledger",
            "the log verifies under its signed heads",
            true,
            format!("no ledger at {}: no log", target.describe()),
        ),
        Some(r) => {
            let mut detail = format!(
                "{} entries, root {}, {} signed head(s) checked with {} key(s), {} pending",
                r.size,
                r.root,
                r.heads_checked,
                signers.len(),
                r.pending
            );
            for f in r.findings.iter().take(EXAMPLES) {
                detail.push_str("; ");
                if let Some(e) = f.entry {
                    detail.push_str(&format!("entry {e}: "));
                }
                detail.push_str(&f.problem);
            }
            if r.findings.len() > EXAMPLES {
                detail.push_str(&format!("; and {} more", r.findings.len() - EXAMPLES));
            }
            Check::new(
                "ledger/log-verifies".into(),
                "ledger",
                "the log verifies under its signed heads",
                r.ok,
                detail,
            )
        }
    });
    if let Some(quorum) = witnesses {
        let check = target
            .with_log(|source| witnessed::check(source, quorum))?
            .unwrap_or(WitnessCheck {
                quorum: format!("{} of {}", quorum.k, quorum.witnesses.len()),
                witnessed_size: None,
                latest_size: None,
                cosigned_by: Vec::new(),
                bad: Vec::new(),
                ok: false,
            });
        let mut detail = match check.witnessed_size {
            Some(size) => format!(
                "the latest witnessed head, size {size} of {}, is cosigned by {} ({} needed)",
                check.latest_size.unwrap_or(0),
                match check.cosigned_by.is_empty() {
                    true => "none of the witnesses given".to_string(),
                    false => check.cosigned_by.join(", "),
                },
                check.quorum
            ),
            None => format!(
                "no head is cosigned by its witnesses ({} needed)",
                check.quorum
            ),
        };
        for b in &check.bad {
            detail.push_str(&format!("; bad cosignature {b}"));
        }
        checks.push(Check::new(
            "ledger/witnessed".into(),
            "ledger",
            "the log's latest witnessed head carries the cosignatures of its witnesses' quorum, none forged",
            check.ok,
            detail,
        ));
    }
    Ok(checks)
}
