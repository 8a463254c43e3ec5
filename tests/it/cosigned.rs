//! A node collecting its witnesses' cosignatures (docs/REDEMPTION.md
//! §Cosigned checkpoints): two `issuer witness serve`, one `issuer serve
//! --witness … --witness …`; the published checkpoint carries both
//! cosignatures, `ledger verify --witness-key` checks them, a witness down
//! holds the published checkpoint back (fail closed) until it is back, and
//! a forged cosignature is found.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use ticket_issuer::ledger::log::{open_checkpoint, verifier_key};
use ticket_issuer::store::Store;
use ticket_issuer::witness::cosignature::verify_cosignature;

use crate::common::{agent, call, issuer, te_store, Server, TOKEN};
use crate::witness::{keygen, Served};

/// Polls `what` every 100 ms for at most 30 s.
fn eventually<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_node_publishes_checkpoints_its_witnesses_cosigned() {
    let (dir, store) = te_store(30);
    let run = |args: &[&str], code| issuer(&store, args).expect_code(code);
    // The ledger exists once something is recorded: its key is the log's.
    let sale = json!({"game": "tresors-ensables"});
    let server = Server::start(&store);
    let a = agent();
    let sell = |server: &Server| {
        let (status, text) = call(
            &a,
            "POST",
            &server.url("/v1/sales"),
            Some(TOKEN),
            Some(sale.clone()),
        )
        .unwrap();
        assert_eq!(status, 200, "{text}");
        serde_json::from_str::<Value>(&text).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let first = sell(&server);
    drop(server);
    let public =
        ticket_issuer::seal::read_public(&Store::new(&store).ledger_public_key_path()).unwrap();
    // The witnesses' `--log`: as `ledger head --json` names it.
    let head = run(&["ledger", "head", "--json"], 0).json();
    let log = (
        head["origin"].as_str().unwrap().to_string(),
        head["verifier_key"].as_str().unwrap().to_string(),
    );
    assert_eq!(log.1, verifier_key(&public));

    let witness = |n: usize| {
        let wdir = dir.path().join(format!("witness-{n}"));
        std::fs::create_dir_all(&wdir).unwrap();
        let (key, vkey) = keygen(&wdir);
        (key, wdir.join("state"), vkey)
    };
    let (k1, s1, v1) = witness(1);
    let (k2, s2, v2) = witness(2);
    let w1 = Served::start_for(&k1, &s1, std::slice::from_ref(&log));
    let w2 = Served::start_for(&k2, &s2, std::slice::from_ref(&log));
    // A node collecting both witnesses' cosignatures, every second.
    let both = |w1: &Served, w2: &Served| {
        Server::start_with(
            &store,
            &[
                "--witness",
                &w1.url,
                &v1,
                "--witness",
                &w2.url,
                &v2,
                "--witness-every",
                "1",
            ],
        )
    };
    let server = both(&w1, &w2);
    let checkpoint = || {
        let (status, text) = call(
            &a,
            "GET",
            &server.url("/v1/log/checkpoint"),
            Some(TOKEN),
            None,
        )
        .unwrap();
        (status, text)
    };
    let size_of = |note: &str| open_checkpoint(note, &public).unwrap().size;
    let latest = || {
        run(&["ledger", "head", "--json"], 0).json()["size"]
            .as_u64()
            .unwrap()
    };

    // Published once both witnesses cosigned the latest head.
    let note = eventually("the head cosigned by both", || {
        let (status, note) = checkpoint();
        (status == 200 && size_of(&note) == latest()).then_some(note)
    });
    for v in [&w1.vkey, &w2.vkey] {
        verify_cosignature(&note, v).unwrap();
    }
    assert_eq!(run(&["ledger", "head", "--witnessed"], 0).stdout, note);
    // A player's receipt of the first sale: against the cosigned
    // checkpoint, both cosignatures in it.
    let (status, text) = call(
        &a,
        "GET",
        &server.url(&format!("/v1/receipts/{first}")),
        Some(TOKEN),
        None,
    )
    .unwrap();
    assert_eq!(status, 200, "{text}");
    let receipt: ticket_issuer::ledger::receipt::Receipt = serde_json::from_value(
        serde_json::from_str::<Value>(&text).unwrap()["sale"]["receipt"].clone(),
    )
    .unwrap();
    assert_eq!(receipt.checkpoint, note);
    let verified = receipt
        .verify(&public, &[w1.vkey.clone(), w2.vkey.clone()], 2)
        .unwrap();
    assert_eq!(verified.cosigned_by.len(), 2);
    let verify = run(
        &[
            "ledger",
            "verify",
            "--witness-key",
            &v1,
            "--witness-key",
            &v2,
            "--json",
        ],
        0,
    )
    .json();
    assert_eq!(verify["ok"], true, "{verify}");
    assert_eq!(
        verify["witnesses"]["cosigned_by"].as_array().unwrap().len(),
        2
    );
    // The audit checks the same (`ledger/witnessed`).
    let out = dir.path().join("audit");
    // Its statistical tests may flag a 30-unit block by chance: the
    // ledger's checks are what this test reads.
    let audit = issuer(
        &store,
        &[
            "audit",
            "--emission",
            "1",
            "--out",
            out.to_str().unwrap(),
            "-q",
            "--witness-key",
            &v1,
            "--witness-key",
            &v2,
        ],
    );
    assert!(audit.code <= 1, "{}", audit.stderr);
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let witnessed_check = report["ledger"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "ledger/witnessed")
        .cloned()
        .unwrap();
    assert_eq!(witnessed_check["ok"], true, "{witnessed_check}");

    // A witness down: the node fails closed, the published checkpoint
    // stays where both cosigned while the log grows; back, it catches up
    // (from the size it kept).
    let witnessed = size_of(&note);
    drop(w2);
    for _ in 0..3 {
        sell(&server);
    }
    assert!(latest() >= witnessed + 3);
    let metrics = eventually("a failure counted", || {
        let text = call(&a, "GET", &server.url("/metrics"), Some(TOKEN), None)
            .unwrap()
            .1;
        text.lines()
            .any(|l| l.starts_with("issuer_witness_failures_total{") && !l.ends_with(" 0"))
            .then_some(text)
    });
    assert!(
        metrics.contains(&format!("issuer_log_witnessed_size {witnessed}")),
        "{metrics}"
    );
    assert_eq!(
        size_of(&checkpoint().1),
        witnessed,
        "nothing unwitnessed is published"
    );
    let w2 = Served::start_for(&k2, &s2, std::slice::from_ref(&log));
    drop(server);
    let server = both(&w1, &w2);
    let caught_up = eventually("the grown head cosigned", || {
        let (status, note) = call(
            &a,
            "GET",
            &server.url("/v1/log/checkpoint"),
            Some(TOKEN),
            None,
        )
        .unwrap();
        (status == 200 && size_of(&note) == latest()).then_some(note)
    });
    assert!(size_of(&caught_up) > witnessed);
    drop(server);

    // Quorum 1 of 2 and fail open: the unreachable second witness does
    // not hold the checkpoint back.
    let w2_vkey = w2.vkey.clone();
    drop(w2);
    let server = Server::start_with(
        &store,
        &[
            "--witness",
            &w1.url,
            &v1,
            "--witness",
            "http://127.0.0.1:9",
            &v2,
            "--witness-quorum",
            "1",
            "--witness-policy",
            "open",
            "--witness-every",
            "1",
        ],
    );
    sell(&server);
    let open = eventually("the head cosigned by one", || {
        let (status, note) = call(
            &a,
            "GET",
            &server.url("/v1/log/checkpoint"),
            Some(TOKEN),
            None,
        )
        .unwrap();
        (status == 200 && size_of(&note) == latest() && verify_cosignature(&note, &w1.vkey).is_ok())
            .then_some(note)
    });
    assert!(verify_cosignature(&open, &w2_vkey).is_err());
    drop(server);
    // The store's policy asks for both: the latest witnessed head falls
    // short of it.
    let short = run(
        &[
            "ledger",
            "verify",
            "--witness-key",
            &v1,
            "--witness-key",
            &v2,
            "--json",
        ],
        1,
    )
    .json();
    assert_eq!(short["witnesses"]["ok"], false, "{short}");

    // A forged cosignature (one byte of it changed) is found.
    let db = rusqlite::Connection::open(store.join("ledger.sqlite")).unwrap();
    let (size, stored): (i64, String) = db
        .query_row(
            "SELECT size, checkpoint FROM ledger_heads ORDER BY size DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let name = w1.vkey.name().to_string();
    let line = stored
        .lines()
        .find(|l| l.starts_with(&format!("\u{2014} {name} ")))
        .unwrap();
    let sig = line.rsplit(' ').next().unwrap();
    let flipped: String = sig
        .char_indices()
        .map(|(i, c)| {
            if i == 20 {
                if c == 'A' {
                    'B'
                } else {
                    'A'
                }
            } else {
                c
            }
        })
        .collect();
    let forged = stored.replace(sig, &flipped);
    db.execute(
        "UPDATE ledger_heads SET checkpoint = ?1 WHERE size = ?2",
        rusqlite::params![forged, size],
    )
    .unwrap();
    let bad = run(
        &[
            "ledger",
            "verify",
            "--witness-key",
            &v1,
            "--witness-quorum",
            "1",
            "--json",
        ],
        1,
    )
    .json();
    let check: &Value = &bad["witnesses"];
    assert_eq!(check["ok"], false, "{bad}");
    assert!(
        check["bad"][0].as_str().unwrap().starts_with(&name),
        "{bad}"
    );
}
