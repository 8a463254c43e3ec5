//! The service's router: its shared state and background tasks, the
//! route table's handlers and description, and the middleware around them.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::header;
use axum::middleware::from_fn_with_state;
use axum::routing::get;
use axum::Router;
use ticket_issuer_ledger::ledger::published::Publication;

use crate::access_log::AccessLog;
use crate::config::ServiceConfig;
use crate::cosigning::Cosigning;
use crate::ledgers::NodeLedgers;
use crate::metrics::Metrics;
use crate::middleware::{count_answer, panicked, read_body, require_token, shed, time_work};
use crate::routes::{method_not_allowed, no_route, table, OPENAPI_PATH};
use crate::state::{NthLedger, RemainingCache, Shared};
use crate::tokens::TokenSet;
use crate::top_lots::Watch;
use crate::{openapi, player};

/// The service's routes over `ledgers`, accepting `tokens`, as `config`
/// says: `public_health`: `/healthz` and `/readyz` need none;
/// `public_log`: `/v1/log/…` (the log's checkpoint and tiles) need none;
/// `player_page`: the reference player page under `/player/`, with the
/// issuer's public key pinned in it; `top_lots`: the top-lots watch;
/// each request is written to `access_log`, if given.
pub fn router(
    ledgers: NodeLedgers,
    tokens: TokenSet,
    access_log: Option<AccessLog>,
    config: &ServiceConfig,
) -> Router {
    let ServiceConfig {
        public_health,
        public_log,
        player_page,
        ref limits,
        top_lots,
        ref witnessing,
        ..
    } = *config;
    let page = player_page.then(|| {
        let key = ledgers
            .redeemers()
            .next()
            .map(|r| r.public_key().to_bytes());
        player::routes(key.unwrap_or_default())
    });
    // A node failing closed publishes, and makes receipts against, only
    // witnessed heads.
    let ledgers = match witnessing {
        Some(w) if !w.fails_open() => ledgers.map(|r| r.with_publication(Publication::Witnessed)),
        _ => ledgers,
    };
    let state = Arc::new(Shared {
        ledgers: ledgers.into_running(),
        tokens,
        access_log,
        metrics: Metrics::default(),
        public_health,
        public_log,
        player_page,
        in_flight: Arc::new(tokio::sync::Semaphore::new(limits.max_in_flight)),
        body_wait: Duration::from_secs(limits.body_seconds),
        top_lots: top_lots.map(|c| Arc::new(Watch::new(c))),
        cosigning: witnessing.clone().map(|c| Arc::new(Cosigning::new(c))),
        remaining: RemainingCache::default(),
    });
    for (n, ledger) in state.ledgers.all().iter().enumerate() {
        let probed = Arc::new(NthLedger(Arc::clone(&state), n));
        tokio::spawn(Arc::clone(&ledger.health).run(probed));
    }
    if let Some(watch) = &state.top_lots {
        tokio::spawn(Arc::clone(watch).run(Arc::clone(&state)));
    }
    if let Some(cosigning) = &state.cosigning {
        // One round before the node serves: a witness that cosigned a head
        // this log does not extend stops the money path before the first
        // sale (a machine restored whole, its remembered head with it).
        if let Err(e) = cosigning.round(&state.ledgers.first().redeemer) {
            eprintln!("serve: witnessing: {e}");
        }
        tokio::spawn(Arc::clone(cosigning).run(Arc::clone(&state)));
    }
    let table = table();
    // Written once: every request gets the same bytes.
    let description = Bytes::from(
        serde_json::to_vec(&openapi::document(table.iter().map(|(doc, _)| doc)))
            .expect("the description serialises"),
    );
    let mut router = Router::new();
    for (doc, handler) in table {
        if let Some(handler) = handler {
            router = router.route(doc.path, handler);
        }
    }
    // Inner: a matched route's work timed.
    router = router.route_layer(from_fn_with_state(Arc::clone(&state), time_work));
    if let Some(page) = page {
        router = router.merge(page);
    }
    router
        .route(
            OPENAPI_PATH,
            // The document itself: an OpenAPI document has no `kind`.
            get(move || async move { ([(header::CONTENT_TYPE, "application/json")], description) }),
        )
        .fallback(no_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(from_fn_with_state(Arc::clone(&state), read_body))
        .layer(from_fn_with_state(Arc::clone(&state), require_token))
        // Outer: past `max_in_flight` requests, 503 at once; a panic in
        // any of it is a 500 `internal`, not a dropped connection.
        .layer(from_fn_with_state(Arc::clone(&state), shed))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(panicked))
        .layer(from_fn_with_state(Arc::clone(&state), count_answer))
        .with_state(state)
}
