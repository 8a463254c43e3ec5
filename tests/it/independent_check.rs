//! docs/FORMAT.md is enough to check a block without this project's code.
//!
//! A block made by the `issuer` binary is checked by
//! tests/independent/check_block.py (Python, written from the document only)
//! and by the document's own shell commands (§Checking a block by hand, run
//! verbatim); both must agree with what `generate` printed and the
//! regulation's 1 € lot table, and reject tampered copies. The document's
//! randomness and derivation vectors are checked against OpenSSL and the
//! library.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::common::{copy_tree, process_dir, shared_block};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde_json::Value;
use tempfile::TempDir;
use ticket_issuer::block::build::{lot_order, records};
use ticket_issuer::block::reader::BlockFile;
use ticket_issuer::derive;
use ticket_issuer::game::Game;
use ticket_issuer::rng::Stream;
use ticket_issuer::test_support::ChunkPlace;
use ticket_issuer::unit_id::UnitId;

const ISSUER: &str = env!("CARGO_BIN_EXE_issuer");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One 1 € block of emission 1, its keys and its revealed seed, shared by
/// every test of this file (generating it takes about a second).
struct Made {
    dir: PathBuf,
    block: PathBuf,
    public_key: PathBuf,
    records_key: PathBuf,
    merkle_root: String,
    seed: String,
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn made() -> &'static Made {
    static MADE: OnceLock<Made> = OnceLock::new();
    MADE.get_or_init(|| {
        let dir = process_dir("independent_check-");
        let store = dir.join("store");
        let issuer = || {
            let mut c = Command::new(ISSUER);
            c.arg("--store").arg(&store).current_dir(&dir);
            c
        };
        // A copy of the shared block's store: closing and revealing change it.
        let shared = shared_block(100);
        copy_tree(&shared.store_dir, &store);
        let block = store.join(shared.path.strip_prefix(&shared.store_dir).unwrap());
        let header = BlockFile::open(&block).unwrap().header;
        let records_key = dir.join("records-key.json");
        run(issuer()
            .args(["keys", "export-records-key", "--emission", "1", "--out"])
            .arg(&records_key));
        run(issuer().args(["close", "--emission", "1"]));
        run(issuer().args([
            "end-claims",
            "--emission",
            "1",
            "--force",
            "--reason",
            "no claim deadline set",
        ]));
        let reveal = json(&run(issuer().args(["reveal", "--emission", "1"])));
        Made {
            block,
            public_key: store.join("keys/issuer.pub.pem"),
            records_key,
            merkle_root: hex::encode(header.merkle_root),
            seed: reveal["blocks"][0]["seed"].as_str().unwrap().to_string(),
            dir,
        }
    })
}

/// A scratch folder inside the shared one, removed when dropped.
fn scratch() -> TempDir {
    tempfile::tempdir_in(&made().dir).unwrap()
}

/// A copy of the block in `dir` with byte `at` (negative: from the end)
/// XORed with `mask`.
fn tampered(dir: &TempDir, at: i64, mask: u8) -> PathBuf {
    let m = made();
    let mut bytes = std::fs::read(&m.block).unwrap();
    let at = if at < 0 {
        bytes.len() - at.unsigned_abs() as usize
    } else {
        at as usize
    };
    bytes[at] ^= mask;
    let path = dir.path().join("tampered.tkb");
    std::fs::write(&path, bytes).unwrap();
    path
}

fn le_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// File offset of a byte in the middle of chunk `chunk`, read from the index
/// as docs/FORMAT.md §Chunk index lays it out.
fn inside_chunk(chunk: usize) -> i64 {
    let bytes = std::fs::read(&made().block).unwrap();
    let header_len = usize::from(u16::from_le_bytes([bytes[10], bytes[11]]));
    let entry = header_len + 80 * chunk;
    let length = u32::from_le_bytes(bytes[entry + 8..entry + 12].try_into().unwrap());
    (le_u64(&bytes, entry) + u64::from(length / 2)) as i64
}

/// The Python checker's checks that need no records key.
const KEYLESS_CHECKS: [&str; 5] = [
    "layout",
    "index_digest",
    "seal",
    "chunk_digests",
    "index_roots",
];

