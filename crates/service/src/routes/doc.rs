//! What the resources' rows of the route table share: the row's type, the
//! refusals every `/v1` route describes, and the `?receipt=` query.

use axum::routing::MethodRouter;
use serde_json::Value;

use crate::openapi::RouteDoc;
use crate::state::AppState;

/// One row of the route table: a route's description, and its handler
/// (none for a route served beside the table).
pub(crate) type Row = (RouteDoc, Option<MethodRouter<AppState>>);

/// The refusals a unit's route describes beside its own answers.
const REFUSALS: &[(u16, &str, &str)] = &[
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

/// `method path`, doing `summary`, taking `body`: not idempotent, no
/// query, answering the unit refusals, never public (a row sets what
/// differs).
pub(crate) fn doc(
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    body: Option<Value>,
) -> RouteDoc {
    RouteDoc {
        method,
        path,
        summary,
        body,
        idempotent: false,
        query: &[],
        answers: &[],
        refusals: REFUSALS,
        schema: None,
        public_health: false,
        public_log: false,
    }
}

/// `?receipt=` of a sale or a redemption.
pub(crate) const RECEIPT_QUERY: &[(&str, &str, &str)] = &[(
    "receipt",
    "boolean",
    "true: the answer carries the entry's receipt (docs/REDEMPTION.md §Receipts)",
)];
