//! `issuer rng-stream`: a revealed block's raw ChaCha20 stream for a test
//! lab. The bytes are OpenSSL's ChaCha20 as docs/FORMAT.md §Randomness
//! says (its shell block, run as written), the words `Stream` draws from,
//! and unit i's payload drawn again from stream i + 1 is the block's; the
//! refusals (no reveal, no such block, a bad size, a full disk) leave no
//! file behind.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;
use sha2::{Digest, Sha256};
use tempfile::TempDir;
use ticket_issuer::rng::Stream;

use crate::common::{issuer, process_dir, te_block_path, te_store, Run, ISSUER};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A store whose Trésors Ensablés emission 1 (one block of 20 units) is
/// revealed, its reveal file beside it, and block 1's seed.
struct Revealed {
    store: PathBuf,
    reveal: PathBuf,
    seed: [u8; 32],
}

/// Made once per test run, in a folder named after this process.
fn revealed() -> &'static Revealed {
    static REVEALED: OnceLock<Revealed> = OnceLock::new();
    REVEALED.get_or_init(|| {
        let dir = process_dir("rng-stream-fixture-");
        let store = dir.join("store");
        issuer(&store, &["keygen"]).expect_code(0);
        crate::common::generate_te(&store, 1, 20);
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
        let reveal = dir.join("reveal.json");
        let args = ["reveal", "--emission", "1", "-o", reveal.to_str().unwrap()];
        issuer(&store, &args).expect_code(0);
        let file: Value = serde_json::from_slice(&std::fs::read(&reveal).unwrap()).unwrap();
        let seed = hex::decode(file["blocks"][0]["seed"].as_str().unwrap()).unwrap();
        Revealed {
            store,
            reveal,
            seed: seed.try_into().unwrap(),
        }
    })
}

/// `rng-stream` and `words` (split at spaces), then `--out OUT`.
fn rng_args(words: &str, out: &Path) -> Vec<String> {
    let mut args: Vec<String> = std::iter::once("rng-stream")
        .chain(words.split(' '))
        .map(String::from)
        .collect();
    args.extend(["--out".into(), out.display().to_string()]);
    args
}

/// `issuer rng-stream WORDS --out OUT EXTRA…` on `store`.
fn run_rng(store: &Path, words: &str, out: &Path, extra: &[&str]) -> Run {
    let args = rng_args(words, out);
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .chain(extra.iter().copied())
        .collect();
    issuer(store, &args)
}

/// `issuer rng-stream --emission 1 --block 1 --stream S --bytes SIZE --out OUT`
/// plus `extra`, on `store`.
fn rng_stream(store: &Path, stream: u64, size: &str, out: &Path, extra: &[&str]) -> Run {
    let words = format!("--emission 1 --block 1 --stream {stream} --bytes {size}");
    run_rng(store, &words, out, extra)
}

/// The first `n` bytes of stream `s` of `seed`, as `Stream`'s words.
fn words_of(seed: &[u8; 32], s: u64, n: usize) -> Vec<u8> {
    let mut stream = Stream::new(seed, s);
    (0..n / 4)
        .flat_map(|_| stream.next_u32().to_le_bytes())
        .collect()
}

/// The ```sh block of docs/FORMAT.md §Randomness.
fn documented_openssl_commands() -> String {
    let doc = std::fs::read_to_string(format!("{ROOT}/docs/FORMAT.md")).unwrap();
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Randomness"))
        .expect("FORMAT.md has a section \"Randomness\"");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("§Randomness has a ```sh block");
    assert!(block.contains("openssl enc -chacha20 -K \"$SEED\" -iv \"$IV\" -in zeros.bin"));
    assert!(block.contains("issuer rng-stream"));
    block.to_string()
}

