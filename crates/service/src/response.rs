//! How an answer is made: the JSON envelope every body has (`kind`,
//! `schema`), and the marks an answer carries for the middleware (its
//! error code for the access log, a refusal to count, a time to observe).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A JSON body with `kind` and `schema`.
#[derive(Serialize)]
pub(crate) struct Envelope<'a, T: Serialize> {
    kind: &'a str,
    schema: u32,
    #[serde(flatten)]
    body: T,
}

impl<'a, T: Serialize> Envelope<'a, T> {
    /// `body` as `kind`, schema 1.
    pub(crate) fn of(kind: &'a str, body: T) -> Envelope<'a, T> {
        Envelope {
            kind,
            schema: 1,
            body,
        }
    }
}

/// `body` as `kind` with `status`, as JSON (a 503 asks to retry after a
/// second).
pub(crate) fn json_response<T: Serialize>(status: StatusCode, kind: &str, body: T) -> Response {
    let text = serde_json::to_string(&Envelope::of(kind, body)).unwrap_or_else(|e| {
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

/// A work's result answered `200` as `kind` (its first member).
pub(crate) struct Answer<T>(pub(crate) &'static str, pub(crate) T);

impl<T: Serialize> IntoResponse for Answer<T> {
    fn into_response(self) -> Response {
        json_response(StatusCode::OK, self.0, self.1)
    }
}

/// The error code of a refusal (for the access log).
#[derive(Clone, Copy)]
pub(crate) struct ErrorCode(pub(crate) &'static str);

/// A refusal of a request's work, counted by its code
/// (`issuer_refusals_total`) as it is answered.
#[derive(Clone, Copy)]
pub(crate) struct Counted(pub(crate) &'static str);

/// An answer whose time goes into the latency histogram
/// (`issuer_request_duration_seconds`) as it is answered.
#[derive(Clone, Copy)]
pub(crate) struct Timed;

/// The outcome of work a request ran (a sale, a play step, a redemption,
/// a batch, a check, a lookup): answered as `T` is, its time observed
/// (the refusals made before any work are not).
pub(crate) struct Worked<T>(pub(crate) T);

impl<T: IntoResponse> IntoResponse for Worked<T> {
    fn into_response(self) -> Response {
        let mut response = self.0.into_response();
        response.extensions_mut().insert(Timed);
        response
    }
}
