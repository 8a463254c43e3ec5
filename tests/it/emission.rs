//! Emissions through the real `issuer` binary (issue 5, docs/EMISSIONS.md):
//! the signed manifest and what `verify --emission` calls each kind of
//! tampering; a generation killed mid-way and finished by rerunning it;
//! close, reveal and regeneration from the revealed seeds; the separation
//! of two emissions' seeds.
//!
//! Each block is 450,000 units (about a second to make), so every test
//! makes few blocks and shares them between its assertions by copying the
//! store.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{issuer, names, Run, ISSUER};
use serde_json::{json, Value};
use tempfile::TempDir;
use ticket_issuer::derive;
use ticket_issuer::game::Game;
use ticket_issuer::seal;
use ticket_issuer::unit_id::UnitId;

/// `generate --game ile-au-tresor --emission E --price P --blocks N --jobs 1 --quiet`.
fn generate_args(emission: u32, price: &str, blocks: u32) -> Vec<String> {
    generate_args_of("ile-au-tresor", emission, price, blocks)
}

/// `generate_args` for `game`.
fn generate_args_of(game: &str, emission: u32, price: &str, blocks: u32) -> Vec<String> {
    [
        "generate",
        "--game",
        game,
        "--emission",
        &emission.to_string(),
        "--price",
        price,
        "--blocks",
        &blocks.to_string(),
        "--jobs",
        "1",
        "--quiet",
    ]
    .map(String::from)
    .to_vec()
}

/// Generates and returns the JSON list of the blocks made.
fn generate(store: &Path, emission: u32, price: &str, blocks: u32) -> Vec<Value> {
    let mut args = generate_args(emission, price, blocks);
    args.push("--json".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let report = issuer(store, &args).expect_code(0).json();
    report["blocks"]
        .as_array()
        .expect("a list of blocks")
        .clone()
}

fn emission_dir(store: &Path, emission: u32) -> PathBuf {
    emission_dir_of("ile-au-tresor", store, emission)
}

fn emission_dir_of(game: &str, store: &Path, emission: u32) -> PathBuf {
    store
        .join("emissions")
        .join(game)
        .join(format!("e{emission:06}"))
}

fn manifest(store: &Path, emission: u32) -> Value {
    manifest_in(&emission_dir(store, emission))
}

fn manifest_in(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

/// `verify --emission N --json [more…]`.
fn verify_emission(store: &Path, emission: u32, more: &[&str]) -> Run {
    let number = emission.to_string();
    let mut args = vec!["verify", "--emission", &number, "--json"];
    args.extend_from_slice(more);
    issuer(store, &args)
}

/// The (kind, block) of every problem in a `verify --emission` report.
fn problems(report: &Value) -> Vec<(String, Option<u64>)> {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["kind"].as_str().unwrap().to_string(), p["block"].as_u64()))
        .collect()
}

fn problem(kind: &str, block: Option<u64>) -> (String, Option<u64>) {
    (kind.to_string(), block)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn block_file_names(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.starts_with('b') && n.ends_with(".tkb"))
        .collect()
}

