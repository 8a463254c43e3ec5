//! `issuer close`, `issuer reveal` and `issuer keys`.

use std::io::Write;
use std::path::{Path, PathBuf};
use ticket_issuer::approval::{self, DualControl, Guarded, Subject};

use clap::Subcommand;

use super::args::{parse_game, GameSlug, LedgerArg};
use super::json::print_json;
use ticket_issuer::closing;
use ticket_issuer::emission::Emission;
use ticket_issuer::error::Error;
use ticket_issuer::ledger::claims::EndOfClaims;
use ticket_issuer::records_key::{default_file_name, RecordsKeyFile};
use ticket_issuer::store::Store;
use ticket_issuer::Output;

/// An emission number, and its game where several games have one.
#[derive(clap::Args, Debug)]
pub struct EmissionArg {
    /// Emission number.
    #[arg(long)]
    pub emission: u32,
    /// The emission's game (needed only when several games have this number).
    #[arg(long, value_parser = GameSlug)]
    pub game: Option<String>,
}

impl EmissionArg {
    /// The emission named.
    pub fn open<'s>(&self, store: &'s Store) -> Result<Emission<'s>, Error> {
        let game = self.game.as_deref().map(parse_game).transpose()?;
        let game = store.emission_game(self.emission, game)?;
        Ok(Emission::new(store, game, self.emission))
    }
}

