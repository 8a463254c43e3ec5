//! `issuer remaining`: prizes remaining in the units not yet sold, per lot
//! or prize band, per emission and block (docs/REDEMPTION.md §Prizes
//! remaining).

use super::args::{parse_game, redeemer, GameSlug, KeyArgs, LedgerArg};
use super::json::print_json;
use ticket_issuer::error::Error;
use ticket_issuer::redeemer::PrizeLine;
use ticket_issuer::status::Standing;
use ticket_issuer::store::Store;
use ticket_issuer::words::plural;

/// Arguments of `remaining`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game.
    #[arg(long, value_parser = GameSlug)]
    pub game: String,
    /// Unit price in euros (needed where the game has several).
    #[arg(long)]
    pub price: Option<String>,
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

/// Runs `remaining`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let game = parse_game(&args.game)?;
    let price_cents = game.price_cents(args.price.as_deref())?;
    let redeemer = redeemer(store, &args.keys, &args.ledger)?;
    let r = redeemer.remaining(game, price_cents)?;
    if args.json {
        print_json("remaining", &r);
        return Ok(0);
    }
    let as_of = r.as_of.map_or_else(
        || "the ledger changed while read".into(),
        |n| format!("log size {n}"),
    );
    outln!(
        "{} at {} €: {} left to sell ({as_of})",
        r.game,
        r.price,
        plural(r.unsold, "unit")
    );
    print_lines("  ", &r.prizes);
    for e in &r.emissions {
        outln!(
            "  emission {}: {} left to sell",
            e.emission,
            plural(e.unsold, "unit")
        );
        for b in &e.blocks {
            let standing = match b.standing {
                Standing::OnSale => String::new(),
                Standing::Suspended => " (suspended)".into(),
                Standing::Withdrawn => {
                    format!(
                        " (withdrawn: {} never sold)",
                        plural(b.withdrawn, "unsold unit")
                    )
                }
            };
            outln!(
                "    block {}{standing}: {} of {} left",
                b.block,
                b.unsold,
                plural(b.units, "unit")
            );
            print_lines("      ", &b.prizes);
        }
    }
    Ok(0)
}

fn print_lines(indent: &str, lines: &[PrizeLine]) {
    for l in lines {
        let what = match &l.amount {
            Some(a) => format!("{} ({a} €)", l.prize),
            None => format!("{} €", l.prize),
        };
        outln!("{indent}{what}: {} of {} left", l.remaining, l.in_block);
    }
}
