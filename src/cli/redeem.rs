//! `issuer redeem` and `issuer ledger`.

mod batch;
mod log;

use std::path::PathBuf;

use self::log::LedgerAction;
use super::args::{redeemer, IdempotencyArg, KeyArgs, LedgerArg};
use super::json::print_json;
use ticket_issuer::error::Error;
use ticket_issuer::game::Game;
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::record::PREFIX_SIZE;
use ticket_issuer::redeem::Redemption;
use ticket_issuer::redeemer::{Check, UnitInPlay};
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;
use ticket_issuer::words::plural;

/// Arguments of `redeem`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The unit ID, e.g. IAT-7-1-123456-7KD2M9QX.
    #[arg(required_unless_present = "batch")]
    pub id: Option<String>,
    /// Redeem every ID of FILE ("-": standard input), one a line, each
    /// optionally followed by its stop; prints one JSON result a line.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["id", "check", "stopped_after_steps"])]
    pub batch: Option<PathBuf>,
    /// Print outcome and proof, record nothing.
    #[arg(long)]
    pub check: bool,
    /// With --check, a game played step by step: replay the unit as if
    /// the player stopped after this many steps (an auditor's replay; a
    /// redemption pays the play the ledger recorded).
    #[arg(
        long,
        value_name = "N",
        requires = "check",
        alias = "stopped-after-rolls"
    )]
    pub stopped_after_steps: Option<u32>,
    /// Idempotency (a batch: one key for the whole batch).
    #[command(flatten)]
    pub idempotency: IdempotencyArg,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
    /// With --json: the answer carries the redemption's receipt, its log
    /// entry proved in the published checkpoint (docs/REDEMPTION.md
    /// §Receipts); `null` while the checkpoint does not cover it.
    #[arg(long, requires = "json", conflicts_with_all = ["batch", "check"])]
    pub receipt: bool,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// The ledger.
    #[command(flatten)]
    pub ledger: LedgerArg,
}

/// Arguments of `ledger`.
#[derive(clap::Args, Debug)]
pub struct LedgerArgs {
    /// Print a JSON report on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// A shared PostgreSQL ledger (postgres://…); default: the store's.
    #[arg(
        long = "ledger",
        global = true,
        env = "ISSUER_LEDGER",
        value_name = "URL"
    )]
    pub url: Option<String>,
    /// What to do (none: the summary).
    #[command(subcommand)]
    pub action: Option<LedgerAction>,
}

/// "wins lot singe-2: 10 €" or "loses".
pub fn outcome_words(r: &Redemption) -> String {
    match r.lot {
        Some(lot) => format!("outcome: wins lot {lot}, {} €", r.prize),
        None => "outcome: a losing unit (no lot, 0 €)".to_string(),
    }
}

/// The unit's map as its player sees it, drawn from its record (the
/// picture is the edge's business, not the redemption's).
pub fn picture(r: &Redemption) -> String {
    let payload = hex::decode(&r.record).ok();
    Game::from_slug(&r.game)
        .zip(payload.as_deref().and_then(|p| p.get(PREFIX_SIZE..)))
        .and_then(|(game, payload)| game.decode(payload).ok())
        .and_then(|unit| unit.picture(r.stopped_after_steps).ok())
        .unwrap_or_default()
}

