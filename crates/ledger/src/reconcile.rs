//! The ledger against the sealed blocks: the ledger part of `issuer audit
//! --emission N` ([`reconcile`]). The emission's sales, plays and
//! redemptions are read once per kind, in one snapshot
//! ([`LedgerTarget::emission_rows`]), and set against the blocks the audit
//! has just read unit by unit ([`BlockAudit`]): what was sold, played and
//! paid per block, what is still owed, whether every payment is what its
//! unit gives, and the ledger's own checks (its summary, its integrity
//! check, its log under its signed heads).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use ed25519_dalek::VerifyingKey;
use rayon::prelude::*;
use sha2::{Digest as _, Sha256};

use crate::binding;
use crate::block::authentic::AuthenticBlock;
use crate::block::reader::BlockFile;
use crate::error::Error;
use crate::evidence::block::UnitOutcome;
use crate::evidence::{BlockAudit, Check, LedgerBlock, LedgerEvidence};
use crate::game::{Game, GameUnit, LotTable, PrizeModel};
use crate::ledger::emission_rows::{At, EmissionRow, PaidRow, PlayRead};
use crate::ledger::log;
use crate::ledger::ops::{PLAY_ENDED, PLAY_STOPPED};
use crate::ledger::target::LedgerTarget;
use crate::ledger::witnessed::{self, Quorum, WitnessCheck};
use crate::money::Cents;
use crate::record::PREFIX_SIZE;
use crate::records_key::KeyAccess;
use crate::unit_id::UnitId;

/// The two-sided 99 % point of the normal law.
const Z_99: f64 = 2.576;

/// Examples a failing check names, at most.
const EXAMPLES: usize = 5;

