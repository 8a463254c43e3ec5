//! `GET /v1/games`: every game the node knows (`Game::all()`), with what a
//! client needs to offer it and to play it: its slug, name, header code, ID
//! prefix, prices, record layout, rules version, whether it is played step
//! by step (and by which routes), and the URL of its module of the
//! reference player page when that page is served and has one (the page
//! lists the games from this answer, docs/API.md §A client that checks
//! what it shows).

use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::get;
use serde::Serialize;
use serde_json::{json, Value};
use ticket_issuer_core::game::{Game, PrizeModel};
use ticket_issuer_core::money::Cents;
use ticket_issuer_core::record::{record_size, PREFIX_SIZE};

use super::doc::{doc, Row};
use crate::openapi::RouteDoc;
use crate::player;
use crate::response::Answer;
use crate::state::AppState;

/// The routes a game played step by step is played through (docs/API.md
/// §Sales and plays); a game revealed whole is shown from its sale's
/// `unit`, with no request.
const STEP_ROUTE: &str = "/v1/plays/{id}/roll";
const STOP_ROUTE: &str = "/v1/plays/{id}/stop";
const STATE_ROUTE: &str = "/v1/plays/{id}";

/// One price a game is sold at.
#[derive(Serialize, schemars::JsonSchema)]
struct Price {
    cents: u32,
    /// As the API writes euros (`"0.5"`), what a sale's `price` takes.
    euros: String,
}

/// One game as the answer lists it.
#[derive(Serialize, schemars::JsonSchema)]
struct GameInfo {
    slug: &'static str,
    name: String,
    code: u16,
    id_prefix: &'static str,
    prices: Vec<Price>,
    rules_version: u16,
    /// The header's two parameter bytes (FORMAT.md §Header).
    params: [u8; 2],
    /// The record's prefix and payload, bytes (FORMAT.md §Unit record).
    prefix_size: usize,
    payload_size: usize,
    record_size: usize,
    prize_model: PrizeModel,
    step_by_step: bool,
    /// How a play goes: the routes a step and a stop are asked by, or that
    /// the sale's `unit` shows the whole unit.
    play: Value,
    /// The reference page's module for the game (`/player/games/<slug>.js`),
    /// `null` when the page is not served or has none.
    module: Option<&'static str>,
}

fn info(game: Game, player_page: bool) -> GameInfo {
    let step_by_step = game.step_by_step();
    GameInfo {
        slug: game.slug(),
        name: game.display_name(),
        code: game.code(),
        id_prefix: game.id_prefix(),
        prices: game
            .prices_cents()
            .iter()
            .map(|&cents| Price {
                cents,
                euros: Cents::from(cents).to_string(),
            })
            .collect(),
        rules_version: game.rules_version(),
        params: game.params(),
        prefix_size: PREFIX_SIZE,
        payload_size: game.payload_size(),
        record_size: record_size(game),
        prize_model: game.prize_model(),
        step_by_step,
        play: if step_by_step {
            json!({"revealed": "step_by_step", "step": STEP_ROUTE, "stop": STOP_ROUTE, "state": STATE_ROUTE})
        } else {
            json!({"revealed": "whole"})
        },
        module: if player_page {
            player::game_module(game.slug())
        } else {
            None
        },
    }
}

/// `GET /v1/games`'s answer.
#[derive(Serialize, schemars::JsonSchema)]
struct Games {
    /// Every game the node knows, in header-code order.
    games: Vec<GameInfo>,
}

async fn games(State(state): State<AppState>) -> impl IntoResponse {
    let games = Game::all().map(|g| info(g, state.player_page)).collect();
    Answer("games", Games { games })
}

/// The games' row of the route table.
pub(super) fn rows() -> Vec<Row> {
    vec![(
        RouteDoc {
            answers: &[(
                200,
                "games",
                "`games`: every game the node knows, in header-code order: `slug`, `name`, `code`, `id_prefix`, `prices` (`cents`, `euros`), `rules_version`, `params`, `prefix_size`, `payload_size`, `record_size`, `prize_model`, `step_by_step`, `play` (`revealed`: `whole`, or `step_by_step` with its `step`, `stop` and `state` routes) and `module` (the player page's module, or null)",
            )],
            schema: Some(crate::openapi::schema_of::<Games>),
            ..doc(
                "GET",
                "/v1/games",
                "The games the node knows (records nothing)",
                None,
            )
        },
        Some(get(games)),
    )]
}
