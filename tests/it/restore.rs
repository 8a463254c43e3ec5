//! Issue 35: a ledger restored from an older copy never sells or pays a
//! unit twice. The store remembers the latest head it signed; a log that
//! does not extend it is refused (`ledger_rolled_back`) for every write and
//! named by `ledger verify`; `ledger recover` puts the missing entries back
//! from the published log, after which every unit is as it was.

use std::path::Path;

use crate::common::{issuer, played, te_store};

/// Sells the next Trésors Ensablés unit at 1 €: its ID.
fn sell(store: &Path) -> String {
    let sold = issuer(store, &["sell", "--game", "tresors-ensables", "--json"])
        .expect_code(0)
        .json();
    sold["id"].as_str().unwrap().to_string()
}

/// Sells, plays to its end and redeems one Trésors Ensablés unit: its ID.
fn sell_play_redeem(store: &Path) -> String {
    let id = sell(store);
    played(store, None, &id, None);
    issuer(store, &["redeem", &id, "--json"]).expect_code(0);
    id
}

/// The ledger's files (the database, and its WAL where one is left).
fn ledger_files(store: &Path) -> Vec<String> {
    ["ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm"]
        .into_iter()
        .filter(|f| store.join(f).exists())
        .map(str::to_string)
        .collect()
}

/// `ledger recover --from FROM --json`, which succeeds: its report.
fn recovered(store: &Path, from: &Path) -> serde_json::Value {
    let from = from.to_str().unwrap();
    issuer(store, &["ledger", "recover", "--from", from, "--json"])
        .expect_code(0)
        .json()
}

/// The error code of a refused command's JSON answer.
fn refused_code(store: &Path, args: &[&str], exit: i32) -> String {
    let run = issuer(store, &[args, &["--json"]].concat()).expect_code(exit);
    let answer: serde_json::Value = serde_json::from_str(&run.stdout)
        .or_else(|_| serde_json::from_str(&run.stderr))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    answer["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no code in {answer}"))
        .to_string()
}

#[test]
fn a_restored_sqlite_ledger_is_refused_until_recovered_from_its_published_log() {
    let (dir, store) = te_store(200);
    let before: Vec<String> = (0..2).map(|_| sell_play_redeem(&store)).collect();
    // The nightly backup (the ledger closed: no command runs).
    let backup = dir.path().join("backup");
    std::fs::create_dir(&backup).unwrap();
    let files = ledger_files(&store);
    for f in &files {
        std::fs::copy(store.join(f), backup.join(f)).unwrap();
    }
    let after: Vec<String> = (0..3).map(|_| sell_play_redeem(&store)).collect();
    let head = issuer(&store, &["ledger", "head", "--json"])
        .expect_code(0)
        .json();
    let signed = head["size"].as_u64().unwrap();
    // The log as published (what a mirror keeps).
    let published = dir.path().join("published");
    issuer(
        &store,
        &["ledger", "tiles", "--out", published.to_str().unwrap()],
    )
    .expect_code(0);
    // The restore.
    for f in ledger_files(&store) {
        std::fs::remove_file(store.join(f)).unwrap();
    }
    for f in &files {
        std::fs::copy(backup.join(f), store.join(f)).unwrap();
    }
    let restored = issuer(&store, &["ledger", "head", "--json"])
        .expect_code(0)
        .json()["size"]
        .as_u64()
        .unwrap();
    assert!(restored < signed, "{restored} < {signed}");

    // `ledger verify` names what is missing, from the head the store kept.
    let verify = issuer(&store, &["ledger", "verify", "--json"])
        .expect_code(1)
        .json();
    let findings = verify["log"]["findings"].to_string();
    assert!(
        findings.contains(&format!("entries {restored} to {} are missing", signed - 1)),
        "{findings}"
    );
    // Nothing is sold, played or paid: every write is refused, exit 3.
    assert_eq!(
        refused_code(&store, &["redeem", &after[0]], 3),
        "ledger_rolled_back"
    );
    assert_eq!(
        refused_code(
            &store,
            &["sell", "--game", "tresors-ensables", "--price", "1"],
            3
        ),
        "ledger_rolled_back"
    );
    assert_eq!(
        issuer(&store, &["ledger", "head", "--json"])
            .expect_code(0)
            .json()["size"],
        restored,
        "nothing was recorded and no head signed over the shorter log"
    );

    // A copy of the log that does not reach the remembered head is refused
    // whole.
    let short = dir.path().join("short");
    std::fs::create_dir(&short).unwrap();
    issuer(
        &store,
        &["ledger", "tiles", "--out", short.to_str().unwrap()],
    )
    .expect_code(0);
    let run = issuer(
        &store,
        &["ledger", "recover", "--from", short.to_str().unwrap()],
    );
    assert_ne!(run.code, 0, "{}", run.stdout);

    // Recovery from the published log.
    let run = recovered(&store, &published);
    assert_eq!(run["ledger_size"], signed, "{run}");
    assert_eq!(run["restored"]["redemptions"], 3, "{run}");
    assert_eq!(run["restored"]["sales"], 3, "{run}");
    issuer(&store, &["ledger", "verify"]).expect_code(0);
    // Every unit is as it was: paid once, never sold again.
    for id in before.iter().chain(&after) {
        assert_eq!(
            refused_code(&store, &["redeem", id], 1),
            "already_redeemed",
            "{id}"
        );
    }
    let next = sell(&store);
    assert!(
        !before.contains(&next) && !after.contains(&next),
        "{next} was sold before"
    );
    issuer(&store, &["ledger", "verify"]).expect_code(0);
}

