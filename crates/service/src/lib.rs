//! ticket-issuer's sales, plays and redemption as an HTTP service (docs/API.md): axum on tokio, rustls when
//! a certificate is given, bearer tokens compared in constant time, every
//! redemption through the one [`Redeemer`] (called off the async workers
//! with `spawn_blocking`), errors mapped to statuses by their kind, and
//! Prometheus metrics. SIGTERM (or Ctrl-C) drains in-flight requests.

#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{MatchedPath, Path as UrlPath, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use openapi::RouteDoc;
use tokens::{authorised, Needed};
pub use tokens::{read_tokens, Roles, Token};

mod cosigning;
mod health;
pub mod openapi;
mod operator;
pub mod player;
mod tokens;
mod top_lots;
pub mod witness;

pub use cosigning::WitnessingConfig;
use serde::{Deserialize, Serialize};
pub use top_lots::TopLotsConfig;

use ticket_issuer_core::error::{Error, ErrorKind};
use ticket_issuer_core::game::Game;
use ticket_issuer_core::money::Cents;
use ticket_issuer_core::unit_id::UnitId;
use ticket_issuer_ledger::ledger::log::LogSource;
use ticket_issuer_ledger::ledger::ops::PlayAction;
use ticket_issuer_ledger::ledger::published::{Publication, PublishedLog, Resource};
use ticket_issuer_ledger::redeem::Redemption;
use ticket_issuer_ledger::redeemer::{batch_parts, Asker, Redeemer, Window};

/// Most units in one `POST /v1/redemptions/batch`.
pub const MAX_BATCH: usize = 1000;

/// How long a busy ledger is waited for before "unavailable, retry".
pub const LEDGER_WAIT: Duration = Duration::from_secs(1);

/// How long SIGTERM waits for in-flight requests.
const DRAIN: Duration = Duration::from_secs(10);

/// How long a write waits for its outcome before `ledger_outcome_unknown`
/// (docs/API.md §Retries): shorter than a platform's usual 30 s timeout,
/// and than the drain, so SIGTERM finds every answer given.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(8);

/// Upper bounds (seconds) of the latency histogram's buckets.
const BUCKETS: [f64; 11] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// How the service is run (`issuer serve`).
pub struct ServiceConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The bearer tokens accepted ([`read_tokens`]).
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

/// Counters for `/metrics`.
#[derive(Default)]
struct Metrics {
    redemptions: AtomicU64,
    sales: AtomicU64,
    play_steps: AtomicU64,
    unauthorized: AtomicU64,
    refusals: Mutex<BTreeMap<&'static str, u64>>,
    /// Answers by (route as matched, method, status).
    answers: Mutex<BTreeMap<(String, String, u16), u64>>,
    /// Cents paid by this node's redemptions.
    paid_cents: AtomicU64,
    buckets: [AtomicU64; BUCKETS.len()],
    latency_count: AtomicU64,
    latency_micros: AtomicU64,
}

impl Metrics {
    /// A redemption paid `prize` euros.
    fn paid(&self, prize: &str) {
        let cents = Cents::parse_price(prize).unwrap_or(0);
        self.paid_cents
            .fetch_add(u64::from(cents), Ordering::Relaxed);
    }

    fn answered(&self, route: &str, method: &str, status: StatusCode) {
        *self
            .answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((route.to_string(), method.to_string(), status.as_u16()))
            .or_default() += 1;
    }

    fn refused(&self, code: &'static str) {
        *self
            .refusals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(code)
            .or_default() += 1;
    }

    fn observe(&self, took: Duration) {
        let secs = took.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        self.latency_micros
            .fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// Prometheus text exposition format 0.0.4.
    fn render(&self) -> String {
        let mut out = String::new();
        out += "# HELP issuer_redemptions_total Units redeemed (durable).\n";
        out += "# TYPE issuer_redemptions_total counter\n";
        out += &format!(
            "issuer_redemptions_total {}\n",
            self.redemptions.load(Ordering::Relaxed)
        );
        out += "# HELP issuer_sales_total Units sold (durable).\n";
        out += "# TYPE issuer_sales_total counter\n";
        out += &format!(
            "issuer_sales_total {}\n",
            self.sales.load(Ordering::Relaxed)
        );
        out += "# HELP issuer_play_steps_total Play steps (rolls, stops) answered.\n";
        out += "# TYPE issuer_play_steps_total counter\n";
        out += &format!(
            "issuer_play_steps_total {}\n",
            self.play_steps.load(Ordering::Relaxed)
        );
        out += "# HELP issuer_refusals_total Requests refused, by error kind.\n";
        out += "# TYPE issuer_refusals_total counter\n";
        for (code, n) in self
            .refusals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            out += &format!("issuer_refusals_total{{error=\"{code}\"}} {n}\n");
        }
        out += "# HELP issuer_unauthorized_total Requests refused for a missing or wrong token.\n";
        out += "# TYPE issuer_unauthorized_total counter\n";
        out += &format!(
            "issuer_unauthorized_total {}\n",
            self.unauthorized.load(Ordering::Relaxed)
        );
        out +=
            "# HELP issuer_request_duration_seconds Time to answer a request (sale, play step, redemption, batch, check, sale under a key).\n";
        out += "# TYPE issuer_request_duration_seconds histogram\n";
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            out += &format!(
                "issuer_request_duration_seconds_bucket{{le=\"{bound}\"}} {}\n",
                bucket.load(Ordering::Relaxed)
            );
        }
        let count = self.latency_count.load(Ordering::Relaxed);
        out += &format!("issuer_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}\n");
        out += &format!(
            "issuer_request_duration_seconds_sum {}\n",
            self.latency_micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        out += &format!("issuer_request_duration_seconds_count {count}\n");
        out += "# HELP issuer_http_requests_total Requests answered, by route (as matched; `unmatched` for none), method and status.\n";
        out += "# TYPE issuer_http_requests_total counter\n";
        for ((route, method, status), n) in self
            .answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            out += &format!(
                "issuer_http_requests_total{{route=\"{route}\",method=\"{method}\",status=\"{status}\"}} {n}\n"
            );
        }
        out += "# HELP issuer_paid_euros_total Amount this node's redemptions paid (durable), euros.\n";
        out += "# TYPE issuer_paid_euros_total counter\n";
        out += &format!(
            "issuer_paid_euros_total {}\n",
            Cents::from(self.paid_cents.load(Ordering::Relaxed))
        );
        out += "# HELP issuer_build_info The issuer's version (always 1).\n";
        out += "# TYPE issuer_build_info gauge\n";
        out += &format!(
            "issuer_build_info{{version=\"{}\"}} 1\n",
            env!("CARGO_PKG_VERSION")
        );
        out
    }
}

/// What every handler shares.
struct Shared {
    redeemer: Redeemer,
    /// The accepted tokens (replaced whole on SIGHUP).
    tokens: TokenSet,
    /// The access log, if one was asked for.
    access_log: Option<AccessLog>,
    metrics: Metrics,
    /// `/healthz` and `/readyz` need no token.
    public_health: bool,
    /// `/v1/log/…` needs no token.
    public_log: bool,
    /// The player page is served (its files need no token).
    player_page: bool,
    /// A slot per request handled at once (`max_in_flight`).
    in_flight: Arc<tokio::sync::Semaphore>,
    /// How long a request's body may take to arrive.
    body_wait: Duration,
    /// The top-lots watch, if asked for.
    top_lots: Option<Arc<top_lots::Watch>>,
    /// The collector of witnesses' cosignatures, if any are configured.
    cosigning: Option<Arc<cosigning::Cosigning>>,
    /// Prizes remaining as last computed (`GET /v1/remaining`).
    remaining: operator::RemainingCache,
    /// Whether the ledger answers, as last probed.
    health: Arc<health::LedgerHealth>,
}

type AppState = Arc<Shared>;

/// The HTTP status of an error kind.
#[must_use]
pub fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::InvalidInput => StatusCode::BAD_REQUEST,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::Gone => StatusCode::GONE,
        ErrorKind::Rejected => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// A JSON body with `kind` and `schema`.