/// Runs the Python checker; returns its exit code, JSON summary and stderr.
fn python_check(block: &Path, with_key: bool, with_seed: bool) -> (i32, Option<Value>, String) {
    let m = made();
    run_checker(
        block,
        &m.public_key,
        with_key.then_some(m.records_key.as_path()),
        with_seed.then_some(m.seed.as_str()),
    )
}

/// Runs check_block.py on `block` with these keys; its exit code, JSON
/// summary and stderr.
fn run_checker(
    block: &Path,
    public_key: &Path,
    records_key: Option<&Path>,
    seed: Option<&str>,
) -> (i32, Option<Value>, String) {
    let mut cmd = Command::new("python3");
    cmd.arg(format!("{ROOT}/tests/independent/check_block.py"))
        .arg(block)
        .arg("--public-key")
        .arg(public_key);
    if let Some(key) = records_key {
        cmd.arg("--records-key").arg(key);
    }
    if let Some(seed) = seed {
        cmd.args(["--seed", seed]);
    }
    let out = cmd
        .output()
        .expect("python3 runs (with the `cryptography` package)");
    let summary = serde_json::from_slice(&out.stdout).ok();
    (
        out.status.code().unwrap_or(-1),
        summary,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 9: a small Trésors Ensablés block made by the binary is decoded by
/// the checker from FORMAT.md §Trésors Ensablés payload alone, every unit
/// replayed to the end against its prefix; its lots and total agree with
/// `issuer export`, and its check codes with the revealed seed.
#[test]
fn python_checker_replays_every_tresors_record() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let issuer = || {
        let mut c = Command::new(ISSUER);
        c.arg("--store").arg(&store);
        c
    };
    let generate = [
        "generate",
        "--game",
        "tresors-ensables",
        "--emission",
        "1",
        "--block",
        "1",
        "--units",
        "5000",
        "--quiet",
        "--json",
    ];
    let made = json(&run(issuer().args(generate)));
    let block = PathBuf::from(made["blocks"][0]["path"].as_str().unwrap());
    let records_key = dir.path().join("records-key.json");
    run(issuer()
        .args(["keys", "export-records-key", "--emission", "1", "--out"])
        .arg(&records_key));
    let export = run(issuer().arg("export").arg(&block));
    let (mut gold, mut total) = (0u64, 0u64);
    for line in String::from_utf8(export.stdout).unwrap().lines() {
        let unit: Value = serde_json::from_str(line).unwrap();
        if unit["lot"] == "coffre-or" {
            gold += 1;
        }
        let prize: Decimal = unit["prize"].as_str().unwrap().parse().unwrap();
        total += (prize * Decimal::ONE_HUNDRED).to_u64().unwrap();
    }
    assert!(gold > 0 && gold < 5000, "{gold} units reach the gold chest");
    run(issuer().args(["close", "--emission", "1"]));
    run(issuer().args([
        "end-claims",
        "--emission",
        "1",
        "--force",
        "--reason",
        "no claim deadline set",
    ]));
    let reveal = json(&run(issuer().args(["reveal", "--emission", "1"])));
    let seed = reveal["blocks"][0]["seed"].as_str().unwrap();
    let public_key = store.join("keys/issuer.pub.pem");
    let (code, summary, stderr) = run_checker(&block, &public_key, Some(&records_key), Some(seed));
    assert_eq!(code, 0, "checker failed: {stderr}");
    let s = summary.expect("a JSON summary");
    assert_eq!(s["game"], "tresors-ensables");
    assert_eq!(s["units"], 5000);
    assert_eq!(
        s["merkle_root_recomputed"],
        made["blocks"][0]["merkle_root"]
    );
    assert_eq!(s["lots"]["1"], gold);
    assert_eq!(s["lots"]["0"], 5000 - gold);
    assert_eq!(s["total_cents"], total);
    for check in ["records", "lot_table", "check_codes", "seed_commitment"] {
        assert_eq!(s["checks"][check], "passed", "{check}");
    }
}

#[test]
fn python_checker_agrees_with_the_issuer_on_every_record() {
    let m = made();
    let (code, summary, stderr) = python_check(&m.block, true, true);
    assert_eq!(code, 0, "checker failed: {stderr}");
    let s = summary.expect("a JSON summary");
    assert_eq!(s["ok"], true);
    assert_eq!(s["units"], 450_000);
    assert_eq!(s["price_cents"], 100);
    assert_eq!(s["merkle_root"], m.merkle_root.as_str());
    assert_eq!(s["merkle_root_recomputed"], m.merkle_root.as_str());
    // Article 3.2: the 1 € block's lots by code, and its losers.
    let expected = [
        ("0", 330_396),
        ("1", 1),
        ("2", 3),
        ("3", 100),
        ("4", 1_000),
        ("5", 500),
        ("6", 2_000),
        ("7", 26_000),
        ("8", 38_000),
        ("9", 52_000),
    ];
    for (code, count) in expected {
        assert_eq!(s["lots"][code], count, "lot {code}");
    }
    assert_eq!(s["lots"].as_object().unwrap().len(), expected.len());
    assert_eq!(s["total_cents"], 31_500_000);
    let checks = s["checks"].as_object().unwrap();
    for check in KEYLESS_CHECKS.into_iter().chain([
        "chunks",
        "subtree_roots",
        "records",
        "merkle_root",
        "lot_table",
        "seed_commitment",
        "lot_order",
        "check_codes",
    ]) {
        assert_eq!(checks.get(check), Some(&Value::from("passed")), "{check}");
    }
}

#[test]
fn python_checker_catches_a_flipped_chunk_byte_with_and_without_the_key() {
    let tmp = scratch();
    let path = tampered(&tmp, inside_chunk(5), 0x01);
    let (code, summary, stderr) = python_check(&path, true, false);
    assert_eq!(code, 1, "{stderr}");
    let s = summary.expect("a JSON summary");
    assert_eq!(s["ok"], false);
    // Without the key the digest catches it; with it, the AEAD tag too.
    assert_eq!(s["checks"]["chunk_digests"], "failed");
    assert_eq!(s["checks"]["chunks"], "failed");
    assert_eq!(s["checks"]["seal"], "passed");
    assert!(stderr.contains("chunk 5:"), "{stderr}");
}

#[test]
fn python_checker_catches_a_flipped_header_byte() {
    // Offset 84 is the first byte of the Merkle root (§Header).
    let tmp = scratch();
    let path = tampered(&tmp, 84, 0x80);
    let (code, summary, stderr) = python_check(&path, false, false);
    assert_eq!(code, 1, "{stderr}");
    let s = summary.expect("a JSON summary");
    assert_eq!(s["checks"]["seal"], "failed");
    assert_eq!(s["checks"]["index_roots"], "failed");
    assert_eq!(s["checks"]["chunk_digests"], "passed");
}

#[test]
fn python_checker_catches_a_flipped_seal_byte() {
    let tmp = scratch();
    let path = tampered(&tmp, -1, 0x04);
    let (code, summary, stderr) = python_check(&path, false, false);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(summary.expect("a JSON summary")["checks"]["seal"], "failed");
}

#[test]
fn python_checker_names_an_unknown_version_unsupported_not_corrupt() {
    // Offset 8: the format version, u16 LE (1 → 3).
    let tmp = scratch();
    let path = tampered(&tmp, 8, 0x02);
    let (code, summary, stderr) = python_check(&path, false, false);
    assert_eq!(code, 2, "{stderr}");
    assert!(summary.is_none());
    assert!(stderr.contains("unsupported format version 3"), "{stderr}");
}

/// The shell blocks of docs/FORMAT.md §Checking a block by hand, in order.
fn hand_check_script() -> String {
    let doc = std::fs::read_to_string(format!("{ROOT}/docs/FORMAT.md")).unwrap();
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Checking a block by hand"))
        .expect("FORMAT.md has a section \"Checking a block by hand\"");
    let mut script = String::new();
    let mut inside = false;
    for line in section.lines() {
        match (inside, line.trim_end()) {
            (false, "```sh") => inside = true,
            (true, "```") => inside = false,
            (true, l) => {
                script.push_str(l);
                script.push('\n');
            }
            _ => {}
        }
    }
    assert!(!inside, "unclosed ```sh block");
    assert!(script.contains("openssl pkeyutl -verify"), "{script}");
    script
}

fn hand_check(block: &Path) -> Output {
    let m = made();
    let work = scratch();
    Command::new("bash")
        .arg("-c")
        .arg(hand_check_script())
        .env("B", block)
        .env("PUB", &m.public_key)
        .env("RK", &m.records_key)
        .current_dir(work.path())
        .output()
        .expect("bash runs")
}

#[test]
fn documented_shell_commands_check_the_seal_the_digests_and_the_merkle_root() {
    let m = made();
    let out = hand_check(&m.block);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("Signature Verified Successfully"),
        "{stdout}"
    );
    assert!(stdout.contains("structure and seal OK"), "{stdout}");
    assert!(
        stdout.contains(&format!("merkle root {} OK", m.merkle_root)),
        "{stdout}"
    );
    assert!(stdout.contains("lots {0: 330396, 1: 1, 2: 3, 3: 100, 4: 1000, 5: 500, 6: 2000, 7: 26000, 8: 38000, 9: 52000} total 31500000 cents"), "{stdout}");
}

