//! One writer for the ledger: operations (redemptions, sales, play steps)
//! from any number of threads are
//! queued to a single thread that commits them in batches (group commit),
//! one durable transaction per batch; each caller gets its own outcome only
//! once its batch is durable. The storage is behind [`LedgerStorage`], so
//! another database is a second implementation of it, not a rewrite.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Mutex;
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

/// The writer thread and its queue. Dropping it lets the queue drain, then
/// joins the thread.
pub struct GroupCommit {
    queue: Mutex<Option<Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    path: PathBuf,
}

impl GroupCommit {
    /// Starts the writer thread over `storage`.
    pub fn start(storage: impl LedgerStorage) -> Result<GroupCommit, Error> {
        let path = storage.path();
        let (queue, jobs) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("ledger-writer".into())
            .spawn(move || write_loop(storage, &jobs))
            .map_err(|e| Error::io(&path, e))?;
        Ok(GroupCommit {
            queue: Mutex::new(Some(queue)),
            thread: Mutex::new(Some(thread)),
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
        if let Some(thread) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = thread.join();
        }
    }
}

/// Takes what is queued (up to `MAX_BATCH`), commits it, answers each.
fn write_loop(mut storage: impl LedgerStorage, jobs: &Receiver<Job>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let ops: Vec<Op> = batch.iter().map(|j| j.op.clone()).collect();
        match storage.commit(&ops) {
            Ok(outcomes) => {
                for (job, outcome) in batch.into_iter().zip(outcomes) {
                    let _ = job.reply.send(outcome);
                }
            }
            Err(e) => {
                // Each caller gets the failure with its kind: a damaged log
                // is not cured by retrying, a busy ledger is.
                let reason = e.to_string();
                let damaged = matches!(e, Error::LedgerDamaged { .. });
                for job in batch {
                    let (path, reason) = (storage.path(), reason.clone());
                    let _ = job.reply.send(Err(if damaged {
                        Error::LedgerDamaged { path, reason }
                    } else {
                        Error::LedgerUnavailable { path, reason }
                    }));
                }
            }
        }
    }
}
