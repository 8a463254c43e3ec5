//! `issuer export` and `issuer show`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::args::{KeyArgs, LedgerArg, LoadedKeys};
use super::json::print_json;
use ticket_issuer::block::authentic::AuthenticBlock;
use ticket_issuer::error::Error;
use ticket_issuer::export::export_jsonl;
use ticket_issuer::game::Picture;
use ticket_issuer::redeem::{Redeemer, Redemption};
use ticket_issuer::redeemer::{Check, PictureAsk};
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;
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
    /// A game played step by step: show the play stopped after this many
    /// steps (none: as recorded, or played to the end); a unit whose play
    /// is not over needs --reveal-all.
    #[arg(long, value_name = "N", alias = "stopped-after-rolls")]
    pub stopped_after_steps: Option<u32>,
    /// Show the whole unit even while its play is not over (an operator's
    /// or auditor's replay; never hand this to a player).
    #[arg(long)]
    pub reveal_all: bool,
    /// Draw the unit after exactly N steps (rolls or throws; 0: before
    /// the first); a play not over: at most the steps revealed, unless
    /// --reveal-all.
    #[arg(long, value_name = "N", conflicts_with_all = ["stopped_after_steps", "json"], alias = "after-rolls")]
    pub after_steps: Option<u32>,
    /// Never colour the picture (for logs); colours show only on a terminal.
    #[arg(long, conflicts_with = "json")]
    pub plain: bool,
    /// Write the picture as SVG to this file (`-`: standard output)
    /// instead of drawing it in the terminal.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["json", "steps"])]
    pub svg: Option<PathBuf>,
    /// Write one SVG per step into this folder: `step-000.svg` before the
    /// first roll or throw, … , the last as `show` draws it.
    #[arg(long, value_name = "DIR", conflicts_with = "json")]
    pub steps: Option<PathBuf>,
    /// Replace picture files that exist.
    #[arg(long)]
    pub force: bool,
    /// The ledger.
    #[command(flatten)]
    pub ledger: LedgerArg,
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
    if !args.json {
        return draw(store, &redeemer, &id, args);
    }
    let r = if args.reveal_all {
        redeemer.replay(&id, args.stopped_after_steps)?
    } else {
        match redeemer.check(&id, args.stopped_after_steps)? {
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
    let shown = Shown {
        unit: &r,
        picture: super::redeem::picture(&r)
            .lines()
            .map(str::to_string)
            .collect(),
    };
    print_json("unit", &shown);
    Ok(0)
}

/// `show` without `--json`: the unit drawn by its game (docs/GAMES.md §What
/// a picture shows) in the terminal, then its outcome; or as SVG files.
/// What is drawn follows the rule of `--json`: a play not over only up to
/// the rolls revealed, unless `--reveal-all`.
fn draw(store: &Store, redeemer: &Redeemer, id: &UnitId, args: &ShowArgs) -> Result<i32, Error> {
    let files = args.svg.is_some() || args.steps.is_some();
    // What the unit pays, where it may be shown whole (a redemption's words
    // follow the picture); an unsold unit is told as `--json` tells it.
    let whole = if args.reveal_all {
        Some(redeemer.replay(id, args.stopped_after_steps)?)
    } else {
        match redeemer.check(id, args.stopped_after_steps)? {
            Check::Whole(r) => Some(r),
            Check::InPlay(u) if !u.sold && !files => {
                super::redeem::print_in_play(&u);
                return Ok(0);
            }
            Check::InPlay(_) => None,
        }
    };
    let ask = PictureAsk {
        after: args.after_steps,
        stop: args.stopped_after_steps,
        reveal_all: args.reveal_all,
    };
    let picture = redeemer.picture(id, ask)?;
    if let Some(dir) = &args.steps {
        write_steps(store, redeemer, id, ask, &picture, dir, args.force)?;
    }
    if let Some(path) = &args.svg {
        write_svg(store, path, &picture, args.force)?;
    }
    if files {
        return Ok(0);
    }
    outln!(
        "unit {id} ({} emission {} block {} index {})",
        id.game.slug(),
        id.emission,
        id.block,
        id.index
    );
    let colour = !args.plain && std::io::stdout().is_terminal();
    out!("{}", picture.text(colour));
    if let Some(r) = whole.filter(|_| args.after_steps.is_none()) {
        outln!("{}", super::redeem::outcome_words(&r));
    }
    Ok(0)
}

/// One SVG file, written whole (atomically) or not at all; an existing
/// file only with `--force`.
fn write_svg(store: &Store, path: &Path, picture: &Picture, force: bool) -> Result<(), Error> {
    let mut out = store.output(path, 0o644, force)?;
    out.write_all(picture.svg().as_bytes())
        .map_err(|e| Error::io(path, e))?;
    out.finish()
}

/// `step-000.svg` (before the first step) … `step-NNN.svg` (`last`, the
/// picture `show` draws) in `dir`, made if missing.
fn write_steps(
    store: &Store,
    redeemer: &Redeemer,
    id: &UnitId,
    ask: PictureAsk,
    last: &Picture,
    dir: &Path,
    force: bool,
) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    for k in 0..=last.steps {
        let path = dir.join(format!("step-{k:03}.svg"));
        if k == last.steps {
            write_svg(store, &path, last, force)?;
        } else {
            let ask = PictureAsk {
                after: Some(k),
                stop: None,
                ..ask
            };
            write_svg(store, &path, &redeemer.picture(id, ask)?, force)?;
        }
    }
    Ok(())
}
