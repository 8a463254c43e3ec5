//! The `issuer` command line: argument parsing (clap) and one small module
//! per subcommand; each calls the library and prints. Errors are mapped to
//! exit codes here, by kind (README §Exit codes, docs/CLI.md).

#[macro_use]
mod out;

mod approve;
mod audit;
mod completions;
mod demo;
mod emission;
mod generate;
mod inspect;
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

use clap::{Parser, Subcommand};
use ed25519_dalek::VerifyingKey;
use serde::Serialize;

use ticket_issuer::error::{Error, ErrorKind};
use ticket_issuer::ledger::operator::Action;
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::records_key::{KeyAccess, RecordsKeyFile};
use ticket_issuer::store::{Secrets, Store, DEFAULT_STORE};

/// Exit status: done, every check passed.
pub const EXIT_OK: i32 = 0;
/// Exit status: a check failed or could not be made, or the request was
/// refused (not found, conflict, gone, rejected).
pub const EXIT_REFUSED: i32 = 1;
/// Exit status: bad usage or unreadable input.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit status: the system could not do it now (I/O failure, full disk,
/// busy); nothing was half-done: retry once the cause is fixed.
pub const EXIT_UNAVAILABLE: i32 = 3;
/// Exit status: an internal fault of the tool.
pub const EXIT_INTERNAL: i32 = 4;

/// The version of every `--json` output's shape (docs/CLI.md).
pub const JSON_SCHEMA: u32 = 1;

/// The exit status of an error of `kind`. No default arm: a new kind must
/// be given its exit status here.
pub fn exit_code(kind: ErrorKind) -> i32 {
    match kind {
        ErrorKind::InvalidInput => EXIT_BAD_INPUT,
        ErrorKind::NotFound | ErrorKind::Conflict | ErrorKind::Gone | ErrorKind::Rejected => {
            EXIT_REFUSED
        }
        ErrorKind::Unavailable => EXIT_UNAVAILABLE,
        ErrorKind::Internal => EXIT_INTERNAL,
    }
}

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
    /// Play a sold Trésors Ensablés unit one roll at a time, or stop.
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
    ApproverKey(approve::KeyArgs),
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
            exit_code(e.kind())
        }
    }
}

/// Runs a parsed command line; `Ok` carries the exit code of a command
/// that completed (1 when its checks failed).
pub fn run(cli: &Cli) -> Result<i32, Error> {
    let store = Store::new(&cli.store);
    match &cli.command {
        Command::Keygen(args) => {
            store.keygen()?;
            if args.json {
                #[derive(serde::Serialize)]
                struct Made {
                    keys: String,
                    public_key: String,
                }
                print_json(
                    "keygen",
                    &Made {
                        keys: store.keys_dir().display().to_string(),
                        public_key: store.public_key_path().display().to_string(),
                    },
                );
            } else {
                outln!(
                    "created issuer keys in {} (public key: {})",
                    store.keys_dir().display(),
                    store.public_key_path().display()
                );
            }
            Ok(0)
        }
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
        Command::Completions(args) => completions::completions(args),
        Command::Man(args) => completions::man(args),
    }
}

/// `--json` alone.
#[derive(clap::Args, Debug, Clone)]
pub struct JsonArg {
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Which ledger to use (docs/REDEMPTION.md §PostgreSQL).
#[derive(clap::Args, Debug, Clone)]
pub struct LedgerArg {
    /// A shared PostgreSQL ledger (postgres://USER[:PASSWORD]@HOST[:PORT]/DB);
    /// default: the SQLite ledger in the store.
    #[arg(long = "ledger", env = "ISSUER_LEDGER", value_name = "URL")]
    pub url: Option<String>,
}

impl LedgerArg {
    /// The ledger named.
    pub fn target(&self, store: &Store) -> Result<LedgerTarget, Error> {
        LedgerTarget::new(store, self.url.as_deref())
    }
}

/// A client's idempotency key (docs/API.md §Idempotency).
#[derive(clap::Args, Debug, Clone)]
pub struct IdempotencyArg {
    /// Do this once under KEY: run again with the same KEY and the same
    /// request, it answers what the first run did (after a lost answer or
    /// `ledger_outcome_unknown`); the same KEY with another request is
    /// refused (`idempotency_key_reused`). 1 to 128 of A-Z a-z 0-9 - _ . :
    #[arg(long = "idempotency-key", value_name = "KEY")]
    pub key: Option<String>,
}

/// The envelope of every `--json` output: its kind and schema version
/// first, then the report's own fields (docs/CLI.md).
#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    kind: &'a str,
    schema: u32,
    #[serde(flatten)]
    body: &'a T,
}

