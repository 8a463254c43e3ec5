//! A third game proves a game is one folder and one registration line:
//! « Dé d'or » (`examples/third-game/de_dor.rs`, its rules, its audit tally
//! and its PAR sheet) goes through the library, and, as the `third-game`
//! example (`issuer` with it registered), through the command line, the
//! HTTP API, the audit, the closing statement and a PostgreSQL ledger,
//! with no edit to the product. Run them with `cargo test --release
//! third_game` (which builds the example too).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use ticket_issuer::analysis;
use ticket_issuer::emission::{BlockChoice, Emission};
use ticket_issuer::export::export_jsonl;
use ticket_issuer::game::Game;
use ticket_issuer::ledger::log;
use ticket_issuer::ledger::ops::PlayAction;
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::money::Cents;
use ticket_issuer::par::ParRequest;
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

use crate::common::{agent, issuer, post, run_binary, Run, Server, TOKEN, TOKEN_NAME};

#[path = "../../examples/third-game/de_dor.rs"]
#[allow(dead_code)]
mod de_dor;

use de_dor::{DeDor, CENTS_PER_PIP, DICE};

/// A prize as printed ("0", "0.5", "12.3") in cents.
fn parse_price_or_zero(prize: &str) -> u32 {
    if prize == "0" {
        0
    } else {
        Cents::parse_price(prize).unwrap()
    }
}

#[test]
fn third_game_goes_through_every_step_with_no_edit_to_the_product() {
    // The registration line.
    let game = analysis::register(&DeDor, &DeDor).unwrap();
    // A second registration of it is the same game; a clash is refused.
    assert_eq!(Game::register(&DeDor).unwrap(), game);
    assert_eq!(Game::from_code(99), Some(game));

    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("store"));
    store.keygen().unwrap();
    let secrets = store.secrets().unwrap();
    let keys = crate::common::StoreKeys::of(&store);

    // generate → verify (the unit rules too, with the records key).
    let emission = Emission::new(&store, game, 1).with_units(1_000).unwrap();
    emission
        .generate(&secrets, 100, BlockChoice::Number(1), &|_| {})
        .unwrap();
    let block = emission.dir().join("b000001.tkb");
    let report = keys.verify(&block, true);
    assert!(report.ok, "{:?}", report.failures);

    // export: one line a unit, the game's fields, prizes as played.
    let mut lines = Vec::new();
    let exported = export_jsonl(&keys.authentic(&block).unwrap(), &mut lines, &|_| {}).unwrap();
    assert_eq!(exported, 1_000);
    let lines: Vec<serde_json::Value> = String::from_utf8(lines)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["dice"].as_array().unwrap().len(), DICE);

    // close → sell → play → stop → redeem.
    emission.close(&secrets).unwrap();
    let redeemer = crate::common::store_redeemer(store.root(), true);
    let mut paid = 0u32;
    let mut stopped = 0;
    for _ in 0..40 {
        let sale = redeemer.sell(game, 100).unwrap();
        let id: UnitId = sale.id.parse().unwrap();
        let line = &lines[sale.index as usize];
        let dice: Vec<u8> = serde_json::from_value(line["dice"].clone()).unwrap();
        let mut view = redeemer.play(&id, PlayAction::Step(1)).unwrap();
        assert_eq!(view.steps[0].get("die"), Some(&json!(dice[0])));
        if view.may_stop {
            // A stop after the first die pays it.
            view = redeemer.play(&id, PlayAction::Stop).unwrap();
            assert_eq!(view.end, Some("stopped"));
            stopped += 1;
        }
        let mut n = 1;
        while !view.over {
            n += 1;
            view = redeemer.play(&id, PlayAction::Step(n)).unwrap();
        }
        let expected = match view.end {
            Some("stopped") => u32::from(dice[0]) * CENTS_PER_PIP,
            Some("lost") => 0,
            other => panic!("{other:?}"),
        };
        let redemption = redeemer.redeem(&id, None).unwrap();
        assert_eq!(parse_price_or_zero(&redemption.prize), expected, "{id}");
        paid += expected;
        // Paid once.
        assert!(redeemer.redeem(&id, None).is_err());
    }
    assert!(stopped > 0 && paid > 0);
    // A stop before the first die is the game's refusal, in its words.
    let sale = redeemer.sell(game, 100).unwrap();
    let id: UnitId = sale.id.parse().unwrap();
    let refused = redeemer.play(&id, PlayAction::Stop).unwrap_err();
    assert!(
        refused.to_string().contains("throw the first die first"),
        "{refused}"
    );

    // ledger verify: every sale, play and redemption in a sound log.
    let target = LedgerTarget::of_store(&store);
    let signer = ticket_issuer::seal::read_public(&store.ledger_public_key_path()).unwrap();
    let log = target
        .with_log(|src| log::verify(src, &[signer], None))
        .unwrap()
        .unwrap();
    assert!(log.ok, "{:?}", log.findings);

    // par: the game's sheet, its engine and block against its exact RTP.
    let authentic = keys.authentic(&block).unwrap();
    let sheet = game
        .par_sheet(&ParRequest {
            price_cents: Some(100),
            options: Default::default(),
            samples: 20_000,
            seed: None,
            block: Some(&authentic),
        })
        .unwrap();
    let members = serde_json::to_value(&sheet.members).unwrap();
    assert_eq!(members["exact"][0]["rtp"]["fraction"], "125/162");
    for z in [
        &members["monte_carlo"][0]["rtp"]["z"],
        &members["block"]["rtp"]["z"],
    ] {
        assert!(z.as_f64().unwrap().abs() < 5.0, "{members}");
    }
    assert!(
        sheet.text.contains("PAR sheet: de-dor at 1 €"),
        "{}",
        sheet.text
    );
}

