//! `issuer sell`, `issuer mark-sold` and `issuer play`: hand out units
//! once, and play a unit of a game played step by step one step at a time
//! (docs/REDEMPTION.md §Sales and plays).

use std::path::PathBuf;

use super::args::{parse_game, redeemer, GameSlug, IdempotencyArg, KeyArgs, LedgerArg};
use super::emission::EmissionArg;
use super::json::print_json;
use ticket_issuer::error::Error;
use ticket_issuer::ledger::ops::PlayAction;
use ticket_issuer::redeemer::{Asker, PlayView};
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;
use ticket_issuer::words::plural;

/// Arguments of `sell`.
#[derive(clap::Args, Debug)]
pub struct SellArgs {
    /// The game.
    #[arg(long, value_parser = GameSlug)]
    pub game: String,
    /// Unit price in euros (needed where the game has several).
    #[arg(long)]
    pub price: Option<String>,
    /// Sell nothing: print the sale made under --idempotency-key, if any
    /// (exit 1, `no_sale_under_key`, when none was recorded).
    #[arg(long, requires = "key")]
    pub lookup: bool,
    /// Sell for this platform (its token's name): the sale and its key
    /// are in its lane, so it plays and redeems the unit over HTTP
    /// (default: the operator's alone; docs/SECURITY.md §Each platform in
    /// its own lane).
    #[arg(long, value_name = "NAME", value_parser = platform_name)]
    pub platform: Option<String>,
    /// Idempotency.
    #[command(flatten)]
    pub idempotency: IdempotencyArg,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
    /// With --json: the answer carries the sale's receipt, its log entry
    /// proved in the published checkpoint (docs/REDEMPTION.md §Receipts);
    /// `null` while the checkpoint does not cover it.
    #[arg(long, requires = "json")]
    pub receipt: bool,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// The ledger.
    #[command(flatten)]
    pub ledger: LedgerArg,
}

/// Arguments of `mark-sold`.
#[derive(clap::Args, Debug)]
pub struct MarkSoldArgs {
    /// The emission.
    #[command(flatten)]
    pub emission: EmissionArg,
    /// A file of unit IDs, one a line ("-": standard input).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub ids: Option<PathBuf>,
    /// Every unit of the emission.
    #[arg(long)]
    pub all: bool,
    /// The platform the units were handed out by: its token's name, so
    /// that it may play and redeem them over HTTP (default: the
    /// operator's alone; docs/SECURITY.md §Each platform in its own lane).
    #[arg(long, value_name = "NAME", value_parser = platform_name)]
    pub platform: Option<String>,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// The ledger.
    #[command(flatten)]
    pub ledger: LedgerArg,
}

/// Arguments of `play`.
#[derive(clap::Args, Debug)]
pub struct PlayArgs {
    /// The unit ID (a unit of a game played step by step, sold).
    pub id: String,
    /// Reveal step N (a roll of Trésors Ensablés; the next one; a step
    /// already revealed is shown again). `--roll`, today's name, is kept.
    #[arg(long, value_name = "N", conflicts_with = "stop", alias = "roll")]
    pub step: Option<u32>,
    /// Stop here and take the gains found (allowed once the game allows
    /// it: after the first chest of Trésors Ensablés).
    #[arg(long)]
    pub stop: bool,
    /// Play the unit in the terminal as its player would see it (L'île au
    /// trésor too): one throw or roll per key, « Arrêter » with `a`;
    /// records nothing (an operator's or support's replay: it needs the
    /// keys, like `show --reveal-all`). Needs a terminal.
    #[arg(long, conflicts_with_all = ["step", "stop", "json"])]
    pub terminal: bool,
    /// Idempotency.
    #[command(flatten)]
    pub idempotency: IdempotencyArg,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// The ledger.
    #[command(flatten)]
    pub ledger: LedgerArg,
}

/// A platform's name as `--platform` takes it.
fn platform_name(text: &str) -> Result<String, String> {
    ticket_issuer::ledger::ops::check_lane(text).map(|()| text.to_string())
}

