//! `issuer par`: the PAR sheet of a game (docs/PAR.md).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::args::{parse_game, GameSlug, KeyArgs, LoadedKeys};
use super::exit::{EXIT_OK, EXIT_REFUSED};
use super::json::print_json;
use ticket_issuer::block::authentic::AuthenticBlock;
use ticket_issuer::error::Error;
use ticket_issuer::game::{Fields, Game};
use ticket_issuer::money::Cents;
use ticket_issuer::par::{ParOption, ParRequest};
use ticket_issuer::store::Store;

/// Arguments of `par`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game.
    #[arg(long, value_parser = GameSlug)]
    pub game: String,
    /// Unit price in euros; default: every price of the game (with
    /// --block: the block's).
    #[arg(long)]
    pub price: Option<String>,
    /// An option of the game's own PAR computation, NAME=N (repeatable);
    /// tresors-ensables: boards=N (boards drawn for optimal play, default
    /// 20000), exact-boards=K (of those, solved exactly, default 3).
    #[arg(long = "option", value_name = "NAME=N")]
    pub options: Vec<String>,
    /// Short for --option boards=N (tresors-ensables).
    #[arg(long, value_name = "N")]
    pub boards: Option<u64>,
    /// Short for --option exact-boards=K (tresors-ensables).
    #[arg(long, value_name = "K")]
    pub exact_boards: Option<u64>,
    /// A drawn game: units of the Monte Carlo through the game engine.
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

/// The game's PAR options as given (`--option NAME=N`, and `--boards`,
/// `--exact-boards` as its short forms), each checked against the ones
/// the game declares: an option it does not take is refused, not ignored.
fn par_options(game: Game, args: &Args) -> Result<BTreeMap<String, u64>, Error> {
    let short = [("boards", args.boards), ("exact-boards", args.exact_boards)];
    let given = args.options.iter().cloned().chain(
        short
            .iter()
            .filter_map(|(name, value)| value.map(|v| format!("{name}={v}"))),
    );
    let mut options = BTreeMap::new();
    for text in given {
        let (name, value) =
            ParOption::parse(game.par_options(), &text).map_err(|reason| Error::ParOption {
                game: game.slug(),
                reason,
            })?;
        options.insert(name, value);
    }
    Ok(options)
}

/// A seed in hex.
fn parse_seed(text: &str) -> Result<[u8; 32], String> {
    let bytes = hex::decode(text).map_err(|e| format!("not hex ({e})"))?;
    bytes
        .try_into()
        .map_err(|b: Vec<u8>| format!("{} bytes; a seed is 32 (64 hex digits)", b.len()))
}

/// What `par --json` prints: the game, then its sheet's members.
#[derive(Serialize)]
struct Report<'a> {
    game: &'static str,
    #[serde(flatten)]
    sheet: &'a Fields,
}

/// Runs `par`: the game gives its sheet (docs/PAR.md).
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let game = parse_game(&args.game)?;
    let mut price = args
        .price
        .as_ref()
        .map(|p| Cents::parse_price(p).ok_or_else(|| game.unsupported_price(p.clone())))
        .transpose()?;
    if let Some(cents) = price {
        game.check_price(cents)?;
    }
    let block = args
        .block
        .as_ref()
        .map(|path| open_block(store, args, path, game, &mut price))
        .transpose()?;
    let options = par_options(game, args)?;
    let sheet = game.par_sheet(&ParRequest {
        price_cents: price,
        options,
        samples: args.samples,
        seed: args.seed,
        block: block.as_ref(),
    })?;
    if args.json {
        print_json(
            "par",
            &Report {
                game: game.slug(),
                sheet: &sheet.members,
            },
        );
    } else {
        out!("{}", sheet.text);
    }
    // A block that does not agree with the sheet fails the command.
    Ok(match sheet.block_ok {
        Some(false) => EXIT_REFUSED,
        _ => EXIT_OK,
    })
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
                Cents::from(h.price_cents),
                Cents::from(cents)
            )))
        }
        _ => *price = Some(h.price_cents),
    }
    Ok(block)
}
