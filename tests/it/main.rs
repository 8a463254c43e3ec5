//! The integration tests, built as one binary (one link, one process):
//! each module tests one concept; `common` holds the shared fixtures.

mod audit;
mod audit_browser;
mod block;
mod browser;
mod cli;
mod common;
mod conformance;
mod contract;
mod cosigned;
mod emission;
mod failover;
mod faults;
mod format;
mod fuzz_replay;
mod fuzz_seeds;

/// The entry functions the fuzz targets call (fuzz/src/lib.rs), replayed here.
#[allow(dead_code)]
#[path = "../../fuzz/src/lib.rs"]
mod fuzz_entries;

mod game;
mod hostile;
mod idempotency;
mod independent_check;
mod lanes;
mod log_tiles;
mod log_vectors;
mod merkle;
mod noninterference;
mod openapi;
mod operator;
mod par;
mod pg;
mod pg_routes;
mod picture;
mod player_modules;
mod player_page;
mod receipts;
mod reconcile;
mod redeem;
mod restore;
mod revealed;
mod rng;
mod rng_stream;
mod sale;
mod secrecy;
mod service;
mod shares;
mod structure;
mod terminal;
mod third_game;
mod tresors;
mod vectors;
mod witness;