#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    kind: &'a str,
    schema: u32,
    #[serde(flatten)]
    body: T,
}

fn json_response<T: Serialize>(status: StatusCode, kind: &str, body: T) -> Response {
    let text = serde_json::to_string(&Envelope {
        kind,
        schema: 1,
        body,
    })
    .unwrap_or_else(|e| {
        format!("{{\"kind\":\"error\",\"schema\":1,\"error\":\"internal\",\"message\":\"{e}\"}}")
    });
    let mut response = (status, text).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

/// A refusal as JSON, with its status; no server path in it. The node's
/// own configuration refused by its database is the server's fault (500),
/// not the request's.
fn error_response(e: &Error) -> Response {
    with_code(
        json_response(status_of_error(e), "error", e.client_report()),
        e.code(),
    )
}

/// The status of `e`'s answer.
fn status_of_error(e: &Error) -> StatusCode {
    match e {
        Error::LedgerLoginRefused { .. } | Error::EmissionOfAnotherLedger { .. } => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
        _ => status_of(e.kind()),
    }
}

/// A refusal as `asker` is answered it: a platform gets its [platform
/// report](Error::platform_report) (no file, host, user or ledger ID; the
/// node's standard error keeps the detail for the operator), the operator
/// the client report.
fn refused_to(asker: &Asker, e: &Error) -> Response {
    if !asker.is_platform() {
        return error_response(e);
    }
    if !e.speaks_to_platforms() {
        eprintln!("serve: answered {} to a platform: {e}", e.code());
    }
    with_code(
        json_response(status_of_error(e), "error", e.platform_report()),
        e.code(),
    )
}

/// `response`, marked with its error code for the access log.
fn with_code(mut response: Response, code: &'static str) -> Response {
    response.extensions_mut().insert(ErrorCode(code));
    response
}

/// A request the service can't read (not JSON, wrong fields, too many).
fn bad_request(error: &'static str, message: String) -> Response {
    #[derive(Serialize)]
    struct Bad<'a> {
        error: &'a str,
        category: ErrorKind,
        message: String,
    }
    with_code(
        json_response(
            StatusCode::BAD_REQUEST,
            "error",
            Bad {
                error,
                category: ErrorKind::InvalidInput,
                message,
            },
        ),
        error,
    )
}

/// One unit to redeem.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UnitRequest {
    id: String,
    #[serde(default)]
    stopped_after_rolls: Option<u32>,
}

/// A batch to redeem.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchRequest {
    units: Vec<UnitRequest>,
}

/// `?stopped_after_rolls=N` of a check.
#[derive(Deserialize)]
struct CheckQuery {
    stopped_after_rolls: Option<u32>,
}

/// `?receipt=true` of a sale or a redemption: the answer carries the
/// entry's receipt (docs/REDEMPTION.md §Receipts); without it, nothing
/// more is read. Other parameters are left alone, as before.
#[derive(Deserialize)]
struct ReceiptQuery {
    #[serde(default)]
    receipt: bool,
}

/// `?receipt=` of a sale or a redemption (false when absent); a value
/// other than `true` or `false` is refused as our error object (`400
/// invalid_request`).
struct ReceiptAsked(bool);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for ReceiptAsked {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<ReceiptAsked, ApiError> {
        <Query<ReceiptQuery> as axum::extract::FromRequestParts<S>>::from_request_parts(
            parts, state,
        )
        .await
        .map(|Query(q)| ReceiptAsked(q.receipt))
        .map_err(|_| ApiError::Request {
            code: "invalid_request",
            message: "the query is not ?receipt=true or ?receipt=false".into(),
        })
    }
}

/// Why a request is not answered with its work's result: the request
/// itself is malformed (400, its code), or the library refused or failed
/// (the error's own status and object). One `IntoResponse` for every
/// handler and extractor.
enum ApiError {
    /// A malformed request: a body not of the route's shape.
    Request { code: &'static str, message: String },
    /// What the library refused or failed with.
    Failed(Error),
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        ApiError::Failed(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::Request { code, message } => bad_request(code, message),
            ApiError::Failed(e) => error_response(&e),
        }
    }
}

/// A request body's expected shape, for the refusal of another.
trait Shape {
    /// The shape, as the refusal names it.
    const SHAPE: &'static str;
}

impl Shape for UnitRequest {
    const SHAPE: &'static str = r#"{"id": …, "stopped_after_rolls": …}"#;
}

impl Shape for BatchRequest {
    const SHAPE: &'static str = r#"{"units": [{"id": …}, …]}"#;
}

impl Shape for SaleRequest {
    const SHAPE: &'static str = r#"{"game": …, "price": …}"#;
}

impl Shape for RollRequest {
    const SHAPE: &'static str = r#"{"roll": <the roll asked, from 1>}"#;
}

/// A JSON body of the route's shape; any other is refused as our error
/// object (`400 invalid_request`), never axum's plain text.
struct JsonBody<T>(T);

impl<T, S> axum::extract::FromRequest<S> for JsonBody<T>
where
    T: serde::de::DeserializeOwned + Shape,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<JsonBody<T>, ApiError> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|e| ApiError::Request {
                code: "invalid_request",
                message: format!("the body could not be read: {}", e.body_text()),
            })?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|e| ApiError::Request {
                code: "invalid_request",
                message: format!("the body is not {}: {e}", T::SHAPE),
            })
    }
}

/// The `Idempotency-Key` header, if any; one that is not visible ASCII is
/// refused (`bad_idempotency_key`).
struct IdempotencyKey(Option<String>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for IdempotencyKey {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<IdempotencyKey, ApiError> {
        Ok(IdempotencyKey(idempotency_key(&parts.headers)?))
    }
}

/// The `Idempotency-Key` header, if any (docs/API.md §Idempotency).
fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, Error> {
    headers
        .get("idempotency-key")
        .map(|v| {
            v.to_str()
                .map(str::to_string)
                .map_err(|_| Error::BadIdempotencyKey {
                    key: String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    reason: "it is not visible ASCII".into(),
                })
        })
        .transpose()
}

/// Runs `work` on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Response> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        error_response(&Error::Internal {
            what: format!("a redemption task failed: {e}"),
        })
    })
}

/// Counts and answers one unit's outcome, for `asker`.
fn outcome_response<T: Serialize>(
    state: &Shared,
    asker: &Asker,
    kind: &str,
    outcome: Result<T, Error>,
) -> Response {
    match outcome {
        Ok(r) => {
            let counter = match kind {
                "redemption" => Some(&state.metrics.redemptions),
                "sale" => Some(&state.metrics.sales),
                "play" => Some(&state.metrics.play_steps),
                _ => None,
            };
            if let Some(c) = counter {
                c.fetch_add(1, Ordering::Relaxed);
            }
            json_response(StatusCode::OK, kind, r)
        }
        Err(e) => {
            state.metrics.refused(e.code());
            refused_to(asker, &e)
        }
    }
}

async fn redeem_one(
    State(state): State<AppState>,
    Asking(asker): Asking,
    IdempotencyKey(key): IdempotencyKey,
    ReceiptAsked(with_receipt): ReceiptAsked,
    JsonBody(request): JsonBody<UnitRequest>,
) -> Response {
    let started = Instant::now();
    let id: UnitId = match request.id.parse() {
        Ok(id) => id,
        Err(e) => return outcome_response::<Redemption>(&state, &asker, "redemption", Err(e)),
    };
    if let Some(refused) = ledger_down(&state, &asker, "redemption") {
        return refused;
    }
    let worker = Arc::clone(&state);
    let seen = asker.clone();
    let outcome = match bounded_work(&state, move || {
        let window = worker.redeemer.window(seen);
        let r = window.redeem(&id, request.stopped_after_rolls, key.as_deref())?;
        if with_receipt {
            return window.with_receipt(r);
        }
        Ok(r)
    })
    .await
    {
        Ok(o) => o,
        Err(r) => return r,
    };
    if let Ok(r) = &outcome {
        state.metrics.paid(&r.prize);
    }
    let response = outcome_response(&state, &asker, "redemption", outcome);
    state.metrics.observe(started.elapsed());
    response
}

