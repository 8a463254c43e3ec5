//! `GET /v1/units/{id}`: what a unit holds as far as disclosed, and
//! whether and when it was redeemed; records nothing.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::routing::get;
use serde::Deserialize;

use super::answer::{answer, Answered};
use super::doc::{doc, Row};
use crate::error::ApiError;
use crate::extract::Asking;
use crate::ledgers::Route;
use crate::openapi::RouteDoc;
use crate::state::AppState;

/// `?stopped_after_steps=N` of a check (`stopped_after_rolls`, today's
/// name, kept as an alias).
#[derive(Deserialize)]
struct CheckQuery {
    #[serde(alias = "stopped_after_rolls")]
    stopped_after_steps: Option<u32>,
}

async fn check_unit(
    State(state): State<AppState>,
    Asking(asker): Asking,
    Path(id): Path<String>,
    query: Result<Query<CheckQuery>, QueryRejection>,
) -> Answered {
    let Ok(Query(query)) = query else {
        return Err(ApiError::bad_request(
            "invalid_request",
            "the query is not ?stopped_after_steps=<number of steps>".into(),
        ));
    };
    answer(state, asker, "check", Route::Unit(id.clone()), move |w| {
        w.check(&id.parse()?, query.stopped_after_steps)
    })
    .await
}

/// The units' row of the route table.
pub(super) fn rows() -> Vec<Row> {
    vec![(
        RouteDoc {
            query: &[
                (
                    "stopped_after_steps",
                    "integer",
                    "a game played step by step: the stop to check",
                ),
                (
                    "stopped_after_rolls",
                    "integer",
                    "today's name of stopped_after_steps, kept",
                ),
            ],
            answers: &[(
                200,
                "check",
                "what the unit holds as far as disclosed, and whether and when it was redeemed",
            )],
            schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeemer::Check>),
            ..doc(
                "GET",
                "/v1/units/{id}",
                "Check a unit (records nothing)",
                None,
            )
        },
        Some(get(check_unit)),
    )]
}
