//! What every request goes through around its handler, outermost first:
//! answer counting ([`count_answer`]), catch-panic ([`panicked`]), load
//! shedding ([`shed`]), the token check and access log
//! ([`require_token`]), the body read ([`read_body`]); and, on a matched
//! route, the timing of its work ([`time_work`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::access_log::Requested;
use crate::error::{close_unread, ApiError};
use crate::extract::Caller;
use crate::player;
use crate::response::{Counted, ErrorCode, Timed};
use crate::routes::log::LOG_PREFIX;
use crate::state::AppState;
use crate::tokens::{authorised, Needed};

/// Checks the token, answers, and writes the access log's line.
pub(crate) async fn require_token(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
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
    let response = match caller {
        Some((name, roles)) if needed.allows(roles) => {
            request.extensions_mut().insert(Caller(name, roles));
            next.run(request).await
        }
        Some((name, roles)) => ApiError::Forbidden {
            message: format!(
                "the token {name} has the role {}; {} {} needs the role {} (roles are given in the token file: docs/API.md §Tokens and roles); nothing was done",
                roles.names(),
                request.method(),
                request.uri().path(),
                needed.name()
            ),
        }
        .into_response(),
        None if public => next.run(request).await,
        None => {
            state.metrics.unauthorized.fetch_add(1, Ordering::Relaxed);
            ApiError::Unauthorized.into_response()
        }
    };
    if let (Some(log), Some(r)) = (&state.access_log, requested) {
        log.write(
            &r,
            response.status().as_u16(),
            started.elapsed(),
            name.as_deref(),
            response.extensions().get::<ErrorCode>().map(|c| c.0),
        );
    }
    response
}

/// Counts every answer by its route as matched (a route's pattern, never
/// a unit ID), method and status, refusals and panics included; and a
/// refusal of a request's work by its code.
pub(crate) async fn count_answer(
    State(state): State<AppState>,
    matched: Option<MatchedPath>,
    request: Request,
    next: Next,
) -> Response {
    let route = matched.map_or_else(|| "unmatched".to_string(), |m| m.as_str().to_string());
    let method = request.method().to_string();
    let response = next.run(request).await;
    if let Some(Counted(code)) = response.extensions().get::<Counted>() {
        state.metrics.refused(code);
    }
    state.metrics.answered(&route, &method, response.status());
    response
}

/// Times a matched route's handler: the answer to work it ran (a sale, a
/// play step, a redemption, a batch, a check, …: marked [`Timed`]) goes
/// into the latency histogram; a refusal before any work does not.
pub(crate) async fn time_work(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let response = next.run(request).await;
    if response.extensions().get::<Timed>().is_some() {
        state.metrics.observe(started.elapsed());
    }
    response
}

/// Most bytes a request body may carry.
const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// Reads the request's body whole (after its token was checked) within
/// `body_wait`: a client that stops sending is answered 408
/// `body_timeout` and its connection closed, not held; a body over
/// [`BODY_LIMIT`] is 413 `body_too_large`. Both JSON, nothing done.
pub(crate) async fn read_body(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(state.body_wait, axum::body::to_bytes(body, BODY_LIMIT));
    match read.await {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                .await
        }
        Ok(Err(_)) => too_large(),
        Err(_) => {
            // The connection is closed, not held for the rest.
            close_unread(
                ApiError::Refusal {
                    status: StatusCode::REQUEST_TIMEOUT,
                    code: "body_timeout",
                    message: format!(
                        "the request's body did not arrive within {} s (--body-timeout); nothing was done, send it again",
                        state.body_wait.as_secs()
                    ),
                }
                .into_response(),
            )
        }
    }
}

/// 413 `body_too_large`, as JSON.
fn too_large() -> Response {
    ApiError::Refusal {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        code: "body_too_large",
        message:
            "the request body is larger than the 2 MB a request may carry; send fewer IDs a batch"
                .into(),
    }
    .into_response()
}

/// Takes a slot for the request, or answers 503 `overloaded` at once when
/// the node is handling `max_in_flight` requests (one semaphore for every
/// route).
pub(crate) async fn shed(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Ok(_slot) = Arc::clone(&state.in_flight).try_acquire_owned() else {
        return ApiError::Refusal {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code: "overloaded",
            message: "the node is handling as many requests as it takes (--max-in-flight); nothing was done, retry".into(),
        }
        .into_response();
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
pub(crate) fn panicked(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = ticket_issuer_ledger::ledger::writer::panic_message(panic.as_ref());
    eprintln!("serve: a request's handler panicked ({what}); answered 500 internal");
    ApiError::Refusal {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        code: "internal",
        message: "the service failed on this request; its outcome is not known: look it up, or retry under the same idempotency key".into(),
    }
    .into_response()
}
