//! Issue 34: each platform in its own lane (docs/SECURITY.md §Each
//! platform in its own lane). A sale belongs to the name of the token that
//! made it; another platform can neither learn, play nor redeem it, and
//! its idempotency keys are its own; a refusal to a platform names nothing
//! of the node; a batch's key holds against a concurrent batch.

use std::path::Path;

use serde_json::{json, Value};
use ticket_issuer::game::Game;
use ticket_issuer::unit_id::UnitId;

use crate::common::{agent, call, issuer, store_redeemer, te_store, valid_id_of, Server};

const A1: &str = "lane-a-first-token-0123456789";
const A2: &str = "lane-a-second-token-0123456789";
const B: &str = "lane-b-token-0123456789abcdef";
const OPS: &str = "lane-operator-token-0123456789";
const PROM: &str = "lane-metrics-token-0123456789";

/// Platform A under two tokens (a rotation), platform B, the operator,
/// a scraper.
fn tokens() -> String {
    format!(
        "platform-a:{A1}\nplatform-a:{A2}\nplatform-b:{B}\noperator ops:{OPS}\nmetrics prometheus:{PROM}\n"
    )
}

/// `method path` with `token`: (status, JSON body or `null`).
fn ask(
    server: &Server,
    token: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let body = match (method, body) {
        ("POST", None) => Some(json!({})),
        (_, body) => body,
    };
    let (status, text) = call(&agent(), method, &server.url(path), Some(token), body).unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The requests a platform may make of a unit, as (method, path, body).
fn unit_requests(id: &str) -> Vec<(&'static str, String, Option<Value>)> {
    vec![
        ("GET", format!("/v1/units/{id}"), None),
        ("GET", format!("/v1/units/{id}?stopped_after_rolls=1"), None),
        ("GET", format!("/v1/plays/{id}"), None),
        ("GET", format!("/v1/plays/{id}/picture.svg"), None),
        ("GET", format!("/v1/receipts/{id}"), None),
        (
            "POST",
            format!("/v1/plays/{id}/roll"),
            Some(json!({"roll": 2})),
        ),
        ("POST", format!("/v1/plays/{id}/stop"), None),
        ("POST", "/v1/redemptions".into(), Some(json!({ "id": id }))),
    ]
}

/// The ledger's size, as the operator reads it.
fn log_size(store: &Path) -> u64 {
    issuer(store, &["ledger", "head", "--json"])
        .expect_code(0)
        .json()["size"]
        .as_u64()
        .unwrap()
}

#[test]
fn a_platform_reaches_only_its_own_units_and_keys() {
    let (_dir, store) = te_store(40);
    let server = Server::start_with_tokens(&store, &tokens(), &[] as &[&str]);
    let sale = json!({"game": "tresors-ensables"});
    let keyed = |token: &str| {
        let (status, text) = crate::common::call_keyed(
            &agent(),
            &server.url("/v1/sales"),
            token,
            "order-1001",
            sale.clone(),
        );
        assert_eq!(status, 200, "{text}");
        serde_json::from_str::<Value>(&text).unwrap()
    };
    // A sells under its order number, then plays one roll with its other
    // token: one lane.
    let a = keyed(A1);
    let id = a["id"].as_str().unwrap().to_string();
    let (status, rolled) = ask(
        &server,
        A2,
        "POST",
        &format!("/v1/plays/{id}/roll"),
        Some(json!({"roll": 1})),
    );
    assert_eq!(status, 200, "{rolled}");
    // B's lookup of A's key: unknown. B's sale under it: B's own.
    let (status, looked) = ask(&server, B, "GET", "/v1/sales/order-1001", None);
    assert_eq!(
        (status, looked["error"].as_str()),
        (404, Some("no_sale_under_key")),
        "{looked}"
    );
    let b = keyed(B);
    assert_ne!(b["id"], a["id"], "{b}");
    let (_, again) = ask(&server, A2, "GET", "/v1/sales/order-1001", None);
    assert_eq!(again["id"], a["id"], "{again}");
    let (_, again) = ask(&server, B, "GET", "/v1/sales/order-1001", None);
    assert_eq!(again["id"], b["id"], "{again}");

    // Every request of B about A's unit is answered as for a unit never
    // sold and as for an ID that names no unit, and records nothing.
    let unsold = valid_id_of(&store, Game::TRESORS_ENSABLES, 1, 1, 39);
    let nowhere =
        valid_id_of(&store, Game::TRESORS_ENSABLES, 1, 1, 39).replacen("TE-1-", "TE-7-", 1);
    let before = log_size(&store);
    for ((method, path, body), (others, nones)) in unit_requests(&id).into_iter().zip(
        unit_requests(&unsold)
            .into_iter()
            .zip(unit_requests(&nowhere)),
    ) {
        let (status, refused) = ask(&server, B, method, &path, body);
        assert_eq!(
            (status, refused["error"].as_str()),
            (404, Some("unknown_unit")),
            "B {method} {path}: {refused}"
        );
        for (other_id, (m, p, b)) in [(&unsold, others), (&nowhere, nones)] {
            let (s, r) = ask(&server, B, m, &p, b);
            let same = r.to_string().replace(other_id.as_str(), &id);
            assert_eq!((s, same), (status, refused.to_string()), "{m} {p}");
        }
    }
    let (status, batch) = ask(
        &server,
        B,
        "POST",
        "/v1/redemptions/batch",
        Some(json!({"units": [{"id": id}, {"id": unsold}]})),
    );
    assert_eq!(status, 200, "{batch}");
    for r in batch["results"].as_array().unwrap() {
        assert_eq!(r["error"], "unknown_unit", "{batch}");
    }
    assert_eq!(log_size(&store), before, "B's requests recorded nothing");
    let (_, state) = ask(&server, A1, "GET", &format!("/v1/plays/{id}"), None);
    assert_eq!(state["rolls"], 1, "{state}");

    // The operator sees every unit; the scraper reads the metrics alone,
    // which no platform may.
    let (status, check) = ask(&server, OPS, "GET", &format!("/v1/units/{id}"), None);
    assert_eq!(
        (status, check["kind"].as_str()),
        (200, Some("check")),
        "{check}"
    );
    for token in [A1, B] {
        assert_eq!(ask(&server, token, "GET", "/metrics", None).0, 403);
    }
    assert_eq!(ask(&server, PROM, "GET", "/metrics", None).0, 200);
    assert_eq!(ask(&server, OPS, "GET", "/metrics", None).0, 200);
    let (status, refused) = ask(&server, PROM, "GET", &format!("/v1/units/{id}"), None);
    assert_eq!(
        (status, refused["error"].as_str()),
        (403, Some("forbidden"))
    );

    // Units handed out by other means go to the platform named.
    let marked = valid_id_of(&store, Game::TRESORS_ENSABLES, 1, 1, 30);
    let list = format!("{marked}\n");
    let args = [
        "mark-sold",
        "--emission",
        "1",
        "--ids",
        "-",
        "--platform",
        "platform-b",
    ];
    crate::common::issuer_with_input(&store, &args, &list).expect_code(0);
    assert_eq!(
        ask(&server, B, "GET", &format!("/v1/plays/{marked}"), None).0,
        200
    );
    assert_eq!(
        ask(&server, A1, "GET", &format!("/v1/plays/{marked}"), None).0,
        404
    );
    issuer(
        &store,
        &[
            "mark-sold",
            "--emission",
            "1",
            "--ids",
            "-",
            "--platform",
            "no:colon",
        ],
    )
    .expect_code(2);
}

#[test]
fn a_refusal_to_a_platform_names_no_file_host_or_ledger() {
    let (dir, store) = te_store(20);
    let mut server = Server::start_with_tokens(&store, &tokens(), &[] as &[&str]);
    let sale = json!({"game": "tresors-ensables"});
    let (status, sold) = ask(&server, A1, "POST", "/v1/sales", Some(sale.clone()));
    assert_eq!(status, 200, "{sold}");
    let id = sold["id"].as_str().unwrap().to_string();
    let ledger_id: String = rusqlite::Connection::open(store.join("ledger.sqlite"))
        .unwrap()
        .query_row("SELECT id FROM ledger_identity", [], |r| r.get(0))
        .unwrap();
    // The emission bound to another ledger (the refusal that named the
    // ledger's file and ID), then a block made unreadable, each met by a
    // node started after it.
    server.terminate();
    let binding = store.join("emissions/tresors-ensables/e000001/ledger.json");
    let text = std::fs::read_to_string(&binding).unwrap();
    std::fs::write(
        &binding,
        text.replace(&ledger_id, "0123456789abcdef0123456789abcdef"),
    )
    .unwrap();
    let mut server = Server::start_with_tokens(&store, &tokens(), &[] as &[&str]);
    let mut refusals = vec![ask(&server, A1, "POST", "/v1/sales", Some(sale.clone()))];
    server.terminate();
    std::fs::write(&binding, text).unwrap();
    let block = store.join("emissions/tresors-ensables/e000001/b000001.tkb");
    let mut bytes = std::fs::read(&block).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&block, &bytes).unwrap();
    let server = Server::start_with_tokens(&store, &tokens(), &[] as &[&str]);
    refusals.push(ask(&server, A1, "GET", &format!("/v1/units/{id}"), None));
    refusals.push(ask(&server, A1, "POST", "/v1/sales", Some(sale)));
    let shown = [
        store.display().to_string(),
        dir.path().display().to_string(),
        ledger_id.clone(),
        "0123456789abcdef0123456789abcdef".into(),
        ".tkb".into(),
        "ledger.sqlite".into(),
        "ledger.json".into(),
    ];
    for (status, refusal) in &refusals {
        assert!(*status >= 400, "{refusal}");
        let text = refusal.to_string();
        for secret in &shown {
            assert!(!text.contains(secret.as_str()), "{secret} in {text}");
        }
        assert!(refusal.get("path").is_none(), "{text}");
    }
    assert_eq!(refusals[0].1["error"], "emission_of_another_ledger");
    // The operator reads the detail on the node's standard error.
    let mut server = server;
    server.terminate();
    let err = server.stderr();
    assert!(err.contains("block") && err.contains(".tkb"), "{err}");
}