/// Reconciles `game`'s emission `emission` in the ledger `target` with its
/// audited `blocks`; the ledger's heads must be signed by one of `signers`
/// (the store's ledger key by default; a shared ledger's nodes' keys).
///
/// Reads the emission's rows once per kind, in one snapshot (a block of
/// 450,000 units is three queries, not one per unit), and for a game played
/// step by step the records of the units sold, played or paid, once per
/// chunk through [`AuthenticBlock`] with `keys` (the block must still be
/// the one audited: the same sealed Merkle root; its seal is checked with
/// the signer its header names, which the audit checked against the
/// issuer's key). A store with no ledger at all reconciles as nothing sold.
///
/// **Per block** ([`LedgerBlock`]): units (the block's), units sold (and
/// unsold), plays ended, units redeemed, paid (every payment row, in
/// cents), stakes (units sold × the block's price), and what is still
/// owed: `unclaimed` counts the units sold, not redeemed, that would pay
/// something, and `liability_cents` what they would pay. A game revealed
/// whole owes its unit's prize (the outcome's). A game played step by step
/// owes, once the play is over, what its recorded play gives (its stop's
/// prize, or the prize at its end); while the play goes on (or before it
/// starts) the **most it may still pay**: the larger of the prize at its
/// end and the prize of every stop the rules still allow from the steps
/// revealed on. **Choice:** this is an upper bound, not the prize played
/// to the end: in Trésors Ensablés a unit that dies later pays 0 played to
/// the end but its gains if stopped before, so the prize to the end is not
/// a bound; the liability is never understated. Counts of units count a
/// unit once; a duplicate row is reported by its check (and a duplicate
/// payment is in `paid_cents`: money that went out).
///
/// **Checks** (ids `ledger/…`, scope `ledger`):
/// - `bound`: the ledger read is the one the emission's `ledger.json`
///   names (by identity), or none is named;
/// - `rows-name-units`: every row names a unit of an audited block;
/// - `sold-once`, `paid-once` (and `played-once` for a game played step by
///   step): no unit has two rows, counted in what was read (keys forbid
///   them; a tampered database may have lost its constraints);
/// - `paid-units-sold` (and `played-units-sold`): no unit paid (played)
///   without a sale (through `sell` or `mark-sold`);
/// - `voided-never-paid`: every unit whose sale was voided was sold, and
///   has no play and no payment (a voided sale is refunded: it owes
///   nothing, so it is never `unclaimed`);
/// - `plays-allowed` (step by step): every play recorded is one its unit
///   allows (an end at its last step, a stop the rules allow, a play going
///   on before its end);
/// - `paid-as-played` (step by step): every payment is of a play over, at
///   the play's recorded stop (or its end);
/// - `payments-match-units`: every payment is what its unit gives: the ID
///   (with its check code) and the price are the block's; a game revealed
///   whole: its lot and prize are the audited outcome's; a game played step
///   by step: its record is the sealed block's (SHA-256 of both, and its
///   stored `record_sha256`), its rules version the game's, and replaying
///   the block's record at the row's stop (`GameUnit::outcome`) gives its
///   lot and prize;
/// - `summary-reconciles`, `integrity`: the ledger's own summary
///   ([`LedgerTarget::summary`]: running totals and every row's replay, the
///   whole ledger) reconciles, and its integrity check passes;
/// - `log-verifies`: the log verifies under its signed heads with
///   `signers` ([`log::verify`], what `issuer ledger verify` runs).
///
/// These last three read the whole ledger, each in its own snapshot, as
/// `issuer ledger` and `issuer ledger verify` do: a write between them and
/// the emission's rows is not one of the emission's findings.
///
/// **Returns**, over the units sold whose play is over (a game revealed
/// whole: redeemed, a redemption closes its play; step by step: redeemed
/// or its play ended): `realised_return` is what was paid for them over
/// their stakes. `expected_return` is what the game gives for those units:
/// a fixed-table game, their outcomes' prizes over their stakes (exact for
/// those units); a drawn game, the game's binding figure (never stopping)
/// when none of them stopped, else the mean of their prizes as recorded
/// (each at its recorded stop or end) over the price. `band_99` is
/// `expected ± 2.576 × s / √n`, where `s` is the standard deviation of
/// those units' prizes as recorded over their price (`n` ≥ 2; its low end
/// no lower than 0): how far the mean return of that many units strays by
/// chance. The figures are
/// `None` when no unit's play is over.
pub fn reconcile(
    target: &LedgerTarget,
    game: Game,
    emission: u32,
    blocks: &[BlockAudit],
    keys: &KeyAccess<'_>,
    signers: &[VerifyingKey],
    witnesses: Option<&Quorum>,
) -> Result<LedgerEvidence, Error> {
    let ledger = target.describe();
    let step_by_step = game.step_by_step();
    let mut read = Read::new(blocks);
    let exists = target.emission_rows(game, emission, &mut |row| {
        read.add(row);
        Ok(())
    })?;
    let mut checks = vec![bound_check(target, blocks, exists)?];
    let mut ledger_blocks = Vec::with_capacity(blocks.len());
    let mut found = Found::default();
    for (audit, rows) in blocks.iter().zip(&read.blocks) {
        // The records are read only where some unit has rows.
        let some = rows.sold > 0 || !rows.plays.is_empty() || !rows.paid.is_empty();
        let block = match step_by_step && some {
            true => Some(open_block(game, audit, keys)?),
            false => None,
        };
        let f = tally(game, audit, rows, block.as_ref())?;
        ledger_blocks.push(LedgerBlock {
            block: audit.evidence.block,
            units: audit.evidence.units,
            sold: rows.sold,
            unsold: audit.evidence.units.saturating_sub(rows.sold),
            played: rows.ended,
            redeemed: rows.paid.len() as u64,
            paid_cents: u64::try_from(rows.paid_cents.max(0)).unwrap_or(u64::MAX),
            voided: rows.voided.len() as u64,
            unclaimed: f.unclaimed,
            liability_cents: f.liability_cents,
            stakes_cents: rows.sold * u64::from(audit.evidence.price_cents),
        });
        found.merge(f);
    }
    let (sold, paid) = ledger_blocks
        .iter()
        .fold((0, 0), |(s, p), b| (s + b.sold, p + b.redeemed));
    let plays = read.rows[1];
    let paid_as = match step_by_step {
        true => {
            "IDs, prices and sealed records, and replay to their lots and prizes at their stops"
        }
        false => "IDs and prices, and their lots and prizes are the audited outcomes'",
    };
    // (id, what, its failures, what holds when none, a game played step
    // by step only)
    let voids = read.rows[3];
    let table: [(&str, &str, &Problems, String, bool); 10] = [
        (
            "rows-name-units",
            "every row of the emission names a unit of its blocks",
            &read.stray,
            format!(
                "{} sale(s), {plays} play(s), {} payment(s), each of a unit of the {} block(s)",
                read.rows[0],
                read.rows[2],
                blocks.len()
            ),
            false,
        ),
        (
            "sold-once",
            "no unit is sold twice",
            &read.sold_twice,
            format!("{sold} unit(s) sold, each once"),
            false,
        ),
        (
            "paid-once",
            "no unit is paid twice",
            &read.paid_twice,
            format!("{paid} unit(s) paid, each once"),
            false,
        ),
        (
            "played-once",
            "no unit has two plays",
            &read.played_twice,
            format!("{plays} play(s), one per unit"),
            true,
        ),
        (
            "paid-units-sold",
            "every unit paid was sold",
            &found.paid_unsold,
            format!("the {paid} unit(s) paid were all sold"),
            false,
        ),
        (
            "played-units-sold",
            "every unit played was sold",
            &found.played_unsold,
            format!("the {plays} unit(s) played were all sold"),
            true,
        ),
        (
            "plays-allowed",
            "every play recorded is one its unit allows",
            &found.plays,
            format!("{plays} play(s) replayed from the sealed records: each ended at its unit's end or at a stop its rules allow, or goes on before its end"),
            true,
        ),
        (
            "paid-as-played",
            "every payment is of a play over, at its recorded stop or end",
            &found.as_played,
            format!("the {paid} payment(s) follow their plays as recorded"),
            true,
        ),
        (
            "voided-never-paid",
            "every unit whose sale was voided was sold, and is never played or paid",
            &found.voided,
            format!("{voids} sale(s) voided, none played or paid"),
            false,
        ),
        (
            "payments-match-units",
            "every payment is what its unit gives",
            &found.payments,
            format!("the {paid} payment(s) carry their units' {paid_as}"),
            false,
        ),
    ];
    for (id, name, problems, fine, step_only) in table {
        if step_only && !step_by_step {
            continue;
        }
        let detail = match exists {
            true => problems.detail(fine),
            false => format!("no ledger at {ledger}: nothing of the emission was recorded"),
        };
        checks.push(Check::new(
            format!("ledger/{id}"),
            "ledger",
            name,
            problems.count == 0,
            detail,
        ));
    }
    if !step_by_step {
        let (holds, detail) = found.voids.check();
        checks.push(Check::new(
            "ledger/voids-not-selective".to_string(),
            "ledger",
            "the voided sales hold their share of winners (a game revealed whole)",
            holds,
            detail,
        ));
    }
    checks.extend(ledger_checks(target, signers, witnesses)?);
    let (realised_return, expected_return, band_99) = found.over.returns(game);
    Ok(LedgerEvidence {
        ledger,
        blocks: ledger_blocks,
        checks,
        realised_return,
        expected_return,
        band_99,
    })
}

