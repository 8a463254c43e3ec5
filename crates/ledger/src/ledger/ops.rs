//! What one ledger transaction does, written once for both databases: a
//! batch of operations (redeem, sell, mark sold, a play step, an end of
//! claims) is applied in order inside a transaction the caller holds, each
//! at most once, each that changes what a unit is or whether it is paid
//! (sold, played to its end, paid, its emission's claims ended) appended to
//! the log (docs/REDEMPTION.md §Sales and plays). The databases differ only
//! in the few reads and writes of [`LedgerTx`].

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::claims::EndOfClaims;
use super::log::{self, LogEntry, Place};
use super::operator::{Action, Gate, OperatorAction, Why};
use super::{Committed, Entry};
use crate::error::Error;
use crate::game::Game;
use crate::merkle::{self, Frontier, Hash};
use crate::money::Cents;
use crate::record::RecordPrefix;

/// A unit, by place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UnitRef {
    /// The game.
    pub game: Game,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Unit index.
    pub index: u32,
}

impl UnitRef {
    /// The unit an ID names.
    #[must_use]
    pub fn of(id: &crate::unit_id::UnitId) -> UnitRef {
        UnitRef {
            game: id.game,
            emission: id.emission,
            block: id.block,
            index: id.index,
        }
    }

    /// The unit a redemption entry names.
    #[must_use]
    pub fn of_entry(e: &Entry) -> UnitRef {
        UnitRef {
            game: e.game,
            emission: e.emission,
            block: e.block,
            index: e.index,
        }
    }

    /// As the log names it.
    #[must_use]
    pub fn place(&self) -> Place<'static> {
        Place {
            game: self.game.slug(),
            emission: self.emission,
            block: self.block,
            index: self.index,
        }
    }
}

/// A block offered for sale: its place in the sale order and its size.
#[derive(Clone, Copy, Debug)]
pub struct ForSale {
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Units in the block.
    pub units: u32,
}

/// A step of a play (a game played step by step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayAction {
    /// Reveal roll `n` (from 1): the next roll, or a roll already revealed
    /// (a retry, answered the same).
    Roll(u32),
    /// Stop here and take the gains found.
    Stop,
}

/// A play step with what the unit's record says about its tape.
#[derive(Clone, Debug)]
pub struct PlayOrder {
    /// The unit.
    pub unit: UnitRef,
    /// Its ID as printed.
    pub unit_id: String,
    /// What the player asks.
    pub action: PlayAction,
    /// The first step after which a stop is allowed (the game's
    /// [`Tape::first_stop`](crate::game::Tape::first_stop)).
    pub first_stop: Option<u32>,
    /// The step that ends the play by itself.
    pub end_step: u32,
}

/// Checks, inside the sale's transaction and before anything is
/// recorded, that the unit about to be sold can be handed out (its chunk
/// opens, its record authenticates): a sale that would fail records
/// nothing.
#[derive(Clone)]
pub struct Vetter(pub Arc<dyn Fn(UnitRef) -> Result<Vetted, Error> + Send + Sync>);

/// What vetting a unit found, carried to the sale's answer so the unit is
/// not authenticated a second time.
#[derive(Clone, Debug)]
pub struct Vetted {
    /// The unit's ID, its check code read from its record.
    pub id: String,
    /// What the player is shown before play.
    pub shown: serde_json::Value,
    /// The unit's record prefix (its lot, its prize played to the end):
    /// never answered, kept for the top-lots watch.
    pub prefix: Option<RecordPrefix>,
}

impl std::fmt::Debug for Vetter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Vetter")
    }
}

/// An operation under a client's idempotency key (docs/API.md
/// §Idempotency): applied once; the same key and request again answers
/// what the first did; the same key with another request is refused.
#[derive(Clone, Debug)]
pub struct Keyed {
    /// The client's key (checked by [`check_key`]).
    pub key: String,
    /// SHA-256 of the request, as [`request_digest`] makes it.
    pub request: [u8; 32],
    /// What the first use was, for the refusal's message.
    pub what: String,
    /// The operation.
    pub op: Box<Op>,
}

impl Keyed {
    /// The key as its client gave it (the stored key, scoped by the
    /// platform's lane, is `LANE/KEY`: neither a lane nor a key holds `/`).
    #[must_use]
    pub fn client_key(&self) -> &str {
        client_key(&self.key)
    }
}

/// The key a client gave, from the key a ledger stores (`LANE/KEY` or
/// `KEY`).
#[must_use]
pub fn client_key(stored: &str) -> &str {
    stored.split_once('/').map_or(stored, |(_, key)| key)
}

/// The key a ledger stores for `key` given in `lane` (`None`: the
/// operator's own commands): each platform's keys are its own
/// (docs/API.md §Idempotency).
#[must_use]
pub fn scoped_key(lane: Option<&str>, key: &str) -> String {
    match lane {
        Some(lane) => format!("{lane}/{key}"),
        None => key.to_string(),
    }
}

/// Refuses a lane (a token's name) other than 1 to 64 letters, digits,
/// `_`, `-` and `.`: it is part of stored keys (`LANE/KEY`).
pub fn check_lane(name: &str) -> Result<(), String> {
    if (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
    {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a platform name: 1 to 64 letters, digits, `_`, `-` and `.` (a token's name in the token file)"
        ))
    }
}

/// An operation done for a sales platform, in its lane (docs/SECURITY.md
/// §Each platform in its own lane): a sale it makes is recorded as its
/// own; a unit it asks about must be one of its own, else the answer is
/// [`Error::UnknownUnit`], whatever the unit is, and nothing is recorded.
#[derive(Clone, Debug)]
pub struct Laned {
    /// The platform's lane: its token's name.
    pub lane: String,
    /// Units of other lanes are refused as unknown (a platform); `false`:
    /// the caller may act on any unit (a token with the operator role),
    /// its sales still recorded in its lane.
    pub own_units_only: bool,
    /// The operation.
    pub op: Box<Op>,
}

/// A unit's sale as recorded: when, and the lane of the platform that sold
/// it (`None`: the operator's own command, `issuer sell` or `mark-sold`
/// without `--platform`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SaleRow {
    /// When (the ledger's clock).
    pub sold_at: String,
    /// The selling platform's lane.
    pub lane: Option<String>,
}

impl SaleRow {
    /// Whether a caller in `lane` (`None`: the operator) may see the unit:
    /// the operator sees every unit, a platform those of its lane.
    #[must_use]
    pub fn belongs_to(&self, lane: Option<&str>) -> bool {
        lane.is_none_or(|lane| self.lane.as_deref() == Some(lane))
    }
}

/// Most characters of an idempotency key.
pub const MAX_KEY_LEN: usize = 128;

/// Refuses a key that is empty, too long or not of `A-Z a-z 0-9 - _ . :`
/// (a batch's units are kept under `KEY#n`, so `#` is not a key's).
pub fn check_key(key: &str) -> Result<(), Error> {
    let bad = |reason: &str| {
        Err(Error::BadIdempotencyKey {
            key: key.chars().take(MAX_KEY_LEN + 8).collect(),
            reason: reason.into(),
        })
    };
    if key.is_empty() {
        return bad("it is empty");
    }
    if key.len() > MAX_KEY_LEN {
        return bad("it is longer than 128 characters");
    }
    if !key
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
    {
        return bad("it holds a character other than A-Z a-z 0-9 - _ . :");
    }
    Ok(())
}

