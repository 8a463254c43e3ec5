//! `issuer generate`.

use serde::Serialize;

use super::args::{parse_game, GameSlug};
use super::json::print_json;
use super::progress;
use ticket_issuer::emission::{BlockChoice, Emission, GeneratedBlock};
use ticket_issuer::error::Error;
use ticket_issuer::store::Store;

/// Arguments of `generate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game.
    #[arg(long, value_parser = GameSlug)]
    pub game: String,
    /// Emission number.
    #[arg(long)]
    pub emission: u32,
    /// Generate exactly this block number (from 1).
    #[arg(long, conflicts_with_all = ["blocks", "until_block"], value_parser = clap::value_parser!(u32).range(1..))]
    pub block: Option<u32>,
    /// With --block: make it even past the emission's next block, leaving
    /// a gap (refused otherwise: `block_gap`).
    #[arg(long, requires = "block")]
    pub allow_gap: bool,
    /// Generate this many blocks (at least 1), numbered on from the
    /// emission's last one.
    #[arg(long, conflicts_with = "until_block", value_parser = clap::value_parser!(u32).range(1..))]
    pub blocks: Option<u32>,
    /// Generate until the emission holds blocks 1 to M (those it lacks);
    /// safe to rerun: with none lacking it makes nothing.
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u32).range(1..))]
    pub until_block: Option<u32>,
    /// Unit price in euros (0.5, 1 or 2 for ile-au-tresor; 1 for
    /// tresors-ensables, its only price and the default).
    #[arg(long)]
    pub price: Option<String>,
    /// Units per block (tresors-ensables only: 1 to 10,000,000; default
    /// 450,000). An ile-au-tresor block always holds its 450,000-unit table.
    #[arg(long)]
    pub units: Option<u32>,
    /// The shares of an emission made from shares (`emission commit`).
    #[command(flatten)]
    pub shares: super::shares::SharesArg,
    /// Worker threads (default: all cores).
    #[arg(short, long)]
    pub jobs: Option<usize>,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress bar, and a line a block (its file) without the roots.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    blocks: &'a [GeneratedBlock],
}

/// Runs `generate`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let game = parse_game(&args.game)?;
    let price_cents = game.price_cents(args.price.as_deref())?;
    let mut emission = Emission::new(store, game, args.emission);
    if let Some(units) = args.units {
        emission = emission.with_units(units)?;
    }
    let emission = args.shares.give(emission)?;
    if store.ensure_keys()? {
        eprintln!(
            "created issuer keys in {} (hand {} to auditors)",
            store.root().join("keys").display(),
            store.public_key_path().display()
        );
    }
    let secrets = store.secrets()?;
    let choice = match (args.block, args.until_block, args.blocks) {
        (Some(b), _, _) if args.allow_gap => BlockChoice::LeavingGap(b),
        (Some(b), _, _) => BlockChoice::Number(b),
        (None, Some(m), _) => BlockChoice::Until(m),
        (None, None, n) => BlockChoice::Count(n.unwrap_or(1)),
    };
    let count = match choice {
        BlockChoice::Number(_) | BlockChoice::LeavingGap(_) => 1,
        BlockChoice::Count(n) | BlockChoice::Until(n) => u64::from(n),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
        .map_err(|e| Error::Internal {
            what: format!("the worker thread pool could not start ({e})"),
        })?;
    let bar = progress::bar(
        count * u64::from(args.units.unwrap_or(game.block_units())),
        args.quiet,
    );
    let blocks =
        pool.install(|| emission.generate(&secrets, price_cents, choice, &|n| bar.inc(n)))?;
    bar.finish_and_clear();
    if args.json {
        print_json("generate", &Report { blocks: &blocks });
    } else {
        for b in blocks.iter().filter(|_| args.quiet) {
            outln!(
                "{} block {} of emission {}: {}",
                if b.fresh {
                    "sealed"
                } else {
                    "kept already sealed"
                },
                b.summary.block,
                b.summary.emission,
                b.summary.path
            );
        }
        for b in blocks.iter().filter(|_| !args.quiet) {
            outln!(
                "{} block {} of emission {} ({} €, {} units): {}\n  merkle root {}\n  file sha256 {}",
                if b.fresh { "sealed" } else { "kept already sealed" },
                b.summary.block,
                b.summary.emission,
                b.summary.price,
                b.summary.units,
                b.summary.path,
                b.summary.merkle_root,
                b.summary.file_sha256
            );
        }
    }
    Ok(0)
}