async fn redeem_batch(
    State(state): State<AppState>,
    Asking(asker): Asking,
    IdempotencyKey(key): IdempotencyKey,
    JsonBody(request): JsonBody<BatchRequest>,
) -> Response {
    let started = Instant::now();
    if request.units.len() > MAX_BATCH {
        return bad_request(
            "batch_too_large",
            format!(
                "{} units in one batch; at most {MAX_BATCH}",
                request.units.len()
            ),
        );
    }
    // Each unit stands alone: a malformed ID is its own result.
    let parsed: Vec<Result<(UnitId, Option<u32>), Error>> = request
        .units
        .iter()
        .map(|u| u.id.parse().map(|id| (id, u.stopped_after_rolls)))
        .collect();
    let valid: Vec<(UnitId, Option<u32>)> = parsed
        .iter()
        .filter_map(|p| p.as_ref().ok().copied())
        .collect();
    let request = batch_parts(
        request
            .units
            .iter()
            .map(|u| (u.id.as_str(), u.stopped_after_rolls)),
    );
    if let Some(refused) = ledger_down(&state, &asker, "redemption_batch") {
        return refused;
    }
    let worker = Arc::clone(&state);
    let seen = asker.clone();
    let redeemed = match bounded_work(&state, move || {
        worker
            .redeemer
            .window(seen)
            .redeem_batch(&valid, key.as_deref().map(|k| (k, request.as_str())))
    })
    .await
    {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            state.metrics.refused(e.code());
            return refused_to(&asker, &e);
        }
        Err(r) => return r,
    };
    let mut redeemed = redeemed.into_iter();
    let mut results = Vec::with_capacity(parsed.len());
    for p in parsed {
        let outcome = match p {
            Ok(_) => redeemed.next().unwrap_or_else(|| {
                Err(Error::Internal {
                    what: "a batch unit got no outcome".into(),
                })
            }),
            Err(e) => Err(e),
        };
        let value = match outcome {
            Ok(r) => {
                state.metrics.redemptions.fetch_add(1, Ordering::Relaxed);
                state.metrics.paid(&r.prize);
                serde_json::to_value(Envelope {
                    kind: "redemption",
                    schema: 1,
                    body: r,
                })
            }
            Err(e) => {
                state.metrics.refused(e.code());
                serde_json::to_value(Envelope {
                    kind: "error",
                    schema: 1,
                    body: if asker.is_platform() {
                        e.platform_report()
                    } else {
                        e.client_report()
                    },
                })
            }
        };
        results.push(value.unwrap_or_default());
    }
    state.metrics.observe(started.elapsed());
    #[derive(Serialize)]
    struct Batch {
        results: Vec<serde_json::Value>,
    }
    json_response(StatusCode::OK, "redemption_batch", Batch { results })
}

async fn check_unit(
    State(state): State<AppState>,
    Asking(asker): Asking,
    UrlPath(id): UrlPath<String>,
    query: Result<Query<CheckQuery>, QueryRejection>,
) -> Response {
    let Ok(Query(query)) = query else {
        return bad_request(
            "invalid_request",
            "the query is not ?stopped_after_rolls=<number of rolls>".into(),
        );
    };
    answer(state, asker, "check", move |w| {
        w.check(&id.parse()?, query.stopped_after_rolls)
    })
    .await
}

/// `POST /v1/sales` body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SaleRequest {
    game: String,
    /// Euros, as a decimal string or number ("1", 0.5); optional where the
    /// game has one price.
    #[serde(default)]
    price: Option<serde_json::Value>,
}

/// `POST /v1/plays/{id}/roll` body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RollRequest {
    /// The roll asked for, from 1: the next one, or one already revealed
    /// (a retry).
    roll: u32,
}

/// Runs `work` on `asker`'s window off the async threads, then answers
/// its outcome as `kind`: every answer to a token is built through a
/// [`Window`], so what it may learn is decided in one place.
async fn answer<T: Serialize + Send + 'static>(
    state: AppState,
    asker: Asker,
    kind: &'static str,
    work: impl FnOnce(&Window) -> Result<T, Error> + Send + 'static,
) -> Response {
    let started = Instant::now();
    if let Some(refused) = ledger_down(&state, &asker, kind) {
        return refused;
    }
    let worker = Arc::clone(&state);
    let seen = asker.clone();
    let outcome = match bounded_work(&state, move || work(&worker.redeemer.window(seen))).await {
        Ok(o) => o,
        Err(r) => return r,
    };
    let response = outcome_response(&state, &asker, kind, outcome);
    state.metrics.observe(started.elapsed());
    response
}

/// `work` off the async threads, its outcome waited for at most
/// [`ANSWER_WITHIN`] and a second: a read or write held by a ledger that
/// stopped answering is answered `ledger_outcome_unknown` then (it may yet
/// be recorded; the task is left to end when the ledger answers).
async fn bounded_work<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<Result<T, Error>, Response> {
    match tokio::time::timeout(ANSWER_WITHIN + Duration::from_secs(1), blocking(work)).await {
        Ok(done) => done,
        Err(_) => Ok(Err(Error::LedgerOutcomeUnknown {
            path: PathBuf::from(state.redeemer.ledger().describe()),
            reason: format!(
                "no outcome within {} s: the ledger does not answer; the operation may yet be recorded: retry it under the same idempotency key, or look it up",
                (ANSWER_WITHIN + Duration::from_secs(1)).as_secs()
            ),
        })),
    }
}

/// The answer to a request while the ledger does not answer the node's
/// probe (health.rs): refused at once, nothing recorded.
fn ledger_down(state: &AppState, asker: &Asker, kind: &str) -> Option<Response> {
    // A log that does not extend what was signed or witnessed answers no
    // platform from its stale rows (a unit sold since would read unsold);
    // the operator still reads them, to recover.
    if asker.own_units_only() {
        if let Some(finding) = state.redeemer.known_rollback() {
            let refused: Result<(), Error> = Err(Error::LedgerRolledBack {
                path: PathBuf::from(&finding.file),
                reason: finding.describe(),
            });
            return Some(outcome_response(state, asker, kind, refused));
        }
    }
    let down = state.health.down_for()?;
    let refused: Result<(), Error> = Err(Error::LedgerUnavailable {
        path: PathBuf::from(state.redeemer.ledger().describe()),
        reason: format!(
            "the ledger has not answered this node for {} s",
            down.as_secs()
        ),
    });
    Some(outcome_response(state, asker, kind, refused))
}

/// [`answer`] for an operator's route, whose work needs the whole
/// redeemer (the token middleware lets only the operator role through).
async fn answer_operator<T: Serialize + Send + 'static>(
    state: AppState,
    kind: &'static str,
    work: impl FnOnce(&Redeemer) -> Result<T, Error> + Send + 'static,
) -> Response {
    let started = Instant::now();
    if let Some(refused) = ledger_down(&state, &Asker::Operator, kind) {
        return refused;
    }
    let worker = Arc::clone(&state);
    let outcome = match bounded_work(&state, move || work(&worker.redeemer)).await {
        Ok(o) => o,
        Err(r) => return r,
    };
    let response = outcome_response(&state, &Asker::Operator, kind, outcome);
    state.metrics.observe(started.elapsed());
    response
}

async fn sell(
    State(state): State<AppState>,
    Asking(asker): Asking,
    IdempotencyKey(key): IdempotencyKey,
    ReceiptAsked(with_receipt): ReceiptAsked,
    JsonBody(request): JsonBody<SaleRequest>,
) -> Response {
    let price = request.price.map(|p| match p {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    });
    let watch = state.top_lots.clone();
    answer(state, asker, "sale", move |w| {
        let game = Game::from_slug(&request.game).ok_or_else(|| Error::UnknownGame {
            name: request.game.clone(),
            known: Game::known(),
        })?;
        let sale = w.sell(game, game.price_cents(price.as_deref())?, key.as_deref())?;
        if let (Some(watch), Some(shown)) = (&watch, &sale.first_shown) {
            watch.after_reveal(shown);
        }
        if with_receipt {
            return w.sale_with_receipt(sale);
        }
        Ok(sale)
    })
    .await
}