fn hex_field(value: &Value) -> [u8; 32] {
    hex::decode(value.as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap()
}

/// The IDs of the first `count` units of a block, read from `export`.
fn first_unit_ids(store: &Path, block_file: &Path, count: usize) -> Vec<String> {
    let mut child = Command::new(ISSUER)
        .arg("--store")
        .arg(store)
        .arg("export")
        .arg(block_file)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ids = (0..count)
        .map(|_| {
            let line = lines.next().expect("export printed a unit").unwrap();
            let unit: Value = serde_json::from_str(&line).unwrap();
            unit["id"].as_str().unwrap().to_string()
        })
        .collect();
    // The rest of the block is not needed.
    child.kill().unwrap();
    child.wait().unwrap();
    ids
}

#[test]
fn manifest_lists_blocks_at_two_prices_and_each_tampering_is_named() {
    let tmp = TempDir::new().unwrap();
    let template = tmp.path().join("template");

    let first = generate(&template, 1, "1", 2);
    let second = generate(&template, 1, "2", 1);
    let made: Vec<&Value> = first.iter().chain(&second).collect();
    let numbers: Vec<u64> = made.iter().map(|b| b["block"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [1, 2, 3], "blocks are numbered on from the last");

    let m = manifest(&template, 1);
    assert_eq!(m["kind"], "ticket-issuer emission manifest");
    assert_eq!(m["version"], 1);
    assert_eq!(m["game"], "ile-au-tresor");
    assert_eq!(m["emission"], 1);
    assert_eq!(m["closed"], false);
    let listed = m["blocks"].as_array().unwrap();
    assert_eq!(listed.len(), 3);
    for (entry, made) in listed.iter().zip(&made) {
        for field in [
            "block",
            "price",
            "units",
            "merkle_root",
            "file_sha256",
            "seed_commitment",
        ] {
            assert_eq!(entry[field], made[field], "manifest field {field}");
        }
        assert_eq!(entry["units"], 450_000);
        assert_eq!(
            entry["file"],
            format!("b{:06}.tkb", entry["block"].as_u64().unwrap())
        );
    }
    let prices: Vec<&str> = listed
        .iter()
        .map(|b| b["price"].as_str().unwrap())
        .collect();
    assert_eq!(prices, ["1", "1", "2"]);

    // The detached signature: 64 raw bytes, Ed25519 over the file as stored,
    // by the key the manifest names.
    let dir = emission_dir(&template, 1);
    let manifest_bytes = std::fs::read(dir.join("manifest.json")).unwrap();
    let signature: [u8; 64] = std::fs::read(dir.join("manifest.json.sig"))
        .unwrap()
        .try_into()
        .expect("the signature is 64 bytes");
    let public = seal::read_public(&template.join("keys/issuer.pub.pem")).unwrap();
    assert_eq!(m["issuer_public_key"], hex::encode(public.to_bytes()));
    assert!(seal::verify(&public, &manifest_bytes, &signature));

    let report = verify_emission(&template, 1, &[]).expect_code(0).json();
    assert_eq!(report["ok"], true);
    assert_eq!(report["manifest_signature_ok"], true);
    assert_eq!(problems(&report), []);
    let reports = report["blocks"].as_array().unwrap();
    assert_eq!(reports.len(), 3);
    for (r, price) in reports.iter().zip(["1", "1", "2"]) {
        // Each header carries its own price's lot table, and it is the
        // regulation's for that price.
        assert_eq!(r["price"], price);
        let lot_table = r["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == "lot_table")
            .expect("a lot_table check");
        assert_eq!(lot_table["status"], "passed", "block {}", r["block"]);
    }

    // Each tampering on its own copy of the emission.
    let tampered = |case: &str, tamper: &dyn Fn(&Path)| -> Value {
        let store = tmp.path().join(case);
        copy_dir(&template, &store);
        tamper(&emission_dir(&store, 1));
        let run = verify_emission(&store, 1, &[]).expect_code(1);
        let report = run.json();
        assert_eq!(report["ok"], false, "{case}");
        report
    };

    let root = listed[1]["merkle_root"].as_str().unwrap().to_string();
    let report = tampered("manifest", &|dir| {
        let path = dir.join("manifest.json");
        let mut bytes = std::fs::read(&path).unwrap();
        let at = find(&bytes, root.as_bytes()) + 10;
        bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
        std::fs::write(&path, bytes).unwrap();
    });
    assert_eq!(problems(&report), [problem("manifest_signature", None)]);
    assert_eq!(report["manifest_signature_ok"], false);

    let report = tampered("deleted", &|dir| {
        std::fs::remove_file(dir.join("b000002.tkb")).unwrap();
    });
    assert_eq!(problems(&report), [problem("missing_block", Some(2))]);
    assert!(report["problems"][0]["message"]
        .as_str()
        .unwrap()
        .contains("b000002.tkb"));

    let report = tampered("swapped", &|dir| {
        let (a, b, tmp) = (
            dir.join("b000001.tkb"),
            dir.join("b000003.tkb"),
            dir.join("swap"),
        );
        std::fs::rename(&a, &tmp).unwrap();
        std::fs::rename(&b, &a).unwrap();
        std::fs::rename(&tmp, &b).unwrap();
    });
    assert_eq!(
        problems(&report),
        [
            problem("misplaced_block", Some(1)),
            problem("misplaced_block", Some(3))
        ]
    );

    let report = tampered("altered", &|dir| {
        let path = dir.join("b000002.tkb");
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x01;
        std::fs::write(&path, bytes).unwrap();
    });
    assert_eq!(
        problems(&report),
        [
            problem("altered_block", Some(2)),
            problem("block_fails", Some(2))
        ]
    );

    let report = tampered("unreadable", &|dir| {
        std::fs::write(dir.join("b000002.tkb"), b"not a block at all").unwrap();
    });
    assert_eq!(problems(&report), [problem("unreadable_block", Some(2))]);
    assert!(report["problems"][0]["message"]
        .as_str()
        .unwrap()
        .contains("not a ticket-issuer block file"));
    assert_eq!(report["blocks"].as_array().unwrap().len(), 2);

    let report = tampered("extra", &|dir| {
        std::fs::copy(dir.join("b000001.tkb"), dir.join("b000099.tkb")).unwrap();
    });
    assert_eq!(problems(&report), [problem("extra_block", None)]);
    assert!(report["problems"][0]["message"]
        .as_str()
        .unwrap()
        .contains("b000099.tkb"));
}

fn find(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the bytes are there")
}

#[test]
fn killed_generation_is_finished_by_the_same_command_identically() {
    killed_generation_is_finished_identically("ile-au-tresor");
}

/// Issue 9: the same resume, for Trésors Ensablés (450,000-unit blocks).
#[test]
fn killed_te_generation_is_finished_by_the_same_command_identically() {
    killed_generation_is_finished_identically("tresors-ensables");
}

/// A generation of 4 blocks of `game` killed after its first block is
/// finished by rerunning the same command, identical to an uninterrupted run.
fn killed_generation_is_finished_identically(game: &str) {
    let tmp = TempDir::new().unwrap();
    let killed = tmp.path().join("killed");
    let reference = tmp.path().join("reference");
    issuer(&killed, &["keygen"]).expect_code(0);
    // Same keys, so the same blocks: they derive from the master secret.
    copy_dir(&killed.join("keys"), &reference.join("keys"));
    let args = generate_args_of(game, 7, "1", 4);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    issuer(&reference, &args).expect_code(0);

    let dir = emission_dir_of(game, &killed, 7);
    let mut child = Command::new(ISSUER)
        .arg("--store")
        .arg(&killed)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !dir.join("b000001.tkb").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the generation ended before it could be killed"
        );
        assert!(start.elapsed() < Duration::from_secs(120), "no block made");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    // Interrupted mid-way: an unfinished plan, some blocks, and only whole
    // blocks under final names (a `.partial` file may be left).
    let files = names(&dir);
    assert!(files.contains(&"pending.json".to_string()), "{files:?}");
    let sealed = block_file_names(&dir);
    assert!(
        !sealed.is_empty() && sealed.len() < 4,
        "killed mid-way: {files:?}"
    );
    for name in &files {
        assert!(
            name.ends_with(".partial")
                || name.starts_with("manifest.json")
                || name == "pending.json"
                || sealed.contains(name),
            "unexpected file {name}"
        );
    }
    let paths: Vec<String> = sealed
        .iter()
        .map(|n| dir.join(n).display().to_string())
        .collect();
    let mut verify_args = vec!["verify", "--json"];
    verify_args.extend(paths.iter().map(String::as_str));
    let report = issuer(&killed, &verify_args).expect_code(0).json();
    assert_eq!(report["ok"], true);

    // Another command is refused while the plan is unfinished.
    let other = generate_args_of(game, 7, "1", 1);
    let other: Vec<&str> = other.iter().map(String::as_str).collect();
    let other = issuer(&killed, &other).expect_code(1);
    assert!(
        other.stderr.contains("interrupted") && other.stderr.contains("blocks 1 to 4"),
        "{}",
        other.stderr
    );
    assert_eq!(block_file_names(&dir), sealed, "nothing was generated");

    // The same command finishes the job, keeping the sealed blocks.
    let rerun = issuer(&killed, &args).expect_code(0);
    for name in &sealed {
        let block: u32 = name[1..7].parse().unwrap();
        assert!(
            rerun
                .stdout
                .contains(&format!("kept already sealed block {block} of emission 7")),
            "{}",
            rerun.stdout
        );
    }
    assert_eq!(
        names(&dir),
        [
            "b000001.tkb",
            "b000002.tkb",
            "b000003.tkb",
            "b000004.tkb",
            "manifest.json",
            "manifest.json.sig"
        ],
        "no plan, partial file or manifest draft left"
    );

    // Identical to the uninterrupted run: every block's root and file
    // digest, the manifest and its signature, and every file's bytes.
    let reference_dir = emission_dir_of(game, &reference, 7);
    let (resumed, uninterrupted) = (manifest_in(&dir), manifest_in(&reference_dir));
    let (a, b) = (
        resumed["blocks"].as_array().unwrap(),
        uninterrupted["blocks"].as_array().unwrap(),
    );
    assert_eq!(a.len(), 4);
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x["block"], y["block"]);
        assert_eq!(x["merkle_root"], y["merkle_root"], "block {}", x["block"]);
        assert_eq!(x["file_sha256"], y["file_sha256"], "block {}", x["block"]);
    }
    for name in names(&dir) {
        assert!(
            std::fs::read(dir.join(&name)).unwrap()
                == std::fs::read(reference_dir.join(&name)).unwrap(),
            "{name} differs from the uninterrupted run's"
        );
    }
    for entry in a {
        let bytes = std::fs::read(dir.join(entry["file"].as_str().unwrap())).unwrap();
        assert_eq!(
            hex::encode(derive::sha256(&bytes)),
            entry["file_sha256"].as_str().unwrap()
        );
    }
}

