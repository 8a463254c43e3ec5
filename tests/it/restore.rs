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
    let run = issuer(
        &store,
        &[
            "ledger",
            "recover",
            "--from",
            published.to_str().unwrap(),
            "--json",
        ],
    )
    .expect_code(0)
    .json();
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
