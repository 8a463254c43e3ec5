//! The redeemer itself: its store and keys (through [`Units`]), the ledger
//! it records into and its one writer, and how long it waits; its
//! constructor and settings. What it does is in the other files, each an
//! `impl Redeemer` of its own.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ed25519_dalek::VerifyingKey;

use super::redemption::OwnedKeys;
use super::units::{lock, Units};
use crate::binding::Bindings;
use crate::error::Error;
use crate::game::Game;
use crate::ledger::ops::{Done, Op};
use crate::ledger::published::Publication;
use crate::ledger::target::LedgerTarget;
use crate::ledger::writer::GroupCommit;
use crate::ledger::BUSY_TIMEOUT;
use crate::routing::Routes;
use crate::store::Store;

/// Redeems units of one store with one set of keys, for as long as it
/// lives (a command, a service).
pub struct Redeemer {
    pub(super) units: Arc<Units>,
    /// Which ledger each emission written about is sold through.
    bindings: Bindings,
    writer: Mutex<Option<Arc<GroupCommit>>>,
    /// How long a caller waits for a write's outcome
    /// ([`crate::ledger::writer::ANSWER_DEADLINE`] unless set).
    answer_within: Duration,
    /// The head this store remembers of the ledger, once its identity was
    /// read (recover.rs).
    pub(super) head_memory: std::sync::OnceLock<Arc<crate::ledger::remembered::HeadMemory>>,
    pub(super) busy: Duration,
    pub(super) ledger: LedgerTarget,
    /// The head receipts are made against.
    pub(super) publication: Publication,
    /// On a node with several ledgers: the routing table and this
    /// ledger's name in it (only emissions routed here are sold or
    /// written about).
    route: Option<(Arc<Routes>, String)>,
}

impl Redeemer {
    /// A redeemer of `store`'s units with `keys`. The ledger is opened on
    /// the first redemption.
    #[must_use]
    pub fn new(store: Store, keys: OwnedKeys) -> Redeemer {
        let ledger = LedgerTarget::of_store(&store);
        Redeemer {
            writer: Mutex::new(None),
            answer_within: crate::ledger::writer::ANSWER_DEADLINE,
            head_memory: std::sync::OnceLock::new(),
            busy: BUSY_TIMEOUT,
            bindings: Bindings::new(&store, &ledger),
            ledger,
            publication: Publication::Latest,
            route: None,
            units: Arc::new(Units::new(store, keys)),
        }
    }

    /// Records into `ledger` (default: the store's own SQLite ledger).
    #[must_use]
    pub fn with_ledger(mut self, ledger: LedgerTarget) -> Redeemer {
        self.bindings = Bindings::new(&self.units.store, &ledger);
        self.ledger = ledger;
        self.head_memory = std::sync::OnceLock::new();
        self
    }

    /// One ledger of a node's several: this redeemer sells and writes
    /// about only the emissions `routes` routes to `name`.
    #[must_use]
    pub fn with_route(mut self, routes: Arc<Routes>, name: &str) -> Redeemer {
        self.route = Some((routes, name.to_string()));
        self
    }

    /// Whether `game`'s `emission` is sold through this redeemer's ledger
    /// (always, on a node with one ledger).
    #[must_use]
    pub fn routes_here(&self, game: Game, emission: u32) -> bool {
        self.route
            .as_ref()
            .is_none_or(|(routes, name)| routes.routes_to(name, game, emission))
    }

    /// Answers a write `ledger_outcome_unknown` once `within` has passed
    /// without its outcome (a service's bound, shorter than a platform's
    /// timeout; docs/API.md §Retries).
    #[must_use]
    pub fn with_answer_deadline(mut self, within: Duration) -> Redeemer {
        self.answer_within = within;
        self
    }

    /// Waits at most `busy` for another process's lock on the ledger before
    /// answering "unavailable" (default: a minute, as a command waits).
    #[must_use]
    pub fn with_busy_timeout(mut self, busy: Duration) -> Redeemer {
        self.busy = busy;
        self
    }

    /// Makes receipts against `publication`'s head (a node whose
    /// witnessing fails closed: the latest witnessed one).
    #[must_use]
    pub fn with_publication(mut self, publication: Publication) -> Redeemer {
        self.publication = publication;
        self
    }

    /// The head it publishes and makes receipts against.
    #[must_use]
    pub fn publication(&self) -> Publication {
        self.publication
    }

    /// The ledger it records into.
    #[must_use]
    pub fn ledger(&self) -> &LedgerTarget {
        &self.ledger
    }

    /// The store.
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.units.store
    }

    /// The issuer's public key it checks every seal with.
    #[must_use]
    pub fn public_key(&self) -> &VerifyingKey {
        &self.units.keys.public_key
    }

    /// Applies `ops` through the ledger writer: one outcome per operation,
    /// in order. An operation about an emission sold through another
    /// ledger is refused ([`Bindings`]) and the others go on.
    pub(crate) fn submit(&self, ops: Vec<Op>) -> Vec<Result<Done, Error>> {
        let mut outcomes = Vec::with_capacity(ops.len());
        let mut passing = Vec::new();
        for op in ops {
            let routed = match &self.route {
                Some((routes, name)) => op
                    .emissions()
                    .into_iter()
                    .try_for_each(|(game, emission)| routes.check(name, game, emission)),
                None => Ok(()),
            };
            match routed.and_then(|()| self.bindings.check_ops(std::slice::from_ref(&op))) {
                Ok(()) => {
                    outcomes.push(None);
                    passing.push(op);
                }
                Err(e) => outcomes.push(Some(Err(e))),
            }
        }
        let applied = match passing.len() {
            0 => Vec::new(),
            n => match self.writer() {
                Ok(writer) => writer.apply(passing),
                Err(e) => {
                    let path = PathBuf::from(self.ledger.describe());
                    let mut errors: Vec<_> = (1..n)
                        .map(|_| Err(crate::ledger::writer::for_each_caller(&e, path.clone())))
                        .collect();
                    errors.insert(0, Err(e));
                    errors
                }
            },
        };
        let mut applied = applied.into_iter();
        outcomes
            .into_iter()
            .map(|outcome| {
                outcome.unwrap_or_else(|| {
                    applied.next().unwrap_or_else(|| {
                        Err(Error::Internal {
                            what: "the ledger writer gave fewer outcomes than operations".into(),
                        })
                    })
                })
            })
            .collect()
    }

    /// The ledger writer, started on first use.
    /// Opens the ledger's write path now rather than at the first write
    /// (a node at start): a ledger key that is not the log's, or a log
    /// that does not extend the remembered head, is said at once.
    pub fn open_writer(&self) -> Result<(), Error> {
        self.writer().map(drop)
    }

    fn writer(&self) -> Result<Arc<GroupCommit>, Error> {
        let mut slot = lock(&self.writer);
        if let Some(w) = slot.as_ref() {
            return Ok(Arc::clone(w));
        }
        let w = Arc::new(self.ledger.writer_within(
            &self.units.store,
            self.busy,
            self.answer_within,
        )?);
        *slot = Some(Arc::clone(&w));
        Ok(w)
    }
}
