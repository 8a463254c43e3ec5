//! Seeds no one party controls (issue 25, docs/EMISSIONS.md §A seed no one
//! party controls), through the real `issuer` binary: an emission's seed
//! key made from three parties' shares and a beacon round's value,
//! generated, closed, its claims ended and revealed; an independent script
//! (tests/independent/check_shares.py, written from the documents alone)
//! derives every seed again from the reveal and the manifest; shares other
//! than the committed ones are refused, naming the party, with nothing
//! written; the same contributions give the same blocks byte for byte;
//! the derivation's vectors (fixtures/derive/seed-shares.txt).
//!
//! Blocks are Trésors Ensablés blocks of 2,000 units (`--units`): a few
//! milliseconds each.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;
use ticket_issuer::derive::{self, BeaconRound};
use ticket_issuer::game::Game;
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

use crate::common::{copy_tree, issuer, names, Run};

const GAME: &str = "tresors-ensables";
const PARTIES: [&str; 3] = ["operator", "regulator", "test-lab"];
const BEACON: &str = "drand-quicknet:12345678";
/// The beacon round's value, as drand publishes its `randomness`.
const BEACON_VALUE: &str = "9b16d3f1e4a0c2b5d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e";

/// A store whose emission 1 is committed to the shares of `PARTIES` and to
/// `BEACON`, with the parties' share files and the beacon's value beside it.
struct Ceremony {
    dir: TempDir,
    store: PathBuf,
    /// One per party, in `PARTIES` order.
    shares: Vec<PathBuf>,
    /// What each party handed over: `PARTY COMMITMENT`.
    lines: Vec<String>,
    beacon_value: PathBuf,
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

impl Ceremony {
    fn new() -> Ceremony {
        let dir = TempDir::new().unwrap();
        let store = dir.path().join("store");
        let mut shares = Vec::new();
        let mut lines = Vec::new();
        for party in PARTIES {
            let file = dir.path().join(format!("{party}.share.json"));
            let made = share_new(&store, party, 1, &file).expect_code(0);
            let line = made.stdout.trim().to_string();
            // What the party hands over is what `share commit` prints.
            let again = issuer(&store, &["share", "commit", &text(&file)]).expect_code(0);
            assert_eq!(again.stdout.trim(), line);
            assert!(line.starts_with(&format!("{party} ")), "{line}");
            shares.push(file);
            lines.push(line);
        }
        let commitments = dir.path().join("commitments.txt");
        let listed = format!("# emission 1's parties\n{}\n", lines.join("\n"));
        std::fs::write(&commitments, listed).unwrap();
        issuer(
            &store,
            &[
                "emission",
                "commit",
                "--game",
                GAME,
                "--emission",
                "1",
                "--share-commitments",
                &text(&commitments),
                "--beacon",
                BEACON,
            ],
        )
        .expect_code(0);
        let beacon_value = dir.path().join("beacon-value.txt");
        std::fs::write(&beacon_value, format!("{BEACON_VALUE}\n")).unwrap();
        Ceremony {
            dir,
            store,
            shares,
            lines,
            beacon_value,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn emission_dir(&self) -> PathBuf {
        emission_dir(&self.store, 1)
    }

    fn manifest(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.emission_dir().join("manifest.json")).unwrap())
            .unwrap()
    }

    /// Every party's share, in `PARTIES` order.
    fn all_shares(&self) -> Vec<&PathBuf> {
        self.shares.iter().collect()
    }

