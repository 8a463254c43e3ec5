//! The reference player page (docs/API.md §A client that checks what it
//! shows): a static page, `crates/service/player/`, built into the binary
//! and served by `issuer serve --player-page` on a loopback address only,
//! for demonstrations and integration tests. It buys, plays and redeems
//! through the public API, and shows an outcome only once it has checked
//! it: the block's seal with the issuer's key pinned in the page, the
//! unit's inclusion under the sealed root, and its record replayed by the
//! game's rules against what it displayed.
//!
//! Its files hold no secret (the key pinned is the issuer's public key), so
//! they are served without a token; every API route still needs one, which
//! the player types into the page (it never leaves the browser but in the
//! `Authorization` header of the page's own requests).

use std::sync::RwLock;

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

/// A script of the page, `crates/service/player/<name>`: an ES module.
macro_rules! script {
    ($name:literal) => {
        (
            concat!("/player/", $name),
            "text/javascript; charset=utf-8",
            include_str!(concat!("../player/", $name)),
        )
    };
}

/// Where the page is.
pub const PAGE: &str = "/player/";

/// The page's files, under [`PAGE`]: (path, content type, body). The
/// script is ES modules (`main.js` the page, one module per game under
/// `games/`, registered in `games/index.js`).
const FILES: [(&str, &str, &str); 10] = [
    script!("main.js"),
    script!("format.js"),
    script!("merkle.js"),
    script!("verify.js"),
    script!("api.js"),
    script!("ui.js"),
    script!("games/index.js"),
    script!("games/ile-au-tresor.js"),
    script!("games/tresors-ensables.js"),
    (
        "/player/player.css",
        "text/css; charset=utf-8",
        include_str!("../player/player.css"),
    ),
];

/// The modules of games made elsewhere (`Game::register`), registered
/// with [`register_game_module`]: (path, source).
static REGISTERED: RwLock<Vec<(&'static str, &'static str)>> = RwLock::new(Vec::new());

/// Serves `source` as the page's module of the game `slug`, at
/// `/player/games/<slug>.js`, for a game registered at run time (the page
/// imports it from `GET /v1/games`'s `module`); before the server starts.
/// Refused for a slug that is not lower-case letters, digits and dashes,
/// or that already has a module.
pub fn register_game_module(slug: &str, source: &'static str) -> Result<(), String> {
    let well_formed = !slug.is_empty()
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !well_formed || slug == "index" {
        return Err(format!("{slug:?} is not a game's slug"));
    }
    if game_module(slug).is_some() {
        return Err(format!("the game {slug} already has a page module"));
    }
    let path: &'static str = Box::leak(format!("/player/games/{slug}.js").into_boxed_str());
    let mut registered = REGISTERED.write().unwrap_or_else(|p| p.into_inner());
    registered.push((path, source));
    Ok(())
}

/// The page's modules of games registered at run time: (path, source).
fn registered() -> Vec<(&'static str, &'static str)> {
    REGISTERED.read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Where a game's module is served: `/player/games/<slug>.js`, when the
/// page has one (`games/index.js` is the table of them, no game's), or
/// one was registered ([`register_game_module`]).
#[must_use]
pub fn game_module(slug: &str) -> Option<&'static str> {
    if slug == "index" {
        return None;
    }
    let of_game = |path: &&str| {
        path.strip_prefix("/player/games/")
            .and_then(|name| name.strip_suffix(".js"))
            == Some(slug)
    };
    FILES
        .iter()
        .map(|(path, _, _)| *path)
        .find(of_game)
        .or_else(|| registered().into_iter().map(|(path, _)| path).find(of_game))
}

/// The page itself, before the issuer's key is written into it.
const INDEX: &str = include_str!("../player/index.html");

/// What `INDEX` holds where the issuer's public key goes (hex).
const KEY_SLOT: &str = "{{ISSUER_PUBLIC_KEY}}";

/// Only the page's own files, no inline script or style, requests to this
/// origin only, and no framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Whether `path` is one of the page's (answered without a token).
#[must_use]
pub fn is_page_path(path: &str) -> bool {
    path == "/player"
        || path == PAGE
        || FILES.iter().any(|(p, _, _)| *p == path)
        || registered().iter().any(|(p, _)| *p == path)
}

/// The page's routes, its index with `public_key` (the raw Ed25519 key
/// the node checks every seal with) pinned in it.
pub fn routes<S: Clone + Send + Sync + 'static>(public_key: [u8; 32]) -> Router<S> {
    let key: String = public_key.iter().map(|b| format!("{b:02x}")).collect();
    let index = INDEX.replace(KEY_SLOT, &key);
    let mut router = Router::new()
        .route(
            "/player",
            get(|| async { Redirect::permanent(PAGE).into_response() }),
        )
        .route(
            PAGE,
            get(move || {
                let index = index.clone();
                async move { file("text/html; charset=utf-8", index) }
            }),
        );
    let modules = registered()
        .into_iter()
        .map(|(path, body)| (path, "text/javascript; charset=utf-8", body));
    for (path, content_type, body) in FILES.into_iter().chain(modules) {
        router = router.route(path, get(move || async move { file(content_type, body) }));
    }
    router
}

/// One of the page's files, with its type and the page's policy.
fn file(content_type: &'static str, body: impl IntoResponse) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // The pinned key is written into the page: never a stale copy.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