/// Streams 0, 1 and 450,000 (a full-size block's last unit's) of the
/// revealed seed, 1 MiB each, are OpenSSL's ChaCha20 with the IV of
/// FORMAT.md: the section's commands, run as written from the reveal file
/// alone, compare them and say so; compared here again, and with `Stream`.
#[test]
fn the_stream_is_openssl_chacha20_as_format_md_says() {
    let r = revealed();
    let script = documented_openssl_commands();
    let bin_dir = Path::new(ISSUER).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    for s in [0u64, 1, 450_000] {
        let dir = TempDir::new().unwrap();
        let out = Command::new("bash")
            .args(["-euo", "pipefail", "-c", &script])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("ISSUER_STORE", dir.path().join("no-store"))
            .env("REVEAL", &r.reveal)
            .env("E", "1")
            .env("B", "1")
            .env("S", s.to_string())
            .env("SIZE", "1M")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "stream {s}: {stdout}\n{stderr}");
        assert!(
            stdout.contains(&format!("stream {s} of block 1: the same 1048576 bytes")),
            "{stdout}"
        );
        let ours = std::fs::read(dir.path().join("stream.bin")).unwrap();
        let theirs = std::fs::read(dir.path().join("openssl.bin")).unwrap();
        assert_eq!(ours.len(), 1 << 20);
        assert!(ours == theirs, "stream {s} differs from OpenSSL's");
        assert!(
            ours == words_of(&r.seed, s, 1 << 20),
            "stream {s}: not Stream's words"
        );
        assert!(
            !dir.path().join("no-store").exists(),
            "an auditor's run made a store"
        );
    }
}

/// The store's seeds (the default) and the reveal file's give the same
/// bytes; `--out -` writes them alone on stdout, the report on stderr; a
/// file's report is on stdout with the documented fields in order.
#[test]
fn the_store_or_the_reveal_file_give_the_same_bytes_to_a_file_or_stdout() {
    let r = revealed();
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("s7.bin");
    let run = rng_stream(&r.store, 7, "3KiB", &file, &["--json"]).expect_code(0);
    let report = run.json();
    let fields: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        fields,
        ["kind", "schema", "emission", "game", "block", "stream", "bytes", "out", "sha256"]
    );
    assert_eq!(report["kind"], "rng_stream");
    assert_eq!(report["game"], "tresors-ensables");
    assert_eq!(
        (report["emission"].as_u64(), report["block"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        (report["stream"].as_u64(), report["bytes"].as_u64()),
        (Some(7), Some(3072))
    );
    assert_eq!(report["out"], file.to_str().unwrap());
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes, words_of(&r.seed, 7, 3072));
    assert_eq!(report["sha256"], hex::encode(Sha256::digest(&bytes)));

    // To stdout, from the reveal file in a store that does not exist.
    let words = "--emission 1 --game tresors-ensables --block 1 --stream 7 --bytes 3K";
    let out = Command::new(ISSUER)
        .arg("--store")
        .arg(dir.path().join("no-store"))
        .args(rng_args(words, Path::new("-")))
        .arg("--reveal")
        .arg(&r.reveal)
        .arg("--json")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(out.stdout == bytes, "stdout is the stream alone");
    let on_stderr: Value = serde_json::from_str(stderr.trim()).unwrap();
    assert_eq!(on_stderr["sha256"], report["sha256"]);
    assert_eq!(on_stderr["out"], "-");
    assert!(!dir.path().join("no-store").exists());

    // In words: one line naming the block, the stream and the digest.
    let words = rng_stream(&r.store, 7, "3072", &file, &["--force"]).expect_code(0);
    assert_eq!(words.stdout.lines().count(), 1, "{}", words.stdout);
    for part in [
        "3072 bytes",
        "stream 7",
        "block 1",
        report["sha256"].as_str().unwrap(),
    ] {
        assert!(words.stdout.contains(part), "{part}: {}", words.stdout);
    }
}

/// docs/FORMAT.md §Randomness's bounded draw, over the words of a byte
/// string.
fn below(words: &mut impl Iterator<Item = u32>, n: u32) -> u32 {
    let t = n.wrapping_neg() % n;
    loop {
        let m = u64::from(words.next().expect("enough words")) * u64::from(n);
        if m as u32 >= t {
            return (m >> 32) as u32;
        }
    }
}

