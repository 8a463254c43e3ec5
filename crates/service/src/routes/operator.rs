//! The operator's routes (docs/API.md §Operator): suspend, resume and
//! withdraw an emission or a block, void a sale. They need a token with
//! the `operator` role (tokens.rs); the token's name is recorded
//! as who acted.

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Query, State};
use axum::routing::{get, post, MethodRouter};
use serde::Deserialize;
use serde_json::{json, Value};
use ticket_issuer_core::error::Error;
use ticket_issuer_core::game::Game;
use ticket_issuer_ledger::closing::EarlyEnd;
use ticket_issuer_ledger::ledger::operator::Action;

use ticket_issuer_ledger::redeemer::{Remaining, RevealedPrizes};

use super::answer::{answer, answer_operator, emission_route, game_of, Answered};
use super::doc::{doc, Row};
use crate::error::ApiError;
use crate::extract::{Asking, Caller, JsonBody, Shape};
use crate::ledgers::Route;
use crate::openapi::RouteDoc;
use crate::state::AppState;

/// `POST /v1/operator/{suspend,resume,withdraw}` body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ControlRequest {
    game: String,
    emission: u32,
    #[serde(default)]
    block: Option<u32>,
    reason: String,
    /// Signed approvals (docs/REDEMPTION.md §Dual control).
    #[serde(default)]
    approvals: Vec<String>,
}

/// `POST /v1/operator/void` body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VoidRequest {
    id: String,
    reason: String,
}

impl Shape for ControlRequest {
    const SHAPE: &'static str = r#"{"game": <slug>, "emission": <number>, "block": <number, optional>, "reason": <text>, "approvals": [<signed approval>, …] (optional)}"#;
}

/// `POST /v1/operator/end-claims` body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndClaimsRequest {
    game: String,
    emission: u32,
    /// Before the deadline set at close, or always for an emission closed
    /// without one: why (published in the log).
    #[serde(default)]
    reason: Option<String>,
    /// Signed approvals of the early end (dual control).
    #[serde(default)]
    approvals: Vec<String>,
}

impl Shape for EndClaimsRequest {
    const SHAPE: &'static str = r#"{"game": <slug>, "emission": <number>, "reason": <text, before the deadline or without one>, "approvals": [<signed approval>, …] (optional)}"#;
}

/// Ends an emission's claims, and publishes its closing statement, with
/// the issuer's key this node holds (docs/REDEMPTION.md §End of claims).
async fn end_claims(
    State(state): State<AppState>,
    Extension(Caller(by, _)): Extension<Caller>,
    JsonBody(request): JsonBody<EndClaimsRequest>,
) -> Answered {
    let route = emission_route(&request.game, request.emission);
    answer_operator(state, "end_of_claims", route, move |r| {
        let game = game_of(&request.game)?;
        let approvals = numbered(&request.approvals);
        let early = request.reason.as_deref().map(|reason| EarlyEnd {
            reason,
            approvals: &approvals,
        });
        r.end_claims(game, request.emission, &by, early.as_ref())
    })
    .await
}

/// Approvals named by their place in the request (`approvals[i]`).
fn numbered(approvals: &[String]) -> Vec<(String, String)> {
    approvals
        .iter()
        .enumerate()
        .map(|(n, a)| (format!("approvals[{n}]"), a.clone()))
        .collect()
}

impl Shape for VoidRequest {
    const SHAPE: &'static str = r#"{"id": <unit ID>, "reason": <text>}"#;
}

/// `POST /v1/operator/{suspend,resume,withdraw}`: `action` on the
/// request's emission or block, by the caller.
fn control(action: Action) -> MethodRouter<AppState> {
    post(
        move |State(state): State<AppState>,
              Extension(Caller(by, _)): Extension<Caller>,
              JsonBody(request): JsonBody<ControlRequest>| {
            control_by(action, state, by, request)
        },
    )
}

async fn control_by(
    action: Action,
    state: AppState,
    by: String,
    request: ControlRequest,
) -> Answered {
    let route = emission_route(&request.game, request.emission);
    answer_operator(state, "operator_action", route, move |r| {
        let game = game_of(&request.game)?;
        r.control(
            action,
            game,
            request.emission,
            request.block,
            &request.reason,
            &by,
            &numbered(&request.approvals),
        )
    })
    .await
}

