//! What a redemption records and where it landed: the [`Entry`] written,
//! the [`Committed`] place in the log, the [`Recorded`] row read back. The
//! same for every database.

use serde::Serialize;
use ticket_issuer_core::game::Game;
use ticket_issuer_core::merkle;
use ticket_issuer_log::log;

/// A unit to record.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The game.
    pub game: Game,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Unit index.
    pub index: u32,
    /// The unit's ID as printed.
    pub unit_id: String,
    /// Unit price in cents.
    pub price_cents: u32,
    /// Lot code (0: none).
    pub lot: u8,
    /// Prize in cents.
    pub prize_cents: u32,
    /// SHA-256 of the unit's record, hex.
    pub record_sha256: String,
    /// The unit's record (prefix and payload), to replay the row later.
    pub record: Vec<u8>,
    /// The game's rules version the record was played under.
    pub rules_version: u16,
    /// The player's stop (steps played before it); `None`: played
    /// to the end.
    pub stopped_after_steps: Option<u32>,
}

impl Entry {
    /// The facts its log entry hashes, recorded at `redeemed_at`.
    #[must_use]
    pub fn fields<'a>(&'a self, redeemed_at: &'a str) -> log::EntryFields<'a> {
        log::EntryFields {
            game: self.game.slug(),
            emission: self.emission,
            block: self.block,
            index: self.index,
            unit_id: &self.unit_id,
            lot: self.lot,
            prize_cents: self.prize_cents,
            record_sha256: &self.record_sha256,
            redeemed_at,
            stopped_after_steps: self.stopped_after_steps,
        }
    }
}

/// Where a redemption landed in the log, once durable.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Committed {
    /// The entry is in the log: its place and the head that holds it are
    /// below. `false`: durable and queued; the sequencer appends it within
    /// the bound of docs/REDEMPTION.md §Sequencing (PostgreSQL).
    pub sequenced: bool,
    /// The entry's position in the log (0-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// Its RFC 9162 leaf hash, hex (docs/REDEMPTION.md §Tamper-evident log).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_hash: Option<String>,
    /// When the ledger recorded it (RFC 3339 UTC).
    #[serde(skip)]
    pub redeemed_at: String,
    /// The log's size after the commit that holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_size: Option<u64>,
    /// The log's root at that size, hex (signed in the head of that size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
}

impl Committed {
    /// Recorded at `at`, at entry `seq` with leaf hash `leaf` (`None`:
    /// queued); its tree size and root are set by [`ops::apply`] once the
    /// batch is done.
    /// The entry of a redemption read back (`seq`: `None` while queued).
    #[must_use]
    pub fn recorded(r: &Recorded) -> Committed {
        Committed {
            sequenced: r.seq.is_some(),
            seq: r.seq,
            leaf_hash: None,
            redeemed_at: r.redeemed_at.clone(),
            tree_size: None,
            root: None,
        }
    }

    pub(crate) fn at(logged: Option<(u64, merkle::Hash)>, at: &str) -> Committed {
        Committed {
            sequenced: logged.is_some(),
            seq: logged.map(|(seq, _)| seq),
            leaf_hash: logged.map(|(_, leaf)| hex::encode(leaf)),
            redeemed_at: at.to_string(),
            tree_size: None,
            root: None,
        }
    }
}

/// A unit's ledger row, as first recorded.
#[derive(Clone, Debug, Serialize)]
pub struct Recorded {
    /// When (RFC 3339, UTC).
    pub redeemed_at: String,
    /// Prize paid, cents.
    pub prize_cents: u32,
    /// Its entry in the log; `None` while queued for the sequencer.
    pub seq: Option<u64>,
}
