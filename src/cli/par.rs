//! `issuer par`: the PAR sheet of a game (docs/PAR.md).

use std::path::PathBuf;

use serde::Serialize;

use super::generate::parse_game;
use super::{print_json, KeyArgs, LoadedKeys};
use ticket_issuer::block::authentic::AuthenticBlock;
use ticket_issuer::error::Error;
use ticket_issuer::game::{cents_to_euros, parse_price, Game, PrizeModel};
use ticket_issuer::par::optimal::{optimal_sheet, OptimalSheet};
use ticket_issuer::par::sample::{block_figures, engine_sample, BlockFigures, Expected, Sampled};
use ticket_issuer::par::table::{self, TableSheet};
use ticket_issuer::par::tresors::{exact_sheet, ExactSheet};
use ticket_issuer::par::{default_seed, Estimate, Exact, TEXT_PLACES};
use ticket_issuer::store::Store;

/// Arguments of `par`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game (ile-au-tresor, tresors-ensables).
    #[arg(long)]
    pub game: String,
    /// Unit price in euros; default: every price of the game (with
    /// --block: the block's).
    #[arg(long)]
    pub price: Option<String>,
    /// Trésors Ensablés: boards drawn from the generator for optimal play.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(2..=10_000_000))]
    pub boards: u64,
    /// Trésors Ensablés: how many of those boards are also solved in exact
    /// arithmetic (about 0.3 s each).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(0..=100))]
    pub exact_boards: u64,
    /// Trésors Ensablés: units of the Monte Carlo through the game engine.
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(2..=100_000_000))]
    pub samples: u64,
    /// Seed of the Monte Carlo and of the boards, 64 hex digits (default:
    /// fixed ones, docs/PAR.md, so the sheet reproduces).
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<[u8; 32]>,
    /// Also check the units of this sealed block against the sheet (needs
    /// the records key: the store's secrets or --records-key).
    #[arg(long)]
    pub block: Option<PathBuf>,
    /// Keys (for --block).
    #[command(flatten)]
    pub keys: KeyArgs,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// A seed in hex.
fn parse_seed(text: &str) -> Result<[u8; 32], String> {
    let bytes = hex::decode(text).map_err(|e| format!("not hex ({e})"))?;
    bytes
        .try_into()
        .map_err(|b: Vec<u8>| format!("{} bytes; a seed is 32 (64 hex digits)", b.len()))
}

/// What `par --json` prints.
#[derive(Serialize)]
struct Report {
    game: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    prices: Option<Vec<TableSheet>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exact: Option<ExactSheet>,
    #[serde(skip_serializing_if = "Option::is_none")]
    optimal: Option<OptimalSheet>,
    #[serde(skip_serializing_if = "Option::is_none")]
    monte_carlo: Option<Sampled>,
    #[serde(skip_serializing_if = "Option::is_none")]
    block: Option<BlockFigures>,
}

/// Runs `par`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let game = parse_game(&args.game)?;
    let mut price = args
        .price
        .as_ref()
        .map(|p| parse_price(p).ok_or_else(|| game.unsupported_price(p.clone())))
        .transpose()?;
    if let Some(cents) = price {
        game.lot_table(cents)?;
    }
    let block = args
        .block
        .as_ref()
        .map(|path| open_block(store, args, path, game, &mut price))
        .transpose()?;
    let mut report = Report {
        game: game.slug(),
        prices: None,
        exact: None,
        optimal: None,
        monte_carlo: None,
        block: None,
    };
    match game.prize_model() {
        PrizeModel::FixedTable => {
            let prices = match price {
                Some(cents) => vec![cents],
                None => game.prices_cents().to_vec(),
            };
            let sheets = prices
                .iter()
                .map(|&cents| table::sheet(game, cents))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(block) = &block {
                report.block = Some(block_figures(block, Expected::Table(&sheets[0]))?);
            }
            report.prices = Some(sheets);
        }
        PrizeModel::Drawn => {
            let exact = exact_sheet();
            let never = exact.strategies[0].rtp.clone();
            let boards_seed = args.seed.unwrap_or_else(|| default_seed("boards"));
            let units_seed = args.seed.unwrap_or_else(|| default_seed("units"));
            report.optimal = Some(optimal_sheet(
                args.boards,
                &boards_seed,
                args.exact_boards,
                &never,
            ));
            report.monte_carlo = Some(engine_sample(args.samples, &units_seed, &exact));
            if let Some(block) = &block {
                report.block = Some(block_figures(block, Expected::Drawn(&exact))?);
            }
            report.exact = Some(exact);
        }
    }
    if args.json {
        print_json("par", &report);
    } else {
        print_report(&report);
    }
    Ok(0)
}

/// Opens `--block` and checks it is of the game (and price) asked for; a
/// price left out becomes the block's.
fn open_block(
    store: &Store,
    args: &Args,
    path: &std::path::Path,
    game: Game,
    price: &mut Option<u32>,
) -> Result<AuthenticBlock, Error> {
    let keys = LoadedKeys::load(store, &args.keys)?;
    let block = AuthenticBlock::open(path, &keys.trusted, keys.access(), "par")?;
    let h = &block.file.header;
    let mismatch = |reason: String| Error::ParBlockMismatch {
        path: path.to_path_buf(),
        reason,
    };
    if h.game != game {
        return Err(mismatch(format!(
            "the block is of {}, not {}",
            h.game.slug(),
            game.slug()
        )));
    }
    match *price {
        Some(cents) if cents != h.price_cents => {
            return Err(mismatch(format!(
                "the block's units cost {} €, not {} €",
                cents_to_euros(h.price_cents),
                cents_to_euros(cents)
            )))
        }
        _ => *price = Some(h.price_cents),
    }
    Ok(block)
}

