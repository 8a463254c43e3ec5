//! The reconciliation of one emission ([`reconcile`]): its rows read once
//! per kind, each block tallied against its audit, and the checks that
//! come of it, with the ledger's own, in one [`LedgerEvidence`].

use crate::words::plural;
use ed25519_dalek::VerifyingKey;

use super::block::{open_block, tally};
use super::bound::bound_check;
use super::findings::{Found, Problems};
use super::ledger_checks::ledger_checks;
use super::rows::Read;
use crate::error::Error;
use crate::evidence::{BlockAudit, Check, LedgerBlock, LedgerEvidence};
use crate::game::Game;
use crate::ledger::target::LedgerTarget;
use crate::ledger::witnessed::Quorum;
use crate::records_key::KeyAccess;

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
///
/// [`AuthenticBlock`]: crate::block::authentic::AuthenticBlock
/// [`log::verify`]: crate::ledger::log::verify
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
                "{}, {}, {}, each of a unit of the {}",
                plural(read.rows[0], "sale"),
                plural(plays, "play"),
                plural(read.rows[2], "payment"),
                plural(blocks.len(), "block")
            ),
            false,
        ),
        (
            "sold-once",
            "no unit is sold twice",
            &read.sold_twice,
            format!("{} sold, each once", plural(sold, "unit")),
            false,
        ),
        (
            "paid-once",
            "no unit is paid twice",
            &read.paid_twice,
            format!("{} paid, each once", plural(paid, "unit")),
            false,
        ),
        (
            "played-once",
            "no unit has two plays",
            &read.played_twice,
            format!("{}, one per unit", plural(plays, "play")),
            true,
        ),
        (
            "paid-units-sold",
            "every unit paid was sold",
            &found.paid_unsold,
            format!("the {} paid were all sold", plural(paid, "unit")),
            false,
        ),
        (
            "played-units-sold",
            "every unit played was sold",
            &found.played_unsold,
            format!("the {} played were all sold", plural(plays, "unit")),
            true,
        ),
        (
            "plays-allowed",
            "every play recorded is one its unit allows",
            &found.plays,
            format!("{} replayed from the sealed records: each ended at its unit's end or at a stop its rules allow, or goes on before its end", plural(plays, "play")),
            true,
        ),
        (
            "paid-as-played",
            "every payment is of a play over, at its recorded stop or end",
            &found.as_played,
            format!("the {} follow their plays as recorded", plural(paid, "payment")),
            true,
        ),
        (
            "voided-never-paid",
            "every unit whose sale was voided was sold, and is never played or paid",
            &found.voided,
            format!("{} voided, none played or paid", plural(voids, "sale")),
            false,
        ),
        (
            "payments-match-units",
            "every payment is what its unit gives",
            &found.payments,
            format!("the {} carry their units' {paid_as}", plural(paid, "payment")),
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
    checks.extend(ledger_checks(target, (game, emission), signers, witnesses)?);
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
