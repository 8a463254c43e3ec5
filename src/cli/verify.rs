//! `issuer verify`.

use std::path::PathBuf;

use super::args::{GameSlug, KeyArgs, LoadedKeys};
use super::exit::{exit_code, EXIT_OK, EXIT_REFUSED};
use super::json::print_json;
use super::progress;
use ticket_issuer::audit::{verify_emission, EmissionReport};
use ticket_issuer::emission::{Emission, Manifest, Reveal};
use ticket_issuer::error::Error;
use ticket_issuer::store::Store;
use ticket_issuer::verify::{verify_block, BlockReport, Scope, Status, VerifyOptions};
use ticket_issuer::words::plural;

/// Arguments of `verify`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Block files to check.
    #[arg(required_unless_present = "emission")]
    pub files: Vec<PathBuf>,
    /// Check every block of this emission against its signed manifest.
    #[arg(long, conflicts_with = "files")]
    pub emission: Option<u32>,
    /// The emission's game (needed only when several games have this number).
    #[arg(long, requires = "emission", value_parser = GameSlug)]
    pub game: Option<String>,
    /// A reveal file: check each seed and regenerate each block from it.
    #[arg(long, requires = "emission")]
    pub seeds: Option<PathBuf>,
    /// What to check: `full` (default: every check; exit 0 only if each
    /// was made), `records` (all but the seed checks: an auditor with the
    /// records key before the reveal), `structure` (no secret needed:
    /// layout, seal, digests).
    #[arg(long, value_enum, default_value = "full")]
    pub scope: ScopeArg,
    /// Shorthand for `--scope structure`.
    #[arg(long, conflicts_with = "scope")]
    pub structure_only: bool,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress bar (it shows on a terminal for `--emission`), and in
    /// words only the checks that did not pass: a block that passes is its
    /// line and its verdict.
    #[arg(short, long)]
    pub quiet: bool,
}

/// The `--scope` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ScopeArg {
    /// Every check.
    Full,
    /// All but the checks that need the block seed.
    Records,
    /// Only what needs no secret.
    Structure,
}

/// The exit status of a verification: 0 only when it passed and is
/// complete for the scope asked for.
fn verdict_code(ok: bool, complete: bool) -> i32 {
    if ok && complete {
        EXIT_OK
    } else {
        EXIT_REFUSED
    }
}

/// Runs `verify`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let mut keys = LoadedKeys::load(store, &args.keys)?;
    let reveal = args.seeds.as_deref().map(Reveal::read).transpose()?;
    // A reveal carries the emission's records key: an auditor with only the
    // public key and the reveal file can make every check.
    if let (Some(r), Some(path), None) = (&reveal, &args.seeds, &keys.secrets) {
        keys.files.push((r.records_key_file(), path.clone()));
    }
    let mut opts = VerifyOptions::new(&keys.trusted, keys.access());
    opts.scope = match (args.structure_only, args.scope) {
        (true, _) | (false, ScopeArg::Structure) => Scope::Structure,
        (false, ScopeArg::Records) => Scope::Records,
        (false, ScopeArg::Full) => Scope::Full,
    };
    if let Some(number) = args.emission {
        let emission = super::emission::EmissionArg {
            emission: number,
            game: args.game.clone(),
        }
        .open(store)?;
        let bar = progress::bar(listed_units(&emission), args.quiet);
        let tick = |n| bar.inc(n);
        opts.progress = Some(&tick);
        let report = verify_emission(&emission, &opts, reveal.as_ref())?;
        bar.finish_and_clear();
        if args.json {
            print_json("verify_emission", &report);
        } else {
            print_emission(&report, args.quiet);
        }
        return Ok(verdict_code(report.ok, report.complete));
    }
    // Every file is checked even when one can't be read; the exit code is
    // the worst outcome: 2 unreadable, 1 a check failed, 0 all passed.
    let mut reports = Vec::new();
    let mut unreadable = Vec::new();
    for path in &args.files {
        match verify_block(path, &opts) {
            Ok(report) => reports.push(report),
            Err(e) if args.files.len() > 1 => unreadable.push((path, e)),
            Err(e) => return Err(e),
        }
    }
    let ok = unreadable.is_empty() && reports.iter().all(|r| r.ok);
    let complete = unreadable.is_empty() && reports.iter().all(|r| r.complete);
    if args.json {
        let errors: Vec<_> = unreadable.iter().map(|(_, e)| e.report()).collect();
        print_json(
            "verify_blocks",
            &serde_json::json!({ "ok": ok, "complete": complete, "blocks": reports, "unreadable": errors }),
        );
    } else {
        for r in &reports {
            print_block(r, args.quiet);
        }
    }
    for (_, e) in &unreadable {
        eprintln!("error: {e}");
    }
    Ok(match unreadable.first() {
        Some((_, e)) => exit_code(e.kind()),
        None => verdict_code(ok, complete),
    })
}

