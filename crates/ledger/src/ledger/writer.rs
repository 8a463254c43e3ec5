//! One writer for the ledger: operations (redemptions, sales, play steps)
//! from any number of threads are
//! queued to a single thread that commits them in batches (group commit),
//! one durable transaction per batch; each caller gets its own outcome only
//! once its batch is durable. The storage is behind [`LedgerStorage`], so
//! another database is a second implementation of it, not a rewrite.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::ops::{Done, Op};
use crate::error::Error;

/// Most operations committed in one transaction.
pub const MAX_BATCH: usize = 512;

/// Most operations waiting for the writer: past it an operation is refused
/// at once (`ledger_unavailable`, nothing recorded, retry) instead of
/// waiting behind a ledger that cannot keep up.
pub const QUEUE_CAPACITY: usize = 16_384;

/// How long a caller waits for its outcome: past it the answer is
/// `ledger_outcome_unknown` (the operation may yet be recorded: look it up,
/// or retry under the same idempotency key). A commit's statements are
/// bounded well below it (PostgreSQL: `lock_timeout` 1 s, `statement_timeout`
/// 10 s; SQLite: the busy timeout).
pub const ANSWER_DEADLINE: Duration = Duration::from_secs(75);

/// How long every writer may be inside one commit before the ledger is
/// taken as stalled (a database that stopped answering): new operations are
/// then refused at once (`ledger_unavailable`, nothing queued, so nothing
/// recorded) instead of queueing behind it, until a commit finishes.
pub const STALL: Duration = Duration::from_secs(2);

/// Where redemptions are recorded.
pub trait LedgerStorage: Send + 'static {
    /// Applies `ops` in one durable commit ([`super::ops::apply`]); one
    /// outcome per operation, in order. `Err`: nothing was recorded.
    fn commit(&mut self, ops: &[Op]) -> Result<Vec<Result<Done, Error>>, Error>;
    /// The database, to name it in errors.
    fn path(&self) -> PathBuf;
}

impl LedgerStorage for Box<dyn LedgerStorage> {
    fn commit(&mut self, ops: &[Op]) -> Result<Vec<Result<Done, Error>>, Error> {
        (**self).commit(ops)
    }

    fn path(&self) -> PathBuf {
        (**self).path()
    }
}

/// A queued operation and where its outcome goes.
struct Job {
    op: Op,
    reply: SyncSender<Result<Done, Error>>,
}

/// The writer threads and their queue. Dropping it lets the queue drain,
/// then joins the threads.
pub struct GroupCommit {
    queue: Mutex<Option<SyncSender<Job>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    path: PathBuf,
    deadline: Duration,
    /// Per writer thread: when its commit under way began (milliseconds
    /// since `epoch`, plus one), 0 when it is not committing.
    busy: Arc<Vec<AtomicU64>>,
    epoch: Instant,
}

/// How long a shut-down writer's threads are waited for (a database that
/// stopped answering may hold them in a commit for good: nothing of theirs
/// was answered, so leaving them is safe).
pub const JOIN_WAIT: Duration = Duration::from_secs(3);

impl GroupCommit {
    /// Starts the writer thread over `storage`.
    pub fn start(storage: impl LedgerStorage) -> Result<GroupCommit, Error> {
        GroupCommit::start_many(vec![storage])
    }

    /// Starts one writer thread per storage, taking batches from one
    /// queue: for a database whose transactions do not take turns
    /// (PostgreSQL, REDEMPTION.md §Sequencing), commits then overlap.
    pub fn start_many<S: LedgerStorage>(storages: Vec<S>) -> Result<GroupCommit, Error> {
        GroupCommit::start_bounded(storages, QUEUE_CAPACITY, ANSWER_DEADLINE)
    }

