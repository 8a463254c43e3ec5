//! Receipts for players (issue 26, docs/REDEMPTION.md §Receipts): a sale's
//! and a redemption's receipt from the CLI and from HTTP, checked by the
//! library's verifier; `GET /v1/receipts/{id}` under a log spanning tiles;
//! and the Python recipe of the docs run as written, on a real receipt,
//! its tampered forms and a cosigned checkpoint.

use std::path::Path;
use std::process::Command;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde_json::{json, Value};
use ticket_issuer::game::Game;
use ticket_issuer::ledger::receipt::{Receipt, ReceiptError};
use ticket_issuer::store::Store;
use ticket_issuer::witness::cosignature::{CosignatureError, Cosigner};

use crate::common::{
    agent, get, issuer, issuer_with_input, played, post, te_store, valid_id_of, Server, TOKEN_NAME,
};

/// Units in the test block: its entries fill more than one level-0 tile.
const UNITS: u32 = 300;

fn te_id(store: &Path, index: u32) -> String {
    valid_id_of(store, Game::TRESORS_ENSABLES, 1, 1, index)
}

fn ledger_key(store: &Path) -> VerifyingKey {
    ticket_issuer::seal::read_public(&Store::new(store).ledger_public_key_path()).unwrap()
}

/// The `receipt` member of an answer, parsed, checked with the log's key.
fn verified(answer: &Value, key: &VerifyingKey) -> Receipt {
    let receipt: Receipt = serde_json::from_value(answer["receipt"].clone())
        .unwrap_or_else(|e| panic!("no receipt in {answer}: {e}"));
    let proved = receipt
        .verify(key, &[], 0)
        .unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!(proved.size, receipt.tree_size);
    receipt
}

/// `id` with its check code's last character changed.
fn wrong_code(id: &str) -> String {
    let mut wrong = id.to_string();
    let last = wrong.pop().unwrap();
    wrong.push(if last == 'A' { 'B' } else { 'A' });
    wrong
}

/// Units 2 to 298 marked sold (unit 0 is sold by `sell`, unit 1 over
/// HTTP, unit 299 never).
fn mark_most_sold(store: &Path) {
    let list: String = (2..UNITS - 1)
        .map(|i| format!("{}\n", te_id(store, i)))
        .collect();
    let args = [
        "mark-sold",
        "--ids",
        "-",
        "--emission",
        "1",
        "--game",
        "tresors-ensables",
        "--json",
        "--platform",
        TOKEN_NAME,
    ];
    let marked = issuer_with_input(store, &args, &list).expect_code(0).json();
    assert_eq!(marked["marked"], UNITS - 3, "{marked}");
}

