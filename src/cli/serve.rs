//! `issuer serve`: redemption over HTTP (docs/API.md).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use ticket_issuer::witness::note::Vkey;

use std::sync::Arc;
use ticket_issuer::error::Error;

use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::redeem::Redeemer;
use ticket_issuer::routing::Routes;
use ticket_issuer::service::{self, ServiceConfig};
use ticket_issuer::store::Store;

use super::args::{KeyArgs, LedgerArg, LoadedKeys};
use super::json::print_json;

/// Arguments of `serve`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Address and port to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:8443")]
    pub listen: SocketAddr,
    /// Say `listening` as a JSON line (`{"kind":"listening","url":…}`),
    /// and a failure to start as the JSON error object.
    #[arg(long)]
    pub json: bool,
    /// The bearer tokens, one a line; the file must be mode 0600.
    #[arg(long, value_name = "FILE")]
    pub token_file: PathBuf,
    /// TLS certificate chain (PEM): serve HTTPS.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Listen on a non-loopback address without TLS (behind a TLS proxy).
    #[arg(long)]
    pub allow_plain_http: bool,
    /// Answer /healthz (liveness) and /readyz (readiness: the ledger
    /// answers) without a token, for load balancers that send none.
    #[arg(long)]
    pub public_health: bool,
    /// Answer /v1/log/checkpoint and /v1/log/tile/… (the ledger's log as
    /// C2SP tlog-tiles) without a token, for anyone to mirror and check;
    /// without it they need a token of any role.
    #[arg(long)]
    pub public_log: bool,
    /// Serve the reference player page at /player/ (loopback addresses
    /// only): it buys, plays and redeems through this API and shows an
    /// outcome only once it has checked it against the block's seal, with
    /// this node's public key pinned in it (docs/API.md §A client that
    /// checks what it shows).
    #[arg(long)]
    pub player_page: bool,
    /// Write a JSON line a request (time, method, route, status, latency,
    /// token name, unit ID, error code; never a token) to FILE (appended,
    /// 0600), or to standard error with `-`.
    #[arg(long, value_name = "FILE")]
    pub access_log: Option<PathBuf>,
    /// Most connections open at once; one more is closed at once (keep it
    /// below the process's descriptor limit, `ulimit -n`).
    #[arg(long, value_name = "N", default_value_t = service::Limits::default().max_connections)]
    pub max_connections: usize,
    /// Most requests handled at once; one more is answered 503
    /// `overloaded` with Retry-After at once.
    #[arg(long, value_name = "N", default_value_t = service::Limits::default().max_in_flight)]
    pub max_in_flight: usize,
    /// Seconds a connection may take to send a request's headers (a
    /// connection that sends nothing is closed after it).
    #[arg(long, value_name = "SECONDS", default_value_t = service::Limits::default().header_seconds)]
    pub header_timeout: u64,
    /// Seconds a request's body may take to arrive once its headers are
    /// in (past it: 408 `body_timeout`, the connection closed).
    #[arg(long, value_name = "SECONDS", default_value_t = service::Limits::default().body_seconds)]
    pub body_timeout: u64,
    /// Watch each game's K highest lots (or prize bands) on sale:
    /// `/metrics` shows how many units still on sale hold one, and flags a
    /// game and price whose top lots are all sold while units remain.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub alert_top_lots: Option<u32>,
    /// With --alert-top-lots: suspend every block on sale of a game and
    /// price whose top lots are all sold (an operator action in the
    /// ledger, by `top-lots-watch`; `issuer resume` or `withdraw` after).
    #[arg(long, requires = "alert_top_lots")]
    pub stop_selling_when_top_lots_gone: bool,
    /// With --alert-top-lots: seconds between two computations of the
    /// figures (also computed at once after this node sells a top lot).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, requires = "alert_top_lots",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub top_lots_every: u64,
    /// A witness to submit the log's checkpoints to: its URL (the prefix
    /// of its `add-checkpoint`) and its verifier key (C2SP vkey, as
    /// `issuer witness vkey` prints it). Repeat for each witness.
    #[arg(long, num_args = 2, value_names = ["URL", "VKEY"], action = clap::ArgAction::Append)]
    pub witness: Vec<String>,
    /// With --witness: cosignatures a checkpoint needs (default: every
    /// witness's).
    #[arg(long, value_name = "K", requires = "witness")]
    pub witness_quorum: Option<usize>,
    /// With --witness: what the node publishes while a checkpoint lacks its
    /// quorum: `closed`, only the latest witnessed checkpoint (and the
    /// tiles under it); `open`, the latest checkpoint, cosigned or not.
    #[arg(long, value_name = "closed|open", default_value = "closed", requires = "witness",
          value_parser = ["closed", "open"])]
    pub witness_policy: String,
    /// With --witness: seconds between two submissions of the latest head.
    #[arg(long, value_name = "SECONDS", default_value_t = 5, requires = "witness",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub witness_every: u64,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// The ledger (any number of nodes may share one PostgreSQL ledger).
    #[command(flatten)]
    pub ledger: LedgerArg,
    /// Several PostgreSQL ledgers: a routing table naming them and the
    /// one ledger each emission goes through (docs/REDEMPTION.md §Several
    /// ledgers); a unit of an emission it routes nowhere is refused.
    #[arg(long, value_name = "FILE", conflicts_with = "url")]
    pub ledger_routes: Option<PathBuf>,
}

