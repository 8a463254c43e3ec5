//! ticket-issuer's sales, plays and redemption as an HTTP service (docs/API.md): axum on tokio, rustls when
//! a certificate is given, bearer tokens compared in constant time, every
//! redemption through the one [`Redeemer`](ticket_issuer_ledger::redeemer::Redeemer)
//! (called off the async workers with `spawn_blocking`), errors mapped to
//! statuses by their kind, and Prometheus metrics. SIGTERM (or Ctrl-C)
//! drains in-flight requests.
//!
//! Its modules: `config` (how it is run), `state` (what every handler
//! shares), `routes` (a module per resource, each giving its rows of the
//! one route table the router and [`openapi`] are made from), `extract`
//! and `error` (what handlers take and refuse with), `middleware` (token,
//! access log, counting, timing, shedding, body, panics), `metrics`,
//! `app` (the router) and `server` (listening, draining, reloading).

#![deny(missing_docs)]

mod access_log;
mod app;
mod config;
mod cosigning;
mod error;
mod extract;
mod health;
mod ledgers;
mod metrics;
mod middleware;
pub mod openapi;
pub mod player;
mod response;
mod routes;
mod server;
mod state;
mod tokens;
mod top_lots;
pub mod witness;

pub use access_log::AccessLog;
pub use app::router;
pub use config::{Limits, ServiceConfig, ANSWER_WITHIN, LEDGER_WAIT, MAX_BATCH};
pub use cosigning::WitnessingConfig;
pub use error::status_of;
pub use ledgers::NodeLedgers;
pub use server::serve;
pub use tokens::{read_tokens, Roles, Token, TokenSet};
pub use top_lots::TopLotsConfig;
