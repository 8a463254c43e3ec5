//! The store's files in the states an operator or a second process puts
//! them in: a ledger this user cannot write, a manifest rewritten while it
//! is read, a block file replaced while it is verified.

use std::path::Path;
use std::process::Command;

use crate::common::{played, te_store, ISSUER};

/// `issuer --store STORE ARGS…`, as `nobody` when `as_nobody`:
/// (exit code, stdout, stderr).
fn issuer_as(store: &Path, as_nobody: bool, args: &[&str]) -> (i32, String, String) {
    let mut command = if as_nobody {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--", ISSUER]);
        c
    } else {
        Command::new(ISSUER)
    };
    let out = command
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().expect("exited, not killed"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// Contract 19: a ledger database this user can read but not write (the
/// file is another user's, or read-only) makes a writing command exit 3
/// `ledger_unavailable` naming the cause, nothing recorded (docs/CLI.md);
/// a reading command still reads it, and the file keeps the mode its owner
/// gave it. As root, whom permission bits do not stop, the commands run as
/// `nobody` on a store of theirs whose ledger is root's, mode 0644 (before
/// the fix: exit 2 `io`, "Operation not permitted"); otherwise the ledger
/// is made 0400 (before the fix: turned back to 0600 by the next open).
#[test]
fn a_ledger_this_user_cannot_write_is_ledger_unavailable_exit_3() {
    let (dir, store) = te_store(20);
    let sold = crate::common::issuer(&store, &["sell", "--game", "tresors-ensables", "--json"])
        .expect_code(0)
        .json();
    let id = sold["id"].as_str().unwrap().to_string();
    played(&store, None, &id, None);
    let ledger = store.join("ledger.sqlite");
    let as_root = running_as_root();
    let read_only_mode = if as_root {
        let chown = |owner: &str, path: &Path, recursive: bool| {
            let mut c = Command::new("chown");
            if recursive {
                c.arg("-R");
            }
            assert!(c.arg(owner).arg(path).status().unwrap().success());
        };
        chown("nobody:nogroup", dir.path(), true);
        chown("root:root", &ledger, false);
        std::fs::set_permissions(&ledger, std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .unwrap();
        0o644
    } else {
        std::fs::set_permissions(&ledger, std::os::unix::fs::PermissionsExt::from_mode(0o400))
            .unwrap();
        0o400
    };
    for args in [
        &["redeem", &id, "--json"][..],
        &["sell", "--game", "tresors-ensables", "--json"],
    ] {
        let (code, stdout, stderr) = issuer_as(&store, as_root, args);
        assert_eq!(code, 3, "{args:?}: {stdout}{stderr}");
        let error: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(error["error"], "ledger_unavailable", "{args:?}: {stdout}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("not writable by this user"),
            "{args:?}: {stdout}"
        );
        assert_eq!(mode(&ledger), read_only_mode, "{args:?}");
    }
    // Reading commands read it; nothing was recorded.
    let (code, stdout, stderr) = issuer_as(&store, as_root, &["ledger", "--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["units"], 0, "{summary}");
    assert_eq!(mode(&ledger), read_only_mode);
}

/// Contract 19: `verify` reports the SHA-256 of the bytes it checked
/// (STYLE.md: check the bytes as read), not of a second open of the path.
/// Another thread keeps replacing the path by one of two blocks (a rename,
/// as a copy tool or a rerun puts a file in place) while it is verified
/// over and over; every report's digest must be that of the block whose
/// header it reports (before the fix, some named one block and hashed the
/// other).
#[test]
fn verify_reports_the_digest_of_the_bytes_it_checked() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use ticket_issuer::verify::{verify_block, Scope, VerifyOptions};

    let fixture = crate::common::Fixture::new();
    let blocks = [fixture.test_block(1, 100), fixture.test_block(2, 100)];
    let digests: Vec<String> = blocks
        .iter()
        .map(|b| hex::encode(crate::redeem::sha256(&[&std::fs::read(b).unwrap()])))
        .collect();
    let path = fixture.dir.path().join("replaced.tkb");
    let staging = fixture.dir.path().join("staging.tkb");
    std::fs::copy(&blocks[0], &path).unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for b in blocks.iter().cycle() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                std::fs::hard_link(b, &staging).unwrap();
                std::fs::rename(&staging, &path).unwrap();
            }
        });
        let opts = VerifyOptions {
            scope: Scope::Structure,
            allow_test_sizes: true,
            ..VerifyOptions::new(&fixture.trusted, fixture.access(false))
        };
        // Nothing here panics while the other thread runs: it stops first.
        let mut mismatched = 0;
        let mut failures = Vec::new();
        for _ in 0..1000 {
            match verify_block(&path, &opts) {
                Ok(report) if !report.ok => failures.push(format!("{:?}", report.failures)),
                Ok(report) => {
                    let block = report.summary.block as usize;
                    if report.summary.file_sha256 != digests[block - 1] {
                        mismatched += 1;
                    }
                }
                Err(e) => failures.push(e.to_string()),
            }
        }
        stop.store(true, Ordering::Relaxed);
        assert_eq!(failures, Vec::<String>::new());
        assert_eq!(mismatched, 0, "reports whose digest is another file's");
    });
    // A block whose pieces do not tile the file is still reported with the
    // digest of the whole file (read through the same open file).
    let whole = std::fs::read(&blocks[0]).unwrap();
    for (name, bytes) in [
        ("trailing", [&whole[..], b"tail"].concat()),
        ("truncated", whole[..whole.len() - 10].to_vec()),
    ] {
        let path = fixture.dir.path().join(format!("{name}.tkb"));
        std::fs::write(&path, &bytes).unwrap();
        let report = fixture.verify(&path, false);
        assert!(!report.ok, "{name}");
        assert_eq!(
            report.summary.file_sha256,
            hex::encode(crate::redeem::sha256(&[&bytes])),
            "{name}"
        );
    }
}

