//! `/v1/plays/{id}…`: a unit's play as it stands, drawn, and its steps
//! (a roll revealed, a stop).

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;
use ticket_issuer_core::error::Error;
use ticket_issuer_ledger::ledger::ops::PlayAction;
use ticket_issuer_ledger::redeemer::Asker;

use super::answer::{answer, blocking, routed, Answered};
use super::doc::{doc, Row};
use crate::error::ApiError;
use crate::extract::{Asking, IdempotencyKey, JsonBody, Shape};
use crate::ledgers::Route;
use crate::openapi::RouteDoc;
use crate::response::Worked;
use crate::state::AppState;

/// `POST /v1/plays/{id}/roll` body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepRequest {
    /// The step asked for, from 1: the next one, or one already revealed
    /// (a retry). `roll` is today's wire name, kept as an alias.
    #[serde(alias = "roll")]
    step: u32,
}

impl Shape for StepRequest {
    const SHAPE: &'static str = r#"{"step": <the step asked, from 1>} (or {"roll": …})"#;
}

/// A play step for `asker`; a step that ends the play reveals its outcome
/// (the top-lots watch is told).
async fn play_step(
    state: AppState,
    asker: Asker,
    id: String,
    action: PlayAction,
    key: Option<String>,
) -> Answered {
    let watch = state.top_lots.clone();
    answer(state, asker, "play", Route::Unit(id.clone()), move |w| {
        let view = w.play(&id.parse()?, action, key.as_deref())?;
        if let (Some(watch), Some(shown)) = (&watch, &view.first_shown) {
            watch.after_reveal(shown);
        }
        Ok(view)
    })
    .await
}

async fn step(
    State(state): State<AppState>,
    Asking(asker): Asking,
    Path(id): Path<String>,
    IdempotencyKey(key): IdempotencyKey,
    JsonBody(request): JsonBody<StepRequest>,
) -> Answered {
    play_step(state, asker, id, PlayAction::Step(request.step), key).await
}

async fn stop(
    State(state): State<AppState>,
    Asking(asker): Asking,
    Path(id): Path<String>,
    IdempotencyKey(key): IdempotencyKey,
) -> Answered {
    play_step(state, asker, id, PlayAction::Stop, key).await
}

async fn play_state(
    State(state): State<AppState>,
    Asking(asker): Asking,
    Path(id): Path<String>,
) -> Answered {
    answer(
        state,
        asker,
        "play_state",
        Route::Unit(id.clone()),
        move |w| w.play_state(&id.parse()?),
    )
    .await
}

/// `GET /v1/plays/{id}/picture.svg`: the play drawn by its game as it
/// stands, never beyond the rolls revealed; refused as the play routes
/// refuse (JSON error objects).
async fn play_picture(
    State(state): State<AppState>,
    Asking(asker): Asking,
    Path(id): Path<String>,
) -> Answered {
    let n = routed(&state, &asker, &Route::Unit(id.clone()))?[0];
    let seen = asker.clone();
    let drawn = blocking(move || -> Result<String, Error> {
        Ok(state.ledgers.all()[n]
            .redeemer
            .window(seen)
            .play_picture(&id.parse()?)?
            .svg())
    })
    .await?;
    Ok(Worked(
        drawn
            .map(|svg| ([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response())
            .map_err(|e| ApiError::refused(&asker, e)),
    ))
}

/// The plays' rows of the route table.
pub(super) fn rows() -> Vec<Row> {
    vec![
        (
            RouteDoc {
                answers: &[(
                    200,
                    "play_state",
                    "the play so far: every roll revealed, never beyond",
                )],
                schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeemer::PlayView>),
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
                    "the step revealed (a retried step is answered the same)",
                )],
                schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeemer::PlayView>),
                ..doc(
                    "POST",
                    "/v1/plays/{id}/roll",
                    "Reveal the next step of a play (a roll of Trésors Ensablés)",
                    Some(json!({
                        "type": "object", "additionalProperties": false,
                        "properties": {
                            "step": {"type": "integer", "minimum": 1, "description": "the step asked, from 1"},
                            "roll": {"type": "integer", "minimum": 1, "description": "today's name of `step`, kept"},
                        },
                        "oneOf": [{"required": ["step"]}, {"required": ["roll"]}],
                    })),
                )
            },
            Some(post(step)),
        ),
        (
            RouteDoc {
                idempotent: true,
                answers: &[(200, "play", "the play stopped: its prize")],
                schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeemer::PlayView>),
                ..doc(
                    "POST",
                    "/v1/plays/{id}/stop",
                    "Stop a Trésors Ensablés play (Arrêter)",
                    None,
                )
            },
            Some(post(stop)),
        ),
    ]
}