#[test]
fn receipts_from_the_cli_and_http_verify_and_a_unit_s_receipts_follow_the_log() {
    let (_dir, store) = te_store(UNITS);

    // The CLI: a sale's receipt, then a redemption's.
    let sale = issuer(
        &store,
        &[
            "sell",
            "--game",
            "tresors-ensables",
            "--json",
            "--receipt",
            "--platform",
            TOKEN_NAME,
        ],
    )
    .expect_code(0)
    .json();
    let key = ledger_key(&store);
    let r = verified(&sale, &key);
    assert_eq!((r.index, r.tree_size), (0, 1), "{sale}");
    assert!(
        r.entry.starts_with("sale/v1|0|tresors-ensables|1|1|0|"),
        "{}",
        r.entry
    );
    assert_eq!(sale["ledger_entry"], 0);
    mark_most_sold(&store);
    let (seven, nine, eleven) = (te_id(&store, 7), te_id(&store, 9), te_id(&store, 11));
    for id in [&seven, &nine, &eleven] {
        played(&store, None, id, None);
    }
    let redeemed = issuer(&store, &["redeem", &seven, "--json", "--receipt"])
        .expect_code(0)
        .json();
    let r = verified(&redeemed, &key);
    assert_eq!(Some(r.index), redeemed["ledger_entry"]["seq"].as_u64());
    assert!(r.entry.starts_with("ledger/v1|") && r.entry.contains(&format!("|{seven}|")));
    assert!(
        r.tree_size > 256,
        "the log spans two level-0 tiles: {}",
        r.tree_size
    );
    // --receipt goes with --json.
    issuer(&store, &["redeem", &nine, "--receipt"]).expect_code(2);

    // HTTP: only when asked.
    let server = Server::start(&store);
    let a = agent();
    let (status, plain) = post(&a, &server, "/v1/redemptions", json!({ "id": nine }));
    assert_eq!(status, 200, "{plain}");
    assert!(plain.get("receipt").is_none(), "not asked: {plain}");
    let (status, asked) = post(
        &a,
        &server,
        "/v1/redemptions?receipt=true",
        json!({ "id": eleven }),
    );
    assert_eq!(status, 200, "{asked}");
    let r = verified(&asked, &key);
    assert!(r.entry.contains(&format!("|{eleven}|")));
    let (status, sold) = post(
        &a,
        &server,
        "/v1/sales?receipt=true",
        json!({ "game": "tresors-ensables" }),
    );
    assert_eq!(status, 200, "{sold}");
    assert_eq!(sold["id"], te_id(&store, 1));
    let r = verified(&sold, &key);
    assert!(r
        .entry
        .starts_with(&format!("sale/v1|{}|tresors-ensables|1|1|1|", r.index)));
    let (status, e) = post(
        &a,
        &server,
        "/v1/sales?receipt=maybe",
        json!({ "game": "tresors-ensables" }),
    );
    assert_eq!(
        (status, e["error"].as_str()),
        (400, Some("invalid_request")),
        "{e}"
    );

    // A unit's receipts, under the current checkpoint: the sale made
    // first (index 0, its first receipt under a head of size 1) is now
    // proved in the whole log, from its tiles.
    let (_, head) = get(&a, &server, "/v1/log/checkpoint");
    let size: u64 = head.lines().nth(1).unwrap().parse().unwrap();
    let (status, body) = get(&a, &server, &format!("/v1/receipts/{}", te_id(&store, 0)));
    assert_eq!(status, 200, "{body}");
    let first: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(first["kind"], "receipts");
    assert_eq!(first["redemption"], Value::Null, "{first}");
    let r = verified(&first["sale"], &key);
    assert_eq!((r.index, r.tree_size), (0, size));
    assert_eq!(r.checkpoint, head, "the published checkpoint, as served");
    let (_, body) = get(&a, &server, &format!("/v1/receipts/{seven}"));
    let both: Value = serde_json::from_str(&body).unwrap();
    let sale = verified(&both["sale"], &key);
    let redemption = verified(&both["redemption"], &key);
    assert_eq!(
        Some(redemption.index),
        redeemed["ledger_entry"]["seq"].as_u64()
    );
    assert!(sale.index < redemption.index);
    assert_eq!(both["sale"]["index"], sale.index);

    // Refusals: never sold (unknown to the platform, issue 34), and a
    // wrong check code answered exactly as a check answers it.
    let (status, e) = get(
        &a,
        &server,
        &format!("/v1/receipts/{}", te_id(&store, UNITS - 1)),
    );
    assert_eq!(status, 404, "{e}");
    assert!(e.contains("\"unknown_unit\""), "{e}");
    for id in [
        wrong_code(&seven),
        wrong_code(&te_id(&store, UNITS - 1)),
        "TE-1-1-nope".into(),
    ] {
        let as_check = get(&a, &server, &format!("/v1/units/{id}"));
        let as_receipts = get(&a, &server, &format!("/v1/receipts/{id}"));
        assert_eq!(as_receipts, as_check, "{id}");
        assert!(as_check.0 >= 400, "{as_check:?}");
    }
}

/// The fenced Python block of docs/REDEMPTION.md §Receipts.
fn recipe() -> String {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/REDEMPTION.md"))
        .unwrap();
    let section = doc
        .split("\n## Receipts\n")
        .nth(1)
        .expect("docs/REDEMPTION.md has a §Receipts")
        .split("\n## ")
        .next()
        .unwrap();
    let start = section
        .find("```python\n")
        .expect("a python block in §Receipts")
        + "```python\n".len();
    let len = section[start..].find("\n```").expect("the block ends");
    format!("{}\n", &section[start..start + len])
}

