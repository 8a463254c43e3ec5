//! How a route's work is done and answered: off the async threads, on the
//! asker's [`Window`] (so what a token may learn is decided in one place),
//! within [`ANSWER_WITHIN`], refused at once while the ledger does not
//! answer.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::response::{IntoResponse, Response};
use serde::Serialize;
use ticket_issuer_core::error::Error;
use ticket_issuer_core::game::Game;
use ticket_issuer_ledger::redeemer::{Asker, Redeemer, Window};

use crate::config::ANSWER_WITHIN;
use crate::error::ApiError;
use crate::ledgers::{NodeLedger, Route};
use crate::response::{Answer, Worked};
use crate::state::{AppState, Shared};

/// A route's answer: refused before any work (the request, or the ledger
/// down), or the outcome of the work it ran, whose time is observed.
pub(crate) type Answered = Result<Worked<Result<Response, ApiError>>, ApiError>;

/// Runs `work` on the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        ApiError::Failed(Error::Internal {
            what: format!("a redemption task failed: {e}"),
        })
    })
}

/// `work` off the async threads, its outcome waited for at most
/// [`ANSWER_WITHIN`] and a second: a read or write held by a ledger that
/// stopped answering is answered `ledger_outcome_unknown` then (it may yet
/// be recorded; the task is left to end when the ledger answers).
/// The ledgers it goes to (`ledgers`, indices of the node's) are the ones
/// an unknown outcome names.
pub(crate) async fn bounded_work<T: Send + 'static>(
    state: &AppState,
    ledgers: &[usize],
    work: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<Result<T, Error>, ApiError> {
    match tokio::time::timeout(ANSWER_WITHIN + Duration::from_secs(1), blocking(work)).await {
        Ok(done) => done,
        Err(_) => Ok(Err(Error::LedgerOutcomeUnknown {
            path: PathBuf::from(
                ledgers
                    .iter()
                    .map(|&n| state.ledgers.all()[n].redeemer.ledger().describe())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            reason: format!(
                "no outcome within {} s: the ledger does not answer; the operation may yet be recorded: retry it under the same idempotency key, or look it up",
                (ANSWER_WITHIN + Duration::from_secs(1)).as_secs()
            ),
        })),
    }
}

/// Refuses `asker` at once while `ledger` does not answer the node's
/// probe (health.rs), or its log was rolled back: nothing recorded.
pub(crate) fn ledger_down(ledger: &NodeLedger, asker: &Asker) -> Result<(), ApiError> {
    // A log that does not extend what was signed or witnessed answers no
    // platform from its stale rows (a unit sold since would read unsold);
    // the operator still reads them, to recover.
    if asker.own_units_only() {
        if let Some(finding) = ledger.redeemer.known_rollback() {
            return Err(ApiError::refused(
                asker,
                Error::LedgerRolledBack {
                    path: PathBuf::from(&finding.file),
                    reason: finding.describe(),
                },
            ));
        }
    }
    let Some(down) = ledger.health.down_for() else {
        return Ok(());
    };
    Err(ApiError::refused(
        asker,
        Error::LedgerUnavailable {
            path: PathBuf::from(ledger.redeemer.ledger().describe()),
            reason: format!(
                "the ledger has not answered this node for {} s",
                down.as_secs()
            ),
        },
    ))
}

/// The ledgers `route` goes to that answer, in order: refused at once
/// when the emission is routed nowhere, or when none answers.
pub(crate) fn routed(state: &Shared, asker: &Asker, route: &Route) -> Result<Vec<usize>, ApiError> {
    let each = state
        .ledgers
        .route(route)
        .map_err(|e| ApiError::refused(asker, e))?;
    let all = state.ledgers.all();
    // A keyed request skips no ledger: the key may be recorded in the one
    // that does not answer, and another would make a second sale under it.
    if let Route::Each { keyed: true } = route {
        for &n in &each {
            ledger_down(&all[n], asker)?;
        }
        return Ok(each);
    }
    let up: Vec<usize> = each
        .iter()
        .copied()
        .filter(|&n| ledger_down(&all[n], asker).is_ok())
        .collect();
    match up.is_empty() {
        true => ledger_down(&all[each[0]], asker).map(|()| each),
        false => Ok(up),
    }
}

/// One unit's outcome answered as `kind` for `asker`: a redemption, sale
/// or play step counted, a refusal told as `asker` may read it.
pub(crate) fn outcome<T: Serialize>(
    state: &Shared,
    asker: &Asker,
    kind: &'static str,
    outcome: Result<T, Error>,
) -> Result<Response, ApiError> {
    let done = outcome.map_err(|e| ApiError::refused(asker, e))?;
    state.metrics.done(kind);
    Ok(Answer(kind, done).into_response())
}

/// Whether a ledger's answer leaves the question to the next one (a node
/// with several ledgers: none left to sell here, no sale under the key
/// here).
fn none_here(e: &Error) -> bool {
    matches!(e.code(), "sold_out" | "no_sale_under_key")
}

/// Runs `work` on `asker`'s window of the ledger `route` goes to, off the
/// async threads, then answers its outcome as `kind`: every answer to a
/// token is built through a [`Window`], so what it may learn is decided
/// in one place. [`Route::Each`] tries each ledger until one has it.
pub(crate) async fn answer<T: Serialize + Send + 'static>(
    state: AppState,
    asker: Asker,
    kind: &'static str,
    route: Route,
    work: impl Fn(&Window) -> Result<T, Error> + Send + 'static,
) -> Answered {
    let ledgers = routed(&state, &asker, &route)?;
    let worker = Arc::clone(&state);
    let seen = asker.clone();
    let done = bounded_work(&state, &ledgers.clone(), move || {
        let mut last = None;
        for n in ledgers {
            let done = work(&worker.ledgers.all()[n].redeemer.window(seen.clone()));
            match done {
                Err(e) if none_here(&e) => last = Some(Err(e)),
                done => return done,
            }
        }
        last.unwrap_or_else(|| {
            Err(Error::Internal {
                what: "a request was routed to no ledger".into(),
            })
        })
    })
    .await?;
    Ok(Worked(outcome(&state, &asker, kind, done)))
}

/// [`answer`] for an operator's route, whose work needs the whole
/// redeemer of the ledger `route` goes to (the token middleware lets only
/// the operator role through).
pub(crate) async fn answer_operator<T: Serialize + Send + 'static>(
    state: AppState,
    kind: &'static str,
    route: Route,
    work: impl FnOnce(&Redeemer) -> Result<T, Error> + Send + 'static,
) -> Answered {
    let n = routed(&state, &Asker::Operator, &route)?[0];
    let worker = Arc::clone(&state);
    let done = bounded_work(&state, &[n], move || {
        work(&worker.ledgers.all()[n].redeemer)
    })
    .await?;
    Ok(Worked(outcome(&state, &Asker::Operator, kind, done)))
}

/// The route of a request naming a game by `slug` and an emission (an
/// unknown game: the first ledger, whose work refuses it).
pub(crate) fn emission_route(slug: &str, emission: u32) -> Route {
    Game::from_slug(slug).map_or(Route::First, |game| Route::Emission(game, emission))
}

/// The game whose slug is `slug`.
pub(crate) fn game_of(slug: &str) -> Result<Game, Error> {
    Game::from_slug(slug).ok_or_else(|| Error::UnknownGame {
        name: slug.to_string(),
        known: Game::known(),
    })
}
