//! `issuer witness`: a C2SP transparency-log witness (docs/REDEMPTION.md
//! §Witnesses): its key (`keygen`, `vkey`) and its HTTP service (`serve`).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use ticket_issuer::error::Error;
use ticket_issuer::service;
use ticket_issuer::witness::cosignature::Cosigner;
use ticket_issuer::witness::note::Vkey;
use ticket_issuer::witness::state::StateDir;
use ticket_issuer::witness::{LogConfig, Witness};

/// The witness's subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum WitnessCommand {
    /// Make a witness key (Ed25519 PKCS#8 PEM, mode 0600; never
    /// overwritten) and print its verifier key.
    Keygen(WitnessKeyArgs),
    /// Print the witness's verifier key (`<name>+<key ID>+<key>`), what a
    /// log is configured with.
    Vkey(WitnessKeyArgs),
    /// Serve `POST /add-checkpoint` until SIGTERM or Ctrl-C.
    Serve(ServeArgs),
}

impl WitnessCommand {
    /// Whether `--json` was asked for.
    pub fn json(&self) -> bool {
        match self {
            WitnessCommand::Keygen(a) | WitnessCommand::Vkey(a) => a.json,
            WitnessCommand::Serve(a) => a.key.json,
        }
    }
}

/// The witness key.
#[derive(clap::Args, Debug)]
pub struct WitnessKeyArgs {
    /// The witness's private key file.
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// The witness's name in its signature lines (no space, no '+');
    /// default: ticket-issuer/witness/<first 8 bytes of SHA-256(public key), hex>.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `witness serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The key.
    #[command(flatten)]
    pub key: WitnessKeyArgs,
    /// A log to witness: its origin line and its verifier key (type 0x01,
    /// as `issuer ledger head --json` prints it); repeat for more logs.
    #[arg(long = "log", num_args = 2, value_names = ["ORIGIN", "VKEY"], required = true)]
    pub logs: Vec<String>,
    /// The folder of the witness's state (one file per log); default:
    /// `witness-state` beside the key file.
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// Address and port to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:7380")]
    pub listen: SocketAddr,
    /// Seconds a request's body may take to arrive once its headers are
    /// in (past it: 408, the connection closed).
    #[arg(long, value_name = "SECONDS", default_value_t = service::witness::BODY_SECONDS,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout: u64,
}

/// Runs a witness subcommand.
pub fn run(command: &WitnessCommand) -> Result<i32, Error> {
    match command {
        WitnessCommand::Keygen(args) => {
            let cosigner = Cosigner::generate(&args.key, args.name.as_deref())?;
            say(args.json, "witness_key", &args.key, cosigner.vkey());
            Ok(0)
        }
        WitnessCommand::Vkey(args) => {
            let cosigner = Cosigner::load(&args.key, args.name.as_deref())?;
            say(args.json, "witness_key", &args.key, cosigner.vkey());
            Ok(0)
        }
        WitnessCommand::Serve(args) => serve(args),
    }
}

fn say(json: bool, kind: &str, key: &std::path::Path, vkey: &Vkey) {
    if json {
        super::json::print_json(
            kind,
            &serde_json::json!({ "key": key.display().to_string(), "vkey": vkey.to_string() }),
        );
    } else {
        outln!("{vkey}");
    }
}

fn serve(args: &ServeArgs) -> Result<i32, Error> {
    let cosigner = Cosigner::load(&args.key.key, args.key.name.as_deref())?;
    let mut logs = Vec::new();
    for pair in args.logs.chunks(2) {
        let [origin, vkey] = pair else {
            unreachable!("clap takes --log's values two by two")
        };
        let key = Vkey::parse(vkey).map_err(|e| Error::ServiceConfig {
            reason: format!("--log {origin}: {e}"),
        })?;
        logs.push(LogConfig {
            origin: origin.clone(),
            key,
        });
    }
    let state = args.state.clone().unwrap_or_else(|| {
        args.key
            .key
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .join("witness-state")
    });
    let witness = Witness::new(cosigner, logs, StateDir::open(&state)?)?;
    let vkey = witness.cosigner().vkey().to_string();
    let json = args.key.json;
    let body_wait = std::time::Duration::from_secs(args.body_timeout);
    service::witness::serve(witness, args.listen, body_wait, |bound| {
        // Scripts and tests read the bound address (with port 0) from here.
        let url = format!("http://{bound}");
        if json {
            super::json::print_json(
                "listening",
                &serde_json::json!({ "url": url, "vkey": vkey }),
            );
        } else {
            let _ = writeln!(std::io::stdout(), "listening on {url}\nvkey {vkey}");
        }
        let _ = std::io::stdout().flush();
        eprintln!("witness: state in {}", state.display());
    })?;
    eprintln!("witness: stopped; every cosigned checkpoint is in its state");
    Ok(0)
}