/// Arguments of `close`.
#[derive(clap::Args, Debug)]
pub struct CloseArgs {
    /// The emission.
    #[command(flatten)]
    pub emission: EmissionArg,
    /// The end of its claim period, recorded in the signed manifest:
    /// `end-claims` before it (or at any time, without one) is refused
    /// unless forced with a reason. A UTC date
    /// (2027-06-30: claims open through that day) or time
    /// (2027-06-30T12:00:00Z).
    #[arg(long, value_name = "DATE", value_parser = parse_deadline)]
    pub claims_until: Option<String>,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `reveal`.
#[derive(clap::Args, Debug)]
pub struct RevealArgs {
    /// The emission.
    #[command(flatten)]
    pub emission: EmissionArg,
    /// Where to write the reveal file (default, or `-`: stdout).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Replace the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// The ledger whose end of claims is required.
    #[command(flatten)]
    pub ledger: LedgerArg,
    /// For an emission made from shares whose shares this store does not
    /// keep: every party's share file.
    #[command(flatten)]
    pub shares: super::shares::SharesArg,
    /// A signed approval (`issuer approve reveal`), when the store's dual
    /// control covers the reveal: two, by distinct approvers.
    #[arg(long, value_name = "FILE")]
    pub approval: Vec<PathBuf>,
    /// Print a JSON report on stdout (with `-o FILE`; written to stdout,
    /// the reveal file is the JSON).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `end-claims`.
#[derive(clap::Args, Debug)]
pub struct EndClaimsArgs {
    /// The emission.
    #[command(flatten)]
    pub emission: EmissionArg,
    /// End the claims before the deadline set at close, or of an emission
    /// closed without one (needs --reason, published in the ledger's log).
    #[arg(long, requires = "reason")]
    pub force: bool,
    /// Why the claims end early (with --force).
    #[arg(long, requires = "force")]
    pub reason: Option<String>,
    /// A signed approval (`issuer approve end-claims-force`), when the
    /// store's dual control covers an early end: two, by distinct
    /// approvers.
    #[arg(long, value_name = "FILE", requires = "force")]
    pub approval: Vec<PathBuf>,
    /// The ledger to publish into (every node's).
    #[command(flatten)]
    pub ledger: LedgerArg,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `keys` subcommands.
#[derive(Subcommand, Debug)]
pub enum KeysCommand {
    /// Write an emission's (or one block's) records key to a file, for an
    /// auditor or a redemption service.
    ExportRecordsKey {
        /// Emission number.
        #[arg(long)]
        emission: u32,
        /// Only this block's key.
        #[arg(long)]
        block: Option<u32>,
        /// The game (needed only when several games have this emission).
        #[arg(long)]
        game: Option<String>,
        /// Output file (default: records-key-<game>-e<N>[-b<B>].json here;
        /// `-`: stdout).
        #[arg(long, short = 'o')]
        out: Option<PathBuf>,
        /// Replace the output file if it exists.
        #[arg(long)]
        force: bool,
        /// Print a JSON report on stdout (with `-o FILE`).
        #[arg(long)]
        json: bool,
    },
}

/// Runs `close`.
pub fn close(store: &Store, args: &CloseArgs) -> Result<i32, Error> {
    let secrets = store.secrets()?;
    let emission = args.emission.open(store)?;
    // Closed before, and nothing asked of it now: a second close says so.
    let already = args.claims_until.is_none()
        && emission
            .require_manifest(&secrets.signing.verifying_key())
            .is_ok_and(|m| m.closed);
    let manifest = emission.close_until(&secrets, args.claims_until.as_deref())?;
    if args.json {
        print_json(
            "close",
            &Written {
                game: emission.game.slug(),
                emission: args.emission.emission,
                block: None,
                blocks: Some(manifest.blocks.len()),
                out: None,
                already: Some(already),
            },
        );
        return Ok(0);
    }
    let blocks = ticket_issuer::words::plural(manifest.blocks.len() as u64, "block");
    if already {
        outln!(
            "{} emission {} was closed already ({blocks}): nothing changed",
            emission.game.slug(),
            args.emission.emission
        );
    } else {
        outln!(
            "{} emission {} is closed: {blocks}; no more may be added",
            emission.game.slug(),
            args.emission.emission
        );
    }
    Ok(0)
}

/// What `close`, `reveal -o FILE` and `keys export-records-key -o FILE`
/// report under `--json`.
#[derive(serde::Serialize)]
struct Written {
    game: &'static str,
    emission: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    block: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    blocks: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    out: Option<String>,
    /// `close`: the emission was closed before this run.
    #[serde(skip_serializing_if = "Option::is_none")]
    already: Option<bool>,
}

/// Runs `reveal`.
pub fn reveal(store: &Store, args: &RevealArgs) -> Result<i32, Error> {
    // The seeds go to a file, or to standard output when asked (`-o -`)
    // or piped: never onto a terminal's screen by default (issue 39).
    // Refused before anything is revealed.
    if args.out.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return Err(Error::SecretToTerminal {
            what: "the seeds",
            remedy: "give -o FILE, or -o - to print them",
        });
    }
    let secrets = store.secrets()?;
    // The output is checked (not in keys/, not existing) before anything
    // is revealed.
    let mut out = store.output(
        args.out.as_deref().unwrap_or(Path::new("-")),
        0o644,
        args.force,
    )?;
    let emission = args.shares.give(args.emission.open(store)?)?;
    DualControl::load(store)?.approve(
        &Subject {
            store: approval::store_id(&secrets.signing.verifying_key()),
            action: Guarded::Reveal,
            game: emission.game.slug().into(),
            emission: args.emission.emission,
            block: None,
            reason: None,
        },
        &approval::read_files(&args.approval)?,
    )?;
    let ledger = args.ledger.target(store)?;
    // No seed leaves before every node refuses the emission's units.
    let reveal = emission.reveal_once(&secrets, || {
        let published = ledger
            .end_of_claims(emission.game, args.emission.emission)?
            .filter(|s| {
                EndOfClaims::open(
                    &s.statement,
                    &secrets.signing.verifying_key(),
                    emission.game,
                    args.emission.emission,
                )
                .is_ok()
            });
        match published {
            Some(_) => Ok(()),
            None => Err(Error::ClaimsNotEnded {
                game: emission.game.slug(),
                emission: args.emission.emission,
                ledger: ledger.describe(),
            }),
        }
    })?;
    let mut text = serde_json::to_string_pretty(&reveal).expect("a reveal serialises");
    text.push('\n');
    let to = out.describe();
    write_output(out.by_ref(), text.as_bytes())?;
    out.finish()?;
    let to_stdout = args.out.as_deref().is_none_or(|p| p == Path::new("-"));
    if args.json && !to_stdout {
        print_json(
            "reveal",
            &Written {
                game: emission.game.slug(),
                emission: args.emission.emission,
                block: None,
                blocks: Some(reveal.blocks.len()),
                out: Some(to.clone()),
                already: None,
            },
        );
    }
    eprintln!(
        "revealed {} of emission {} to {to}; its redemption is now closed",
        ticket_issuer::words::plural(reveal.blocks.len(), "seed"),
        args.emission.emission,
    );
    Ok(0)
}

/// Runs `end-claims`.
pub fn end_claims(store: &Store, args: &EndClaimsArgs) -> Result<i32, Error> {
    let secrets = store.secrets()?;
    let emission = args.emission.open(store)?;
    let ledger = args.ledger.target(store)?;
    let approvals = approval::read_files(&args.approval)?;
    let early = args
        .reason
        .as_deref()
        .filter(|_| args.force)
        .map(|reason| closing::EarlyEnd {
            reason,
            approvals: &approvals,
        });
    let ended = closing::end_claims(
        store,
        &secrets,
        &ledger,
        emission.game,
        args.emission.emission,
        closing::BY,
        early.as_ref(),
    )?;
    let (stored, closing) = (&ended.end, &ended.closing);
    if args.json {
        print_json("end_of_claims", &ended);
    } else {
        outln!(
            "{} emission {}: claims ended at {} (published in {}); every node refuses its units from now on",
            stored.game,
            stored.emission,
            stored.ended_at,
            ledger.describe()
        );
        outln!(
            "closing statement (signed, in the ledger's log): {}{}",
            closing.totals(),
            if closing.reconciled {
                ""
            } else {
                "; THE LEDGER DOES NOT RECONCILE WITH THE BLOCKS: run `issuer audit --emission`"
            }
        );
        outln!(
            "the two signed statements: rerun with --json (the first ones stand: rerunning prints them)"
        );
    }
    Ok(0)
}

/// `--claims-until`'s parser.
fn parse_deadline(text: &str) -> Result<String, String> {
    ticket_issuer::emission::claims_deadline(text)
}

/// Runs `keys …`.
pub fn keys(store: &Store, cmd: &KeysCommand) -> Result<i32, Error> {
    let KeysCommand::ExportRecordsKey {
        emission,
        block,
        game,
        out,
        force,
        json,
    } = cmd;
    let secrets = store.secrets()?;
    let game = store.emission_game(*emission, game.as_deref().map(parse_game).transpose()?)?;
    let file = RecordsKeyFile::export(&secrets, game, *emission, *block);
    let path = out
        .clone()
        .unwrap_or_else(|| default_file_name(game, *emission, *block));
    let mut out = store.output(&path, 0o600, *force)?;
    let mut text = serde_json::to_string_pretty(&file).expect("a key file serialises");
    text.push('\n');
    let to = out.describe();
    write_output(out.by_ref(), text.as_bytes())?;
    out.finish()?;
    if *json && path != Path::new("-") {
        print_json(
            "records_key_export",
            &Written {
                game: game.slug(),
                emission: *emission,
                block: *block,
                blocks: None,
                out: Some(to.clone()),
                already: None,
            },
        );
    }
    // On stderr: stdout may be the key itself.
    eprintln!(
        "wrote the records key of {} emission {}{} to {to}{}: it opens {}, and signs nothing",
        game.slug(),
        emission,
        block.map(|b| format!(" block {b}")).unwrap_or_default(),
        if path == Path::new("-") {
            ""
        } else {
            " (mode 0600)"
        },
        if block.is_some() {
            "that block only"
        } else {
            "every block of the emission"
        }
    );
    Ok(0)
}

/// Writes `bytes` to `out`, naming the destination on failure.
fn write_output(out: &mut Output, bytes: &[u8]) -> Result<(), Error> {
    let to = out.describe();
    out.write_all(bytes)
        .map_err(|e| Error::io(Path::new(&to), e))
}