async fn sale_under_key(
    State(state): State<AppState>,
    Asking(asker): Asking,
    UrlPath(key): UrlPath<String>,
) -> Response {
    answer(state, asker, "sale_lookup", move |w| w.sale_under_key(&key)).await
}

/// A play step for `asker`; a step that ends the play reveals its outcome
/// (the top-lots watch is told).
async fn play_step(
    state: AppState,
    asker: Asker,
    id: String,
    action: PlayAction,
    key: Option<String>,
) -> Response {
    let watch = state.top_lots.clone();
    answer(state, asker, "play", move |w| {
        let view = w.play(&id.parse()?, action, key.as_deref())?;
        if let (Some(watch), Some(shown)) = (&watch, &view.first_shown) {
            watch.after_reveal(shown);
        }
        Ok(view)
    })
    .await
}

async fn roll(
    State(state): State<AppState>,
    Asking(asker): Asking,
    UrlPath(id): UrlPath<String>,
    IdempotencyKey(key): IdempotencyKey,
    JsonBody(request): JsonBody<RollRequest>,
) -> Response {
    play_step(state, asker, id, PlayAction::Roll(request.roll), key).await
}

async fn stop(
    State(state): State<AppState>,
    Asking(asker): Asking,
    UrlPath(id): UrlPath<String>,
    IdempotencyKey(key): IdempotencyKey,
) -> Response {
    play_step(state, asker, id, PlayAction::Stop, key).await
}

/// `GET /v1/receipts/{id}`: the receipts of the unit's sale and
/// redemption against the published checkpoint; the ID authenticated as
/// a check's is.
async fn receipts(
    State(state): State<AppState>,
    Asking(asker): Asking,
    UrlPath(id): UrlPath<String>,
) -> Response {
    answer(state, asker, "receipts", move |w| w.receipts(&id.parse()?)).await
}

async fn play_state(
    State(state): State<AppState>,
    Asking(asker): Asking,
    UrlPath(id): UrlPath<String>,
) -> Response {
    answer(state, asker, "play_state", move |w| {
        w.play_state(&id.parse()?)
    })
    .await
}

/// `GET /v1/plays/{id}/picture.svg`: the play drawn by its game as it
/// stands, never beyond the rolls revealed; refused as the play routes
/// refuse (JSON error objects).
async fn play_picture(
    State(state): State<AppState>,
    Asking(asker): Asking,
    UrlPath(id): UrlPath<String>,
) -> Response {
    let started = Instant::now();
    let worker = Arc::clone(&state);
    let seen = asker.clone();
    let drawn = blocking(move || -> Result<String, Error> {
        Ok(worker
            .redeemer
            .window(seen)
            .play_picture(&id.parse()?)?
            .svg())
    })
    .await;
    let response = match drawn {
        Ok(Ok(svg)) => ([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response(),
        Ok(Err(e)) => {
            state.metrics.refused(e.code());
            refused_to(&asker, &e)
        }
        Err(r) => r,
    };
    state.metrics.observe(started.elapsed());
    response
}

/// `GET /v1/blocks/{game}/{emission}/{block}`: the block's sealed header,
/// for a client that checks the seal and the root itself (public facts).
async fn block_seal(
    State(state): State<AppState>,
    Asking(asker): Asking,
    UrlPath((game, emission, block)): UrlPath<(String, String, String)>,
) -> Response {
    let (Ok(emission), Ok(block)) = (emission.parse::<u32>(), block.parse::<u32>()) else {
        return bad_request(
            "invalid_request",
            format!(
                "the emission and block are numbers, as in a unit ID: /v1/blocks/{game}/<emission>/<block>"
            ),
        );
    };
    answer(state, asker, "block_seal", move |w| {
        let game = Game::from_slug(&game).ok_or_else(|| Error::UnknownGame {
            name: game.clone(),
            known: Game::known(),
        })?;
        w.block_seal(game, emission, block)
    })
    .await
}

async fn ledger_head(State(state): State<AppState>) -> Response {
    let worker = Arc::clone(&state);
    match blocking(move || worker.redeemer.ledger().head()).await {
        Ok(Ok(Some(head))) => json_response(StatusCode::OK, "ledger_head", head),
        Ok(Ok(None)) => error_response(&Error::NotInLedger {
            what: "no signed head yet (nothing was redeemed)".into(),
        }),
        Ok(Err(e)) => error_response(&e),
        Err(r) => r,
    }
}

/// Where the log is served as C2SP tlog-tiles (docs/API.md §The log as
/// tiles): `checkpoint`, `tile/…`.
const LOG_PREFIX: &str = "/v1/log/";

/// Tiles and bundles: their path names immutable bytes.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// The log this node publishes ([`Redeemer::publication`]: its latest
/// head, or its latest witnessed one when its witnessing fails closed).
fn published<'s>(
    state: &Shared,
    source: &'s dyn LogSource,
) -> Result<Option<PublishedLog<'s>>, Error> {
    state.redeemer.publication().of(source)
}

/// `GET /v1/log/checkpoint`: the published head as a signed note (with
/// its witnesses' cosignatures once collected).
async fn log_checkpoint(State(state): State<AppState>) -> Response {
    let worker = Arc::clone(&state);
    let note = blocking(move || {
        // Never a checkpoint older than one signed or seen: a rolled-back
        // log is refused (ledger_rolled_back), not published backwards.
        worker.redeemer.check_rollback()?;
        worker
            .redeemer
            .ledger()
            .with_log(|source| Ok(published(&worker, source)?.map(|log| log.checkpoint())))
    })
    .await;
    match note {
        Ok(Ok(Some(Some(note)))) => (
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            note,
        )
            .into_response(),
        Ok(Ok(_)) => error_response(&Error::NotInLedger {
            what: "no signed head yet (nothing was recorded)".into(),
        }),
        Ok(Err(e)) => error_response(&e),
        Err(r) => r,
    }
}

/// `GET /v1/log/tile/{*path}`: a tile or an entry bundle under the latest
/// signed head; `404` beyond it.
async fn log_tile(State(state): State<AppState>, UrlPath(path): UrlPath<String>) -> Response {
    let resource = match Resource::from_path(&format!("tile/{path}")) {
        Ok(r) => r,
        Err(e) => return bad_request("invalid_request", e.to_string()),
    };
    let worker = Arc::clone(&state);
    let read = blocking(move || {
        worker.redeemer.ledger().with_log(|source| {
            let Some(log) = published(&worker, source)? else {
                return Ok((0, None));
            };
            Ok((log.size(), log.read(resource)?))
        })
    })
    .await;
    match read {
        Ok(Ok(Some((_, Some(bytes))))) => (
            [
                (header::CONTENT_TYPE, "application/octet-stream"),
                (header::CACHE_CONTROL, IMMUTABLE),
            ],
            bytes,
        )
            .into_response(),
        Ok(Ok(Some((size, None)))) if size > 0 => error_response(&Error::NotInLedger {
            what: format!(
                "{} is beyond the latest signed head (size {size})",
                resource.path()
            ),
        }),
        Ok(Ok(_)) => error_response(&Error::NotInLedger {
            what: format!(
                "{}: no signed head yet (nothing was recorded)",
                resource.path()
            ),
        }),
        Ok(Err(e)) => error_response(&e),
        Err(r) => r,
    }
}

async fn healthz() -> Response {
    #[derive(Serialize)]
    struct Health {
        status: &'static str,
    }
    json_response(StatusCode::OK, "health", Health { status: "ok" })
}

/// How long readiness waits for the ledger to answer.
const READY_WAIT: Duration = Duration::from_secs(2);

