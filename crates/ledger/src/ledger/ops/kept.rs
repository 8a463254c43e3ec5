//! What a ledger keeps under an idempotency key to answer a retry as the
//! first time (docs/API.md §Idempotency).

use serde::{Deserialize, Serialize};

use super::done::{Done, Played, Sold};
use super::request::UnitRef;
use super::rows::PlayRow;
use crate::error::Error;
use crate::game::Game;
use crate::ledger::Committed;

/// What a ledger keeps of an operation done under a key, to answer a retry
/// exactly as the first time (JSON in `idempotency.answer`; docs/API.md
/// §Idempotency).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "done", rename_all = "snake_case", deny_unknown_fields)]
pub enum KeptAnswer {
    /// A redemption.
    Redeemed {
        /// Log position (`null`: queued for the sequencer when answered).
        seq: Option<u64>,
        /// Leaf hash, hex.
        leaf_hash: Option<String>,
        /// When it was redeemed (the ledger's clock).
        at: String,
        /// Log size after its commit.
        tree_size: Option<u64>,
        /// Log root at that size, hex.
        root: Option<String>,
    },
    /// A sale (or a unit marked sold).
    Sold {
        /// Game slug.
        game: String,
        /// The emission's number within its game.
        emission: u32,
        /// The block's number within its emission.
        block: u32,
        /// Unit index.
        index: u32,
        /// When it was sold (the ledger's clock).
        sold_at: String,
        /// Log position (`null`: queued for the sequencer when answered).
        seq: Option<u64>,
        /// The sale took the block's last unsold unit.
        block_sold_out: bool,
    },
    /// A play step.
    Played {
        /// Steps revealed after it (`rolls` as kept, today's name).
        #[serde(rename = "rolls")]
        steps: u32,
        /// `stop` or `end` once over.
        ended: Option<String>,
        /// The step had been done before.
        replayed: bool,
        /// The play's log entry, when the step ended it.
        seq: Option<u64>,
    },
    /// An end of claims.
    ClaimsEnded {
        /// Log position (`null`: queued for the sequencer when answered).
        seq: Option<u64>,
    },
    /// An operator's action.
    Acted {
        /// Log position (`null`: queued for the sequencer when answered).
        seq: Option<u64>,
        /// When it was recorded (of the first, when it had been done).
        at: String,
        /// It had been done before: nothing new was recorded.
        already: bool,
    },
}

impl KeptAnswer {
    /// What to keep of `done`.
    #[must_use]
    pub fn of(done: &Done) -> KeptAnswer {
        match done {
            Done::Redeemed(c) => KeptAnswer::Redeemed {
                seq: c.seq,
                leaf_hash: c.leaf_hash.clone(),
                at: c.redeemed_at.clone(),
                tree_size: c.tree_size,
                root: c.root.clone(),
            },
            Done::Sold(s) => {
                let u = s.unit;
                KeptAnswer::Sold {
                    game: u.game.slug().into(),
                    emission: u.emission,
                    block: u.block,
                    index: u.index,
                    sold_at: s.sold_at.clone(),
                    seq: s.seq,
                    block_sold_out: s.block_sold_out,
                }
            }
            Done::Played(p) => KeptAnswer::Played {
                steps: p.play.steps,
                ended: p.play.ended.clone(),
                replayed: p.replayed,
                seq: p.seq,
            },
            Done::ClaimsEnded { seq } => KeptAnswer::ClaimsEnded { seq: *seq },
            Done::Acted { seq, at, already } => KeptAnswer::Acted {
                seq: *seq,
                at: at.clone(),
                already: *already,
            },
        }
    }

    /// The outcome it answers again; `None` for a game this build lacks.
    #[must_use]
    pub fn done(&self) -> Option<Done> {
        Some(match self.clone() {
            KeptAnswer::Redeemed {
                seq,
                leaf_hash,
                at,
                tree_size,
                root,
            } => Done::Redeemed(Committed {
                sequenced: seq.is_some(),
                seq,
                leaf_hash,
                redeemed_at: at,
                tree_size,
                root,
            }),
            KeptAnswer::Sold {
                game,
                emission,
                block,
                index,
                sold_at,
                seq,
                block_sold_out,
            } => Done::Sold(Sold {
                unit: UnitRef {
                    game: Game::from_slug(&game)?,
                    emission,
                    block,
                    index,
                },
                sold_at,
                seq,
                block_sold_out,
                vetted: None,
            }),
            KeptAnswer::Played {
                steps,
                ended,
                replayed,
                seq,
            } => Done::Played(Played {
                play: PlayRow { steps, ended },
                replayed,
                seq,
            }),
            KeptAnswer::ClaimsEnded { seq } => Done::ClaimsEnded { seq },
            KeptAnswer::Acted { seq, at, already } => Done::Acted { seq, at, already },
        })
    }
}

/// A key's row: the request's digest, what it was, and the kept answer.
#[derive(Clone, Debug)]
pub struct KeptRow {
    /// SHA-256 of the first request, hex.
    pub request: String,
    /// What the first request was (`sale ile-au-tresor 100`, …).
    pub what: String,
    /// The first answer, as kept.
    pub answer: KeptAnswer,
}

impl KeptRow {
    /// A row as a database returns it; an answer that does not parse is a
    /// damaged ledger (`ledger` names it), named with its key.
    pub(crate) fn read(
        ledger: &std::path::Path,
        key: &str,
        request: String,
        what: String,
        answer: &str,
    ) -> Result<KeptRow, Error> {
        let answer = serde_json::from_str(answer).map_err(|e| Error::LedgerDamaged {
            path: ledger.to_path_buf(),
            reason: format!("the answer kept under idempotency key {key:?} does not parse: {e}"),
        })?;
        Ok(KeptRow {
            request,
            what,
            answer,
        })
    }

    /// The answer as a database stores it (docs/API.md §Idempotency).
    pub(crate) fn answer_json(&self) -> String {
        serde_json::to_string(&self.answer).expect("a kept answer serialises")
    }

    /// The kind of the first request (`sale`, `roll`, `stop`, `redeem`,
    /// `batch`): what a refusal may say of it. The rest (a unit ID, a roll)
    /// belongs to whoever made it, and keys are shared by every client of
    /// the ledger.
    #[must_use]
    pub fn kind(&self) -> &str {
        kind_of(&self.what)
    }
}

/// The kind of a request described as `what` (its first word).
pub(super) fn kind_of(what: &str) -> &str {
    what.split(' ').next().unwrap_or_default()
}
