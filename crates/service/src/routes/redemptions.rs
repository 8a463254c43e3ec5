//! `POST /v1/redemptions` and `POST /v1/redemptions/batch`: a unit, or up
//! to [`MAX_BATCH`], redeemed once (docs/API.md §Redemptions).

use std::sync::Arc;

use axum::extract::State;
use axum::routing::post;
use serde::{Deserialize, Serialize};
use serde_json::json;
use ticket_issuer_core::error::Error;
use ticket_issuer_core::unit_id::UnitId;
use ticket_issuer_ledger::redeem::Redemption;
use ticket_issuer_ledger::redeemer::{batch_parts, Asker};

use super::answer::{bounded_work, ledger_down, outcome, routed, Answered};
use super::doc::{doc, Row, RECEIPT_QUERY};
use crate::config::MAX_BATCH;
use crate::error::{report, ApiError};
use crate::extract::{Asking, IdempotencyKey, JsonBody, ReceiptAsked, Shape};
use crate::ledgers::Route;
use crate::openapi::RouteDoc;
use crate::response::{Answer, Envelope, Worked};
use crate::state::AppState;

/// One unit to redeem.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UnitRequest {
    id: String,
    /// The stop; `stopped_after_rolls` is today's wire name, kept.
    #[serde(default, alias = "stopped_after_rolls")]
    stopped_after_steps: Option<u32>,
}

impl Shape for UnitRequest {
    const SHAPE: &'static str = r#"{"id": …, "stopped_after_steps": …}"#;
}

/// A batch to redeem.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchRequest {
    units: Vec<UnitRequest>,
}

impl Shape for BatchRequest {
    const SHAPE: &'static str = r#"{"units": [{"id": …}, …]}"#;
}

async fn redeem_one(
    State(state): State<AppState>,
    Asking(asker): Asking,
    IdempotencyKey(key): IdempotencyKey,
    ReceiptAsked(with_receipt): ReceiptAsked,
    JsonBody(request): JsonBody<UnitRequest>,
) -> Answered {
    let id: UnitId = request
        .id
        .parse()
        .map_err(|e| ApiError::refused(&asker, e))?;
    let n = routed(&state, &asker, &Route::Unit(request.id.clone()))?[0];
    let worker = Arc::clone(&state);
    let seen = asker.clone();
    let redeemed = bounded_work(&state, &[n], move || {
        let window = worker.ledgers.all()[n].redeemer.window(seen);
        let r = window.redeem(&id, request.stopped_after_steps, key.as_deref())?;
        if with_receipt {
            return window.with_receipt(r);
        }
        Ok(r)
    })
    .await?;
    if let Ok(r) = &redeemed {
        state.metrics.paid(&r.prize);
    }
    Ok(Worked(outcome::<Redemption>(
        &state,
        &asker,
        "redemption",
        redeemed,
    )))
}

/// The answer to a batch: one outcome per unit, in order.
/// A batch's answer: one outcome per unit, in order.
#[derive(Serialize, schemars::JsonSchema)]
struct Batch {
    /// A redemption (`kind: "redemption"`) or an error object (`kind:
    /// "error"`) per unit.
    results: Vec<serde_json::Value>,
}

async fn redeem_batch(
    State(state): State<AppState>,
    Asking(asker): Asking,
    IdempotencyKey(key): IdempotencyKey,
    JsonBody(request): JsonBody<BatchRequest>,
) -> Result<Worked<Answer<Batch>>, ApiError> {
    if request.units.len() > MAX_BATCH {
        return Err(ApiError::bad_request(
            "batch_too_large",
            format!(
                "{} units in one batch; at most {MAX_BATCH}",
                request.units.len()
            ),
        ));
    }
    // Each unit stands alone: a malformed ID is its own result.
    let parsed: Vec<Result<(UnitId, Option<u32>), Error>> = request
        .units
        .iter()
        .map(|u| u.id.parse().map(|id| (id, u.stopped_after_steps)))
        .collect();
    let valid: Vec<(UnitId, Option<u32>)> = parsed
        .iter()
        .filter_map(|p| p.as_ref().ok().copied())
        .collect();
    let request = batch_parts(
        request
            .units
            .iter()
            .map(|u| (u.id.as_str(), u.stopped_after_steps)),
    );
    let (shares, unrouted) = split_by_ledger(&state, &asker, &valid, key.is_some())?;
    let worker = Arc::clone(&state);
    let seen = asker.clone();
    // A batch refused whole is answered untimed, as it always was.
    let ledgers: Vec<usize> = shares.iter().map(|(n, _)| *n).collect();
    let mut redeemed = bounded_work(&state, &ledgers, move || {
        let mut outcomes: Vec<Option<Result<Redemption, Error>>> = unrouted;
        for (n, places) in shares {
            let units: Vec<_> = places.iter().map(|&p| valid[p]).collect();
            let done = worker.ledgers.all()[n]
                .redeemer
                .window(seen.clone())
                .redeem_batch(&units, key.as_deref().map(|k| (k, request.as_str())))?;
            for (p, outcome) in places.into_iter().zip(done) {
                outcomes[p] = Some(outcome);
            }
        }
        Ok(outcomes)
    })
    .await?
    .map_err(|e| ApiError::refused(&asker, e))?
    .into_iter()
    .map(|o| {
        o.unwrap_or_else(|| {
            Err(Error::Internal {
                what: "a batch unit got no ledger's outcome".into(),
            })
        })
    });
    let mut results = Vec::with_capacity(parsed.len());
    for p in parsed {
        let outcome = match p {
            Ok(_) => redeemed.next().unwrap_or_else(|| {
                Err(Error::Internal {
                    what: "a batch unit got no outcome".into(),
                })
            }),
            Err(e) => Err(e),
        };
        let value = match outcome {
            Ok(r) => {
                state.metrics.done("redemption");
                state.metrics.paid(&r.prize);
                serde_json::to_value(Envelope::of("redemption", r))
            }
            Err(e) => {
                state.metrics.refused(e.code());
                serde_json::to_value(Envelope::of("error", report(&e, asker.is_platform())))
            }
        };
        results.push(value.unwrap_or_default());
    }
    Ok(Worked(Answer("redemption_batch", Batch { results })))
}