// ---------------------------------------------------------------------------
// Through every door: the `third-game` example is `issuer` with « Dé d'or »
// registered (examples/third-game/main.rs, one line)
// ---------------------------------------------------------------------------

/// The `third-game` example, beside this test binary (`cargo test` builds
/// the examples before it runs the tests).
pub(crate) fn binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(Path::parent).unwrap();
    let bin = profile.join("examples").join("third-game");
    assert!(
        bin.is_file(),
        "{} is missing: `cargo test --release third_game` builds it (alone: `cargo build --release --example third-game`)",
        bin.display()
    );
    bin
}

/// `third-game --store STORE ARGS…`.
fn dd(store: &Path, args: &[&str]) -> Run {
    run_binary(&binary(), store, args, "", &[])
}

/// A store with keys and « Dé d'or » emission 1 (one block of `units`),
/// closed: (temp dir, store, the block's path).
pub(crate) fn dd_store(units: u32) -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    dd(&store, &["keygen"]).expect_code(0);
    let units = units.to_string();
    let made = dd(
        &store,
        &[
            "generate",
            "--game",
            "de-dor",
            "--emission",
            "1",
            "--units",
            &units,
            "--quiet",
            "--json",
        ],
    )
    .expect_code(0)
    .json();
    let block = made["blocks"][0]["path"].as_str().unwrap().to_string();
    dd(&store, &["close", "--game", "de-dor", "--emission", "1"]).expect_code(0);
    (dir, store, block)
}

/// Plays a sold unit to its end, or stops it after the first die when
/// `stop_early` and the game allows it, through `step` (the play's answer
/// to step N) and `stop`; returns what the play must pay, from the dice
/// its answers showed, by the rules (de_dor.rs).
fn play_out(stop_early: bool, step: impl Fn(u32) -> Value, stop: impl Fn() -> Value) -> u32 {
    let mut dice = Vec::new();
    let mut n = 0;
    loop {
        n += 1;
        let view = step(n);
        assert_eq!(view["rolls"], n, "{view}");
        dice.push(view["steps"][0]["die"].as_u64().unwrap() as u32);
        if stop_early && view["may_stop"] == true {
            let stopped = stop();
            assert_eq!(
                (&stopped["over"], &stopped["end"]),
                (&json!(true), &json!("stopped")),
                "{stopped}"
            );
            return dice[0] * CENTS_PER_PIP;
        }
        if view["over"] == true {
            let lost = dice.contains(&1);
            assert_eq!(view["end"], if lost { "lost" } else { "end" }, "{view}");
            assert!(lost || dice.len() == DICE, "{dice:?}");
            return if lost {
                0
            } else {
                dice.iter().sum::<u32>() * CENTS_PER_PIP
            };
        }
    }
}

