//! Redemption through the real `issuer` binary (issue 4, docs/REDEMPTION.md).
//!
//! One block (emission 1, block 1, 1 €) is generated once per run of this
//! test binary; each test copies that store into its own temporary folder,
//! so every test starts with a fresh ledger. Unit IDs and their prizes come
//! from `issuer export`. Processes are real `issuer` processes, run
//! concurrently or killed with SIGKILL where the test says so.
//!
//! The inclusion proof is checked by `rfc9162_verify_inclusion` below, a
//! transcription of RFC 9162 §2.1.3.2 that does not call the crate's own
//! Merkle code.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{issuer, issuer_with_input, shared_block, sold, valid_id, Run, ISSUER};
use rusqlite::Connection;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tempfile::TempDir;
use ticket_issuer::store::Store;

/// Where the block lives inside a store (docs/FORMAT.md §Store layout).
const BLOCK: &str = "emissions/ile-au-tresor/e000001/b000001.tkb";
/// Units in a L'île au trésor block.
const BLOCK_UNITS: u32 = 450_000;
/// Units per chunk (docs/FORMAT.md).
const CHUNK_UNITS: u32 = 4096;
/// The Crockford base32 alphabet of check codes.
const CHECK_ALPHABET: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

// ---------------------------------------------------------------------------
// Fixture: one generated block, its exported units, its sealed root
// ---------------------------------------------------------------------------

/// One line of `issuer export` (the fields these tests use).
#[derive(Debug, Deserialize)]
struct Unit {
    id: String,
    index: u32,
    prize: String,
    lot: Option<String>,
}

struct Fixture {
    /// The template store: keys and the block, never a ledger.
    store: PathBuf,
    /// Every unit of the block, by index.
    units: Vec<Unit>,
    /// The Merkle root `issuer generate --json` printed.
    merkle_root: String,
}

/// The shared 1 € block's store and its export, once per test run. The
/// store is only read: tests that redeem work on `fresh_store` copies.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let shared = shared_block(100);
        let header = ticket_issuer::block::reader::BlockFile::open(&shared.path)
            .expect("the shared block opens")
            .header;
        let store = shared.store_dir.clone();
        let units = export_units(&store);
        assert_eq!(units.len(), BLOCK_UNITS as usize);
        for (i, u) in units.iter().enumerate() {
            assert_eq!(u.index as usize, i, "export is in index order");
        }
        Fixture {
            store,
            units,
            merkle_root: hex::encode(header.merkle_root),
        }
    })
}

/// Streams `issuer export` of the store's block, keeping the few fields used.
fn export_units(store: &Path) -> Vec<Unit> {
    let mut child = Command::new(ISSUER)
        .arg("--store")
        .arg(store)
        .arg("export")
        .arg(store.join(BLOCK))
        .stdout(Stdio::piped())
        .spawn()
        .expect("run issuer export");
    let stdout = child.stdout.take().expect("piped stdout");
    let units = BufReader::new(stdout)
        .lines()
        .map(|line| {
            let line = line.expect("read export output");
            serde_json::from_str::<Unit>(&line)
                .unwrap_or_else(|e| panic!("export line {line:?}: {e}"))
        })
        .collect();
    assert!(child.wait().expect("wait for export").success());
    units
}

/// A fresh store: a copy of the fixture's keys and block, no ledger.
fn fresh_store() -> TempDir {
    let dir = TempDir::new().expect("temp dir");
    common::copy_tree(&fixture().store, dir.path());
    dir
}

/// The unit at `index`.
fn unit(index: u32) -> &'static Unit {
    &fixture().units[index as usize]
}

/// The first winning unit (a lot, a nonzero prize) at or after `from`.
fn first_winner(from: u32) -> &'static Unit {
    fixture().units[from as usize..]
        .iter()
        .find(|u| u.lot.is_some())
        .expect("the block has winners")
}

/// The first losing unit at or after `from`.
fn first_loser(from: u32) -> &'static Unit {
    fixture().units[from as usize..]
        .iter()
        .find(|u| u.lot.is_none())
        .expect("the block has losers")
}

// ---------------------------------------------------------------------------
// Running the binary
// ---------------------------------------------------------------------------

fn redeem(store: &Path, id: &str) -> Run {
    issuer(store, &["redeem", id, "--json"])
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {:?} / {:?}", run.stdout, run.stderr))
}

/// `issuer ledger --json`, which must exit 0 (healthy and reconciled).
fn ledger(store: &Path) -> Value {
    let run = issuer(store, &["ledger", "--json"]);
    assert_eq!(run.code, 0, "ledger: {} {}", run.stdout, run.stderr);
    json_of(&run)
}

fn ledger_units(store: &Path) -> u64 {
    ledger(store)["units"].as_u64().expect("units")
}

/// Euros as printed ("12", "2.5", "0.10") to integer cents, exactly.
fn cents(euros: &str) -> u64 {
    let (whole, frac) = euros.split_once('.').unwrap_or((euros, ""));
    assert!(frac.len() <= 2, "{euros:?} has more than 2 decimals");
    let whole: u64 = whole.parse().unwrap_or_else(|_| panic!("amount {euros:?}"));
    let frac: u64 = format!("{frac:0<2}")
        .parse()
        .unwrap_or_else(|_| panic!("amount {euros:?}"));
    whole * 100 + frac
}

/// The ID with check-code character `pos` replaced by another value.
fn with_check_char_changed(id: &str, pos: usize) -> String {
    let (head, code) = id.rsplit_once('-').expect("an ID has parts");
    let mut code: Vec<char> = code.chars().collect();
    let old = code[pos].to_ascii_uppercase();
    code[pos] = CHECK_ALPHABET
        .chars()
        .find(|&c| c != old)
        .expect("alphabet has 32 characters");
    format!("{head}-{}", code.into_iter().collect::<String>())
}

