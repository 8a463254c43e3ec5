//! The `issuer` command line: argument parsing (clap) and one small module
//! per subcommand; each calls the library and prints. This file only
//! declares the modules, parses and dispatches; what several commands
//! share is in leaf modules that call no command: `args` (shared
//! arguments), `exit` (exit codes, by error kind: README §Exit codes,
//! docs/CLI.md), `json` (the `--json` envelope), `out` (standard output).

#[macro_use]
mod out;

mod approve;
mod args;
mod audit;
mod completions;
mod demo;
mod emission;
mod exit;
mod generate;
mod inspect;
mod json;
mod keygen;
mod operator;
mod par;
mod progress;
mod redeem;
mod remaining;
mod rng_stream;
mod sale;
mod serve;
mod shares;
mod status;
mod terminal;
mod verify;
mod witness;

use std::path::PathBuf;

use clap::{CommandFactory, Parser, Subcommand};

use args::JsonArg;
use json::json_line;
use ticket_issuer::error::Error;
use ticket_issuer::ledger::operator::Action;
use ticket_issuer::store::{Store, DEFAULT_STORE};

/// Issues pre-decided online instant-game units: generate, seal, verify,
/// export and redeem blocks.
#[derive(Parser, Debug)]
#[command(
    name = "issuer",
    version,
    about,
    long_about = None,
    after_help = "Exit codes: 0 done, every check passed; 1 a check failed or could not be made, or the request was refused; 2 bad usage or unreadable input; 3 unavailable now (I/O, full disk, busy): retry; 4 internal error."
)]
pub struct Cli {
    /// The issuer's store folder (keys, blocks, manifests, ledger).
    #[arg(long, global = true, env = "ISSUER_STORE", default_value = DEFAULT_STORE)]
    pub store: PathBuf,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create the issuer's master secret and Ed25519 signing key in the store.
    Keygen(JsonArg),
    /// Generate sealed blocks of an emission.
    Generate(generate::Args),
    /// Check block files, or a whole emission, from the files alone.
    Verify(verify::Args),
    /// Write every unit of a block, one JSON object per line.
    Export(inspect::ExportArgs),
    /// Show what the player of a unit sees (records nothing).
    Show(inspect::ShowArgs),
    /// Sell the next unsold unit of a game: its ID and what the player's
    /// screen needs.
    Sell(sale::SellArgs),
    /// Record units of a closed emission as sold (distributed by other means).
    MarkSold(sale::MarkSoldArgs),
    /// Play a sold unit one step at a time (a roll of Trésors Ensablés), or stop.
    Play(sale::PlayArgs),
    /// Redeem a unit by ID: check it, prove it, record it once.
    Redeem(redeem::Args),
    /// Suspend an emission or a block: no sale, play step or redemption
    /// until resumed.
    Suspend(operator::ControlArgs),
    /// Resume a suspended emission or block.
    Resume(operator::ControlArgs),
    /// Withdraw an emission or a block for good: never sold again (its sold
    /// units still play and redeem).
    Withdraw(operator::ControlArgs),
    /// Void a sale before its play began (refund to the platform): the unit
    /// is never sold again and never paid.
    Void(operator::VoidArgs),
    /// Make an approver's key for dual control (docs/REDEMPTION.md §Dual
    /// control).
    ApproverKey(approve::ApproverKeyArgs),
    /// Show or set the actions that need two approvers, and who they are.
    DualControl(approve::ConfigArgs),
    /// Sign an approval of one action (withdraw, end-claims-force, reveal).
    Approve(approve::ApproveArgs),
    /// Prizes remaining in the units not yet sold: per lot or prize band,
    /// per emission and block.
    Remaining(remaining::Args),
    /// What has been redeemed: per block counts, amounts and the ledger digest.
    Ledger(redeem::LedgerArgs),
    /// The PAR sheet of a game: return to player, hit frequency, odds of
    /// every prize, stopping strategies and optimal play, with cross-checks.
    Par(par::Args),
    /// The auditor's kit: every test a lab certifies on an emission's
    /// blocks (and its ledger), written as report.html, report.json, each
    /// block's outcomes and SHA256SUMS.
    Audit(audit::Args),
    /// Serve redemption over HTTP (docs/API.md).
    Serve(serve::Args),
    /// Every emission of the store: game, blocks, prices, state, redemptions.
    Status(status::Args),
    /// Close an emission: no more blocks may be added.
    Close(emission::CloseArgs),
    /// Reveal a closed emission's block seeds (and records key), once its
    /// end of claims is published in the ledger.
    Reveal(emission::RevealArgs),
    /// End an emission's claim period: publish a statement signed with the
    /// issuer's key into the ledger; every node then refuses its units.
    EndClaims(emission::EndClaimsArgs),
    /// Write a revealed block's raw ChaCha20 stream (the RNG's output before
    /// any draw), for a test lab's statistical suites (dieharder, PractRand,
    /// TestU01).
    RngStream(rng_stream::Args),
    /// Manage keys.
    #[command(subcommand)]
    Keys(emission::KeysCommand),
    /// A party's share of the seed key of an emission made from shares
    /// (docs/EMISSIONS.md §A seed no one party controls).
    #[command(subcommand)]
    Share(shares::ShareCommand),
    /// Begin an emission made from shares: record the parties' commitments.
    #[command(subcommand)]
    Emission(shares::EmissionCommand),
    /// Run the whole job on the default store: generate a demo emission,
    /// verify it, export a unit and redeem one.
    Demo(demo::Args),
    /// A C2SP transparency-log witness: its key and its service
    /// (docs/REDEMPTION.md §Witnesses).
    #[command(subcommand)]
    Witness(witness::WitnessCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionArgs),
    /// Print the manual page (roff) to stdout: `issuer man > issuer.1`;
    /// with `--dir DIR`, write it and a page per command (issuer-generate.1, …).
    Man(completions::ManArgs),
}