/// A check's failures: how many, and the first few.
#[derive(Default)]
struct Problems {
    count: u64,
    examples: Vec<String>,
}

impl Problems {
    fn add(&mut self, what: impl FnOnce() -> String) {
        self.count += 1;
        if self.examples.len() < EXAMPLES {
            self.examples.push(what());
        }
    }

    fn merge(&mut self, other: Problems) {
        self.count += other.count;
        let room = EXAMPLES.saturating_sub(self.examples.len());
        self.examples.extend(other.examples.into_iter().take(room));
    }

    /// `fine` when there is none, else the count and the examples.
    fn detail(&self, fine: String) -> String {
        match self.count {
            0 => fine,
            n => {
                let more = match n - self.examples.len() as u64 {
                    0 => String::new(),
                    m => format!("; and {m} more"),
                };
                format!("{n} found: {}{more}", self.examples.join("; "))
            }
        }
    }
}

/// A payment row as kept for its checks (its record reduced to a digest).
struct Paid {
    unit_id: String,
    price_cents: i64,
    lot: i64,
    prize_cents: i64,
    /// SHA-256 of the row's record, if it has one.
    record: Option<[u8; 32]>,
    /// The row's `record_sha256`, as stored.
    record_sha256: String,
    rules_version: Option<i64>,
    stop: Option<i64>,
}

impl Paid {
    fn of(row: PaidRow) -> Paid {
        Paid {
            record: row.record.as_deref().map(|r| Sha256::digest(r).into()),
            unit_id: row.unit_id,
            price_cents: row.price_cents,
            lot: row.lot,
            prize_cents: row.prize_cents,
            record_sha256: row.record_sha256,
            rules_version: row.rules_version,
            stop: row.stopped_after_rolls,
        }
    }
}

/// A play row as kept.
#[derive(Clone, Copy)]
struct Play {
    rolls: i64,
    /// `Some(true)`: stopped; `Some(false)`: ended by itself; `None`: goes
    /// on. An `ended` the ledger never writes reads as going on, and is
    /// found by `plays-allowed`.
    stopped: Option<bool>,
    /// `ended` holds something the ledger never writes.
    unknown_end: bool,
}

impl Play {
    fn of(row: &PlayRead) -> Play {
        let stopped = match row.ended.as_deref() {
            Some(PLAY_STOPPED) => Some(true),
            Some(PLAY_ENDED) => Some(false),
            _ => None,
        };
        Play {
            rolls: row.rolls,
            stopped,
            unknown_end: row.ended.is_some() && stopped.is_none(),
        }
    }

    /// The stop it pays at once over (`Some(None)`: its end).
    fn pays_at(self) -> Option<Option<i64>> {
        match self.stopped {
            Some(true) => Some(Some(self.rolls)),
            Some(false) => Some(None),
            None => None,
        }
    }
}

/// One block's rows.
#[derive(Default)]
struct BlockRows {
    /// Sale rows per unit (saturating).
    sales: Vec<u8>,
    sold: u64,
    plays: HashMap<u32, Play>,
    ended: u64,
    /// Payment rows per unit, in the order read.
    paid: HashMap<u32, Vec<Paid>>,
    paid_cents: i128,
    /// Units whose sale was voided.
    voided: std::collections::BTreeSet<u32>,
}

/// What was read of the emission, by block.
struct Read {
    /// Block number → position in `blocks`, with its unit count.
    by_number: HashMap<u32, (usize, u32)>,
    blocks: Vec<BlockRows>,
    /// Rows read: sales, plays, payments, voids.
    rows: [u64; 4],
    stray: Problems,
    sold_twice: Problems,
    played_twice: Problems,
    paid_twice: Problems,
}