    /// [`GroupCommit::start_many`] with a queue of `capacity` operations
    /// and answers waited for at most `deadline`.
    pub fn start_bounded<S: LedgerStorage>(
        storages: Vec<S>,
        capacity: usize,
        deadline: Duration,
    ) -> Result<GroupCommit, Error> {
        let path = storages
            .first()
            .map(LedgerStorage::path)
            .unwrap_or_default();
        let (queue, jobs) = mpsc::sync_channel(capacity);
        let jobs = Arc::new(Mutex::new(jobs));
        let epoch = Instant::now();
        let busy: Arc<Vec<AtomicU64>> =
            Arc::new((0..storages.len()).map(|_| AtomicU64::new(0)).collect());
        let mut threads = Vec::with_capacity(storages.len());
        for (n, storage) in storages.into_iter().enumerate() {
            let jobs = Arc::clone(&jobs);
            let busy = Arc::clone(&busy);
            let thread = std::thread::Builder::new()
                .name(format!("ledger-writer-{n}"))
                .spawn(move || {
                    write_loop(storage, &jobs, &|committing| {
                        let at = match committing {
                            true => {
                                u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX - 1)
                                    + 1
                            }
                            false => 0,
                        };
                        busy[n].store(at, Ordering::Relaxed);
                    });
                })
                .map_err(|e| Error::io(&path, e))?;
            threads.push(thread);
        }
        Ok(GroupCommit {
            queue: Mutex::new(Some(queue)),
            threads: Mutex::new(threads),
            path,
            deadline,
            busy,
            epoch,
        })
    }

    /// How long every writer has been inside its commit, when all are and
    /// the shortest is past [`STALL`]: the ledger does not answer.
    fn stalled(&self) -> Option<Duration> {
        let now = self.epoch.elapsed().as_millis();
        let mut shortest = u128::MAX;
        for began in self.busy.iter() {
            match began.load(Ordering::Relaxed) {
                0 => return None,
                at => shortest = shortest.min(now.saturating_sub(u128::from(at - 1))),
            }
        }
        let shortest = Duration::from_millis(u64::try_from(shortest).unwrap_or(u64::MAX));
        (shortest > STALL).then_some(shortest)
    }

    /// Applies `ops`, returning once they are durable (or refused); one
    /// outcome per operation, in order. They may share a commit with other
    /// callers' operations.
    pub fn apply(&self, ops: Vec<Op>) -> Vec<Result<Done, Error>> {
        let refused = |reason: &str| {
            Err(Error::LedgerUnavailable {
                path: self.path.clone(),
                reason: reason.into(),
            })
        };
        let unknown = |reason: String| {
            Err(Error::LedgerOutcomeUnknown {
                path: self.path.clone(),
                reason,
            })
        };
        // A call is admitted whole or not at all: its first operation must
        // find room (else the call is refused at once, nothing queued); the
        // rest then wait for room as the writer drains (a `mark-sold` of
        // more operations than the queue holds is one caller, paced).
        if let Some(stalled) = self.stalled() {
            let reason = format!(
                "the ledger has not finished a commit for {} s and does not answer; this operation was not queued; try another node",
                stalled.as_secs()
            );
            return ops.iter().map(|_| refused(&reason)).collect();
        }
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut admitted = false;
        let waiting: Vec<Result<_, String>> = ops
            .into_iter()
            .map(|op| {
                let Some(q) = queue.as_ref() else {
                    return Err("the ledger writer has stopped".to_string());
                };
                let (reply, answer) = mpsc::sync_channel(1);
                let job = Job { op, reply };
                let sent = if admitted {
                    q.send(job).map_err(|_| false)
                } else {
                    q.try_send(job)
                        .map_err(|e| matches!(e, TrySendError::Full(_)))
                };
                match sent {
                    Ok(()) => {
                        admitted = true;
                        Ok(answer)
                    }
                    Err(true) => Err(format!(
                        "the ledger writer's queue is full ({QUEUE_CAPACITY} operations at most): the ledger is not keeping up"
                    )),
                    Err(false) => Err("the ledger writer has stopped".to_string()),
                }
            })
            .collect();
        let until = Instant::now() + self.deadline;
        waiting
            .into_iter()
            .map(|answer| match answer {
                Ok(answer) => match answer.recv_timeout(until.saturating_duration_since(Instant::now())) {
                    Ok(outcome) => outcome,
                    Err(RecvTimeoutError::Timeout) => unknown(format!(
                        "no outcome within {} s: the operation may yet be recorded; look it up, or retry under the same idempotency key",
                        self.deadline.as_secs()
                    )),
                    Err(RecvTimeoutError::Disconnected) => unknown(
                        "the ledger writer stopped with the operation in hand: it may be recorded; look it up, or retry under the same idempotency key".into(),
                    ),
                },
                Err(reason) => refused(&reason),
            })
            .collect()
    }
}

