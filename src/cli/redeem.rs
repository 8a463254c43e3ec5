//! `issuer redeem` and `issuer ledger`.

use super::{print_json, KeyArgs, LoadedKeys};
use ticket_issuer::error::Error;
use ticket_issuer::ledger::{Ledger, Summary};
use ticket_issuer::redeem::{redeem, RedeemKeys, Redemption};
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

/// Arguments of `redeem`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The unit ID, e.g. IAT-7-1-123456-7KD2M9QX.
    pub id: String,
    /// Print outcome and proof, record nothing.
    #[arg(long)]
    pub check: bool,
    /// Trésors Ensablés: the player pressed "Arrêter" after this many rolls
    /// (none: the unit was played to the end).
    #[arg(long, value_name = "N")]
    pub stopped_after_rolls: Option<u32>,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
}

/// Arguments of `ledger`.
#[derive(clap::Args, Debug)]
pub struct LedgerArgs {
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// "wins lot singe-2: 10 €" or "loses".
pub fn outcome_words(r: &Redemption) -> String {
    match r.lot {
        Some(lot) => format!("outcome: wins lot {lot}, {} €", r.prize),
        None => "outcome: a losing unit (no lot, 0 €)".to_string(),
    }
}

/// Runs `redeem`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    // A malformed ID is named as such before any key file is read.
    let id: UnitId = args.id.parse()?;
    let keys = LoadedKeys::load(store, &args.keys)?;
    let keys = RedeemKeys {
        public_key: &keys.trusted,
        access: keys.access(),
    };
    let r = redeem(store, &keys, &id, args.stopped_after_rolls, args.check)?;
    if args.json {
        print_json(if args.check { "check" } else { "redemption" }, &r);
        return Ok(0);
    }
    println!(
        "unit {} ({} emission {} block {} index {})",
        r.id, r.game, r.emission, r.block, r.index
    );
    print!("{}", r.picture);
    println!("{}", outcome_words(&r));
    match (&r.redeemed_at, &r.already_redeemed_at) {
        (Some(at), _) if r.lot.is_some() => println!("redeemed at {at}: pay {} €", r.prize),
        (Some(at), _) => println!("redeemed at {at}: nothing to pay; the unit's play is closed"),
        (None, Some(at)) => println!("check only: already redeemed at {at}"),
        (None, None) => println!("check only: not redeemed yet; nothing recorded"),
    }
    println!(
        "proof: leaf {} of {} under root {} ({} hashes, RFC 9162 §2.1.3)",
        r.leaf_index,
        r.tree_size,
        r.merkle_root,
        r.inclusion_proof.len()
    );
    println!("record {}", r.record);
    for (level, hash) in r.inclusion_proof.iter().enumerate() {
        println!("  proof[{level:>2}] {hash}");
    }
    Ok(0)
}

/// Runs `ledger`.
pub fn ledger(store: &Store, args: &LedgerArgs) -> Result<i32, Error> {
    // Reading creates nothing: a mistyped --store is named, a store with
    // no ledger yet has redeemed nothing.
    if !store.root().is_dir() {
        return Err(Error::NoStore {
            store: store.root().to_path_buf(),
        });
    }
    let path = store.ledger_path();
    let summary = match Ledger::open_existing(&path)? {
        Some(ledger) => ledger.summary()?,
        None => Summary::empty(&path),
    };
    let healthy = summary.integrity_ok && summary.reconciled;
    if args.json {
        print_json("ledger", &summary);
    } else {
        println!("ledger {}", summary.path);
        for b in &summary.blocks {
            println!(
                "  {} emission {} block {}: {} unit(s) redeemed, {} winner(s), {} € paid{}",
                b.game,
                b.emission,
                b.block,
                b.units,
                b.winners,
                b.paid,
                if b.reconciled {
                    ""
                } else {
                    "  DOES NOT RECONCILE"
                }
            );
        }
        println!(
            "  total: {} unit(s), {} € paid",
            summary.units, summary.paid
        );
        println!("  digest {}", summary.digest);
        println!(
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
