//! Collecting witnesses' cosignatures (docs/REDEMPTION.md §Cosigned
//! checkpoints): every `every`, a node submits the log's latest signed
//! head to each witness of its configuration (C2SP tlog-witness
//! `add-checkpoint`, with the consistency proof from the size that witness
//! last cosigned), checks each cosignature against the witness's key, and
//! once k of them verify stores the cosigned note in the ledger, where
//! every node and `issuer ledger head` read it. What the node *publishes*
//! (`/v1/log/checkpoint`, the tiles under it, receipts) follows the
//! operator's policy: fail closed, only the latest witnessed head; fail
//! open, the latest head, cosigned or not.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ticket_issuer_core::error::Error;
use ticket_issuer_core::merkle::Hash;
use ticket_issuer_ledger::ledger::log;
use ticket_issuer_ledger::ledger::target::LedgerTarget;
use ticket_issuer_ledger::ledger::witnessed::{with_cosignatures, Quorum};
use ticket_issuer_ledger::redeemer::Redeemer;
use ticket_issuer_ledger::witness::cosignature::verify_cosignature;
use ticket_issuer_ledger::witness::note::Vkey;

use crate::witness::client::{add_checkpoint, AddOutcome};

/// A node's witnesses and its quorum policy.
#[derive(Clone, Debug)]
pub struct WitnessingConfig {
    /// Each witness's submission URL prefix, in the quorum's order.
    urls: Vec<String>,
    /// The witnesses' keys and how many must cosign.
    quorum: Quorum,
    /// Publish the latest head even when it lacks its quorum (fail open);
    /// `false`: publish only witnessed heads (fail closed).
    fail_open: bool,
    /// How often the latest head is submitted.
    every: Duration,
}

impl WitnessingConfig {
    /// Publishes the latest head even without its quorum.
    #[must_use]
    pub fn fails_open(&self) -> bool {
        self.fail_open
    }

    /// `witnesses` (URL and verifier key each), `k` of which must cosign;
    /// `Err` says why the policy cannot be met.
    pub fn new(
        witnesses: Vec<(String, Vkey)>,
        k: usize,
        fail_open: bool,
        every: Duration,
    ) -> Result<WitnessingConfig, Error> {
        let (urls, keys): (Vec<String>, Vec<Vkey>) = witnesses.into_iter().unzip();
        let quorum = Quorum::new(keys, k).map_err(|reason| Error::ServiceConfig {
            reason: format!("--witness: {reason}"),
        })?;
        Ok(WitnessingConfig {
            urls,
            quorum,
            fail_open,
            every,
        })
    }
}

/// What the rounds found, for `/metrics`.
#[derive(Default)]
struct Seen {
    /// Per witness: the size it last cosigned (or said it had).
    known: Vec<Option<u64>>,
    /// Per witness: its failures (no answer, a refusal, a bad cosignature).
    failures: Vec<u64>,
    /// The log's latest head and the largest witnessed one.
    latest: u64,
    witnessed: u64,
}

/// Why a witness gave no cosignature.
enum Refused {
    /// No answer, or a refusal that says nothing of the log's history.
    Failed(String),
    /// It cosigned a head of size `witnessed` the log does not extend.
    Forked { witnessed: u64, why: String },
}

/// The collector, shared by the handlers and its task.
pub(crate) struct Cosigning {
    config: WitnessingConfig,
    seen: Mutex<Seen>,
}