#[test]
fn closed_emission_reveals_seeds_that_regenerate_every_block() {
    let tmp = TempDir::new().unwrap();
    let store = tmp.path().join("store");
    generate(&store, 1, "1", 2);
    let dir = emission_dir(&store, 1);
    let seeds = tmp.path().join("seeds.json");
    let seeds_arg = seeds.display().to_string();

    let early = issuer(&store, &["reveal", "--emission", "1", "--out", &seeds_arg]).expect_code(1);
    assert!(early.stderr.contains("not closed"), "{}", early.stderr);
    assert!(!seeds.exists());

    // A unit that is redeemable while the seeds are secret.
    let id = first_unit_ids(&store, &dir.join("b000001.tkb"), 1).remove(0);
    issuer(&store, &["show", &id]).expect_code(0);

    let open_manifest = std::fs::read(dir.join("manifest.json")).unwrap();
    issuer(&store, &["close", "--emission", "1"]).expect_code(0);
    let end_claims = [
        "end-claims",
        "--emission",
        "1",
        "--force",
        "--reason",
        "no claim deadline set",
    ];
    // In words: when, and the closing totals; the signed statements only
    // as JSON, the first ones again on a rerun.
    let said = issuer(&store, &end_claims).expect_code(0).stdout;
    assert!(said.contains("emission 1: claims ended at"), "{said}");
    assert!(said.contains("closing statement (signed"), "{said}");
    assert!(
        !said.contains("ticket-issuer"),
        "no raw signed note: {said}"
    );
    let mut json_args = end_claims.to_vec();
    json_args.push("--json");
    let again = issuer(&store, &json_args).expect_code(0).json();
    assert!(
        again["statement"]
            .as_str()
            .unwrap()
            .contains("\nsignature "),
        "{again}"
    );
    assert!(again["closing"]["statement"].is_string(), "{again}");
    assert_eq!(manifest(&store, 1)["closed"], true);
    let refused = issuer(
        &store,
        &generate_args(1, "1", 1)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    )
    .expect_code(1);
    assert!(refused.stderr.contains("closed"), "{}", refused.stderr);
    assert_eq!(block_file_names(&dir).len(), 2);

    // As if `close` were killed after writing the new signature and before
    // the manifest: the next command completes the save from its draft.
    std::fs::rename(dir.join("manifest.json"), dir.join("manifest.json.next")).unwrap();
    std::fs::write(dir.join("manifest.json"), &open_manifest).unwrap();

    issuer(&store, &["reveal", "--emission", "1", "--out", &seeds_arg]).expect_code(0);
    assert_eq!(manifest(&store, 1)["closed"], true);
    assert!(!dir.join("manifest.json.next").exists());

    let reveal: Value = serde_json::from_slice(&std::fs::read(&seeds).unwrap()).unwrap();
    assert_eq!(reveal["kind"], "ticket-issuer emission reveal");
    assert_eq!(reveal["game"], "ile-au-tresor");
    assert_eq!(reveal["emission"], 1);
    hex_field(&reveal["records_key"]);
    let revealed = reveal["blocks"].as_array().unwrap();
    let listed = manifest(&store, 1)["blocks"].as_array().unwrap().clone();
    assert_eq!(revealed.len(), 2);
    for (r, m) in revealed.iter().zip(&listed) {
        assert_eq!(r["block"], m["block"]);
        let seed = hex_field(&r["seed"]);
        assert_eq!(
            hex::encode(derive::seed_commitment(&seed)),
            m["seed_commitment"].as_str().unwrap(),
            "block {}'s seed matches its commitment",
            r["block"]
        );
    }

    let report = verify_emission(&store, 1, &["--seeds", &seeds_arg])
        .expect_code(0)
        .json();
    assert_eq!(report["ok"], true);
    assert_eq!(report["seeds_checked"], true);
    let blocks = report["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    for b in blocks {
        let regeneration = b["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == "regeneration")
            .unwrap_or_else(|| panic!("block {} was regenerated", b["block"]));
        assert_eq!(regeneration["status"], "passed");
    }

    // An auditor with only the public key, the emission folder and the
    // reveal file: the reveal's records key opens the blocks, so every
    // check is made, none left "not done".
    let auditor = tmp.path().join("auditor");
    std::fs::create_dir_all(auditor.join("keys")).unwrap();
    std::fs::copy(
        store.join("keys/issuer.pub.pem"),
        auditor.join("keys/issuer.pub.pem"),
    )
    .unwrap();
    copy_dir(&dir, &emission_dir(&auditor, 1));
    let report = verify_emission(&auditor, 1, &["--seeds", &seeds_arg])
        .expect_code(0)
        .json();
    for b in report["blocks"].as_array().unwrap() {
        assert_eq!(b["complete"], true, "{b}");
        assert_eq!(b["ok"], true, "{b}");
    }

    // One block's seed changed: rejected, naming that block.
    let mut wrong = reveal.clone();
    let seed = wrong["blocks"][1]["seed"].as_str().unwrap().to_string();
    let flipped = if seed.starts_with('0') { "1" } else { "0" };
    wrong["blocks"][1]["seed"] = Value::from(format!("{flipped}{}", &seed[1..]));
    let wrong_path = tmp.path().join("wrong-seeds.json");
    std::fs::write(&wrong_path, serde_json::to_vec(&wrong).unwrap()).unwrap();
    let report = verify_emission(&store, 1, &["--seeds", &wrong_path.display().to_string()])
        .expect_code(1)
        .json();
    assert_eq!(problems(&report), [problem("seed_mismatch", Some(2))]);
    assert!(report["problems"][0]["message"]
        .as_str()
        .unwrap()
        .contains("block 2"));

    // Revealed seeds make IDs computable, so redemption is closed.
    let computed = UnitId {
        game: Game::ILE_AU_TRESOR,
        emission: 1,
        block: 1,
        index: 0,
        check_code: derive::check_code(&hex_field(&revealed[0]["seed"]), 0),
    };
    assert_eq!(computed.to_string(), id);
    let redeem = issuer(&store, &["redeem", &id]).expect_code(1);
    assert!(redeem.stderr.contains("revealed"), "{}", redeem.stderr);
    // `show` makes the same checks (docs/REDEMPTION.md), so it refuses too.
    let show = issuer(&store, &["show", &id]).expect_code(1);
    assert!(show.stderr.contains("revealed"), "{}", show.stderr);
}

#[test]
fn two_emissions_reveal_unrelated_seeds() {
    let tmp = TempDir::new().unwrap();
    let store = tmp.path().join("store");
    // Same game, price and block number: only the emission differs.
    generate(&store, 1, "1", 1);
    generate(&store, 2, "1", 1);
    let mut files = Vec::new();
    let mut reveals = Vec::new();
    for emission in ["1", "2"] {
        issuer(&store, &["close", "--emission", emission]).expect_code(0);
        issuer(
            &store,
            &[
                "end-claims",
                "--emission",
                emission,
                "--force",
                "--reason",
                "no claim deadline set",
            ],
        )
        .expect_code(0);
        let path = tmp.path().join(format!("seeds-{emission}.json"));
        let out = path.display().to_string();
        issuer(&store, &["reveal", "--emission", emission, "--out", &out]).expect_code(0);
        let text = std::fs::read_to_string(&path).unwrap();
        reveals.push(serde_json::from_str::<Value>(&text).unwrap());
        files.push((path, text));
    }
    let secrets = |r: &Value| {
        [
            r["blocks"][0]["seed"].as_str().unwrap().to_string(),
            r["records_key"].as_str().unwrap().to_string(),
        ]
    };
    let (one, two) = (secrets(&reveals[0]), secrets(&reveals[1]));
    assert_ne!(one[0], two[0], "block 1 seeds");
    assert_ne!(one[1], two[1], "records keys");
    for secret in &one {
        assert!(!files[1].1.contains(secret.as_str()));
    }
    for secret in &two {
        assert!(!files[0].1.contains(secret.as_str()));
    }

    // Emission 2's seed file opens nothing of emission 1.
    let report = verify_emission(&store, 1, &["--seeds", &files[1].0.display().to_string()])
        .expect_code(1)
        .json();
    assert_eq!(
        problems(&report),
        [
            problem("reveal_mismatch", None),
            problem("seed_mismatch", Some(1))
        ]
    );
}

/// Issue 19: a manifest and its signature are one unit for readers. While
/// another emission of the game is generated block after block (its
/// manifest and signature rewritten after each), sales of a closed
/// emission and reads of the growing manifest never see a torn pair.
#[test]
fn a_manifest_being_rewritten_is_never_read_torn() {
    use ticket_issuer::emission::Emission;
    use ticket_issuer::game::Game;
    let (_dir, store) = crate::common::te_store(5000);
    let generating = std::process::Command::new(crate::common::ISSUER)
        .arg("--store")
        .arg(&store)
        .args([
            "generate",
            "--game",
            "tresors-ensables",
            "--emission",
            "2",
            "--blocks",
            "150",
            "--units",
            "3",
            "--quiet",
        ])
        .stdout(std::process::Stdio::null())
        .spawn();
    let mut generating = generating.unwrap();
    let redeemer = crate::common::store_redeemer(&store, true);
    let s = ticket_issuer::Store::new(&store);
    let trusted = s.public_key().unwrap();
    let second = Emission::new(&s, Game::TRESORS_ENSABLES, 2);
    let (mut sales, mut reads, mut torn) = (0, 0, Vec::new());
    while generating.try_wait().unwrap().is_none() {
        match redeemer.sell(Game::TRESORS_ENSABLES, 100) {
            Ok(_) => sales += 1,
            Err(e) => torn.push(format!("sale: {e}")),
        }
        for _ in 0..20 {
            match second.load_manifest(&trusted) {
                Ok(_) => reads += 1,
                Err(e) => torn.push(format!("read: {e}")),
            }
        }
    }
    assert!(generating.wait().unwrap().success());
    assert!(
        torn.is_empty(),
        "{} of {} reads or sales torn: {:?}",
        torn.len(),
        reads + sales,
        &torn[..torn.len().min(3)]
    );
    assert!(
        sales > 10 && reads > 200,
        "{sales} sales, {reads} reads while generating"
    );
}

/// An emission number names one emission in a store: a new emission of
/// one game whose number another game's has is refused with the next free
/// number, before anything is written; and `--block B` past the
/// emission's next block is refused (`block_gap`, naming what to do)
/// unless `--allow-gap` asks for the gap (issue 39).
#[test]
fn generate_refuses_a_taken_emission_number_and_a_gap_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let te = |args: &[&str], code: i32| {
        let mut all = vec!["generate", "--game", "tresors-ensables", "--units", "1000"];
        all.extend_from_slice(args);
        issuer(&store, &all).expect_code(code)
    };
    te(&["--emission", "1", "--json"], 0);
    // L'île au trésor's emission 1 beside Trésors Ensablés' emission 1.
    let taken = issuer(
        &store,
        &[
            "generate",
            "--game",
            "ile-au-tresor",
            "--emission",
            "1",
            "--price",
            "1",
            "--json",
        ],
    )
    .expect_code(1)
    .json();
    assert_eq!(taken["error"], "emission_number_taken", "{taken}");
    let message = taken["message"].as_str().unwrap();
    assert!(
        message.contains("tresors-ensables") && message.contains("--emission 2"),
        "{message}"
    );
    assert!(
        !emission_dir_of("ile-au-tresor", &store, 1).exists(),
        "nothing written"
    );
    // A gap: refused, naming the next block; asked for, made.
    let gap = te(&["--emission", "1", "--block", "3", "--json"], 2).json();
    assert_eq!(gap["error"], "block_gap", "{gap}");
    let message = gap["message"].as_str().unwrap();
    assert!(
        message.contains("--block 2") && message.contains("--allow-gap"),
        "{message}"
    );
    assert!(!store
        .join("emissions/tresors-ensables/e000001/b000003.tkb")
        .exists());
    te(
        &["--emission", "1", "--block", "3", "--allow-gap", "--json"],
        0,
    );
    te(&["--emission", "1", "--block", "2", "--json"], 0);
    let blocks: Vec<u64> = manifest_in(&emission_dir_of("tresors-ensables", &store, 1))["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["block"].as_u64().unwrap())
        .collect();
    assert_eq!(blocks.len(), 3, "{blocks:?}");
    // The demo takes the next number no game has.
    let demo = issuer(&store, &["demo", "-q"]).expect_code(0);
    assert!(
        emission_dir_of("ile-au-tresor", &store, 2).is_dir(),
        "{}",
        demo.stdout
    );
}

/// `close` names the game, counts in the right number, and a second
/// close says it changed nothing (exit 0 both times; `already` in JSON).
#[test]
fn close_names_the_game_and_a_second_close_says_nothing_changed() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let args = [
        "generate",
        "--game",
        "tresors-ensables",
        "--emission",
        "3",
        "--units",
        "100",
    ];
    issuer(&store, &args).expect_code(0);
    let first = issuer(&store, &["close", "--emission", "3"])
        .expect_code(0)
        .stdout;
    assert_eq!(
        first.trim(),
        "tresors-ensables emission 3 is closed: 1 block; no more may be added"
    );
    let again = issuer(&store, &["close", "--emission", "3"])
        .expect_code(0)
        .stdout;
    assert_eq!(
        again.trim(),
        "tresors-ensables emission 3 was closed already (1 block): nothing changed"
    );
    let json = issuer(&store, &["close", "--emission", "3", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(
        (&json["already"], &json["blocks"]),
        (&json!(true), &json!(1)),
        "{json}"
    );
}
