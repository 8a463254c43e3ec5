//! An emission's rows as an audit reads them ([`super::backend::Backend::emission_rows`]):
//! every sale, play, redemption and void of one emission, each kind read once
//! (one query per kind, never one per unit) in one snapshot, streamed in
//! (block, index) order, with the same SQL text on every database (SQLite's
//! `?N` parameters; PostgreSQL's `$N` are made from them). Nothing is
//! assumed of the rows: a key seen twice (a database that lost its
//! constraints) is handed over twice, and every number is read as the
//! 64-bit integer the database holds, for the caller to judge.

use crate::error::Error;

/// A unit's place in its emission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    /// The block's number (`u32::MAX` when the row holds no such number).
    pub block: u32,
    /// The unit's index in its block (`u32::MAX` likewise).
    pub index: u32,
}

/// A `plays` row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayRead {
    /// The unit.
    pub at: At,
    /// Steps revealed.
    pub rolls: i64,
    /// `stop` or `end` once over (`ops::PLAY_STOPPED`, `ops::PLAY_ENDED`).
    pub ended: Option<String>,
}

/// A void: the unit, and the operator's reason and time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VoidRead {
    /// The unit.
    pub at: At,
    /// Why (the operator's reason, kept in the ledger).
    pub reason: String,
    /// When.
    pub when: String,
}

/// A `redemptions` row: what was paid, and what it was paid for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaidRow {
    /// The unit.
    pub at: At,
    /// Its ID as recorded.
    pub unit_id: String,
    /// The block's unit price, cents.
    pub price_cents: i64,
    /// Lot code.
    pub lot: i64,
    /// Prize paid, cents.
    pub prize_cents: i64,
    /// SHA-256 of the unit's record, hex, as recorded.
    pub record_sha256: String,
    /// The unit's record (`None` in a row of an older SQLite ledger).
    pub record: Option<Vec<u8>>,
    /// The rules version it was played under.
    pub rules_version: Option<i64>,
    /// The stop it was paid at (`None`: played to the end).
    pub stopped_after_steps: Option<i64>,
}

/// One row of an emission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EmissionRow {
    /// A unit sold.
    Sale(At),
    /// A unit's play (a game played step by step).
    Play(PlayRead),
    /// A unit paid.
    Redemption(PaidRow),
    /// A unit whose sale was voided (docs/REDEMPTION.md §Suspend, withdraw
    /// and void).
    Void(VoidRead),
}

/// What [`super::backend::Backend::emission_rows`] hands each row to.
pub type EmissionReads<'f> = dyn FnMut(EmissionRow) -> Result<(), Error> + 'f;

/// The kinds of row, each read by one query.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    Sales,
    Plays,
    Redemptions,
    Voids,
}

impl Kind {
    /// The three reads, in the order they are made.
    pub(crate) const ALL: [Kind; 4] = [Kind::Sales, Kind::Plays, Kind::Redemptions, Kind::Voids];

    /// Its query (`?1` the game's slug, `?2` the emission).
    pub(crate) fn sql(self) -> &'static str {
        match self {
            Kind::Sales => {
                "SELECT block, unit_index FROM sales
                 WHERE game = ?1 AND emission = ?2 ORDER BY block, unit_index"
            }
            Kind::Plays => {
                "SELECT block, unit_index, rolls, ended FROM plays
                 WHERE game = ?1 AND emission = ?2 ORDER BY block, unit_index"
            }
            Kind::Redemptions => {
                "SELECT block, unit_index, unit_id, price_cents, lot, prize_cents, record_sha256,
                        record, rules_version, stopped_after_rolls
                 FROM redemptions WHERE game = ?1 AND emission = ?2 ORDER BY block, unit_index"
            }
            Kind::Voids => {
                "SELECT block, unit_index, reason, at FROM operator_actions
                 WHERE game = ?1 AND emission = ?2 AND action = 'void' ORDER BY block, unit_index"
            }
        }
    }

    /// The row `c` of this kind's query. A NULL where the schema forbids
    /// one (a database that lost its constraints) reads as a number no
    /// unit has (-1), or as empty text.
    pub(crate) fn row<C: Columns>(self, c: &C) -> Result<EmissionRow, C::Error> {
        let int = |i: usize| c.int(i).map(|v| v.unwrap_or(-1));
        let at = At {
            block: place(int(0)?),
            index: place(int(1)?),
        };
        Ok(match self {
            Kind::Sales => EmissionRow::Sale(at),
            Kind::Voids => EmissionRow::Void(VoidRead {
                at,
                reason: c.text(2)?.unwrap_or_default(),
                when: c.text(3)?.unwrap_or_default(),
            }),
            Kind::Plays => EmissionRow::Play(PlayRead {
                at,
                rolls: int(2)?,
                ended: c.text(3)?,
            }),
            Kind::Redemptions => EmissionRow::Redemption(PaidRow {
                at,
                unit_id: c.text(2)?.unwrap_or_default(),
                price_cents: int(3)?,
                lot: int(4)?,
                prize_cents: int(5)?,
                record_sha256: c.text(6)?.unwrap_or_default(),
                record: c.bytes(7)?,
                rules_version: c.int(8)?,
                stopped_after_steps: c.int(9)?,
            }),
        })
    }
}

/// A row's columns as each database's driver gives them.
pub(crate) trait Columns {
    /// The driver's error.
    type Error;
    /// An integer column.
    fn int(&self, i: usize) -> Result<Option<i64>, Self::Error>;
    /// A text column.
    fn text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    /// A blob column.
    fn bytes(&self, i: usize) -> Result<Option<Vec<u8>>, Self::Error>;
}

impl Columns for rusqlite::Row<'_> {
    type Error = rusqlite::Error;
    fn int(&self, i: usize) -> Result<Option<i64>, rusqlite::Error> {
        self.get(i)
    }
    fn text(&self, i: usize) -> Result<Option<String>, rusqlite::Error> {
        self.get(i)
    }
    fn bytes(&self, i: usize) -> Result<Option<Vec<u8>>, rusqlite::Error> {
        self.get(i)
    }
}

impl Columns for postgres::Row {
    type Error = postgres::Error;
    fn int(&self, i: usize) -> Result<Option<i64>, postgres::Error> {
        self.try_get(i)
    }
    fn text(&self, i: usize) -> Result<Option<String>, postgres::Error> {
        self.try_get(i)
    }
    fn bytes(&self, i: usize) -> Result<Option<Vec<u8>>, postgres::Error> {
        self.try_get(i)
    }
}

/// A block or index as a place (out of range: `u32::MAX`, no unit's).
fn place(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}