impl Command {
    /// Whether the command was asked for JSON output: its errors are then
    /// printed as a JSON error object on stdout too.
    fn wants_json(&self) -> bool {
        match self {
            Command::Generate(a) => a.json,
            Command::Verify(a) => a.json,
            Command::Show(a) => a.json,
            Command::Redeem(a) => a.json,
            Command::Sell(a) => a.json,
            Command::MarkSold(a) => a.json,
            Command::Play(a) => a.json,
            Command::Suspend(a) | Command::Resume(a) | Command::Withdraw(a) => a.actor.json,
            Command::Void(a) => a.actor.json,
            Command::Remaining(a) => a.json,
            Command::ApproverKey(a) => a.json,
            Command::DualControl(a) => a.json,
            Command::Approve(_) => false,
            Command::Ledger(a) => a.json,
            Command::Serve(a) => a.json,
            Command::Status(a) => a.json,
            Command::Par(a) => a.json,
            Command::Audit(a) => a.json,
            Command::EndClaims(a) => a.json,
            Command::Keygen(a) => a.json,
            Command::Export(a) => a.json,
            Command::Close(a) => a.json,
            Command::Reveal(a) => a.json,
            Command::RngStream(a) => a.json,
            Command::Keys(emission::KeysCommand::ExportRecordsKey { json, .. }) => *json,
            Command::Share(shares::ShareCommand::New(a)) => a.json,
            Command::Share(shares::ShareCommand::Commit(a)) => a.json,
            Command::Emission(shares::EmissionCommand::Commit(a)) => a.json,
            Command::Demo(a) => a.json,
            Command::Witness(w) => w.json(),
            // Their output is a script or a manual page.
            Command::Completions(_) | Command::Man(_) => false,
        }
    }
}

/// Parses the command line, runs it, prints errors; returns the exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        // The reader of our output went away (`issuer export … | head`):
        // not an error of ours, and nothing is left to say.
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            // A refusal keeps its exit code even when nobody reads it.
            if cli.command.wants_json() {
                use std::io::Write;
                let _ = writeln!(std::io::stdout(), "{}", json_line("error", &e.report()));
            }
            eprintln!("error: {e}");
            exit::exit_code(e.kind())
        }
    }
}

/// Runs a parsed command line; `Ok` carries the exit code of a command
/// that completed (1 when its checks failed).
pub fn run(cli: &Cli) -> Result<i32, Error> {
    let store = Store::new(&cli.store);
    match &cli.command {
        Command::Keygen(args) => keygen::run(&store, args),
        Command::Generate(args) => generate::run(&store, args),
        Command::Verify(args) => verify::run(&store, args),
        Command::Export(args) => inspect::export(&store, args),
        Command::Show(args) => inspect::show(&store, args),
        Command::Redeem(args) => redeem::run(&store, args),
        Command::Sell(args) => sale::sell(&store, args),
        Command::MarkSold(args) => sale::mark_sold(&store, args),
        Command::Play(args) => sale::play(&store, args),
        Command::Suspend(args) => operator::control(&store, Action::Suspend, args),
        Command::Resume(args) => operator::control(&store, Action::Resume, args),
        Command::Withdraw(args) => operator::control(&store, Action::Withdraw, args),
        Command::Void(args) => operator::void(&store, args),
        Command::Remaining(args) => remaining::run(&store, args),
        Command::ApproverKey(args) => approve::key(args),
        Command::DualControl(args) => approve::config(&store, args),
        Command::Approve(args) => approve::approve(args),
        Command::Ledger(args) => redeem::ledger(&store, args),
        Command::Serve(args) => serve::run(&store, args),
        Command::Status(args) => status::run(&store, args),
        Command::Par(args) => par::run(&store, args),
        Command::Audit(args) => audit::run(&store, args),
        Command::Close(args) => emission::close(&store, args),
        Command::Reveal(args) => emission::reveal(&store, args),
        Command::EndClaims(args) => emission::end_claims(&store, args),
        Command::RngStream(args) => rng_stream::run(&store, args),
        Command::Keys(cmd) => emission::keys(&store, cmd),
        Command::Share(cmd) => shares::share(&store, cmd),
        Command::Emission(cmd) => shares::emission(&store, cmd),
        Command::Demo(args) => demo::run(&store, args),
        Command::Witness(cmd) => witness::run(cmd),
        Command::Completions(args) => completions::completions(args, Cli::command()),
        Command::Man(args) => completions::man(args, Cli::command()),
    }
}
