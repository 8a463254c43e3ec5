//! `POST /v1/sales` and `GET /v1/sales/{key}`: the next unsold unit of a
//! game sold, and the sale made under an idempotency key.

use axum::extract::{Path, State};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{json, Value};
use ticket_issuer_core::game::Game;

use super::answer::{answer, game_of, Answered};
use super::doc::{doc, Row, RECEIPT_QUERY};
use crate::extract::{Asking, IdempotencyKey, JsonBody, ReceiptAsked, Shape};
use crate::ledgers::Route;
use crate::openapi::RouteDoc;
use crate::state::AppState;

/// `POST /v1/sales` body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SaleRequest {
    game: String,
    /// Euros, as a decimal string or number ("1", 0.5); optional where the
    /// game has one price.
    #[serde(default)]
    price: Option<serde_json::Value>,
}

impl Shape for SaleRequest {
    const SHAPE: &'static str = r#"{"game": …, "price": …}"#;
}

async fn sell(
    State(state): State<AppState>,
    Asking(asker): Asking,
    IdempotencyKey(key): IdempotencyKey,
    ReceiptAsked(with_receipt): ReceiptAsked,
    JsonBody(request): JsonBody<SaleRequest>,
) -> Answered {
    let price = request.price.map(|p| match p {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    });
    let watch = state.top_lots.clone();
    // Each ledger in the table's order, until one has a unit to sell.
    let route = Route::Each {
        keyed: key.is_some(),
    };
    answer(state, asker, "sale", route, move |w| {
        let game = game_of(&request.game)?;
        let sale = w.sell(game, game.price_cents(price.as_deref())?, key.as_deref())?;
        if let (Some(watch), Some(shown)) = (&watch, &sale.first_shown) {
            watch.after_reveal(shown);
        }
        if with_receipt {
            return w.sale_with_receipt(sale);
        }
        Ok(sale)
    })
    .await
}

async fn sale_under_key(
    State(state): State<AppState>,
    Asking(asker): Asking,
    Path(key): Path<String>,
) -> Answered {
    answer(
        state,
        asker,
        "sale_lookup",
        Route::Each { keyed: true },
        move |w| w.sale_under_key(&key),
    )
    .await
}

/// The sales' rows of the route table.
pub(super) fn rows() -> Vec<Row> {
    vec![
        (
            RouteDoc {
                idempotent: true,
                query: RECEIPT_QUERY,
                answers: &[(
                    200,
                    "sale",
                    "the unit sold (durable): its ID and what the player sees before play (and its receipt, asked with ?receipt=true)",
                )],
                schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeemer::Sale>),
                ..doc(
                    "POST",
                    "/v1/sales",
                    "Sell the next unsold unit of a game",
                    Some(json!({
                        "type": "object", "required": ["game"], "additionalProperties": false,
                        "properties": {
                            "game": {"type": "string", "enum": Game::all().map(|g| g.slug()).collect::<Vec<_>>()},
                            "price": {
                                "oneOf": [
                                    {"type": "string", "enum": crate::openapi::prices().into_iter().filter(Value::is_string).collect::<Vec<_>>()},
                                    {"type": "number", "minimum": 0.01, "maximum": 21_474_836.47, "description": "euros as a number: one of the prices above"},
                                ],
                                "description": "euros (\"1\", 0.5): one of the prices a game is sold at; optional where the game has one price",
                            },
                        },
                    })),
                )
            },
            Some(post(sell)),
        ),
        (
            RouteDoc {
                answers: &[(
                    200,
                    "sale_lookup",
                    "the sale recorded under the key, answered as when made",
                )],
                schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeemer::Sale>),
                ..doc(
                    "GET",
                    "/v1/sales/{key}",
                    "The sale made under an idempotency key",
                    None,
                )
            },
            Some(get(sale_under_key)),
        ),
    ]
}