async fn void(
    State(state): State<AppState>,
    Extension(Caller(by, _)): Extension<Caller>,
    JsonBody(request): JsonBody<VoidRequest>,
) -> Answered {
    let route = Route::Unit(request.id.clone());
    answer_operator(state, "operator_action", route, move |r| {
        r.void(&request.id.parse()?, &request.reason, &by)
    })
    .await
}

/// `GET /v1/operator/remaining` query.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RemainingQuery {
    game: String,
    #[serde(default)]
    price: Option<String>,
}

impl RemainingQuery {
    /// The game it names and the price in cents.
    fn game_and_price(&self) -> Result<(Game, u32), Error> {
        let game = game_of(&self.game)?;
        Ok((game, game.price_cents(self.price.as_deref())?))
    }
}

/// The refusal of a remaining query that does not parse.
fn bad_query() -> ApiError {
    ApiError::bad_request(
        "invalid_request",
        "the query is not ?game=<slug>[&price=<euros>]".into(),
    )
}

/// The query both remaining routes take.
const REMAINING_QUERY: &[(&str, &str, &str)] = &[
    ("game", "string", "the game's slug"),
    (
        "price",
        "string",
        "unit price, euros (needed where the game has several)",
    ),
];

/// Prizes remaining in the units not yet sold (docs/REDEMPTION.md
/// §Prizes remaining): the operator's live view, operator role only (it
/// counts what unsold units hold, which no platform may learn).
async fn remaining(
    State(state): State<AppState>,
    query: Result<Query<RemainingQuery>, QueryRejection>,
) -> Answered {
    let Ok(Query(query)) = query else {
        return Err(bad_query());
    };
    let shared = Arc::clone(&state);
    answer_operator(state, "remaining", Route::First, move |_| {
        let (game, price) = query.game_and_price()?;
        let parts = shared
            .ledgers
            .all()
            .iter()
            .map(|l| l.redeemer.remaining(game, price))
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Remaining::merged(game, price, parts))
    })
    .await
}

/// `GET /v1/remaining`: the prizes players are shown (revealed so far,
/// and a fixed-table game's left to reveal), for any token, computed at
/// most every [`REMAINING_TTL`](crate::state::REMAINING_TTL) per game and price.
async fn public_remaining(
    State(state): State<AppState>,
    Asking(asker): Asking,
    query: Result<Query<RemainingQuery>, QueryRejection>,
) -> Answered {
    let Ok(Query(query)) = query else {
        return Err(bad_query());
    };
    let shared = Arc::clone(&state);
    let each = Arc::clone(&state);
    answer(state, asker.clone(), "remaining", Route::First, move |_| {
        let (game, price) = query.game_and_price()?;
        // Every ledger's figures, as one (a node with several ledgers).
        shared.remaining.get(game, price, || {
            let parts = each
                .ledgers
                .all()
                .iter()
                .map(|l| {
                    l.redeemer
                        .window(asker.clone())
                        .prizes_remaining(game, price)
                })
                .collect::<Result<Vec<_>, Error>>()?;
            Ok(RevealedPrizes::merged(game, price, parts))
        })
    })
    .await
}

/// The JSON Schema of a control's body.
fn control_schema() -> Value {
    json!({
        "type": "object", "required": ["game", "emission", "reason"], "additionalProperties": false,
        "properties": {
            "game": {"type": "string", "description": "game slug"},
            "emission": {"type": "integer", "minimum": 0},
            "block": {"type": "integer", "minimum": 0, "description": "one block; absent: the whole emission"},
            "reason": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "why, kept in the ledger"},
            "approvals": {"type": "array", "items": {"type": "string"}, "description": "signed approvals of a withdrawal (dual control)"},
        },
    })
}

/// The answers of an operator's route.
const ANSWERS: &[(u16, &str, &str)] = &[
    (
        200,
        "operator_action",
        "recorded (an entry of the ledger's log), or in force already (`already`)",
    ),
    (
        400,
        "error",
        "a malformed body, an empty reason, an unknown game",
    ),
    (
        403,
        "error",
        "the token lacks the operator role (`forbidden`)",
    ),
    (404, "error", "no such emission or block"),
    (
        409,
        "error",
        "not closed, claims ended, not suspended, withdrawal permanent, not sold, play started",
    ),
    (
        422,
        "error",
        "a wrong check code (void); a withdrawal without the approvals dual control asks for",
    ),
];