/// Readiness: 200 when the ledger answers a read within [`READY_WAIT`];
/// else 503 with what failed (a load balancer sends no sales there).
/// `/healthz` is liveness only: the process answers.
async fn readyz(State(state): State<AppState>) -> Response {
    #[derive(Serialize)]
    struct Ready {
        status: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    }
    let worker = Arc::clone(&state);
    let read = tokio::time::timeout(
        READY_WAIT,
        // A read of the log, checked against the head this node remembers
        // (a restored or failed-over database that lost entries is not
        // ready: docs/DEPLOY.md §Restore).
        blocking(move || worker.redeemer.check_rollback()),
    )
    .await;
    // The answer may be public (--public-health): it names the failure by
    // its code only, never the ledger's host, user or path; the details go
    // to standard error for the operator.
    let failed = match read {
        Ok(Ok(Ok(()))) => None,
        Ok(Ok(Err(e))) => {
            eprintln!("serve: not ready: {e}");
            let message = match e {
                Error::LedgerRolledBack { .. } => "the ledger's log does not extend the head this node signed or saw: it was rolled back; nothing is sold, played or paid until `issuer ledger recover`",
                _ => "the ledger does not answer reads",
            };
            Some((e.code(), message.to_string()))
        }
        Ok(Err(_)) => Some(("internal", "the readiness check failed".to_string())),
        Err(_) => Some((
            "ledger_unavailable",
            format!(
                "the ledger did not answer within {} s",
                READY_WAIT.as_secs()
            ),
        )),
    };
    match failed {
        None => json_response(
            StatusCode::OK,
            "ready",
            Ready {
                status: "ready",
                error: None,
                message: None,
            },
        ),
        Some((error, message)) => {
            let mut response = json_response(
                StatusCode::SERVICE_UNAVAILABLE,
                "ready",
                Ready {
                    status: "not_ready",
                    error: Some(error),
                    message: Some(message),
                },
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            response
        }
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    let mut text = state.metrics.render();
    let worker = Arc::clone(&state);
    let rolled_back = tokio::time::timeout(
        Duration::from_secs(1),
        blocking(move || worker.redeemer.rollback_finding()),
    )
    .await
    .ok()
    .and_then(Result::ok)
    .flatten();
    text.push_str("# HELP issuer_ledger_rolled_back 1 when the ledger's log does not extend the head this node signed or saw (nothing is sold, played or paid).\n");
    text.push_str("# TYPE issuer_ledger_rolled_back gauge\n");
    text.push_str(&format!(
        "issuer_ledger_rolled_back {}\n",
        u8::from(rolled_back.is_some())
    ));
    if let Some(watch) = &state.top_lots {
        watch.render(&mut text);
    }
    if let Some(cosigning) = &state.cosigning {
        cosigning.render(&mut text);
    }
    let mut response = text.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    response
}

/// The error code of a refusal (for the access log).
#[derive(Clone, Copy)]
struct ErrorCode(&'static str);

/// Checks the token, answers, and writes the access log's line.
async fn require_token(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    // Taken only when there is an access log to write.
    let requested = state.access_log.as_ref().map(|_| Requested::of(&request));
    let path = request.uri().path();
    let public = (state.public_health && matches!(path, "/healthz" | "/readyz"))
        || (state.public_log && path.starts_with(LOG_PREFIX))
        || (state.player_page && player::is_page_path(path));
    let caller = {
        let tokens = state.tokens.read().unwrap_or_else(|p| p.into_inner());
        authorised(&tokens, request.headers())
    };
    let name = caller.as_ref().map(|(name, _)| name.clone());
    let needed = Needed::of(request.method(), request.uri().path());
    let mut request = request;
    let response = match caller {
        Some((name, roles)) if needed.allows(roles) => {
            request.extensions_mut().insert(Caller(name, roles));
            next.run(request).await
        }
        Some((name, roles)) => forbidden(&name, roles, needed, &request),
        None if public => next.run(request).await,
        None => {
            state.metrics.unauthorized.fetch_add(1, Ordering::Relaxed);
            unauthorized()
        }
    };
    if let (Some(log), Some(r)) = (&state.access_log, requested) {
        log.write(&AccessEntry {
            time: ticket_issuer_ledger::ledger::claims::utc_now(),
            method: r.method.as_str(),
            route: &r.route,
            status: response.status().as_u16(),
            latency_ms: started.elapsed().as_secs_f64() * 1000.0,
            token: name.as_deref(),
            unit_id: r.unit_id.as_deref(),
            error: response.extensions().get::<ErrorCode>().map(|c| c.0),
        });
    }
    response
}

/// What the access log says of a request: its method, its route pattern
/// and the unit ID its path holds, if any.
struct Requested {
    method: axum::http::Method,
    route: String,
    unit_id: Option<String>,
}

impl Requested {
    fn of(request: &Request) -> Requested {
        let route = request
            .extensions()
            .get::<axum::extract::MatchedPath>()
            .map_or_else(|| "(no route)".to_string(), |p| p.as_str().to_string());
        let unit_id = request.uri().path().strip_prefix("/v1/").and_then(|rest| {
            let mut parts = rest.split('/');
            match (parts.next(), parts.next()) {
                (Some("units" | "plays"), Some(id)) => Some(id.to_string()),
                _ => None,
            }
        });
        Requested {
            method: request.method().clone(),
            route,
            unit_id,
        }
    }
}

/// The name and roles of the token a request came with (its lane; an
/// operator's action's `by`).
#[derive(Clone)]
pub(crate) struct Caller(pub(crate) String, pub(crate) Roles);

impl Caller {
    /// Who the request is answered for: a token with the operator role
    /// sees every unit, any other its own lane's.
    fn asker(&self) -> Asker {
        if self.1.operator {
            Asker::OperatorToken(self.0.clone())
        } else {
            Asker::Platform(self.0.clone())
        }
    }
}

/// Who the request is answered for ([`Caller::asker`]). A route open
/// without a token (`--public-log`, `--public-health`) takes none; any
/// other has its caller, checked by the token middleware.
struct Asking(Asker);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Asking {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Asking, Response> {
        parts
            .extensions
            .get::<Caller>()
            .map(|c| Asking(c.asker()))
            .ok_or_else(unauthorized)
    }
}

/// The 403 answer: a valid token without the role the route needs.
fn forbidden(name: &str, roles: Roles, needed: Needed, request: &Request) -> Response {
    let mut response = json_response(
        StatusCode::FORBIDDEN,
        "error",
        serde_json::json!({
            "error": "forbidden",
            "category": "invalid_input",
            "message": format!(
                "the token {name} has the role {}; {} {} needs the role {} (roles are given in the token file: docs/API.md §Tokens and roles); nothing was done",
                roles.names(),
                request.method(),
                request.uri().path(),
                needed.name()
            ),
        }),
    );
    response.extensions_mut().insert(ErrorCode("forbidden"));
    close_unread(&mut response);
    response
}

/// Asks the client to close the connection after an answer given before
/// the request's body was read (a refused token or role): the body left
/// unread makes the connection unusable, and a client that reused it would
/// see its next request cut off.
fn close_unread(response: &mut Response) {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
}

/// The 401 answer.
fn unauthorized() -> Response {
    let mut response = json_response(
        StatusCode::UNAUTHORIZED,
        "error",
        serde_json::json!({
            "error": "unauthorized",
            "category": "invalid_input",
            "message": "a valid bearer token is required (Authorization: Bearer <token>)",
        }),
    );
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response.extensions_mut().insert(ErrorCode("unauthorized"));
    close_unread(&mut response);
    response
}

/// The accepted tokens, shared by the requests and the SIGHUP reload.
pub type TokenSet = Arc<std::sync::RwLock<Vec<Token>>>;

/// One line of the access log: never a token or a secret.
#[derive(Serialize)]
struct AccessEntry<'a> {
    time: String,
    method: &'a str,
    route: &'a str,
    status: u16,
    latency_ms: f64,
    token: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unit_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
}

/// The access log: a JSON line a request, to a file (appended, 0600) or
/// standard error.
pub struct AccessLog(Mutex<Box<dyn std::io::Write + Send>>);

impl AccessLog {
    /// Opens `path` (`-`: standard error).
    pub fn open(path: &Path) -> Result<AccessLog, Error> {
        if path == Path::new("-") {
            return Ok(AccessLog(Mutex::new(Box::new(std::io::stderr()))));
        }
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        Ok(AccessLog(Mutex::new(Box::new(std::io::LineWriter::new(
            file,
        )))))
    }

    fn write(&self, entry: &AccessEntry) {
        if let Ok(mut line) = serde_json::to_vec(entry) {
            line.push(b'\n');
            let mut out = self.0.lock().unwrap_or_else(|p| p.into_inner());
            // A log that cannot be written does not stop the service.
            let _ = out.write_all(&line);
        }
    }
}

/// A path the service has no route for: a JSON refusal like every other
/// answer (was an empty body).
async fn no_route(uri: axum::http::Uri) -> Response {
    with_code(
        json_response(
            StatusCode::NOT_FOUND,
            "error",
            serde_json::json!({
                "error": "no_route",
                "category": "invalid_input",
                "message": format!("no route {} (docs/API.md lists the routes)", uri.path()),
            }),
        ),
        "no_route",
    )
}

/// A route asked with a method it does not take.
async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    with_code(
        json_response(
            StatusCode::METHOD_NOT_ALLOWED,
            "error",
            serde_json::json!({
                "error": "method_not_allowed",
                "category": "invalid_input",
                "message": format!("{} does not take {method} (docs/API.md)", uri.path()),
            }),
        ),
        "method_not_allowed",
    )
}

/// The service's routes over `redeemer`, accepting `tokens`, as `config`
/// says: `public_health`: `/healthz` and `/readyz` need none;
/// `public_log`: `/v1/log/…` (the log's checkpoint and tiles) need none;
/// `player_page`: the reference player page under `/player/`, with the
/// redeemer's public key pinned in it; `top_lots`: the top-lots watch;
/// each request is written to `access_log`, if given.
pub fn router(
    redeemer: Redeemer,
    tokens: TokenSet,
    access_log: Option<AccessLog>,
    config: &ServiceConfig,
) -> Router {
    let ServiceConfig {
        public_health,
        public_log,
        player_page,
        ref limits,
        top_lots,
        ref witnessing,
        ..
    } = *config;
    let page = player_page.then(|| player::routes(redeemer.public_key().to_bytes()));
    // A node failing closed publishes, and makes receipts against, only
    // witnessed heads.
    let redeemer = match witnessing {
        Some(w) if !w.fails_open() => redeemer.with_publication(Publication::Witnessed),
        _ => redeemer,
    };
    let state = Arc::new(Shared {
        redeemer,
        tokens,
        access_log,
        metrics: Metrics::default(),
        public_health,
        public_log,
        player_page,
        in_flight: Arc::new(tokio::sync::Semaphore::new(limits.max_in_flight)),
        body_wait: Duration::from_secs(limits.body_seconds),
        top_lots: top_lots.map(|c| Arc::new(top_lots::Watch::new(c))),
        cosigning: witnessing
            .clone()
            .map(|c| Arc::new(cosigning::Cosigning::new(c))),
        remaining: operator::RemainingCache::default(),
        health: Arc::default(),
    });
    tokio::spawn(Arc::clone(&state.health).run(Arc::clone(&state)));
    if let Some(watch) = &state.top_lots {
        tokio::spawn(Arc::clone(watch).run(Arc::clone(&state)));
    }
    if let Some(cosigning) = &state.cosigning {
        // One round before the node serves: a witness that cosigned a head
        // this log does not extend stops the money path before the first
        // sale (a machine restored whole, its remembered head with it).
        if let Err(e) = cosigning.round(&state.redeemer) {
            eprintln!("serve: witnessing: {e}");
        }
        tokio::spawn(Arc::clone(cosigning).run(Arc::clone(&state)));
    }
    let table = routes();
    // Written once: every request gets the same bytes.
    let description = Bytes::from(
        serde_json::to_vec(&openapi::document(table.iter().map(|(doc, _)| doc)))
            .expect("the description serialises"),
    );
    let mut router = Router::new();
    for (doc, handler) in table {
        if let Some(handler) = handler {
            router = router.route(doc.path, handler);
        }
    }
    if let Some(page) = page {
        router = router.merge(page);
    }
    router
        .route(
            OPENAPI_PATH,
            // The document itself: an OpenAPI document has no `kind`.
            get(move || async move { ([(header::CONTENT_TYPE, "application/json")], description) }),
        )
        .fallback(no_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            read_body,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            require_token,
        ))
        // Outer: past `max_in_flight` requests, 503 at once; a panic in
        // any of it is a 500 `internal`, not a dropped connection.
        .layer(middleware::from_fn_with_state(Arc::clone(&state), shed))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(panicked))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            count_answer,
        ))
        .with_state(state)
}

