//! `issuer redeem` and `issuer ledger`.

mod batch;
mod log;

use std::path::PathBuf;

use super::{print_json, IdempotencyArg, KeyArgs, LedgerArg};
use ticket_issuer::error::Error;
use ticket_issuer::game::Game;
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::record::PREFIX_SIZE;
use ticket_issuer::redeem::Redemption;
use ticket_issuer::redeemer::{Check, UnitInPlay};
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

/// Arguments of `redeem`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The unit ID, e.g. IAT-7-1-123456-7KD2M9QX.
    #[arg(required_unless_present = "batch")]
    pub id: Option<String>,
    /// Redeem every ID of FILE ("-": standard input), one a line, each
    /// optionally followed by its stop; prints one JSON result a line.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["id", "check", "stopped_after_rolls"])]
    pub batch: Option<PathBuf>,
    /// Print outcome and proof, record nothing.
    #[arg(long)]
    pub check: bool,
    /// Trésors Ensablés, with --check: replay the unit as if the player
    /// pressed "Arrêter" after this many rolls (an auditor's replay; a
    /// redemption pays the play the ledger recorded).
    #[arg(long, value_name = "N", requires = "check")]
    pub stopped_after_rolls: Option<u32>,
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

/// `ledger` subcommands (docs/REDEMPTION.md §Tamper-evident log).
#[derive(clap::Subcommand, Debug)]
pub enum LedgerAction {
    /// Create or upgrade a PostgreSQL ledger's schema (needs --ledger).
    Migrate,
    /// Print the latest signed head (a C2SP tlog-checkpoint, with its
    /// witnesses' cosignatures once collected).
    Head {
        /// The latest head witnesses cosigned instead (docs/REDEMPTION.md
        /// §Cosigned checkpoints).
        #[arg(long)]
        witnessed: bool,
    },
    /// Check every entry against its leaf hash and every signed head.
    Verify {
        /// A head kept elsewhere (a checkpoint file) the log must contain.
        #[arg(long, value_name = "FILE")]
        head: Option<PathBuf>,
        /// The ledger's public key (PEM); default: the store's. A shared
        /// PostgreSQL ledger: repeat it for each node's key.
        #[arg(long, value_name = "FILE")]
        ledger_key: Vec<PathBuf>,
        /// A witness's verifier key (C2SP vkey): the latest witnessed head
        /// must carry the cosignatures of --witness-quorum of them, each
        /// verifying. Repeat for each witness.
        #[arg(long, value_name = "VKEY")]
        witness_key: Vec<String>,
        /// With --witness-key: cosignatures needed (default: every
        /// witness's).
        #[arg(long, value_name = "K", requires = "witness_key")]
        witness_quorum: Option<usize>,
    },
    /// Write the log as C2SP tlog-tiles static files (checkpoint, tiles,
    /// entry bundles) for the latest head, for any web server to publish.
    Tiles {
        /// The folder (made if needed; rerun to add what the log gained).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The log as of its latest witnessed head (what a node that fails
        /// closed publishes).
        #[arg(long)]
        witnessed: bool,
    },
    /// Put back the entries a ledger restored from an older copy lacks,
    /// from the published log (docs/DEPLOY.md §Restore): a folder `ledger
    /// tiles --out` wrote, or a node's or mirror's log URL
    /// (`https://host/v1/log`). Each entry is checked against the
    /// checkpoint, the head this store remembers and the ledger's own.
    Recover {
        /// The published log: a folder, or an http(s) URL of its prefix.
        #[arg(long, value_name = "DIR|URL")]
        from: String,
        /// The platform (token name) whose lane the sales put back are
        /// in; the log does not name it (default: none, only the operator
        /// reaches them).
        #[arg(long, value_name = "NAME")]
        lane: Option<String>,
    },
    /// Prove a redemption is in the log, or that the log only grew.
    Prove {
        /// The unit whose redemption to prove.
        #[arg(long, conflicts_with_all = ["from", "to"], required_unless_present = "from")]
        unit: Option<String>,
        /// The older log size.
        #[arg(long)]
        from: Option<u64>,
        /// The newer log size (default: the latest head's).
        #[arg(long, requires = "from")]
        to: Option<u64>,
    },
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
        .and_then(|unit| unit.picture(r.stopped_after_rolls).ok())
        .unwrap_or_default()
}

/// Runs `redeem`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let key = args.idempotency.key.as_deref();
    if let Some(batch) = &args.batch {
        let redeemer = super::redeemer(store, &args.keys, &args.ledger)?;
        return batch::run(&redeemer, batch, key);
    }
    // A malformed ID is named as such before any key file is read.
    let id: UnitId = args.id.as_deref().unwrap_or_default().parse()?;
    let redeemer = super::redeemer(store, &args.keys, &args.ledger)?;
    if args.check {
        if key.is_some() {
            return Err(Error::BadIdempotencyKey {
                key: key.unwrap_or_default().into(),
                reason: "a check records nothing; a key goes with a redemption".into(),
            });
        }
        let check = redeemer.check(&id, args.stopped_after_rolls)?;
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
    let mut r = redeemer.redeem_keyed(&id, args.stopped_after_rolls, key)?;
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
        outln!(
            "  total: {} unit(s), {} € paid",
            summary.units,
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