/// Contract 19: a manifest and its signature are one unit for readers. A
/// writer saves the manifest (`manifest.json.next`, then the signature,
/// then `manifest.json`, then `.next` removed) for each new block while
/// another thread loads it, and reads the store's status, thousands of
/// times: every load gets a manifest whose signature verifies (before the
/// fix some failed `bad_file`, which made a sale of another, closed emission
/// of the game fail with HTTP 400), and `status` always finds the signature
/// good (before: `failed` now and then, as `verify --emission` did).
/// The writer's failure is raised, never waited on (CI once hung here).
#[test]
fn a_manifest_read_while_it_is_saved_is_never_torn() {
    use ticket_issuer::emission::{BlockChoice, Emission};
    use ticket_issuer::game::Game;
    use ticket_issuer::status::store_status;
    use ticket_issuer::store::Store;

    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("store"));
    store.keygen().unwrap();
    let secrets = store.secrets().unwrap();
    let trusted = store.public_key().unwrap();
    let emission = Emission::new(&store, Game::TRESORS_ENSABLES, 1)
        .with_units(10)
        .unwrap();
    let generate = |block: u32| {
        emission
            .generate(&secrets, 100, BlockChoice::Number(block), &|_| {})
            .unwrap();
    };
    generate(1);
    // Bounded: the reader stops when the writer ends (a writer that fails
    // ends too, and its panic is raised below) or at a deadline, never
    // waits on a flag that a failed writer would not set.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(240);
    let writer_ended = std::sync::atomic::AtomicBool::new(false);
    let (loads, failures) = std::thread::scope(|s| {
        // Another thread of the process spawns programs meanwhile, as the
        // test harness's other tests do: each child holds a copy of every
        // descriptor, the emission's lock too, until its exec (this made a
        // generate fail `emission_busy` before the lock waited a moment).
        s.spawn(|| {
            while !writer_ended.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::process::Command::new("true").status();
            }
        });
        let writer = s.spawn(|| {
            for block in 2..=120 {
                generate(block);
            }
        });
        let (mut loads, mut failures) = (0u64, Vec::new());
        while (!writer.is_finished() || loads < 3000) && std::time::Instant::now() < deadline {
            match emission.load_manifest(&trusted) {
                Ok(Some(m)) => assert!(!m.blocks.is_empty()),
                Ok(None) => failures.push("the manifest vanished".to_string()),
                Err(e) => failures.push(e.to_string()),
            }
            // `status` reads the pair too (as `verify --emission` does).
            match store_status(
                &store,
                &ticket_issuer::ledger::target::LedgerTarget::of_store(&store),
            ) {
                Ok(status) => {
                    let status = serde_json::to_value(status).unwrap();
                    let signature = &status["emissions"][0]["manifest_signature"];
                    if signature != "ok" {
                        failures.push(format!("status: manifest_signature {signature}"));
                    }
                }
                Err(e) => failures.push(format!("status: {e}")),
            }
            loads += 1;
        }
        let written = writer.join();
        writer_ended.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Err(panic) = written {
            std::panic::resume_unwind(panic);
        }
        (loads, failures)
    });
    assert!(
        failures.is_empty(),
        "{} of {loads} loads failed: {:?}",
        failures.len(),
        failures.first()
    );
}
