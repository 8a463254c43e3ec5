//! The witness over HTTP (c2sp.org/tlog-witness, docs/REDEMPTION.md
//! §Witnesses): `POST /add-checkpoint`, answered by the ledger crate's
//! [`Witness`] off the async workers (it fsyncs), and the client a log
//! uses to ask a witness for a cosignature ([`add_checkpoint`]). A client
//! has [`HEADER_SECONDS`] to send its headers and the body timeout to send
//! its body, so that one that stalls holds no connection for long.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;

use ticket_issuer_core::error::Error;
use ticket_issuer_core::merkle::Hash;
use ticket_issuer_ledger::witness::{AddRequest, Answer, Witness, MAX_BODY, SIZE_CONTENT_TYPE};

/// Seconds a connection may take to send a request's headers.
pub const HEADER_SECONDS: u64 = 10;
/// Seconds a request's body may take to arrive, by default
/// (`witness serve --body-timeout`).
pub const BODY_SECONDS: u64 = 10;
/// Most connections open at once.
const MAX_CONNECTIONS: usize = 256;

/// The witness's routes: `POST /add-checkpoint`, its body at most
/// [`MAX_BODY`] bytes (413 beyond), arrived within `body_wait` (408
/// beyond).
pub fn router(witness: Arc<Witness>, body_wait: Duration) -> Router {
    Router::new()
        .route("/add-checkpoint", post(add))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn_with_state(body_wait, read_body))
        .with_state(witness)
}

/// A text/plain answer.
fn text(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

/// Reads the request's body whole within `body_wait`: a client that stalls
/// or trickles it is answered 408 and its connection closed (not held with
/// its task); a body over [`MAX_BODY`] is 413. Nothing is cosigned.
async fn read_body(State(body_wait): State<Duration>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    match tokio::time::timeout(body_wait, axum::body::to_bytes(body, MAX_BODY)).await {
        Ok(Ok(bytes)) => next.run(Request::from_parts(parts, Body::from(bytes))).await,
        Ok(Err(_)) => text(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than the {MAX_BODY} bytes an add-checkpoint may carry\n"),
        ),
        Err(_) => {
            let mut response = text(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request's body did not arrive within {} s (--body-timeout); nothing was cosigned, send it again\n",
                    body_wait.as_secs()
                ),
            );
            // The rest of the body may still come: the connection cannot
            // carry another request.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            response
        }
    }
}

async fn add(State(witness): State<Arc<Witness>>, body: Bytes) -> Response {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let decided = tokio::task::spawn_blocking(move || witness.add_checkpoint(&body, now)).await;
    match decided {
        Ok(Ok(Answer::Cosigned(lines))) => text(StatusCode::OK, lines),
        Ok(Ok(Answer::Refused(refusal))) => {
            let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_REQUEST);
            match refusal {
                ticket_issuer_ledger::witness::Refusal::StaleOld { .. } => (
                    status,
                    [(header::CONTENT_TYPE, SIZE_CONTENT_TYPE)],
                    refusal.body(),
                )
                    .into_response(),
                _ => text(status, refusal.body()),
            }
        }
        // Not persisted, so not cosigned: the client may retry.
        Ok(Err(e)) => {
            eprintln!("witness: the state was not written, nothing cosigned: {e}");
            text(
                StatusCode::SERVICE_UNAVAILABLE,
                "the witness could not persist its state; nothing was cosigned; retry\n".into(),
            )
        }
        Err(_) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error; nothing was cosigned\n".into(),
        ),
    }
}

