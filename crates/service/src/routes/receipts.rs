//! `GET /v1/receipts/{id}`: the receipts of a unit's sale and redemption
//! against the published checkpoint (docs/REDEMPTION.md §Receipts).

use axum::extract::{Path, State};
use axum::routing::get;

use super::answer::{answer, Answered};
use super::doc::{doc, Row};
use crate::extract::Asking;
use crate::ledgers::Route;
use crate::openapi::RouteDoc;
use crate::state::AppState;

/// The receipts of the unit's sale and redemption against the published
/// checkpoint; the ID authenticated as a check's is.
async fn receipts(
    State(state): State<AppState>,
    Asking(asker): Asking,
    Path(id): Path<String>,
) -> Answered {
    answer(
        state,
        asker,
        "receipts",
        Route::Unit(id.clone()),
        move |w| w.receipts(&id.parse()?),
    )
    .await
}

/// The receipts' row of the route table.
pub(super) fn rows() -> Vec<Row> {
    vec![(
        RouteDoc {
            answers: &[(
                200,
                "receipts",
                "the receipts of the unit's sale and redemption entries against the published checkpoint (`null` where not under it yet)",
            )],
            schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeemer::UnitReceipts>),
            ..doc(
                "GET",
                "/v1/receipts/{id}",
                "A unit's receipts: its entries proved in the published log",
                None,
            )
        },
        Some(get(receipts)),
    )]
}
