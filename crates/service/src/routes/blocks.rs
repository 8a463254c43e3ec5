//! `GET /v1/blocks/{game}/{emission}/{block}`: a block's sealed header,
//! for a client that checks the seal and the root itself (public facts).

use axum::extract::{Path, State};
use axum::routing::get;

use super::answer::{answer, emission_route, game_of, Answered};
use super::doc::{doc, Row};
use crate::error::ApiError;
use crate::extract::Asking;
use crate::openapi::RouteDoc;
use crate::state::AppState;

async fn block_seal(
    State(state): State<AppState>,
    Asking(asker): Asking,
    Path((game, emission, block)): Path<(String, String, String)>,
) -> Answered {
    let (Ok(emission), Ok(block)) = (emission.parse::<u32>(), block.parse::<u32>()) else {
        return Err(ApiError::bad_request(
            "invalid_request",
            format!(
                "the emission and block are numbers, as in a unit ID: /v1/blocks/{game}/<emission>/<block>"
            ),
        ));
    };
    let route = emission_route(&game, emission);
    answer(state, asker, "block_seal", route, move |w| {
        w.block_seal(game_of(&game)?, emission, block)
    })
    .await
}

/// The blocks' row of the route table.
pub(super) fn rows() -> Vec<Row> {
    vec![(
        RouteDoc {
            answers: &[(
                200,
                "block_seal",
                "the block's header bytes as stored and their seal (hex), its Merkle root and signer: public facts, for a client that checks the seal with the issuer's key it pinned",
            )],
            schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::redeemer::BlockSeal>),
            ..doc(
                "GET",
                "/v1/blocks/{game}/{emission}/{block}",
                "A block's sealed header (records nothing)",
                None,
            )
        },
        Some(get(block_seal)),
    )]
}