/// "YYYY-MM-DDTHH:MM:SS[.fff]Z": an RFC 3339 time in UTC.
fn is_rfc3339_utc(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(99);
    if b.len() < 20 || !b.ends_with(b"Z") {
        return false;
    }
    let shape = digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    let fraction = &b[19..b.len() - 1];
    let fraction_ok = fraction.is_empty()
        || (fraction.len() >= 2
            && fraction[0] == b'.'
            && fraction[1..].iter().all(u8::is_ascii_digit));
    shape
        && fraction_ok
        && (1..=12).contains(&num(5..7))
        && (1..=31).contains(&num(8..10))
        && num(11..13) < 24
        && num(14..16) < 60
        && num(17..19) < 61
}

// ---------------------------------------------------------------------------
// RFC 9162 §2.1.3.2, transcribed (independent of ticket_issuer::merkle)
// ---------------------------------------------------------------------------

pub(crate) type Hash = [u8; 32];

pub(crate) fn sha256(parts: &[&[u8]]) -> Hash {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// RFC 9162 §2.1.1: the leaf hash is HASH(0x00 || data).
pub(crate) fn rfc_leaf_hash(data: &[u8]) -> Hash {
    sha256(&[&[0x00], data])
}

/// RFC 9162 §2.1.3.2 "Verifying an Inclusion Proof", step by step.
pub(crate) fn rfc9162_verify_inclusion(
    leaf_index: u64,
    tree_size: u64,
    hash: &Hash,
    inclusion_path: &[Hash],
    root_hash: &Hash,
) -> bool {
    rfc9162_inclusion_root(leaf_index, tree_size, hash, inclusion_path) == Some(*root_hash)
}

/// The root RFC 9162 §2.1.3.2 computes from a leaf's hash and its path
/// (steps 1 to 5, before the comparison with the root); `None` where the
/// steps fail.
pub(crate) fn rfc9162_inclusion_root(
    leaf_index: u64,
    tree_size: u64,
    hash: &Hash,
    inclusion_path: &[Hash],
) -> Option<Hash> {
    // 1. leaf_index must be below tree_size.
    if leaf_index >= tree_size {
        return None;
    }
    // 2. fn = leaf_index, sn = tree_size - 1.
    let (mut f_n, mut s_n) = (leaf_index, tree_size - 1);
    // 3. r = hash.
    let mut r = *hash;
    // 4. For each p in inclusion_path:
    for p in inclusion_path {
        // a. sn == 0: stop and fail.
        if s_n == 0 {
            return None;
        }
        // b. LSB(fn) set, or fn == sn:
        if f_n & 1 == 1 || f_n == s_n {
            // i. r = HASH(0x01 || p || r)
            r = sha256(&[&[0x01], p, &r]);
            // ii. if LSB(fn) not set, right-shift fn and sn until LSB(fn)
            //     is set or fn is 0.
            if f_n & 1 == 0 {
                while f_n & 1 == 0 && f_n != 0 {
                    f_n >>= 1;
                    s_n >>= 1;
                }
            }
        } else {
            // Otherwise r = HASH(0x01 || r || p).
            r = sha256(&[&[0x01], &r, p]);
        }
        // c. right-shift fn and sn once.
        f_n >>= 1;
        s_n >>= 1;
    }
    // 5. sn must be 0 (and r the root).
    (s_n == 0).then_some(r)
}

pub(crate) fn hash_of(hex_text: &str) -> Hash {
    hex::decode(hex_text)
        .ok()
        .and_then(|b| b.try_into().ok())
        .unwrap_or_else(|| panic!("{hex_text:?} is not 32 bytes of hex"))
}

/// The proof fields of a `redeem --json` report.
struct Proof {
    leaf_index: u64,
    tree_size: u64,
    leaf: Hash,
    path: Vec<Hash>,
    root: Hash,
}

fn proof_of(report: &Value) -> Proof {
    let record = hex::decode(report["record"].as_str().expect("record")).expect("record hex");
    Proof {
        leaf_index: report["leaf_index"].as_u64().expect("leaf_index"),
        tree_size: report["tree_size"].as_u64().expect("tree_size"),
        leaf: rfc_leaf_hash(&record),
        path: report["inclusion_proof"]
            .as_array()
            .expect("inclusion_proof")
            .iter()
            .map(|h| hash_of(h.as_str().expect("proof hash")))
            .collect(),
        root: hash_of(report["merkle_root"].as_str().expect("merkle_root")),
    }
}

// ---------------------------------------------------------------------------
// One unit: winner, loser, twice, --check
// ---------------------------------------------------------------------------

#[test]
fn redeeming_a_winner_prints_every_field_and_records_its_prize() {
    let store = fresh_store();
    let u = first_winner(0);
    sold(store.path(), &[&u.id]);
    let run = redeem(store.path(), &u.id);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = json_of(&run);
    assert_eq!(r["id"], u.id.as_str());
    assert_eq!(r["game"], "ile-au-tresor");
    assert_eq!(r["emission"], 1);
    assert_eq!(r["block"], 1);
    assert_eq!(r["index"], u.index);
    assert_eq!(r["lot"].as_str(), u.lot.as_deref());
    assert_eq!(r["prize"], u.prize.as_str());
    assert!(cents(&u.prize) > 0);
    assert_eq!(r["leaf_index"], u.index);
    assert_eq!(r["tree_size"], BLOCK_UNITS);
    assert_eq!(r["merkle_root"], fixture().merkle_root.as_str());
    assert!(!r["record"].as_str().expect("record").is_empty());
    assert!(!r["inclusion_proof"].as_array().expect("proof").is_empty());
    let at = r["redeemed_at"].as_str().expect("redeemed_at");
    assert!(is_rfc3339_utc(at), "redeemed_at {at:?}");

    let l = ledger(store.path());
    assert_eq!(l["units"], 1);
    assert_eq!(cents(l["paid"].as_str().expect("paid")), cents(&u.prize));
    assert_eq!(l["blocks"][0]["winners"], 1);
    assert_eq!(l["reconciled"], true);
    assert_eq!(l["integrity_ok"], true);
}

#[test]
fn a_winner_in_words_says_what_to_pay() {
    let store = fresh_store();
    let u = first_winner(1000);
    sold(store.path(), &[&u.id]);
    let run = issuer(store.path(), &["redeem", &u.id]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(&u.id), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!("pay {} €", u.prize)),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("RFC 9162"), "{}", run.stdout);
}