/// Prints `body` as one line of JSON on stdout, as a report of `kind`.
/// Always on standard output, even when the command's words go to
/// standard error (`demo --json`).
pub(crate) fn print_json<T: Serialize>(kind: &str, body: &T) {
    let mut line = json_line(kind, body);
    line.push('\n');
    out::bytes(line.as_bytes());
}

/// `body` as indented JSON, a report of `kind` (a file people read).
pub(crate) fn json_pretty<T: Serialize>(kind: &str, body: &T) -> String {
    let envelope = Envelope {
        kind,
        schema: JSON_SCHEMA,
        body,
    };
    serde_json::to_string_pretty(&envelope).expect("reports serialise") + "\n"
}

/// `body` as one line of JSON, a report of `kind`.
fn json_line<T: Serialize>(kind: &str, body: &T) -> String {
    let envelope = Envelope {
        kind,
        schema: JSON_SCHEMA,
        body,
    };
    serde_json::to_string(&envelope).expect("reports serialise")
}

/// `--game`: any text, refused by the command with the known games when
/// it names none (`unknown_game`); its possible values (every game
/// registered) are what help and shell completions offer.
#[derive(Clone, Copy, Debug)]
pub struct GameSlug;

impl clap::builder::TypedValueParser for GameSlug {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            ticket_issuer::game::Game::all().map(|g| clap::builder::PossibleValue::new(g.slug())),
        ))
    }
}

/// The key options shared by every command that reads a block.
#[derive(clap::Args, Debug)]
pub struct KeyArgs {
    /// The issuer's public key (SPKI PEM); default: the store's.
    #[arg(long)]
    pub public_key: Option<PathBuf>,
    /// A records key file (`issuer keys export-records-key`), a reveal file
    /// (its emission's key), or a folder of them, for an auditor or a
    /// redemption service without the issuer's master secret; repeat it for
    /// several emissions (each block uses the file for its emission).
    #[arg(long, value_name = "FILE|DIR")]
    pub records_key: Vec<PathBuf>,
}

/// A redeemer of `store` with the keys of `keys` on the ledger `ledger`
/// names: what `sell`, `play`, `redeem`, the operator's commands and
/// `remaining` work through.
fn redeemer(
    store: &Store,
    keys: &KeyArgs,
    ledger: &LedgerArg,
) -> Result<ticket_issuer::Redeemer, Error> {
    let keys = LoadedKeys::load(store, keys)?;
    Ok(
        ticket_issuer::Redeemer::new(store.clone(), keys.owned())
            .with_ledger(ledger.target(store)?),
    )
}

/// The keys a command works with: the trusted public key, the store's
/// secrets if it has them, and a records key file if one was given.
struct LoadedKeys {
    trusted: VerifyingKey,
    secrets: Option<Secrets>,
    files: Vec<(RecordsKeyFile, PathBuf)>,
}

impl LoadedKeys {
    fn load(store: &Store, args: &KeyArgs) -> Result<LoadedKeys, Error> {
        let trusted = match &args.public_key {
            Some(path) => ticket_issuer::seal::read_public(path)?,
            None => store.public_key()?,
        };
        // An auditor's store has the public key only.
        let secrets = match store.master_path().exists() {
            true => Some(store.secrets()?),
            false => None,
        };
        let mut files = Vec::new();
        for path in &args.records_key {
            files.extend(ticket_issuer::records_key::read_key_files(path)?);
        }
        Ok(LoadedKeys {
            trusted,
            secrets,
            files,
        })
    }

    /// The keys, owned, for a long-lived redeemer.
    fn owned(self) -> ticket_issuer::OwnedKeys {
        ticket_issuer::OwnedKeys {
            public_key: self.trusted,
            secrets: self.secrets,
            records_keys: self.files,
        }
    }

    fn access(&self) -> KeyAccess<'_> {
        KeyAccess {
            secrets: self.secrets.as_ref(),
            files: &self.files,
        }
    }
}