    /// Closes emission 1, ends its claims and reveals it to `reveal.json`.
    fn reveal(&self, store: &Path) -> (PathBuf, Value) {
        issuer(store, &["close", "--emission", "1"]).expect_code(0);
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
        let path = self.path("reveal.json");
        issuer(store, &["reveal", "--emission", "1", "--out", &text(&path)]).expect_code(0);
        let reveal = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        (path, reveal)
    }
}

/// `share new` of `party` for emission `emission` of `GAME`, to `out`.
fn share_new(store: &Path, party: &str, emission: u32, out: &Path) -> Run {
    let emission = emission.to_string();
    let args = [
        "share",
        "new",
        "--party",
        party,
        "--game",
        GAME,
        "--emission",
        &emission,
        "--out",
    ];
    issuer(store, &[&args[..], &[&text(out)]].concat())
}

/// `generate` of emission `emission` of `GAME` in `store`, 2,000-unit
/// blocks, with `more` and these share files (and beacon value, if given).
fn generate(
    store: &Path,
    emission: u32,
    more: &[&str],
    shares: &[&PathBuf],
    beacon_value: Option<&Path>,
) -> Run {
    let mut args: Vec<String> = [
        "generate", "--game", GAME, "--units", "2000", "--quiet", "--json",
    ]
    .map(String::from)
    .to_vec();
    args.extend(["--emission".into(), emission.to_string()]);
    args.extend(more.iter().map(|a| a.to_string()));
    if !shares.is_empty() {
        args.push("--shares".into());
        args.extend(shares.iter().map(|p| text(p)));
    }
    if let Some(value) = beacon_value {
        args.extend(["--beacon-value".into(), text(value)]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    issuer(store, &args)
}

fn emission_dir(store: &Path, emission: u32) -> PathBuf {
    store
        .join("emissions")
        .join(GAME)
        .join(format!("e{emission:06}"))
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// `verify --emission 1 --json [more…]`.
fn verify(store: &Path, more: &[&str]) -> Run {
    let mut args = vec!["verify", "--emission", "1", "--json"];
    args.extend_from_slice(more);
    issuer(store, &args)
}

/// The (kind, message) of every problem of a `verify --emission` report.
fn problems(report: &Value) -> Vec<(String, String)> {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["kind"].as_str().unwrap().to_string(),
                p["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Runs tests/independent/check_shares.py: its exit code, JSON summary and
/// stderr.
fn independent_check(manifest: &Path, reveal: &Path) -> (i32, Value, String) {
    let out = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/independent/check_shares.py"))
        .arg(manifest)
        .arg(reveal)
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let summary = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {stderr}"));
    (out.status.code().unwrap_or(-1), summary, stderr)
}

/// `reveal` with `change` made, written to `path`.
fn changed_reveal(reveal: &Value, path: &Path, change: impl FnOnce(&mut Value)) -> PathBuf {
    let mut changed = reveal.clone();
    change(&mut changed);
    std::fs::write(path, serde_json::to_vec(&changed).unwrap()).unwrap();
    path.to_path_buf()
}

/// A hex string with its first digit changed.
fn flip(value: &mut Value) {
    let hex = value.as_str().unwrap();
    let first = if hex.starts_with('0') { "1" } else { "0" };
    *value = Value::from(format!("{first}{}", &hex[1..]));
}

fn hex32(value: &Value) -> [u8; 32] {
    hex::decode(value.as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap()
}

#[test]
fn three_parties_and_a_beacon_seed_an_emission_that_an_independent_script_derives_again() {
    let c = Ceremony::new();
    // Each share is the party's secret: 0600, never overwritten.
    let first = std::fs::read(&c.shares[0]).unwrap();
    assert_eq!(mode(&c.shares[0]), 0o600);
    let again = share_new(&c.store, PARTIES[0], 1, &c.shares[0]).expect_code(1);
    assert!(again.stderr.contains("exists"), "{}", again.stderr);
    assert_eq!(std::fs::read(&c.shares[0]).unwrap(), first);

    // The commitments and the beacon round are in the signed manifest
    // before any block.
    let m = c.manifest();
    assert_eq!(m["version"], 2);
    assert_eq!(m["blocks"], Value::Array(Vec::new()));
    let recorded: Vec<String> = m["seed_shares"]["commitments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["party"].as_str().unwrap(),
                c["commitment"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(recorded, c.lines);
    assert_eq!(m["seed_shares"]["beacon"]["name"], "drand-quicknet");
    assert_eq!(m["seed_shares"]["beacon"]["round"], 12345678);
    assert!(m["seed_shares"]["beacon"].get("value").is_none(), "{m}");
    let report = verify(&c.store, &[]).expect_code(0).json();
    assert_eq!(report["manifest_signature_ok"], true);

    // Generation: the shares in any order, and the beacon value.
    let shares = [&c.shares[2], &c.shares[0], &c.shares[1]];
    let made = generate(
        &c.store,
        1,
        &["--blocks", "2"],
        &shares,
        Some(&c.beacon_value),
    )
    .expect_code(0)
    .json();
    assert_eq!(made["blocks"].as_array().unwrap().len(), 2);
    let kept = c.store.join("keys/shares/tresors-ensables/e000001.json");
    assert_eq!(mode(&kept), 0o600);
    let m = c.manifest();
    assert_eq!(m["seed_shares"]["beacon"]["value"], BEACON_VALUE);
    // The store's own checks take the seeds from the shares it keeps:
    // every check code and seed commitment holds.
    let report = verify(&c.store, &[]).expect_code(0).json();
    assert_eq!(
        (report["ok"].as_bool(), report["complete"].as_bool()),
        (Some(true), Some(true))
    );

    let (reveal_path, reveal) = c.reveal(&c.store);
    let revealed = &reveal["seed_shares"];
    let parties: Vec<&str> = revealed["shares"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["party"].as_str().unwrap())
        .collect();
    assert_eq!(parties, PARTIES);
    for (party, file) in PARTIES.iter().zip(&c.shares) {
        let share: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        let published = revealed["shares"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["party"] == *party)
            .unwrap();
        assert_eq!(published["share"], share["share"], "{party}");
    }
    assert_eq!(revealed["beacon"]["value"], BEACON_VALUE);
    assert_eq!(reveal["blocks"].as_array().unwrap().len(), 2);

    // The binary derives every seed again from the revealed shares.
    let seeds = text(&reveal_path);
    let report = verify(&c.store, &["--seeds", &seeds]).expect_code(0).json();
    assert_eq!(report["seeds_checked"], true);
    assert!(problems(&report).is_empty());

    // So does a script that knows only the documents, from the manifest
    // and the reveal.
    let manifest_path = c.emission_dir().join("manifest.json");
    let (code, summary, stderr) = independent_check(&manifest_path, &reveal_path);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(summary["ok"], true);
    assert_eq!(summary["parties"], serde_json::json!(PARTIES));
    let derived = summary["blocks"].as_array().unwrap();
    assert_eq!(derived.len(), 2);
    let seed_key = hex32(&summary["seed_key"]);
    for ((d, r), listed) in derived
        .iter()
        .zip(reveal["blocks"].as_array().unwrap())
        .zip(m["blocks"].as_array().unwrap())
    {
        assert_eq!(d["block"], r["block"]);
        assert_eq!(d["seed"], r["seed"], "block {}", d["block"]);
        let seed = hex32(&d["seed"]);
        let block = d["block"].as_u64().unwrap() as u32;
        assert_eq!(
            derive::block_seed(&seed_key, Game::TRESORS_ENSABLES, 1, block),
            seed
        );
        assert_eq!(
            d["header_seed_commitment"].as_str().unwrap(),
            hex::encode(derive::seed_commitment(&seed))
        );
        assert_eq!(d["header_seed_commitment"], listed["seed_commitment"]);
    }

    // The script is no rubber stamp: a share changed in the reveal, and it
    // names the party.
    let changed = changed_reveal(&reveal, &c.path("changed.json"), |r| {
        flip(&mut r["seed_shares"]["shares"][1]["share"])
    });
    let (code, summary, stderr) = independent_check(&manifest_path, &changed);
    assert_eq!(code, 1);
    assert_eq!(summary["ok"], false);
    assert!(
        stderr.contains("party regulator: the share does not match its commitment"),
        "{stderr}"
    );
}

/// Asserts that a `--json` command was refused with exit code `exit` and
/// the error object of code `error`, whose message holds `phrase`.
fn refused(run: &Run, exit: i32, error: &str, phrase: &str) {
    assert_eq!(run.code, exit, "{}\n{}", run.stdout, run.stderr);
    let object = run.json();
    assert_eq!(object["kind"], "error", "{}", run.stdout);
    assert_eq!(object["error"], error, "{}", run.stdout);
    let message = object["message"].as_str().unwrap();
    assert!(message.contains(phrase), "{message}");
}

/// A share of `party` for emission `emission`, made now (not the one
/// committed), at `name` in the ceremony's folder.
fn other_share(c: &Ceremony, party: &str, emission: u32, name: &str) -> PathBuf {
    let path = c.path(name);
    share_new(&c.store, party, emission, &path).expect_code(0);
    path
}

#[test]
fn shares_other_than_the_committed_ones_are_refused_naming_the_party() {
    let c = Ceremony::new();
    let dir = c.emission_dir();
    let committed = std::fs::read(dir.join("manifest.json")).unwrap();
    let kept = c.store.join("keys/shares/tresors-ensables/e000001.json");
    let nothing_written = || {
        assert_eq!(names(&dir), ["manifest.json", "manifest.json.sig"]);
        assert_eq!(std::fs::read(dir.join("manifest.json")).unwrap(), committed);
        assert!(!kept.exists());
    };
    let block = ["--block", "1"];
    let beacon = Some(c.beacon_value.as_path());

    // The regulator's share swapped for another one.
    let swapped = other_share(&c, "regulator", 1, "swapped.json");
    let run = generate(
        &c.store,
        1,
        &block,
        &[&c.shares[0], &swapped, &c.shares[2]],
        beacon,
    );
    refused(
        &run,
        1,
        "share_mismatch",
        "the share of party regulator does not match its commitment",
    );
    nothing_written();

    // A share made for another emission.
    let elsewhere = other_share(&c, "operator", 2, "elsewhere.json");
    let run = generate(
        &c.store,
        1,
        &block,
        &[&elsewhere, &c.shares[1], &c.shares[2]],
        beacon,
    );
    refused(
        &run,
        1,
        "share_mismatch",
        "party operator was made for tresors-ensables emission 2",
    );
    nothing_written();

    // A party's share missing, every share missing, the beacon value
    // missing: bad usage, naming what to give.
    let run = generate(&c.store, 1, &block, &[&c.shares[0], &c.shares[1]], beacon);
    refused(&run, 2, "shares_needed", "the share of party test-lab");
    refused(
        &generate(&c.store, 1, &block, &[], None),
        2,
        "shares_needed",
        "operator, regulator, test-lab",
    );
    refused(
        &generate(&c.store, 1, &block, &c.all_shares(), None),
        2,
        "shares_needed",
        "beacon drand-quicknet round 12345678",
    );
    nothing_written();

    // Shares for an emission whose manifest commits to none (here: none
    // yet): refused before its folder is made.
    let run = generate(&c.store, 2, &[], &[&c.shares[0]], None);
    refused(&run, 2, "no_share_commitments", "");
    assert!(!emission_dir(&c.store, 2).exists());

    // The committed shares and the beacon value: block 1.
    generate(&c.store, 1, &block, &c.all_shares(), beacon).expect_code(0);
    let one_block = std::fs::read(dir.join("manifest.json")).unwrap();
    let unchanged = || {
        assert_eq!(std::fs::read(dir.join("manifest.json")).unwrap(), one_block);
        assert!(!dir.join("b000002.tkb").exists() && !dir.join("pending.json").exists());
    };

    // Adding a block needs the same shares and beacon value again.
    let more = ["--blocks", "1"];
    let run = generate(
        &c.store,
        1,
        &more,
        &[&c.shares[0], &swapped, &c.shares[2]],
        None,
    );
    refused(&run, 1, "share_mismatch", "");
    let other_value = c.path("other-beacon-value.txt");
    std::fs::write(&other_value, "00ff").unwrap();
    let run = generate(&c.store, 1, &more, &c.all_shares(), Some(&other_value));
    refused(
        &run,
        1,
        "beacon_mismatch",
        "differs from the one the manifest recorded",
    );
    refused(
        &generate(&c.store, 1, &more, &[], None),
        2,
        "shares_needed",
        "",
    );
    unchanged();
    // The beacon value is recorded now: the shares suffice.
    generate(&c.store, 1, &more, &c.all_shares(), None).expect_code(0);
    assert!(dir.join("b000002.tkb").exists());

    // A share given to one emission never seeds another: the operator's
    // share copied into a share file of emission 2, committed there.
    let mut copied: Value = serde_json::from_slice(&std::fs::read(&c.shares[0]).unwrap()).unwrap();
    copied["emission"] = Value::from(2);
    let copied_path = c.path("copied.json");
    std::fs::write(&copied_path, serde_json::to_vec(&copied).unwrap()).unwrap();
    let regulator_2 = other_share(&c, "regulator", 2, "regulator-2.json");
    let lines: Vec<String> = [&copied_path, &regulator_2]
        .iter()
        .map(|p| {
            issuer(&c.store, &["share", "commit", &text(p)])
                .expect_code(0)
                .stdout
        })
        .collect();
    let commitments = c.path("commitments-2.txt");
    std::fs::write(&commitments, lines.concat()).unwrap();
    let commit = [
        "emission",
        "commit",
        "--game",
        GAME,
        "--emission",
        "2",
        "--share-commitments",
    ];
    issuer(&c.store, &[&commit[..], &[&text(&commitments)]].concat()).expect_code(0);
    refused(
        &generate(&c.store, 2, &[], &[&copied_path, &regulator_2], None),
        1,
        "share_mismatch",
        "party operator was given to tresors-ensables emission 1 already",
    );
    assert_eq!(
        names(&emission_dir(&c.store, 2)),
        ["manifest.json", "manifest.json.sig"]
    );

    // A reveal whose shares are not the committed ones fails verification,
    // naming the party; so does one with another beacon value.
    let (reveal_path, reveal) = c.reveal(&c.store);
    verify(&c.store, &["--seeds", &text(&reveal_path)]).expect_code(0);
    let changed_path = c.path("changed.json");
    let changed = changed_reveal(&reveal, &changed_path, |r| {
        flip(&mut r["seed_shares"]["shares"][2]["share"])
    });
    let report = verify(&c.store, &["--seeds", &text(&changed)])
        .expect_code(1)
        .json();
    assert_eq!(
        problems(&report),
        [(
            "share_mismatch".to_string(),
            "the reveal's shares: the share of party test-lab does not match its commitment in the manifest".to_string()
        )]
    );
    let changed = changed_reveal(&reveal, &changed_path, |r| {
        r["seed_shares"]["beacon"]["value"] = Value::from("00ff")
    });
    let report = verify(&c.store, &["--seeds", &text(&changed)])
        .expect_code(1)
        .json();
    let found = problems(&report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "share_mismatch");
    assert!(
        found[0].1.contains("beacon drand-quicknet round 12345678"),
        "{found:?}"
    );
    // Seeds that match their commitments but not the shares: each block named.
    let changed = changed_reveal(&reveal, &changed_path, |r| {
        let blocks = r["blocks"].as_array_mut().unwrap();
        let (one, two) = (blocks[0]["seed"].clone(), blocks[1]["seed"].clone());
        (blocks[0]["seed"], blocks[1]["seed"]) = (two, one);
    });
    let report = verify(&c.store, &["--seeds", &text(&changed)])
        .expect_code(1)
        .json();
    let kinds: Vec<String> = problems(&report).into_iter().map(|(k, _)| k).collect();
    assert_eq!(kinds, ["seed_mismatch", "seed_mismatch"]);
}

#[test]
fn the_same_shares_and_beacon_give_the_same_blocks_and_another_beacon_other_seeds() {
    let c = Ceremony::new();
    // The committed store, copied before any block: each copy generates
    // on its own.
    let copy = |name: &str| {
        let store = c.path(name);
        copy_tree(&c.store, &store);
        store
    };
    let (same, other) = (copy("same"), copy("other"));
    let blocks = ["--blocks", "2"];
    let beacon = Some(c.beacon_value.as_path());
    generate(&c.store, 1, &blocks, &c.all_shares(), beacon).expect_code(0);
    let reversed: Vec<&PathBuf> = c.shares.iter().rev().collect();
    generate(&same, 1, &blocks, &reversed, beacon).expect_code(0);
    let other_value = c.path("other-beacon-value.txt");
    std::fs::write(&other_value, BEACON_VALUE.replace('9', "8")).unwrap();
    generate(&other, 1, &blocks, &c.all_shares(), Some(&other_value)).expect_code(0);

    let read = |store: &Path, name: &str| std::fs::read(emission_dir(store, 1).join(name)).unwrap();
    for name in [
        "b000001.tkb",
        "b000002.tkb",
        "manifest.json",
        "manifest.json.sig",
    ] {
        assert!(read(&c.store, name) == read(&same, name), "{name} differs");
    }
    let commitments = |store: &Path| -> Vec<String> {
        let m: Value = serde_json::from_slice(&read(store, "manifest.json")).unwrap();
        m["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["seed_commitment"].as_str().unwrap().to_string())
            .collect()
    };
    let (ours, theirs) = (commitments(&c.store), commitments(&other));
    assert_eq!(ours.len(), 2);
    for (a, b) in ours.iter().zip(&theirs) {
        assert_ne!(a, b, "another beacon value, other seeds");
    }
    assert_ne!(read(&c.store, "b000001.tkb"), read(&other, "b000001.tkb"));

    // A store that keeps no shares (here: its kept file gone) knows no seed
    // of the emission: its own seed checks are not done, never failed, and
    // redemption compares check codes with the records alone. The reveal
    // then takes the shares again, and publishes what the other store does.
    std::fs::remove_file(same.join("keys/shares/tresors-ensables/e000001.json")).unwrap();
    let report = verify(&same, &[]).expect_code(1).json();
    assert_eq!(
        (report["ok"].as_bool(), report["complete"].as_bool()),
        (Some(true), Some(false))
    );
    for b in report["blocks"].as_array().unwrap() {
        for check in b["checks"].as_array().unwrap() {
            let seeded =
                ["check_codes", "seed_commitment"].contains(&check["check"].as_str().unwrap());
            let status = if seeded { "not_done" } else { "passed" };
            assert_eq!(check["status"], status, "{check}");
        }
    }
    let seed = Store::new(&c.store)
        .secrets()
        .unwrap()
        .block_seed(Game::TRESORS_ENSABLES, 1, 1)
        .unwrap()
        .expect("the seed, from the shares the store keeps");
    assert_eq!(
        Store::new(&same)
            .secrets()
            .unwrap()
            .block_seed(Game::TRESORS_ENSABLES, 1, 1)
            .unwrap(),
        None
    );
    let id = |check_code| {
        UnitId {
            game: Game::TRESORS_ENSABLES,
            emission: 1,
            block: 1,
            index: 7,
            check_code,
        }
        .to_string()
    };
    let right = id(derive::check_code(&seed, 7));
    let wrong = id(derive::check_code(&seed, 8));
    for store in [&c.store, &same] {
        issuer(store, &["show", &right, "--reveal-all", "--json"]).expect_code(0);
        let run = issuer(store, &["show", &wrong, "--reveal-all", "--json"]);
        refused(&run, 1, "wrong_check_code", "");
    }
    let (_, ours) = c.reveal(&c.store);
    issuer(&same, &["close", "--emission", "1"]).expect_code(0);
    issuer(
        &same,
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
    let theirs = c.path("same-reveal.json");
    let reveal = [
        "reveal",
        "--emission",
        "1",
        "--json",
        "--out",
        &text(&theirs),
    ];
    refused(&issuer(&same, &reveal), 2, "shares_needed", "");
    let shares: Vec<String> = c.shares.iter().map(|p| text(p)).collect();
    let with_shares: Vec<&str> = reveal
        .iter()
        .copied()
        .chain(["--shares"])
        .chain(shares.iter().map(String::as_str))
        .collect();
    issuer(&same, &with_shares).expect_code(0);
    let theirs: Value = serde_json::from_slice(&std::fs::read(&theirs).unwrap()).unwrap();
    assert_eq!(theirs, ours);
}

/// A generation killed mid-way is finished only with the same shares and
/// beacon value (the value was recorded before the first block), and the
/// finished emission is byte for byte the uninterrupted one.
#[test]
fn a_killed_generation_is_finished_only_with_the_same_shares() {
    let c = Ceremony::new();
    let reference = c.path("reference");
    copy_tree(&c.store, &reference);
    let shares: Vec<String> = c.shares.iter().map(|p| text(p)).collect();
    let value = text(&c.beacon_value);
    // Blocks of 300,000 units, one job: long enough to be killed mid-way.
    let args = |shares: &[&str], value: &str| -> Vec<String> {
        let head = [
            "generate",
            "--game",
            GAME,
            "--emission",
            "1",
            "--units",
            "300000",
        ];
        let tail = [
            "--blocks",
            "3",
            "--jobs",
            "1",
            "--quiet",
            "--json",
            "--beacon-value",
            value,
            "--shares",
        ];
        head.iter()
            .chain(&tail)
            .chain(shares)
            .map(|a| a.to_string())
            .collect()
    };
    let all: Vec<&str> = shares.iter().map(String::as_str).collect();
    let dir = c.emission_dir();
    let mut child = Command::new(crate::common::ISSUER)
        .arg("--store")
        .arg(&c.store)
        .args(args(&all, &value))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !dir.join("b000001.tkb").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before it was killed"
        );
        assert!(start.elapsed().as_secs() < 120, "no block made");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(dir.join("pending.json").exists());
    let sealed: Vec<String> = names(&dir)
        .into_iter()
        .filter(|n| n.ends_with(".tkb"))
        .collect();
    assert!(!sealed.is_empty() && sealed.len() < 3, "{sealed:?}");

    let run = |store: &Path, a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        issuer(store, &a)
    };
    let swapped = text(&other_share(&c, "test-lab", 1, "swapped.json"));
    let with_swapped = run(&c.store, args(&[all[0], all[1], &swapped], &value));
    refused(&with_swapped, 1, "share_mismatch", "party test-lab");
    let other_value = c.path("other-value.txt");
    std::fs::write(&other_value, "0badbeef").unwrap();
    let with_other_value = run(&c.store, args(&all, &text(&other_value)));
    refused(&with_other_value, 1, "beacon_mismatch", "recorded");
    let now: Vec<String> = names(&dir)
        .into_iter()
        .filter(|n| n.ends_with(".tkb"))
        .collect();
    assert_eq!(now, sealed, "nothing generated by the refused runs");
    assert!(
        dir.join("pending.json").exists(),
        "the plan is still unfinished"
    );

    run(&c.store, args(&all, &value)).expect_code(0);
    run(&reference, args(&all, &value)).expect_code(0);
    let reference_dir = emission_dir(&reference, 1);
    assert_eq!(names(&dir), names(&reference_dir));
    for name in names(&dir) {
        assert!(
            std::fs::read(dir.join(&name)).unwrap()
                == std::fs::read(reference_dir.join(&name)).unwrap(),
            "{name} differs from the uninterrupted run's"
        );
    }
}

// The derivation's vectors: fixed shares and beacon value, the values they
// give (docs/FORMAT.md §Share-derived seeds). Written by the code; the
// test fails when the code's output changes.

fn vector_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/derive/seed-shares.txt")
}

/// The vector file as the code makes it.
fn seed_share_vectors() -> String {
    let game = Game::ILE_AU_TRESOR;
    let bytes = |from: u8| -> [u8; 32] { std::array::from_fn(|i| from + i as u8) };
    let shares = [
        ("operator", bytes(0)),
        ("regulator", bytes(0x20)),
        ("test-lab", bytes(0x40)),
    ];
    let refs: Vec<(&str, &[u8; 32])> = shares.iter().map(|(p, s)| (*p, s)).collect();
    let value = bytes(0x60);
    let beacon = BeaconRound {
        name: "drand-quicknet",
        round: 1000,
        value: &value,
    };
    let mut lines = vec![
        "# Share-derived seed vectors (docs/FORMAT.md §Share-derived seeds), written by the code:"
            .to_string(),
        "#   cargo test --release --test it -- --ignored shares::generate_seed_share_vectors"
            .into(),
        "# and checked by tests/it/shares.rs (shares::seed_share_vectors_hold). Shares 00 01 … 1f,"
            .into(),
        "# 20 … 3f and 40 … 5f; the beacon's value 60 … 7f. A change here changes every seed of"
            .into(),
        "# every emission made from shares: never without a new version.".into(),
        format!("game: {}", game.slug()),
        "emission: 1".into(),
    ];
    for (party, share) in &shares {
        lines.push(format!("share {party}: {}", hex::encode(share)));
    }
    lines.push(format!("beacon: {} round {}", beacon.name, beacon.round));
    lines.push(format!("beacon value: {}", hex::encode(value)));
    for (party, share) in &shares {
        lines.push(format!(
            "commitment {party}: {}",
            hex::encode(derive::share_commitment(game, 1, party, share))
        ));
    }
    for (suffix, beacon) in [("", Some(beacon)), (" without beacon", None)] {
        let contributions = derive::seed_contributions(&refs, beacon);
        let key = derive::emission_seed_key(&contributions, game, 1);
        lines.push(format!(
            "contributions{suffix}: {}",
            hex::encode(contributions)
        ));
        lines.push(format!("emission-seed-key{suffix}: {}", hex::encode(key)));
        let blocks: &[u32] = if beacon.is_some() { &[1, 2] } else { &[1] };
        for block in blocks {
            let seed = derive::block_seed(&key, game, 1, *block);
            lines.push(format!("block-seed {block}{suffix}: {}", hex::encode(seed)));
            lines.push(format!(
                "seed-commitment {block}{suffix}: {}",
                hex::encode(derive::seed_commitment(&seed))
            ));
        }
    }
    lines.push(String::new());
    lines.join("\n")
}

/// Writes fixtures/derive/seed-shares.txt.
#[test]
#[ignore = "writes fixtures/derive/seed-shares.txt; run by hand to regenerate"]
fn generate_seed_share_vectors() {
    std::fs::write(vector_path(), seed_share_vectors()).unwrap();
}

/// The code still gives every value of fixtures/derive/seed-shares.txt,
/// line for line, whatever the order the shares are listed in; and
/// docs/FORMAT.md prints every derived value.
#[test]
fn seed_share_vectors_hold() {
    let stored = std::fs::read_to_string(vector_path()).unwrap();
    let made = seed_share_vectors();
    for (s, m) in stored.lines().zip(made.lines()) {
        assert_eq!(s, m, "the code now gives another value");
    }
    assert_eq!(stored, made);
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/FORMAT.md"))
        .unwrap();
    let values: Vec<(&str, &str)> = stored
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split_once(": ").unwrap())
        .collect();
    for (name, value) in &values {
        let input = ["game", "emission", "beacon"].contains(name) || name.starts_with("share ");
        if !input {
            assert!(doc.contains(value), "FORMAT.md lacks {name} {value}");
        }
    }
    // The document's own Python gives the same values.
    let section = &doc[doc.find("### Share-derived seeds").unwrap()..];
    let start = section.find("```python\n").unwrap() + "```python\n".len();
    let code = &section[start..start + section[start..].find("```").unwrap()];
    let driver = r#"
import json
b = lambda first: bytes(range(first, first + 32))
shares = [("test-lab", b(0x40)), ("operator", b(0)), ("regulator", b(0x20))]
out = {}
for party, share in shares:
    out["commitment " + party] = commitment("ile-au-tresor", 1, party, share).hex()
for suffix, beacon in [("", ("drand-quicknet", 1000, b(0x60))), (" without beacon", None)]:
    key = seed_key("ile-au-tresor", 1, shares, beacon)
    out["emission-seed-key" + suffix] = key.hex()
    out["block-seed 1" + suffix] = block_seed(key, "ile-au-tresor", 1, 1).hex()
out["block-seed 2"] = block_seed(seed_key("ile-au-tresor", 1, shares, ("drand-quicknet", 1000, b(0x60))), "ile-au-tresor", 1, 2).hex()
print(json.dumps(out))
"#;
    let run = Command::new("python3")
        .args(["-c", &format!("{code}{driver}")])
        .output()
        .expect("python3 runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let computed: Value = serde_json::from_slice(&run.stdout).unwrap();
    let computed = computed.as_object().unwrap();
    assert_eq!(computed.len(), 8);
    for (name, value) in computed {
        let stored = values
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(
            stored.1,
            value.as_str().unwrap(),
            "{name}: FORMAT.md's Python"
        );
    }

    // The order the shares come in does not matter: they are sorted by party.
    let (a, b) = ([1u8; 32], [2u8; 32]);
    assert_eq!(
        derive::seed_contributions(&[("x", &a), ("y", &b)], None),
        derive::seed_contributions(&[("y", &b), ("x", &a)], None)
    );
}