/// Where the description is served.
const OPENAPI_PATH: &str = "/v1/openapi.json";

/// The JSON Schema of a unit to redeem.
fn unit_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object", "required": ["id"], "additionalProperties": false,
        "properties": {
            "id": {"type": "string", "description": "the unit ID as printed"},
            "stopped_after_rolls": {"type": "integer", "minimum": 0, "description": "Trésors Ensablés: where the player stopped (the ledger's play decides)"},
        },
    })
}

/// `?receipt=` of a sale or a redemption.
const RECEIPT_QUERY: &[(&str, &str, &str)] = &[(
    "receipt",
    "boolean",
    "true: the answer carries the entry's receipt (docs/REDEMPTION.md §Receipts)",
)];

/// Every route: its description and its handler. The router and
/// `GET /v1/openapi.json` are both made from it.
fn routes() -> Vec<(RouteDoc, Option<axum::routing::MethodRouter<AppState>>)> {
    use serde_json::json;
    let refusals: &'static [(u16, &'static str, &'static str)] = &[
        (400, "error", "a malformed request or unit ID"),
        (404, "error", "no such unit or block"),
        (
            409,
            "error",
            "a fact about the unit: already redeemed, not sold, play over, sold out, claims ended",
        ),
        (410, "error", "the emission is revealed"),
        (
            422,
            "error",
            "refused: a block that does not authenticate, an idempotency key reused",
        ),
    ];
    let doc = |method, path, summary, body: Option<serde_json::Value>| RouteDoc {
        method,
        path,
        summary,
        body,
        idempotent: false,
        query: &[],
        answers: refusals,
        public_health: false,
        public_log: false,
    };
    vec![
        (
            RouteDoc {
                idempotent: true,
                query: RECEIPT_QUERY,
                answers: &[(
                    200,
                    "redemption",
                    "paid (durable), with its proof and ledger entry (and its receipt, asked with ?receipt=true)",
                )],
                ..doc(
                    "POST",
                    "/v1/redemptions",
                    "Redeem a unit once",
                    Some(unit_schema()),
                )
            },
            Some(post(redeem_one)),
        ),
        (
            RouteDoc {
                idempotent: true,
                answers: &[(
                    200,
                    "batch",
                    "one outcome per unit, in order (a redemption or an error object each)",
                )],
                ..doc(
                    "POST",
                    "/v1/redemptions/batch",
                    "Redeem up to 1,000 units in one request",
                    Some(json!({
                        "type": "object", "required": ["units"], "additionalProperties": false,
                        "properties": {"units": {"type": "array", "maxItems": 1000, "items": unit_schema()}},
                    })),
                )
            },
            Some(post(redeem_batch)),
        ),
        (
            RouteDoc {
                query: &[(
                    "stopped_after_rolls",
                    "integer",
                    "Trésors Ensablés: the stop to check",
                )],
                answers: &[(
                    200,
                    "check",
                    "what the unit holds as far as disclosed, and whether and when it was redeemed",
                )],
                ..doc(
                    "GET",
                    "/v1/units/{id}",
                    "Check a unit (records nothing)",
                    None,
                )
            },
            Some(get(check_unit)),
        ),
        (
            RouteDoc {
                idempotent: true,
                query: RECEIPT_QUERY,
                answers: &[(
                    200,
                    "sale",
                    "the unit sold (durable): its ID and what the player sees before play (and its receipt, asked with ?receipt=true)",
                )],
                ..doc(
                    "POST",
                    "/v1/sales",
                    "Sell the next unsold unit of a game",
                    Some(json!({
                        "type": "object", "required": ["game"], "additionalProperties": false,
                        "properties": {
                            "game": {"type": "string", "enum": Game::all().map(|g| g.slug()).collect::<Vec<_>>()},
                            "price": {"type": ["string", "number"], "description": "euros (\"1\", 0.5); optional where the game has one price"},
                        },
                    })),
                )
            },
            Some(post(sell)),
        ),
        (
            RouteDoc {
                answers: &[(
                    200,
                    "sale",
                    "the sale recorded under the key, answered as when made",
                )],
                ..doc(
                    "GET",
                    "/v1/sales/{key}",
                    "The sale made under an idempotency key",
                    None,
                )
            },
            Some(get(sale_under_key)),
        ),
        (
            RouteDoc {
                answers: &[(
                    200,
                    "receipts",
                    "the receipts of the unit's sale and redemption entries against the published checkpoint (`null` where not under it yet)",
                )],
                ..doc(
                    "GET",
                    "/v1/receipts/{id}",
                    "A unit's receipts: its entries proved in the published log",
                    None,
                )
            },
            Some(get(receipts)),
        ),
        (
            RouteDoc {
                answers: &[(
                    200,
                    "play_state",
                    "the play so far: every roll revealed, never beyond",
                )],
                ..doc("GET", "/v1/plays/{id}", "A unit's play as it stands", None)
            },
            Some(get(play_state)),
        ),
        (
            RouteDoc {
                answers: &[(
                    200,
                    "svg",
                    "the play drawn as it stands (image/svg+xml): the board, the rolls revealed, never beyond",
                )],
                ..doc(
                    "GET",
                    "/v1/plays/{id}/picture.svg",
                    "A picture of a unit's play as it stands",
                    None,
                )
            },
            Some(get(play_picture)),
        ),
        (
            RouteDoc {
                idempotent: true,
                answers: &[(
                    200,
                    "play",
                    "the roll revealed (a retried roll is answered the same)",
                )],
                ..doc(
                    "POST",
                    "/v1/plays/{id}/roll",
                    "Reveal the next roll of a Trésors Ensablés play",
                    Some(json!({
                        "type": "object", "required": ["roll"], "additionalProperties": false,
                        "properties": {"roll": {"type": "integer", "minimum": 1}},
                    })),
                )
            },
            Some(post(roll)),
        ),
        (
            RouteDoc {
                idempotent: true,
                answers: &[(200, "play", "the play stopped: its prize")],
                ..doc(
                    "POST",
                    "/v1/plays/{id}/stop",
                    "Stop a Trésors Ensablés play (Arrêter)",
                    None,
                )
            },
            Some(post(stop)),
        ),
        (
            RouteDoc {
                answers: &[(
                    200,
                    "block_seal",
                    "the block's header bytes as stored and their seal (hex), its Merkle root and signer: public facts, for a client that checks the seal with the issuer's key it pinned",
                )],
                ..doc(
                    "GET",
                    "/v1/blocks/{game}/{emission}/{block}",
                    "A block's sealed header (records nothing)",
                    None,
                )
            },
            Some(get(block_seal)),
        ),
        (
            RouteDoc {
                answers: &[(
                    200,
                    "ledger_head",
                    "the latest signed checkpoint of the ledger's log",
                )],
                ..doc(
                    "GET",
                    "/v1/ledger/head",
                    "The ledger's latest signed head",
                    None,
                )
            },
            Some(get(ledger_head)),
        ),
        (
            RouteDoc {
                answers: &[
                    (
                        200,
                        "text",
                        "the latest signed head, a C2SP tlog-checkpoint signed note (Cache-Control: no-cache)",
                    ),
                    (404, "error", "no signed head yet (`not_in_ledger`)"),
                ],
                public_log: true,
                ..doc(
                    "GET",
                    "/v1/log/checkpoint",
                    "The log's checkpoint (C2SP tlog-tiles)",
                    None,
                )
            },
            Some(get(log_checkpoint)),
        ),
        (
            RouteDoc {
                answers: &[
                    (
                        200,
                        "octets",
                        "a tile (`<L>/<N>[.p/<W>]`: 32-byte hashes) or an entry bundle (`entries/<N>[.p/<W>]`: big-endian uint16 length ‖ entry, each) under the latest signed head; immutable",
                    ),
                    (400, "error", "not a tile path (`invalid_request`)"),
                    (404, "error", "beyond the latest signed head (`not_in_ledger`)"),
                ],
                public_log: true,
                ..doc(
                    "GET",
                    "/v1/log/tile/{*path}",
                    "A tile or entry bundle of the log (C2SP tlog-tiles)",
                    None,
                )
            },
            Some(get(log_tile)),
        ),
        (
            RouteDoc {
                answers: &[(200, "health", "the process answers (liveness)")],
                public_health: true,
                ..doc("GET", "/healthz", "Liveness", None)
            },
            Some(get(healthz)),
        ),
        (
            RouteDoc {
                answers: &[
                    (200, "ready", "the ledger answers a read within 2 s"),
                    (503, "error", "not ready"),
                ],
                public_health: true,
                ..doc("GET", "/readyz", "Readiness", None)
            },
            Some(get(readyz)),
        ),
        (
            RouteDoc {
                answers: &[(200, "text", "Prometheus text format 0.0.4")],
                ..doc("GET", "/metrics", "Metrics", None)
            },
            Some(get(metrics)),
        ),
        (
            RouteDoc {
                answers: &[(200, "openapi", "this description")],
                ..doc("GET", OPENAPI_PATH, "This description (OpenAPI 3.1)", None)
            },
            // Served beside the table: it is made from it.
            None,
        ),
    ]
    .into_iter()
    .chain(
        operator::routes()
            .into_iter()
            .map(|(doc, handler)| (doc, Some(handler))),
    )
    .collect()
}