/// A Trésors Ensablés unit's board, chests and dice as its export line
/// writes them, drawn from `words` as docs/GAMES.md §Trésors Ensablés
/// §Generation says, literally.
fn tresors_unit(words: &mut impl Iterator<Item = u32>) -> Value {
    let rows = [
        ["blank", "life+1", "life+2"],
        ["trap-1", "trap-2", "trap-3"],
        ["trap-1", "blank", "life+1"],
    ];
    let mut board = vec!["blank"; 61];
    board[0] = "start";
    for s in 0..10 {
        let mut free: Vec<usize> = (0..5).collect();
        let offsets: Vec<usize> = (0..3)
            .map(|r| free.remove(below(words, 5 - r) as usize))
            .collect();
        for (row, offset) in rows.iter().zip(offsets) {
            let x = below(words, 10);
            board[6 * s + 1 + offset] = row[usize::from(x >= 3) + usize::from(x >= 7)];
        }
        board[6 * s + 6] = match s {
            9 => "gold",
            _ if s % 2 == 0 => "bronze",
            _ => "silver",
        };
    }
    let chests: Vec<&str> = (0..10)
        .map(|k| {
            if k == 9 {
                let x = below(words, 100_000);
                let line = [69_999, 84_999, 94_999, 99_899, 99_999]
                    .iter()
                    .filter(|t| x >= **t)
                    .count();
                return ["1", "2", "5", "10", "100", "10000"][line];
            }
            let x = below(words, 100);
            let values = match k % 2 {
                0 => ["0.1", "0.2", "0.5"],
                _ => ["0.5", "1", "2"],
            };
            values[usize::from(x >= 60) + usize::from(x >= 83)]
        })
        .collect();
    let mut dice = Vec::new();
    let mut square = 0;
    while square < 60 {
        let die = below(words, 6) + 1;
        dice.push(die);
        square = (square + die).min(60);
    }
    serde_json::json!({ "board": board, "chests": chests, "dice": dice })
}

/// Unit i's payload is drawn from stream i + 1 (FORMAT.md §Randomness):
/// drawn again from rng-stream's bytes of that stream, it is the unit the
/// block holds (its export line); stream i gives another unit.
#[test]
fn unit_i_is_drawn_from_the_head_of_stream_i_plus_1() {
    let r = revealed();
    let block = te_block_path(&r.store);
    let export = issuer(&r.store, &["export", block.to_str().unwrap()]).expect_code(0);
    let lines: Vec<Value> = export
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 20);
    let dir = TempDir::new().unwrap();
    for i in [0u64, 1, 19] {
        let file = dir.path().join(format!("unit-{i}.bin"));
        rng_stream(&r.store, i + 1, "2K", &file, &[]).expect_code(0);
        let bytes = std::fs::read(&file).unwrap();
        let mut words = bytes
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()));
        let unit = tresors_unit(&mut words);
        let line = &lines[i as usize];
        for field in ["board", "chests", "dice"] {
            assert_eq!(unit[field], line[field], "unit {i}: {field}");
        }
        let file = dir.path().join(format!("stream-{i}.bin"));
        rng_stream(&r.store, i, "2K", &file, &[]).expect_code(0);
        let bytes = std::fs::read(&file).unwrap();
        let mut words = bytes
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()));
        assert_ne!(
            tresors_unit(&mut words)["board"],
            line["board"],
            "stream {i}"
        );
    }
}

/// Asserts `run` is the JSON error `error` with exit `code`, its message
/// on stderr containing every one of `words`.
fn refused(run: &Run, code: i32, error: &str, words: &[&str]) {
    assert_eq!(run.code, code, "{}\n{}", run.stdout, run.stderr);
    let e = run.json();
    assert_eq!(e["kind"], "error");
    assert_eq!(e["error"], error, "{}", run.stdout);
    for w in words {
        assert!(run.stderr.contains(w), "{w:?} not in: {}", run.stderr);
    }
}