#[test]
fn documented_shell_commands_refuse_tampered_copies() {
    let tmp = scratch();
    let header = hand_check(&tampered(&tmp, 100, 0x10));
    let stdout = String::from_utf8_lossy(&header.stdout);
    assert!(!header.status.success(), "{stdout}");
    assert!(
        stdout.contains("Signature Verification Failure"),
        "{stdout}"
    );

    let chunk = hand_check(&tampered(&tmp, inside_chunk(0), 0x40));
    assert!(!chunk.status.success());
    let stderr = String::from_utf8_lossy(&chunk.stderr);
    assert!(stderr.contains("FAIL: chunk 0 digest"), "{stderr}");
}

/// Rewrites a block so that chunk `argv[5]`'s plaintext is two zstd frames
/// (its records cut in two, each compressed alone), encrypted with the
/// block's records key `argv[3]` in its place, then re-lays the index,
/// re-digests it and reseals the header with the issuer's key `argv[4]`:
/// the copy breaks only the rule "one frame per chunk".
const FORGE_TWO_FRAMES: &str = r#"
import hashlib, struct, subprocess, sys
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
src, dst, key, pem, forged = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3]), sys.argv[4], int(sys.argv[5])
b = bytearray(open(src, "rb").read())
hlen, = struct.unpack_from("<H", b, 10)
size, = struct.unpack_from("<H", b, 32)
chunks, = struct.unpack_from("<I", b, 40)
zstd = lambda args, data: subprocess.run(["zstd", "-q", "-c"] + args, input=data, capture_output=True, check=True).stdout
cts = []
for i in range(chunks):
    off, length, units = struct.unpack_from("<QII", b, hlen + 80 * i)
    ct = bytes(b[off:off + length])
    if i == forged:
        ad = bytes(b[0:10] + b[12:14] + b[16:24]) + struct.pack("<II", i, units)
        nonce = struct.pack("<I", i) + bytes(b[24:28] + b[14:16] + b[8:10])
        records = zstd(["-d"], ChaCha20Poly1305(key).decrypt(nonce, ct, ad))
        cut = units // 2 * size
        ct = ChaCha20Poly1305(key).encrypt(nonce, zstd([], records[:cut]) + zstd([], records[cut:]), ad)
    cts.append(ct)
