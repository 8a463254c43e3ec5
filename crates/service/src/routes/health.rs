//! The node's own state: `GET /healthz` (liveness), `GET /readyz`
//! (readiness; both open without a token with `--public-health`) and
//! `GET /metrics` (Prometheus).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use ticket_issuer_core::error::Error;

use super::answer::blocking;
use super::doc::{doc, Row};
use crate::metrics::Metrics;
use crate::openapi::RouteDoc;
use crate::response::{json_response, Answer};
use crate::state::AppState;

/// Liveness: the process answers.
async fn healthz() -> impl IntoResponse {
    #[derive(Serialize)]
    struct Health {
        status: &'static str,
    }
    Answer("health", Health { status: "ok" })
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
    let read = tokio::time::timeout(
        READY_WAIT,
        // A read of the log, checked against the head this node remembers
        // (a restored or failed-over database that lost entries is not
        // ready: docs/DEPLOY.md §Restore).
        // Every ledger of the node's.
        blocking(move || {
            state
                .ledgers
                .all()
                .iter()
                .try_for_each(|l| l.redeemer.check_rollback())
        }),
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
        None => Answer(
            "ready",
            Ready {
                status: "ready",
                error: None,
                message: None,
            },
        )
        .into_response(),
        // A 503 asks to retry after a second.
        Some((error, message)) => json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "ready",
            Ready {
                status: "not_ready",
                error: Some(error),
                message: Some(message),
            },
        ),
    }
}

/// The node's metrics, with the rollback gauge read now (within a
/// second) and the watches' gauges.
async fn metrics(State(state): State<AppState>) -> Response {
    let mut text = state.metrics.render();
    let worker = Arc::clone(&state);
    let rolled_back = tokio::time::timeout(
        Duration::from_secs(1),
        blocking(move || {
            worker
                .ledgers
                .all()
                .iter()
                .find_map(|l| l.redeemer.rollback_finding())
        }),
    )
    .await
    .ok()
    .and_then(Result::ok)
    .flatten();
    Metrics::render_rolled_back(&mut text, rolled_back.is_some());
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

/// The node's rows of the route table.
pub(super) fn rows() -> Vec<Row> {
    vec![
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
    ]
}
