//! `issuer` with a toy third game, « Dé d'or » (`de_dor.rs`), registered:
//! the same command line, every command, one more game. Never part of the
//! production binary; built by `cargo test` as an example, and run by the
//! tests whose names hold `third_game` (tests/it/third_game.rs).

mod de_dor;

fn main() {
    // The registration: its rules, and its module of the player page.
    ticket_issuer::analysis::register(&de_dor::DeDor, &de_dor::DeDor)
        .expect("« Dé d'or » registers once");
    ticket_issuer::service::player::register_game_module("de-dor", include_str!("de-dor.js"))
        .expect("« Dé d'or » has no page module yet");
    std::process::exit(ticket_issuer::cli::main());
}