impl Cosigning {
    pub(crate) fn new(config: WitnessingConfig) -> Cosigning {
        let seen = Seen {
            known: vec![None; config.urls.len()],
            failures: vec![0; config.urls.len()],
            ..Seen::default()
        };
        Cosigning {
            config,
            seen: Mutex::new(seen),
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Submits the latest head every period (after a first round the
    /// router ran) until the runtime stops.
    pub(crate) async fn run<S: AsRef<Redeemer> + Send + Sync + 'static>(
        self: Arc<Self>,
        state: Arc<S>,
    ) {
        loop {
            tokio::time::sleep(self.config.every).await;
            let me = Arc::clone(&self);
            let worker = Arc::clone(&state);
            let round = tokio::task::spawn_blocking(move || me.round((*worker).as_ref())).await;
            if let Ok(Err(e)) = round {
                eprintln!("serve: witnessing: {e}");
            }
        }
    }

    /// One round: the latest head to every witness, stored cosigned once
    /// the quorum is met. A witness whose answer says the log forked or
    /// went back stops the node's money path (`ledger_rolled_back`) until a
    /// witness cosigns the log's head again.
    pub(crate) fn round(&self, redeemer: &Redeemer) -> Result<(), Error> {
        let ledger = redeemer.ledger();
        let Some(head) = ledger.with_log(|s| s.latest_head())?.flatten() else {
            return Ok(());
        };
        let witnessed = ledger
            .with_log(|s| s.latest_witnessed_head())?
            .flatten()
            .map_or(0, |h| h.size);
        {
            let mut seen = self.seen();
            seen.latest = head.size;
            seen.witnessed = witnessed;
        }
        if self.config.quorum.met(&head.checkpoint) {
            // Cosigned already (by this node's last round, another node, or
            // the published log a recovery put back).
            redeemer.witness_cosigned(head.size);
            return Ok(());
        }
        // The note as the log signed it: cosignatures are added only once
        // the quorum is met, so a stored note has none yet.
        let note = head.checkpoint;
        let mut lines: Vec<String> = Vec::new();
        let mut forked = false;
        let witnesses = self.config.urls.iter().zip(&self.config.quorum.witnesses);
        for (i, (url, vkey)) in witnesses.enumerate() {
            match self.ask(ledger, i, url, head.size, &note) {
                Ok(Some(got)) => {
                    let valid: Vec<String> = got
                        .into_iter()
                        .filter(|l| {
                            verify_cosignature(
                                &with_cosignatures(&note, std::slice::from_ref(l)),
                                vkey,
                            )
                            .is_ok()
                        })
                        .collect();
                    if valid.is_empty() {
                        self.failed(i, url, "its answer holds no cosignature by its key");
                    }
                    lines.extend(valid);
                }
                Ok(None) => {}
                Err(Refused::Failed(reason)) => self.failed(i, url, &reason),
                Err(Refused::Forked { witnessed, why }) => {
                    forked = true;
                    self.failed(i, url, &format!("refused the log's head ({why})"));
                    let witness = format!("the witness at {url} refused the log's head ({why})");
                    redeemer.witness_refused(witness, witnessed, head.size);
                }
            }
        }
        if !forked && !lines.is_empty() {
            redeemer.witness_cosigned(head.size);
        }
        let cosigned = with_cosignatures(&note, &lines);
        if self.config.quorum.met(&cosigned) && ledger.cosign_head(head.size, &note, &cosigned)? {
            self.seen().witnessed = head.size;
        }
        Ok(())
    }

    /// Witness `i`'s cosignature lines for the head of `size` (`None`: it
    /// has cosigned a larger one already); `Err` why not.
    fn ask(
        &self,
        ledger: &LedgerTarget,
        i: usize,
        url: &str,
        size: u64,
        note: &str,
    ) -> Result<Option<Vec<String>>, Refused> {
        let mut old = self.seen().known[i].unwrap_or(0);
        // Once more after a 409 that tells the size the witness holds.
        for _ in 0..2 {
            if old > size {
                // Cosigned a larger head: another node's, signed since
                // this round read the log, or one the log lost.
                let latest = ledger
                    .with_log(|s| s.latest_head())
                    .map_err(|e| Refused::Failed(e.to_string()))?
                    .flatten()
                    .map_or(0, |h| h.size);
                return if latest < old {
                    Err(Refused::Forked {
                        witnessed: old,
                        why: format!(
                            "it cosigned a head of size {old}; the log holds {latest} entries"
                        ),
                    })
                } else {
                    Ok(None)
                };
            }
            let proof = match old {
                0 => Vec::new(),
                o if o == size => Vec::new(),
                o => consistency(ledger, o, size).map_err(|e| Refused::Failed(e.to_string()))?,
            };
            match add_checkpoint(url, old, &proof, note) {
                Ok(AddOutcome::Cosigned(lines)) => {
                    self.seen().known[i] = Some(size);
                    return Ok(Some(lines));
                }
                Ok(AddOutcome::Conflict(known)) => {
                    self.seen().known[i] = Some(known);
                    old = known;
                }
                // A split view (409), or a consistency proof from the size
                // it cosigned that fails (422): the log is not the one it
                // cosigned.
                Ok(AddOutcome::Refused { status, body })
                    if (status == 409 && body.starts_with("split view")) || status == 422 =>
                {
                    return Err(Refused::Forked {
                        witnessed: if status == 409 { size } else { old },
                        why: format!("{status}: {}", body.trim()),
                    })
                }
                Ok(AddOutcome::Refused { status, body }) => {
                    return Err(Refused::Failed(format!(
                        "refused {status}: {}",
                        body.trim()
                    )))
                }
                Err(e) => return Err(Refused::Failed(e.to_string())),
            }
        }
        Err(Refused::Failed(
            "it keeps answering 409 with another size".into(),
        ))
    }

    fn failed(&self, i: usize, url: &str, reason: &str) {
        self.seen().failures[i] += 1;
        eprintln!("serve: the witness at {url}: {reason}");
    }

    /// Its gauges, Prometheus text format.
    pub(crate) fn render(&self, out: &mut String) {
        let seen = self.seen();
        out.push_str("# HELP issuer_log_size Entries under the log's latest signed head.\n");
        out.push_str("# TYPE issuer_log_size gauge\n");
        let _ = writeln!(out, "issuer_log_size {}", seen.latest);
        out.push_str("# HELP issuer_log_witnessed_size Entries under the latest head its witnesses cosigned (the quorum met).\n");
        out.push_str("# TYPE issuer_log_witnessed_size gauge\n");
        let _ = writeln!(out, "issuer_log_witnessed_size {}", seen.witnessed);
        out.push_str("# HELP issuer_witness_failures_total Submissions to a witness that brought no valid cosignature (no answer, a refusal, a bad cosignature).\n");
        out.push_str("# TYPE issuer_witness_failures_total counter\n");
        for (vkey, n) in self.config.quorum.witnesses.iter().zip(&seen.failures) {
            let _ = writeln!(
                out,
                "issuer_witness_failures_total{{witness=\"{}\"}} {n}",
                vkey.name()
            );
        }
    }
}

/// The consistency proof from `old` to `new`.
fn consistency(ledger: &LedgerTarget, old: u64, new: u64) -> Result<Vec<Hash>, Error> {
    let proof = ledger
        .with_log(|s| log::prove_consistency(s, old, Some(new)))?
        .flatten()
        .ok_or_else(|| Error::Internal {
            what: format!("no consistency proof from {old} to {new}"),
        })?;
    proof
        .consistency_proof
        .iter()
        .map(|h| {
            hex::decode(h)
                .ok()
                .and_then(|b| <Hash>::try_from(b).ok())
                .ok_or_else(|| Error::Internal {
                    what: format!("a consistency proof hash is not 32 bytes: {h}"),
                })
        })
        .collect()
}
