//! One writer for the ledger: operations (redemptions, sales, play steps)
//! from any number of threads are
//! queued to a single thread that commits them in batches (group commit),
//! one durable transaction per batch; each caller gets its own outcome only
//! once its batch is durable. The storage is behind [`LedgerStorage`], so
//! another database is a second implementation of it, not a rewrite.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::log::LedgerKey;
use super::ops::{Done, Op};
use super::Ledger;
use crate::error::Error;
use crate::store::Store;

/// Most operations committed in one transaction.
pub const MAX_BATCH: usize = 512;

/// Where redemptions are recorded.
pub trait LedgerStorage: Send + 'static {
    /// Applies `ops` in one durable commit ([`super::ops::apply`]); one
    /// outcome per operation, in order. `Err`: nothing was recorded.
    fn commit(&mut self, ops: &[Op]) -> Result<Vec<Result<Done, Error>>, Error>;
    /// The database, to name it in errors.
    fn path(&self) -> PathBuf;
}

/// The SQLite ledger with its signing key.
pub struct SqliteStorage {
    ledger: Ledger,
    key: LedgerKey,
}

impl SqliteStorage {
    /// Opens the store's ledger for writing (creating it and the ledger key
    /// if needed), waiting at most `busy` for another writer's lock.
    pub fn open(store: &Store, busy: Duration) -> Result<SqliteStorage, Error> {
        let key = LedgerKey::load_or_create(store)?;
        let mut ledger = Ledger::open_waiting(&store.ledger_path(), busy)?;
        ledger.adopt_unlogged_rows()?;
        // Ends of claims published before they were logged enter the log
        // now, at its end, under a new signed head.
        let unlogged = ledger.unlogged_claims()?;
        if !unlogged.is_empty() {
            let ops: Vec<Op> = unlogged.into_iter().map(Op::EndClaims).collect();
            for outcome in ledger.commit(&ops, &key)? {
                outcome?;
            }
        }
        Ok(SqliteStorage { ledger, key })
    }
}

impl LedgerStorage for SqliteStorage {
    fn commit(&mut self, ops: &[Op]) -> Result<Vec<Result<Done, Error>>, Error> {
        self.ledger.commit(ops, &self.key)
    }

    fn path(&self) -> PathBuf {
        self.ledger.path.clone()
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
    queue: Mutex<Option<Sender<Job>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    path: PathBuf,
}

impl GroupCommit {
    /// Starts the writer thread over `storage`.
    pub fn start(storage: impl LedgerStorage) -> Result<GroupCommit, Error> {
        GroupCommit::start_many(vec![storage])
    }

    /// Starts one writer thread per storage, taking batches from one
    /// queue: for a database whose transactions do not take turns
    /// (PostgreSQL, REDEMPTION.md §Sequencing), commits then overlap.
    pub fn start_many<S: LedgerStorage>(storages: Vec<S>) -> Result<GroupCommit, Error> {
        let path = storages
            .first()
            .map(LedgerStorage::path)
            .unwrap_or_default();
        let (queue, jobs) = mpsc::channel();
        let jobs = Arc::new(Mutex::new(jobs));
        let mut threads = Vec::with_capacity(storages.len());
        for (n, storage) in storages.into_iter().enumerate() {
            let jobs = Arc::clone(&jobs);
            let thread = std::thread::Builder::new()
                .name(format!("ledger-writer-{n}"))
                .spawn(move || write_loop(storage, &jobs))
                .map_err(|e| Error::io(&path, e))?;
            threads.push(thread);
        }
        Ok(GroupCommit {
            queue: Mutex::new(Some(queue)),
            threads: Mutex::new(threads),
            path,
        })
    }

    /// Applies `ops`, returning once they are durable (or refused); one
    /// outcome per operation, in order. They may share a commit with other
    /// callers' operations.
    pub fn apply(&self, ops: Vec<Op>) -> Vec<Result<Done, Error>> {
        let stopped = |path: &PathBuf| Error::LedgerUnavailable {
            path: path.clone(),
            reason: "the ledger writer has stopped".into(),
        };
        let waiting: Vec<_> = {
            let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            ops.into_iter()
                .map(|op| {
                    let (reply, answer) = mpsc::sync_channel(1);
                    let sent = queue
                        .as_ref()
                        .is_some_and(|q| q.send(Job { op, reply }).is_ok());
                    sent.then_some(answer)
                })
                .collect()
        };
        waiting
            .into_iter()
            .map(|answer| match answer {
                Some(answer) => answer.recv().unwrap_or_else(|_| Err(stopped(&self.path))),
                None => Err(stopped(&self.path)),
            })
            .collect()
    }
}

impl Drop for GroupCommit {
    fn drop(&mut self) {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).take();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        for thread in threads {
            let _ = thread.join();
        }
    }
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
fn write_loop(mut storage: impl LedgerStorage, jobs: &Mutex<Receiver<Job>>) {
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
        match storage.commit(&ops) {
            Ok(outcomes) => {
                for (job, outcome) in batch.into_iter().zip(outcomes) {
                    let _ = job.reply.send(outcome);
                }
            }
            Err(e) => {
                for job in batch {
                    let _ = job.reply.send(Err(for_each_caller(&e, storage.path())));
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
            action: PlayAction::Roll(1),
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
}