impl Read {
    fn new(blocks: &[BlockAudit]) -> Read {
        Read {
            by_number: blocks
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let units = u32::try_from(b.evidence.units).unwrap_or(u32::MAX);
                    (b.evidence.block, (i, units))
                })
                .collect(),
            blocks: blocks
                .iter()
                .map(|b| BlockRows {
                    sales: vec![0; usize::try_from(b.evidence.units).unwrap_or(0)],
                    ..BlockRows::default()
                })
                .collect(),
            rows: [0; 4],
            stray: Problems::default(),
            sold_twice: Problems::default(),
            played_twice: Problems::default(),
            paid_twice: Problems::default(),
        }
    }

    /// The block of `at`, if it is a unit of an audited block; else the
    /// row is a stray one.
    fn block<'a>(
        by_number: &HashMap<u32, (usize, u32)>,
        blocks: &'a mut [BlockRows],
        stray: &mut Problems,
        at: At,
        kind: &str,
    ) -> Option<&'a mut BlockRows> {
        match by_number.get(&at.block) {
            Some(&(i, units)) if at.index < units => Some(&mut blocks[i]),
            _ => {
                stray.add(|| format!("a {kind} of {}", place(at)));
                None
            }
        }
    }

    fn add(&mut self, row: EmissionRow) {
        let (at, kind, n) = match &row {
            EmissionRow::Sale(at) => (*at, "sale", 0),
            EmissionRow::Play(play) => (play.at, "play", 1),
            EmissionRow::Redemption(paid) => (paid.at, "payment", 2),
            EmissionRow::Void(at) => (*at, "void", 3),
        };
        self.rows[n] += 1;
        let Some(b) = Read::block(&self.by_number, &mut self.blocks, &mut self.stray, at, kind)
        else {
            return;
        };
        match row {
            EmissionRow::Sale(_) => {
                let count = &mut b.sales[at.index as usize];
                *count = count.saturating_add(1);
                match *count {
                    1 => b.sold += 1,
                    _ => self.sold_twice.add(|| format!("{} sold again", place(at))),
                }
            }
            EmissionRow::Play(play) => {
                if b.plays.contains_key(&at.index) {
                    self.played_twice
                        .add(|| format!("{} has a second play", place(at)));
                    return;
                }
                let play = Play::of(&play);
                b.ended += u64::from(play.stopped.is_some());
                b.plays.insert(at.index, play);
            }
            EmissionRow::Redemption(row) => {
                b.paid_cents += i128::from(row.prize_cents);
                let rows = b.paid.entry(at.index).or_default();
                if !rows.is_empty() {
                    self.paid_twice.add(|| {
                        format!(
                            "{} paid again ({} € after {} €)",
                            place(at),
                            cents(row.prize_cents),
                            cents(rows[0].prize_cents)
                        )
                    });
                }
                rows.push(Paid::of(row));
            }
            EmissionRow::Void(_) => {
                b.voided.insert(at.index);
            }
        }
    }
}

/// A unit's place in words.
fn place(at: At) -> String {
    format!("block {} unit {}", at.block, at.index)
}

/// An amount of cents as euros (a negative one as such).
fn cents(c: i64) -> String {
    match u64::try_from(c) {
        Ok(c) => Cents::from(c).to_string(),
        Err(_) => format!("-{}", Cents::from(c.unsigned_abs())),
    }
}

/// What the units of the blocks come to (merged over chunks and blocks).
#[derive(Default)]
struct Found {
    paid_unsold: Problems,
    played_unsold: Problems,
    plays: Problems,
    as_played: Problems,
    payments: Problems,
    voided: Problems,
    voids: Voids,
    unclaimed: u64,
    liability_cents: u64,
    over: Over,
}

impl Found {
    fn merge(&mut self, other: Found) {
        self.paid_unsold.merge(other.paid_unsold);
        self.played_unsold.merge(other.played_unsold);
        self.plays.merge(other.plays);
        self.as_played.merge(other.as_played);
        self.payments.merge(other.payments);
        self.voided.merge(other.voided);
        self.voids.merge(&other.voids);
        self.unclaimed += other.unclaimed;
        self.liability_cents += other.liability_cents;
        self.over.merge(other.over);
    }
}

/// The voided sales of a game revealed whole: how many, how many of them
/// won, and the winners their blocks' rates expect.
#[derive(Default)]
struct Voids {
    units: u64,
    winners: u64,
    expected: f64,
}

/// Below this, `voids-not-selective` fails: voided sales hold so few
/// winners that chance explains it once in a thousand emissions.
const SELECTIVE_VOIDS: f64 = 1e-3;

impl Voids {
    fn add(&mut self, won: bool, rate: f64) {
        self.units += 1;
        self.winners += u64::from(won);
        self.expected += rate;
    }

    fn merge(&mut self, other: &Voids) {
        self.units += other.units;
        self.winners += other.winners;
        self.expected += other.expected;
    }

    /// The check: P(at most this many winners | the blocks' rate), and
    /// whether it holds.
    fn check(&self) -> (bool, String) {
        if self.units == 0 {
            return (true, "no sale voided".into());
        }
        let rate = self.expected / self.units as f64;
        let p = crate::stats::binomial_at_most(self.winners, self.units, rate);
        (
            p >= SELECTIVE_VOIDS,
            format!(
                "{} of {} voided sale(s) won (expected {:.1} at the blocks' rate {:.4}); P(at most {}) = {p:.2e}{}",
                self.winners,
                self.units,
                self.expected,
                rate,
                self.winners,
                if p >= SELECTIVE_VOIDS {
                    ""
                } else {
                    ": far fewer winners than chance gives; voids look chosen among losers (a platform that saw the outcomes before asking to void)"
                }
            ),
        )
    }
}

