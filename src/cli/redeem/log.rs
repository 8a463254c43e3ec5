//! `issuer ledger head|verify|prove`: the ledger as a signed log.

use std::path::Path;
use ticket_issuer::error::Error;
use ticket_issuer::ledger::log;
use ticket_issuer::ledger::pg::PgLedger;
use ticket_issuer::ledger::{Ledger, Summary};
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
        LedgerAction::Migrate => Err(Error::BadLedgerUrl {
            url: "(none)".into(),
            reason: "`ledger migrate` is for a PostgreSQL ledger (the store's SQLite ledger upgrades itself)".into(),
        }),
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
                .first()
                .cloned()
                .unwrap_or_else(|| log::public_path(store));
            let public = ticket_issuer::seal::read_public(&key_path)?;
            let extra = head
                .as_ref()
                .map(|p| std::fs::read_to_string(p).map_err(|e| Error::io(p, e)))
                .transpose()?;
            let report = ledger.verify_log(&public, extra.as_deref())?;
            let summary = ledger.summary()?;
            let name = store.ledger_path().display().to_string();
            Ok(print_verify(&name, &report, &summary, json))
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

/// What `ledger migrate` reports.
#[derive(serde::Serialize)]
struct Migrated {
    ledger: String,
    from_version: i64,
    to_version: i64,
}

/// `ledger …` on a PostgreSQL ledger: `migrate` (the log's head, verify
/// and prove run on the store's SQLite ledger only, for now).
pub fn run_postgres(
    store: &Store,
    url: &str,
    action: Option<&LedgerAction>,
    json: bool,
) -> Result<i32, Error> {
    let pg = PgLedger::connect(url)?;
    match action {
        Some(LedgerAction::Migrate) => {
            let (from, to) = pg.migrate()?;
            if json {
                print_json(
                    "ledger_migration",
                    &Migrated {
                        ledger: pg.name().into(),
                        from_version: from,
                        to_version: to,
                    },
                );
            } else if from == to {
                println!("ledger {}: schema version {to}, up to date", pg.name());
            } else {
                println!(
                    "ledger {}: schema upgraded from version {from} to {to}",
                    pg.name()
                );
            }
            Ok(0)
        }
        Some(LedgerAction::Verify {
            head: None,
            ledger_key,
        }) => {
            // The heads are signed by the nodes that made them: each node's
            // ledger key, or this store's when none is named.
            let paths = if ledger_key.is_empty() {
                vec![log::public_path(store)]
            } else {
                ledger_key.clone()
            };
            let signers = paths
                .iter()
                .map(|p| ticket_issuer::seal::read_public(p))
                .collect::<Result<Vec<_>, _>>()?;
            let report = pg.verify_log(&signers)?;
            // The database checks its own pages; the totals are checked
            // in the report.
            let summary = Summary::empty(Path::new(pg.name()));
            Ok(print_verify(pg.name(), &report, &summary, json))
        }
        _ => Err(Error::BadLedgerUrl {
            url: pg.name().into(),
            reason: "a PostgreSQL ledger takes `ledger migrate` and `ledger verify [--ledger-key FILE]…` in this version; the summary, head, prove and verify --head read the store's SQLite ledger".into(),
        }),
    }
}

/// Prints what `ledger verify` found; returns the exit code.
fn print_verify(name: &str, report: &log::LogReport, summary: &Summary, json: bool) -> i32 {
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
            "ledger {name}: {} entries, root {}, {} signed head(s) checked",
            report.size, report.root, report.heads_checked
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
    i32::from(!ok)
}
