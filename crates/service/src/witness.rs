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
use ticket_issuer_ledger::witness::{Answer, Witness, MAX_BODY, SIZE_CONTENT_TYPE};

use crate::server::{bind, bounded, capped, runtime, shutdown_on_signal};

pub(crate) mod client;
pub use client::{add_checkpoint, AddOutcome, ClientError};

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
    let runtime = runtime()?;
    let place = listen.to_string();
    runtime.block_on(async move {
        let (listener, bound) = bind(listen)?;
        let handle = axum_server::Handle::new();
        tokio::spawn(shutdown_on_signal(handle.clone()));
        ready(bound);
        let permits = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        let server = axum_server::from_tcp(listener)
            .map_err(|e| Error::io(Path::new(&place), e))?
            .acceptor(capped(permits));
        bounded(server, Duration::from_secs(HEADER_SECONDS), handle)
            .serve(app.into_make_service())
            .await
            .map_err(|e| Error::io(Path::new(&place), e))
    })
}