/// The units sold whose play is over, for the returns.
#[derive(Default)]
struct Over {
    units: u64,
    /// Their stakes, per price (cents → cents staked).
    stakes: BTreeMap<u32, u64>,
    /// What was paid for them.
    paid_cents: i128,
    /// Their prizes as recorded.
    prize_cents: u128,
    /// Σ and Σ² of prize / price, each unit.
    sum: f64,
    sum_sq: f64,
    /// One of them stopped.
    stopped: bool,
}

impl Over {
    fn add(&mut self, price: u32, paid: i128, prize: u32, stopped: bool) {
        self.units += 1;
        *self.stakes.entry(price).or_default() += u64::from(price);
        self.paid_cents += paid;
        self.prize_cents += u128::from(prize);
        let r = f64::from(prize) / f64::from(price.max(1));
        self.sum += r;
        self.sum_sq += r * r;
        self.stopped |= stopped;
    }

    fn merge(&mut self, other: Over) {
        self.units += other.units;
        for (price, stakes) in other.stakes {
            *self.stakes.entry(price).or_default() += stakes;
        }
        self.paid_cents += other.paid_cents;
        self.prize_cents += other.prize_cents;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.stopped |= other.stopped;
    }

    /// Realised and expected returns, and the 99 % band (see [`reconcile`]).
    fn returns(&self, game: Game) -> (Option<f64>, Option<f64>, Option<[f64; 2]>) {
        let stakes: u64 = self.stakes.values().sum();
        if self.units == 0 || stakes == 0 {
            return (None, None, None);
        }
        let realised = self.paid_cents as f64 / stakes as f64;
        let as_recorded = self.prize_cents as f64 / stakes as f64;
        let expected = match (game.prize_model(), self.stopped) {
            (PrizeModel::Drawn, false) => self
                .stakes
                .iter()
                .map(|(&price, &s)| {
                    let binding = game.return_figures(price).into_iter().find(|f| f.binding);
                    binding.map(|f| f.rate.to_f64() * s as f64)
                })
                .sum::<Option<f64>>()
                .map_or(as_recorded, |weighted| weighted / stakes as f64),
            _ => as_recorded,
        };
        let n = self.units as f64;
        let band = (self.units >= 2).then(|| {
            let mean = self.sum / n;
            let var = ((self.sum_sq - n * mean * mean) / (n - 1.0)).max(0.0);
            let half = Z_99 * (var / n).sqrt();
            // A return is never below 0.
            [(expected - half).max(0.0), expected + half]
        });
        (Some(realised), Some(expected), band)
    }
}

/// The block of `audit` opened again for its records (a game played step
/// by step), refused unless it is the block audited: the same game,
/// emission, block and sealed Merkle root. Its seal is checked with the
/// signer its header names: the audit checked that signer is the
/// issuer's for this Merkle root, and every record read is checked
/// against that root.
fn open_block(
    game: Game,
    audit: &BlockAudit,
    keys: &KeyAccess<'_>,
) -> Result<AuthenticBlock, Error> {
    let path = Path::new(&audit.evidence.path);
    let signer = BlockFile::open(path)?.header.signer;
    let changed = |reason: String| Error::BlockRejected {
        path: path.to_path_buf(),
        reason,
    };
    let signer = VerifyingKey::from_bytes(&signer)
        .map_err(|e| changed(format!("its header's signer is not a key ({e})")))?;
    let block = AuthenticBlock::open(path, &signer, *keys, "audit")?;
    let h = &block.file.header;
    let e = &audit.evidence;
    if h.game != game
        || h.emission != e.emission
        || h.block != e.block
        || hex::encode(h.merkle_root) != e.merkle_root
    {
        return Err(changed(
            "it is no longer the block audited (another Merkle root): audit it again".into(),
        ));
    }
    Ok(block)
}

/// A block's units as the ledger has them: its figures and findings. For
/// a game played step by step, `block` is the block reopened for the
/// records of every unit sold, played or paid, each chunk read once.
fn tally(
    game: Game,
    audit: &BlockAudit,
    rows: &BlockRows,
    block: Option<&AuthenticBlock>,
) -> Result<Found, Error> {
    let mut units: Vec<u32> = rows
        .sales
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(i, _)| i as u32)
        .chain(rows.plays.keys().copied())
        .chain(rows.paid.keys().copied())
        .chain(rows.voided.iter().copied())
        .collect();
    units.sort_unstable();
    units.dedup();
    let winners = audit.outcomes.iter().filter(|o| o.prize_cents > 0).count();
    let unit = Unit {
        game,
        audit,
        rows,
        win_rate: winners as f64 / audit.outcomes.len().max(1) as f64,
        table: match block {
            Some(b) => b.regulation.clone(),
            None => game.lot_table(audit.evidence.price_cents)?,
        },
    };
    let Some(block) = block else {
        let mut found = Found::default();
        for &index in &units {
            unit.add(index, None, &mut found);
        }
        return Ok(found);
    };
    let h = &block.file.header;
    let per_chunk = h.chunk_units.max(1);
    let size = usize::from(h.record_size);
    let mut chunks: Vec<(u32, &[u32])> = Vec::new();
    for group in units.chunk_by(|a, b| a / per_chunk == b / per_chunk) {
        chunks.push((group[0] / per_chunk, group));
    }
    let found = chunks
        .par_iter()
        .map(|&(chunk, indices)| {
            let records = block.chunk_records(chunk)?.records;
            let mut found = Found::default();
            for &index in indices {
                let at = (index - chunk * per_chunk) as usize * size;
                let record = records
                    .get(at..at + size)
                    .ok_or_else(|| Error::BlockRejected {
                        path: block.file.path().to_path_buf(),
                        reason: format!("chunk {chunk} has no record {index}"),
                    })?;
                unit.add(index, Some(record), &mut found);
            }
            Ok(found)
        })
        .collect::<Result<Vec<Found>, Error>>()?;
    Ok(found.into_iter().fold(Found::default(), |mut all, f| {
        all.merge(f);
        all
    }))
}