#[test]
fn two_batches_under_one_key_never_both_apply() {
    // Two platforms' worth of threads send two different batches under one
    // key at once, round after round: one batch applies whole, the other
    // is refused whole, never a mix.
    let (_dir, store) = te_store(200);
    let r = store_redeemer(&store, true);
    let ids: Vec<UnitId> = (0..160)
        .map(|i| {
            valid_id_of(&store, Game::TRESORS_ENSABLES, 1, 1, i)
                .parse()
                .unwrap()
        })
        .collect();
    crate::common::sold_in(&r, &ids);
    for id in &ids {
        crate::common::played_in(&r, id, None);
    }
    let r = std::sync::Arc::new(r);
    for round in 0..40 {
        let key = format!("batch-{round}");
        let halves = [
            &ids[round * 4..round * 4 + 2],
            &ids[round * 4 + 2..round * 4 + 4],
        ];
        let outcomes: Vec<Vec<Result<_, _>>> = std::thread::scope(|s| {
            let handles: Vec<_> = halves
                .iter()
                .map(|units| {
                    let r = std::sync::Arc::clone(&r);
                    let key = key.clone();
                    s.spawn(move || {
                        let units: Vec<(UnitId, Option<u32>)> =
                            units.iter().map(|id| (*id, None)).collect();
                        let lines = units
                            .iter()
                            .map(|(id, _)| (id.to_string(), None::<u32>))
                            .collect::<Vec<_>>();
                        let request = ticket_issuer::redeemer::batch_parts(
                            lines.iter().map(|(id, stop)| (id.as_str(), *stop)),
                        );
                        match r.redeem_batch_keyed(&units, &key, &request) {
                            Ok(each) => each,
                            Err(e) => vec![Err(e)],
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let applied: Vec<usize> = outcomes
            .iter()
            .map(|each| each.iter().filter(|o| o.is_ok()).count())
            .collect();
        assert!(
            matches!(applied.as_slice(), [2, 0] | [0, 2]),
            "round {round}: {applied:?} {outcomes:?}"
        );
    }
}
