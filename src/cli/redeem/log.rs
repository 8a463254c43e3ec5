//! `issuer ledger head|verify|prove|tiles`: the ledger as a signed log.

use std::path::PathBuf;

use ticket_issuer::error::Error;
use ticket_issuer::ledger::log::{self, LogSource};
use ticket_issuer::ledger::ops::UnitRef;
use ticket_issuer::ledger::published::{self, Publication};
use ticket_issuer::ledger::remembered::HeadMemory;
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::ledger::witnessed::{self, Quorum, WitnessCheck};
use ticket_issuer::ledger::Summary;
use ticket_issuer::redeemer::recover::{Folder, PublishedFiles};
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

use crate::cli::json::print_json;
use ticket_issuer::words::{counted, plural};

/// `ledger` subcommands (docs/REDEMPTION.md §Tamper-evident log).
#[derive(clap::Subcommand, Debug)]
pub enum LedgerAction {
    /// Create or upgrade a PostgreSQL ledger's schema (needs --ledger).
    Migrate,
    /// Print the latest signed head (a C2SP tlog-checkpoint, with its
    /// witnesses' cosignatures once collected).
    Head {
        /// The latest head witnesses cosigned instead (docs/REDEMPTION.md
        /// §Cosigned checkpoints).
        #[arg(long)]
        witnessed: bool,
    },
    /// Check every entry against its leaf hash and every signed head.
    Verify {
        /// A head kept elsewhere (a checkpoint file) the log must contain.
        #[arg(long, value_name = "FILE")]
        head: Option<PathBuf>,
        /// The ledger's public key (PEM); default: the store's. A shared
        /// PostgreSQL ledger: repeat it for each node's key.
        #[arg(long, value_name = "FILE")]
        ledger_key: Vec<PathBuf>,
        /// A witness's verifier key (C2SP vkey): the latest witnessed head
        /// must carry the cosignatures of --witness-quorum of them, each
        /// verifying. Repeat for each witness.
        #[arg(long, value_name = "VKEY")]
        witness_key: Vec<String>,
        /// With --witness-key: cosignatures needed (default: every
        /// witness's).
        #[arg(long, value_name = "K", requires = "witness_key")]
        witness_quorum: Option<usize>,
    },
    /// Write the log as C2SP tlog-tiles static files (checkpoint, tiles,
    /// entry bundles) for the latest head, for any web server to publish.
    Tiles {
        /// The folder (made if needed; rerun to add what the log gained).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The log as of its latest witnessed head (what a node that fails
        /// closed publishes).
        #[arg(long)]
        witnessed: bool,
    },
    /// Put back the entries a ledger restored from an older copy lacks,
    /// from the published log (docs/DEPLOY.md §Restore): a folder `ledger
    /// tiles --out` wrote, or a node's or mirror's log URL
    /// (`https://host/v1/log`). Each entry is checked against the
    /// checkpoint, the head this store remembers and the ledger's own.
    Recover {
        /// The published log: a folder, or an http(s) URL of its prefix.
        #[arg(long, value_name = "DIR|URL")]
        from: String,
        /// The platform (token name) whose lane the sales put back are
        /// in; the log does not name it (default: none, only the operator
        /// reaches them).
        #[arg(long, value_name = "NAME")]
        lane: Option<String>,
    },
    /// Prove a redemption is in the log, or that the log only grew.
    Prove {
        /// The unit whose redemption to prove.
        #[arg(long, conflicts_with_all = ["from", "to"], required_unless_present = "from")]
        unit: Option<String>,
        /// The older log size.
        #[arg(long)]
        from: Option<u64>,
        /// The newer log size (default: the latest head's).
        #[arg(long, requires = "from")]
        to: Option<u64>,
    },
}

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
        if let Ok(public) = ticket_issuer::seal::read_public(&store.ledger_public_key_path()) {
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
                vec![store.ledger_public_key_path()]
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
            let identity = target.identity(false)?;
            let (report, witnesses) = on_log(target, |src| {
                let mut report = log::verify(src, &signers, extra.as_deref())?;
                // The head this store remembers (signed or seen): a log
                // restored from an older copy does not extend it.
                if let Some(identity) = &identity {
                    let memory = HeadMemory::of(store, identity);
                    if let Err(Error::LedgerRolledBack { reason, .. }) = memory.check_source(src) {
                        report.findings.push(log::LogFinding {
                            entry: Some(report.size),
                            unit_id: None,
                            problem: reason,
                        });
                        report.ok = false;
                    }
                }
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
                    "{}: the log of size {} as C2SP tlog-tiles: {} written, {} kept, checkpoint last",
                    report.out,
                    report.size,
                    plural(report.written, "file"),
                    report.kept
                );
            }
            Ok(0)
        }
        LedgerAction::Recover { from, lane } => {
            if let Some(lane) = lane {
                ticket_issuer::ledger::ops::check_lane(lane)
                    .map_err(|what| Error::BadOperatorRequest { what })?;
            }
            let redeemer = ticket_issuer::Redeemer::new(
                store.clone(),
                ticket_issuer::OwnedKeys {
                    public_key: store.public_key()?,
                    secrets: store.secrets().ok(),
                    records_keys: Vec::new(),
                },
            )
            .with_ledger(target.clone());
            let files: Box<dyn PublishedFiles> =
                if from.starts_with("http://") || from.starts_with("https://") {
                    Box::new(LogUrl::new(from))
                } else {
                    Box::new(Folder(PathBuf::from(from)))
                };
            let report = redeemer.recover(files.as_ref(), lane.as_deref())?;
            if json {
                print_json("ledger_recover", &report);
            } else {
                let kinds: Vec<String> = report
                    .restored
                    .iter()
                    .map(|(k, n)| format!("{n} {k}"))
                    .collect();
                outln!(
                    "{}: {} entries put back from {} ({}); the log holds {} entries",
                    target.describe(),
                    report.ledger_size - report.ledger_size_before,
                    report.from,
                    if kinds.is_empty() {
                        "none".into()
                    } else {
                        kinds.join(", ")
                    },
                    report.ledger_size
                );
                if !report.sales_without_lane.is_empty() {
                    outln!(
                        "{} put back in no platform's lane (the log does not name it; rerun on a fresh restore with --lane, or the platforms reach them through the operator): {}",
                        plural(report.sales_without_lane.len(), "sale"),
                        report.sales_without_lane.join("; ")
                    );
                }
            }
            if report.complete {
                Ok(0)
            } else {
                Err(Error::LedgerRolledBack {
                    path: PathBuf::from(target.describe()),
                    reason: format!(
                        "the published log holds {} entries, the head this node remembers {}: the node still refuses to serve; recover from a more recent copy",
                        report.ledger_size,
                        report.remembered_size.unwrap_or(0)
                    ),
                })
            }
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
            "ledger {name}: {}, root {}, {} checked",
            counted(report.size, "entry", "entries"),
            report.root,
            plural(report.heads_checked, "signed head")
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

/// A published log over HTTP: `<url>/checkpoint`, `<url>/tile/…`.
struct LogUrl {
    base: String,
    agent: ureq::Agent,
}

impl LogUrl {
    fn new(base: &str) -> LogUrl {
        let agent = ureq::Agent::config_builder()
            .timeout_connect(Some(std::time::Duration::from_secs(5)))
            .timeout_global(Some(std::time::Duration::from_secs(30)))
            .http_status_as_error(false)
            .build()
            .into();
        LogUrl {
            base: base.trim_end_matches('/').to_string(),
            agent,
        }
    }
}

impl PublishedFiles for LogUrl {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let url = format!("{}/{path}", self.base);
        let unavailable = |why: String| Error::LedgerUnavailable {
            path: PathBuf::from(&url),
            reason: why,
        };
        let mut answer = self
            .agent
            .get(&url)
            .call()
            .map_err(|e| unavailable(e.to_string()))?;
        match answer.status().as_u16() {
            200 => answer
                .body_mut()
                .with_config()
                .limit(16 << 20)
                .read_to_vec()
                .map(Some)
                .map_err(|e| unavailable(e.to_string())),
            404 => Ok(None),
            status => Err(unavailable(format!("answered HTTP {status}"))),
        }
    }

    fn describe(&self) -> String {
        self.base.clone()
    }
}
