//! `issuer verify`.

use std::path::PathBuf;

use super::{print_json, KeyArgs, LoadedKeys};
use crate::audit::{verify_emission, EmissionReport};
use crate::emission::Reveal;
use crate::error::Error;
use crate::store::Store;
use crate::verify::{verify_block, BlockReport, Status, VerifyOptions};

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
    #[arg(long, requires = "emission")]
    pub game: Option<String>,
    /// A reveal file: check each seed and regenerate each block from it.
    #[arg(long, requires = "emission")]
    pub seeds: Option<PathBuf>,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs `verify`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let mut keys = LoadedKeys::load(store, &args.keys)?;
    let reveal = args.seeds.as_deref().map(Reveal::read).transpose()?;
    // A reveal carries the emission's records key: an auditor with only the
    // public key and the reveal file can make every check.
    if let (Some(r), Some(path), None, None) = (&reveal, &args.seeds, &keys.secrets, &keys.file) {
        keys.file = Some((r.records_key_file(), path.clone()));
    }
    let opts = VerifyOptions {
        public_key: &keys.trusted,
        keys: keys.access(),
        revealed_seed: None,
        allow_test_sizes: false,
    };
    if let Some(number) = args.emission {
        let emission = super::emission::EmissionArg {
            emission: number,
            game: args.game.clone(),
        }
        .open(store)?;
        let report = verify_emission(&emission, &opts, reveal.as_ref())?;
        if args.json {
            print_json(&report);
        } else {
            print_emission(&report);
        }
        return Ok(if report.ok { 0 } else { 1 });
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
    if args.json {
        let errors: Vec<_> = unreadable
            .iter()
            .map(|(p, e)| serde_json::json!({ "path": p, "error": e.to_string() }))
            .collect();
        print_json(&serde_json::json!({ "ok": ok, "blocks": reports, "unreadable": errors }));
    } else {
        for r in &reports {
            print_block(r);
        }
    }
    for (_, e) in &unreadable {
        eprintln!("error: {e}");
    }
    Ok(match (unreadable.first(), ok) {
        (Some((_, e)), _) => e.exit_code(),
        (None, true) => 0,
        (None, false) => 1,
    })
}

/// Prints one block report in words.
pub fn print_block(r: &BlockReport) {
    println!(
        "{}: {} emission {} block {}, {} €, {} units",
        r.summary.path,
        r.summary.game,
        r.summary.emission,
        r.summary.block,
        r.summary.price,
        r.summary.units
    );
    for c in &r.checks {
        let status = match c.status {
            Status::Passed => "ok",
            Status::Failed => "FAILED",
            Status::NotDone => "not done",
        };
        println!("  {status:<9} {:<16} {}", c.check, c.detail);
    }
    for f in &r.failures {
        println!(
            "  ! [{}] {}",
            serde_json::to_value(f.kind)
                .unwrap_or_default()
                .as_str()
                .unwrap_or("?"),
            f.message
        );
    }
    if r.failure_count > r.failures.len() {
        println!(
            "  ! … and {} more failures",
            r.failure_count - r.failures.len()
        );
    }
    let verdict = match (r.ok, r.complete) {
        (true, true) => "OK: every check passed".to_string(),
        (true, false) => {
            "OK so far: structure and seal hold; the checks marked 'not done' were not made"
                .to_string()
        }
        (false, _) => format!("FAILED: {} failure(s)", r.failure_count),
    };
    println!("  {verdict}");
}

fn print_emission(r: &EmissionReport) {
    println!(
        "emission {} ({}), {} block(s), {}, manifest signature {}",
        r.emission,
        r.game,
        r.blocks.len(),
        if r.closed { "closed" } else { "open" },
        if r.manifest_signature_ok {
            "ok"
        } else {
            "FAILED"
        }
    );
    for b in &r.blocks {
        print_block(b);
    }
    for p in &r.problems {
        println!("! {}", p.message);
    }
    println!(
        "{}",
        if r.ok {
            format!(
                "emission {}: OK{}",
                r.emission,
                if r.seeds_checked {
                    ", every block regenerated from its revealed seed"
                } else {
                    ""
                }
            )
        } else {
            format!(
                "emission {}: FAILED ({} problem(s))",
                r.emission,
                r.problems.len()
            )
        }
    );
}