/// The SHA-256 that identifies a request under a key: of
/// `idempotency/v1` and each part, one a line.
#[must_use]
pub fn request_digest(parts: &[&str]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"idempotency/v1\n");
    for part in parts {
        h.update(part.as_bytes());
        h.update(b"\n");
    }
    h.finalize().into()
}

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
        /// Rolls revealed after it.
        rolls: u32,
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
                rolls: p.play.rolls,
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
                rolls,
                ended,
                replayed,
                seq,
            } => Done::Played(Played {
                play: PlayRow { rolls, ended },
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
fn kind_of(what: &str) -> &str {
    what.split(' ').next().unwrap_or_default()
}

/// One operation of a ledger transaction.
#[derive(Clone, Debug)]
pub enum Op {
    /// Pay a unit (once; it must be sold, and a Trésors Ensablés unit's play
    /// over with the stop the entry names).
    Redeem(Entry),
    /// Sell the next unsold unit of `blocks`, in their order.
    Sell {
        /// The game.
        game: Game,
        /// The price, in cents (for messages).
        price_cents: u32,
        /// The blocks on sale, in sale order.
        blocks: Vec<ForSale>,
        /// Checks the unit picked before its sale is recorded.
        vet: Vetter,
    },
    /// Record a unit as sold (distributed by other means).
    MarkSold {
        /// The unit.
        unit: UnitRef,
        /// Its ID as printed.
        unit_id: String,
    },
    /// A play step.
    Play(PlayOrder),
    /// Publish the issuer's end of claims of an emission (docs/REDEMPTION.md
    /// §End of claims): a log entry like a sale. The first published
    /// stands; one stored before ends of claims were logged is logged as
    /// stored (adopted).
    EndClaims(EndOfClaims),
    /// An operator's action (docs/REDEMPTION.md §Suspend, withdraw and
    /// void): a log entry; its `at` is set as it commits.
    Operator(OperatorAction),
    /// An operation under an idempotency key.
    Keyed(Keyed),
    /// An operation done for a sales platform, in its lane.
    Laned(Laned),
    /// An entry of the published log put back at its place
    /// (`issuer ledger recover`, docs/REDEMPTION.md §Recovery).
    Restore(Box<Restored>),
}

/// An entry of the published log, to put back at its place `seq` of a
/// ledger restored from an older copy: its row, whose leaf data is `line`
/// (checked by the caller: the row's own line is the published one).
#[derive(Clone, Debug)]
pub struct Restored {
    /// Its place in the log.
    pub seq: u64,
    /// Its leaf data as published.
    pub line: String,
    /// The row it makes.
    pub row: RestoredRow,
}

/// The row of a [`Restored`] entry, one per kind of the log.
#[derive(Clone, Debug)]
pub enum RestoredRow {
    /// A sale, in `lane` where it is known (the log does not hold it).
    Sale {
        /// The unit.
        unit: UnitRef,
        /// When it was sold.
        sold_at: String,
        /// The platform's lane, where known.
        lane: Option<String>,
    },
    /// A play that ended.
    Play {
        /// The unit.
        unit: UnitRef,
        /// The play as it ended.
        play: PlayRow,
        /// When.
        ended_at: String,
    },
    /// A redemption, its facts read again from the unit's sealed block.
    Redemption {
        /// The unit's facts.
        entry: Entry,
        /// When it was paid.
        redeemed_at: String,
    },
    /// An end of claims, its statement signed again.
    EndOfClaims(EndOfClaims),
    /// An operator's action.
    Operator(OperatorAction),
}

impl RestoredRow {
    /// The leaf data the row makes at `seq` (what `ledger verify` reads
    /// back).
    #[must_use]
    pub fn line(&self, seq: u64) -> String {
        match self {
            RestoredRow::Sale { unit, sold_at, .. } => LogEntry::Sale {
                unit: unit.place(),
                sold_at,
            }
            .line(seq),
            RestoredRow::Play {
                unit,
                play,
                ended_at,
            } => LogEntry::PlayEnd {
                unit: unit.place(),
                rolls: play.rolls,
                how: play.ended.as_deref().unwrap_or_default(),
                ended_at,
            }
            .line(seq),
            RestoredRow::Redemption { entry, redeemed_at } => {
                LogEntry::Redemption(entry.fields(redeemed_at)).line(seq)
            }
            RestoredRow::EndOfClaims(s) => LogEntry::EndOfClaims(s).line(seq),
            RestoredRow::Operator(a) => LogEntry::Operator(a).line(seq),
        }
    }
}

impl Op {
    /// The emissions (game, number) it may write about.
    #[must_use]
    pub fn emissions(&self) -> Vec<(Game, u32)> {
        match self.unkeyed() {
            Op::Redeem(e) => vec![(e.game, e.emission)],
            Op::Sell { game, blocks, .. } => blocks.iter().map(|b| (*game, b.emission)).collect(),
            Op::MarkSold { unit, .. } => vec![(unit.game, unit.emission)],
            Op::Play(order) => vec![(order.unit.game, order.unit.emission)],
            Op::EndClaims(s) => Game::from_slug(&s.game)
                .map(|g| vec![(g, s.emission)])
                .unwrap_or_default(),
            Op::Operator(a) => Game::from_slug(&a.game)
                .map(|g| vec![(g, a.emission)])
                .unwrap_or_default(),
            Op::Keyed(_) | Op::Laned(_) | Op::Restore(_) => Vec::new(),
        }
    }

    /// The operation itself, under however many keys and lanes.
    #[must_use]
    pub fn unkeyed(&self) -> &Op {
        match self {
            Op::Keyed(k) => k.op.unkeyed(),
            Op::Laned(l) => l.op.unkeyed(),
            op => op,
        }
    }

    /// The unit it asks about, where it names one that must be sold (a
    /// redemption, a play step): its place and ID.
    #[must_use]
    pub fn asked_unit(&self) -> Option<(Place<'static>, &str)> {
        match self.unkeyed() {
            Op::Redeem(e) => Some((UnitRef::of_entry(e).place(), e.unit_id.as_str())),
            Op::Play(o) => Some((o.unit.place(), o.unit_id.as_str())),
            _ => None,
        }
    }
}

/// How a play ended, as the ledger keeps it.
pub const PLAY_STOPPED: &str = "stop";
/// The play ended by itself (a death or the gold chest).
pub const PLAY_ENDED: &str = "end";

/// A play as recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlayRow {
    /// Rolls revealed.
    pub rolls: u32,
    /// `stop` or `end` once over.
    pub ended: Option<String>,
}

impl PlayRow {
    /// The stop the unit pays with: `Some(rolls)` after a stop, `None`
    /// once played to its end.
    #[must_use]
    pub fn stop(&self) -> Option<u32> {
        (self.ended.as_deref() == Some(PLAY_STOPPED)).then_some(self.rolls)
    }
}

/// A sale, once durable.
#[derive(Clone, Debug, Serialize)]
pub struct Sold {
    /// The unit sold.
    #[serde(skip)]
    pub unit: UnitRef,
    /// When the sale was recorded (the ledger's clock).
    pub sold_at: String,
    /// Its log entry; `None` while queued for the sequencer (PostgreSQL).
    pub seq: Option<u64>,
    /// No unsold unit is left in its block.
    pub block_sold_out: bool,
    /// What vetting found, for a sale just made (none for a unit marked
    /// sold, or a sale answered again from its idempotency key).
    #[serde(skip)]
    pub vetted: Option<Vetted>,
}

/// A play step, once durable.
#[derive(Clone, Debug, Serialize)]
pub struct Played {
    /// The play now.
    pub play: PlayRow,
    /// The step was done before (a retry): nothing changed.
    pub replayed: bool,
    /// The play's log entry, when this step ended it and it is sequenced
    /// (an ended play without one is queued for the sequencer).
    pub seq: Option<u64>,
}

/// What an operation did.
#[derive(Clone, Debug)]
pub enum Done {
    /// The unit is paid.
    Redeemed(Committed),
    /// A unit was sold, or marked sold.
    Sold(Sold),
    /// A play step.
    Played(Played),
    /// The emission's claims are ended, at log entry `seq` (this one's, or
    /// the first's when they had ended before).
    ClaimsEnded {
        /// The end of claims' log entry; `None` while queued.
        seq: Option<u64>,
    },
    /// An operator's action is recorded.
    Acted {
        /// Its log entry; `None` while queued (or when `already`).
        seq: Option<u64>,
        /// When it was recorded (the first's, when `already`).
        at: String,
        /// It was in force already (a suspension of what is suspended, a
        /// withdrawal of what is withdrawn, a void of a voided sale):
        /// nothing new was recorded.
        already: bool,
    },
}

/// The reads and writes a ledger transaction needs; each database
/// implements them inside its own transaction.
pub trait LedgerTx {
    /// The standing of `game`'s `emission` ([`Gate`]): when its end of
    /// claims was published, and the suspensions and withdrawals in force.
    /// A database whose writers run at once waits here for an operator's
    /// action on the emission under way ([`LedgerTx::lock_gate`]).
    fn gate(&mut self, game: &str, emission: u32) -> Result<Gate, Error>;
    /// Makes this transaction the only one reading or changing the
    /// standing of `game`'s `emission` until it ends (an operator's action
    /// waits for the operations under way; a database whose writers
    /// already take turns does nothing).
    fn lock_gate(&mut self, _game: &str, _emission: u32) -> Result<(), Error> {
        Ok(())
    }
    /// Writes an operator's action at log entry `logged` (`None`: queued).
    fn insert_action(&mut self, a: &OperatorAction, logged: Logged) -> Result<(), Error>;
    /// When the unit's sale was voided.
    fn voided(&mut self, p: Place) -> Result<Option<String>, Error>;
    /// The end of claims of `game`'s `emission` as stored, with its log
    /// entry (`None` for a row stored before ends of claims were logged).
    fn claims_row(
        &mut self,
        game: &str,
        emission: u32,
    ) -> Result<Option<(EndOfClaims, Option<u64>)>, Error>;
    /// Writes the end of claims `s` at log entry `logged` (`None`: queued
    /// for the sequencer): a new row, or the stored unlogged one (the same
    /// facts) given its place in the log.
    fn log_claims_end(&mut self, s: &EndOfClaims, logged: Logged) -> Result<(), Error>;
    /// The unit's redemption: when, and the prize paid.
    fn redemption(&mut self, p: Place) -> Result<Option<(String, u32)>, Error>;
    /// Inserts a redemption at log entry `logged` (`None`: queued), and
    /// adds it to its block's totals when it is logged; `false` when the
    /// unit has one already (nothing written).
    fn insert_redemption(&mut self, e: &Entry, at: &str, logged: Logged) -> Result<bool, Error>;
    /// The unit's sale: when, and in which platform's lane.
    fn sale(&mut self, p: Place) -> Result<Option<SaleRow>, Error>;
    /// Inserts a sale in `lane` (`None`: the operator's) at log entry
    /// `logged` (`None`: queued).
    fn insert_sale(
        &mut self,
        p: Place,
        at: &str,
        lane: Option<&str>,
        logged: Logged,
    ) -> Result<(), Error>;
    /// The first index of a block that may be unsold.
    fn sale_cursor(&mut self, game: &str, emission: u32, block: u32) -> Result<u32, Error>;
    /// The first index from `from` up that has no sale (one query, however
    /// many units in a row are sold: `mark-sold --all` sells a whole block);
    /// may be `units` or more when none is left.
    fn first_unsold(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        from: u32,
    ) -> Result<u32, Error>;
    /// Moves a block's cursor.
    fn set_sale_cursor(
        &mut self,
        game: &str,
        emission: u32,
        block: u32,
        next: u32,
    ) -> Result<(), Error>;
    /// The unit's play.
    fn play(&mut self, p: Place) -> Result<Option<PlayRow>, Error>;
    /// Before the batch: takes the locks of its idempotency `keys` and of
    /// its `units` (redeemed or played) all at once, in one order (so two
    /// batches never wait for each other), and reads ahead what it will
    /// ask of the units (their redemptions and sales). A database whose
    /// writers take turns does nothing.
    fn prefetch(&mut self, _units: &[Place], _keys: &[&str]) -> Result<(), Error> {
        Ok(())
    }
    /// Makes the operations on unit `p` take turns until the transaction
    /// ends (a database whose writers already take turns does nothing).
    fn lock_unit(&mut self, _p: Place) -> Result<(), Error> {
        Ok(())
    }
    /// The row kept under an idempotency key.
    fn kept(&mut self, key: &str) -> Result<Option<KeptRow>, Error>;
    /// Keeps `row` under `key` (a new key: the caller looked it up in the
    /// same transaction).
    fn keep(&mut self, key: &str, row: &KeptRow, at: &str) -> Result<(), Error>;
    /// The request digest (hex) kept under any of a batch's keys `KEY#n`.
    fn kept_batch(&mut self, key: &str) -> Result<Option<String>, Error>;
    /// Writes the unit's play; when it just ended, `logged` is its log
    /// entry (`None`: queued).
    fn put_play(&mut self, p: Place, row: &PlayRow, at: &str, logged: Logged) -> Result<(), Error>;
}

/// An entry's place in the log as its operation commits: `Some((seq,
/// leaf))` when the commit appends it (SQLite, one writer), `None` when it
/// is queued and the sequencer appends it after the commit (PostgreSQL,
/// docs/REDEMPTION.md §Sequencing).
pub type Logged<'a> = Option<(u64, &'a Hash)>;

