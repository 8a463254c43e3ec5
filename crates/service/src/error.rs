//! What every handler, extractor and middleware answers when it does not
//! answer its work's result: an [`ApiError`], made into a JSON error
//! object (`kind` `error`, with `error`, `category` and `message`) with
//! the status its kind maps to ([`status_of`]).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use ticket_issuer_core::error::{Error, ErrorKind, ErrorReport};
use ticket_issuer_ledger::redeemer::Asker;

use crate::response::{json_response, Counted, ErrorCode};

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

/// The status of `e`'s answer. The node's own configuration refused by
/// its database is the server's fault (500), not the request's.
fn status_of_error(e: &Error) -> StatusCode {
    match e {
        Error::LedgerLoginRefused { .. } | Error::EmissionOfAnotherLedger { .. } => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
        _ => status_of(e.kind()),
    }
}

/// What `e` tells its asker: a platform its [platform
/// report](Error::platform_report) (no file, host, user or ledger ID; the
/// node's standard error keeps the detail for the operator), anyone else
/// the client report.
pub(crate) fn report(e: &Error, platform: bool) -> ErrorReport {
    if platform {
        e.platform_report()
    } else {
        e.client_report()
    }
}

/// Why a request is not answered with its work's result. One
/// `IntoResponse` for every handler, extractor and middleware: no server
/// path in any of them.
pub(crate) enum ApiError {
    /// A refusal the service itself makes, not the library: a request it
    /// cannot read (400), a body too slow (408) or too large (413), no
    /// such route (404) or method (405), overloaded (503), a handler that
    /// panicked (500).
    Refusal {
        /// The status.
        status: StatusCode,
        /// The error code.
        code: &'static str,
        /// What to do about it.
        message: String,
    },
    /// No or a wrong bearer token (401): the client is asked for one and
    /// to close the connection (the body was left unread).
    Unauthorized,
    /// A valid token without the role the route needs (403), the
    /// connection closed as for a 401.
    Forbidden {
        /// Which token, which role it has and which the route needs.
        message: String,
    },
    /// What the library refused or failed with, told whole (the client
    /// report): an operator's or a public route's answer.
    Failed(Error),
    /// The library's refusal of a request's work, counted by its code and
    /// told as its asker may read it ([`report`]).
    Refused {
        /// The refusal.
        error: Error,
        /// Whether a platform asked.
        platform: bool,
    },
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        ApiError::Failed(e)
    }
}

impl ApiError {
    /// A request the service can't read (not JSON, wrong fields, too
    /// many): 400 with `code`.
    pub(crate) fn bad_request(code: &'static str, message: String) -> ApiError {
        ApiError::Refusal {
            status: StatusCode::BAD_REQUEST,
            code,
            message,
        }
    }

    /// `error`, refusing `asker`'s work.
    pub(crate) fn refused(asker: &Asker, error: Error) -> ApiError {
        ApiError::Refused {
            error,
            platform: asker.is_platform(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::Refusal {
                status,
                code,
                message,
            } => refusal(status, code, message),
            ApiError::Unauthorized => {
                let mut response = refusal(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "a valid bearer token is required (Authorization: Bearer <token>)".into(),
                );
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                close_unread(response)
            }
            ApiError::Forbidden { message } => {
                close_unread(refusal(StatusCode::FORBIDDEN, "forbidden", message))
            }
            ApiError::Failed(e) => error_response(&e, false),
            ApiError::Refused { error, platform } => {
                if platform && !error.speaks_to_platforms() {
                    eprintln!("serve: answered {} to a platform: {error}", error.code());
                }
                let mut response = error_response(&error, platform);
                response.extensions_mut().insert(Counted(error.code()));
                response
            }
        }
    }
}

/// The library's refusal as JSON, with its status, told as [`report`]
/// says.
fn error_response(e: &Error, platform: bool) -> Response {
    with_code(
        json_response(status_of_error(e), "error", report(e, platform)),
        e.code(),
    )
}

/// A refusal the service itself makes (not the library's): JSON with
/// `error`, `category` and `message`.
fn refusal(status: StatusCode, error: &'static str, message: String) -> Response {
    #[derive(Serialize)]
    struct Refusal<'a> {
        error: &'a str,
        category: &'a str,
        message: String,
    }
    let category = category_of(status);
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

/// The category of a refusal the service makes, by its status: the kind
/// whose status it is (API.md §Errors: each category has one status), or,
/// for the statuses no kind of the library has, the service's own
/// (`unauthorized` 401, `forbidden` 403, `method_not_allowed` 405,
/// `timeout` 408, `too_large` 413).
pub(crate) fn category_of(status: StatusCode) -> &'static str {
    match status {
        StatusCode::BAD_REQUEST => "invalid_input",
        StatusCode::UNAUTHORIZED => "unauthorized",
        StatusCode::FORBIDDEN => "forbidden",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::REQUEST_TIMEOUT => "timeout",
        StatusCode::CONFLICT => "conflict",
        StatusCode::GONE => "gone",
        StatusCode::PAYLOAD_TOO_LARGE => "too_large",
        StatusCode::UNPROCESSABLE_ENTITY => "rejected",
        StatusCode::SERVICE_UNAVAILABLE => "unavailable",
        _ => "internal",
    }
}

/// `response`, marked with its error code for the access log.
fn with_code(mut response: Response, code: &'static str) -> Response {
    response.extensions_mut().insert(ErrorCode(code));
    response
}

/// `response`, asking the client to close the connection: given before
/// the request's body was read (a refused token or role), the body left
/// unread makes the connection unusable, and a client that reused it would
/// see its next request cut off.
pub(crate) fn close_unread(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
