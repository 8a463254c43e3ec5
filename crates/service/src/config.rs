//! How the service is run (`issuer serve`): its configuration, its limits
//! and the waits every request is held to.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::cosigning::WitnessingConfig;
use crate::tokens::Token;
use crate::top_lots::TopLotsConfig;

/// Most units in one `POST /v1/redemptions/batch`.
pub const MAX_BATCH: usize = 1000;

/// How long a busy ledger is waited for before "unavailable, retry".
pub const LEDGER_WAIT: Duration = Duration::from_secs(1);

/// How long a write waits for its outcome before `ledger_outcome_unknown`
/// (docs/API.md §Retries): shorter than a platform's usual 30 s timeout,
/// and than the drain, so SIGTERM finds every answer given.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(8);

/// How the service is run (`issuer serve`).
pub struct ServiceConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The bearer tokens accepted ([`read_tokens`](crate::tokens::read_tokens)).
    pub tokens: Vec<Token>,
    /// The file they came from: read again on SIGHUP.
    pub token_file: Option<PathBuf>,
    /// Where the access log goes (a JSON line a request; `-`: standard
    /// error), if anywhere.
    pub access_log: Option<PathBuf>,
    /// PEM certificate chain and private key: serve HTTPS (rustls).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Listen on a non-loopback address without TLS.
    pub allow_plain_http: bool,
    /// Answer `/healthz` and `/readyz` without a token (for load balancers
    /// and orchestrators that send none).
    pub public_health: bool,
    /// Answer `/v1/log/…` (the log's checkpoint and tiles) without a token,
    /// for anyone to mirror and check.
    pub public_log: bool,
    /// Serve the reference player page under `/player/` (loopback only).
    pub player_page: bool,
    /// Watch each game's top lots (`--alert-top-lots`), if asked.
    pub top_lots: Option<TopLotsConfig>,
    /// Witnesses to collect cosignatures from (`--witness`), and the
    /// quorum policy.
    pub witnessing: Option<WitnessingConfig>,
    /// Bounds on connections and requests.
    pub limits: Limits,
}

/// What one node takes on at once (docs/API.md §Limits).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at once; one more is closed as it is accepted.
    pub max_connections: usize,
    /// Requests handled at once; one more is answered 503 `overloaded`.
    pub max_in_flight: usize,
    /// Seconds to send a request's headers (the first request's too).
    pub header_seconds: u64,
    /// Seconds to send a request's body, once its headers are in.
    pub body_seconds: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 1000,
            max_in_flight: 256,
            header_seconds: 10,
            body_seconds: 10,
        }
    }
}