at = hlen + 80 * chunks
for i, ct in enumerate(cts):
    entry = hlen + 80 * i
    struct.pack_into("<QI", b, entry, at, len(ct))
    b[entry + 48:entry + 80] = hashlib.sha256(ct).digest()
    at += len(ct)
struct.pack_into("<Q", b, 44, at)
b[116:148] = hashlib.sha256(bytes(b[hlen:hlen + 80 * chunks])).digest()
signer = serialization.load_pem_private_key(open(pem, "rb").read(), None)
body = bytes(b[:hlen + 80 * chunks]) + b"".join(cts)
open(dst, "wb").write(body + signer.sign(body[:hlen]))
"#;

/// A copy of the block, resealed, whose chunk `chunk` holds two zstd frames.
fn two_frame_copy(dir: &TempDir, chunk: usize) -> PathBuf {
    let m = made();
    let key_file: Value = serde_json::from_slice(&std::fs::read(&m.records_key).unwrap()).unwrap();
    let emission_key: [u8; 32] = hex::decode(key_file["key"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    let path = dir.path().join("two-frames.tkb");
    run(Command::new("python3")
        .args(["-c", FORGE_TWO_FRAMES])
        .arg(&m.block)
        .arg(&path)
        .arg(hex::encode(derive::block_records_key(&emission_key, 1)))
        .arg(m.dir.join("store/keys/issuer.key.pem"))
        .arg(chunk.to_string()));
    path
}

/// Decompressing all of a chunk's frames yields the right records, so only
/// a check of the frame count sees a chunk of two frames: the Python checker
/// and the documented commands both refuse it, while the seal, the layout
/// and every digest of the resealed copy hold.
#[test]
fn a_chunk_of_two_zstd_frames_is_refused() {
    let tmp = scratch();
    let path = two_frame_copy(&tmp, 3);

    let (code, summary, stderr) = python_check(&path, true, false);
    assert_eq!(code, 1, "{stderr}");
    let s = summary.expect("a JSON summary");
    for check in KEYLESS_CHECKS {
        assert_eq!(s["checks"][check], "passed", "{check}: {stderr}");
    }
    assert_eq!(s["checks"]["chunks"], "failed");
    assert!(
        stderr.contains("FAIL chunks: chunk 3: not one zstd frame"),
        "{stderr}"
    );

    let out = hand_check(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("structure and seal OK"), "{stdout}");
    assert!(
        stderr.contains("FAIL: chunk 3 is not one zstd frame"),
        "{stderr}"
    );
}

/// Stream `s` of a seed is OpenSSL's chacha20 with `-iv` = 8 zero bytes ‖ s
/// as 8 bytes LE (docs/FORMAT.md §Randomness).
#[test]
fn stream_is_openssl_chacha20_with_the_stream_number_as_nonce() {
    let seed: [u8; 32] = derive::sha256(b"any seed");
    for s in [0u64, 1, 2, 450_000, u64::MAX] {
        let mut iv = vec![0u8; 8];
        iv.extend_from_slice(&s.to_le_bytes());
        let mut child = Command::new("openssl")
            .args(["enc", "-chacha20", "-K", &hex::encode(seed), "-iv"])
            .arg(hex::encode(&iv))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("openssl runs");
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(&[0u8; 1024]).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout.len(), 1024);
        let mut stream = Stream::new(&seed, s);
        let ours: Vec<u8> = (0..256)
            .flat_map(|_| stream.next_u32().to_le_bytes())
            .collect();
        assert_eq!(ours, out.stdout, "stream {s}");
    }
}

/// Every vector docs/FORMAT.md prints holds for the library, and is printed
/// there verbatim (the values were computed from the document with Python).
#[test]
fn documented_vectors_hold() {
    let doc = std::fs::read_to_string(format!("{ROOT}/docs/FORMAT.md")).unwrap();
    let in_doc = |v: &str| assert!(doc.contains(v), "FORMAT.md lacks {v}");
    let master: [u8; 32] = std::array::from_fn(|i| i as u8);
    let game = Game::ILE_AU_TRESOR;

    let seed = derive::block_seed(&master, game, 1, 1);
    let seed_hex = "b65c41a7123688c71150931b337d7c57c7bfeb3d4d5096b86aa8420bb555f227";
    assert_eq!(hex::encode(seed), seed_hex);
    in_doc(seed_hex);
    let commitment = "a7417c3c2d8606514955b5714b4063fbc0cdd8f6aabbef7a723436227ddbd830";
    assert_eq!(hex::encode(derive::seed_commitment(&seed)), commitment);
    in_doc(commitment);
    for (index, code, id) in [
        (0, "3fc9fbbf82", "IAT-1-1-0-7Z4ZQFW2"),
        (1, "4d77b1167a", "IAT-1-1-1-9NVV25KT"),
        (449_999, "3df7d79270", "IAT-1-1-449999-7QVXF4KG"),
    ] {
        let check_code = derive::check_code(&seed, index);
        assert_eq!(hex::encode(check_code), code);
        let unit = UnitId {
            game,
            emission: 1,
            block: 1,
            index,
            check_code,
        };
        assert_eq!(unit.to_string(), id);
        assert_eq!(id.to_lowercase().parse::<UnitId>().unwrap(), unit);
        in_doc(code);
        in_doc(id);
    }
    // Crockford reading: I and L are 1, O is 0, any case.
    let ones = UnitId {
        game,
        emission: 7,
        block: 2,
        index: 5,
        check_code: [0x08, 0x42, 0x10, 0x84, 0x21],
    };
    assert_eq!(ones.to_string(), "IAT-7-2-5-11111111");
    assert_eq!("iat-7-2-5-IlLi1liL".parse::<UnitId>().unwrap(), ones);
    let zeros = UnitId {
        check_code: [0; 5],
        ..ones
    };
    assert_eq!("IAT-7-2-5-oO0OoO0o".parse::<UnitId>().unwrap(), zeros);

    let emission_key = derive::emission_records_key(&master, game, 1);
    let block_key = derive::block_records_key(&emission_key, 1);
    for (value, expected) in [
        (
            emission_key,
            "a096d00e7ad9b5230e604e18a61a2dc5369f01b09d8811ee5622774bef17e36f",
        ),
        (
            block_key,
            "ff8c7d35a1f77a9db1389ee9078366c28a33833032568bdd57758adc8444dc0d",
        ),
        (
            derive::records_key_id(&block_key),
            "961b69aa889ce9869043e19d253d942be6a30a17826e4c2451cb41c95c67aa5d",
        ),
    ] {
        assert_eq!(hex::encode(value), expected);
        in_doc(expected);
    }

    let place = ChunkPlace {
        game: game.id(),
        emission: 1,
        block: 1,
        chunk: 109,
        units: 3536,
        price_cents: 100,
        rules_version: 1,
    };
    let ad = "544b54424c4f434b0100010001000000010000006d000000d00d0000";
    assert_eq!(hex::encode(place.associated_data()), ad);
    assert_eq!(hex::encode(place.nonce()), "6d0000006400000001000100");
    in_doc(ad);
    in_doc("6d0000006400000001000100");

    // Randomness: the first words of streams 0 and 1 of seed 00 01 … 1f,
    // and the 1 € block's lot order from that seed.
    let test_seed: [u8; 32] = std::array::from_fn(|i| i as u8);
    for (s, words) in [
        (0, "7d2bfd39 6a19c5d9 7703bd8d 494adcb8"),
        (1, "02f1a42f 898e8050 e53152a2 e06edf0f"),
    ] {
        let mut stream = Stream::new(&test_seed, s);
        let got: Vec<String> = (0..4)
            .map(|_| format!("{:08x}", stream.next_u32()))
            .collect();
        assert_eq!(got.join(" "), words);
        in_doc(words);
    }
    let table = game.lot_table(100).unwrap();
    let lots = lot_order(&test_seed, &table, 450_000);
    let first: Vec<String> = lots[..24].iter().map(u8::to_string).collect();
    let first = first.join(" ");
    assert_eq!(first, "9 0 0 0 0 0 8 8 7 0 0 0 0 0 7 8 0 0 0 0 0 0 0 0");
    in_doc(&first);
    assert_eq!(lots.iter().position(|&l| l == 1), Some(31_429));
    let twos: Vec<usize> = (0..lots.len()).filter(|&i| lots[i] == 2).collect();
    assert_eq!(twos, [41_452, 162_781, 164_914]);
    in_doc("31429");
    in_doc("41452, 162781, 164914");

    // The example record of §Unit record: unit 0 of that seed at 1 €.
    let record = hex::encode(records(game, &test_seed, &table, &lots, 0, 1));
    assert_eq!(
        record,
        "00000000ba8caf020f0964000000080800000100040300010301\
         000103010203040303000404030505000707040305070206020003"
    );
    in_doc(
        "00000000 ba8caf020f 09 64000000 | 08 08 00 00 | 010004 030001 030100 010301 \
         020304 030300 040403 050500 070704 | 0305 0702 0602 0003",
    );
}