/// A prize as answered ("0", "0.5") in cents.
fn cents(prize: &Value) -> u32 {
    parse_price_or_zero(prize.as_str().unwrap())
}

#[test]
fn third_game_through_the_issuer_command_line() {
    let (_dir, s, block) = dd_store(2_000);
    // The production binary does not know the game: it never saw it.
    let unknown = issuer(&s, &["verify", &block]).expect_code(2);
    assert!(
        unknown.stderr.contains("unknown game code 99"),
        "{}",
        unknown.stderr
    );
    let verified = dd(&s, &["verify", &block]).expect_code(0);
    assert!(verified.stdout.contains("OK: every check passed"));

    // sell → play (the neutral words and today's alias) → stop → redeem.
    let mut paid = 0;
    let mut stopped = 0;
    for i in 0..24 {
        let sale = dd(&s, &["sell", "--game", "de-dor", "--price", "1", "--json"])
            .expect_code(0)
            .json();
        let id = sale["id"].as_str().unwrap().to_string();
        assert!(id.starts_with("DD-1-1-"), "{sale}");
        let word = if i % 2 == 0 { "--step" } else { "--roll" };
        let expected = play_out(
            i % 3 == 0,
            |n| {
                dd(&s, &["play", &id, word, &n.to_string(), "--json"])
                    .expect_code(0)
                    .json()
            },
            || {
                dd(&s, &["play", &id, "--stop", "--json"])
                    .expect_code(0)
                    .json()
            },
        );
        stopped += usize::from(i % 3 == 0 && expected > 0);
        let redeemed = dd(&s, &["redeem", &id, "--json"]).expect_code(0).json();
        assert_eq!(cents(&redeemed["prize"]), expected, "{redeemed}");
        paid += expected;
        let again = dd(&s, &["redeem", &id, "--json"]).expect_code(1).json();
        assert_eq!(again["error"], "already_redeemed", "{again}");
    }
    assert!(paid > 0 && stopped > 0, "{paid} {stopped}");

    // The log, the status and the PAR sheet know the game.
    let log = dd(&s, &["ledger", "verify", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(
        (&log["ok"], &log["reconciled"]),
        (&json!(true), &json!(true))
    );
    let status = dd(&s, &["status", "--json"]).expect_code(0).json();
    let emission = &status["emissions"][0];
    assert_eq!(
        (
            &emission["game"],
            &emission["sold"],
            &emission["redeemed_units"]
        ),
        (&json!("de-dor"), &json!(24), &json!(24)),
        "{status}"
    );
    let par = dd(
        &s,
        &["par", "--game", "de-dor", "--samples", "20000", "--json"],
    )
    .expect_code(0)
    .json();
    assert_eq!(par["exact"][0]["rtp"]["fraction"], "125/162", "{par}");

    // The audit runs the game's own tally: its test and its check.
    let out = s.parent().unwrap().join("audit");
    let out_arg = out.display().to_string();
    dd(
        &s,
        &[
            "audit",
            "--emission",
            "1",
            "--game",
            "de-dor",
            "--out",
            &out_arg,
        ],
    )
    .expect_code(0);
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let faces = report["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "block-1/dice-faces")
        .unwrap_or_else(|| panic!("no dice-faces test: {}", report["tests"]));
    assert!(faces["p"].as_f64().unwrap() > 0.0, "{faces}");
    let prizes = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "block-1/dice-prizes")
        .unwrap_or_else(|| panic!("no dice-prizes check: {}", report["checks"]));
    assert_eq!(prizes["ok"], true, "{prizes}");
    assert_eq!(prizes["detail"], "2000 units", "{prizes}");
    assert_eq!(report["ok"], true);

    // The closing statement: what was sold and paid, signed.
    let ended = end_claims(&s, &[]);
    let closing = &ended["closing"];
    assert_eq!(closing["reconciled"], true, "{ended}");
    let b = &closing["blocks"][0];
    assert_eq!(
        (
            &b["sold"],
            &b["redeemed"],
            &b["paid_cents"],
            &b["unclaimed"]
        ),
        (&json!(24), &json!(24), &json!(paid), &json!(0)),
        "{closing}"
    );
    assert!(closing["statement"]
        .as_str()
        .unwrap()
        .starts_with("ticket-issuer closing statement/v1\ngame de-dor\n"));
}

/// `end-claims` of emission 1, early (`extra`: the ledger); its answer.
fn end_claims(store: &Path, extra: &[&str]) -> Value {
    let args = [
        "end-claims",
        "--emission",
        "1",
        "--game",
        "de-dor",
        "--force",
        "--reason",
        "third game test",
        "--json",
    ];
    dd(store, &[&args[..], extra].concat())
        .expect_code(0)
        .json()
}

/// The platform's token file of [`crate::common::Server`].
pub(crate) fn tokens() -> String {
    format!("# test\nsales,metrics {TOKEN_NAME}:{TOKEN}\n")
}

/// Sells `count` units over HTTP, plays each out (every third stopped
/// early) and redeems it; the cents paid.
fn sell_play_redeem_over_http(server: &Server, count: u32) -> u32 {
    let agent = agent();
    let mut paid = 0;
    for i in 0..count {
        let (status, sale) = post(
            &agent,
            server,
            "/v1/sales",
            json!({"game": "de-dor", "price": "1"}),
        );
        assert_eq!(status, 200, "{sale}");
        let id = sale["id"].as_str().unwrap().to_string();
        let word = if i % 2 == 0 { "step" } else { "roll" };
        let expected = play_out(
            i % 3 == 0,
            |n| {
                let (status, view) = post(
                    &agent,
                    server,
                    &format!("/v1/plays/{id}/roll"),
                    json!({ word: n }),
                );
                assert_eq!(status, 200, "{view}");
                view
            },
            || post(&agent, server, &format!("/v1/plays/{id}/stop"), json!({})).1,
        );
        let (status, redeemed) = post(&agent, server, "/v1/redemptions", json!({"id": id}));
        assert_eq!(status, 200, "{redeemed}");
        assert_eq!(cents(&redeemed["prize"]), expected, "{redeemed}");
        let (status, again) = post(&agent, server, "/v1/redemptions", json!({"id": id}));
        assert_eq!(
            (status, again["error"].as_str()),
            (409, Some("already_redeemed")),
            "{again}"
        );
        paid += expected;
    }
    paid
}

#[test]
fn third_game_through_the_http_api() {
    let (_dir, s, _) = dd_store(1_000);
    let server = Server::start_binary(&binary(), &s, &tokens(), &[] as &[&str]);
    let paid = sell_play_redeem_over_http(&server, 12);
    // The ledger the server wrote is the one the command line reads.
    let status = dd(&s, &["status", "--json"]).expect_code(0).json();
    let emission = &status["emissions"][0];
    assert_eq!(emission["redeemed_units"], 12, "{status}");
    assert_eq!(
        Cents::parse_price(emission["redeemed_amount"].as_str().unwrap()).unwrap_or(0),
        paid,
        "{status}"
    );
}

#[test]
fn third_game_on_a_postgresql_ledger() {
    let Some(pg) = crate::pg::Cluster::start("third_game_on_a_postgresql_ledger") else {
        return;
    };
    let url = pg.url();
    let ledger = ["--ledger", url.as_str()];
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("store");
    dd(&s, &["keygen"]).expect_code(0);
    Store::new(&s).ledger_signing_key().unwrap();
    pg.migrate(&s);
    dd(
        &s,
        &[
            "generate",
            "--game",
            "de-dor",
            "--emission",
            "1",
            "--units",
            "1000",
            "--quiet",
        ],
    )
    .expect_code(0);
    dd(&s, &["close", "--game", "de-dor", "--emission", "1"]).expect_code(0);
    let server = Server::start_binary(&binary(), &s, &tokens(), &ledger);
    let paid = sell_play_redeem_over_http(&server, 8);
    drop(server);
    let log = dd(&s, &[&["ledger", "verify", "--json"][..], &ledger].concat())
        .expect_code(0)
        .json();
    assert_eq!(
        (&log["ok"], &log["reconciled"]),
        (&json!(true), &json!(true)),
        "{log}"
    );
    let ended = end_claims(&s, &ledger);
    let b = &ended["closing"]["blocks"][0];
    assert_eq!(
        (&b["redeemed"], &b["paid_cents"]),
        (&json!(8), &json!(paid)),
        "{ended}"
    );
}