/// The recipe run on `receipt`: (exit code, what it printed).
fn run_recipe(dir: &Path, script: &Path, receipt: &Receipt, vkeys: &[&str]) -> (i32, String) {
    let file = dir.join("receipt.json");
    std::fs::write(
        &file,
        serde_json::to_string(&json!({ "receipt": receipt })).unwrap(),
    )
    .unwrap();
    let out = Command::new("python3")
        .arg(script)
        .arg(&file)
        .args(vkeys)
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// The checkpoint's text and signature lines, apart.
fn split_note(note: &str) -> (&str, &str) {
    let at = note.rfind("\n\n").unwrap();
    (&note[..=at], &note[at + 2..])
}

#[test]
fn the_recipe_in_the_docs_checks_receipts() {
    let (dir, store) = te_store(UNITS);
    let marked = issuer(
        &store,
        &[
            "mark-sold",
            "--all",
            "--emission",
            "1",
            "--game",
            "tresors-ensables",
            "--json",
            "--platform",
            TOKEN_NAME,
        ],
    )
    .expect_code(0)
    .json();
    assert_eq!(marked["marked"], UNITS);
    let id = te_id(&store, 7);
    played(&store, None, &id, None);
    let answer = issuer(&store, &["redeem", &id, "--json", "--receipt"])
        .expect_code(0)
        .json();
    let key = ledger_key(&store);
    let receipt = verified(&answer, &key);
    let head = issuer(&store, &["ledger", "head", "--json"])
        .expect_code(0)
        .json();
    let log_vkey = head["verifier_key"]
        .as_str()
        .expect("the log's verifier key")
        .to_string();
    let script = dir.path().join("check_receipt.py");
    std::fs::write(&script, recipe()).unwrap();

    let (code, said) = run_recipe(dir.path(), &script, &receipt, &[&log_vkey]);
    assert_eq!((code, said.trim()), (0, "ok"), "{said}");

    // Each tampering: the recipe says why and exits 1; the library refuses
    // it with the matching error.
    let (text, signatures) = split_note(&receipt.checkpoint);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[2] = BASE64.encode([0u8; 32]);
    let other_root = format!("{}\n\n{signatures}", lines.join("\n"));
    let (name, blob) = signatures.trim_end().rsplit_once(' ').unwrap();
    let mut sig = BASE64.decode(blob).unwrap();
    sig[10] ^= 1;
    let flipped_signature = format!("{text}\n{name} {}\n", BASE64.encode(&sig));
    let mut flipped_proof = receipt.clone();
    let mut h = BASE64.decode(&flipped_proof.inclusion_proof[0]).unwrap();
    h[0] ^= 1;
    flipped_proof.inclusion_proof[0] = BASE64.encode(h);
    let cases: Vec<(&str, Receipt, &str)> = vec![
        (
            "entry changed",
            Receipt {
                entry: receipt.entry.replacen("|7|", "|8|", 1),
                ..receipt.clone()
            },
            "does not lead to the checkpoint's root",
        ),
        (
            "a proof hash flipped",
            flipped_proof,
            "does not lead to the checkpoint's root",
        ),
        (
            "the root changed",
            Receipt {
                checkpoint: other_root,
                ..receipt.clone()
            },
            "no valid signature by the log key",
        ),
        (
            "a signature byte flipped",
            Receipt {
                checkpoint: flipped_signature,
                ..receipt.clone()
            },
            "no valid signature by the log key",
        ),
        (
            "another index",
            Receipt {
                index: receipt.index - 1,
                ..receipt.clone()
            },
            "does not name its position",
        ),
        (
            "another size",
            Receipt {
                tree_size: receipt.tree_size + 1,
                ..receipt.clone()
            },
            "the receipt says",
        ),
    ];
    for (what, tampered, why) in &cases {
        let (code, said) = run_recipe(dir.path(), &script, tampered, &[&log_vkey]);
        assert_eq!(code, 1, "{what}: {said}");
        assert!(
            said.contains("receipt does not verify") && said.contains(why),
            "{what}: {said}"
        );
        let refused = tampered.verify(&key, &[], 0).expect_err(what);
        let expected = match *what {
            "entry changed" | "a proof hash flipped" => {
                matches!(refused, ReceiptError::Inclusion { .. })
            }
            "the root changed" | "a signature byte flipped" => {
                matches!(refused, ReceiptError::LogSignature { .. })
            }
            "another index" => matches!(refused, ReceiptError::EntryIndex { .. }),
            _ => matches!(refused, ReceiptError::TreeSize { .. }),
        };
        assert!(expected, "{what}: {refused:?}");
    }
    // Another log's key.
    let other = SigningKey::from_bytes(&[9; 32]).verifying_key();
    let other_vkey = ticket_issuer::ledger::log::verifier_key(&other);
    let (code, said) = run_recipe(dir.path(), &script, &receipt, &[&other_vkey]);
    assert_eq!(code, 1, "{said}");
    assert!(receipt.verify(&other, &[], 0).is_err());

    // A cosigned checkpoint: the log's note with a witness's line. The
    // witness's vkey holds a '+' in its base64 (as a log's may): the
    // recipe splits a vkey at its first two '+' only.
    let witness = (0..=u8::MAX)
        .map(|seed| Cosigner::new(SigningKey::from_bytes(&[seed; 32]), None).unwrap())
        .find(|w| {
            w.vkey()
                .to_string()
                .splitn(3, '+')
                .nth(2)
                .unwrap()
                .contains('+')
        })
        .expect("a key whose base64 holds a '+'");
    let w_vkey = witness.vkey().to_string();
    let cosigned = Receipt {
        checkpoint: format!(
            "{}{}",
            receipt.checkpoint,
            witness.cosign(text, 1_767_225_600)
        ),
        ..receipt.clone()
    };
    let (code, said) = run_recipe(dir.path(), &script, &cosigned, &[&log_vkey, &w_vkey]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("cosigned by") && said.trim_end().ends_with("ok"),
        "{said}"
    );
    let proved = cosigned
        .verify(&key, std::slice::from_ref(witness.vkey()), 1)
        .unwrap();
    assert_eq!(
        proved.cosigned_by,
        [(witness.vkey().name().to_string(), 1_767_225_600)]
    );
    // Its line tampered (another time), or missing.
    let (w_text, w_lines) = split_note(&cosigned.checkpoint);
    let w_line = w_lines.lines().last().unwrap();
    let (w_name, w_blob) = w_line.rsplit_once(' ').unwrap();
    let mut blob = BASE64.decode(w_blob).unwrap();
    blob[11] ^= 1;
    let other_time = Receipt {
        checkpoint: cosigned
            .checkpoint
            .replace(w_line, &format!("{w_name} {}", BASE64.encode(&blob))),
        ..receipt.clone()
    };
    assert!(w_text == text);
    let (code, said) = run_recipe(dir.path(), &script, &other_time, &[&log_vkey, &w_vkey]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("cosignature by") && said.contains("does not verify"),
        "{said}"
    );
    assert!(matches!(
        other_time.verify(&key, std::slice::from_ref(witness.vkey()), 1),
        Err(ReceiptError::Cosignature(CosignatureError::Invalid { .. }))
    ));
    let (code, said) = run_recipe(dir.path(), &script, &receipt, &[&log_vkey, &w_vkey]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("no cosignature by the witness"), "{said}");
    assert!(matches!(
        receipt.verify(&key, std::slice::from_ref(witness.vkey()), 1),
        Err(ReceiptError::Quorum {
            have: 0,
            need: 1,
            ..
        })
    ));
}

#[test]
fn pg_a_unit_s_receipts_come_once_its_entries_are_under_the_published_checkpoint() {
    let Some(pg) = crate::pg::Cluster::start("pg_a_unit_s_receipts…") else {
        return;
    };
    let (_dir, store) = te_store(UNITS);
    pg.migrate(&store);
    let url = pg.url();
    let args = [
        "mark-sold",
        "--all",
        "--emission",
        "1",
        "--game",
        "tresors-ensables",
        "--json",
        "--platform",
        TOKEN_NAME,
        "--ledger",
        url.as_str(),
    ];
    issuer(&store, &args).expect_code(0);
    let id = te_id(&store, 7);
    played(&store, Some(&url), &id, None);
    let answer = issuer(
        &store,
        &["redeem", &id, "--json", "--receipt", "--ledger", &url],
    )
    .expect_code(0)
    .json();
    let key = ledger_key(&store);
    // Queued for the sequencer: null, or already under the checkpoint.
    if !answer["receipt"].is_null() {
        verified(&answer, &key);
    }
    let server = Server::start_with(&store, &["--ledger", url.as_str()]);
    let a = agent();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let both = loop {
        let (status, body) = get(&a, &server, &format!("/v1/receipts/{id}"));
        assert_eq!(status, 200, "{body}");
        let both: Value = serde_json::from_str(&body).unwrap();
        if !both["sale"]["receipt"].is_null() && !both["redemption"]["receipt"].is_null() {
            break both;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never under the checkpoint: {both}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let sale = verified(&both["sale"], &key);
    let redemption = verified(&both["redemption"], &key);
    assert!(sale
        .entry
        .starts_with(&format!("sale/v1|{}|tresors-ensables|1|1|7|", sale.index)));
    assert!(redemption.entry.contains(&format!("|{id}|")));
    assert!(redemption.tree_size > 256);
    // Tiles not stored (yet): the proof is made from the published
    // tiles all the same, from the entries.
    let mut sql = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    sql.batch_execute("DELETE FROM log_tiles").unwrap();
    let (status, body) = get(&a, &server, &format!("/v1/receipts/{id}"));
    assert_eq!(status, 200, "{body}");
    let again: Value = serde_json::from_str(&body).unwrap();
    let untiled = verified(&again["redemption"], &key);
    if untiled.tree_size == redemption.tree_size {
        assert_eq!(untiled, redemption);
    }
}