/// How a batch's entries reach the log.
pub enum Sequencing<'f> {
    /// Appended in the batch's own transaction, to this right edge.
    Inline(&'f mut Frontier),
    /// Queued: committed without a place, sequenced later in batches.
    Deferred,
}

/// The batch's view of the ledger: the transaction, the log's right edge,
/// the time of the commit, and the ends of claims read so far.
struct Batch<'t> {
    tx: &'t mut dyn LedgerTx,
    log: Sequencing<'t>,
    at: &'t str,
    /// The standing of each emission read so far.
    gates: HashMap<(&'static str, u32), Gate>,
    /// Sale cursors read or moved in this batch, written once at its end.
    cursors: HashMap<(&'static str, u32, u32), (u32, bool)>,
    /// The lane of the operation being applied (its sales are the lane's).
    lane: Option<String>,
    /// The request each batch key (`KEY` of `KEY#n`) was first applied
    /// with in this transaction.
    batches: HashMap<String, [u8; 32]>,
}

impl Batch<'_> {
    /// A block's sale cursor: every unit before it is sold.
    fn cursor(&mut self, game: &'static str, emission: u32, block: u32) -> Result<u32, Error> {
        let key = (game, emission, block);
        if let Some((at, _)) = self.cursors.get(&key) {
            return Ok(*at);
        }
        let at = self.tx.sale_cursor(game, emission, block)?;
        self.cursors.insert(key, (at, false));
        Ok(at)
    }

    /// Moves a block's sale cursor (written at the end of the batch).
    fn move_cursor(&mut self, game: &'static str, emission: u32, block: u32, next: u32) {
        self.cursors.insert((game, emission, block), (next, true));
    }

    /// Writes the cursors the batch moved.
    fn write_cursors(&mut self) -> Result<(), Error> {
        for (&(game, emission, block), &(next, moved)) in &self.cursors {
            if moved {
                self.tx.set_sale_cursor(game, emission, block, next)?;
            }
        }
        Ok(())
    }

    /// The standing of an emission (read once a batch).
    fn gate(&mut self, game: Game, emission: u32) -> Result<&mut Gate, Error> {
        let key = (game.slug(), emission);
        if !self.gates.contains_key(&key) {
            let gate = self.tx.gate(key.0, emission)?;
            self.gates.insert(key, gate);
        }
        Ok(self.gates.entry(key).or_default())
    }

    /// Refuses a unit of an emission whose claims ended.
    fn open(&mut self, game: Game, emission: u32) -> Result<(), Error> {
        match &self.gate(game, emission)?.claims_ended {
            Some(at) => Err(Error::ClaimsEnded {
                game: game.slug(),
                emission,
                at: at.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Refuses a unit of an emission whose claims ended, or of a suspended
    /// emission or block. `Ok(Err(_))`: refused; `Err(_)`: the ledger
    /// could not be read.
    fn in_play(&mut self, unit: UnitRef) -> Result<Result<(), Error>, Error> {
        if let Err(refused) = self.open(unit.game, unit.emission) {
            return match refused {
                Error::ClaimsEnded { .. } => Ok(Err(refused)),
                failed => Err(failed),
            };
        }
        let gate = self.gate(unit.game, unit.emission)?;
        Ok(match gate.suspended(unit.block) {
            Some((block, why)) => Err(Error::Suspended {
                game: unit.game.slug(),
                emission: unit.emission,
                block,
                at: why.at.clone(),
            }),
            None => Ok(()),
        })
    }

    /// The next log position and the leaf of `line` there; `None` when
    /// entries are queued.
    fn append(&mut self, line: impl FnOnce(u64) -> String) -> Option<(u64, Hash)> {
        let Sequencing::Inline(frontier) = &self.log else {
            return None;
        };
        let seq = frontier.size();
        Some((seq, merkle::leaf_hash(line(seq).as_bytes())))
    }

    /// Adds an entry [`Self::append`] placed, once its row is written.
    fn push(&mut self, logged: Option<(u64, Hash)>) {
        if let (Sequencing::Inline(frontier), Some((_, leaf))) = (&mut self.log, logged) {
            frontier.push(leaf);
        }
    }

    fn redeem(&mut self, e: &Entry) -> Result<Result<Done, Error>, Error> {
        let unit = UnitRef::of_entry(e);
        let p = unit.place();
        if let Err(refused) = self.in_play(unit)? {
            return Ok(Err(refused));
        }
        let already = |(at, prize): (String, u32)| Error::AlreadyRedeemed {
            id: e.unit_id.clone(),
            at,
            prize: Cents::from(prize),
        };
        if let Some(first) = self.tx.redemption(p)? {
            return Ok(Err(already(first)));
        }
        if self.tx.sale(p)?.is_none() {
            return Ok(Err(Error::NotSold {
                id: e.unit_id.clone(),
            }));
        }
        if let Some(at) = self.tx.voided(p)? {
            return Ok(Err(Error::Voided {
                id: e.unit_id.clone(),
                at,
            }));
        }
        if e.game.step_by_step() {
            let play = self.tx.play(p)?.unwrap_or_default();
            if play.ended.is_none() {
                return Ok(Err(Error::PlayUnfinished {
                    id: e.unit_id.clone(),
                    rolls: play.rolls,
                }));
            }
            if play.stop() != e.stopped_after_rolls {
                return Ok(Err(Error::BadStop {
                    id: e.unit_id.clone(),
                    reason: format!(
                        "the ledger's play {} after {} rolls; the unit is paid as played",
                        if play.stop().is_some() {
                            "stopped"
                        } else {
                            "ended by itself"
                        },
                        play.rolls
                    ),
                }));
            }
        }
        let at = self.at;
        let logged = self.append(|seq| log::LogEntry::Redemption(e.fields(at)).line(seq));
        if !self.tx.insert_redemption(e, at, borrowed(&logged))? {
            let first = self.tx.redemption(p)?.unwrap_or_default();
            return Ok(Err(already(first)));
        }
        self.push(logged);
        Ok(Ok(Done::Redeemed(Committed::at(logged, at))))
    }

    /// Records the sale of `p`, at the next log position (`None`: queued).
    fn record_sale(&mut self, p: Place) -> Result<Option<u64>, Error> {
        let at = self.at;
        let logged = self.append(|seq| {
            log::LogEntry::Sale {
                unit: p,
                sold_at: at,
            }
            .line(seq)
        });
        let lane = self.lane.clone();
        self.tx
            .insert_sale(p, at, lane.as_deref(), borrowed(&logged))?;
        self.push(logged);
        Ok(logged.map(|(seq, _)| seq))
    }

    fn sell(
        &mut self,
        game: Game,
        price_cents: u32,
        blocks: &[ForSale],
        vet: &Vetter,
    ) -> Result<Result<Done, Error>, Error> {
        let mut ended = Vec::new();
        let mut withdrawn = Vec::new();
        let mut suspended = Vec::new();
        for b in blocks {
            match self.open(game, b.emission) {
                Ok(()) => {}
                // Named in the answer if nothing else is left to sell.
                Err(Error::ClaimsEnded { emission, .. }) => {
                    if !ended.contains(&emission) {
                        ended.push(emission);
                    }
                    continue;
                }
                // The ledger could not be read: a failure, not a refusal.
                Err(failed) => return Err(failed),
            }
            let gate = self.gate(game, b.emission)?;
            if let Some((level, _)) = gate.withdrawn(b.block) {
                let named = match level {
                    None => format!("emission {}", b.emission),
                    Some(block) => format!("emission {} block {block}", b.emission),
                };
                if !withdrawn.contains(&named) {
                    withdrawn.push(named);
                }
                continue;
            }
            if let Some((level, why)) = gate.suspended(b.block) {
                suspended.push((*b, level, why.clone()));
                continue;
            }
            let slug = game.slug();
            let place = |index| Place {
                game: slug,
                emission: b.emission,
                block: b.block,
                index,
            };
            // Past units sold by `mark-sold`, in one query.
            let cursor = self.cursor(slug, b.emission, b.block)?;
            let next = self
                .tx
                .first_unsold(slug, b.emission, b.block, cursor)?
                .min(b.units);
            if next != cursor {
                self.move_cursor(slug, b.emission, b.block, next);
            }
            if next >= b.units {
                continue;
            }
            let index = next;
            let unit = UnitRef {
                game,
                emission: b.emission,
                block: b.block,
                index,
            };
            // Nothing is recorded for a unit that cannot be handed out; the
            // cursor stays, so the refusal repeats until the block is mended.
            let vetted = match (vet.0)(unit) {
                Ok(vetted) => vetted,
                Err(refused) => return Ok(Err(refused)),
            };
            let seq = self.record_sale(place(index))?;
            let next = self
                .tx
                .first_unsold(slug, b.emission, b.block, index + 1)?
                .min(b.units);
            self.move_cursor(slug, b.emission, b.block, next);
            return Ok(Ok(Done::Sold(Sold {
                unit,
                sold_at: self.at.to_string(),
                seq,
                block_sold_out: next >= b.units,
                vetted: Some(vetted),
            })));
        }
        // Nothing to sell: a suspended block with units left is named
        // (selling resumes with it), else the game is sold out.
        for (b, level, why) in suspended {
            let cursor = self.cursor(game.slug(), b.emission, b.block)?;
            if self
                .tx
                .first_unsold(game.slug(), b.emission, b.block, cursor)?
                < b.units
            {
                return Ok(Err(Error::Suspended {
                    game: game.slug(),
                    emission: b.emission,
                    block: level,
                    at: why.at,
                }));
            }
        }
        Ok(Err(Error::SoldOut {
            game: game.slug(),
            price: Cents::from(price_cents),
            ended,
            withdrawn,
        }))
    }

    fn mark_sold(&mut self, unit: UnitRef, unit_id: &str) -> Result<Result<Done, Error>, Error> {
        if let Err(refused) = self.in_play(unit)? {
            return Ok(Err(refused));
        }
        if let Some((block, why)) = self.gate(unit.game, unit.emission)?.withdrawn(unit.block) {
            return Ok(Err(Error::Withdrawn {
                game: unit.game.slug(),
                emission: unit.emission,
                block,
                at: why.at.clone(),
            }));
        }
        // The block's cursor first: a database whose sales of a block take
        // turns takes its turn here, before reading the unit's sale.
        let slug = unit.game.slug();
        let cursor = self.cursor(slug, unit.emission, unit.block)?;
        if let Some(sale) = self.tx.sale(unit.place())? {
            return Ok(Err(Error::AlreadySold {
                id: unit_id.to_string(),
                at: sale.sold_at,
            }));
        }
        let seq = self.record_sale(unit.place())?;
        // The cursor follows units marked in order (`mark-sold --all`), so
        // the next sale starts past them.
        if cursor == unit.index {
            self.move_cursor(slug, unit.emission, unit.block, unit.index + 1);
        }
        Ok(Ok(Done::Sold(Sold {
            unit,
            sold_at: self.at.to_string(),
            seq,
            block_sold_out: false,
            vetted: None,
        })))
    }

    fn play(&mut self, o: &PlayOrder) -> Result<Result<Done, Error>, Error> {
        let p = o.unit.place();
        let id = || o.unit_id.clone();
        // Two steps of one play at once (two nodes) would both read the
        // same play and write over each other.
        self.tx.lock_unit(p)?;
        if self.tx.sale(p)?.is_none() {
            return Ok(Err(Error::NotSold { id: id() }));
        }
        if let Some(at) = self.tx.voided(p)? {
            return Ok(Err(Error::Voided { id: id(), at }));
        }
        let mut row = self.tx.play(p)?.unwrap_or_default();
        let replay = |row: PlayRow| {
            Ok(Ok(Done::Played(Played {
                play: row,
                replayed: true,
                seq: None,
            })))
        };
        let over = |row: &PlayRow| Error::PlayOver {
            id: id(),
            rolls: row.rolls,
            stopped: row.stop().is_some(),
        };
        match o.action {
            PlayAction::Roll(n) if n >= 1 && n <= row.rolls => return replay(row),
            PlayAction::Stop if row.ended.as_deref() == Some(PLAY_STOPPED) => return replay(row),
            _ if row.ended.is_some() => return Ok(Err(over(&row))),
            _ => {}
        }
        if let Err(refused) = self.in_play(o.unit)? {
            return Ok(Err(refused));
        }
        match o.action {
            PlayAction::Roll(n) if n != row.rolls + 1 => {
                return Ok(Err(Error::RollOutOfOrder {
                    id: id(),
                    asked: n,
                    next: row.rolls + 1,
                }))
            }
            PlayAction::Roll(n) => {
                row.rolls = n;
                if n >= o.end_step {
                    row.ended = Some(PLAY_ENDED.into());
                }
            }
            PlayAction::Stop => {
                if o.first_stop.is_none_or(|f| row.rolls < f) {
                    return Ok(Err(Error::BadStop {
                        id: id(),
                        reason: o.unit.game.early_stop_refusal(row.rolls),
                    }));
                }
                row.ended = Some(PLAY_STOPPED.into());
            }
        }
        let at = self.at;
        let logged = row.ended.as_ref().and_then(|how| {
            self.append(|seq| {
                log::LogEntry::PlayEnd {
                    unit: p,
                    rolls: row.rolls,
                    how,
                    ended_at: at,
                }
                .line(seq)
            })
        });
        self.tx.put_play(p, &row, at, borrowed(&logged))?;
        self.push(logged);
        Ok(Ok(Done::Played(Played {
            play: row,
            replayed: false,
            seq: logged.map(|(s, _)| s),
        })))
    }
}

/// An entry's place as the write methods take it.
fn borrowed(logged: &Option<(u64, Hash)>) -> Logged<'_> {
    logged.as_ref().map(|(seq, leaf)| (*seq, leaf))
}

/// Applies `ops` in order in the caller's transaction `tx`, at time `at`,
/// appending to `frontier`; one outcome per operation, each redemption's
/// with the log's size and root after the batch. `Err`: the transaction
/// failed and must be rolled back (nothing is recorded).
pub fn apply(
    tx: &mut dyn LedgerTx,
    log: Sequencing<'_>,
    at: &str,
    ops: &[Op],
) -> Result<Vec<Result<Done, Error>>, Error> {
    let mut batch = Batch {
        tx,
        log,
        at,
        gates: HashMap::new(),
        cursors: HashMap::new(),
        lane: None,
        batches: HashMap::new(),
    };
    let units: Vec<Place> = ops
        .iter()
        .filter_map(|op| match op.unkeyed() {
            Op::Redeem(e) => Some(UnitRef::of_entry(e).place()),
            Op::Play(o) => Some(o.unit.place()),
            Op::Operator(OperatorAction {
                action: Action::Void,
                game,
                emission,
                block: Some(block),
                index: Some(index),
                ..
            }) => Game::from_slug(game).map(|g| Place {
                game: g.slug(),
                emission: *emission,
                block: *block,
                index: *index,
            }),
            _ => None,
        })
        .collect();
    // A batch's keys `KEY#n` with `KEY` itself: two batches under one key
    // take turns, so the second sees the first's units (and is refused).
    let keys: Vec<&str> = ops
        .iter()
        .filter_map(|op| match op {
            Op::Keyed(k) => Some(k.key.as_str()),
            _ => None,
        })
        .flat_map(|key| [Some(key), batch_key(key)])
        .flatten()
        .collect();
    batch.tx.prefetch(&units, &keys)?;
    let mut outcomes: Vec<Result<Done, Error>> = Vec::with_capacity(ops.len());
    // Keys applied in this batch: the first operation under each, to keep
    // its answer once the batch is done (and to answer a second use).
    let mut keyed: HashMap<&str, usize> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        let outcome = match op {
            Op::Keyed(k) => match keyed.get(k.key.as_str()) {
                Some(&first) => same_key_again(k, ops, &outcomes, first),
                None => {
                    let outcome = batch.keyed(k)?;
                    if outcome.is_ok() {
                        keyed.insert(&k.key, i);
                    }
                    outcome
                }
            },
            op => batch.one(op)?,
        };
        outcomes.push(outcome);
    }
    batch.write_cursors()?;
    if let Sequencing::Inline(frontier) = &batch.log {
        let size = frontier.size();
        let root = hex::encode(frontier.root());
        for c in outcomes.iter_mut().flatten() {
            if let Done::Redeemed(c) = c {
                if c.seq.is_some() && c.root.is_none() {
                    c.tree_size = Some(size);
                    c.root = Some(root.clone());
                }
            }
        }
    }
    for (key, i) in keyed {
        let (Op::Keyed(k), Ok(done)) = (&ops[i], &outcomes[i]) else {
            continue;
        };
        if batch.tx.kept(key)?.is_none() {
            let row = KeptRow {
                request: hex::encode(k.request),
                what: k.what.clone(),
                answer: KeptAnswer::of(done),
            };
            batch.tx.keep(key, &row, at)?;
        }
    }
    Ok(outcomes)
}

/// The batch key `KEY` of a batch unit's key `KEY#n`.
fn batch_key(key: &str) -> Option<&str> {
    key.rsplit_once('#').map(|(batch, _)| batch)
}

/// A key used twice in one batch: the second answers what the first did,
/// or is refused when its request differs.
fn same_key_again(
    k: &Keyed,
    ops: &[Op],
    outcomes: &[Result<Done, Error>],
    first: usize,
) -> Result<Done, Error> {
    match (&ops[first], &outcomes[first]) {
        (Op::Keyed(f), Ok(done)) if f.request == k.request => Ok(done.clone()),
        (Op::Keyed(f), _) => Err(Error::IdempotencyKeyReused {
            key: k.client_key().to_string(),
            first: kind_of(&f.what).to_string(),
        }),
        _ => Err(Error::Internal {
            what: "a kept key points at an operation without a key".into(),
        }),
    }
}

impl Batch<'_> {
    /// One operation without a key.
    fn one(&mut self, op: &Op) -> Result<Result<Done, Error>, Error> {
        match op {
            Op::Redeem(e) => self.redeem(e),
            Op::Sell {
                game,
                price_cents,
                blocks,
                vet,
            } => self.sell(*game, *price_cents, blocks, vet),
            Op::MarkSold { unit, unit_id } => self.mark_sold(*unit, unit_id),
            Op::Play(o) => self.play(o),
            Op::EndClaims(s) => self.end_claims(s),
            Op::Operator(a) => self.operator(a),
            Op::Keyed(k) => self.keyed(k),
            Op::Laned(l) => self.laned(l),
            Op::Restore(r) => self.restore(r),
        }
    }

    /// Puts a published entry back at its place: only at the log's end
    /// (entries come back in order), only with entries placed inline.
    /// Answered as an action done at its entry.
    fn restore(&mut self, r: &Restored) -> Result<Result<Done, Error>, Error> {
        let Sequencing::Inline(frontier) = &self.log else {
            return Err(Error::Internal {
                what: "a log entry can be put back only where entries are placed as they commit"
                    .into(),
            });
        };
        if frontier.size() != r.seq {
            return Err(Error::Internal {
                what: format!(
                    "entry {} put back where the log has {} entries",
                    r.seq,
                    frontier.size()
                ),
            });
        }
        let leaf = merkle::leaf_hash(r.line.as_bytes());
        let logged = Some((r.seq, &leaf));
        match &r.row {
            RestoredRow::Sale {
                unit,
                sold_at,
                lane,
            } => self
                .tx
                .insert_sale(unit.place(), sold_at, lane.as_deref(), logged)?,
            RestoredRow::Play {
                unit,
                play,
                ended_at,
            } => self.tx.put_play(unit.place(), play, ended_at, logged)?,
            RestoredRow::Redemption { entry, redeemed_at } => {
                self.tx.insert_redemption(entry, redeemed_at, logged)?;
            }
            RestoredRow::EndOfClaims(s) => self.tx.log_claims_end(s, logged)?,
            RestoredRow::Operator(a) => self.tx.insert_action(a, logged)?,
        }
        self.push(Some((r.seq, leaf)));
        Ok(Ok(Done::Acted {
            seq: Some(r.seq),
            at: String::new(),
            already: false,
        }))
    }

    /// An operation in a platform's lane: a unit of another lane (or of
    /// none, or not sold) refused as unknown, before anything else is read
    /// of it; a sale recorded as the lane's.
    fn laned(&mut self, l: &Laned) -> Result<Result<Done, Error>, Error> {
        if l.own_units_only {
            if let Some((p, id)) = l.op.asked_unit() {
                let own = self
                    .tx
                    .sale(p)?
                    .is_some_and(|s| s.belongs_to(Some(&l.lane)));
                if !own {
                    return Ok(Err(Error::UnknownUnit { id: id.to_string() }));
                }
            }
        }
        let outer = self.lane.replace(l.lane.clone());
        let done = self.one(&l.op);
        self.lane = outer;
        done
    }

    /// Ends the claims of `s`'s emission: appended to the log, unless they
    /// ended before (the first end stands; one stored unlogged is logged
    /// now, as stored). Later operations of the batch see it.
    fn end_claims(&mut self, s: &EndOfClaims) -> Result<Result<Done, Error>, Error> {
        let Some(game) = Game::from_slug(&s.game) else {
            return Ok(Err(Error::Internal {
                what: format!("an end of claims names the unknown game {:?}", s.game),
            }));
        };
        let s = match self.tx.claims_row(game.slug(), s.emission)? {
            Some((_, Some(seq))) => return Ok(Ok(Done::ClaimsEnded { seq: Some(seq) })),
            // Queued already: the sequencer logs it.
            Some((_, None)) if matches!(self.log, Sequencing::Deferred) => {
                return Ok(Ok(Done::ClaimsEnded { seq: None }))
            }
            Some((stored, None)) => stored,
            None => s.clone(),
        };
        let logged = self.append(|seq| log::LogEntry::EndOfClaims(&s).line(seq));
        self.tx.log_claims_end(&s, borrowed(&logged))?;
        self.push(logged);
        self.gate(game, s.emission)?.claims_ended = Some(s.ended_at.clone());
        Ok(Ok(Done::ClaimsEnded {
            seq: logged.map(|(seq, _)| seq),
        }))
    }

    /// An operator's action (docs/REDEMPTION.md §Suspend, withdraw and
    /// void), checked against the emission's standing: appended to the
    /// log, or answered `already` when in force.
    fn operator(&mut self, a: &OperatorAction) -> Result<Result<Done, Error>, Error> {
        let Some(game) = Game::from_slug(&a.game) else {
            return Ok(Err(Error::Internal {
                what: format!("an operator action names the unknown game {:?}", a.game),
            }));
        };
        if a.action == Action::Void {
            return self.void(game, a);
        }
        if a.action == Action::Closing {
            return self.closing(game, a);
        }
        // The operations under way on the emission first; its standing
        // read again after (another node may have acted since).
        self.tx.lock_gate(game.slug(), a.emission)?;
        self.gates.remove(&(game.slug(), a.emission));
        if let Err(refused) = self.open(game, a.emission) {
            return Ok(Err(refused));
        }
        let gate = self.gate(game, a.emission)?;
        let level = gate.level(a.block);
        let in_force = match a.action {
            Action::Suspend => level.suspended.as_ref(),
            Action::Withdraw => level.withdrawn.as_ref(),
            Action::Resume | Action::Void | Action::Closing | Action::EarlyEnd => None,
        };
        if let Some(why) = in_force {
            return Ok(Ok(Done::Acted {
                seq: None,
                at: why.at.clone(),
                already: true,
            }));
        }
        if a.action == Action::Resume && level.suspended.is_none() {
            if let Some(why) = &level.withdrawn {
                return Ok(Err(Error::WithdrawalIsPermanent {
                    game: game.slug(),
                    emission: a.emission,
                    block: a.block,
                    at: why.at.clone(),
                }));
            }
            let held = a.block.and_then(|b| gate.suspended(b)).map(|(_, why)| {
                format!(
                    "the whole emission is suspended since {}: resume it without --block",
                    why.at
                )
            });
            return Ok(Err(Error::NotSuspended {
                game: game.slug(),
                emission: a.emission,
                block: a.block,
                held,
            }));
        }
        let done = self.act(a)?;
        let why = Why {
            at: self.at.to_string(),
            reason: a.reason.clone(),
        };
        self.gate(game, a.emission)?.apply(a.action, a.block, why);
        Ok(Ok(done))
    }

    /// Publishes an emission's closing statement once its claims ended;
    /// the first stands.
    fn closing(&mut self, game: Game, a: &OperatorAction) -> Result<Result<Done, Error>, Error> {
        self.tx.lock_gate(game.slug(), a.emission)?;
        self.gates.remove(&(game.slug(), a.emission));
        let gate = self.gate(game, a.emission)?;
        if gate.claims_ended.is_none() {
            return Ok(Err(Error::ClaimsNotEnded {
                game: game.slug(),
                emission: a.emission,
                ledger: "this ledger".into(),
            }));
        }
        if let Some(why) = &gate.closing {
            return Ok(Ok(Done::Acted {
                seq: None,
                at: why.at.clone(),
                already: true,
            }));
        }
        let done = self.act(a)?;
        let why = Why {
            at: self.at.to_string(),
            reason: a.reason.clone(),
        };
        self.gate(game, a.emission)?
            .apply(Action::Closing, None, why);
        Ok(Ok(done))
    }

    /// Voids a sale before its play began: the unit's operations take
    /// turns with it, so a void racing a first roll is one or the other.
    fn void(&mut self, game: Game, a: &OperatorAction) -> Result<Result<Done, Error>, Error> {
        let (Some(block), Some(index)) = (a.block, a.index) else {
            return Ok(Err(Error::Internal {
                what: "a void names no unit".into(),
            }));
        };
        let p = Place {
            game: game.slug(),
            emission: a.emission,
            block,
            index,
        };
        let id = || a.unit_id.clone().unwrap_or_else(|| a.scope());
        self.tx.lock_unit(p)?;
        if let Err(refused) = self.open(game, a.emission) {
            return Ok(Err(refused));
        }
        if let Some(at) = self.tx.voided(p)? {
            return Ok(Ok(Done::Acted {
                seq: None,
                at,
                already: true,
            }));
        }
        if let Some((at, prize)) = self.tx.redemption(p)? {
            return Ok(Err(Error::AlreadyRedeemed {
                id: id(),
                at,
                prize: Cents::from(prize),
            }));
        }
        if self.tx.sale(p)?.is_none() {
            return Ok(Err(Error::NotSold { id: id() }));
        }
        if let Some(play) = self.tx.play(p)? {
            if play.rolls > 0 || play.ended.is_some() {
                return Ok(Err(Error::PlayStarted {
                    id: id(),
                    rolls: play.rolls,
                }));
            }
        }
        Ok(Ok(self.act(a)?))
    }

    /// Records `a` now, at the next log position.
    fn act(&mut self, a: &OperatorAction) -> Result<Done, Error> {
        let mut acted = a.clone();
        acted.at = self.at.to_string();
        let logged = self.append(|seq| acted.line(seq));
        self.tx.insert_action(&acted, borrowed(&logged))?;
        self.push(logged);
        Ok(Done::Acted {
            seq: logged.map(|(seq, _)| seq),
            at: acted.at,
            already: false,
        })
    }

    /// An operation under a key: the kept answer when the key was used for
    /// the same request, a refusal when for another, else the operation.
    fn keyed(&mut self, k: &Keyed) -> Result<Result<Done, Error>, Error> {
        let reused = |first: &str| {
            Ok(Err(Error::IdempotencyKeyReused {
                key: k.client_key().to_string(),
                first: first.to_string(),
            }))
        };
        let Some(row) = self.tx.kept(&k.key)? else {
            // A unit of a batch: the batch's key, read in this
            // transaction, must not be another batch's.
            if let Some(batch) = batch_key(&k.key) {
                let first = match self.batches.get(batch) {
                    Some(request) => Some(hex::encode(request)),
                    None => self.tx.kept_batch(batch)?,
                };
                match first {
                    Some(first) if first != hex::encode(k.request) => return reused("batch"),
                    Some(_) => {}
                    None => {
                        self.batches.insert(batch.to_string(), k.request);
                    }
                }
            }
            return self.one(&k.op);
        };
        if row.request != hex::encode(k.request) {
            return reused(row.kind());
        }
        Ok(row.answer.done().ok_or_else(|| Error::Internal {
            what: format!(
                "the answer kept under key {:?} names an unknown game",
                k.key
            ),
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap};

    use super::*;

    /// A ledger in memory that counts the reads of unit rows.
    #[derive(Default)]
    struct Memory {
        sold: BTreeSet<u32>,
        cursor: u32,
        unit_reads: usize,
        kept: HashMap<String, KeptRow>,
        claims: Option<(EndOfClaims, Option<u64>)>,
        actions: Vec<OperatorAction>,
        rolls: HashMap<u32, u32>,
        cursors: HashMap<u32, u32>,
    }

    /// Units a block of [`Memory`] spans: block b's unit i is kept as
    /// (b − 1) × `BLOCK_SPAN` + i (block 1's as its index).
    const BLOCK_SPAN: u32 = 10_000_000;

    fn at(p: Place) -> u32 {
        (p.block - 1) * BLOCK_SPAN + p.index
    }

    impl LedgerTx for Memory {
        fn gate(&mut self, _: &str, _: u32) -> Result<Gate, Error> {
            let mut gate = Gate {
                claims_ended: self.claims.as_ref().map(|(s, _)| s.ended_at.clone()),
                ..Gate::default()
            };
            for a in &self.actions {
                let why = Why {
                    at: a.at.clone(),
                    reason: a.reason.clone(),
                };
                gate.apply(a.action, a.block, why);
            }
            Ok(gate)
        }
        fn insert_action(&mut self, a: &OperatorAction, _: Logged) -> Result<(), Error> {
            self.actions.push(a.clone());
            Ok(())
        }
        fn voided(&mut self, p: Place) -> Result<Option<String>, Error> {
            Ok(self
                .actions
                .iter()
                .find(|a| {
                    a.action == Action::Void && a.index == Some(p.index) && a.block == Some(p.block)
                })
                .map(|a| a.at.clone()))
        }
        fn claims_row(
            &mut self,
            _: &str,
            _: u32,
        ) -> Result<Option<(EndOfClaims, Option<u64>)>, Error> {
            Ok(self.claims.clone())
        }
        fn log_claims_end(&mut self, s: &EndOfClaims, logged: Logged) -> Result<(), Error> {
            assert!(self.claims.as_ref().is_none_or(|(_, seq)| seq.is_none()));
            self.claims = Some((s.clone(), logged.map(|(seq, _)| seq)));
            Ok(())
        }
        fn redemption(&mut self, _: Place) -> Result<Option<(String, u32)>, Error> {
            Ok(None)
        }
        fn insert_redemption(&mut self, _: &Entry, _: &str, _: Logged) -> Result<bool, Error> {
            Ok(true)
        }
        fn sale(&mut self, p: Place) -> Result<Option<SaleRow>, Error> {
            self.unit_reads += 1;
            Ok(self.sold.contains(&at(p)).then(|| SaleRow {
                sold_at: "then".into(),
                lane: None,
            }))
        }
        fn insert_sale(
            &mut self,
            p: Place,
            _: &str,
            _: Option<&str>,
            _: Logged,
        ) -> Result<(), Error> {
            assert!(self.sold.insert(at(p)), "unit {} sold twice", p.index);
            Ok(())
        }
        fn sale_cursor(&mut self, _: &str, _: u32, block: u32) -> Result<u32, Error> {
            Ok(match block {
                1 => self.cursor,
                _ => self.cursors.get(&block).copied().unwrap_or(0),
            })
        }
        fn first_unsold(&mut self, _: &str, _: u32, block: u32, from: u32) -> Result<u32, Error> {
            self.unit_reads += 1;
            let base = (block - 1) * BLOCK_SPAN;
            Ok((from..BLOCK_SPAN)
                .find(|i| !self.sold.contains(&(base + i)))
                .unwrap_or(u32::MAX))
        }
        fn set_sale_cursor(&mut self, _: &str, _: u32, block: u32, next: u32) -> Result<(), Error> {
            match block {
                1 => self.cursor = next,
                _ => drop(self.cursors.insert(block, next)),
            }
            Ok(())
        }
        fn play(&mut self, p: Place) -> Result<Option<PlayRow>, Error> {
            Ok(self
                .rolls
                .get(&at(p))
                .map(|&rolls| PlayRow { rolls, ended: None }))
        }
        fn kept(&mut self, key: &str) -> Result<Option<KeptRow>, Error> {
            Ok(self.kept.get(key).cloned())
        }
        fn keep(&mut self, key: &str, row: &KeptRow, _: &str) -> Result<(), Error> {
            assert!(self.kept.insert(key.into(), row.clone()).is_none());
            Ok(())
        }
        fn kept_batch(&mut self, _: &str) -> Result<Option<String>, Error> {
            Ok(None)
        }
        fn put_play(&mut self, p: Place, row: &PlayRow, _: &str, _: Logged) -> Result<(), Error> {
            self.rolls.insert(at(p), row.rolls);
            Ok(())
        }
    }

    /// `ops` applied to `tx`, appending to `frontier` (as SQLite does).
    fn applied(
        tx: &mut Memory,
        frontier: &mut Frontier,
        at: &str,
        ops: &[Op],
    ) -> Vec<Result<Done, Error>> {
        apply(tx, Sequencing::Inline(frontier), at, ops).unwrap()
    }

    fn sell(vet: Vetter) -> Op {
        Op::Sell {
            game: Game::TRESORS_ENSABLES,
            price_cents: 100,
            blocks: vec![ForSale {
                emission: 1,
                block: 1,
                units: 450_000,
            }],
            vet,
        }
    }

    fn any_unit() -> Vetter {
        Vetter(Arc::new(|u| {
            Ok(Vetted {
                id: format!("TE-1-1-{}-X", u.index),
                shown: serde_json::Value::Null,
                prefix: None,
            })
        }))
    }

    fn sold_index(outcome: &Result<Done, Error>) -> u32 {
        match outcome {
            Ok(Done::Sold(s)) => s.unit.index,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_first_sale_after_a_block_was_marked_sold_reads_a_handful_of_rows_not_the_block() {
        let mut tx = Memory {
            sold: (0..449_999).filter(|i| *i != 300_000).collect(),
            ..Memory::default()
        };
        let mut frontier = Frontier::default();
        let done = applied(
            &mut tx,
            &mut frontier,
            "now",
            &[sell(any_unit()), sell(any_unit())],
        );
        assert_eq!(
            (sold_index(&done[0]), sold_index(&done[1])),
            (300_000, 449_999)
        );
        assert!(
            tx.unit_reads <= 8,
            "{} unit reads under the write lock",
            tx.unit_reads
        );
    }

    #[test]
    fn units_marked_in_order_move_the_cursor_and_out_of_order_never_past_a_gap() {
        let mut tx = Memory::default();
        let mut frontier = Frontier::default();
        let mark = |index| Op::MarkSold {
            unit: UnitRef {
                game: Game::TRESORS_ENSABLES,
                emission: 1,
                block: 1,
                index,
            },
            unit_id: format!("TE-1-1-{index}-X"),
        };
        let ops: Vec<Op> = [0, 1, 2, 5, 3].into_iter().map(mark).collect();
        applied(&mut tx, &mut frontier, "now", &ops);
        assert_eq!(tx.cursor, 4, "past 0..=3, not past the unsold 4");
        let done = applied(&mut tx, &mut frontier, "now", &[sell(any_unit())]);
        assert_eq!(sold_index(&done[0]), 4);
        assert_eq!(tx.cursor, 6);
    }

    #[test]
    fn a_unit_the_vetter_refuses_is_not_sold_and_the_cursor_stays() {
        let mut tx = Memory::default();
        let mut frontier = Frontier::default();
        let refuse = Vetter(Arc::new(|u| {
            Err(Error::BlockRejected {
                path: "b.tkb".into(),
                reason: format!("unit {}: chunk 0 does not open", u.index),
            })
        }));
        for _ in 0..3 {
            let done = applied(&mut tx, &mut frontier, "now", &[sell(refuse.clone())]);
            assert!(matches!(done[0], Err(Error::BlockRejected { .. })));
        }
        assert!(tx.sold.is_empty());
        assert_eq!(frontier.size(), 0, "nothing was logged");
        let done = applied(&mut tx, &mut frontier, "now", &[sell(any_unit())]);
        assert_eq!(sold_index(&done[0]), 0, "no unit was burned");
    }

    fn end_claims(ended_at: &str) -> Op {
        Op::EndClaims(EndOfClaims {
            game: Game::TRESORS_ENSABLES.slug().into(),
            emission: 1,
            ended_at: ended_at.into(),
            statement: format!("statement {ended_at}"),
        })
    }

    #[test]
    fn an_end_of_claims_is_logged_once_stops_the_rest_of_its_batch_and_adopts_an_older_row() {
        let mut tx = Memory::default();
        let mut frontier = Frontier::default();
        let mark = Op::MarkSold {
            unit: UnitRef {
                game: Game::TRESORS_ENSABLES,
                emission: 1,
                block: 1,
                index: 0,
            },
            unit_id: "TE-1-1-0-X".into(),
        };
        let done = applied(
            &mut tx,
            &mut frontier,
            "now",
            &[end_claims("T1"), mark, end_claims("T2")],
        );
        assert!(matches!(done[0], Ok(Done::ClaimsEnded { seq: Some(0) })));
        assert!(matches!(done[1], Err(Error::ClaimsEnded { .. })));
        assert!(
            matches!(done[2], Ok(Done::ClaimsEnded { seq: Some(0) })),
            "the first stands"
        );
        assert_eq!(frontier.size(), 1);
        let (stored, _) = tx.claims.clone().unwrap();
        assert_eq!(stored.ended_at, "T1");
        // Its leaf is the claims/v1 line of the statement as stored.
        let mut alone = Frontier::default();
        alone.push(log::LogEntry::EndOfClaims(&stored).leaf(0));
        assert_eq!(frontier.root(), alone.root());
        // A row stored before ends of claims were logged: logged as stored.
        tx.claims = Some((stored.clone(), None));
        let done = applied(&mut tx, &mut frontier, "later", &[end_claims("T3")]);
        assert!(matches!(done[0], Ok(Done::ClaimsEnded { seq: Some(1) })));
        assert_eq!(tx.claims.unwrap().0.ended_at, "T1");
    }

    fn keyed(key: &str, request: &str, op: Op) -> Op {
        Op::Keyed(Keyed {
            key: key.into(),
            request: request_digest(&[request]),
            what: request.into(),
            op: Box::new(op),
        })
    }

    #[test]
    fn a_key_is_applied_once_in_a_batch_and_across_batches_and_refused_for_another_request() {
        let mut tx = Memory::default();
        let mut frontier = Frontier::default();
        let ops = [
            keyed("k1", "sale", sell(any_unit())),
            keyed("k1", "sale", sell(any_unit())),
            keyed("k1", "other", sell(any_unit())),
            keyed("k2", "sale", sell(any_unit())),
        ];
        let done = applied(&mut tx, &mut frontier, "now", &ops);
        assert_eq!((sold_index(&done[0]), sold_index(&done[1])), (0, 0));
        assert!(matches!(done[2], Err(Error::IdempotencyKeyReused { .. })));
        assert_eq!(sold_index(&done[3]), 1);
        let again = applied(&mut tx, &mut frontier, "later", &ops[..1]);
        assert_eq!(
            KeptAnswer::of(again[0].as_ref().unwrap()),
            KeptAnswer::of(done[0].as_ref().unwrap())
        );
        assert_eq!(tx.sold.len(), 2);
        assert_eq!(tx.kept.len(), 2);
        let reused = applied(&mut tx, &mut frontier, "later", &ops[2..3]);
        assert!(matches!(reused[0], Err(Error::IdempotencyKeyReused { .. })));
    }

    #[test]
    fn keys_are_checked_and_kept_answers_round_trip() {
        for good in ["a", "0f8c-uuid-like:1.2_3", &"k".repeat(128)] {
            check_key(good).unwrap();
        }
        for bad in ["", "a b", "a#1", "é", &"k".repeat(129)] {
            assert!(
                matches!(check_key(bad), Err(Error::BadIdempotencyKey { .. })),
                "{bad:?}"
            );
        }
        let kept = KeptAnswer::Played {
            rolls: 3,
            ended: Some("stop".into()),
            replayed: false,
            seq: Some(9),
        };
        let text = serde_json::to_string(&kept).unwrap();
        assert_eq!(
            text,
            r#"{"done":"played","rolls":3,"ended":"stop","replayed":false,"seq":9}"#
        );
        assert_eq!(serde_json::from_str::<KeptAnswer>(&text).unwrap(), kept);
        assert_eq!(KeptAnswer::of(&kept.done().unwrap()), kept);
    }
    fn act(action: Action, block: Option<u32>, index: Option<u32>) -> Op {
        Op::Operator(OperatorAction {
            action,
            game: Game::TRESORS_ENSABLES.slug().into(),
            emission: 1,
            block,
            index,
            unit_id: None,
            reason: "test".into(),
            by: "ops".into(),
            at: String::new(),
        })
    }

    fn two_blocks() -> Op {
        Op::Sell {
            game: Game::TRESORS_ENSABLES,
            price_cents: 100,
            blocks: [1, 2]
                .into_iter()
                .map(|block| ForSale {
                    emission: 1,
                    block,
                    units: 2,
                })
                .collect(),
            vet: any_unit(),
        }
    }

    fn play_step(index: u32, n: u32) -> Op {
        Op::Play(PlayOrder {
            unit: UnitRef {
                game: Game::TRESORS_ENSABLES,
                emission: 1,
                block: 1,
                index,
            },
            unit_id: format!("TE-1-1-{index}-X"),
            action: PlayAction::Roll(n),
            first_stop: Some(1),
            end_step: 10,
        })
    }

    #[test]
    fn a_suspension_stops_sales_and_steps_until_resumed_and_a_withdrawal_skips_its_block_for_good()
    {
        let mut tx = Memory::default();
        let mut f = Frontier::default();
        let done = applied(&mut tx, &mut f, "t0", &[two_blocks()]);
        assert_eq!(sold_index(&done[0]), 0);
        // Block 1 suspended: the sale goes to block 2; a roll of block 1's
        // unit is refused, naming the suspension.
        let done = applied(
            &mut tx,
            &mut f,
            "t1",
            &[
                act(Action::Suspend, Some(1), None),
                two_blocks(),
                play_step(0, 1),
            ],
        );
        assert!(matches!(done[0], Ok(Done::Acted { already: false, .. })));
        match &done[1] {
            Ok(Done::Sold(s)) => assert_eq!((s.unit.block, s.unit.index), (2, 0)),
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&done[2], Err(Error::Suspended { block: Some(1), .. })),
            "{:?}",
            done[2]
        );
        // Suspending again records nothing new; resuming twice is refused.
        let size = f.size();
        let done = applied(
            &mut tx,
            &mut f,
            "t2",
            &[act(Action::Suspend, Some(1), None)],
        );
        assert!(matches!(&done[0], Ok(Done::Acted { already: true, at, .. }) if at == "t1"));
        assert_eq!(f.size(), size);
        let done = applied(
            &mut tx,
            &mut f,
            "t3",
            &[
                act(Action::Resume, Some(1), None),
                act(Action::Resume, Some(1), None),
                play_step(0, 1),
            ],
        );
        assert!(matches!(done[0], Ok(Done::Acted { already: false, .. })));
        assert!(
            matches!(done[1], Err(Error::NotSuspended { .. })),
            "{:?}",
            done[1]
        );
        assert!(matches!(done[2], Ok(Done::Played(_))), "{:?}", done[2]);
        // Block 2 withdrawn: never sold again; resume is refused; the rest
        // of block 1 sells, then the game is sold out naming block 2.
        let done = applied(
            &mut tx,
            &mut f,
            "t4",
            &[
                act(Action::Withdraw, Some(2), None),
                act(Action::Resume, Some(2), None),
                two_blocks(),
                two_blocks(),
            ],
        );
        assert!(matches!(done[1], Err(Error::WithdrawalIsPermanent { .. })));
        match &done[2] {
            Ok(Done::Sold(s)) => assert_eq!((s.unit.block, s.unit.index), (1, 1)),
            other => panic!("{other:?}"),
        }
        match &done[3] {
            Err(Error::SoldOut { withdrawn, .. }) => {
                assert_eq!(withdrawn, &["emission 1 block 2".to_string()]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_suspended_emission_with_units_left_refuses_a_sale_as_suspended() {
        let mut tx = Memory::default();
        let mut f = Frontier::default();
        let done = applied(
            &mut tx,
            &mut f,
            "t1",
            &[act(Action::Suspend, None, None), two_blocks()],
        );
        assert!(
            matches!(done[1], Err(Error::Suspended { block: None, .. })),
            "{:?}",
            done[1]
        );
    }

    #[test]
    fn a_void_holds_before_the_first_step_only_once_and_then_refuses_play_and_payment() {
        let mut tx = Memory::default();
        let mut f = Frontier::default();
        applied(&mut tx, &mut f, "t0", &[two_blocks(), two_blocks()]);
        let void = |index| act(Action::Void, Some(1), Some(index));
        let done = applied(
            &mut tx,
            &mut f,
            "t1",
            &[play_step(1, 1), void(1), void(0), void(0), play_step(0, 1)],
        );
        assert!(matches!(done[0], Ok(Done::Played(_))));
        assert!(
            matches!(done[1], Err(Error::PlayStarted { rolls: 1, .. })),
            "{:?}",
            done[1]
        );
        assert!(matches!(done[2], Ok(Done::Acted { already: false, .. })));
        assert!(matches!(done[3], Ok(Done::Acted { already: true, .. })));
        assert!(
            matches!(done[4], Err(Error::Voided { .. })),
            "{:?}",
            done[4]
        );
        // A unit never sold is not voided.
        let unsold = Op::Operator(OperatorAction {
            block: Some(2),
            index: Some(1),
            ..match void(0) {
                Op::Operator(a) => a,
                _ => unreachable!(),
            }
        });
        let done = applied(&mut tx, &mut f, "t2", &[unsold]);
        assert!(
            matches!(done[0], Err(Error::NotSold { .. })),
            "{:?}",
            done[0]
        );
    }
}