#[test]
fn a_loser_is_recorded_as_paid_zero_and_closed() {
    let store = fresh_store();
    let u = first_loser(0);
    let loser2 = first_loser(u.index + 1);
    sold(store.path(), &[&u.id, &loser2.id]);
    let run = redeem(store.path(), &u.id);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = json_of(&run);
    assert_eq!(r["prize"], "0");
    assert!(r["lot"].is_null());
    assert!(is_rfc3339_utc(
        r["redeemed_at"].as_str().expect("redeemed_at")
    ));
    let l = ledger(store.path());
    assert_eq!(l["units"], 1);
    assert_eq!(l["paid"], "0");
    assert_eq!(l["blocks"][0]["winners"], 0);

    let words = issuer(store.path(), &["redeem", &loser2.id]);
    assert_eq!(words.code, 0, "{}", words.stderr);
    assert!(words.stdout.contains("nothing to pay"), "{}", words.stdout);
    assert_eq!(ledger_units(store.path()), 2);

    let again = redeem(store.path(), &u.id);
    assert_eq!(again.code, 1, "a loser's play is closed once");
    assert!(
        again.stderr.contains("already redeemed"),
        "{}",
        again.stderr
    );
}

#[test]
fn a_second_redemption_is_refused_naming_the_first() {
    let store = fresh_store();
    let u = first_winner(2000);
    sold(store.path(), &[&u.id]);
    let first = redeem(store.path(), &u.id);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let at = json_of(&first)["redeemed_at"]
        .as_str()
        .expect("redeemed_at")
        .to_string();
    let digest = ledger(store.path())["digest"].clone();

    let second = redeem(store.path(), &u.id);
    assert_eq!(second.code, 1);
    assert_eq!(json_of(&second)["error"], "already_redeemed");
    assert!(
        second.stderr.contains("already redeemed"),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.contains(&at),
        "names the first time: {}",
        second.stderr
    );
    assert!(
        second.stderr.contains(&format!("paid {} €", u.prize)),
        "names the amount: {}",
        second.stderr
    );
    // The same unit written differently (lower case, O for 0, L for 1)
    // is the same unit.
    let (head, code) = u.id.rsplit_once('-').expect("parts");
    let respelt = format!(
        "{}-{}",
        head.to_lowercase(),
        code.to_lowercase().replace('0', "O").replace('1', "L")
    );
    let third = redeem(store.path(), &respelt);
    assert_eq!(third.code, 1, "{respelt}: {}", third.stderr);
    assert!(
        third.stderr.contains("already redeemed"),
        "{}",
        third.stderr
    );

    let l = ledger(store.path());
    assert_eq!(l["units"], 1);
    assert_eq!(l["digest"], digest, "refusals change nothing");
}