/// What a block's units are checked against.
struct Unit<'a> {
    game: Game,
    audit: &'a BlockAudit,
    rows: &'a BlockRows,
    table: LotTable,
    /// The share of the block's units that win something.
    win_rate: f64,
}

/// A unit played step by step, decoded from its sealed record.
struct Replay {
    digest: [u8; 32],
    unit: Result<Box<dyn GameUnit>, String>,
}

impl Replay {
    /// What the unit pays stopped after `stop` steps (`None`: at its end).
    fn prize(&self, game: Game, table: &LotTable, stop: Option<i64>) -> Result<(u8, u32), String> {
        let unit = self.unit.as_ref().map_err(Clone::clone)?;
        let stop = stop
            .map(|s| u32::try_from(s).map_err(|_| format!("a stop of {s} steps")))
            .transpose()?;
        let played = unit.outcome(stop).map_err(|r| match r {
            crate::game::StopRefusal::Refused(m) | crate::game::StopRefusal::Invalid(m) => m,
        })?;
        let prize = game
            .prize_cents(&played, table)
            .ok_or_else(|| format!("its lot {} is not in the block's table", played.lot))?;
        Ok((played.lot, prize))
    }

    /// The steps to its end.
    fn end_step(&self) -> Option<u32> {
        let unit = self.unit.as_ref().ok()?;
        Some(unit.tape()?.end_step())
    }

    /// The most it may still pay after `rolls` steps revealed: the prize at
    /// its end, or at any stop still allowed.
    fn most(&self, game: Game, table: &LotTable, rolls: i64, fallback: u32) -> u32 {
        let end = self.prize(game, table, None).map_or(fallback, |(_, p)| p);
        let last = self.end_step().map_or(0, i64::from);
        (rolls.max(0)..last)
            .filter_map(|s| self.prize(game, table, Some(s)).ok())
            .map(|(_, p)| p)
            .fold(end, u32::max)
    }
}

