//! `issuer ledger head|verify|prove`: the ledger as a signed log.

use ticket_issuer::error::Error;
use ticket_issuer::ledger::log;
use ticket_issuer::ledger::Ledger;
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

use super::LedgerAction;
use crate::cli::print_json;

/// The store's ledger, which must exist (nothing is created).
fn existing(store: &Store) -> Result<Ledger, Error> {
    Ledger::open_existing(&store.ledger_path())?.ok_or_else(|| Error::NotInLedger {
        what: format!(
            "no ledger at {} yet (nothing was redeemed)",
            store.ledger_path().display()
        ),
    })
}

/// Runs a `ledger` subcommand.
pub fn run(store: &Store, action: &LedgerAction, json: bool) -> Result<i32, Error> {
    let ledger = existing(store)?;
    match action {
        LedgerAction::Head => {
            let head = log::latest_head(store)?.ok_or_else(|| Error::NotInLedger {
                what:
                    "the ledger has no signed head yet (nothing was redeemed since the log began)"
                        .into(),
            })?;
            if json {
                print_json("ledger_head", &head);
            } else {
                print!("{}", head.checkpoint);
            }
            Ok(0)
        }
        LedgerAction::Verify { head, ledger_key } => {
            let key_path = ledger_key
                .clone()
                .unwrap_or_else(|| log::public_path(store));
            let public = ticket_issuer::seal::read_public(&key_path)?;
            let extra = head
                .as_ref()
                .map(|p| std::fs::read_to_string(p).map_err(|e| Error::io(p, e)))
                .transpose()?;
            let report = ledger.verify_log(&public, extra.as_deref())?;
            let summary = ledger.summary()?;
            let ok = report.ok && summary.integrity_ok && summary.reconciled;
            if json {
                print_json(
                    "ledger_verify",
                    &serde_json::json!({
                        "ok": ok,
                        "log": report,
                        "integrity_ok": summary.integrity_ok,
                        "reconciled": summary.reconciled,
                    }),
                );
            } else {
                println!(
                    "ledger {}: {} entries, root {}, {} signed head(s) checked",
                    store.ledger_path().display(),
                    report.size,
                    report.root,
                    report.heads_checked
                );
                for f in &report.findings {
                    match f.entry {
                        Some(e) => println!("  entry {e}: {}", f.problem),
                        None => println!("  {}", f.problem),
                    }
                }
                if !summary.reconciled {
                    println!("  totals DO NOT RECONCILE (run `issuer ledger`)");
                }
                println!(
                    "{}",
                    if ok {
                        "log verifies"
                    } else {
                        "LOG DOES NOT VERIFY"
                    }
                );
            }
            Ok(if ok { 0 } else { 1 })
        }
        LedgerAction::Prove { unit, from, to } => match (unit, from) {
            (Some(unit), _) => {
                let id: UnitId = unit.parse()?;
                let proof = ledger
                    .prove_unit(id.game.slug(), id.emission, id.block, id.index)?
                    .ok_or_else(|| Error::NotInLedger {
                        what: format!("unit {id} is not in the log's latest signed head"),
                    })?;
                if json {
                    print_json("ledger_inclusion", &proof);
                } else {
                    print!("entry {}", proof.entry);
                    println!(
                        "leaf {} of {} under root {} ({} hashes, RFC 9162 §2.1.3)",
                        proof.leaf_index,
                        proof.tree_size,
                        proof.root,
                        proof.inclusion_proof.len()
                    );
                    for (level, hash) in proof.inclusion_proof.iter().enumerate() {
                        println!("  proof[{level:>2}] {hash}");
                    }
                    print!("{}", proof.checkpoint);
                }
                Ok(0)
            }
            (None, Some(from)) => {
                let proof =
                    ledger
                        .prove_consistency(*from, *to)?
                        .ok_or_else(|| Error::NotInLedger {
                            what: format!(
                                "sizes {from} to {} are not both within the log",
                                to.map_or("the latest head".into(), |t| t.to_string())
                            ),
                        })?;
                if json {
                    print_json("ledger_consistency", &proof);
                } else {
                    println!(
                        "size {} (root {}) is a prefix of size {} (root {}) (RFC 9162 §2.1.4)",
                        proof.from, proof.from_root, proof.to, proof.to_root
                    );
                    for (i, hash) in proof.consistency_proof.iter().enumerate() {
                        println!("  proof[{i:>2}] {hash}");
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
