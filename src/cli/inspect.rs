//! `issuer export` and `issuer show`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{print_json, KeyArgs, LoadedKeys};
use ticket_issuer::block::authentic::AuthenticBlock;
use ticket_issuer::error::Error;
use ticket_issuer::export::export_jsonl;
use ticket_issuer::redeem::{Redeemer, Redemption};
use ticket_issuer::redeemer::Check;
use ticket_issuer::store::Store;
use ticket_issuer::Output;

/// Export formats.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
}

/// Arguments of `export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The block file.
    pub block: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: Format,
    /// Write to this file (mode 0600: it holds every outcome) instead of
    /// stdout (`-`).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Replace the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// No progress bar (it shows on a terminal).
    #[arg(short, long)]
    pub quiet: bool,
    /// Print a JSON report on stdout (with `-o FILE`; written to stdout,
    /// the export is JSON lines already).
    #[arg(long)]
    pub json: bool,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
}

/// Arguments of `show`.
#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// The unit ID.
    pub id: String,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
    /// Trésors Ensablés: show the play stopped after this many rolls
    /// (none: as recorded, or played to the end); a unit whose play is not
    /// over needs --reveal-all.
    #[arg(long, value_name = "N")]
    pub stopped_after_rolls: Option<u32>,
    /// Show the whole unit even while its play is not over (an operator's
    /// or auditor's replay; never hand this to a player).
    #[arg(long)]
    pub reveal_all: bool,
    /// The ledger.
    #[command(flatten)]
    pub ledger: super::LedgerArg,
}

/// What `show --json` prints: the unit, its outcome and proof, and the
/// player's picture as lines of text.
#[derive(Serialize)]
struct Shown<'a> {
    #[serde(flatten)]
    unit: &'a Redemption,
    picture: Vec<String>,
}

/// Runs `export`.
pub fn export(store: &Store, args: &ExportArgs) -> Result<i32, Error> {
    let keys = LoadedKeys::load(store, &args.keys)?;
    let access = keys.access();
    let block = AuthenticBlock::open(&args.block, &keys.trusted, access, "export")?;
    let target = args.out.as_deref().unwrap_or(Path::new("-"));
    let mut out =
        std::io::BufWriter::with_capacity(1 << 20, store.output(target, 0o600, args.force)?);
    let bar = super::progress::bar(u64::from(block.file.header.unit_count), args.quiet);
    match args.format {
        Format::Jsonl => export_jsonl(&block, &mut out, &|n| bar.inc(n))?,
    };
    bar.finish_and_clear();
    Output::finish_buffered(out)?;
    if args.json && target != Path::new("-") {
        #[derive(serde::Serialize)]
        struct Exported {
            block: String,
            units: u32,
            out: String,
        }
        print_json(
            "export",
            &Exported {
                block: args.block.display().to_string(),
                units: block.file.header.unit_count,
                out: target.display().to_string(),
            },
        );
    }
    Ok(0)
}

/// Runs `show`: the unit as its player sees it, without recording
/// anything; a unit whose play is not over only as far as it was played,
/// unless `--reveal-all`.
pub fn show(store: &Store, args: &ShowArgs) -> Result<i32, Error> {
    let id = args.id.parse()?;
    let keys = LoadedKeys::load(store, &args.keys)?;
    let redeemer =
        Redeemer::new(store.clone(), keys.owned()).with_ledger(args.ledger.target(store)?);
    let r = if args.reveal_all {
        redeemer.replay(&id, args.stopped_after_rolls)?
    } else {
        match redeemer.check(&id, args.stopped_after_rolls)? {
            Check::Whole(r) => r,
            Check::InPlay(u) => {
                if args.json {
                    print_json("unit", &u);
                } else {
                    super::redeem::print_in_play(&u);
                }
                return Ok(0);
            }
        }
    };
    if args.json {
        let shown = Shown {
            unit: &r,
            picture: super::redeem::picture(&r)
                .lines()
                .map(str::to_string)
                .collect(),
        };
        print_json("unit", &shown);
        return Ok(0);
    }
    outln!(
        "unit {} ({} emission {} block {} index {})",
        r.id,
        r.game,
        r.emission,
        r.block,
        r.index
    );
    out!("{}", super::redeem::picture(&r));
    outln!("{}", super::redeem::outcome_words(&r));
    Ok(0)
}