#[test]
fn check_prints_the_outcome_and_records_nothing() {
    let store = fresh_store();
    let u = first_winner(3000);
    let check = issuer(store.path(), &["redeem", &u.id, "--check", "--json"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    let c = json_of(&check);
    assert_eq!(c["prize"], u.prize.as_str());
    assert!(c["redeemed_at"].is_null());
    assert!(c.get("already_redeemed_at").is_none());
    assert_eq!(ledger_units(store.path()), 0);

    let words = issuer(store.path(), &["redeem", &u.id, "--check"]);
    assert_eq!(words.code, 0);
    assert!(
        words.stdout.contains("nothing recorded"),
        "{}",
        words.stdout
    );
    assert_eq!(ledger_units(store.path()), 0);

    sold(store.path(), &[&u.id]);
    let paid = redeem(store.path(), &u.id);
    assert_eq!(paid.code, 0, "{}", paid.stderr);
    let at = json_of(&paid)["redeemed_at"].clone();
    let digest = ledger(store.path())["digest"].clone();
    let after = json_of(&issuer(
        store.path(),
        &["redeem", &u.id, "--check", "--json"],
    ));
    assert_eq!(after["already_redeemed_at"], at);
    assert!(after["redeemed_at"].is_null());
    let l = ledger(store.path());
    assert_eq!(l["units"], 1);
    assert_eq!(l["digest"], digest);
}

// ---------------------------------------------------------------------------
// IDs that name no payable unit
// ---------------------------------------------------------------------------

#[test]
fn each_bad_id_class_has_its_own_error_and_exit_code_and_records_nothing() {
    let store = fresh_store();
    let s = store.path();
    let u = first_winner(5000);
    let (_, code) = u.id.rsplit_once('-').expect("parts");
    let i = u.index;
    assert_eq!(valid_id(s, 1, 1, i), u.id, "the helper makes real IDs");

    // (ID, exit code, what stderr must say)
    let cases: Vec<(String, i32, String)> = vec![
        (format!("IAT-1-1-{i}"), 2, "expected 5 parts".into()),
        (format!("IAT-1-1-{i}-{code}-X"), 2, "found 6".into()),
        (String::new(), 2, "found 1".into()),
        (
            format!("XYZ-1-1-{i}-{code}"),
            2,
            "unknown game prefix \"XYZ\"".into(),
        ),
        (
            format!("IAT-x-1-{i}-{code}"),
            2,
            "emission \"x\" is not a number".into(),
        ),
        (
            format!("IAT-1-b-{i}-{code}"),
            2,
            "block \"b\" is not a number".into(),
        ),
        (
            format!("IAT-1-1-{i}z-{code}"),
            2,
            format!("index \"{i}z\" is not a number"),
        ),
        (
            format!("IAT-1-1--{code}"),
            2,
            "index \"\" is not a number".into(),
        ),
        (
            format!("IAT-99999999999-1-{i}-{code}"),
            2,
            "emission 99999999999 is too large".into(),
        ),
        (
            format!("IAT-1-1-{i}-{code}A"),
            2,
            "has 9 characters, expected 8".into(),
        ),
        (
            format!("IAT-1-1-{i}-{}", &code[..7]),
            2,
            "has 7 characters, expected 8".into(),
        ),
        (
            format!("IAT-1-1-{i}-{}U", &code[..7]),
            2,
            "invalid character 'U'".into(),
        ),
        (
            format!("IAT-1-1-{i}-{}*", &code[..7]),
            2,
            "invalid character '*'".into(),
        ),
        (
            format!("IAT-1-1-{BLOCK_UNITS}-{code}"),
            1,
            "index 450000 is out of range".into(),
        ),
        (
            format!("IAT-1-1-{}-{code}", u32::MAX),
            1,
            "out of range".into(),
        ),
        (
            valid_id(s, 1, 2, i),
            1,
            "no block 2 of emission 1 in this store".into(),
        ),
        (
            valid_id(s, 9, 1, i),
            1,
            "this store has no emission 9 of ile-au-tresor".into(),
        ),
        // A real check code, moved to another unit, block or emission.
        (
            format!("IAT-1-1-{}-{code}", i + 1),
            1,
            "check code does not match".into(),
        ),
        (
            format!("IAT-1-2-{i}-{code}"),
            1,
            "check code does not match".into(),
        ),
        (
            format!("IAT-9-1-{i}-{code}"),
            1,
            "check code does not match".into(),
        ),
    ];
    let changed_chars: Vec<(String, i32, String)> = (0..8)
        .map(|pos| {
            (
                with_check_char_changed(&u.id, pos),
                1,
                "check code does not match".to_string(),
            )
        })
        .collect();
    for (id, exit, needle) in cases.iter().chain(&changed_chars) {
        for args in [vec!["redeem", id, "--json"], vec!["redeem", id]] {
            let run = issuer(s, &args);
            assert_eq!(run.code, *exit, "{id:?}: {}", run.stderr);
            // Under --json the error object is on stdout (docs/CLI.md §Errors).
            match args.contains(&"--json") {
                true => assert_eq!(json_of(&run)["kind"], "error", "{id:?}"),
                false => assert!(run.stdout.is_empty(), "{id:?} printed {}", run.stdout),
            }
            assert!(
                run.stderr.contains(needle.as_str()),
                "{id:?}: stderr {:?} should say {needle:?}",
                run.stderr
            );
            assert!(
                run.stderr.contains("nothing was recorded") || *exit == 2,
                "{id:?}: {}",
                run.stderr
            );
        }
    }
    // Refused before the ledger was even opened.
    assert!(!Store::new(s).ledger_path().exists());
    let l = ledger(s);
    assert_eq!(l["units"], 0);
    assert_eq!(l["blocks"].as_array().map(Vec::len), Some(0));
    // And the real unit was left payable, once sold.
    sold(s, &[&u.id]);
    let paid = redeem(s, &u.id);
    assert_eq!(paid.code, 0, "{}", paid.stderr);
    assert_eq!(ledger_units(s), 1);
}

#[test]
fn a_revealed_emission_pays_nothing() {
    let store = fresh_store();
    let s = store.path();
    let u = first_winner(6000);
    assert_eq!(issuer(s, &["close", "--emission", "1"]).code, 0);
    assert_eq!(
        issuer(
            s,
            &[
                "end-claims",
                "--emission",
                "1",
                "--force",
                "--reason",
                "no claim deadline set"
            ]
        )
        .code,
        0
    );
    let reveal_file = s.join("reveal.json");
    let reveal = issuer(
        s,
        &[
            "reveal",
            "--emission",
            "1",
            "--out",
            reveal_file.to_str().expect("utf-8 path"),
        ],
    );
    assert_eq!(reveal.code, 0, "{}", reveal.stderr);
    let run = redeem(s, &u.id);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("revealed"), "{}", run.stderr);
    assert_eq!(ledger_units(s), 0);
}

// ---------------------------------------------------------------------------
// Tampered blocks
// ---------------------------------------------------------------------------

fn flip_byte(path: &Path, at: u64) {
    let mut bytes = std::fs::read(path).expect("read block");
    bytes[at as usize] ^= 0x01;
    std::fs::write(path, bytes).expect("write block");
}

/// File offset and length of chunk `chunk`'s ciphertext, read from the
/// chunk index (docs/FORMAT.md: the header's length is the u16 LE at byte
/// 10; index entries of 80 bytes follow it, each starting with the chunk's
/// u64 LE offset and u32 LE length).
fn chunk_place(path: &Path, chunk: u32) -> (u64, u64) {
    let bytes = std::fs::read(path).expect("read block");
    let header_len = u16::from_le_bytes([bytes[10], bytes[11]]) as usize;
    let entry = header_len + 80 * chunk as usize;
    let offset = u64::from_le_bytes(bytes[entry..entry + 8].try_into().expect("8 bytes"));
    let length = u32::from_le_bytes(bytes[entry + 8..entry + 12].try_into().expect("4 bytes"));
    (offset, u64::from(length))
}

#[test]
fn a_flipped_byte_in_the_units_chunk_is_refused_and_nothing_recorded() {
    let store = fresh_store();
    let s = store.path();
    let block = s.join(BLOCK);
    let chunk = 3;
    let u = first_winner(chunk * CHUNK_UNITS + 17);
    assert_eq!(u.index / CHUNK_UNITS, chunk);
    let (offset, length) = chunk_place(&block, chunk);
    flip_byte(&block, offset + length / 2);

    for args in [
        vec!["redeem", &u.id, "--json"],
        vec!["redeem", &u.id, "--check"],
    ] {
        let run = issuer(s, &args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("block refused"), "{}", run.stderr);
        assert!(
            run.stderr
                .contains("chunk 3 does not match its sealed digest"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(ledger_units(s), 0);
    // Random access: a unit of an untouched chunk is still authenticated
    // by the seal, the index and its own chunk, and pays.
    let other = first_winner((chunk + 1) * CHUNK_UNITS);
    sold(s, &[&other.id]);
    let ok = redeem(s, &other.id);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_eq!(ledger_units(s), 1);
}

#[test]
fn a_flipped_byte_in_the_header_is_refused_and_nothing_recorded() {
    let u = first_winner(7000);
    // Header offsets (docs/FORMAT.md §Header): the seed commitment is at
    // bytes 52..84, the Merkle root at 84..116; both are under the seal.
    for (field, at) in [("seed commitment", 59), ("merkle root", 90)] {
        let store = fresh_store();
        let s = store.path();
        flip_byte(&s.join(BLOCK), at);
        let run = redeem(s, &u.id);
        assert_eq!(run.code, 1, "{field}: {}", run.stderr);
        assert_eq!(json_of(&run)["error"], "block_rejected", "{field}");
        assert!(
            run.stderr
                .contains("block refused: its seal does not verify"),
            "{field}: {}",
            run.stderr
        );
        assert_eq!(ledger_units(s), 0, "{field}");
    }
}

// ---------------------------------------------------------------------------
// Concurrency and crashes
// ---------------------------------------------------------------------------

#[test]
fn sixteen_processes_on_one_id_one_success() {
    // Several rounds, each on a ledger that does not exist yet, so the
    // processes also race to create it.
    let store = fresh_store();
    let s = store.path();
    for round in 0..6u32 {
        let ledger_path = Store::new(s).ledger_path();
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", ledger_path.display()));
        }
        // A new ledger is another ledger: the emission's binding to the
        // one deleted goes with it.
        let _ = std::fs::remove_file(s.join("emissions/ile-au-tresor/e000001/ledger.json"));
        let u = if round % 2 == 0 {
            first_winner(8000 + round * 100)
        } else {
            first_loser(8000 + round * 100)
        };
        // The sale is in the ledger: the racers now share a ledger made
        // by the sale, no longer one none of them has made yet.
        sold(s, &[&u.id]);
        let children: Vec<Child> = (0..16)
            .map(|_| {
                Command::new(ISSUER)
                    .arg("--store")
                    .arg(s)
                    .args(["redeem", &u.id, "--json"])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn issuer")
            })
            .collect();
        let runs: Vec<Run> = children
            .into_iter()
            .map(|c| {
                let out = c.wait_with_output().expect("wait");
                Run {
                    code: out.status.code().expect("not killed"),
                    stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                }
            })
            .collect();
        let winners: Vec<&Run> = runs.iter().filter(|r| r.code == 0).collect();
        assert_eq!(winners.len(), 1, "round {round}: exactly one success");
        let at = json_of(winners[0])["redeemed_at"]
            .as_str()
            .expect("redeemed_at")
            .to_string();
        for r in runs.iter().filter(|r| r.code != 0) {
            assert_eq!(r.code, 1, "round {round}: {}", r.stderr);
            assert!(r.stderr.contains("already redeemed"), "{}", r.stderr);
            assert!(
                r.stderr.contains(&at),
                "names the one success: {}",
                r.stderr
            );
        }
        let l = ledger(s);
        assert_eq!(l["units"], 1, "round {round}");
        assert_eq!(cents(l["paid"].as_str().expect("paid")), cents(&u.prize));
    }
}

/// The SHA-256 digest of the ledger as docs/REDEMPTION.md §Digest defines
/// it, computed from the rows with SQL of the test's own.
fn independent_digest(conn: &Connection) -> String {
    let mut stmt = conn
        .prepare(
            "SELECT game, emission, block, unit_index, unit_id, lot, prize_cents,
                    record_sha256, redeemed_at
             FROM redemptions ORDER BY game, emission, block, unit_index",
        )
        .expect("select rows");
    let mut hasher = Sha256::new();
    let mut rows = stmt.query([]).expect("query");
    while let Some(r) = rows.next().expect("row") {
        let line = format!(
            "{}|{}|{}|{}|{}|{}|{}|{}|{}\n",
            r.get::<_, String>(0).expect("game"),
            r.get::<_, i64>(1).expect("emission"),
            r.get::<_, i64>(2).expect("block"),
            r.get::<_, i64>(3).expect("index"),
            r.get::<_, String>(4).expect("unit_id"),
            r.get::<_, i64>(5).expect("lot"),
            r.get::<_, i64>(6).expect("prize"),
            r.get::<_, String>(7).expect("record_sha256"),
            r.get::<_, String>(8).expect("redeemed_at"),
        );
        hasher.update(line.as_bytes());
    }
    hex::encode(hasher.finalize())
}

fn open_ledger(store: &Path) -> Connection {
    let conn = Connection::open(Store::new(store).ledger_path()).expect("open ledger");
    conn.busy_timeout(Duration::from_secs(60))
        .expect("busy timeout");
    conn
}

fn recorded_indexes(conn: &Connection) -> Vec<u32> {
    let mut stmt = conn
        .prepare("SELECT unit_index FROM redemptions ORDER BY unit_index")
        .expect("select");
    let rows = stmt
        .query_map([], |r| r.get::<_, u32>(0))
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows");
    rows
}

#[test]
fn sixteen_processes_redeem_a_thousand_ids_and_the_totals_reconcile() {
    let store = fresh_store();
    let s = store.path();
    // Spread over every chunk of the block, winners and losers alike.
    let chosen: Vec<&Unit> = (0..1000u32).map(|k| unit(k * 449 + 3)).collect();
    let expected_cents: u64 = chosen.iter().map(|u| cents(&u.prize)).sum();
    let expected_winners = chosen.iter().filter(|u| u.lot.is_some()).count() as u64;
    assert!(expected_winners > 0 && expected_cents > 0);
    sold(s, &chosen.iter().map(|u| u.id.as_str()).collect::<Vec<_>>());

    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..16)
            .map(|w| {
                let mine: Vec<&Unit> = chosen.iter().skip(w).step_by(16).copied().collect();
                scope.spawn(move || {
                    mine.iter()
                        .filter_map(|u| {
                            let run = redeem(s, &u.id);
                            (run.code != 0)
                                .then(|| format!("{}: exit {}: {}", u.id, run.code, run.stderr))
                        })
                        .collect::<Vec<String>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker"))
            .collect()
    });
    assert!(failures.is_empty(), "{failures:#?}");

    let l = ledger(s);
    assert_eq!(l["units"], 1000);
    assert_eq!(l["reconciled"], true);
    assert_eq!(l["integrity_ok"], true);
    assert_eq!(cents(l["paid"].as_str().expect("paid")), expected_cents);
    let b = &l["blocks"][0];
    assert_eq!(b["units"], 1000);
    assert_eq!(b["winners"], expected_winners);
    assert_eq!(cents(b["paid"].as_str().expect("paid")), expected_cents);

    let conn = open_ledger(s);
    let want: Vec<u32> = chosen.iter().map(|u| u.index).collect();
    assert_eq!(recorded_indexes(&conn), want);
    let (units, paid): (i64, i64) = conn
        .query_row("SELECT units, paid_cents FROM block_totals", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("block totals");
    assert_eq!((units, paid as u64), (1000, expected_cents));
    assert_eq!(l["digest"], independent_digest(&conn).as_str());
}

/// Rows recorded so far (0 while the ledger is still being created).
fn rows_now(store: &Path) -> usize {
    let path = Store::new(store).ledger_path();
    if !path.exists() {
        return 0;
    }
    let conn = open_ledger(store);
    conn.query_row("SELECT COUNT(*) FROM redemptions", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_or(0, |n| n as usize)
}

/// The ledger after a crash: it opens, SQLite's integrity check passes,
/// each unit is there at most once, and the running totals still equal
/// the rows (they are written in the same transaction).
fn assert_ledger_sound(store: &Path, ids: &[&Unit]) -> BTreeSet<u32> {
    let conn = open_ledger(store);
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(integrity, "ok");
    let recorded = recorded_indexes(&conn);
    let distinct: BTreeSet<u32> = recorded.iter().copied().collect();
    assert_eq!(distinct.len(), recorded.len(), "a unit recorded twice");
    let allowed: BTreeSet<u32> = ids.iter().map(|u| u.index).collect();
    assert!(distinct.is_subset(&allowed));
    let l = ledger(store);
    assert_eq!(l["integrity_ok"], true);
    assert_eq!(l["reconciled"], true);
    assert_eq!(l["units"].as_u64(), Some(recorded.len() as u64));
    let expected: u64 = ids
        .iter()
        .filter(|u| distinct.contains(&u.index))
        .map(|u| cents(&u.prize))
        .sum();
    assert_eq!(cents(l["paid"].as_str().expect("paid")), expected);
    distinct
}

#[test]
fn sigkill_in_the_middle_of_redemptions_leaves_a_sound_ledger() {
    let store = fresh_store();
    let s = store.path();
    let ids: Vec<&Unit> = (0..400u32).map(|k| unit(k * 1117 + 11)).collect();
    sold(s, &ids.iter().map(|u| u.id.as_str()).collect::<Vec<_>>());
    let mut recorded = BTreeSet::new();
    // Several kills, each after the loop has recorded a few more units, so
    // they land at different points of a redemption.
    for round in 1..=5 {
        let remaining: Vec<&str> = ids
            .iter()
            .filter(|u| !recorded.contains(&u.index))
            .map(|u| u.id.as_str())
            .collect();
        let list = s.join("ids.txt");
        std::fs::write(&list, remaining.join("\n") + "\n").expect("write ids");
        let mut child = Command::new("bash")
            .arg("-c")
            .arg(r#"while read -r id; do "$0" --store "$1" redeem "$id" >/dev/null 2>&1; done < "$2""#)
            .arg(ISSUER)
            .arg(s)
            .arg(&list)
            .process_group(0)
            .spawn()
            .expect("spawn the redemption loop");
        let target = recorded.len() + 15 + 3 * round;
        let deadline = Instant::now() + Duration::from_secs(120);
        while rows_now(s) < target {
            assert!(Instant::now() < deadline, "the loop made no progress");
            assert!(
                child.try_wait().expect("poll loop").is_none(),
                "the loop ended before it was killed"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let kill = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .status()
            .expect("run kill");
        assert!(kill.success());
        child.wait().expect("reap the loop");
        let now = assert_ledger_sound(s, &ids);
        assert!(now.is_superset(&recorded));
        assert!(now.len() >= target);
        recorded = now;
    }

    // Rerunning every ID (through the library: the kills above are what
    // needs processes): the recorded ones are refused, the rest pay.
    let issuer_store = ticket_issuer::store::Store::new(s);
    let secrets = issuer_store.secrets().expect("secrets");
    let public_key = issuer_store.public_key().expect("public key");
    let keys = ticket_issuer::redeem::RedeemKeys {
        public_key: &public_key,
        access: ticket_issuer::records_key::KeyAccess {
            secrets: Some(&secrets),
            files: &[],
        },
    };
    for u in &ids {
        let id = u.id.parse().expect("a valid ID");
        let outcome = ticket_issuer::redeem::redeem(&issuer_store, &keys, &id, None, false);
        match outcome {
            Err(ticket_issuer::Error::AlreadyRedeemed { .. }) => {
                assert!(recorded.contains(&u.index), "{} was not recorded", u.id)
            }
            Ok(_) => assert!(!recorded.contains(&u.index), "{} paid twice", u.id),
            Err(other) => panic!("{}: {other}", u.id),
        }
    }
    let all = assert_ledger_sound(s, &ids);
    assert_eq!(all.len(), ids.len());
}

// ---------------------------------------------------------------------------
// The proof
// ---------------------------------------------------------------------------

#[test]
fn the_printed_proof_verifies_under_rfc9162_and_tampering_fails() {
    let store = fresh_store();
    let s = store.path();
    let root = hash_of(&fixture().merkle_root);
    sold(s, &[&unit(0).id]);
    // First and last leaf, a chunk boundary, the partial last chunk.
    let last = BLOCK_UNITS - 1;
    let indexes = [
        0,
        1,
        CHUNK_UNITS - 1,
        CHUNK_UNITS,
        123_457,
        109 * CHUNK_UNITS + 5,
        last,
    ];
    for (n, &index) in indexes.iter().enumerate() {
        let u = unit(index);
        // The first one is paid for real; the others checked (same proof).
        let run = if n == 0 {
            redeem(s, &u.id)
        } else {
            issuer(s, &["redeem", &u.id, "--check", "--json"])
        };
        assert_eq!(run.code, 0, "{}: {}", u.id, run.stderr);
        let report = json_of(&run);
        let p = proof_of(&report);
        assert_eq!(p.root, root, "the root generate printed");
        assert_eq!(p.leaf_index, u64::from(index));
        assert_eq!(p.tree_size, u64::from(BLOCK_UNITS));
        assert!(
            rfc9162_verify_inclusion(p.leaf_index, p.tree_size, &p.leaf, &p.path, &p.root),
            "unit {index}: proof does not verify"
        );

        let verify = |leaf_index, tree_size, leaf: &Hash, path: &[Hash]| {
            rfc9162_verify_inclusion(leaf_index, tree_size, leaf, path, &root)
        };
        for i in 0..p.path.len() {
            for bit in [0u8, 7] {
                let mut path = p.path.clone();
                path[i][(i * 5) % 32] ^= 1 << bit;
                assert!(
                    !verify(p.leaf_index, p.tree_size, &p.leaf, &path),
                    "unit {index}: flipped bit in proof element {i} accepted"
                );
            }
        }
        let mut record = hex::decode(report["record"].as_str().expect("record")).expect("hex");
        record[0] ^= 0x80;
        assert!(!verify(
            p.leaf_index,
            p.tree_size,
            &rfc_leaf_hash(&record),
            &p.path
        ));
        let mut shorter = p.path.clone();
        shorter.pop();
        assert!(!verify(p.leaf_index, p.tree_size, &p.leaf, &shorter));
        let mut longer = p.path.clone();
        longer.push(p.leaf);
        assert!(!verify(p.leaf_index, p.tree_size, &p.leaf, &longer));
        let neighbour = if index == last { index - 1 } else { index + 1 };
        assert!(!verify(u64::from(neighbour), p.tree_size, &p.leaf, &p.path));
        // (A tree size off by one can share this leaf's path shape; the
        // tree size is bound by the seal, so only a shape change is tested.)
        assert!(!verify(p.leaf_index, p.tree_size * 2, &p.leaf, &p.path));
        assert!(!rfc9162_verify_inclusion(
            p.leaf_index,
            p.tree_size,
            &p.leaf,
            &p.path,
            &sha256(&[b"another root"])
        ));
    }
    assert_eq!(ledger_units(s), 1);
}

// ---------------------------------------------------------------------------
// A redemption service without the master secret
// ---------------------------------------------------------------------------

#[test]
fn a_service_with_only_the_records_key_redeems_and_still_checks_codes() {
    let issuer_store = fresh_store();
    let service = TempDir::new().expect("temp dir");
    let s2 = service.path().join("service-store");
    let key_file = service.path().join("records-key.json");
    let public_key = service.path().join("issuer.pub.pem");
    let exported = issuer(
        issuer_store.path(),
        &[
            "keys",
            "export-records-key",
            "--emission",
            "1",
            "--out",
            key_file.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(exported.code, 0, "{}", exported.stderr);
    // The issuer closes the emission before any sale; the service gets the
    // block with the emission's signed manifest, which says it is closed.
    assert_eq!(
        issuer(issuer_store.path(), &["close", "--emission", "1"]).code,
        0
    );
    let emission_dir = Path::new(BLOCK).parent().expect("parent");
    common::copy_tree(
        &issuer_store.path().join(emission_dir),
        &s2.join(emission_dir),
    );
    std::fs::copy(
        Store::new(issuer_store.path()).public_key_path(),
        &public_key,
    )
    .expect("copy public key");
    assert!(!Store::new(&s2).master_path().exists());
    let pk = public_key.to_str().expect("utf-8");
    let rk = key_file.to_str().expect("utf-8");
    let service_redeem = |id: &str| {
        issuer(
            &s2,
            &[
                "redeem",
                id,
                "--json",
                "--public-key",
                pk,
                "--records-key",
                rk,
            ],
        )
    };

    let u = first_winner(9000);
    // Sold on the service's ledger, with the service's keys only.
    let marked = issuer_with_input(
        &s2,
        &[
            "mark-sold",
            "--emission",
            "1",
            "--ids",
            "-",
            "--public-key",
            pk,
            "--records-key",
            rk,
        ],
        &format!("{}\n", u.id),
    );
    assert_eq!(marked.code, 0, "{}", marked.stderr);
    let run = service_redeem(&u.id);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = json_of(&run);
    assert_eq!(r["prize"], u.prize.as_str());
    assert_eq!(r["merkle_root"], fixture().merkle_root.as_str());

    // Without the master secret the code is checked against the record.
    let other = first_winner(u.index + 1);
    for pos in [0, 7] {
        let bad = with_check_char_changed(&other.id, pos);
        let refused = service_redeem(&bad);
        assert_eq!(refused.code, 1, "{bad}: {}", refused.stderr);
        assert!(refused.stderr.contains("check code"), "{}", refused.stderr);
    }
    let unknown = service_redeem(&valid_id(issuer_store.path(), 1, 2, 5));
    assert_eq!(unknown.code, 1, "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains("no block 2 of emission 1"),
        "{}",
        unknown.stderr
    );
    let malformed = service_redeem("IAT-1-1-5");
    assert_eq!(malformed.code, 2, "{}", malformed.stderr);
    // Named as malformed before the missing keys are even looked for.
    let malformed = issuer(&s2, &["redeem", "IAT-1-1-5"]);
    assert_eq!(malformed.code, 2, "{}", malformed.stderr);
    assert!(
        malformed.stderr.contains("is malformed"),
        "{}",
        malformed.stderr
    );

    // No records key: told what to pass.
    let no_key = issuer(&s2, &["redeem", &other.id, "--public-key", pk]);
    assert_eq!(no_key.code, 2, "{}", no_key.stderr);
    assert!(no_key.stderr.contains("--records-key"), "{}", no_key.stderr);
    // Another issuer's public key: the block is refused.
    let stranger = service.path().join("stranger");
    assert_eq!(issuer(&stranger, &["keygen"]).code, 0);
    let foreign_pk = Store::new(&stranger).public_key_path();
    let foreign = issuer(
        &s2,
        &[
            "redeem",
            &other.id,
            "--public-key",
            foreign_pk.to_str().expect("utf-8"),
            "--records-key",
            rk,
        ],
    );
    assert_eq!(foreign.code, 1, "{}", foreign.stderr);
    assert!(
        foreign.stderr.contains("block refused"),
        "{}",
        foreign.stderr
    );

    let l = ledger(&s2);
    assert_eq!(l["units"], 1);
    assert_eq!(cents(l["paid"].as_str().expect("paid")), cents(&u.prize));
    assert_eq!(
        ledger_units(issuer_store.path()),
        0,
        "the issuer's own ledger is untouched"
    );
}

/// Issue 22: a node without the master secret serves every emission it
/// holds: `--records-key` repeats and takes a folder of key files or a
/// reveal file; each block uses the key of its own emission, and a block
/// with none given is refused naming the keys that were.
#[test]
fn a_node_without_the_master_secret_sells_every_emission_it_has_keys_for() {
    let issuer_store = fresh_store();
    let s1 = issuer_store.path();
    common::generate_te(s1, 2, 50);
    for (game, emission) in [("ile-au-tresor", "1"), ("tresors-ensables", "2")] {
        issuer(s1, &["close", "--emission", emission, "--game", game]).expect_code(0);
    }
    let service = TempDir::new().unwrap();
    let dir = service.path();
    let folder = dir.join("keys-folder");
    std::fs::create_dir(&folder).unwrap();
    let (e1, e2) = (dir.join("e1.json"), folder.join("e2.json"));
    for (emission, out) in [("1", &e1), ("2", &e2)] {
        let out = out.to_str().unwrap();
        let args = [
            "keys",
            "export-records-key",
            "--emission",
            emission,
            "--out",
            out,
        ];
        issuer(s1, &args).expect_code(0);
    }
    let node = dir.join("node");
    common::copy_tree(&s1.join("emissions"), &node.join("emissions"));
    let pk = dir.join("issuer.pub.pem");
    std::fs::copy(Store::new(s1).public_key_path(), &pk).unwrap();
    let pk = pk.to_str().unwrap();
    let sell = |game: &str, keys: &[&Path]| {
        let mut args = vec![
            "sell",
            "--game",
            game,
            "--price",
            "1",
            "--json",
            "--public-key",
            pk,
        ];
        for k in keys {
            args.extend(["--records-key", k.to_str().unwrap()]);
        }
        issuer(&node, &args)
    };
    // One emission's key only: the other game's sale names what is missing.
    let refused = sell("tresors-ensables", &[&e1]).expect_code(2);
    assert_eq!(
        refused.json()["error"],
        "wrong_records_key",
        "{}",
        refused.stdout
    );
    assert!(
        refused
            .stdout
            .contains("no records key given is for tresors-ensables emission 2 block 1"),
        "{}",
        refused.stdout
    );
    // Both keys (a file and a folder): both games sell.
    let te_sale = sell("tresors-ensables", &[&e1, &folder])
        .expect_code(0)
        .json();
    assert_eq!(te_sale["game"], "tresors-ensables", "{te_sale}");
    let iat_sale = sell("ile-au-tresor", &[&e1, &folder]).expect_code(0).json();
    assert_eq!(iat_sale["game"], "ile-au-tresor", "{iat_sale}");

    // After the end of claims, the reveal file is a records key too.
    let reveal = dir.join("reveal-e2.json");
    let reveal_path = reveal.to_str().unwrap();
    issuer(
        s1,
        &[
            "end-claims",
            "--emission",
            "2",
            "--game",
            "tresors-ensables",
            "--force",
            "--reason",
            "no claim deadline set",
        ],
    )
    .expect_code(0);
    let args = [
        "reveal",
        "--emission",
        "2",
        "--game",
        "tresors-ensables",
        "--out",
        reveal_path,
    ];
    issuer(s1, &args).expect_code(0);
    let id = te_sale["id"].as_str().unwrap();
    let args = [
        "redeem",
        id,
        "--check",
        "--json",
        "--public-key",
        pk,
        "--records-key",
        reveal_path,
    ];
    let check = issuer(&node, &args).expect_code(0).json();
    assert_eq!(check["id"], id, "{check}");
}
