//! Issue 19: safe retries and exact answers on the money path. An
//! operation under an idempotency key is done once and answered the same on
//! every retry; a key reused for another request is refused; a sale that
//! cannot hand its unit out records nothing; the first sale after units
//! were marked sold finds the first unsold unit.

use std::path::Path;

use serde_json::{json, Value};
use ticket_issuer::block::reader::BlockFile;
use ticket_issuer::game::Game;
use ticket_issuer::Error;

use crate::common::{
    agent, get, issuer, issuer_with_input, store_redeemer, te_block_path, te_store, Server, TOKEN,
};

/// A POST with an `Idempotency-Key`; (status, body).
fn post_keyed(server: &Server, path: &str, key: &str, body: Value) -> (u16, Value) {
    let mut response = agent()
        .post(server.url(path))
        .header("Authorization", format!("Bearer {TOKEN}"))
        .header("Idempotency-Key", key)
        .content_type("application/json")
        .send(body.to_string())
        .unwrap();
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap())
}

/// Sales recorded in the store's ledger.
fn sales(store: &Path) -> u64 {
    let db = rusqlite::Connection::open(store.join("ledger.sqlite")).unwrap();
    db.query_row("SELECT count(*) FROM sales", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_sale_that_cannot_hand_its_unit_out_records_nothing_and_burns_no_unit() {
    let (_dir, store) = te_store(300);
    // A records key of another block opens nothing of this one.
    crate::common::generate_te(&store, 2, 10);
    let other_key = store.parent().unwrap().join("e2.key");
    issuer(
        &store,
        &[
            "keys",
            "export-records-key",
            "--emission",
            "2",
            "-o",
            other_key.to_str().unwrap(),
        ],
    )
    .expect_code(0);
    // A node with the public key only: no master secret, so the records key
    // given is the only one.
    let node = store.parent().unwrap().join("node");
    std::fs::create_dir_all(node.join("keys")).unwrap();
    crate::common::copy_tree(&store.join("emissions"), &node.join("emissions"));
    std::fs::copy(
        store.join("keys/issuer.pub.pem"),
        node.join("keys/issuer.pub.pem"),
    )
    .unwrap();
    for args in [
        vec!["sell", "--game", "tresors-ensables", "--json"],
        vec![
            "sell",
            "--game",
            "tresors-ensables",
            "--json",
            "--records-key",
            other_key.to_str().unwrap(),
        ],
    ] {
        for _ in 0..3 {
            let run = issuer(&node, &args);
            assert_ne!(run.code, 0, "{}", run.stdout);
            let error: Value = serde_json::from_str(&run.stdout).unwrap();
            assert!(
                ["need_records_key", "wrong_records_key"]
                    .contains(&error["error"].as_str().unwrap()),
                "{error}"
            );
        }
    }
    assert!(!node.join("ledger.sqlite").exists() || sales(&node) == 0);
    // A damaged chunk: each failed sale, over HTTP too, records nothing.
    let good = std::fs::read(te_block_path(&store)).unwrap();
    let file = BlockFile::open(&te_block_path(&store)).unwrap();
    let mut bad = good.clone();
    bad[file.index[0].offset as usize + 100] ^= 0x10;
    std::fs::write(te_block_path(&store), &bad).unwrap();
    for _ in 0..3 {
        let refused = store_redeemer(&store, true).sell(Game::TRESORS_ENSABLES, 100);
        assert!(
            matches!(refused, Err(Error::BlockRejected { .. })),
            "{refused:?}"
        );
    }
    let server = Server::start(&store);
    for _ in 0..3 {
        let (status, refused) = crate::common::post(
            &agent(),
            &server,
            "/v1/sales",
            json!({"game": "tresors-ensables"}),
        );
        assert_eq!(
            (status, refused["error"].as_str()),
            (422, Some("block_rejected")),
            "{refused}"
        );
        // A platform is told the code, never the node's files: neither the
        // block's file nor the store's folders are named (issues 22, 34).
        let text = refused.to_string();
        assert!(!text.contains("b000001.tkb"), "{text}");
        assert!(!text.contains(store.to_str().unwrap()), "{text}");
        assert!(refused.get("path").is_none(), "{text}");
    }
    drop(server);
    assert!(!store.join("ledger.sqlite").exists() || sales(&store) == 0);
    // Mended: the first unit of the block is sold, none was burned.
    std::fs::write(te_block_path(&store), &good).unwrap();
    let sale = store_redeemer(&store, true)
        .sell(Game::TRESORS_ENSABLES, 100)
        .unwrap();
    assert_eq!(sale.index, 0);
    assert_eq!(sales(&store), 1);
}

#[test]
fn a_key_sells_rolls_stops_and_pays_once_and_answers_the_first_time_again() {
    let (_dir, store) = te_store(200);
    let server = Server::start(&store);
    let sale_body = json!({"game": "tresors-ensables"});
    let (status, first) = post_keyed(&server, "/v1/sales", "sale-0001", sale_body.clone());
    assert_eq!(status, 200, "{first}");
    for _ in 0..3 {
        assert_eq!(
            post_keyed(&server, "/v1/sales", "sale-0001", sale_body.clone()),
            (200, first.clone())
        );
    }
    assert_eq!(sales(&store), 1);
    // The same key for another request: refused, nothing done.
    let (status, reused) = post_keyed(
        &server,
        "/v1/sales",
        "sale-0001",
        json!({"game": "tresors-ensables", "price": "1"}),
    );
    assert_eq!(
        status, 200,
        "the same request (its price is the game's only one): {reused}"
    );
    let (status, reused) = post_keyed(
        &server,
        "/v1/sales",
        "sale-0001",
        json!({"game": "ile-au-tresor", "price": "1"}),
    );
    assert_eq!(
        (status, reused["error"].as_str()),
        (422, Some("idempotency_key_reused")),
        "{reused}"
    );
    assert_eq!(sales(&store), 1);
    // The sale is found by its key; an unknown key is no sale.
    let (status, found) = get(&agent(), &server, "/v1/sales/sale-0001");
    assert_eq!(status, 200, "{found}");
    let mut found: Value = serde_json::from_str(&found).unwrap();
    assert_eq!(found["kind"], "sale_lookup");
    found["kind"] = first["kind"].clone();
    assert_eq!(found, first);
    let (status, none) = get(&agent(), &server, "/v1/sales/never-used");
    assert_eq!(status, 404, "{none}");
    assert!(none.contains("no_sale_under_key"), "{none}");
    for bad in ["", "has space", "a#b", &"k".repeat(129)] {
        let (status, refused) = post_keyed(&server, "/v1/sales", bad, sale_body.clone());
        assert_eq!(
            (status, refused["error"].as_str()),
            (400, Some("bad_idempotency_key")),
            "{bad:?}: {refused}"
        );
    }
    assert_eq!(sales(&store), 1);

    // Rolls and the stop: the first answer again, never a second step.
    let id = first["id"].as_str().unwrap().to_string();
    let roll = |n: u32, key: &str| {
        post_keyed(
            &server,
            &format!("/v1/plays/{id}/roll"),
            key,
            json!({"roll": n}),
        )
    };
    let (status, one) = roll(1, "roll-1");
    assert_eq!(status, 200, "{one}");
    assert_eq!(roll(1, "roll-1"), (200, one.clone()));
    // `step`, the neutral name, is the same request as `roll`, its alias.
    let step = post_keyed(
        &server,
        &format!("/v1/plays/{id}/roll"),
        "roll-1",
        json!({"step": 1}),
    );
    assert_eq!(step, (200, one.clone()));
    assert_eq!(one["replayed"], false);
    let (status, reused) = roll(2, "roll-1");
    assert_eq!(
        (status, reused["error"].as_str()),
        (422, Some("idempotency_key_reused")),
        "{reused}"
    );
    let mut n = 1;
    let mut last = one;
    while last["over"] == false && last["may_stop"] == false {
        n += 1;
        last = roll(n, &format!("roll-{n}")).1;
    }
    if last["over"] == false {
        let stop = |key: &str| post_keyed(&server, &format!("/v1/plays/{id}/stop"), key, json!({}));
        let (status, stopped) = stop("stop-1");
        assert_eq!(status, 200, "{stopped}");
        assert_eq!(stop("stop-1"), (200, stopped));
    }
    // The redemption: paid once, answered the same on a retry with its key
    // (without one, a retry is `already_redeemed`).
    let pay = |key: &str| post_keyed(&server, "/v1/redemptions", key, json!({"id": id}));
    let (status, paid) = pay("pay-1");
    assert_eq!(status, 200, "{paid}");
    assert_eq!(pay("pay-1"), (200, paid.clone()));
    let (status, again) =
        crate::common::post(&agent(), &server, "/v1/redemptions", json!({"id": id}));
    assert_eq!(
        (status, again["error"].as_str()),
        (409, Some("already_redeemed")),
        "{again}"
    );
    let (status, reused) = pay("roll-1");
    assert_eq!(
        (status, reused["error"].as_str()),
        (422, Some("idempotency_key_reused")),
        "{reused}"
    );
}

#[test]
fn sixteen_clients_retrying_one_key_get_one_sale() {
    let (_dir, store) = te_store(100);
    let server = Server::start(&store);
    let answers: Vec<(u16, Value)> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..16)
            .map(|_| {
                s.spawn(|| {
                    post_keyed(
                        &server,
                        "/v1/sales",
                        "one-sale",
                        json!({"game": "tresors-ensables"}),
                    )
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(answers.iter().all(|a| *a == answers[0]), "{answers:?}");
    assert_eq!(answers[0].0, 200);
    assert_eq!(sales(&store), 1);
}

#[test]
fn a_batch_under_a_key_is_answered_the_same_and_another_batch_is_refused_whole() {
    let (_dir, store, _block) = crate::common::shared_block(100).copy_store();
    let ids: Vec<String> = (0..6)
        .map(|i| crate::common::valid_id(&store, 1, 1, i))
        .collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    crate::common::sold(&store, &refs[..4]);
    let server = Server::start(&store);
    let units: Vec<Value> = ids.iter().map(|id| json!({"id": id})).collect();
    let body = json!({"units": units});
    let (status, first) = post_keyed(&server, "/v1/redemptions/batch", "batch-1", body.clone());
    assert_eq!(status, 200, "{first}");
    let kinds: Vec<&str> = first["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "redemption",
            "redemption",
            "redemption",
            "redemption",
            "error",
            "error"
        ]
    );
    assert_eq!(
        post_keyed(&server, "/v1/redemptions/batch", "batch-1", body.clone()),
        (200, first.clone())
    );
    let other = json!({"units": [{"id": ids[0]}]});
    let (status, refused) = post_keyed(&server, "/v1/redemptions/batch", "batch-1", other);
    assert_eq!(
        (status, refused["error"].as_str()),
        (422, Some("idempotency_key_reused")),
        "{refused}"
    );
    // The command line: one key for the whole batch.
    drop(server);
    let lines: String = ids.iter().map(|id| format!("{id}\n")).collect();
    let run = |key: &str| {
        issuer_with_input(
            &store,
            &["redeem", "--batch", "-", "--idempotency-key", key],
            &lines,
        )
    };
    let a = run("cli-batch");
    let b = run("cli-batch");
    assert_eq!(a.stdout, b.stdout);
    let paid = a
        .stdout
        .lines()
        .filter(|l| l.contains("\"kind\":\"redemption\""))
        .count();
    assert_eq!(
        paid, 0,
        "the units were paid under batch-1 already: {}",
        a.stdout
    );
}

#[test]
fn the_commands_take_a_key_too() {
    let (_dir, store) = te_store(50);
    let sell = |key: &str| {
        issuer(
            &store,
            &[
                "sell",
                "--game",
                "tresors-ensables",
                "--json",
                "--idempotency-key",
                key,
            ],
        )
    };
    let first = sell("cli-sale").expect_code(0).json();
    assert_eq!(sell("cli-sale").expect_code(0).json(), first);
    let found = issuer(
        &store,
        &[
            "sell",
            "--game",
            "tresors-ensables",
            "--json",
            "--idempotency-key",
            "cli-sale",
            "--lookup",
        ],
    )
    .expect_code(0)
    .json();
    assert_eq!(found, first);
    let none = issuer(
        &store,
        &[
            "sell",
            "--game",
            "tresors-ensables",
            "--json",
            "--idempotency-key",
            "nothing",
            "--lookup",
        ],
    );
    assert_eq!(none.code, 1, "{}", none.stdout);
    assert!(none.stdout.contains("no_sale_under_key"));
    assert_eq!(sales(&store), 1);
    let id = first["id"].as_str().unwrap();
    let play = |roll: &str, key: &str| {
        issuer(
            &store,
            &[
                "play",
                id,
                "--roll",
                roll,
                "--json",
                "--idempotency-key",
                key,
            ],
        )
    };
    let roll = play("1", "r1").expect_code(0).json();
    assert_eq!(play("1", "r1").expect_code(0).json(), roll);
    let reused = play("2", "r1");
    assert_eq!(reused.code, 1);
    assert!(
        reused.stdout.contains("idempotency_key_reused"),
        "{}",
        reused.stdout
    );
    let bad = issuer(
        &store,
        &[
            "sell",
            "--game",
            "tresors-ensables",
            "--json",
            "--idempotency-key",
            "no spaces",
        ],
    );
    assert_eq!(bad.code, 2);
    assert!(bad.stdout.contains("bad_idempotency_key"), "{}", bad.stdout);
}

#[test]
fn the_first_sale_after_units_were_marked_sold_finds_the_first_gap() {
    let (_dir, store) = te_store(5000);
    let r = store_redeemer(&store, true);
    // Units 0..4999 except 2500 and 4321 marked sold, in an order that
    // leaves the sale cursor at 0.
    let ids: Vec<_> = (0..5000u32)
        .rev()
        .filter(|i| *i != 2500 && *i != 4321)
        .map(|i| {
            crate::common::valid_id_of(&store, Game::TRESORS_ENSABLES, 1, 1, i)
                .parse()
                .unwrap()
        })
        .collect();
    let marked = r.mark_sold(&ids, None).unwrap();
    assert_eq!(marked.marked, 4998);
    assert_eq!(r.sell(Game::TRESORS_ENSABLES, 100).unwrap().index, 2500);
    let last = r.sell(Game::TRESORS_ENSABLES, 100).unwrap();
    assert_eq!((last.index, last.block_sold_out), (4321, true));
    let out = r.sell(Game::TRESORS_ENSABLES, 100);
    assert!(matches!(out, Err(Error::SoldOut { .. })), "{out:?}");
}
