//! `issuer ledger head|verify|prove|tiles`: the ledger as a signed log.

use ticket_issuer::error::Error;
use ticket_issuer::ledger::log::{self, LogSource};
use ticket_issuer::ledger::ops::UnitRef;
use ticket_issuer::ledger::published::{self, Publication};
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::ledger::witnessed::{self, Quorum, WitnessCheck};
use ticket_issuer::ledger::Summary;
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

use super::LedgerAction;
use crate::cli::print_json;

/// `f` on the ledger as a log; a store's ledger must exist (nothing is
/// created).
fn on_log<T>(
    target: &LedgerTarget,
    f: impl FnOnce(&dyn LogSource) -> Result<T, Error>,
) -> Result<T, Error> {
    target.with_log(f)?.ok_or_else(|| Error::NotInLedger {
        what: format!(
            "no ledger at {} yet (nothing was recorded)",
            target.describe()
        ),
    })
}

/// `head` naming its signer's verifier key: a SQLite ledger's heads are
/// the store's ledger key's (a PostgreSQL head names its node's already).
fn with_signer(store: &Store, mut head: log::Head) -> log::Head {
    if head.verifier_key.is_none() {
        if let Ok(public) = ticket_issuer::seal::read_public(&log::public_path(store)) {
            if log::origin(&public) == head.origin {
                head.verifier_key = Some(log::verifier_key(&public));
            }
        }
    }
    head
}

/// What `ledger migrate` reports.
#[derive(serde::Serialize)]
struct Migrated {
    ledger: String,
    from_version: i64,
    to_version: i64,
}

/// Runs a `ledger` subcommand on `target` (the store's SQLite ledger or a
/// PostgreSQL one; the same log either way).
pub fn run(
    store: &Store,
    target: &LedgerTarget,
    action: &LedgerAction,
    json: bool,
) -> Result<i32, Error> {
    match action {
        LedgerAction::Migrate => {
            let (from, to) = target.migrate()?;
            let name = target.describe();
            if json {
                print_json(
                    "ledger_migration",
                    &Migrated {
                        ledger: name,
                        from_version: from,
                        to_version: to,
                    },
                );
            } else if from == to {
                outln!("ledger {name}: schema version {to}, up to date");
            } else {
                outln!("ledger {name}: schema upgraded from version {from} to {to}");
            }
            Ok(0)
        }
        LedgerAction::Head { witnessed } => {
            let head = match witnessed {
                true => on_log(target, |src| src.latest_witnessed_head())?
                    .map(log::StoredHead::to_head)
                    .ok_or_else(|| Error::NotInLedger {
                        what: format!(
                            "{} has no head its witnesses cosigned yet (serve --witness collects them)",
                            target.describe()
                        ),
                    })?,
                false => target.head()?.ok_or_else(|| Error::NotInLedger {
                    what: format!(
                        "{} has no signed head yet (nothing was recorded since the log began)",
                        target.describe()
                    ),
                })?,
            };
            let head = with_signer(store, head);
            if json {
                print_json("ledger_head", &head);
            } else {
                out!("{}", head.checkpoint);
            }
            Ok(0)
        }
        LedgerAction::Verify {
            head,
            ledger_key,
            witness_key,
            witness_quorum,
        } => {
            // A shared ledger's heads are signed by the nodes that made
            // them: each node's ledger key, or this store's when none is
            // named.
            let paths = if ledger_key.is_empty() {
                vec![log::public_path(store)]
            } else {
                ledger_key.clone()
            };
            let signers = paths
                .iter()
                .map(|p| ticket_issuer::seal::read_public(p))
                .collect::<Result<Vec<_>, _>>()?;
            let extra = head
                .as_ref()
                .map(|p| std::fs::read_to_string(p).map_err(|e| Error::io(p, e)))
                .transpose()?;
            let quorum = Quorum::from_args(witness_key, *witness_quorum)
                .map_err(|what| Error::BadOperatorRequest { what })?;
            let (report, witnesses) = on_log(target, |src| {
                let report = log::verify(src, &signers, extra.as_deref())?;
                let witnesses = quorum
                    .as_ref()
                    .map(|q| witnessed::check(src, q))
                    .transpose()?;
                Ok((report, witnesses))
            })?;
            let summary = target.summary()?;
            Ok(print_verify(
                &target.describe(),
                &report,
                &summary,
                witnesses.as_ref(),
                json,
            ))
        }
        LedgerAction::Tiles { out, witnessed } => {
            let report = on_log(target, |src| {
                let publication = match witnessed {
                    true => Publication::Witnessed,
                    false => Publication::Latest,
                };
                let log = publication.of(src)?;
                let log = log.ok_or_else(|| Error::NotInLedger {
                    what: format!(
                        "{} has no {} head yet",
                        target.describe(),
                        if *witnessed { "witnessed" } else { "signed" }
                    ),
                })?;
                published::write_static(&log, out)
            })?;
            if json {
                print_json("ledger_tiles", &report);
            } else {
                outln!(
                    "{}: the log of size {} as C2SP tlog-tiles: {} file(s) written, {} kept, checkpoint last",
                    report.out,
                    report.size,
                    report.written,
                    report.kept
                );
            }
            Ok(0)
        }
        LedgerAction::Prove { unit, from, to } => match (unit, from) {
            (Some(unit), _) => {
                let id: UnitId = unit.parse()?;
                let proof = on_log(target, |src| log::prove_unit(src, UnitRef::of(&id).place()))?
                    .ok_or_else(|| Error::NotInLedger {
                    what: format!("unit {id} is not in the log's latest signed head"),
                })?;
                if json {
                    print_json("ledger_inclusion", &proof);
                } else {
                    out!("entry {}", proof.entry);
                    outln!(
                        "leaf {} of {} under root {} ({} hashes, RFC 9162 §2.1.3)",
                        proof.leaf_index,
                        proof.tree_size,
                        proof.root,
                        proof.inclusion_proof.len()
                    );
                    for (level, hash) in proof.inclusion_proof.iter().enumerate() {
                        outln!("  proof[{level:>2}] {hash}");
                    }
                    out!("{}", proof.checkpoint);
                }
                Ok(0)
            }
            (None, Some(from)) => {
                let proof = on_log(target, |src| log::prove_consistency(src, *from, *to))?
                    .ok_or_else(|| Error::NotInLedger {
                        what: format!(
                            "sizes {from} to {} are not both within the log",
                            to.map_or("the latest head".into(), |t| t.to_string())
                        ),
                    })?;
                if json {
                    print_json("ledger_consistency", &proof);
                } else {
                    outln!(
                        "size {} (root {}) is a prefix of size {} (root {}) (RFC 9162 §2.1.4)",
                        proof.from,
                        proof.from_root,
                        proof.to,
                        proof.to_root
                    );
                    for (i, hash) in proof.consistency_proof.iter().enumerate() {
                        outln!("  proof[{i:>2}] {hash}");
                    }
                }
                Ok(0)
            }
            (None, None) => Err(Error::Internal {
                what: "prove needs --unit or --from".into(),
            }),
        },
    }
}