/// Runs `sell`.
pub fn sell(store: &Store, args: &SellArgs) -> Result<i32, Error> {
    let game = parse_game(&args.game)?;
    let price_cents = game.price_cents(args.price.as_deref())?;
    let redeemer = redeemer(store, &args.keys, &args.ledger)?;
    let key = args.idempotency.key.as_deref();
    let window = redeemer.window(
        args.platform
            .clone()
            .map_or(Asker::Operator, Asker::OperatorToken),
    );
    let mut sale = match (args.lookup, key) {
        (true, Some(key)) => window.sale_under_key(key)?,
        _ => window.sell(game, price_cents, key)?,
    };
    if args.receipt {
        sale = redeemer.sale_with_receipt(sale)?;
    }
    if args.json {
        print_json("sale", &sale);
    } else {
        outln!(
            "sold {} ({} emission {} block {} index {}, {} €) at {}{}",
            sale.id,
            sale.game,
            sale.emission,
            sale.block,
            sale.index,
            sale.price,
            sale.sold_at,
            if sale.block_sold_out {
                "; the block is now sold out"
            } else {
                ""
            }
        );
        // What the player's screen needs is the JSON's (`--json`); a person
        // reading the terminal gets the next step instead (issue 39).
        if game.step_by_step() {
            outln!(
                "next: the player plays it step by step: issuer play {} (or --terminal); issuer show {} draws the board",
                sale.id,
                sale.id
            );
        } else {
            outln!(
                "next: the player sees the whole unit: issuer show {} draws it; issuer redeem {} pays it",
                sale.id,
                sale.id
            );
        }
    }
    Ok(0)
}

/// Runs `mark-sold`.
pub fn mark_sold(store: &Store, args: &MarkSoldArgs) -> Result<i32, Error> {
    let emission = args.emission.open(store)?;
    let redeemer = redeemer(store, &args.keys, &args.ledger)?;
    redeemer.require_closed(emission.game, args.emission.emission)?;
    let marked = match &args.ids {
        Some(path) => {
            let text = if path.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin()).map_err(|e| Error::io(path, e))?
            } else {
                std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?
            };
            let ids = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::parse)
                .collect::<Result<Vec<UnitId>, _>>()?;
            if let Some(other) = ids
                .iter()
                .find(|id| (id.game, id.emission) != (emission.game, args.emission.emission))
            {
                return Err(Error::BadFile {
                    path: path.clone(),
                    reason: format!(
                        "unit {other} is not of {} emission {}; list one emission's units",
                        emission.game.slug(),
                        args.emission.emission
                    ),
                });
            }
            redeemer.mark_sold(&ids, args.platform.as_deref())?
        }
        None => redeemer.mark_emission_sold(
            emission.game,
            args.emission.emission,
            args.platform.as_deref(),
        )?,
    };
    if args.json {
        print_json("mark_sold", &marked);
    } else {
        outln!(
            "{} emission {}: {} marked sold, {} sold already",
            emission.game.slug(),
            args.emission.emission,
            plural(marked.marked, "unit"),
            marked.already_sold
        );
    }
    Ok(0)
}

/// Runs `play`.
pub fn play(store: &Store, args: &PlayArgs) -> Result<i32, Error> {
    let id: UnitId = args.id.parse()?;
    let redeemer = redeemer(store, &args.keys, &args.ledger)?;
    if args.terminal {
        return super::terminal::play(&redeemer, &id);
    }
    let key = args.idempotency.key.as_deref();
    let view = match (args.step, args.stop) {
        (Some(n), _) => redeemer.play_keyed(&id, PlayAction::Step(n), key)?,
        (None, true) => redeemer.play_keyed(&id, PlayAction::Stop, key)?,
        (None, false) => redeemer.play_state(&id)?,
    };
    if args.json {
        print_json("play", &view);
        return Ok(0);
    }
    print_play(&view);
    Ok(0)
}

/// A play as text: the steps shown, then where it stands (the game's
/// lines).
pub fn print_play(view: &PlayView) {
    for line in &view.lines {
        outln!("{line}");
    }
}
