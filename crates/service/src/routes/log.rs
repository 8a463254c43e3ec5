//! The ledger's head and its log as C2SP tlog-tiles (docs/API.md §The log
//! as tiles): `GET /v1/ledger/head`, `/v1/log/checkpoint` and
//! `/v1/log/tile/…`, open without a token with `--public-log` (the log's
//! routes). A node with several ledgers serves its first ledger's log
//! here; each ledger's own is read with `issuer ledger verify --ledger URL`
//! (docs/REDEMPTION.md §Several ledgers).

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use ticket_issuer_core::error::Error;
use ticket_issuer_ledger::ledger::log::LogSource;
use ticket_issuer_ledger::ledger::published::{PublishedLog, Resource};

use super::answer::blocking;
use super::doc::{doc, Row};
use crate::error::ApiError;
use crate::openapi::RouteDoc;
use crate::response::Answer;
use crate::state::{AppState, Shared};

/// Where the log is served as C2SP tlog-tiles: `checkpoint`, `tile/…`.
pub(crate) const LOG_PREFIX: &str = "/v1/log/";

/// Tiles and bundles: their path names immutable bytes.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

async fn ledger_head(State(state): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    match blocking(move || state.ledgers.first().redeemer.ledger().head()).await?? {
        Some(head) => Ok(Answer("ledger_head", head)),
        None => Err(ApiError::Failed(Error::NotInLedger {
            what: "no signed head yet (nothing was redeemed)".into(),
        })),
    }
}

/// The log this node publishes (`Redeemer::publication`: its latest head,
/// or its latest witnessed one when its witnessing fails closed).
fn published<'s>(
    state: &Shared,
    source: &'s dyn LogSource,
) -> Result<Option<PublishedLog<'s>>, Error> {
    state.ledgers.first().redeemer.publication().of(source)
}

/// `GET /v1/log/checkpoint`: the published head as a signed note (with
/// its witnesses' cosignatures once collected).
async fn log_checkpoint(State(state): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    let note = blocking(move || {
        // Never a checkpoint older than one signed or seen: a rolled-back
        // log is refused (ledger_rolled_back), not published backwards.
        state.ledgers.first().redeemer.check_rollback()?;
        state
            .ledgers
            .first()
            .redeemer
            .ledger()
            .with_log(|source| Ok(published(&state, source)?.map(|log| log.checkpoint())))
    })
    .await??;
    let Some(Some(note)) = note else {
        return Err(ApiError::Failed(Error::NotInLedger {
            what: "no signed head yet (nothing was recorded)".into(),
        }));
    };
    Ok((
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        note,
    ))
}

/// `GET /v1/log/tile/{*path}`: a tile or an entry bundle under the latest
/// signed head; `404` beyond it.
async fn log_tile(
    State(state): State<AppState>,
    Path(path): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    let resource = Resource::from_path(&format!("tile/{path}"))
        .map_err(|e| ApiError::bad_request("invalid_request", e.to_string()))?;
    let read = blocking(move || {
        state.ledgers.first().redeemer.ledger().with_log(|source| {
            let Some(log) = published(&state, source)? else {
                return Ok((0, None));
            };
            Ok((log.size(), log.read(resource)?))
        })
    })
    .await??;
    let what = match read {
        Some((_, Some(bytes))) => {
            return Ok((
                [
                    (header::CONTENT_TYPE, "application/octet-stream"),
                    (header::CACHE_CONTROL, IMMUTABLE),
                ],
                bytes,
            ))
        }
        Some((size, None)) if size > 0 => format!(
            "{} is beyond the latest signed head (size {size})",
            resource.path()
        ),
        _ => format!(
            "{}: no signed head yet (nothing was recorded)",
            resource.path()
        ),
    };
    Err(ApiError::Failed(Error::NotInLedger { what }))
}

/// The log's rows of the route table.
pub(super) fn rows() -> Vec<Row> {
    vec![
        (
            RouteDoc {
                answers: &[(
                    200,
                    "ledger_head",
                    "the latest signed checkpoint of the ledger's log",
                )],
                schema: Some(crate::openapi::schema_of::<ticket_issuer_ledger::ledger::log::Head>),
                ..doc(
                    "GET",
                    "/v1/ledger/head",
                    "The ledger's latest signed head",
                    None,
                )
            },
            Some(get(ledger_head)),
        ),
        (
            RouteDoc {
                answers: &[
                    (
                        200,
                        "text",
                        "the latest signed head, a C2SP tlog-checkpoint signed note (Cache-Control: no-cache)",
                    ),
                    (404, "error", "no signed head yet (`not_in_ledger`)"),
                ],
                public_log: true,
                ..doc(
                    "GET",
                    "/v1/log/checkpoint",
                    "The log's checkpoint (C2SP tlog-tiles)",
                    None,
                )
            },
            Some(get(log_checkpoint)),
        ),
        (
            RouteDoc {
                answers: &[
                    (
                        200,
                        "octets",
                        "a tile (`<L>/<N>[.p/<W>]`: 32-byte hashes) or an entry bundle (`entries/<N>[.p/<W>]`: big-endian uint16 length ‖ entry, each) under the latest signed head; immutable",
                    ),
                    (400, "error", "not a tile path (`invalid_request`)"),
                    (404, "error", "beyond the latest signed head (`not_in_ledger`)"),
                ],
                public_log: true,
                ..doc(
                    "GET",
                    "/v1/log/tile/{*path}",
                    "A tile or entry bundle of the log (C2SP tlog-tiles)",
                    None,
                )
            },
            Some(get(log_tile)),
        ),
    ]
}