impl Unit<'_> {
    /// The audited outcome of unit `index`.
    fn outcome(&self, index: u32) -> Option<&UnitOutcome> {
        let outcomes = &self.audit.outcomes;
        match outcomes.get(index as usize) {
            Some(o) if o.index == index => Some(o),
            _ => outcomes
                .binary_search_by_key(&index, |o| o.index)
                .ok()
                .map(|i| &outcomes[i]),
        }
    }

    /// Checks unit `index` (sold, played or paid) and adds what it comes to
    /// to `found`; `record` is its sealed record (a game played step by
    /// step).
    fn add(&self, index: u32, record: Option<&[u8]>, found: &mut Found) {
        let e = &self.audit.evidence;
        let at = At {
            block: e.block,
            index,
        };
        let Some(outcome) = self.outcome(index) else {
            found
                .payments
                .add(|| format!("{}: not among the audited outcomes", place(at)));
            return;
        };
        let sold = self.rows.sales.get(index as usize).is_some_and(|&n| n > 0);
        let play = self.rows.plays.get(&index).copied();
        let paid: &[Paid] = self.rows.paid.get(&index).map_or(&[], Vec::as_slice);
        let replay = record.map(|r| Replay {
            digest: Sha256::digest(r).into(),
            unit: self
                .game
                .decode(r.get(PREFIX_SIZE..).unwrap_or_default())
                .map_err(|e| e.0),
        });
        if !paid.is_empty() && !sold {
            found
                .paid_unsold
                .add(|| format!("{} paid, never sold", place(at)));
        }
        let voided = self.rows.voided.contains(&index);
        if voided {
            found.voids.add(outcome.prize_cents > 0, self.win_rate);
        }
        if voided && (!paid.is_empty() || play.is_some() || !sold) {
            found.voided.add(|| {
                format!(
                    "{} voided, yet {}",
                    place(at),
                    match (paid.is_empty(), play.is_some()) {
                        (false, _) => "paid",
                        (true, true) => "played",
                        (true, false) => "never sold",
                    }
                )
            });
        }
        if play.is_some() && !sold {
            found
                .played_unsold
                .add(|| format!("{} played, never sold", place(at)));
        }
        if let (Some(play), Some(replay)) = (play, &replay) {
            if let Err(why) = self.play_allowed(play, replay) {
                found.plays.add(|| format!("{}: {why}", place(at)));
            }
        }
        for row in paid {
            if let Err(why) = self.payment(at, outcome, row, replay.as_ref()) {
                found.payments.add(|| format!("{}: {why}", place(at)));
            }
            if replay.is_some() {
                let recorded = play.and_then(Play::pays_at);
                if recorded != Some(row.stop) {
                    found.as_played.add(|| {
                        let paid_at = stop_words(row.stop);
                        match recorded {
                            None => {
                                format!("{} paid ({paid_at}) while its play is not over", place(at))
                            }
                            Some(r) => format!(
                                "{} paid {paid_at}, its play recorded {}",
                                place(at),
                                stop_words(r)
                            ),
                        }
                    });
                }
            }
        }
        if !sold {
            return;
        }
        let price = e.price_cents;
        // What the unit pays as its play was recorded, once over.
        let recorded_at = match (&replay, play.and_then(Play::pays_at), paid.first()) {
            (None, _, Some(_)) => Some(None),
            (None, _, None) => None,
            (Some(_), Some(stop), _) => Some(stop),
            (Some(_), None, Some(row)) => Some(row.stop),
            (Some(_), None, None) => None,
        };
        let prize_as_recorded = |stop: Option<i64>| match (&replay, stop) {
            (Some(r), stop) => r
                .prize(self.game, &self.table, stop)
                .map_or(outcome.prize_cents, |(_, p)| p),
            (None, _) => outcome.prize_cents,
        };
        if let Some(stop) = recorded_at {
            let paid_cents = paid.iter().map(|r| i128::from(r.prize_cents)).sum();
            found
                .over
                .add(price, paid_cents, prize_as_recorded(stop), stop.is_some());
        }
        // A voided sale owes nothing: it was refunded.
        if paid.is_empty() && !voided {
            let owed = match (&replay, recorded_at) {
                (Some(_), Some(stop)) => prize_as_recorded(stop),
                (Some(r), None) => r.most(
                    self.game,
                    &self.table,
                    play.map_or(0, |p| p.rolls),
                    outcome.prize_cents,
                ),
                (None, _) => outcome.prize_cents,
            };
            if owed > 0 {
                found.unclaimed += 1;
                found.liability_cents += u64::from(owed);
            }
        }
    }

    /// Whether the unit allows its play as recorded.
    fn play_allowed(&self, play: Play, replay: &Replay) -> Result<(), String> {
        if play.unknown_end {
            return Err("its play's end is neither a stop nor the end".into());
        }
        let end = replay
            .end_step()
            .ok_or_else(|| "its sealed record has no steps to replay".to_string())?;
        let rolls = play.rolls;
        match play.stopped {
            Some(false) if rolls != i64::from(end) => Err(format!(
                "its play ended by itself after {rolls} steps, its unit ends after {end}"
            )),
            Some(true) => self
                .replay_stop(replay, rolls)
                .map_err(|why| format!("its play stopped after {rolls} steps: {why}")),
            None if rolls < 0 || rolls >= i64::from(end) => Err(format!(
                "its play goes on after {rolls} steps, its unit ends after {end}"
            )),
            _ => Ok(()),
        }
    }

    fn replay_stop(&self, replay: &Replay, rolls: i64) -> Result<(), String> {
        replay.prize(self.game, &self.table, Some(rolls)).map(drop)
    }

    /// Whether payment `row` of the unit at `at` is what it gives.
    fn payment(
        &self,
        at: At,
        outcome: &UnitOutcome,
        row: &Paid,
        replay: Option<&Replay>,
    ) -> Result<(), String> {
        let e = &self.audit.evidence;
        let id = UnitId {
            game: self.game,
            emission: e.emission,
            block: at.block,
            index: at.index,
            check_code: outcome.check_code,
        };
        if row.unit_id.parse::<UnitId>().ok() != Some(id) {
            return Err(format!("paid as {:?}, the unit is {id}", row.unit_id));
        }
        if row.price_cents != i64::from(e.price_cents) {
            return Err(format!(
                "paid at a price of {} €, the block's is {} €",
                cents(row.price_cents),
                Cents::from(e.price_cents)
            ));
        }
        let (lot, prize) = match replay {
            None => {
                if row.stop.is_some() {
                    return Err("paid with a stop, its game has none".into());
                }
                (outcome.lot, outcome.prize_cents)
            }
            Some(replay) => {
                let sealed = hex::encode(replay.digest);
                if row.record != Some(replay.digest) || row.record_sha256 != sealed {
                    return Err(format!(
                        "paid for a record (SHA-256 {}, recorded as {}) that is not the sealed block's ({sealed})",
                        row.record.map_or("none".into(), hex::encode),
                        row.record_sha256
                    ));
                }
                if row.rules_version != Some(i64::from(self.game.rules_version())) {
                    return Err(format!(
                        "played under rules version {:?}, the game's is {}",
                        row.rules_version,
                        self.game.rules_version()
                    ));
                }
                replay
                    .prize(self.game, &self.table, row.stop)
                    .map_err(|why| {
                        format!("its record does not replay {}: {why}", stop_words(row.stop))
                    })?
            }
        };
        if row.lot != i64::from(lot) || row.prize_cents != i64::from(prize) {
            return Err(format!(
                "paid lot {} and {} €, its unit gives lot {lot} and {} € {}",
                row.lot,
                cents(row.prize_cents),
                Cents::from(prize),
                stop_words(row.stop)
            ));
        }
        Ok(())
    }
}