/// The witnesses of `--witness` and the quorum policy.
fn witnessing(args: &Args) -> Result<Option<service::WitnessingConfig>, Error> {
    if args.witness.is_empty() {
        return Ok(None);
    }
    let witnesses = args
        .witness
        .chunks(2)
        .map(|pair| {
            let vkey = Vkey::parse(&pair[1]).map_err(|e| Error::ServiceConfig {
                reason: format!("--witness {} {}: {e}", pair[0], pair[1]),
            })?;
            Ok((pair[0].clone(), vkey))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let k = args.witness_quorum.unwrap_or(witnesses.len());
    service::WitnessingConfig::new(
        witnesses,
        k,
        args.witness_policy == "open",
        std::time::Duration::from_secs(args.witness_every),
    )
    .map(Some)
}

/// Runs `serve` until SIGTERM.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let tokens = service::read_tokens(&args.token_file)?;
    let keys = LoadedKeys::load(store, &args.keys)?;
    let witnessing = witnessing(args)?;
    let config = ServiceConfig {
        listen: args.listen,
        tokens,
        token_file: Some(args.token_file.clone()),
        access_log: args.access_log.clone(),
        tls: args.tls_cert.clone().zip(args.tls_key.clone()),
        allow_plain_http: args.allow_plain_http,
        public_health: args.public_health,
        public_log: args.public_log,
        player_page: args.player_page,
        witnessing,
        top_lots: args.alert_top_lots.map(|k| service::TopLotsConfig {
            k,
            stop_selling: args.stop_selling_when_top_lots_gone,
            every: std::time::Duration::from_secs(args.top_lots_every),
        }),
        limits: service::Limits {
            max_connections: args.max_connections.max(1),
            max_in_flight: args.max_in_flight.max(1),
            header_seconds: args.header_timeout.max(1),
            body_seconds: args.body_timeout.max(1),
        },
    };
    let scheme = if config.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let shared = args.ledger.url.is_some() || args.ledger_routes.is_some();
    let ledgers = match &args.ledger_routes {
        None => service::NodeLedgers::one(
            Redeemer::new(store.clone(), keys.owned()).with_ledger(args.ledger.target(store)?),
        ),
        Some(path) => service::NodeLedgers::routed(Arc::new(Routes::read(path)?), |_, url| {
            let target = LedgerTarget::new(store, Some(url))?;
            let keys = LoadedKeys::load(store, &args.keys)?;
            Ok(Redeemer::new(store.clone(), keys.owned()).with_ledger(target))
        })?,
    };
    for redeemer in ledgers.redeemers() {
        // A ledger restored from an older copy is served, so that /readyz
        // and /metrics say so, but every sale, play and payment is refused.
        if let Err(e @ Error::LedgerRolledBack { .. }) = redeemer.check_rollback() {
            eprintln!("serve: {e}");
        }
        // A shared ledger's write path (and its sequencer) opened at
        // start: a ledger key that is not the log's stops the node here; a
        // database not answering yet is retried by the first write.
        if shared {
            match redeemer.open_writer() {
                Err(e @ Error::BadKey { .. }) => return Err(e),
                Err(Error::LedgerRolledBack { .. }) | Ok(()) => {}
                Err(e) => eprintln!("serve: {e} (retried at the first write)"),
            }
        }
    }
    service::serve(ledgers, &config, |bound| {
        // Scripts and tests read the bound address (with port 0) from here.
        let url = format!("{scheme}://{bound}");
        if args.json {
            print_json("listening", &serde_json::json!({ "url": url }));
        } else {
            let _ = writeln!(std::io::stdout(), "listening on {url}");
        }
        let _ = std::io::stdout().flush();
        if args.player_page {
            eprintln!(
                    "serve: the player page is {url}/player/ (type a token of the token file into it, or open {url}/player/#token=TOKEN: the fragment stays in the browser)"
                );
        }
    })?;
    eprintln!("serve: stopped; every answered redemption is in the ledger");
    Ok(0)
}
