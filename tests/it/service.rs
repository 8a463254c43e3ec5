//! Redemption as a service (issue 11): the `Redeemer` under many threads
//! against the SQLite ledger, the signed log and its proofs checked by this
//! file's own reading of RFC 9162 and C2SP signed notes, hand edits found
//! by `ledger verify`, `redeem --batch`, and the real `issuer serve` over
//! 127.0.0.1 (refusals, batch, 401s, SIGTERM, kill -9 under load).

use std::collections::BTreeSet;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use serde_json::{json, Value};
use tempfile::TempDir;
use ticket_issuer::game::Game;
use ticket_issuer::ledger::log;
use ticket_issuer::ledger::Ledger;
use ticket_issuer::record::record_size;
use ticket_issuer::{Error, Redeemer, Store, UnitId};

use crate::common::{
    agent, call, get, issuer, issuer_with_input, post, shared_block, sold, sold_in, valid_id,
    Server, ISSUER, TOKEN,
};
use crate::redeem::{hash_of, rfc9162_verify_inclusion, rfc_leaf_hash, sha256, Hash};

/// A private copy of the shared 1 € store: (temp dir, store folder).
fn store_copy() -> (TempDir, PathBuf) {
    let (dir, store, _block) = shared_block(100).copy_store();
    (dir, store)
}

/// A redeemer of `store` with its own keys.
fn redeemer(store: &Path) -> Redeemer {
    crate::common::store_redeemer(store, true)
}

fn id(store: &Path, index: u32) -> String {
    valid_id(store, 1, 1, index)
}

fn unit(store: &Path, index: u32) -> UnitId {
    id(store, index).parse().unwrap()
}

/// The store's ledger public key.
fn ledger_key(store: &Path) -> VerifyingKey {
    ticket_issuer::seal::read_public(&Store::new(store).ledger_public_key_path()).unwrap()
}

// ---------------------------------------------------------------------------
// C2SP signed note and RFC 9162 §2.1.4.2, transcribed (independent of the
// library's ledger::log and merkle)
// ---------------------------------------------------------------------------

/// Opens a tlog-checkpoint signed by `key`: (origin, size, root).
pub(crate) fn open_note(note: &str, key: &VerifyingKey) -> (String, u64, Hash) {
    let (body, sigs) = note.split_at(note.rfind("\n\n").expect("a blank line") + 1);
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines.len(), 3, "origin, size, root: {body:?}");
    let name = lines[0];
    let mut id_input = name.as_bytes().to_vec();
    id_input.extend_from_slice(&[0x0a, 0x01]);
    id_input.extend_from_slice(key.as_bytes());
    let key_id = &sha256(&[&id_input])[..4];
    let line = sigs[1..].lines().next().expect("a signature line");
    let b64 = line
        .strip_prefix(&format!("\u{2014} {name} "))
        .unwrap_or_else(|| panic!("signature line {line:?}"));
    let blob = BASE64.decode(b64).unwrap();
    assert_eq!(&blob[..4], key_id, "key ID");
    let sig = Signature::from_slice(&blob[4..]).unwrap();
    key.verify(body.as_bytes(), &sig)
        .expect("the head's signature verifies");
    let root: Hash = BASE64.decode(lines[2]).unwrap().try_into().unwrap();
    (name.to_string(), lines[1].parse().unwrap(), root)
}

/// RFC 9162 §2.1.4.2 "Verifying Consistency between Two Tree Heads".
fn rfc9162_verify_consistency(
    first: u64,
    second: u64,
    first_hash: &Hash,
    second_hash: &Hash,
    path: &[Hash],
) -> bool {
    if first == second {
        return path.is_empty() && first_hash == second_hash;
    }
    if first == 0 || first > second {
        return false;
    }
    // 1. If first is an exact power of 2, prepend first_hash.
    let mut c: Vec<Hash> = Vec::new();
    if first.is_power_of_two() {
        c.push(*first_hash);
    }
    c.extend_from_slice(path);
    if c.is_empty() {
        return false;
    }
    // 2-3.
    let (mut f_n, mut s_n) = (first - 1, second - 1);
    while f_n & 1 == 1 {
        f_n >>= 1;
        s_n >>= 1;
    }
    // 4.
    let (mut fr, mut sr) = (c[0], c[0]);
    // 5.
    for p in &c[1..] {
        if s_n == 0 {
            return false;
        }
        if f_n & 1 == 1 || f_n == s_n {
            fr = sha256(&[&[0x01], p, &fr]);
            sr = sha256(&[&[0x01], p, &sr]);
            while f_n & 1 == 0 && f_n != 0 {
                f_n >>= 1;
                s_n >>= 1;
            }
        } else {
            sr = sha256(&[&[0x01], &sr, p]);
        }
        f_n >>= 1;
        s_n >>= 1;
    }
    // 6.
    fr == *first_hash && sr == *second_hash && s_n == 0
}

fn hashes(v: &Value) -> Vec<Hash> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|h| hash_of(h.as_str().unwrap()))
        .collect()
}

/// `issuer ledger verify` of `store` fails, with a finding that says `what`.
fn verify_finds(store: &Path, what: &str) {
    let v = issuer(store, &["ledger", "verify", "--json"])
        .expect_code(1)
        .json();
    assert!(v["log"]["findings"].to_string().contains(what), "{v}");
}

/// `issuer ledger prove --unit ID --json`, checked: the entry names the
/// unit, hashes to its leaf and the proof reaches the head's root.
fn assert_proven(store: &Path, unit_id: &str, head_root: &Hash, head_size: u64) {
    let p = issuer(store, &["ledger", "prove", "--unit", unit_id, "--json"])
        .expect_code(0)
        .json();
    let entry = p["entry"].as_str().unwrap();
    assert!(entry.contains(&format!("|{unit_id}|")), "{entry}");
    assert_eq!(p["tree_size"], head_size);
    assert_eq!(hash_of(p["root"].as_str().unwrap()), *head_root);
    assert!(rfc9162_verify_inclusion(
        p["leaf_index"].as_u64().unwrap(),
        head_size,
        &rfc_leaf_hash(entry.as_bytes()),
        &hashes(&p["inclusion_proof"]),
        head_root,
    ));
}

// ---------------------------------------------------------------------------
// In process: the Redeemer and the SQLite ledger under many threads
// ---------------------------------------------------------------------------