/// A stop in words.
fn stop_words(stop: Option<i64>) -> String {
    match stop {
        Some(s) => format!("stopped after {s} steps"),
        None => "at its end".into(),
    }
}

/// Whether the ledger read is the one the emission is bound to.
fn bound_check(target: &LedgerTarget, blocks: &[BlockAudit], exists: bool) -> Result<Check, Error> {
    let dir = blocks
        .first()
        .and_then(|b| Path::new(&b.evidence.path).parent());
    let bound = match dir {
        Some(dir) => binding::bound_ledger(dir)?,
        None => None,
    };
    let identity = match exists {
        true => target.identity(false)?,
        false => None,
    };
    let name = target.describe();
    let (ok, detail) = match (&bound, &identity) {
        (None, None) => (
            true,
            format!("the emission is bound to no ledger and there is none at {name}: nothing of it was recorded"),
        ),
        (None, Some(id)) => (
            true,
            format!("the emission is bound to no ledger yet; read {name} (id {id})"),
        ),
        (Some(b), Some(id)) if *id == b.ledger_id => (
            true,
            format!("the emission is bound to this ledger, {name} (id {id})"),
        ),
        (Some(b), id) => (
            false,
            format!(
                "the emission is bound to {} (id {}), the ledger read is {name} (id {}): pass --ledger",
                b.ledger,
                b.ledger_id,
                id.as_deref().unwrap_or("none: there is no ledger there")
            ),
        ),
    };
    Ok(Check::new(
        "ledger/bound".into(),
        "ledger",
        "the ledger read is the one the emission was sold through",
        ok,
        detail,
    ))
}

/// The ledger's own checks: its summary reconciles, its integrity check
/// passes, its log verifies under its signed heads.
fn ledger_checks(
    target: &LedgerTarget,
    signers: &[VerifyingKey],
    witnesses: Option<&Quorum>,
) -> Result<Vec<Check>, Error> {
    let summary = target.summary()?;
    let unreconciled: Vec<String> = summary
        .blocks
        .iter()
        .filter(|b| !b.reconciled)
        .map(|b| format!("{} emission {} block {}", b.game, b.emission, b.block))
        .collect();
    let mut checks = vec![
        Check::new(
            "ledger/summary-reconciles".into(),
            "ledger",
            "the ledger's summary reconciles (running totals, every row replayed)",
            summary.reconciled,
            match unreconciled.is_empty() {
                true => format!(
                    "{} block(s), {} unit(s) redeemed, {} € paid in the whole ledger; digest {}",
                    summary.blocks.len(),
                    summary.units,
                    summary.paid,
                    summary.digest
                ),
                false => format!("does not reconcile: {}", unreconciled.join(", ")),
            },
        ),
        Check::new(
            "ledger/integrity".into(),
            "ledger",
            "the ledger database's integrity check passes",
            summary.integrity_ok,
            match summary.integrity_ok {
                true => "the database's own check passes".into(),
                false => "the database's own check fails (run `issuer ledger`)".into(),
            },
        ),
    ];
    let report = target.with_log(|source| log::verify(source, signers, None))?;
    checks.push(match report {
        None => Check::new(
            "ledger/log-verifies".into(),
            "ledger",
            "the log verifies under its signed heads",
            true,
            format!("no ledger at {}: no log", target.describe()),
        ),
        Some(r) => {
            let mut detail = format!(
                "{} entries, root {}, {} signed head(s) checked with {} key(s), {} pending",
                r.size,
                r.root,
                r.heads_checked,
                signers.len(),
                r.pending
            );
            for f in r.findings.iter().take(EXAMPLES) {
                detail.push_str("; ");
                if let Some(e) = f.entry {
                    detail.push_str(&format!("entry {e}: "));
                }
                detail.push_str(&f.problem);
            }
            if r.findings.len() > EXAMPLES {
                detail.push_str(&format!("; and {} more", r.findings.len() - EXAMPLES));
            }
            Check::new(
                "ledger/log-verifies".into(),
                "ledger",
                "the log verifies under its signed heads",
                r.ok,
                detail,
            )
        }
    });
    if let Some(quorum) = witnesses {
        let check = target
            .with_log(|source| witnessed::check(source, quorum))?
            .unwrap_or(WitnessCheck {
                quorum: format!("{} of {}", quorum.k, quorum.witnesses.len()),
                witnessed_size: None,
                latest_size: None,
                cosigned_by: Vec::new(),
                bad: Vec::new(),
                ok: false,
            });
        let mut detail = match check.witnessed_size {
            Some(size) => format!(
                "the latest witnessed head, size {size} of {}, is cosigned by {} ({} needed)",
                check.latest_size.unwrap_or(0),
                match check.cosigned_by.is_empty() {
                    true => "none of the witnesses given".to_string(),
                    false => check.cosigned_by.join(", "),
                },
                check.quorum
            ),
            None => format!(
                "no head is cosigned by its witnesses ({} needed)",
                check.quorum
            ),
        };
        for b in &check.bad {
            detail.push_str(&format!("; bad cosignature {b}"));
        }
        checks.push(Check::new(
            "ledger/witnessed".into(),
            "ledger",
            "the log's latest witnessed head carries the cosignatures of its witnesses' quorum, none forged",
            check.ok,
            detail,
        ));
    }
    Ok(checks)
}