/// The operator's routes, described.
pub(super) fn rows() -> Vec<Row> {
    let action = |path, summary, body: Option<Value>| RouteDoc {
        answers: ANSWERS,
        schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeemer::Acted>),
        ..doc("POST", path, summary, body)
    };
    vec![
        (
            action(
                "/v1/operator/suspend",
                "Suspend an emission or a block (operator role): no sale, play step or redemption until resumed",
                Some(control_schema()),
            ),
            Some(control(Action::Suspend)),
        ),
        (
            action(
                "/v1/operator/resume",
                "Resume a suspended emission or block (operator role)",
                Some(control_schema()),
            ),
            Some(control(Action::Resume)),
        ),
        (
            action(
                "/v1/operator/withdraw",
                "Withdraw an emission or a block for good (operator role): never sold again; sold units still play and redeem",
                Some(control_schema()),
            ),
            Some(control(Action::Withdraw)),
        ),
        (
            action(
                "/v1/operator/void",
                "Void a sale before its play began (operator role): never sold again, never paid",
                Some(json!({
                    "type": "object", "required": ["id", "reason"], "additionalProperties": false,
                    "properties": {
                        "id": {"type": "string", "description": "the unit ID as printed"},
                        "reason": {"type": "string", "minLength": 1, "maxLength": 1000},
                    },
                })),
            ),
            Some(post(void)),
        ),
        (
            RouteDoc {
                answers: &[
                    (
                        200,
                        "end_of_claims",
                        "the end of claims signed with the issuer's key and the closing statement (the first published, when rerun)",
                    ),
                    (400, "error", "a malformed body, an unknown game, no issuer key on this node (`no_secrets`)"),
                    (403, "error", "the token lacks the operator role (`forbidden`)"),
                    (404, "error", "no such emission"),
                    (409, "error", "not closed; before the claim deadline, or without one set at close, without a reason (`claims_still_open`)"),
                    (422, "error", "an early end without the approvals dual control asks for"),
                ],
                schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::closing::ClaimsEnded>),
                ..action(
                    "/v1/operator/end-claims",
                    "End an emission's claims and publish its closing statement (operator role; the node must hold the issuer's key)",
                    Some(json!({
                        "type": "object", "required": ["game", "emission"], "additionalProperties": false,
                        "properties": {
                            "game": {"type": "string", "description": "game slug"},
                            "emission": {"type": "integer", "minimum": 0},
                            "reason": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "before the deadline set at close, or always when none was set: why (published in the log)"},
                            "approvals": {"type": "array", "items": {"type": "string"}, "description": "signed approvals of the early end (dual control)"},
                        },
                    })),
                )
            },
            Some(post(end_claims)),
        ),
        (
            RouteDoc {
                method: "GET",
                query: REMAINING_QUERY,
                answers: &[
                    (
                        200,
                        "remaining",
                        "prizes remaining in the units not yet sold, per emission and block",
                    ),
                    (400, "error", "a malformed query, an unknown game or price"),
                    (403, "error", "the token lacks the operator role (`forbidden`)"),
                ],
                schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeemer::Remaining>),
                ..action(
                    "/v1/operator/remaining",
                    "Prizes remaining in the units not yet sold (operator role)",
                    None,
                )
            },
            Some(get(remaining)),
        ),
        (
            RouteDoc {
                method: "GET",
                query: REMAINING_QUERY,
                answers: &[
                    (
                        200,
                        "remaining",
                        "the prizes revealed so far and (a fixed-table game) its lot table less those, as computed at most 30 s ago: what players are shown, never what an unrevealed unit holds",
                    ),
                    (400, "error", "a malformed query, an unknown game or price"),
                ],
                schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeemer::RevealedPrizes>),
                ..action(
                    "/v1/remaining",
                    "Prizes revealed and left to reveal, for players to be shown (any token; computed at most every 30 s)",
                    None,
                )
            },
            Some(get(public_remaining)),
        ),
    ]
}