#[test]
fn sixteen_threads_on_one_id_exactly_one_success() {
    let (_dir, store) = store_copy();
    let r = Arc::new(redeemer(&store));
    let target = unit(&store, 77);
    sold_in(&r, &[target]);
    let start = Arc::new(Barrier::new(16));
    let outcomes: Vec<_> = (0..16)
        .map(|_| {
            let (r, start) = (Arc::clone(&r), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                r.redeem(&target, None)
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let paid: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
    assert_eq!(paid.len(), 1, "exactly one success");
    let at = paid[0].redeemed_at.clone().unwrap();
    for o in &outcomes {
        match o {
            Ok(_) => {}
            Err(Error::AlreadyRedeemed { at: first, .. }) => assert_eq!(*first, at),
            Err(e) => panic!("{e}"),
        }
    }
    let ledger = Ledger::open(&Store::new(&store).ledger_path()).unwrap();
    assert_eq!(ledger.summary().unwrap().units, 1);
}

#[test]
fn a_thousand_ids_from_sixteen_threads_make_a_thousand_entries_that_verify() {
    let (_dir, store) = store_copy();
    let r = Arc::new(redeemer(&store));
    let ids: Arc<Vec<UnitId>> = Arc::new((0..1000).map(|i| unit(&store, 1000 + i)).collect());
    // The sales are the log's entries 0..1000, the redemptions 1000..2000.
    sold_in(&r, &ids);
    let threads: Vec<_> = (0..16)
        .map(|t| {
            let (r, ids) = (Arc::clone(&r), Arc::clone(&ids));
            std::thread::spawn(move || {
                ids.iter()
                    .skip(t)
                    .step_by(16)
                    .map(|id| r.redeem(id, None).map(|x| x.prize))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut paid = rust_decimal::Decimal::ZERO;
    let mut seqs = BTreeSet::new();
    for t in threads {
        for prize in t.join().unwrap() {
            paid += prize.unwrap().parse::<rust_decimal::Decimal>().unwrap();
        }
    }
    drop(r);
    let s = Store::new(&store);
    let ledger = Ledger::open(&s.ledger_path()).unwrap();
    let summary = ledger.summary().unwrap();
    assert_eq!(summary.units, 1000);
    assert!(summary.reconciled && summary.integrity_ok);
    assert_eq!(summary.paid.euros(), paid);
    let report = log::verify(&ledger, &[ledger_key(&store)], None).unwrap();
    assert!(report.ok, "{:?}", report.findings);
    assert_eq!(report.size, 2000);
    let head = log::head(&ledger).unwrap().unwrap();
    let (_, size, root) = open_note(&head.checkpoint, &ledger_key(&store));
    assert_eq!(size, 2000);
    assert_eq!(hex::encode(root), report.root);
    // Every seq 1000..2000 once.
    let conn = rusqlite::Connection::open(s.ledger_path()).unwrap();
    let mut stmt = conn.prepare("SELECT seq FROM redemptions").unwrap();
    for seq in stmt.query_map([], |r| r.get::<_, u64>(0)).unwrap() {
        seqs.insert(seq.unwrap());
    }
    assert_eq!(seqs, (1000..2000).collect());
    // Commits were grouped: fewer heads than entries.
    let heads: u64 = conn
        .query_row("SELECT COUNT(*) FROM ledger_heads", [], |r| r.get(0))
        .unwrap();
    assert!(heads < 1000, "{heads} heads for 1000 entries");
}

#[test]
fn a_busy_ledger_answers_unavailable_within_about_a_second() {
    let (_dir, store) = store_copy();
    let s = Store::new(&store);
    sold_in(&redeemer(&store), &[unit(&store, 1), unit(&store, 2)]);
    redeemer(&store).redeem(&unit(&store, 1), None).unwrap();
    // Another process holds the write lock.
    let holder = rusqlite::Connection::open(s.ledger_path()).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let r = redeemer(&store).with_busy_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let e = r.redeem(&unit(&store, 2), None).unwrap_err();
    assert_eq!(e.code(), "ledger_unavailable", "{e}");
    assert!(started.elapsed() < Duration::from_secs(10));
    holder.execute_batch("ROLLBACK").unwrap();
    // Nothing was half-done: the retry pays.
    r.redeem(&unit(&store, 2), None).unwrap();
}

// ---------------------------------------------------------------------------
// The log through the binary: batch, head, proofs, hand edits
// ---------------------------------------------------------------------------

/// Redeems units `from..to` with `redeem --batch -`; returns the lines.
fn batch(store: &Path, lines: &str) -> (i32, Vec<Value>) {
    let mut child = Command::new(ISSUER)
        .arg("--store")
        .arg(store)
        .args(["redeem", "--batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), lines.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let values = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code().unwrap(), values)
}

#[test]
fn batch_gives_one_independent_result_a_line() {
    let (_dir, store) = store_copy();
    let first = id(&store, 3);
    sold(&store, &[&first, &id(&store, 4)]);
    let lines = format!(
        "{first}\n\n# a comment\nnot-an-id\n{first}\n{}\n{} 2\n",
        id(&store, 4),
        id(&store, 5)
    );
    let (code, out) = batch(&store, &lines);
    let kinds: Vec<(&str, u64, &str)> = out
        .iter()
        .map(|v| {
            (
                v["kind"].as_str().unwrap(),
                v["line"].as_u64().unwrap(),
                v["error"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("redemption", 1, ""),
            ("error", 4, "invalid_id"),
            ("error", 5, "already_redeemed"),
            ("redemption", 6, ""),
            ("error", 7, "bad_stop"),
        ]
    );
    assert!(out.iter().all(|v| v["schema"] == 1));
    assert_eq!(code, 2, "the worst refusal's exit code (invalid_id)");
    let l = issuer(&store, &["ledger", "--json"]).expect_code(0).json();
    assert_eq!(l["units"], 2);
}

#[test]
fn head_and_proofs_verify_independently_and_come_from_the_tiles() {
    let (_dir, store) = store_copy();
    // 13 sales first (entries 0..13): the redemptions are entries 13..26.
    let units: Vec<String> = (10..15).chain(20..28).map(|i| id(&store, i)).collect();
    sold(
        &store,
        &units.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let lines: String = (0..5).map(|i| id(&store, 10 + i) + "\n").collect();
    batch(&store, &lines);
    let key = ledger_key(&store);
    let head5 = issuer(&store, &["ledger", "head"]).expect_code(0).stdout;
    let (_, size5, root5) = open_note(&head5, &key);
    assert_eq!(size5, 18);
    for i in 0..8 {
        redeemer(&store)
            .redeem(&unit(&store, 20 + i), None)
            .unwrap();
    }
    let head = issuer(&store, &["ledger", "head", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(head["kind"], "ledger_head");
    let (origin, size, root) = open_note(head["checkpoint"].as_str().unwrap(), &key);
    assert_eq!(size, 26);
    // The verifier key names the same key: name+keyid+base64(0x01||key).
    let vkey = head["verifier_key"].as_str().unwrap();
    let parts: Vec<&str> = vkey.splitn(3, '+').collect();
    assert_eq!(parts[0], origin);
    assert_eq!(BASE64.decode(parts[2]).unwrap()[1..], key.to_bytes());
    assert_proven(&store, &id(&store, 12), &root, size);
    assert_proven(&store, &id(&store, 27), &root, size);
    // The log only grew from the head of 18 to the head of 26.
    let c = issuer(&store, &["ledger", "prove", "--from", "18", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(c["to"], 26);
    let proof = hashes(&c["consistency_proof"]);
    assert!(rfc9162_verify_consistency(18, 26, &root5, &root, &proof));
    let mut bad = proof.clone();
    bad[0][0] ^= 1;
    assert!(!rfc9162_verify_consistency(18, 26, &root5, &root, &bad));
    // An unredeemed unit has no proof.
    issuer(&store, &["ledger", "prove", "--unit", &id(&store, 99)]).expect_code(1);

    // Issue 21: those proofs came from the tiles. A ledger without tiles
    // (written before them) proves the same from every leaf, and its next
    // commit tiles it; a tampered tile gives a proof that does not verify.
    let prove = |unit: &str| {
        issuer(&store, &["ledger", "prove", "--unit", unit, "--json"])
            .expect_code(0)
            .stdout
    };
    let (from_tiles, consistency) = (prove(&id(&store, 12)), c.to_string());
    let s = Store::new(&store);
    let conn = rusqlite::Connection::open(s.ledger_path()).unwrap();
    let tiles: i64 = conn
        .query_row("SELECT COUNT(*) FROM log_tiles", [], |r| r.get(0))
        .unwrap();
    assert_eq!(tiles, 1, "26 leaves: one partial level-0 tile");
    conn.execute("DELETE FROM log_tiles", []).unwrap();
    assert_eq!(prove(&id(&store, 12)), from_tiles, "from every leaf");
    let mut ledger = Ledger::open(&s.ledger_path()).unwrap();
    ledger
        .commit(
            &[],
            &log::LedgerKey::from_signing(s.ledger_signing_key().unwrap()),
        )
        .unwrap();
    drop(ledger);
    assert_eq!(prove(&id(&store, 12)), from_tiles, "tiled again");
    let again = issuer(&store, &["ledger", "prove", "--from", "18", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(again.to_string(), consistency);
    // Overwrite a byte of the entry's sibling leaf in the tile: its proof
    // starts with that hash.
    let first: Value = serde_json::from_str(&from_tiles).unwrap();
    let sibling = first["leaf_index"].as_u64().unwrap() ^ 1;
    assert!(sibling < size);
    // Flipped, not set: a byte that already held the new value (1 run in
    // 256, the hashes hold times) would leave the tile as it was.
    let mut tile: Vec<u8> = conn
        .query_row(
            "SELECT hashes FROM log_tiles WHERE level = 0 AND idx = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    tile[sibling as usize * 32] ^= 0xff;
    conn.execute(
        "UPDATE log_tiles SET hashes = ?1 WHERE level = 0 AND idx = 0",
        [&tile],
    )
    .unwrap();
    let p: Value = serde_json::from_str(&prove(&id(&store, 12))).unwrap();
    assert!(!rfc9162_verify_inclusion(
        p["leaf_index"].as_u64().unwrap(),
        size,
        &rfc_leaf_hash(p["entry"].as_str().unwrap().as_bytes()),
        &hashes(&p["inclusion_proof"]),
        &root,
    ));
    // `ledger verify` names the tile.
    verify_finds(&store, "tile 0/0 does not match the log's leaves");
}

/// Sales before the redemptions of `verify_after`: its redemptions are the
/// log's entries `SOLD..SOLD + 7`.
const SOLD: u64 = 7;

/// `ledger verify --json` after `edit` (SQL run on the ledger by hand).
fn verify_after(edit: &str) -> (i32, Vec<Value>) {
    let (_dir, store) = store_copy();
    let units: Vec<String> = (40..46).chain([50]).map(|i| id(&store, i)).collect();
    sold(
        &store,
        &units.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let lines: String = (0..6).map(|i| id(&store, 40 + i) + "\n").collect();
    batch(&store, &lines);
    redeemer(&store).redeem(&unit(&store, 50), None).unwrap();
    issuer(&store, &["ledger", "verify"]).expect_code(0);
    let conn = rusqlite::Connection::open(Store::new(&store).ledger_path()).unwrap();
    conn.execute_batch(edit).unwrap();
    drop(conn);
    let run = issuer(&store, &["ledger", "verify", "--json"]);
    let v = run.json();
    (run.code, v["log"]["findings"].as_array().unwrap().clone())
}

fn named(findings: &[Value], entry: u64) -> bool {
    findings.iter().any(|f| f["entry"] == entry)
}

#[test]
fn ledger_verify_names_a_deleted_an_edited_and_a_reordered_entry() {
    // The redemptions are the entries SOLD.. (the sales come first).
    let seq = |k: u64| SOLD + k;
    // Deleted, totals adjusted to hide it.
    let (code, f) = verify_after(&format!(
        "DELETE FROM redemptions WHERE seq = {};
         UPDATE block_totals SET units = units - 1;",
        seq(2)
    ));
    assert_eq!(code, 1);
    assert!(named(&f, seq(2)), "{f:?}");
    // The last entry deleted: the signed head is longer than the log.
    let (code, f) = verify_after(&format!("DELETE FROM redemptions WHERE seq = {};", seq(6)));
    assert_eq!(code, 1);
    assert!(
        f.iter()
            .any(|x| x["problem"].as_str().unwrap().contains("deleted")),
        "{f:?}"
    );
    // A prize edited (and the totals with it).
    let (code, f) = verify_after(&format!(
        "UPDATE redemptions SET prize_cents = prize_cents + 500 WHERE seq = {};
         UPDATE block_totals SET paid_cents = paid_cents + 500;",
        seq(3)
    ));
    assert_eq!(code, 1);
    assert!(named(&f, seq(3)), "{f:?}");
    // Two entries swapped.
    let (code, f) = verify_after(&format!(
        "UPDATE redemptions SET seq = 100 WHERE seq = {a};
         UPDATE redemptions SET seq = {a} WHERE seq = {b};
         UPDATE redemptions SET seq = {b} WHERE seq = 100;",
        a = seq(1),
        b = seq(4)
    ));
    assert_eq!(code, 1);
    assert!(named(&f, seq(1)) && named(&f, seq(4)), "{f:?}");
    // Edited with its leaf hash recomputed: the signed heads catch it.
    let (code, f) = verify_after(&format!(
        "UPDATE redemptions SET leaf_hash = zeroblob(32), unit_id = unit_id WHERE seq = {};",
        seq(0)
    ));
    assert_eq!(code, 1);
    assert!(!f.is_empty());
}

#[test]
fn only_a_head_kept_elsewhere_catches_a_truncated_ledger() {
    let (dir, store) = store_copy();
    // Six sales first: the redemptions are the entries 6..12.
    let units: Vec<String> = (70..76).map(|i| id(&store, i)).collect();
    sold(
        &store,
        &units.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let first: String = (0..4).map(|i| id(&store, 70 + i) + "\n").collect();
    batch(&store, &first);
    let second: String = (4..6).map(|i| id(&store, 70 + i) + "\n").collect();
    batch(&store, &second);
    let kept = dir.path().join("head-12.txt");
    std::fs::write(
        &kept,
        issuer(&store, &["ledger", "head"]).expect_code(0).stdout,
    )
    .unwrap();
    // The last two redemptions removed, with their head and from the totals.
    let conn = rusqlite::Connection::open(Store::new(&store).ledger_path()).unwrap();
    conn.execute_batch(
        "DELETE FROM redemptions WHERE seq >= 10;
         DELETE FROM ledger_heads WHERE size > 10;
         UPDATE block_totals SET units = (SELECT COUNT(*) FROM redemptions),
             paid_cents = (SELECT SUM(prize_cents) FROM redemptions);",
    )
    .unwrap();
    // The tiles (issue 21) still cover the 12 entries: they tell.
    verify_finds(&store, "the tiles cover 12 entries, the log holds 10");
    // Tiles removed too, what the database holds is consistent: the head
    // the store remembers (issue 35) tells ...
    conn.execute_batch("DELETE FROM log_tiles").unwrap();
    drop(conn);
    verify_finds(&store, "entries 10 to 11 are missing");
    // ... and without it the database alone can't.
    std::fs::remove_dir_all(store.join("ledger-heads")).unwrap();
    issuer(&store, &["ledger", "verify"]).expect_code(0);
    // The head kept elsewhere can.
    let run = issuer(
        &store,
        &[
            "ledger",
            "verify",
            "--head",
            kept.to_str().unwrap(),
            "--json",
        ],
    )
    .expect_code(1);
    let findings = run.json()["log"]["findings"].to_string();
    assert!(
        findings.contains("the given head has 12 entries, the log 10"),
        "{findings}"
    );
}

#[test]
fn a_rewritten_leaf_hash_is_caught_by_the_signed_heads() {
    let (_dir, store) = store_copy();
    let units: Vec<String> = (60..64).map(|i| id(&store, i)).collect();
    sold(
        &store,
        &units.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let lines: String = (0..4).map(|i| id(&store, 60 + i) + "\n").collect();
    batch(&store, &lines);
    let path = Store::new(&store).ledger_path();
    let conn = rusqlite::Connection::open(&path).unwrap();
    // Rewrite entry 1's time and recompute its leaf exactly as the log does.
    let (line, unit_id): (String, String) = {
        let p = issuer(
            &store,
            &["ledger", "prove", "--unit", &id(&store, 61), "--json"],
        )
        .expect_code(0)
        .json();
        (p["entry"].as_str().unwrap().to_string(), id(&store, 61))
    };
    let old_at = line.split('|').nth(10).unwrap().to_string();
    let new_at = "2026-01-01T00:00:00.000Z";
    let new_leaf = rfc_leaf_hash(line.replace(&old_at, new_at).as_bytes());
    conn.execute(
        "UPDATE redemptions SET redeemed_at = ?1, leaf_hash = ?2 WHERE unit_id = ?3",
        rusqlite::params![new_at, &new_leaf[..], unit_id],
    )
    .unwrap();
    drop(conn);
    let run = issuer(&store, &["ledger", "verify", "--json"]).expect_code(1);
    let findings = run.json()["log"]["findings"].clone();
    assert!(
        findings.to_string().contains("do not make the root signed"),
        "{findings}"
    );
}

// ---------------------------------------------------------------------------
// The real service over 127.0.0.1
// ---------------------------------------------------------------------------

/// The category API.md §Errors gives each status: one each, so a client
/// may take either.
fn category_of(status: u16) -> &'static str {
    match status {
        400 => "invalid_input",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        405 => "method_not_allowed",
        408 => "timeout",
        409 => "conflict",
        410 => "gone",
        413 => "too_large",
        422 => "rejected",
        503 => "unavailable",
        _ => "internal",
    }
}

#[test]
fn the_service_redeems_refuses_by_kind_batches_and_counts_401s() {
    let (dir, store) = store_copy();
    sold(
        &store,
        &[
            &id(&store, 100),
            &id(&store, 103),
            &id(&store, 104),
            &id(&store, 106),
        ],
    );
    let server = Server::start(&store);
    let a = agent();
    // Redeem, then the same again.
    let first = id(&store, 100);
    let (status, r) = post(&a, &server, "/v1/redemptions", json!({ "id": first }));
    assert_eq!(
        (status, r["kind"].as_str()),
        (200, Some("redemption")),
        "{r}"
    );
    assert_eq!(r["schema"], 1);
    assert!(r["ledger_entry"]["seq"].is_u64());
    let (status, e) = post(&a, &server, "/v1/redemptions", json!({ "id": first }));
    assert_eq!(
        (status, e["error"].as_str()),
        (409, Some("already_redeemed")),
        "{e}"
    );
    assert_eq!(e["redeemed_at"], r["redeemed_at"]);
    assert_eq!(e["prize"], r["prize"]);
    // Each refusal kind with its status. A unit the platform did not sell
    // (never sold, another block, a mistyped ID of one) is unknown to it
    // (issue 34); its own unit's mistyped code is refused as such.
    let typo = |id: String| {
        let mut wrong = id;
        let last = wrong.pop().unwrap();
        wrong.push(if last == 'A' { 'B' } else { 'A' });
        wrong
    };
    let wrong = typo(id(&store, 104));
    let unknown_block = valid_id(&store, 1, 9, 0);
    for (body, status, error) in [
        (json!({ "id": "IAT-1-1-nope" }), 400, "invalid_id"),
        (json!({ "id": wrong }), 422, "wrong_check_code"),
        (json!({ "id": typo(id(&store, 101)) }), 404, "unknown_unit"),
        (json!({ "id": unknown_block }), 404, "unknown_unit"),
        (
            json!({ "id": id(&store, 103), "stopped_after_rolls": 3 }),
            422,
            "bad_stop",
        ),
        (json!({ "unit": "x" }), 400, "invalid_request"),
        // A unit never sold (issues 13, 34).
        (json!({ "id": id(&store, 107) }), 404, "unknown_unit"),
    ] {
        let (got, e) = post(&a, &server, "/v1/redemptions", body);
        assert_eq!((got, e["error"].as_str()), (status, Some(error)), "{e}");
        assert_eq!(e["kind"], "error");
        assert_eq!(e["category"], category_of(status), "{e}");
    }
    // A wrong check code says the same whether the unit was redeemed or not.
    let mut wrong_first = first.clone();
    let last = wrong_first.pop().unwrap();
    wrong_first.push(if last == 'A' { 'B' } else { 'A' });
    let (s1, b1) = get(&a, &server, &format!("/v1/units/{wrong_first}"));
    let (s2, b2) = get(&a, &server, &format!("/v1/units/{wrong}"));
    assert_eq!((s1, s2), (422, 422));
    let strip = |b: &str| {
        let mut v: Value = serde_json::from_str(b).unwrap();
        let id = v["id"].as_str().unwrap().to_string();
        v["message"] = v["message"].as_str().unwrap().replace(&id, "ID").into();
        v["id"] = Value::Null;
        v
    };
    assert_eq!(strip(&b1), strip(&b2));
    let (status, e) = get(
        &a,
        &server,
        &format!("/v1/units/{first}?stopped_after_rolls=x"),
    );
    assert_eq!(status, 400, "{e}");
    assert!(e.contains("\"invalid_request\""), "{e}");
    // A check records nothing and says when a unit was redeemed.
    let (status, c) = get(&a, &server, &format!("/v1/units/{first}"));
    let c: Value = serde_json::from_str(&c).unwrap();
    assert_eq!((status, c["kind"].as_str()), (200, Some("check")));
    assert_eq!(c["already_redeemed_at"], r["redeemed_at"]);
    // A batch: each unit on its own.
    let (status, b) = post(
        &a,
        &server,
        "/v1/redemptions/batch",
        json!({ "units": [ { "id": id(&store, 103) }, { "id": first }, { "id": "bad" }, { "id": id(&store, 104) } ] }),
    );
    assert_eq!(status, 200, "{b}");
    let kinds: Vec<&str> = b["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["error"].as_str().unwrap_or(x["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        ["redemption", "already_redeemed", "invalid_id", "redemption"]
    );
    let too_many: Vec<Value> = (0..1001).map(|_| json!({ "id": "x" })).collect();
    let (status, e) = post(
        &a,
        &server,
        "/v1/redemptions/batch",
        json!({ "units": too_many }),
    );
    assert_eq!(
        (status, e["error"].as_str()),
        (400, Some("batch_too_large"))
    );
    // 401s: no token, a wrong one, a near miss.
    for token in [None, Some("wrong"), Some(&TOKEN[..TOKEN.len() - 1])] {
        let (status, text) = call(&a, "GET", &server.url("/healthz"), token, None).unwrap();
        assert_eq!(status, 401);
        let e: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(e["category"], "unauthorized", "{e}");
    }
    let (status, _) = call(
        &a,
        "POST",
        &server.url("/v1/redemptions"),
        None,
        Some(json!({ "id": id(&store, 105) })),
    )
    .unwrap();
    assert_eq!(status, 401);
    // No route, a wrong method: JSON refusals like every other answer
    // (were empty bodies); without a token, 401 first (routes stay unseen).
    let (status, text) = get(&a, &server, "/v1/nowhere");
    let e: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (status, e["kind"].as_str(), e["error"].as_str()),
        (404, Some("error"), Some("no_route")),
        "{e}"
    );
    assert_eq!(e["category"], "not_found", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("/v1/nowhere"),
        "{e}"
    );
    let (status, text) = get(&a, &server, "/v1/redemptions");
    let e: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (status, e["error"].as_str()),
        (405, Some("method_not_allowed")),
        "{e}"
    );
    assert_eq!(e["category"], category_of(405), "{e}");
    let (status, _) = call(&a, "GET", &server.url("/v1/nowhere"), None, None).unwrap();
    assert_eq!(status, 401);
    assert_eq!(get(&a, &server, "/healthz").0, 200);
    // Readiness: the ledger answers. Without --public-health it needs a
    // token like every route.
    let (status, ready) = get(&a, &server, "/readyz");
    assert_eq!(status, 200, "{ready}");
    assert!(ready.contains("\"status\":\"ready\""), "{ready}");
    let (status, _) = call(&a, "GET", &server.url("/readyz"), None, None).unwrap();
    assert_eq!(status, 401);
    let (_, metrics) = get(&a, &server, "/metrics");
    for line in [
        "issuer_redemptions_total 3",
        "issuer_unauthorized_total 6",
        "issuer_refusals_total{error=\"already_redeemed\"} 2",
        "issuer_refusals_total{error=\"bad_stop\"} 1",
        "issuer_request_duration_seconds_bucket{le=\"+Inf\"}",
        // By route as matched (never a unit ID), method and status.
        "issuer_http_requests_total{route=\"/v1/redemptions\",method=\"POST\",status=\"200\"}",
        "issuer_http_requests_total{route=\"/v1/redemptions\",method=\"POST\",status=\"401\"} 1",
        "issuer_http_requests_total{route=\"/v1/redemptions/batch\",method=\"POST\",status=\"400\"} 1",
        "issuer_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 1",
        "issuer_http_requests_total{route=\"/v1/redemptions\",method=\"GET\",status=\"405\"} 1",
        "issuer_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"401\"} 3",
        "issuer_paid_euros_total ",
        "issuer_build_info{version=\"",
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
    assert!(
        !metrics.contains("IAT-"),
        "no unit ID in a label:\n{metrics}"
    );
    // The head: signed over the four sales and the three redemptions,
    // each redemption provably in it.
    let (status, head) = get(&a, &server, "/v1/ledger/head");
    assert_eq!(status, 200);
    let head: Value = serde_json::from_str(&head).unwrap();
    let (_, size, root) = open_note(head["checkpoint"].as_str().unwrap(), &ledger_key(&store));
    assert_eq!(size, 7);
    for unit in [first.clone(), id(&store, 103), id(&store, 104)] {
        assert_proven(&store, &unit, &root, size);
    }
    // A revealed emission is gone.
    issuer(&store, &["close", "--emission", "1"]).expect_code(0);
    issuer(
        &store,
        &[
            "end-claims",
            "--emission",
            "1",
            "--force",
            "--reason",
            "no claim deadline set",
        ],
    )
    .expect_code(0);
    let reveal = dir.path().join("reveal.json");
    issuer(
        &store,
        &["reveal", "--emission", "1", "-o", reveal.to_str().unwrap()],
    )
    .expect_code(0);
    let (status, e) = post(
        &a,
        &server,
        "/v1/redemptions",
        json!({ "id": id(&store, 106) }),
    );
    assert_eq!(
        (status, e["error"].as_str()),
        (410, Some("emission_revealed"))
    );
}

#[test]
fn sigterm_drains_and_exits_and_a_loose_token_file_is_refused() {
    let (_dir, store) = store_copy();
    sold(&store, &[&id(&store, 200)]);
    let mut server = Server::start(&store);
    let a = agent();
    assert_eq!(
        post(
            &a,
            &server,
            "/v1/redemptions",
            json!({ "id": id(&store, 200) })
        )
        .0,
        200
    );
    assert_eq!(server.terminate(), Some(0));
    // A token file others can read is refused.
    let tokens = store.parent().unwrap().join("loose.txt");
    std::fs::write(&tokens, format!("{TOKEN}\n")).unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = issuer(
        &store,
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--token-file",
            tokens.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("chmod 600"), "{}", run.stderr);
    // Plain HTTP on a non-loopback address needs an explicit flag.
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let run = issuer(
        &store,
        &[
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--token-file",
            tokens.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--tls-cert"), "{}", run.stderr);
}

#[test]
fn with_a_certificate_the_service_speaks_tls_only() {
    use ureq::tls::{parse_pem, PemItem, RootCerts, TlsConfig, TlsProvider};
    let (_dir, store) = store_copy();
    // A self-signed certificate for localhost and 127.0.0.1, for tests only.
    let tls = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls");
    let (cert, key) = (
        tls.join("localhost.cert.pem"),
        tls.join("localhost.key.pem"),
    );
    let server = Server::start_with(
        &store,
        &[Path::new("--tls-cert"), &cert, Path::new("--tls-key"), &key],
    );
    assert!(server.base.starts_with("https://"), "{}", server.base);
    let pem = std::fs::read(&cert).unwrap();
    let roots: Vec<_> = parse_pem(&pem)
        .filter_map(|item| match item.unwrap() {
            PemItem::Certificate(c) => Some(c),
            _ => None,
        })
        .collect();
    let trusting: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .tls_config(
            TlsConfig::builder()
                .provider(TlsProvider::Rustls)
                .unversioned_rustls_crypto_provider(Arc::new(
                    rustls::crypto::aws_lc_rs::default_provider(),
                ))
                .root_certs(RootCerts::Specific(Arc::new(roots)))
                .build(),
        )
        .build()
        .into();
    let (status, body) =
        call(&trusting, "GET", &server.url("/healthz"), Some(TOKEN), None).unwrap();
    assert_eq!(status, 200, "{body}");
    let (status, _) = call(&trusting, "GET", &server.url("/healthz"), None, None).unwrap();
    assert_eq!(status, 401);
    // Plain HTTP on the same port gets no answer.
    let plain = server.base.replacen("https://", "http://", 1);
    let answer = call(
        &agent(),
        "GET",
        &format!("{plain}/healthz"),
        Some(TOKEN),
        None,
    );
    assert!(!matches!(answer, Ok((200, _))), "{answer:?}");
}

#[test]
fn a_tresors_ensables_stop_is_paid_over_http_and_bound_in_the_log() {
    use ticket_issuer::emission::{BlockChoice, Emission};
    use ticket_issuer::Game;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let s = Store::new(&store);
    s.keygen().unwrap();
    let game = Game::TRESORS_ENSABLES;
    Emission::new(&s, game, 1)
        .with_units(5000)
        .unwrap()
        .generate(&s.secrets().unwrap(), 100, BlockChoice::Number(1), &|_| {})
        .unwrap();
    let server = Server::start(&store);
    let a = agent();
    // The first unit with an allowed stop, found by the operator's replay
    // with the keys (a platform's check of an unsold unit tells nothing of
    // its rolls: docs/REDEMPTION.md §What an answer shows), then redeemed
    // with it.
    let operator = redeemer(&store);
    let (unit, stop) = (0..200u32)
        .find_map(|index| {
            let unit = crate::common::valid_id_of(&store, game, 1, 1, index);
            let id: UnitId = unit.parse().unwrap();
            (1..40u32).find_map(|stop| {
                operator
                    .replay(&id, Some(stop))
                    .is_ok()
                    .then(|| (unit.clone(), stop))
            })
        })
        .expect("some unit of the block allows a stop");
    let path = format!("/v1/units/{unit}?stopped_after_rolls={stop}");
    let (status, refused) = get(&a, &server, &path);
    assert_eq!(
        (status, refused.contains("\"unknown_unit\"")),
        (404, true),
        "not sold: the check tells nothing: {refused}"
    );
    // Sold, then played over HTTP one roll at a time and stopped there; the
    // redemption pays the play as recorded.
    sold(&store, &[&unit]);
    for roll in 1..=stop {
        let (status, p) = post(
            &a,
            &server,
            &format!("/v1/plays/{unit}/roll"),
            json!({ "roll": roll }),
        );
        assert_eq!((status, &p["rolls"]), (200, &json!(roll)), "{p}");
    }
    let (status, p) = post(&a, &server, &format!("/v1/plays/{unit}/stop"), json!({}));
    assert_eq!((status, &p["end"]), (200, &json!("stopped")), "{p}");
    let (status, r) = post(&a, &server, "/v1/redemptions", json!({ "id": unit }));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["stopped_after_rolls"], stop);
    assert_eq!(r["lot"], "arret");
    // The unit is paid once; a stop the rules refuse is refused as such
    // (before the ledger is looked at: docs/REDEMPTION.md §Order of checks).
    let again = json!({ "id": unit, "stopped_after_rolls": stop });
    let (status, e) = post(&a, &server, "/v1/redemptions", again);
    assert_eq!(
        (status, e["error"].as_str()),
        (409, Some("already_redeemed")),
        "{e}"
    );
    let before_any_chest = json!({ "id": unit, "stopped_after_rolls": 0 });
    let (status, e) = post(&a, &server, "/v1/redemptions", before_any_chest);
    assert_eq!(
        (status, e["error"].as_str()),
        (422, Some("bad_stop")),
        "{e}"
    );
    // The log entry binds the stop.
    let p = issuer(&store, &["ledger", "prove", "--unit", &unit, "--json"])
        .expect_code(0)
        .json();
    assert!(
        p["entry"]
            .as_str()
            .unwrap()
            .ends_with(&format!("|{stop}\n")),
        "{p}"
    );
}

#[test]
fn sixteen_clients_on_one_id_through_the_service_one_success() {
    let (_dir, store) = store_copy();
    let target = id(&store, 300);
    sold(&store, &[&target]);
    let server = Arc::new(Server::start(&store));
    let start = Arc::new(Barrier::new(16));
    let statuses: Vec<(u16, Value)> = (0..16)
        .map(|_| {
            let (server, start, target) = (Arc::clone(&server), Arc::clone(&start), target.clone());
            std::thread::spawn(move || {
                let a = agent();
                start.wait();
                post(&a, &server, "/v1/redemptions", json!({ "id": target }))
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let ok = statuses.iter().filter(|(s, _)| *s == 200).count();
    let again = statuses
        .iter()
        .filter(|(s, e)| *s == 409 && e["error"] == "already_redeemed")
        .count();
    assert_eq!((ok, again), (1, 15));
}

#[test]
fn a_thousand_ids_from_sixteen_clients_through_the_service_reconcile_and_verify() {
    let (_dir, store) = store_copy();
    let ids: Arc<Vec<String>> = Arc::new((0..1000).map(|i| id(&store, 5000 + i)).collect());
    sold(&store, &ids.iter().map(String::as_str).collect::<Vec<_>>());
    let server = Arc::new(Server::start(&store));
    let prizes: Vec<rust_decimal::Decimal> = (0..16)
        .map(|c| {
            let (server, ids) = (Arc::clone(&server), Arc::clone(&ids));
            std::thread::spawn(move || {
                let a = agent();
                ids.iter()
                    .skip(c)
                    .step_by(16)
                    .map(|unit| {
                        let (status, r) =
                            post(&a, &server, "/v1/redemptions", json!({ "id": unit }));
                        assert_eq!(status, 200, "{r}");
                        r["prize"]
                            .as_str()
                            .unwrap()
                            .parse::<rust_decimal::Decimal>()
                            .unwrap()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert_eq!(prizes.len(), 1000);
    let (status, head) = get(&agent(), &server, "/v1/ledger/head");
    assert_eq!(status, 200);
    let head: Value = serde_json::from_str(&head).unwrap();
    let (_, size, _) = open_note(head["checkpoint"].as_str().unwrap(), &ledger_key(&store));
    assert_eq!(size, 2000, "1000 sales and 1000 redemptions");
    let l = issuer(&store, &["ledger", "--json"]).expect_code(0).json();
    assert_eq!(l["units"], 1000);
    assert_eq!(
        l["paid"]
            .as_str()
            .unwrap()
            .parse::<rust_decimal::Decimal>()
            .unwrap(),
        prizes.iter().sum::<rust_decimal::Decimal>()
    );
    issuer(&store, &["ledger", "verify"]).expect_code(0);
}

#[test]
fn kill_9_under_load_loses_no_acknowledged_redemption() {
    let (_dir, store) = store_copy();
    let units: Vec<String> = (1000..1000 + 8 * 400).map(|i| id(&store, i)).collect();
    sold(
        &store,
        &units.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let mut server = Server::start(&store);
    let base = server.base.clone();
    let acked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let deadline = Instant::now() + Duration::from_secs(20);
    let clients: Vec<_> = (0..8u32)
        .map(|c| {
            let (acked, base) = (Arc::clone(&acked), base.clone());
            let ids: Vec<String> = (0..400).map(|i| id(&store, 1000 + c * 400 + i)).collect();
            std::thread::spawn(move || {
                let a = agent();
                for unit in ids {
                    if Instant::now() > deadline {
                        break;
                    }
                    let url = format!("{base}/v1/redemptions");
                    match call(&a, "POST", &url, Some(TOKEN), Some(json!({ "id": unit }))) {
                        Ok((200, _)) => acked.lock().unwrap().push(unit),
                        Ok((status, body)) => panic!("{status} {body}"),
                        Err(_) => break, // the server died
                    }
                }
            })
        })
        .collect();
    // Kill it once some redemptions were acknowledged, while others are
    // in flight.
    while acked.lock().unwrap().len() < 300 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    server.child.kill().unwrap(); // SIGKILL
    server.child.wait().unwrap();
    for c in clients {
        c.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 300, "only {} acknowledged", acked.len());
    // Every acknowledged redemption is in the ledger, and the log verifies.
    let ledger = Ledger::open(&Store::new(&store).ledger_path()).unwrap();
    for unit in &acked {
        let u: UnitId = unit.parse().unwrap();
        assert!(
            ledger
                .lookup(u.game, u.emission, u.block, u.index)
                .unwrap()
                .is_some(),
            "{unit} was acknowledged but is not in the ledger"
        );
    }
    let summary = ledger.summary().unwrap();
    assert!(summary.units >= acked.len() as u64);
    assert!(summary.reconciled);
    drop(ledger);
    issuer(&store, &["ledger", "verify"]).expect_code(0);
    // After a restart, an acknowledged unit is not paid twice.
    let server = Server::start(&store);
    let (status, e) = post(
        &agent(),
        &server,
        "/v1/redemptions",
        json!({ "id": acked[0] }),
    );
    assert_eq!(
        (status, e["error"].as_str()),
        (409, Some("already_redeemed"))
    );
}

// ---------------------------------------------------------------------------
// The log's tree: the library's frontier, consistency proofs and kept chunk
// trees against this file's transcription of RFC 9162
// ---------------------------------------------------------------------------

/// RFC 9162 §2.1.1 MTH over leaf hashes, transcribed.
pub(crate) fn mth(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => sha256(&[]),
        1 => leaves[0],
        n => {
            let k = 1 << (n - 1).ilog2();
            sha256(&[&[0x01], &mth(&leaves[..k]), &mth(&leaves[k..])])
        }
    }
}

#[test]
fn frontier_roots_and_consistency_proofs_match_rfc_9162() {
    use ticket_issuer::merkle::{self, Frontier};
    let leaves: Vec<Hash> = (0u32..70)
        .map(|i| rfc_leaf_hash(&i.to_le_bytes()))
        .collect();
    let mut frontier = Frontier::default();
    assert_eq!(frontier.root(), mth(&[]));
    for n in 1..=leaves.len() {
        frontier.push(leaves[n - 1]);
        assert_eq!(frontier.root(), mth(&leaves[..n]), "size {n}");
        let kept = Frontier::from_bytes(&frontier.to_bytes()).unwrap();
        assert_eq!(
            (kept.size(), kept.root()),
            (frontier.size(), frontier.root())
        );
        let bytes = frontier.to_bytes();
        assert!(Frontier::from_bytes(&bytes[..bytes.len() - 1]).is_none());
        for m in 0..=n {
            let proof = merkle::consistency_proof(&leaves[..n], m).unwrap();
            let (old, new) = (mth(&leaves[..m]), mth(&leaves[..n]));
            if m > 0 {
                assert!(
                    rfc9162_verify_consistency(m as u64, n as u64, &old, &new, &proof),
                    "{m} → {n}"
                );
            }
            assert!(
                merkle::verify_consistency(m as u64, n as u64, &proof, &old, &new),
                "{m} → {n}"
            );
            if let Some(first) = proof.first() {
                let mut bad = proof.clone();
                bad[0] = sha256(&[first]);
                assert!(!merkle::verify_consistency(
                    m as u64, n as u64, &bad, &old, &new
                ));
                assert!(!merkle::verify_consistency(
                    m as u64,
                    n as u64,
                    &proof[1..],
                    &old,
                    &new
                ));
            }
        }
    }
    assert!(merkle::consistency_proof(&leaves[..3], 4).is_none());
}

#[test]
fn a_kept_chunk_tree_gives_the_same_paths_as_the_rfc() {
    use ticket_issuer::merkle::{inclusion_proof, PerfectTree};
    for n in [1usize, 2, 4, 64, 4096] {
        let leaves: Vec<Hash> = (0..n as u32)
            .map(|i| rfc_leaf_hash(&i.to_le_bytes()))
            .collect();
        let tree = PerfectTree::new(&leaves).unwrap();
        assert_eq!(tree.root(), mth(&leaves));
        for i in (0..n).step_by((n / 64).max(1)).chain([n - 1]) {
            assert_eq!(tree.path(i), inclusion_proof(&leaves, i), "{n}/{i}");
        }
        assert!(tree.path(n).is_none());
    }
    assert!(PerfectTree::new(&[[0; 32]; 3]).is_none());
}

/// Issue 19: the head saved with API.md's recipe (`curl … | jq -r
/// .checkpoint > head.txt`, which adds a newline) verifies, and a file that
/// does not is named for what is wrong with it.
#[test]
fn a_head_saved_with_the_api_recipe_verifies_and_a_broken_one_says_why() {
    let (dir, store) = store_copy();
    let units: Vec<String> = (80..83).map(|i| id(&store, i)).collect();
    sold(
        &store,
        &units.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    batch(
        &store,
        &units.iter().map(|u| format!("{u}\n")).collect::<String>(),
    );
    let server = Server::start(&store);
    let (status, head) = get(&agent(), &server, "/v1/ledger/head");
    assert_eq!(status, 200, "{head}");
    let note = serde_json::from_str::<Value>(&head).unwrap()["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    drop(server);
    let verify_head = |text: &str| {
        let path = dir.path().join("head.txt");
        std::fs::write(&path, text).unwrap();
        issuer(
            &store,
            &[
                "ledger",
                "verify",
                "--head",
                path.to_str().unwrap(),
                "--json",
            ],
        )
    };
    // As `jq -r` writes it, and as a text editor may (two newlines more).
    for saved in [format!("{note}\n"), format!("{note}\n\n"), note.clone()] {
        let run = verify_head(&saved).expect_code(0);
        assert_eq!(run.json()["ok"], true, "{}", run.stdout);
    }
    let (text, signatures) = note.split_at(note.find("\n\n").unwrap() + 2);
    let name = signatures.split(' ').nth(1).unwrap();
    let size = text.lines().nth(1).unwrap();
    let altered = note.replacen(&format!("\n{size}\n"), &format!("\n{size}0\n"), 1);
    let cases = [
        ("no blank line\n".to_string(), "not a signed note"),
        (text.to_string(), "not a signed note"),
        (format!("{text}signature\n"), "signature line 1 is not"),
        (altered, "does not verify: the note's text was altered"),
        (
            note.replace(&format!("\u{2014} {name} "), "\u{2014} witness.example "),
            "signed by witness.example but not by the ledger key given",
        ),
    ];
    for (saved, why) in cases {
        let run = verify_head(&saved).expect_code(1);
        let findings = run.json()["log"]["findings"].to_string();
        assert!(
            findings.contains(why),
            "{saved:?}: want {why:?} in {findings}"
        );
    }
}

/// Issue 19: a signed head is never overwritten. A log cut back below a
/// stored head (rows deleted, the heads' kept frontiers gone, as in a ledger
/// written before they were kept) that would grow over it is refused as
/// damaged, and the head stays as signed.
#[test]
fn a_signed_head_is_never_overwritten() {
    let (_dir, store) = store_copy();
    let units: Vec<String> = (90..96).map(|i| id(&store, i)).collect();
    sold(
        &store,
        &units.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let first: String = units[..4].iter().map(|u| format!("{u}\n")).collect();
    batch(&store, &first);
    let path = Store::new(&store).ledger_path();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let size: u64 = conn
        .query_row("SELECT MAX(size) FROM ledger_heads", [], |r| r.get(0))
        .unwrap();
    let head = |conn: &rusqlite::Connection| -> (Vec<u8>, String) {
        conn.query_row(
            "SELECT root, checkpoint FROM ledger_heads WHERE size = ?1",
            [size],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    let signed = head(&conn);
    conn.execute_batch(&format!(
        "DELETE FROM redemptions WHERE seq >= {};
         UPDATE ledger_heads SET frontier = NULL;",
        size - 2
    ))
    .unwrap();
    let redeem = || {
        issuer_with_input(
            &store,
            &["redeem", "--batch", "-"],
            &format!("{}\n{}\n", units[4], units[5]),
        )
    };
    // The head the store remembers refuses the shorter log first (issue
    // 35) ...
    let run = redeem();
    assert!(run.stdout.contains("ledger_rolled_back"), "{}", run.stdout);
    assert_eq!(head(&conn), signed, "the signed head is as it was");
    // ... and without it, the heads in the database still do.
    std::fs::remove_dir_all(store.join("ledger-heads")).unwrap();
    let run = redeem();
    assert!(
        run.stdout.contains("ledger_damaged")
            && run
                .stdout
                .contains(&format!("a signed head of size {size} is stored already")),
        "{}",
        run.stdout
    );
    assert_eq!(head(&conn), signed, "the signed head is as it was");
}

/// Issue 22: tokens may carry a name (`name:token`); SIGHUP reloads the
/// token file (a bad file keeps the tokens in force); the access log has a
/// JSON line a request with the token's name, never the token.
#[test]
fn sighup_reloads_named_tokens_and_the_access_log_names_them() {
    let (dir, store) = store_copy();
    let log = dir.path().join("access.log");
    let server = Server::start_with(&store, &["--access-log", log.to_str().unwrap()]);
    let a = agent();
    assert_eq!(get(&a, &server, "/healthz").0, 200);
    let (status, _) = get(&a, &server, "/v1/plays/IAT-1-1-7-NOTAREALID");
    assert!(status >= 400);
    // A new file: a named token replaces the test token.
    let tokens = store.with_extension("tokens");
    let new = "a-brand-new-token-for-the-platform";
    std::fs::write(&tokens, format!("# rotated\nplatform-a:{new}\n")).unwrap();
    let hup = |server: &Server| {
        let pid = server.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success());
    };
    hup(&server);
    let accepted = |token: &str| {
        call(&a, "GET", &server.url("/healthz"), Some(token), None)
            .unwrap()
            .0
            == 200
    };
    let reloaded = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        accepted(new)
    });
    assert!(reloaded, "the new token is accepted after SIGHUP");
    assert!(!accepted(TOKEN), "the old token is refused after SIGHUP");
    // A file that does not read (readable by others) keeps the tokens.
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o644)).unwrap();
    hup(&server);
    std::thread::sleep(Duration::from_millis(300));
    assert!(accepted(new), "a bad file keeps the tokens in force");
    drop(server);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!text.contains(TOKEN) && !text.contains(new), "{text}");
    assert_eq!(lines[0]["route"], "/healthz", "{text}");
    assert_eq!(lines[0]["status"], 200);
    assert_eq!(lines[0]["token"], crate::common::TOKEN_NAME, "{text}");
    assert_eq!(lines[1]["route"], "/v1/plays/{id}", "{text}");
    assert_eq!(lines[1]["unit_id"], "IAT-1-1-7-NOTAREALID", "{text}");
    assert!(lines[1]["error"].is_string(), "{text}");
    assert!(lines.iter().any(|l| l["token"] == "platform-a"), "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l["status"] == 401 && l["error"] == "unauthorized" && l["token"].is_null()),
        "{text}"
    );
}

/// Issue 22: connections and requests are bounded. Past `--max-connections`
/// a connection is closed as it is accepted; a connection that sends no
/// request is closed after `--header-timeout`, freeing its slot; past
/// `--max-in-flight` a request is answered 503 `overloaded`, JSON with
/// Retry-After, at once.
#[test]
fn a_flood_of_idle_connections_is_bounded_and_a_request_past_the_limit_is_shed() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    let (_dir, store) = store_copy();
    let server = Server::start_with(
        &store,
        &[
            "--max-connections",
            "8",
            "--header-timeout",
            "3",
            "--max-in-flight",
            "1",
            "--body-timeout",
            "2",
        ],
    );
    let addr = server.base.strip_prefix("http://").unwrap().to_string();
    let closed_within = |s: &mut TcpStream, limit: Duration| {
        s.set_read_timeout(Some(limit)).unwrap();
        let started = Instant::now();
        let mut byte = [0u8; 1];
        match s.read(&mut byte) {
            Ok(0) | Err(_) if started.elapsed() < limit => started.elapsed(),
            other => panic!("not closed within {limit:?}: {other:?}"),
        }
    };
    let mut idle: Vec<TcpStream> = (0..8).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    // The ninth is closed at once, well before the header timeout.
    let mut ninth = TcpStream::connect(&addr).unwrap();
    closed_within(&mut ninth, Duration::from_secs(2));
    // The idle ones are closed after the header timeout (3 s).
    for s in &mut idle {
        closed_within(s, Duration::from_secs(6));
    }
    // Slots free again: a request is served.
    let (status, _) = get(&agent(), &server, "/healthz");
    assert_eq!(status, 200);

    // One request in flight (its body not sent yet) takes the one slot.
    let mut slow = TcpStream::connect(&addr).unwrap();
    write!(
        slow,
        "POST /v1/redemptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{{\"id\":"
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let mut response = agent()
        .get(server.url("/readyz"))
        .header("Authorization", format!("Bearer {TOKEN}"))
        .call()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "at once");
    assert_eq!(response.status().as_u16(), 503);
    assert_eq!(
        response
            .headers()
            .get("retry-after")
            .unwrap()
            .to_str()
            .unwrap(),
        "1"
    );
    let body: Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(body["error"], "overloaded", "{body}");
    assert_eq!(body["kind"], "error");
    // The body that never comes: 408 `body_timeout` after --body-timeout
    // (2 s), JSON, the connection closed; the slot is free again.
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut answer = String::new();
    let _ = slow.read_to_string(&mut answer);
    assert!(started.elapsed() < Duration::from_secs(5), "{answer}");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"error\":\"body_timeout\""), "{answer}");
    drop(slow);
    let (status, _) = get(&agent(), &server, "/healthz");
    assert_eq!(status, 200);
    // A body over 2 MB: 413, JSON like every answer. The server answers
    // before it has read the whole body and closes; the client may then
    // find the connection reset before it reads the answer (TCP), so it
    // tries a few times and needs one answer.
    let big: Value =
        serde_json::from_str(&format!("{{\"ids\":\"{}\"}}", "a".repeat(3_000_000))).unwrap();
    let answered = (0..10).find_map(|_| {
        call(
            &agent(),
            "POST",
            &server.url("/v1/redemptions/batch"),
            Some(TOKEN),
            Some(big.clone()),
        )
        .ok()
    });
    let (status, text) = answered.expect("one of ten tries is answered");
    assert_eq!(status, 413, "{text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["error"], "body_too_large", "{body}");
}

/// Issue 22: docs/API.md's examples run as written (bash, curl, jq) against
/// a running service: a Trésors Ensablés unit sold, rolled, stopped and
/// redeemed, its play over, a L'île au trésor unit sold and redeemed, the
/// signed head.
#[test]
fn api_md_examples_run_as_written() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/API.md")).unwrap();
    let start = doc.find("## Examples").expect("API.md has its examples");
    let body = &doc[start..];
    let open = body.find("```sh\n").unwrap() + "```sh\n".len();
    let script = &body[open..open + body[open..].find("```").unwrap()];
    let (dir, store) = store_copy();
    crate::common::generate_te(&store, 2, 50);
    for (game, emission) in [("ile-au-tresor", "1"), ("tresors-ensables", "2")] {
        issuer(&store, &["close", "--emission", emission, "--game", game]).expect_code(0);
    }
    let server = Server::start(&store);
    std::fs::copy(
        store.with_extension("tokens"),
        dir.path().join("tokens.txt"),
    )
    .unwrap();
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir.path())
        .env("B", &server.base)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.matches("\"kind\":\"redemption\"").count(),
        2,
        "{stdout}"
    );
    for expected in [
        "\"error\":\"play_over\"",
        "\"kind\":\"play_state\"",
        "\n\u{2014} ticket-issuer/ledger/",
    ] {
        assert!(stdout.contains(expected), "{expected} in\n{stdout}");
    }
}

/// Issue 37: `GET /v1/games` lists every game the node knows, with what a
/// client needs to offer and play it; the player page's module of each
/// only when the page is served (and it is served there, as a module); a
/// token is needed, as for every `/v1` read.
#[test]
fn the_games_route_lists_both_games_with_their_facts_and_page_modules() {
    let (_dir, store) = store_copy();
    let a = agent();
    for page in [false, true] {
        let server = if page {
            Server::start_with(&store, &["--player-page"])
        } else {
            Server::start(&store)
        };
        let (status, _) = call(&a, "GET", &server.url("/v1/games"), None, None).unwrap();
        assert_eq!(status, 401, "a token is needed");
        let (status, text) = get(&a, &server, "/v1/games");
        assert_eq!(status, 200, "{text}");
        let answer: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (&answer["kind"], &answer["schema"]),
            (&json!("games"), &json!(1))
        );
        let games = answer["games"].as_array().unwrap();
        let slugs: Vec<&str> = games.iter().map(|g| g["slug"].as_str().unwrap()).collect();
        assert_eq!(slugs, ["ile-au-tresor", "tresors-ensables"], "{answer}");
        let module = |slug: &str| {
            if page {
                json!(format!("/player/games/{slug}.js"))
            } else {
                Value::Null
            }
        };
        assert_eq!(
            games[0],
            json!({
                "slug": "ile-au-tresor",
                "name": "L'île au trésor",
                "code": 1,
                "id_prefix": "IAT",
                "prices": [
                    {"cents": 50, "euros": "0.5"},
                    {"cents": 100, "euros": "1"},
                    {"cents": 200, "euros": "2"},
                ],
                "rules_version": 1,
                "params": [8, 8],
                "prefix_size": 14,
                "payload_size": 39,
                "record_size": 53,
                "prize_model": "fixed_table",
                "step_by_step": false,
                "play": {"revealed": "whole"},
                "module": module("ile-au-tresor"),
            })
        );
        assert_eq!(
            games[1],
            json!({
                "slug": "tresors-ensables",
                "name": "Trésors Ensablés",
                "code": 2,
                "id_prefix": "TE",
                "prices": [{"cents": 100, "euros": "1"}],
                "rules_version": 1,
                "params": [60, 3],
                "prefix_size": 14,
                "payload_size": 66,
                "record_size": 80,
                "prize_model": "drawn",
                "step_by_step": true,
                "play": {
                    "revealed": "step_by_step",
                    "step": "/v1/plays/{id}/roll",
                    "stop": "/v1/plays/{id}/stop",
                    "state": "/v1/plays/{id}",
                },
                "module": module("tresors-ensables"),
            })
        );
        // The facts are the library's.
        for (row, game) in games.iter().zip(Game::all()) {
            assert_eq!(row["code"], game.code());
            assert_eq!(row["id_prefix"], game.id_prefix());
            assert_eq!(row["record_size"], record_size(game));
            assert_eq!(row["step_by_step"], game.step_by_step());
        }
        if page {
            for row in games {
                let path = row["module"].as_str().unwrap();
                let mut response = a.get(server.url(path)).call().unwrap();
                assert_eq!(response.status().as_u16(), 200, "{path}");
                let kind = response.headers().get("content-type").unwrap();
                assert_eq!(kind, "text/javascript; charset=utf-8", "{path}");
                let body = response.body_mut().read_to_string().unwrap();
                let slug = row["slug"].as_str().unwrap();
                assert!(
                    body.contains(&format!("export const slug = '{slug}';")),
                    "{path}"
                );
            }
        }
    }
}

/// Issue 22: `GET /v1/openapi.json` describes the routes the server has
/// (OpenAPI 3.1, made from the router's own table): every path and method
/// it names is served (never `no_route` nor 405), each with its answers,
/// and a path it does not name is not.
#[test]
fn the_openapi_description_names_exactly_the_routes_served() {
    let (_dir, store) = store_copy();
    let server = Server::start(&store);
    let a = agent();
    let (status, text) = get(&a, &server, "/v1/openapi.json");
    assert_eq!(status, 200, "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(
        doc.get("kind").is_none(),
        "an OpenAPI document, not an answer"
    );
    let paths = doc["paths"].as_object().unwrap();
    let mut ids = std::collections::BTreeSet::new();
    let mut served = Vec::new();
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            assert!(
                ids.insert(op["operationId"].as_str().unwrap().to_string()),
                "{op}"
            );
            assert!(op["responses"]["200"].is_object(), "{method} {path}: {op}");
            assert!(op["responses"]["401"].is_object(), "{method} {path}");
            let url = server.url(
                &path
                    .replace("{id}", "IAT-1-1-1-AAAAAAAA")
                    .replace("{key}", "k1")
                    .replace("{game}", "ile-au-tresor")
                    .replace("{emission}", "1")
                    .replace("{block}", "1")
                    .replace("{path}", "0/000"),
            );
            let body = (method == "post").then(|| json!({}));
            let (status, answer) =
                call(&a, &method.to_uppercase(), &url, Some(TOKEN), body).unwrap();
            assert_ne!(status, 405, "{method} {path}: {answer}");
            // An answer of 200 is of the kind described.
            if let (200, Ok(answer)) = (status, serde_json::from_str::<Value>(&answer)) {
                let described = &op["responses"]["200"]["content"]["application/json"]["schema"]
                    ["allOf"][0]["properties"]["kind"]["const"];
                if answer.get("kind").is_some() {
                    assert_eq!(&answer["kind"], described, "{method} {path}");
                }
            }
            assert!(
                !answer.contains("\"no_route\""),
                "{method} {path}: {answer}"
            );
            served.push(format!("{} {path}", method.to_uppercase()));
        }
    }
    for route in [
        "POST /v1/redemptions",
        "POST /v1/redemptions/batch",
        "GET /v1/units/{id}",
        "GET /v1/receipts/{id}",
        "POST /v1/sales",
        "GET /v1/sales/{key}",
        "GET /v1/plays/{id}",
        "GET /v1/plays/{id}/picture.svg",
        "POST /v1/plays/{id}/roll",
        "POST /v1/plays/{id}/stop",
        "GET /v1/blocks/{game}/{emission}/{block}",
        "GET /v1/games",
        "GET /v1/ledger/head",
        "GET /v1/log/checkpoint",
        "GET /v1/log/tile/{path}",
        "GET /healthz",
        "GET /readyz",
        "GET /metrics",
        "GET /v1/openapi.json",
        "POST /v1/operator/suspend",
        "POST /v1/operator/resume",
        "POST /v1/operator/withdraw",
        "POST /v1/operator/void",
        "GET /v1/operator/remaining",
    ] {
        assert!(served.iter().any(|s| s == route), "{route} described");
    }
    assert_eq!(served.len(), 26, "{served:?}");
    let (status, _) = get(&a, &server, "/v1/undescribed");
    assert_eq!(status, 404);
}
