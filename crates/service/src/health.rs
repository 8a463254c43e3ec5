//! What the node knows of its ledger's health (docs/API.md §When the
//! ledger does not answer): a probe reads the ledger every
//! [`PROBE_EVERY`]; one that fails, or gets no answer within
//! [`PROBE_WAIT`], marks the ledger down until a probe answers again.
//! While it is down every request that would reach the ledger is answered
//! at once `503 ledger_unavailable` (nothing was recorded: it was never
//! queued), instead of waiting behind a database that does not answer.
//! Each probe also checks that the log extends the head the node
//! remembers (`ledger_rolled_back` otherwise).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use ticket_issuer_ledger::redeemer::Redeemer;

/// How often the ledger is probed.
pub(crate) const PROBE_EVERY: Duration = Duration::from_millis(500);

/// How long a probe waits for the ledger's answer.
pub(crate) const PROBE_WAIT: Duration = Duration::from_secs(1);

/// The ledger's health as last probed.
#[derive(Default)]
pub(crate) struct LedgerHealth {
    /// When the ledger was first found down (`None`: it answers).
    down_since: Mutex<Option<Instant>>,
    /// A probe is under way (one that gets no answer is not repeated).
    probing: AtomicBool,
    /// A rollback check is under way.
    checking: AtomicBool,
}

impl LedgerHealth {
    /// For how long the ledger has not answered, if it does not.
    pub(crate) fn down_for(&self) -> Option<Duration> {
        self.down_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map(|since| since.elapsed())
    }

    fn set(&self, up: bool) {
        let mut down = self
            .down_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match (up, *down) {
            (true, Some(_)) => {
                eprintln!("serve: the ledger answers again");
                *down = None;
            }
            (false, None) => {
                eprintln!("serve: the ledger does not answer: requests are refused at once (ledger_unavailable) until it does");
                *down = Some(Instant::now());
            }
            _ => {}
        }
    }

    /// Keeps the rollback finding fresh both ways, off the probe's clock
    /// (one check at a time): a database restored under the node is found
    /// within a probe, and a `ledger recover` another process ran is seen
    /// within one.
    fn check_rollback<S: AsRef<Redeemer> + Send + Sync + 'static>(
        self: &Arc<Self>,
        state: &Arc<S>,
    ) {
        if self.checking.swap(true, Ordering::SeqCst) {
            return;
        }
        let (me, worker) = (Arc::clone(self), Arc::clone(state));
        tokio::task::spawn_blocking(move || {
            let _ = (*worker).as_ref().check_rollback();
            me.checking.store(false, Ordering::SeqCst);
        });
    }

    /// Probes the node's ledger until the runtime stops.
    pub(crate) async fn run<S: AsRef<Redeemer> + Send + Sync + 'static>(
        self: Arc<Self>,
        state: Arc<S>,
    ) {
        loop {
            if !self.probing.swap(true, Ordering::SeqCst) {
                let me = Arc::clone(&self);
                let worker = Arc::clone(&state);
                let probe = tokio::task::spawn_blocking(move || {
                    let answered = (*worker).as_ref().ledger().head().is_ok();
                    me.probing.store(false, Ordering::SeqCst);
                    answered
                });
                match tokio::time::timeout(PROBE_WAIT, probe).await {
                    Ok(Ok(true)) => {
                        self.set(true);
                        self.check_rollback(&state);
                    }
                    Ok(Ok(false)) => self.set(false),
                    // No answer in time: down; the probe is left to end
                    // (the next starts once it has).
                    Ok(Err(_)) | Err(_) => self.set(false),
                }
            }
            tokio::time::sleep(PROBE_EVERY).await;
        }
    }
}