/// Serves `witness` on `listen` until SIGTERM or Ctrl-C, then drains
/// in-flight requests; `ready` is told the bound address. Each request's
/// headers must arrive within [`HEADER_SECONDS`], its body within
/// `body_wait`. Runs its own tokio runtime.
pub fn serve(
    witness: Witness,
    listen: SocketAddr,
    body_wait: Duration,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), Error> {
    let app = router(Arc::new(witness), body_wait);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal {
            what: format!("the async runtime does not start: {e}"),
        })?;
    let place = listen.to_string();
    runtime.block_on(async move {
        let listener =
            std::net::TcpListener::bind(listen).map_err(|e| Error::io(Path::new(&place), e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::io(Path::new(&place), e))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Error::io(Path::new(&place), e))?;
        let handle = axum_server::Handle::new();
        tokio::spawn(super::shutdown_on_signal(handle.clone()));
        ready(bound);
        let permits = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        let server = axum_server::from_tcp(listener)
            .map_err(|e| Error::io(Path::new(&place), e))?
            .acceptor(super::capped(permits));
        super::bounded(server, Duration::from_secs(HEADER_SECONDS), handle)
            .serve(app.into_make_service())
            .await
            .map_err(|e| Error::io(Path::new(&place), e))
    })
}

/// What a witness answered to [`add_checkpoint`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddOutcome {
    /// 200: its cosignature lines, each with its newline; check them with
    /// `ticket_issuer_ledger::witness::cosignature::verify_cosignature`
    /// against the witness's vkey before using them.
    Cosigned(Vec<String>),
    /// 409 `text/x.tlog.size`: the size the witness last cosigned; send
    /// again from it (with the proof from that size).
    Conflict(u64),
    /// Any other answer: its status and body (400 malformed, 403 not
    /// signed by the key it knows, 404 unknown log, 409 split view, 422
    /// bad proof, 5xx).
    Refused {
        /// The HTTP status.
        status: u16,
        /// The body, as text (at most 4 KiB read).
        body: String,
    },
}

/// Why [`add_checkpoint`] got no answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The request did not reach the witness, or its answer did not come.
    #[error("the witness at {url} did not answer: {reason}")]
    Transport {
        /// Where.
        url: String,
        /// What happened.
        reason: String,
    },
    /// A 200 or 409 whose body is not what the spec says.
    #[error(
        "the witness at {url} answered {status} with a body the protocol does not allow: {body:?}"
    )]
    Protocol {
        /// Where.
        url: String,
        /// The status.
        status: u16,
        /// The body read.
        body: String,
    },
}

/// Asks the witness whose submission prefix is `url` (e.g.
/// `http://127.0.0.1:7380`) to cosign the checkpoint `note` (its signed
/// note, with the log's signature), proving it extends the size
/// `old_size` it last cosigned with `proof` (RFC 9162 consistency proof;
/// empty for `old_size` 0). Plain HTTP (ureq); 20 s overall.
pub fn add_checkpoint(
    url: &str,
    old_size: u64,
    proof: &[Hash],
    note: &str,
) -> Result<AddOutcome, ClientError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into();
    let target = format!("{}/add-checkpoint", url.trim_end_matches('/'));
    let transport = |e: ureq::Error| ClientError::Transport {
        url: target.clone(),
        reason: e.to_string(),
    };
    let mut response = agent
        .post(&target)
        .content_type("text/plain; charset=utf-8")
        .send(AddRequest::body(old_size, proof, note))
        .map_err(transport)?;
    let status = response.status().as_u16();
    let sized = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim() == SIZE_CONTENT_TYPE);
    let body = response
        .body_mut()
        .with_config()
        .limit(4096)
        .read_to_string()
        .map_err(transport)?;
    let protocol = |body: String| ClientError::Protocol {
        url: target.clone(),
        status,
        body,
    };
    match status {
        200 => {
            let lines: Vec<String> = body.split_inclusive('\n').map(str::to_string).collect();
            if lines.is_empty()
                || lines
                    .iter()
                    .any(|l| !l.starts_with("\u{2014} ") || !l.ends_with('\n'))
            {
                return Err(protocol(body));
            }
            Ok(AddOutcome::Cosigned(lines))
        }
        409 if sized => body
            .strip_suffix('\n')
            .and_then(|s| s.parse().ok())
            .map(AddOutcome::Conflict)
            .ok_or_else(|| protocol(body.clone())),
        _ => Ok(AddOutcome::Refused { status, body }),
    }
}