/// Counts every answer by its route as matched (a route's pattern, never
/// a unit ID), method and status, refusals and panics included.
async fn count_answer(
    State(state): State<AppState>,
    matched: Option<MatchedPath>,
    request: Request,
    next: Next,
) -> Response {
    let route = matched.map_or_else(|| "unmatched".to_string(), |m| m.as_str().to_string());
    let method = request.method().to_string();
    let response = next.run(request).await;
    state.metrics.answered(&route, &method, response.status());
    response
}

/// Most bytes a request body may carry.
const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// Reads the request's body whole (after its token was checked) within
/// `body_wait`: a client that stops sending is answered 408
/// `body_timeout` and its connection closed, not held; a body over
/// [`BODY_LIMIT`] is 413 `body_too_large`. Both JSON, nothing done.
async fn read_body(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(state.body_wait, axum::body::to_bytes(body, BODY_LIMIT));
    match read.await {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                .await
        }
        Ok(Err(_)) => too_large(),
        Err(_) => {
            let mut response = refusal(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                format!(
                    "the request's body did not arrive within {} s (--body-timeout); nothing was done, send it again",
                    state.body_wait.as_secs()
                ),
            );
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            response
        }
    }
}

/// 413 `body_too_large`, as JSON.
fn too_large() -> Response {
    refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        "the request body is larger than the 2 MB a request may carry; send fewer IDs a batch"
            .into(),
    )
}

/// Takes a slot for the request, or answers 503 `overloaded` at once when
/// the node is handling `max_in_flight` requests (one semaphore for every
/// route).
async fn shed(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Ok(_slot) = Arc::clone(&state.in_flight).try_acquire_owned() else {
        return refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "overloaded",
            "the node is handling as many requests as it takes (--max-in-flight); nothing was done, retry".into(),
        );
    };
    let response = next.run(request).await;
    // axum's own refusal of a body over its limit is plain text: ours is
    // JSON like every other answer.
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return too_large();
    }
    response
}

