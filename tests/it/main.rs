//! The integration tests, built as one binary (one link, one process):
//! each module tests one concept; `common` holds the shared fixtures.

mod block;
mod cli;
mod common;
mod contract;
mod emission;
mod format;
mod game;
mod hostile;
mod independent_check;
mod merkle;
mod redeem;
mod rng;
mod tresors;
mod vectors;
