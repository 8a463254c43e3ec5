//! The command-line contract of docs/CLI.md, through the real binary: every
//! `--json` output's kind, schema and fields; the JSON error object and the
//! exit code of each error kind; `verify`'s scopes; `status`; completions
//! and man page; usage errors; messages for an auditor without keys; and
//! messages that never echo unbounded input. One generated block serves
//! the whole file; tests that change a store work on a copy.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common;
use crate::common::{issuer, sold, valid_id, Run, GENERATE_ONE_BLOCK};
use serde_json::Value;
use tempfile::TempDir;

/// The block of the shared store, relative to it.
const BLOCK: &str = "emissions/ile-au-tresor/e000001/b000001.tkb";

/// The shared store: keys and block 1 of emission 1 at 1 €, no ledger.
struct Fixture {
    store: PathBuf,
    /// What `generate --json` printed.
    generated: Run,
    /// A winning unit's ID and its prize (as `show --json` printed it).
    winner: (String, String),
}

/// Generates the block once per test run, in a folder named after this
/// process; folders of finished runs are removed.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let store = common::process_dir("contract-fixture-");
        // GENERATE_ONE_BLOCK's command with the short flags -j (jobs) and
        // -q (quiet).
        let args = [&GENERATE_ONE_BLOCK[..9], &["-j", "2", "-q", "--json"]].concat();
        let generated = issuer(&store, &args).expect_code(0);
        let winner = (0..1000)
            .map(|i| valid_id(&store, 1, 1, i))
            .find_map(|id| {
                let shown = issuer(&store, &["show", &id, "--json"])
                    .expect_code(0)
                    .json();
                shown["lot"]
                    .is_string()
                    .then(|| (id, shown["prize"].as_str().unwrap().to_string()))
            })
            .expect("a winner among the first 1000 units");
        Fixture {
            store,
            generated,
            winner,
        }
    })
}

/// A copy of the shared store, for a test that changes it.
fn fresh() -> TempDir {
    let dir = TempDir::new().unwrap();
    common::copy_tree(&fixture().store, dir.path());
    dir
}

/// A store holding the block and the manifest, and of the keys only the
/// public key when `public_key` (an auditor's); none otherwise.
fn auditor(public_key: bool) -> TempDir {
    let dir = TempDir::new().unwrap();
    let from = &fixture().store;
    common::copy_tree(&from.join("emissions"), &dir.path().join("emissions"));
    if public_key {
        std::fs::create_dir_all(dir.path().join("keys")).unwrap();
        std::fs::copy(
            from.join("keys/issuer.pub.pem"),
            dir.path().join("keys/issuer.pub.pem"),
        )
        .unwrap();
    }
    dir
}