/// Prints what `ledger verify` found; returns the exit code.
fn print_verify(
    name: &str,
    report: &log::LogReport,
    summary: &Summary,
    witnesses: Option<&WitnessCheck>,
    json: bool,
) -> i32 {
    let ok =
        report.ok && summary.integrity_ok && summary.reconciled && witnesses.is_none_or(|w| w.ok);
    if json {
        print_json(
            "ledger_verify",
            &serde_json::json!({
                "ok": ok,
                "log": report,
                "integrity_ok": summary.integrity_ok,
                "reconciled": summary.reconciled,
                "witnesses": witnesses,
            }),
        );
    } else {
        outln!(
            "ledger {name}: {} entries, root {}, {} signed head(s) checked",
            report.size,
            report.root,
            report.heads_checked
        );
        for f in &report.findings {
            match f.entry {
                Some(e) => outln!("  entry {e}: {}", f.problem),
                None => outln!("  {}", f.problem),
            }
        }
        if !summary.reconciled {
            outln!("  totals DO NOT RECONCILE (run `issuer ledger`)");
        }
        if let Some(w) = witnesses {
            match w.witnessed_size {
                Some(size) => outln!(
                    "  witnessed head: size {size} of {}, cosigned by {} ({} needed: {})",
                    w.latest_size.unwrap_or(0),
                    if w.cosigned_by.is_empty() {
                        "none of the witnesses given".to_string()
                    } else {
                        w.cosigned_by.join(", ")
                    },
                    w.quorum,
                    if w.ok { "met" } else { "NOT MET" }
                ),
                None => outln!(
                    "  NO HEAD IS COSIGNED by its witnesses ({} needed)",
                    w.quorum
                ),
            }
            for b in &w.bad {
                outln!("  BAD COSIGNATURE {b}");
            }
        }
        outln!(
            "{}",
            if ok {
                "log verifies"
            } else {
                "LOG DOES NOT VERIFY"
            }
        );
    }
    i32::from(!ok)
}