/// The JSON Schema of a unit to redeem.
/// Where each unit of a batch goes.
type Shares = Vec<(usize, Vec<usize>)>;

/// A batch's valid units by the ledger each goes to (the ledger, and the
/// units' places in `valid`), and an outcome slot per unit, filled
/// already for a unit whose emission is routed nowhere. A keyed batch is
/// recorded under its key in one ledger: one that spans several is
/// refused whole (`batch_spans_ledgers`; split it by emission).
#[allow(clippy::type_complexity)]
fn split_by_ledger(
    state: &AppState,
    asker: &Asker,
    valid: &[(UnitId, Option<u32>)],
    keyed: bool,
) -> Result<(Shares, Vec<Option<Result<Redemption, Error>>>), ApiError> {
    let mut shares: Shares = Vec::new();
    let mut outcomes = Vec::with_capacity(valid.len());
    for (place, (id, _)) in valid.iter().enumerate() {
        match state.ledgers.route(&Route::Emission(id.game, id.emission)) {
            Ok(to) => {
                outcomes.push(None);
                match shares.iter_mut().find(|(n, _)| *n == to[0]) {
                    Some((_, places)) => places.push(place),
                    None => shares.push((to[0], vec![place])),
                }
            }
            Err(e) => outcomes.push(Some(Err(e))),
        }
    }
    if keyed && shares.len() > 1 {
        return Err(ApiError::bad_request(
            "batch_spans_ledgers",
            "this batch's units are sold through several of the node's ledgers, and a batch under an idempotency key is recorded in one: send one batch per emission (docs/API.md §Several ledgers); nothing was recorded".into(),
        ));
    }
    if shares.is_empty() {
        // No unit to redeem: the batch goes to the first ledger, as ever.
        shares.push((0, Vec::new()));
    }
    for (n, _) in &shares {
        ledger_down(&state.ledgers.all()[*n], asker)?;
    }
    Ok((shares, outcomes))
}

/// A unit of a redemption's body; in a batch (`in_batch`) any ID is
/// taken, a malformed one being that unit's own result.
fn unit_schema(in_batch: bool) -> serde_json::Value {
    let id = match in_batch {
        true => {
            json!({"type": "string", "description": "the unit ID as printed (a malformed one is its own result)"})
        }
        false => {
            json!({"type": "string", "pattern": crate::openapi::UNIT_ID_PATTERN, "description": "the unit ID as printed"})
        }
    };
    json!({
        "type": "object", "required": ["id"], "additionalProperties": false,
        "properties": {
            "id": id,
            "stopped_after_steps": {"type": ["integer", "null"], "minimum": 0, "maximum": 4_294_967_295_u64, "description": "a game played step by step: where the player stopped (the ledger's play decides); null or absent: not stopped"},
            "stopped_after_rolls": {"type": ["integer", "null"], "minimum": 0, "maximum": 4_294_967_295_u64, "description": "today's name of `stopped_after_steps`, kept"},
        },
        // One name or the other, not both.
        "not": {"required": ["stopped_after_steps", "stopped_after_rolls"]},
    })
}

/// The redemptions' rows of the route table.
pub(super) fn rows() -> Vec<Row> {
    vec![
        (
            RouteDoc {
                idempotent: true,
                query: RECEIPT_QUERY,
                answers: &[(
                    200,
                    "redemption",
                    "paid (durable), with its proof and ledger entry (and its receipt, asked with ?receipt=true)",
                )],
                schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeem::Redemption>),
                ..doc(
                    "POST",
                    "/v1/redemptions",
                    "Redeem a unit once",
                    Some(unit_schema(false)),
                )
            },
            Some(post(redeem_one)),
        ),
        (
            RouteDoc {
                idempotent: true,
                answers: &[(
                    200,
                    "redemption_batch",
                    "one outcome per unit, in order (a redemption or an error object each)",
                )],
                schema: Some(crate::openapi::schema_of::<Batch>),
                ..doc(
                    "POST",
                    "/v1/redemptions/batch",
                    "Redeem up to 1,000 units in one request",
                    Some(json!({
                        "type": "object", "required": ["units"], "additionalProperties": false,
                        "properties": {"units": {"type": "array", "maxItems": 1000, "items": unit_schema(true)}},
                    })),
                )
            },
            Some(post(redeem_batch)),
        ),
    ]
}