impl Drop for GroupCommit {
    /// Closes the queue and waits for the writers to finish what they
    /// hold, at most [`JOIN_WAIT`] once they are all stuck in a commit
    /// (then they are left: nothing they hold was answered).
    fn drop(&mut self) {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).take();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        let mut stuck_since: Option<Instant> = None;
        for thread in threads {
            while !thread.is_finished() {
                if self.stalled().is_some() {
                    let since = *stuck_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > JOIN_WAIT {
                        eprintln!(
                            "issuer: ledger writer: {} does not answer; leaving its commit under way (no caller was answered for it)",
                            self.path.display()
                        );
                        return;
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = thread.join();
        }
    }
}

/// What a caught panic says (its `&str` or `String` payload).
#[must_use]
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

/// A failed commit as each of its callers gets it, with its kind and what
/// it means for a retry: a damaged log is not cured by retrying; an
/// outcome not known may have been recorded (look it up, or retry under the
/// same idempotency key); anything else recorded nothing.
pub(crate) fn for_each_caller(e: &Error, path: PathBuf) -> Error {
    match e {
        Error::LedgerDamaged { reason, .. } => Error::LedgerDamaged {
            path,
            reason: reason.clone(),
        },
        Error::LedgerOutcomeUnknown { reason, .. } => Error::LedgerOutcomeUnknown {
            path,
            reason: reason.clone(),
        },
        Error::LedgerRolledBack { reason, .. } => Error::LedgerRolledBack {
            path,
            reason: reason.clone(),
        },
        Error::Ledger { source, .. } => Error::LedgerUnavailable {
            path,
            reason: sqlite_reason(source.as_ref()),
        },
        Error::LedgerUnavailable { reason, .. } => Error::LedgerUnavailable {
            path,
            reason: reason.clone(),
        },
        e => Error::LedgerUnavailable {
            path,
            reason: e.to_string(),
        },
    }
}

/// What a database failure means for the operator.
fn sqlite_reason(e: &(dyn std::error::Error + Send + Sync + 'static)) -> String {
    let sqlite = e.downcast_ref::<rusqlite::Error>();
    match sqlite.and_then(rusqlite::Error::sqlite_error_code) {
        Some(rusqlite::ErrorCode::ReadOnly) => format!(
            "{e}: the ledger file is not writable by this user; run the command as the ledger's owner or give it write access"
        ),
        _ => e.to_string(),
    }
}

/// Takes what is queued (up to `MAX_BATCH`), commits it, answers each;
/// the writers sharing the queue take turns taking, not committing.
fn write_loop(
    mut storage: impl LedgerStorage,
    jobs: &Mutex<Receiver<Job>>,
    committing: &dyn Fn(bool),
) {
    loop {
        let batch = {
            let jobs = jobs.lock().unwrap_or_else(|p| p.into_inner());
            let Ok(first) = jobs.recv() else {
                return;
            };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match jobs.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            batch
        };
        let ops: Vec<Op> = batch.iter().map(|j| j.op.clone()).collect();
        // A panic in a commit (a driver's, a bug's) is caught here: its
        // callers learn the outcome is unknown and the writer carries on
        // with the next batch, instead of every later caller finding the
        // writer gone. The storage's transaction was dropped, so rolled
        // back, unless its COMMIT had returned: hence "unknown".
        committing(true);
        let committed = std::panic::catch_unwind(AssertUnwindSafe(|| storage.commit(&ops)));
        committing(false);
        match committed {
            Ok(Ok(outcomes)) => {
                for (job, outcome) in batch.into_iter().zip(outcomes) {
                    let _ = job.reply.send(outcome);
                }
            }
            Ok(Err(e)) => {
                for job in batch {
                    let _ = job.reply.send(Err(for_each_caller(&e, storage.path())));
                }
            }
            Err(panic) => {
                let what = panic_message(panic.as_ref());
                eprintln!(
                    "issuer: ledger writer: a commit of {} operation(s) panicked ({what}); each is answered ledger_outcome_unknown, and the writer goes on",
                    batch.len()
                );
                for job in batch {
                    let _ = job.reply.send(Err(Error::LedgerOutcomeUnknown {
                        path: storage.path(),
                        reason: format!(
                            "the commit panicked ({what}); look the operation up, or retry it under the same idempotency key"
                        ),
                    }));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use crate::ledger::ops::{PlayAction, PlayOrder, UnitRef};

    /// A storage whose every commit fails with `fail`'s error.
    struct Failing(fn() -> Error);

    impl LedgerStorage for Failing {
        fn commit(&mut self, _: &[Op]) -> Result<Vec<Result<Done, Error>>, Error> {
            Err((self.0)())
        }
        fn path(&self) -> PathBuf {
            PathBuf::from("postgres://node@db/ledger")
        }
    }

    fn roll() -> Op {
        Op::Play(PlayOrder {
            unit: UnitRef {
                game: Game::TRESORS_ENSABLES,
                emission: 1,
                block: 1,
                index: 0,
            },
            unit_id: "TE-1-1-0-X".into(),
            action: PlayAction::Step(1),
            first_stop: None,
            end_step: 9,
        })
    }

    fn codes(fail: fn() -> Error) -> Vec<&'static str> {
        let writer = GroupCommit::start(Failing(fail)).unwrap();
        writer
            .apply(vec![roll(), roll()])
            .into_iter()
            .map(|o| o.unwrap_err().code())
            .collect()
    }

    #[test]
    fn an_unknown_commit_outcome_reaches_every_caller_as_unknown_never_as_nothing_recorded() {
        let unknown = || Error::LedgerOutcomeUnknown {
            path: PathBuf::from("db"),
            reason: "commit: connection reset; lookup: connection refused".into(),
        };
        assert_eq!(
            codes(unknown),
            ["ledger_outcome_unknown", "ledger_outcome_unknown"]
        );
        let damaged = || Error::LedgerDamaged {
            path: PathBuf::from("db"),
            reason: "log_state".into(),
        };
        assert_eq!(codes(damaged), ["ledger_damaged", "ledger_damaged"]);
        let busy = || Error::Internal {
            what: "busy".into(),
        };
        assert_eq!(codes(busy), ["ledger_unavailable", "ledger_unavailable"]);
    }

    /// Commits after `gate` opens; panics on its first commit when told to.
    struct Gated {
        gate: std::sync::Arc<(Mutex<bool>, std::sync::Condvar)>,
        panic_first: bool,
    }

    impl LedgerStorage for Gated {
        fn commit(&mut self, ops: &[Op]) -> Result<Vec<Result<Done, Error>>, Error> {
            if std::mem::take(&mut self.panic_first) {
                panic!("a forced panic in the commit");
            }
            let (open, opened) = &*self.gate;
            let mut open = open.lock().unwrap();
            while !*open {
                open = opened.wait(open).unwrap();
            }
            Ok(ops
                .iter()
                .map(|_| Ok(Done::ClaimsEnded { seq: Some(0) }))
                .collect())
        }
        fn path(&self) -> PathBuf {
            PathBuf::from("gated")
        }
    }

    fn gated(
        panic_first: bool,
        open: bool,
    ) -> (Gated, std::sync::Arc<(Mutex<bool>, std::sync::Condvar)>) {
        let gate = std::sync::Arc::new((Mutex::new(open), std::sync::Condvar::new()));
        let storage = Gated {
            gate: std::sync::Arc::clone(&gate),
            panic_first,
        };
        (storage, gate)
    }

    #[test]
    fn a_panic_in_a_commit_is_answered_unknown_and_the_writer_goes_on() {
        let (storage, _gate) = gated(true, true);
        let writer = GroupCommit::start(storage).unwrap();
        let first = writer.apply(vec![roll()]);
        assert_eq!(
            first[0].as_ref().unwrap_err().code(),
            "ledger_outcome_unknown"
        );
        assert!(first[0]
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("panicked"));
        // The same writer commits the next batch.
        let next = writer.apply(vec![roll(), roll()]);
        assert!(next.iter().all(Result::is_ok), "{next:?}");
    }

    #[test]
    fn a_commit_stuck_past_the_stall_bound_refuses_new_calls_at_once_and_a_drop_leaves_it() {
        let (storage, gate) = gated(false, false);
        let writer = std::sync::Arc::new(
            GroupCommit::start_bounded(vec![storage], 16, Duration::from_secs(30)).unwrap(),
        );
        let held = std::sync::Arc::clone(&writer);
        let caught = std::thread::spawn(move || held.apply(vec![roll()]));
        std::thread::sleep(STALL + Duration::from_millis(300));
        let started = Instant::now();
        let refused = writer.apply(vec![roll(), roll()]);
        assert!(started.elapsed() < Duration::from_millis(100));
        for r in &refused {
            let e = r.as_ref().unwrap_err();
            assert_eq!(e.code(), "ledger_unavailable", "{e}");
            assert!(e.to_string().contains("nothing was recorded"), "{e}");
        }
        // Once the commit ends, calls are taken again.
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        assert!(caught.join().unwrap()[0].is_ok());
        assert!(writer.apply(vec![roll()])[0].is_ok());
        // A writer stuck for good is left by its drop within the bound
        // (its caller was answered unknown at its deadline).
        let (storage, _stuck) = gated(false, false);
        let writer =
            GroupCommit::start_bounded(vec![storage], 16, Duration::from_millis(500)).unwrap();
        let unknown = writer.apply(vec![roll()]);
        assert_eq!(
            unknown[0].as_ref().unwrap_err().code(),
            "ledger_outcome_unknown"
        );
        let dropped = Instant::now();
        drop(writer);
        assert!(
            dropped.elapsed() < STALL + JOIN_WAIT + Duration::from_secs(1),
            "{:?}",
            dropped.elapsed()
        );
    }

    #[test]
    fn a_full_queue_refuses_at_once_and_an_answer_past_its_deadline_is_unknown() {
        let (storage, gate) = gated(false, false);
        let writer = std::sync::Arc::new(
            GroupCommit::start_bounded(vec![storage], 2, Duration::from_secs(2)).unwrap(),
        );
        // One batch held in the commit, two waiting: the queue is full.
        let held: Vec<_> = (0..3)
            .map(|_| {
                let writer = std::sync::Arc::clone(&writer);
                let handle = std::thread::spawn(move || writer.apply(vec![roll()]));
                std::thread::sleep(Duration::from_millis(100));
                handle
            })
            .collect();
        let started = Instant::now();
        let refused = writer.apply(vec![roll()]);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "refused at once"
        );
        let e = refused[0].as_ref().unwrap_err();
        assert_eq!(e.code(), "ledger_unavailable");
        assert!(e.to_string().contains("queue is full"), "{e}");
        // Past the deadline, those waiting learn the outcome is unknown
        // (on a loaded machine the writer may not have taken the first
        // before the third came: that one was refused as full).
        let codes: Vec<&str> = held
            .into_iter()
            .map(|h| h.join().unwrap()[0].as_ref().unwrap_err().code())
            .collect();
        assert!(codes.contains(&"ledger_outcome_unknown"), "{codes:?}");
        assert!(codes
            .iter()
            .all(|c| ["ledger_outcome_unknown", "ledger_unavailable"].contains(c)));
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        // Once the writer drained what was queued, a call is taken again
        // (until then it is refused at once: the queue is full, or the
        // held commit, just let go, still counts as stalled).
        let until = Instant::now() + Duration::from_secs(5);
        let again = loop {
            let outcome = writer.apply(vec![roll()]).remove(0);
            match &outcome {
                Err(e) if e.code() == "ledger_unavailable" && Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => break outcome,
            }
        };
        assert!(again.is_ok(), "{again:?}");
    }

    #[test]
    fn a_call_of_more_operations_than_the_queue_holds_is_taken_whole_and_paced() {
        let (storage, _gate) = gated(false, true);
        let writer = GroupCommit::start_bounded(vec![storage], 4, Duration::from_secs(30)).unwrap();
        let outcomes = writer.apply((0..100).map(|_| roll()).collect());
        assert_eq!(outcomes.len(), 100);
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    }
}