/// The files of `dir`, names only.
fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Before the reveal, an unknown emission or block, a reveal file of
/// another emission, an output that exists: refused with the code and exit
/// status of docs/CLI.md, no file written.
#[test]
fn refusals_name_the_emission_or_block_and_write_nothing() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("s.bin");
    let json = ["--json"];

    // Closed, claims not ended, not revealed: exit 1, and the way to the seeds.
    let (_closed, store) = te_store(10);
    let run = rng_stream(&store, 0, "1K", &out, &json);
    refused(
        &run,
        1,
        "emission_not_revealed",
        &[
            "emission 1",
            "end of its claims",
            "issuer reveal",
            "--reveal FILE",
        ],
    );
    assert_eq!(run.json()["emission"], 1);
    assert_eq!(run.json()["category"], "conflict");
    // Revealed, but in an auditor's copy of the store (no master secret).
    let r = revealed();
    let auditor = TempDir::new().unwrap();
    crate::common::copy_tree(
        &r.store.join("emissions"),
        &auditor.path().join("emissions"),
    );
    let run = rng_stream(auditor.path(), 0, "1K", &out, &json);
    refused(
        &run,
        1,
        "emission_not_revealed",
        &["no master secret", "--reveal FILE"],
    );

    // No emission 9; no block 2, in the store or in the reveal file.
    let run = run_rng(
        &r.store,
        "--emission 9 --block 1 --stream 0 --bytes 1K",
        &out,
        &json,
    );
    refused(&run, 1, "unknown_emission", &["emission 9"]);
    let reveal = r.reveal.to_str().unwrap();
    for extra in [&json[..], &["--json", "--reveal", reveal]] {
        let run = run_rng(
            &r.store,
            "--emission 1 --block 2 --stream 0 --bytes 1K",
            &out,
            extra,
        );
        refused(
            &run,
            1,
            "unknown_block",
            &["emission 1 has no block 2", "its blocks are 1"],
        );
        assert_eq!(run.json()["category"], "not_found");
    }
    // A reveal file of another emission.
    let words = "--emission 2 --block 1 --stream 0 --bytes 1K";
    let run = run_rng(&r.store, words, &out, &["--reveal", reveal, "--json"]);
    refused(&run, 2, "bad_file", &["emission 1, not of emission 2"]);
    assert!(
        files_in(dir.path()).is_empty(),
        "{:?}",
        files_in(dir.path())
    );

    // An output that exists is kept, unless --force.
    std::fs::write(&out, b"keep").unwrap();
    refused(
        &rng_stream(&r.store, 0, "1K", &out, &json),
        1,
        "output_exists",
        &["--force"],
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"keep");
    rng_stream(&r.store, 0, "1K", &out, &["--force"]).expect_code(0);
    assert_eq!(std::fs::read(&out).unwrap(), words_of(&r.seed, 0, 1024));
}

/// A size that is not bytes or K, M, G, T of them, 0, or over 1 TiB is a
/// usage error (exit 2), before anything is read or written.
#[test]
fn a_bad_size_is_a_usage_error() {
    let r = revealed();
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("s.bin");
    for size in ["12Q", "0", "0K", "1KB", "2T", "1.5M", ""] {
        let run = rng_stream(&r.store, 0, size, &out, &["--json"]).expect_code(2);
        assert!(run.stderr.contains("--bytes"), "{size}: {}", run.stderr);
    }
    assert!(files_in(dir.path()).is_empty());
    for (size, bytes) in [
        ("1", 1),
        ("5", 5),
        ("1k", 1024),
        ("2KiB", 2048),
        ("1MiB", 1 << 20),
    ] {
        let run = rng_stream(&r.store, 3, size, &out, &["--force", "--json"]).expect_code(0);
        assert_eq!(run.json()["bytes"], bytes, "{size}");
        assert_eq!(std::fs::metadata(&out).unwrap().len(), bytes, "{size}");
    }
    // A length that is not whole words ends inside the last one.
    rng_stream(&r.store, 3, "5", &out, &["--force"]).expect_code(0);
    assert_eq!(std::fs::read(&out).unwrap(), &words_of(&r.seed, 3, 8)[..5]);
}

/// A write that fails half-way (a full disk: here a file size limit, with
/// SIGXFSZ ignored so the write fails with EFBIG) is exit 3, and leaves
/// neither the output nor its temporary file.
#[test]
fn a_disk_that_fills_up_leaves_no_file_behind() {
    let r = revealed();
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("big.bin");
    let mut command = Command::new(ISSUER);
    command
        .arg("--store")
        .arg(&r.store)
        .args(rng_args(
            "--emission 1 --block 1 --stream 0 --bytes 16M",
            &out,
        ))
        .arg("--json");
    // SAFETY: only async-signal-safe calls, between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 1 << 20,
                rlim_max: 1 << 20,
            };
            match libc::setrlimit(libc::RLIMIT_FSIZE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let run = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{stdout}\n{stderr}");
    let e: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (e["error"].as_str(), e["category"].as_str()),
        (Some("io"), Some("unavailable"))
    );
    assert!(stderr.contains("big.bin"), "{stderr}");
    assert!(
        files_in(dir.path()).is_empty(),
        "{:?}",
        files_in(dir.path())
    );
}