/// An exact figure as text.
fn x(e: &Exact) -> String {
    e.decimal(TEXT_PLACES)
}

/// An estimate and its z-score as text.
fn z(e: &Estimate) -> String {
    format!("{:.6} ±{:.6} z {:+.2}", e.mean, e.standard_error, e.z)
}

fn print_report(r: &Report) {
    for s in r.prices.iter().flatten() {
        print_table_sheet(s);
    }
    if let Some(e) = &r.exact {
        print_exact(e);
    }
    if let Some(o) = &r.optimal {
        outln!(
            "\noptimal play (a player who sees the board, not the dice nor the chests): RTP {:.6} ± {:.6} over {} boards drawn from seed {}",
            o.rtp, o.standard_error, o.boards, o.seed
        );
        outln!(
            "  never-stop RTP by the same induction on those boards: {}",
            z(&o.never_stop)
        );
        for b in &o.exact_boards {
            outln!(
                "  board {} in exact arithmetic: {} (f64 differs by {:.1e})",
                b.board,
                x(&b.exact),
                b.difference
            );
        }
    }
    if let Some(m) = &r.monte_carlo {
        outln!(
            "\ncross-check: {} units drawn and played by the game engine (z = (estimate − exact) / standard error)",
            m.units
        );
        print_sampled(&m.strategies);
    }
    if let Some(b) = &r.block {
        outln!(
            "\ncross-check: block {} ({} units at {} €), played to the end",
            b.path,
            b.units,
            b.price
        );
        outln!("  RTP            {}", z(&b.rtp));
        outln!("  hit frequency  {}", z(&b.hit_frequency));
        if let Some(s) = &b.strategies {
            print_sampled(s);
        }
    }
}

fn print_table_sheet(s: &TableSheet) {
    outln!(
        "PAR sheet: {} at {} € (every block of {} units holds the lot table of article 3)",
        s.game,
        s.price,
        s.block_units
    );
    outln!("  return to player  {}  ({})", x(&s.rtp), s.rtp.fraction());
    outln!(
        "  hit frequency     {}  (1 in {}; {} winners a block)",
        x(&s.hit_frequency),
        s.one_in.decimal(2),
        s.winners
    );
    outln!(
        "  expected prize    {} € (block: {} € of prizes for {} € of sales)",
        x(&s.expected_prize),
        s.block_prizes,
        s.block_sales
    );
    outln!(
        "  largest lot       {} € = {}× the stake",
        s.max_lot,
        s.max_multiple.decimal(2)
    );
    let row = |cells: [&str; 7]| {
        outln!(
            "  {:<16} {:>9} {:>9} {:>10} {:>16} {:>12} {:>16}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6]
        )
    };
    row([
        "lot",
        "amount €",
        "× stake",
        "per block",
        "probability",
        "1 in",
        "RTP share",
    ]);
    for l in &s.lots {
        row([
            l.name,
            &l.amount,
            &l.multiple.decimal(2),
            &l.count.to_string(),
            &x(&l.probability),
            &l.one_in.decimal(2),
            &x(&l.rtp_share),
        ]);
    }
    outln!();
}

fn print_exact(e: &ExactSheet) {
    outln!(
        "PAR sheet: tresors-ensables at {} € (exact: rational arithmetic over the boards, dice and chests)",
        e.price
    );
    let row = |cells: [&str; 7]| {
        outln!(
            "  {:<12} {:>15} {:>15} {:>15} {:>15} {:>15} {:>15}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6]
        )
    };
    row([
        "strategy",
        "RTP",
        "hit frequency",
        "gold alive",
        "death",
        "stopped",
        "rolls",
    ]);
    for s in &e.strategies {
        row([
            &s.strategy,
            &x(&s.rtp),
            &x(&s.hit_frequency),
            &x(&s.gold_alive),
            &x(&s.death),
            &x(&s.stopped),
            &x(&s.expected_rolls),
        ]);
    }
    outln!("  chests opened when the unit ends, never stopping:");
    for (n, p) in e.strategies[0].chests_opened.iter().enumerate() {
        outln!("    {n:>2}: {}", x(p));
    }
    outln!(
        "  largest prize {} € = {}× the stake (3.3.4)",
        e.max_prize,
        e.max_multiple.decimal(2)
    );
    outln!("  gold chest tables admitted by the published odds (never-stop RTP):");
    for g in &e.gold_alternatives {
        outln!(
            "    {:<10} mean {} €  RTP {}  {}",
            g.name,
            g.gold_mean.decimal(5),
            x(&g.rtp_never_stop),
            if g.used {
                "(used by the game)".to_string()
            } else {
                format!("differs by {}", g.difference.decimal(TEXT_PLACES + 2))
            }
        );
    }
}

fn print_sampled(strategies: &[ticket_issuer::par::sample::SampledStrategy]) {
    for s in strategies {
        outln!(
            "  {:<12} RTP {}  RTP without 10 000 € {}  hit {}  gold {}  rolls {}",
            s.strategy,
            z(&s.rtp),
            z(&s.rtp_without_jackpot),
            z(&s.hit_frequency),
            z(&s.gold_alive),
            z(&s.expected_rolls)
        );
    }
}