/// Reveals emission 1 of `store` (closed already) to a file in it.
fn reveal(store: &Path) {
    let out = store.join("reveal.json");
    let out = out.to_str().unwrap();
    issuer(
        store,
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
    issuer(store, &["reveal", "--emission", "1", "--out", out]).expect_code(0);
}

fn block_path() -> String {
    fixture().store.join(BLOCK).to_str().unwrap().to_string()
}

/// Asserts `run` printed one JSON line of `kind`, schema 1, with exactly
/// the top-level `fields` (docs/CLI.md) after `kind` and `schema`; returns it.
fn envelope(run: &Run, kind: &str, fields: &[&str]) -> Value {
    assert_eq!(run.stdout.lines().count(), 1, "one line: {}", run.stdout);
    let prefix = format!("{{\"kind\":\"{kind}\",\"schema\":1,");
    assert!(run.stdout.starts_with(&prefix), "{}", run.stdout);
    let value = run.json();
    let keys: BTreeSet<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let expected: BTreeSet<&str> = ["kind", "schema"].iter().chain(fields).copied().collect();
    assert_eq!(keys, expected, "{kind} fields");
    value
}

/// Asserts `run` failed with `code` and printed the JSON error object of
/// `error` and `category`, its message also on stderr; returns the object.
fn error_object(run: &Run, code: i32, error: &str, category: &str) -> Value {
    assert_eq!(run.code, code, "{}\n{}", run.stdout, run.stderr);
    let e = run.json();
    assert_eq!(e["kind"], "error", "{}", run.stdout);
    assert_eq!(e["schema"], 1);
    assert_eq!(e["error"], error, "{}", run.stdout);
    assert_eq!(e["category"], category, "{}", run.stdout);
    let message = e["message"].as_str().unwrap();
    assert_eq!(run.stderr.trim_end(), format!("error: {message}"));
    e
}

const BLOCK_SUMMARY: [&str; 9] = [
    "path",
    "game",
    "emission",
    "block",
    "price",
    "units",
    "merkle_root",
    "file_sha256",
    "seed_commitment",
];

const REDEMPTION: [&str; 14] = [
    "id",
    "game",
    "emission",
    "block",
    "index",
    "lot",
    "prize",
    "stopped_after_rolls",
    "record",
    "leaf_index",
    "tree_size",
    "inclusion_proof",
    "merkle_root",
    "redeemed_at",
];

fn keys_of(v: &Value) -> BTreeSet<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn every_json_output_is_one_line_with_kind_schema_and_the_documented_fields() {
    let f = fixture();
    let s = &f.store;
    let generated = envelope(&f.generated, "generate", &["blocks"]);
    assert_eq!(keys_of(&generated["blocks"][0]), BLOCK_SUMMARY.into());

    let blocks = envelope(
        &issuer(s, &["verify", &block_path(), "--json"]).expect_code(0),
        "verify_blocks",
        &["ok", "complete", "blocks", "unreadable"],
    );
    let report = &blocks["blocks"][0];
    let block_fields: BTreeSet<&str> = BLOCK_SUMMARY
        .iter()
        .chain(&[
            "scope",
            "ok",
            "complete",
            "checks",
            "failures",
            "failure_count",
        ])
        .copied()
        .collect();
    assert_eq!(keys_of(report), block_fields);
    assert_eq!(report["scope"], "full");
    for c in report["checks"].as_array().unwrap() {
        assert_eq!(keys_of(c), ["check", "status", "detail"].into());
        assert_eq!(c["status"], "passed", "{c}");
    }

    let emission = envelope(
        &issuer(s, &["verify", "--emission", "1", "-q", "--json"]).expect_code(0),
        "verify_emission",
        &[
            "emission",
            "game",
            "closed",
            "manifest_signature_ok",
            "seeds_checked",
            "blocks",
            "problems",
            "scope",
            "ok",
            "complete",
        ],
    );
    assert_eq!(keys_of(&emission["blocks"][0]), block_fields);
    assert_eq!(
        (&emission["ok"], &emission["complete"]),
        (&Value::Bool(true), &Value::Bool(true))
    );

    let (id, prize) = &f.winner;
    let shown_fields: Vec<&str> = REDEMPTION.iter().chain(&["picture"]).copied().collect();
    let shown = envelope(
        &issuer(s, &["show", id, "--json"]).expect_code(0),
        "unit",
        &shown_fields,
    );
    let picture = shown["picture"].as_array().unwrap();
    assert_eq!(picture.len(), 9, "8 map rows and the legend: {picture:?}");
    assert!(picture[8].as_str().unwrap().starts_with("@ start"));
    let check = envelope(
        &issuer(s, &["redeem", id, "--check", "--json"]).expect_code(0),
        "check",
        &REDEMPTION,
    );
    assert_eq!(check["redeemed_at"], Value::Null);

    let copy = fresh();
    let c = copy.path();
    let redeemed: Vec<&str> = REDEMPTION
        .iter()
        .chain(&["ledger_entry"])
        .copied()
        .collect();
    sold(c, &[id]);
    let paid = envelope(
        &issuer(c, &["redeem", id, "--json"]).expect_code(0),
        "redemption",
        &redeemed,
    );
    assert_eq!(&paid["prize"], prize);
    assert!(paid["redeemed_at"].is_string());
    assert_eq!(
        keys_of(&paid["ledger_entry"]),
        BTreeSet::from(["sequenced", "seq", "leaf_hash", "tree_size", "root"])
    );
    // The log's entry 0 is the unit's sale, entry 1 its redemption.
    assert_eq!(paid["ledger_entry"]["seq"], 1);
    assert_eq!(paid["ledger_entry"]["tree_size"], 2);
    // After a redemption, `--check` adds when it was redeemed and where
    // it is in the log.
    let checked = issuer(c, &["redeem", id, "--check", "--json"]).expect_code(0);
    let with_earlier: Vec<&str> = REDEMPTION
        .iter()
        .chain(&["already_redeemed_at", "ledger_entry"])
        .copied()
        .collect();
    let checked = envelope(&checked, "check", &with_earlier);
    assert_eq!(checked["already_redeemed_at"], paid["redeemed_at"]);
    assert_eq!(
        checked["ledger_entry"],
        serde_json::json!({"sequenced": true, "seq": 1})
    );

    let ledger = envelope(
        &issuer(c, &["ledger", "--json"]).expect_code(0),
        "ledger",
        &[
            "path",
            "blocks",
            "units",
            "paid",
            "digest",
            "integrity_ok",
            "reconciled",
        ],
    );
    assert_eq!(
        keys_of(&ledger["blocks"][0]),
        [
            "game",
            "emission",
            "block",
            "units",
            "winners",
            "paid",
            "reconciled"
        ]
        .into()
    );
    let status = envelope(
        &issuer(c, &["status", "--json"]).expect_code(0),
        "status",
        &["store", "ledger", "has_secrets", "emissions"],
    );
    assert_eq!(
        keys_of(&status["emissions"][0]),
        [
            "game",
            "emission",
            "state",
            "manifest_signature",
            "blocks",
            "units",
            "prices",
            "sold",
            "voided",
            "unsold",
            "withdrawn",
            "played",
            "redeemed_units",
            "redeemed_amount",
            "suspended_since",
            "suspended_reason",
            "voids",
            "claims_ended_at",
            "block_status"
        ]
        .into()
    );
    assert_eq!(
        keys_of(&status["emissions"][0]["block_status"][0]),
        [
            "block",
            "price",
            "units",
            "sold",
            "voided",
            "unsold",
            "withdrawn",
            "standing",
            "since",
            "reason",
            "played",
            "redeemed_units",
            "redeemed_amount"
        ]
        .into()
    );

    let error = issuer(s, &["redeem", "IAT-1-1-5", "--json"]);
    let error = envelope(&error, "error", &["error", "category", "message"]);
    assert_eq!(error["error"], "invalid_id");
}

#[test]
fn refusals_under_json_print_the_error_object_with_the_exit_code_of_their_kind() {
    let f = fixture();
    let copy = fresh();
    let s = copy.path();
    let (id, prize) = &f.winner;
    let redeem = |id: &str| issuer(s, &["redeem", id, "--json"]);

    // invalid_input → 2
    let e = error_object(&redeem("IAT-1-1-5"), 2, "invalid_id", "invalid_input");
    assert!(e["message"].as_str().unwrap().contains("malformed"), "{e}");
    // rejected → 1
    let (head, code) = id.rsplit_once('-').unwrap();
    let other = if code.starts_with('0') { '1' } else { '0' };
    let wrong = format!("{head}-{other}{}", &code[1..]);
    let e = error_object(&redeem(&wrong), 1, "wrong_check_code", "rejected");
    assert_eq!(e["id"], wrong.as_str());
    let e = error_object(
        &redeem("IAT-1-1-450000-00000000"),
        1,
        "index_out_of_range",
        "rejected",
    );
    assert_eq!(e["id"], "IAT-1-1-450000-00000000");
    // not_found → 1
    let unknown = valid_id(s, 1, 9, 0);
    let e = error_object(&redeem(&unknown), 1, "unknown_block", "not_found");
    assert_eq!(
        (&e["id"], &e["emission"]),
        (&Value::from(unknown), &Value::from(1))
    );
    let e = error_object(
        &redeem(&valid_id(s, 5, 1, 0)),
        1,
        "unknown_emission",
        "not_found",
    );
    assert_eq!(e["emission"], 5);
    // conflict → 1: a unit never sold (issue 13) is not paid…
    let e = error_object(&redeem(id), 1, "not_sold", "conflict");
    assert_eq!(e["id"], id.as_str());
    // …and once sold, the second redemption names the first.
    sold(s, &[id]);
    let first = redeem(id).expect_code(0).json();
    let e = error_object(&redeem(id), 1, "already_redeemed", "conflict");
    assert_eq!(e["id"], id.as_str());
    assert_eq!(e["redeemed_at"], first["redeemed_at"]);
    assert_eq!(&e["prize"], prize);
    // unavailable → 3: the ledger can't be used (a damaged database file).
    let busy = fresh();
    std::fs::write(busy.path().join("ledger.sqlite"), vec![0x5a; 4096]).unwrap();
    let run = issuer(busy.path(), &["redeem", id, "--json"]);
    let e = error_object(&run, 3, "ledger_unavailable", "unavailable");
    assert!(
        e["path"].as_str().unwrap().ends_with("ledger.sqlite"),
        "{e}"
    );
    // gone → 1: a revealed emission.
    issuer(s, &["close", "--emission", "1"]).expect_code(0);
    reveal(s);
    let other_unit = valid_id(s, 1, 1, 7);
    for args in [
        vec!["redeem", &other_unit, "--json"],
        vec!["redeem", &other_unit, "--check", "--json"],
        vec!["show", &other_unit, "--json"],
    ] {
        let e = error_object(&issuer(s, &args), 1, "emission_revealed", "gone");
        assert_eq!(e["emission"], 1, "{args:?}");
    }
    // Nothing refused was recorded: the ledger holds the one redemption.
    let ledger = issuer(s, &["ledger", "--json"]).expect_code(0).json();
    assert_eq!(ledger["units"], 1);
}

#[test]
fn verify_exits_0_only_when_every_check_of_the_scope_was_made() {
    let f = fixture();
    let auditor = auditor(true);
    let a = auditor.path();
    let block = block_path();
    let key = a.join("records-key.json");
    let key = key.to_str().unwrap();
    let export = [
        "keys",
        "export-records-key",
        "--emission",
        "1",
        "--out",
        key,
    ];
    issuer(&f.store, &export).expect_code(0);
    // (arguments, exit code, complete, scope)
    let cases: [(Vec<&str>, i32, bool, &str); 8] = [
        (vec!["verify", &block], 1, false, "full"),
        (
            vec!["verify", &block, "--structure-only"],
            0,
            true,
            "structure",
        ),
        (
            vec!["verify", &block, "--scope", "structure"],
            0,
            true,
            "structure",
        ),
        (
            vec!["verify", &block, "--records-key", key],
            1,
            false,
            "full",
        ),
        (
            vec!["verify", &block, "--records-key", key, "--scope", "records"],
            0,
            true,
            "records",
        ),
        (vec!["verify", "--emission", "1", "-q"], 1, false, "full"),
        (
            vec!["verify", "--emission", "1", "-q", "--structure-only"],
            0,
            true,
            "structure",
        ),
        (
            vec![
                "verify",
                "--emission",
                "1",
                "-q",
                "--records-key",
                key,
                "--scope",
                "records",
            ],
            0,
            true,
            "records",
        ),
    ];
    for (args, code, complete, scope) in cases {
        let run = issuer(a, &[&args[..], &["--json"]].concat()).expect_code(code);
        let report = run.json();
        assert_eq!(report["ok"], true, "{args:?}");
        assert_eq!(report["complete"], complete, "{args:?}");
        assert_eq!(report["blocks"][0]["scope"], scope, "{args:?}");
        // The words say the same.
        let words = issuer(a, &args).expect_code(code).stdout;
        assert_eq!(words.contains("INCOMPLETE"), !complete, "{args:?}: {words}");
        assert!(complete <= words.contains("OK"), "{args:?}: {words}");
    }
    // Not asked for, the smaller scope is not a pass: the checks it skips
    // are listed as not done.
    let incomplete = issuer(a, &["verify", &block, "--json"]).json();
    let not_done: Vec<&str> = incomplete["blocks"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "not_done")
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert!(!not_done.is_empty(), "{incomplete}");
}

/// `status --json` and its words: the only emission of `store`.
fn status_of(store: &Path) -> (Value, String) {
    let json = issuer(store, &["status", "--json"]).expect_code(0).json();
    assert_eq!(json["emissions"].as_array().unwrap().len(), 1, "{json}");
    let words = issuer(store, &["status"]).expect_code(0).stdout;
    (json["emissions"][0].clone(), words)
}

#[test]
fn status_lists_game_blocks_prices_state_and_redemptions() {
    let f = fixture();
    let copy = fresh();
    let s = copy.path();
    let (e, words) = status_of(s);
    assert_eq!(e["game"], "ile-au-tresor");
    assert_eq!(e["emission"], 1);
    assert_eq!(e["state"], "open");
    assert_eq!(e["manifest_signature"], "ok");
    assert_eq!(e["blocks"], 1);
    assert_eq!(e["units"], 450_000);
    assert_eq!(e["prices"], serde_json::json!(["1"]));
    assert_eq!(
        (&e["redeemed_units"], &e["redeemed_amount"]),
        (&Value::from(0), &Value::from("0"))
    );
    assert!(
        words.contains(
            "ile-au-tresor emission 1: open, 1 block, 450000 units at 1 €; sold 0, unsold 450000, played 0, redeemed 0 units, 0 € paid"
        ),
        "{words}"
    );
    assert!(words.contains("holds the secrets"), "{words}");
    // Status reads only: no ledger was created.
    assert!(!s.join("ledger.sqlite").exists());

    let (id, prize) = &f.winner;
    sold(s, &[id]);
    issuer(s, &["redeem", id]).expect_code(0);
    let (e, words) = status_of(s);
    assert_eq!(e["redeemed_units"], 1);
    assert_eq!(&e["redeemed_amount"], prize);
    assert_eq!(
        (&e["sold"], &e["unsold"]),
        (&Value::from(1), &Value::from(449_999))
    );
    assert!(
        words.contains(&format!(
            "sold 1, unsold 449999, played 0, redeemed 1 unit, {prize} € paid"
        )),
        "{words}"
    );
    let block = &e["block_status"][0];
    assert_eq!(
        (&block["block"], &block["sold"], &block["redeemed_units"]),
        (&Value::from(1), &Value::from(1), &Value::from(1))
    );
    assert_eq!(&block["redeemed_amount"], prize);
    let words = issuer(s, &["status", "--blocks"]).expect_code(0).stdout;
    assert!(
        words.contains(&format!("block 1: 450000 units at 1 €; sold 1, unsold 449999, played 0, redeemed 1, {prize} € paid")),
        "{words}"
    );

    issuer(s, &["close", "--emission", "1"]).expect_code(0);
    let (e, words) = status_of(s);
    assert_eq!(e["state"], "closed");
    assert!(words.contains("emission 1: closed"), "{words}");
    assert_eq!(e["claims_ended_at"], Value::Null);
    reveal(s);
    let (e, words) = status_of(s);
    assert_eq!(e["state"], "revealed");
    let ended = e["claims_ended_at"].as_str().expect("claims ended");
    assert!(
        words.contains(&format!("emission 1: revealed; claims ended {ended}")),
        "{words}"
    );

    // A mistyped store is an error, not an empty store.
    let typo = s.join("no-such-store");
    let run = issuer(&typo, &["status", "--json"]);
    assert_ne!(run.code, 0);
    assert_eq!(run.json()["error"], "no_store");

    // A store without keys: no secrets, the signature not checked.
    let bare = auditor(false);
    let status = issuer(bare.path(), &["status", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(status["has_secrets"], false);
    assert_eq!(status["emissions"][0]["manifest_signature"], "unchecked");
}

#[test]
fn completions_and_man_page_name_the_subcommands() {
    let dir = TempDir::new().unwrap();
    let store = dir.path().join("store");
    let bash = issuer(&store, &["completions", "bash"])
        .expect_code(0)
        .stdout;
    let man = issuer(&store, &["man"]).expect_code(0).stdout;
    assert!(man.contains(".TH issuer"), "{man}");
    for sub in [
        "keygen",
        "generate",
        "verify",
        "export",
        "show",
        "redeem",
        "ledger",
        "status",
        "close",
        "reveal",
        "keys",
        "demo",
        "completions",
        "man",
    ] {
        assert!(bash.contains(sub), "bash completion lacks {sub}");
        assert!(man.contains(sub), "man page lacks {sub}");
    }
    assert!(bash.contains("--scope") && bash.contains("--json"));
    assert!(!store.exists(), "neither writes to the store");
    issuer(&store, &["completions", "tcsh"]).expect_code(2);
}

#[test]
fn zero_blocks_is_a_usage_error_and_writes_nothing() {
    let dir = TempDir::new().unwrap();
    let store = dir.path().join("store");
    for flag in ["--blocks", "--block"] {
        // GENERATE_ONE_BLOCK with `FLAG 0` for `--block 1`.
        let mut args = GENERATE_ONE_BLOCK;
        (args[5], args[6]) = (flag, "0");
        let run = issuer(&store, &args).expect_code(2);
        assert!(run.stderr.contains(flag), "{flag}: {}", run.stderr);
        assert!(!store.exists(), "{flag} wrote to the store");
    }
}

#[test]
fn a_store_without_keys_is_told_to_pass_the_public_key_not_to_make_one() {
    let f = fixture();
    let bare = auditor(false);
    let b = bare.path();
    let block = block_path();
    let id = &f.winner.0;
    for args in [
        vec!["verify", "--emission", "1", "-q"],
        vec!["verify", &block],
        vec!["redeem", id],
        vec!["redeem", id, "--check"],
        vec!["show", id],
    ] {
        let run = issuer(b, &args).expect_code(2);
        assert!(
            run.stderr.contains("--public-key FILE"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("keygen"), "{args:?}: {}", run.stderr);
        let json = issuer(b, &[&args[..], &["--json"]].concat());
        error_object(&json, 2, "no_public_key", "invalid_input");
    }
    // The issuer's own commands say the store is not the issuer's.
    for args in [
        vec!["close", "--emission", "1"],
        vec!["reveal", "--emission", "1"],
        vec!["keys", "export-records-key", "--emission", "1"],
    ] {
        let run = issuer(b, &args).expect_code(2);
        assert!(
            run.stderr.contains("no issuer secrets"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("--store DIR"),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert!(!b.join("keys").exists(), "no key was made");
}

#[test]
fn messages_never_echo_unbounded_input() {
    let f = fixture();
    let s = &f.store;
    let long = |n: usize, c: char| c.to_string().repeat(n);
    let ids = [
        long(10_000, 'X'),
        format!("IAT-1-1-1-{}", long(10_000, 'Z')),
        format!("{}-1-1-1-00000000", long(10_000, 'Q')),
        format!("IAT-{}-1-1-00000000", long(10_000, '9')),
        format!("IAT-1-{}-1-00000000", long(10_000, 'b')),
        format!("IAT-1-1-1-0000000{}", long(10_000, '!')),
        format!("IAT-1-1-{}", long(10_000, '-')),
    ];
    for id in &ids {
        assert!(id.len() >= 10_000);
        for command in ["redeem", "show"] {
            let words = issuer(s, &[command, id]).expect_code(2);
            assert!(
                words.stderr.len() < 300,
                "{command} {}…: {} bytes: {}",
                &id[..16],
                words.stderr.len(),
                words.stderr
            );
            let json = issuer(s, &[command, id, "--json"]);
            let e = error_object(&json, 2, "invalid_id", "invalid_input");
            assert!(json.stdout.len() < 400, "{}", json.stdout);
            assert!(e.get("id").is_none(), "the malformed ID is not echoed: {e}");
        }
    }
    let game = long(10_000, 'g');
    let price = long(10_000, '7');
    // GENERATE_ONE_BLOCK's game (at 2) or price (at 8), 10,000 bytes long.
    for (at, value, says) in [(2, &game, "unknown game"), (8, &price, "not sold at")] {
        let mut args = GENERATE_ONE_BLOCK;
        args[at] = value;
        let run = issuer(s, &args).expect_code(2);
        assert!(run.stderr.contains(says), "{}", run.stderr);
        assert!(run.stderr.len() < 300, "{}", run.stderr);
    }
}

/// A file name the OS refuses as too long is the input's fault (exit 2),
/// not an unavailable system to retry (exit 3).
#[test]
fn a_file_name_too_long_is_invalid_input() {
    let f = fixture();
    let name = "a".repeat(10_000);
    let run = issuer(&f.store, &["verify", &name, "--json"]);
    let e = error_object(&run, 2, "io", "invalid_input");
    assert!(e["message"].as_str().unwrap().contains("too long"), "{e}");
}

/// A key or reveal file given by the user is named, its contents echoed
/// only in part: a 10,000-character `kind` gives a short message.
#[test]
fn files_given_by_the_user_are_not_echoed_in_full() {
    let f = fixture();
    let dir = TempDir::new().unwrap();
    let kind = "k".repeat(10_000);
    let key = dir.path().join("key.json");
    let text = format!(
        r#"{{"kind":"{kind}","game":"ile-au-tresor","emission":1,"block":null,"key":"{}"}}"#,
        "0".repeat(64)
    );
    std::fs::write(&key, text).unwrap();
    let reveal = dir.path().join("reveal.json");
    let text = format!(
        r#"{{"kind":"{kind}","game":"ile-au-tresor","emission":1,"records_key":"{}","blocks":[]}}"#,
        "0".repeat(64)
    );
    std::fs::write(&reveal, text).unwrap();
    let block = block_path();
    for (args, code) in [
        (
            vec!["verify", &block, "--records-key", key.to_str().unwrap()],
            "bad_key",
        ),
        (
            vec![
                "verify",
                "--emission",
                "1",
                "-q",
                "--seeds",
                reveal.to_str().unwrap(),
            ],
            "bad_file",
        ),
    ] {
        let run = issuer(&f.store, &[&args[..], &["--json"]].concat());
        let e = error_object(&run, 2, code, "invalid_input");
        let message = e["message"].as_str().unwrap();
        assert!(message.contains("kind is \"kkk"), "{message}");
        assert!(
            message.len() < 300 + dir.path().as_os_str().len(),
            "{message}"
        );
    }
}

/// Issue 22: every command that reports takes `--json`: one JSON line of
/// its kind (a command whose output is the JSON itself, written to stdout,
/// prints nothing more), and its refusals as the error object.
#[test]
fn every_reporting_command_takes_json() {
    let copy = fresh();
    let s = copy.path();
    let out = |name: &str| s.join(name).display().to_string();

    let bare = TempDir::new().unwrap();
    let made = issuer(bare.path(), &["keygen", "--json"]).expect_code(0);
    let made = envelope(&made, "keygen", &["keys", "public_key"]);
    assert!(made["public_key"]
        .as_str()
        .unwrap()
        .ends_with("issuer.pub.pem"));
    let again = issuer(bare.path(), &["keygen", "--json"]);
    assert_ne!(again.code, 0);
    assert_eq!(again.json()["kind"], "error", "{}", again.stdout);

    let closed = issuer(s, &["close", "--emission", "1", "--json"]).expect_code(0);
    let closed = envelope(&closed, "close", &["game", "emission", "blocks", "already"]);
    assert_eq!(
        (closed["emission"].as_u64(), closed["blocks"].as_u64()),
        (Some(1), Some(1))
    );

    let key = out("key.json");
    let args = [
        "keys",
        "export-records-key",
        "--emission",
        "1",
        "-o",
        &key,
        "--json",
    ];
    let exported = issuer(s, &args).expect_code(0);
    let exported = envelope(
        &exported,
        "records_key_export",
        &["game", "emission", "out"],
    );
    assert_eq!(exported["out"], key.as_str());

    let units = out("units.jsonl");
    let args = ["export", &block_path(), "-o", &units, "--json", "-q"];
    let dumped = envelope(
        &issuer(s, &args).expect_code(0),
        "export",
        &["block", "units", "out"],
    );
    assert_eq!(dumped["units"], 450_000);

    let seeds = out("reveal.json");
    issuer(
        s,
        &[
            "end-claims",
            "--emission",
            "1",
            "--force",
            "--reason",
            "no claim deadline set",
            "--json",
        ],
    )
    .expect_code(0);
    let args = ["reveal", "--emission", "1", "-o", &seeds, "--json"];
    let revealed = issuer(s, &args).expect_code(0);
    envelope(&revealed, "reveal", &["game", "emission", "blocks", "out"]);
    // A refusal: the file exists.
    let refused = issuer(s, &args);
    assert_ne!(refused.code, 0);
    assert_eq!(refused.json()["kind"], "error", "{}", refused.stdout);

    // serve: `listening` as JSON; a token file it refuses as the error object.
    let tokens = s.join("tokens.txt");
    std::fs::write(&tokens, "x\n").unwrap();
    let t = tokens.display().to_string();
    let run = issuer(
        s,
        &[
            "serve",
            "--token-file",
            &t,
            "--listen",
            "127.0.0.1:0",
            "--json",
        ],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.json()["kind"], "error", "{}", run.stdout);
    std::fs::write(&tokens, "a-token-long-enough-to-resist\n").unwrap();
    std::fs::set_permissions(&tokens, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let mut child = std::process::Command::new(common::ISSUER)
        .args(["--store", s.to_str().unwrap(), "serve", "--token-file", &t])
        .args(["--listen", "127.0.0.1:0", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let listening: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(listening["kind"], "listening", "{line}");
    assert!(
        listening["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:"),
        "{line}"
    );
}