/// A handler that panicked: 500 `internal`; what panicked goes to
/// standard error, not to the client.
fn panicked(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = ticket_issuer_ledger::ledger::writer::panic_message(panic.as_ref());
    eprintln!("serve: a request's handler panicked ({what}); answered 500 internal");
    refusal(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "the service failed on this request; its outcome is not known: look it up, or retry under the same idempotency key".into(),
    )
}

/// A refusal the service itself makes (not the ledger's): JSON with
/// `error`, `category` and `message`.
fn refusal(status: StatusCode, error: &'static str, message: String) -> Response {
    #[derive(Serialize)]
    struct Refusal<'a> {
        error: &'a str,
        category: &'a str,
        message: String,
    }
    let category = if status == StatusCode::SERVICE_UNAVAILABLE {
        "unavailable"
    } else if status.is_client_error() {
        "invalid_input"
    } else {
        "internal"
    };
    with_code(
        json_response(
            status,
            "error",
            Refusal {
                error,
                category,
                message,
            },
        ),
        error,
    )
}

/// Serves until SIGTERM or Ctrl-C, then drains in-flight requests (up to
/// ten seconds) and returns; `ready` is told the bound address. Runs its
/// own tokio runtime.
pub fn serve(
    redeemer: Redeemer,
    config: &ServiceConfig,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), Error> {
    if config.tls.is_none() && !config.listen.ip().is_loopback() && !config.allow_plain_http {
        return Err(Error::ServiceConfig {
            reason: format!(
                "{} is not a loopback address and no --tls-cert/--tls-key is given; pass them, or --allow-plain-http behind a TLS proxy",
                config.listen
            ),
        });
    }
    if config.player_page && !config.listen.ip().is_loopback() {
        return Err(Error::ServiceConfig {
            reason: format!(
                "--player-page serves a reference page for demonstrations and tests on a loopback address only, and {} is not one; listen on 127.0.0.1 (or ::1), or leave --player-page out (a platform puts its own page behind its own session: docs/API.md §A client that checks what it shows)",
                config.listen
            ),
        });
    }
    // A PostgreSQL connection closes with a blocking call, which panics
    // inside the runtime: this handle on the pool outlives the runtime, so
    // the connections close after it (SIGTERM had aborted a PostgreSQL node).
    let ledger = redeemer.ledger().clone();
    let access_log = config
        .access_log
        .as_deref()
        .map(AccessLog::open)
        .transpose()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal {
            what: format!("the async runtime does not start: {e}"),
        })?;
    // The router starts its background tasks (the top-lots watch) on it.
    let entered = runtime.enter();
    let tokens: TokenSet = Arc::new(std::sync::RwLock::new(config.tokens.clone()));
    let app = router(
        redeemer
            .with_busy_timeout(LEDGER_WAIT)
            .with_answer_deadline(ANSWER_WITHIN),
        Arc::clone(&tokens),
        access_log,
        config,
    );
    drop(entered);
    let served = runtime.block_on(async move {
        let listener = std::net::TcpListener::bind(config.listen)
            .map_err(|e| Error::io(Path::new(&config.listen.to_string()), e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::io(Path::new(&config.listen.to_string()), e))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Error::io(Path::new(&config.listen.to_string()), e))?;
        let handle = axum_server::Handle::new();
        tokio::spawn(shutdown_on_signal(handle.clone()));
        if let Some(path) = config.token_file.clone() {
            tokio::spawn(reload_tokens_on_hangup(tokens, path));
        }
        ready(bound);
        let permits = Arc::new(tokio::sync::Semaphore::new(config.limits.max_connections));
        let headers = Duration::from_secs(config.limits.header_seconds);
        let served = match &config.tls {
            Some((cert, key)) => {
                let tls = axum_server::tls_rustls::RustlsConfig::from_pem_file(cert, key)
                    .await
                    .map_err(|e| Error::BadFile {
                        path: cert.clone(),
                        reason: format!("the TLS certificate or key does not load: {e}"),
                    })?;
                let server = axum_server::from_tcp_rustls(listener, tls)
                    .map_err(|e| Error::io(cert, e))?
                    .map(|tls| tls.handshake_timeout(headers).acceptor(capped(permits)));
                bounded(server, headers, handle)
                    .serve(app.into_make_service())
                    .await
            }
            None => {
                let server = axum_server::from_tcp(listener)
                    .map_err(|e| Error::io(Path::new(&bound.to_string()), e))?
                    .acceptor(capped(permits));
                bounded(server, headers, handle)
                    .serve(app.into_make_service())
                    .await
            }
        };
        served.map_err(|e| Error::io(Path::new(&bound.to_string()), e))
    });
    // Blocking tasks end within ANSWER_WITHIN (their writes are answered,
    // or unknown, by then); a ledger that stopped answering keeps nothing
    // of ours waiting past it.
    runtime.shutdown_timeout(ANSWER_WITHIN);
    drop(ledger);
    served
}

/// An acceptor that holds a connection slot for each connection it lets
/// through; with none free it closes the connection at once, before any
/// byte is read (so a flood of idle sockets cannot take every descriptor).
#[derive(Clone)]
struct Capped<A> {
    inner: A,
    permits: Arc<tokio::sync::Semaphore>,
}

impl<A, I, S> axum_server::accept::Accept<I, S> for Capped<A>
where
    A: axum_server::accept::Accept<I, S>,
    A::Future: Send + 'static,
    A::Stream: Unpin + Send + 'static,
    A::Service: Send + 'static,
{
    type Stream = Held<A::Stream>;
    type Service = A::Service;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = std::io::Result<(Self::Stream, A::Service)>> + Send>,
    >;

    fn accept(&self, stream: I, service: S) -> Self::Future {
        let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned() else {
            drop(stream);
            return Box::pin(std::future::ready(Err(std::io::Error::other(
                "connection cap reached (--max-connections): closed",
            ))));
        };
        let accepted = self.inner.accept(stream, service);
        Box::pin(async move {
            let (stream, service) = accepted.await?;
            Ok((
                Held {
                    stream,
                    _slot: permit,
                },
                service,
            ))
        })
    }
}

/// The connection cap on the raw TCP stream (under TLS, if any).
fn capped(permits: Arc<tokio::sync::Semaphore>) -> Capped<axum_server::accept::DefaultAcceptor> {
    Capped {
        inner: axum_server::accept::DefaultAcceptor,
        permits,
    }
}

/// `server` with the header timeouts (the first request's and each
/// next one's) and the shutdown handle, plain or TLS alike.
fn bounded<Acc>(
    server: axum_server::Server<SocketAddr, Acc>,
    headers: Duration,
    handle: axum_server::Handle<SocketAddr>,
) -> axum_server::Server<SocketAddr, Acc> {
    let mut server = server.first_request_timeout(headers).handle(handle);
    server.http_builder().http1().header_read_timeout(headers);
    server
}

/// A connection with its slot, given back when it closes.
struct Held<T> {
    stream: T,
    _slot: tokio::sync::OwnedSemaphorePermit,
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Held<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Held<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Reads the token file again on each SIGHUP; a file that does not read
/// keeps the tokens in force (and says why on standard error).
async fn reload_tokens_on_hangup(tokens: TokenSet, path: PathBuf) {
    let Ok(mut hangups) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
    else {
        return;
    };
    while hangups.recv().await.is_some() {
        match read_tokens(&path) {
            Ok(new) => {
                let names: Vec<String> = new.iter().map(|t| t.name.clone()).collect();
                *tokens.write().unwrap_or_else(|p| p.into_inner()) = new;
                eprintln!(
                    "serve: SIGHUP: {} token(s) now accepted from {}: {}",
                    names.len(),
                    path.display(),
                    names.join(", ")
                );
            }
            Err(e) => eprintln!("serve: SIGHUP: the tokens in force stay: {e}"),
        }
    }
}

/// Waits for SIGTERM or Ctrl-C, then stops accepting and drains.
async fn shutdown_on_signal(handle: axum_server::Handle<SocketAddr>) {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = term => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    handle.graceful_shutdown(Some(DRAIN));
}