/// Runs `redeem`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let key = args.idempotency.key.as_deref();
    if let Some(batch) = &args.batch {
        let redeemer = redeemer(store, &args.keys, &args.ledger)?;
        return batch::run(&redeemer, batch, key);
    }
    // A malformed ID is named as such before any key file is read.
    let id: UnitId = args.id.as_deref().unwrap_or_default().parse()?;
    let redeemer = redeemer(store, &args.keys, &args.ledger)?;
    if args.check {
        if key.is_some() {
            return Err(Error::BadIdempotencyKey {
                key: key.unwrap_or_default().into(),
                reason: "a check records nothing; a key goes with a redemption".into(),
            });
        }
        let check = redeemer.check(&id, args.stopped_after_steps)?;
        if args.json {
            print_json("check", &check);
            return Ok(0);
        }
        match check {
            Check::Whole(r) => print_redemption(&r),
            Check::InPlay(u) => print_in_play(&u),
        }
        return Ok(0);
    }
    let mut r = redeemer.redeem_keyed(&id, args.stopped_after_steps, key)?;
    if args.receipt {
        r = redeemer.with_receipt(r)?;
    }
    if args.json {
        print_json("redemption", &r);
        return Ok(0);
    }
    print_redemption(&r);
    Ok(0)
}

/// A unit whose play is not over, as a check shows it: the rolls revealed.
pub fn print_in_play(u: &UnitInPlay) {
    outln!(
        "unit {} ({} emission {} block {} index {}): {}; its play is not over, so only the rolls revealed are shown",
        u.id,
        u.game,
        u.emission,
        u.block,
        u.index,
        if u.sold { "sold" } else { "not sold" }
    );
    super::sale::print_play(&u.play);
}

/// A redemption or a check of a unit shown whole.
fn print_redemption(r: &Redemption) {
    outln!(
        "unit {} ({} emission {} block {} index {})",
        r.id,
        r.game,
        r.emission,
        r.block,
        r.index
    );
    out!("{}", picture(r));
    outln!("{}", outcome_words(r));
    match (&r.redeemed_at, &r.already_redeemed_at) {
        (Some(at), _) if r.lot.is_some() => outln!("redeemed at {at}: pay {} €", r.prize),
        (Some(at), _) => outln!("redeemed at {at}: nothing to pay; the unit's play is closed"),
        (None, Some(at)) => outln!("check only: already redeemed at {at}"),
        (None, None) => outln!("check only: not redeemed yet; nothing recorded"),
    }
    outln!(
        "proof: leaf {} of {} under root {} ({} hashes, RFC 9162 §2.1.3)",
        r.leaf_index,
        r.tree_size,
        r.merkle_root,
        r.inclusion_proof.len()
    );
    outln!("record {}", r.record);
    for (level, hash) in r.inclusion_proof.iter().enumerate() {
        outln!("  proof[{level:>2}] {hash}");
    }
}

/// Runs `ledger`.
pub fn ledger(store: &Store, args: &LedgerArgs) -> Result<i32, Error> {
    // Reading creates nothing: a mistyped --store is named, a store with
    // no ledger yet has redeemed nothing.
    if args.url.is_none() && !store.root().is_dir() {
        return Err(Error::NoStore {
            store: store.root().to_path_buf(),
        });
    }
    let target = LedgerTarget::new(store, args.url.as_deref())?;
    if let Some(action) = &args.action {
        return log::run(store, &target, action, args.json);
    }
    let summary = target.summary()?;
    let healthy = summary.integrity_ok && summary.reconciled;
    if args.json {
        print_json("ledger", &summary);
    } else {
        outln!("ledger {}", summary.path);
        for b in &summary.blocks {
            outln!(
                "  {} emission {} block {}: {} redeemed, {}, {} € paid{}",
                b.game,
                b.emission,
                b.block,
                plural(b.units, "unit"),
                plural(b.winners, "winner"),
                b.paid,
                if b.reconciled {
                    ""
                } else {
                    "  DOES NOT RECONCILE"
                }
            );
        }
        outln!(
            "  total: {}, {} € paid",
            plural(summary.units, "unit"),
            summary.paid
        );
        outln!("  digest {}", summary.digest);
        outln!(
            "  integrity {}, totals {}",
            if summary.integrity_ok { "ok" } else { "FAILED" },
            if summary.reconciled {
                "reconciled"
            } else {
                "DO NOT RECONCILE"
            }
        );
    }
    Ok(if healthy { 0 } else { 1 })
}