/// The units the emission's manifest lists, for the progress bar only (0
/// when it can't be read: the verification itself will say why).
fn listed_units(emission: &Emission) -> u64 {
    std::fs::read(emission.manifest_path())
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Manifest>(&bytes).ok())
        .map_or(0, |m| m.blocks.iter().map(|b| u64::from(b.units)).sum())
}

/// Prints one block report in words; `quiet`: without the checks that
/// passed.
pub fn print_block(r: &BlockReport, quiet: bool) {
    outln!(
        "{}: {} emission {} block {}, {} €, {} units",
        r.summary.path,
        r.summary.game,
        r.summary.emission,
        r.summary.block,
        r.summary.price,
        r.summary.units
    );
    for c in r
        .checks
        .iter()
        .filter(|c| !quiet || c.status != Status::Passed)
    {
        let status = match c.status {
            Status::Passed => "ok",
            Status::Failed => "FAILED",
            Status::NotDone => "not done",
        };
        outln!("  {status:<9} {:<16} {}", c.check, c.detail);
    }
    for f in &r.failures {
        outln!(
            "  ! [{}] {}",
            serde_json::to_value(f.kind)
                .unwrap_or_default()
                .as_str()
                .unwrap_or("?"),
            f.message
        );
    }
    if r.failure_count > r.failures.len() {
        outln!(
            "  ! … and {} more failures",
            r.failure_count - r.failures.len()
        );
    }
    let verdict = match (r.ok, r.complete, r.scope) {
        (true, true, Scope::Full) => "OK: every check passed".to_string(),
        (true, true, Scope::Records) => {
            "OK (scope records, as asked): every unit checked; the seed checks were not asked for"
                .to_string()
        }
        (true, true, Scope::Structure) => {
            "OK (structure only, as asked): layout, seal and digests hold; the units were not checked"
                .to_string()
        }
        (true, false, _) => {
            "INCOMPLETE: no check failed, but those marked 'not done' were not made (give the keys they need, or name a smaller --scope)"
                .to_string()
        }
        (false, _, _) => format!("FAILED: {}", plural(r.failure_count, "failure")),
    };
    outln!("  {verdict}");
}

fn print_emission(r: &EmissionReport, quiet: bool) {
    outln!(
        "emission {} ({}), {}, {}, manifest signature {}",
        r.emission,
        r.game,
        plural(r.blocks.len(), "block"),
        if r.closed { "closed" } else { "open" },
        if r.manifest_signature_ok {
            "ok"
        } else {
            "FAILED"
        }
    );
    for b in &r.blocks {
        print_block(b, quiet);
    }
    for p in &r.problems {
        outln!("! {}", p.message);
    }
    outln!(
        "{}",
        if r.ok && !r.complete {
            format!(
                "emission {}: INCOMPLETE: no check failed, but some were not made (see 'not done' above)",
                r.emission
            )
        } else if r.ok {
            format!(
                "emission {}: OK{}",
                r.emission,
                match (r.scope, r.seeds_checked) {
                    (Scope::Structure, _) => " (structure only, as asked)",
                    (Scope::Records, _) => " (scope records, as asked: no seed checks)",
                    (Scope::Full, true) => ", every block regenerated from its revealed seed",
                    (Scope::Full, false) => "; seeds not checked (pass --seeds FILE after reveal)",
                }
            )
        } else {
            format!(
                "emission {}: FAILED ({})",
                r.emission,
                plural(r.problems.len(), "problem")
            )
        }
    );
}