/// A machine restored whole (the ledger and the head its store remembers,
/// from one backup): nothing on the node knows what it signed since, but
/// its witness does. The witness's refusal stops the money path
/// (`ledger_rolled_back`, `/readyz` 503) from before the first request,
/// `ledger recover` brings the entries back, the witness cosigns again,
/// and the node sells on, never a unit twice.
#[test]
fn a_machine_restored_whole_is_stopped_by_its_witness_until_recovered() {
    use crate::common::{agent, copy_tree, get, post, Server};
    use crate::witness::{keygen, Served};
    use serde_json::json;
    use std::time::{Duration, Instant};

    let (dir, store) = te_store(200);
    let before: Vec<String> = (0..2).map(|_| sell_play_redeem(&store)).collect();
    let head = issuer(&store, &["ledger", "head", "--json"])
        .expect_code(0)
        .json();
    let log = (
        head["origin"].as_str().unwrap().to_string(),
        head["verifier_key"].as_str().unwrap().to_string(),
    );
    // The machine's backup: the store, its ledger and remembered head.
    let backup = dir.path().join("backup");
    copy_tree(&store, &backup);

    let wdir = dir.path().join("witness");
    std::fs::create_dir_all(&wdir).unwrap();
    let (wkey, vkey) = keygen(&wdir);
    let witness = Served::start_for(&wkey, &wdir.join("state"), std::slice::from_ref(&log));
    let node = || {
        Server::start_with(
            &store,
            &["--witness", &witness.url, &vkey, "--witness-every", "1"],
        )
    };
    let server = node();
    let after: Vec<String> = (0..3).map(|_| sell_play_redeem(&store)).collect();
    let signed = issuer(&store, &["ledger", "head", "--json"])
        .expect_code(0)
        .json()["size"]
        .as_u64()
        .unwrap();
    let witnessed =
        || issuer(&store, &["ledger", "head", "--witnessed", "--json"]).json()["size"].as_u64();
    let deadline = Instant::now() + Duration::from_secs(30);
    while witnessed() != Some(signed) {
        assert!(
            Instant::now() < deadline,
            "the witness never cosigned {signed}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let published = dir.path().join("published");
    issuer(
        &store,
        &["ledger", "tiles", "--out", published.to_str().unwrap()],
    )
    .expect_code(0);
    drop(server);

    // The restore, whole.
    std::fs::remove_dir_all(&store).unwrap();
    copy_tree(&backup, &store);
    issuer(&store, &["ledger", "verify"]).expect_code(0);
    let server = node();
    let a = agent();
    // Refused from the first request on: the witness was asked before the
    // node served.
    let (status, e) = post(
        &a,
        &server,
        "/v1/sales",
        json!({"game": "tresors-ensables"}),
    );
    assert_eq!(
        (status, &e["error"]),
        (503, &json!("ledger_rolled_back")),
        "{e}"
    );
    let (status, _) = get(&a, &server, "/readyz");
    assert_eq!(status, 503);
    let (status, e) = post(&a, &server, "/v1/redemptions", json!({ "id": after[0] }));
    assert_eq!(
        (status, &e["error"]),
        (503, &json!("ledger_rolled_back")),
        "{e}"
    );

    // Recovered from the published log: the witness cosigns the same head
    // again, and the node serves.
    let run = recovered(&store, &published);
    assert_eq!(run["ledger_size"], signed, "{run}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let sold = loop {
        let (status, e) = post(
            &a,
            &server,
            "/v1/sales",
            json!({"game": "tresors-ensables"}),
        );
        if status == 200 {
            break e["id"].as_str().unwrap().to_string();
        }
        assert_eq!(e["error"], "ledger_rolled_back", "{e}");
        assert!(
            Instant::now() < deadline,
            "still refused: {e}\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        !before.contains(&sold) && !after.contains(&sold),
        "{sold} was sold before"
    );
    // Sold by the operator's commands: paid once, as before.
    for id in before.iter().chain(&after) {
        assert_eq!(
            refused_code(&store, &["redeem", id], 1),
            "already_redeemed",
            "{id}"
        );
    }
    let (status, _) = get(&a, &server, "/readyz");
    assert_eq!(status, 200);
    drop(witness);
}
