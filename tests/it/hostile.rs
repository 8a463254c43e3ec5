//! Hostile input and interrupted runs (issue 8, defects 1–6): outputs that
//! would overwrite (the master secret above all), keys that do not belong
//! together, FIFOs and devices given as files, permissions under a loose
//! umask, kills at any moment, and secrets printed by `Debug`.
//!
//! A block takes about a second to make, so one store with block 1 of
//! emission 1 is made once and copied (`cp -a`, modes kept) per test.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common::{issuer, issuer_within, ISSUER};
use tempfile::TempDir;
use ticket_issuer::emission::{BlockChoice, Emission, Reveal};
use ticket_issuer::game::Game;
use ticket_issuer::ledger::Ledger;
use ticket_issuer::records_key::RecordsKeyFile;
use ticket_issuer::seal;
use ticket_issuer::store::Store;
use ticket_issuer::test_support as fsutil;
use ticket_issuer::Error;

/// A store with block 1 of emission 1 at 1 €, made once per test run.
fn base_store() -> &'static Path {
    static BASE: OnceLock<(TempDir, PathBuf)> = OnceLock::new();
    &BASE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("store");
            let store = Store::new(&path);
            store.keygen().unwrap();
            let secrets = store.secrets().unwrap();
            Emission::new(&store, Game::ILE_AU_TRESOR, 1)
                .generate(&secrets, 100, BlockChoice::Number(1), &|_| {})
                .unwrap();
            (dir, path)
        })
        .1
}

/// A private copy of the base store: (its temp dir, the store path).
fn copy_of_base() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let status = Command::new("cp")
        .arg("-a")
        .arg(base_store())
        .arg(&store)
        .status()
        .unwrap();
    assert!(status.success());
    (dir, store)
}

fn emission_dir(store: &Path) -> PathBuf {
    Store::new(store).emission_dir(Game::ILE_AU_TRESOR, 1)
}

/// Every file of a folder (recursively) with its bytes, sorted by path.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                files.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

fn names(files: &[(String, Vec<u8>)]) -> Vec<&str> {
    files.iter().map(|(n, _)| n.as_str()).collect()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and a mode; no memory is shared.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn write_private(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

// ---- 1. Outputs never overwrite without --force, never land in keys/ ----

#[test]
fn reveal_out_never_overwrites_the_master_secret_or_an_existing_file() {
    let (tmp, store) = copy_of_base();
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
    let master = store.join("keys/master.key");
    let secret = std::fs::read(&master).unwrap();

    for force in [false, true] {
        let mut args = vec!["reveal", "--emission", "1", "--out"];
        let target = master.display().to_string();
        args.push(&target);
        if force {
            args.push("--force");
        }
        let run = issuer(&store, &args).expect_code(1);
        assert!(run.stderr.contains("keys folder"), "{}", run.stderr);
        assert_eq!(std::fs::read(&master).unwrap(), secret);
    }
    // Another spelling of the keys folder, and a new file in it.
    let sneaky = tmp.path().join("store/emissions/../keys/new.json");
    let sneaky = sneaky.display().to_string();
    issuer(
        &store,
        &["reveal", "--emission", "1", "-o", &sneaky, "--force"],
    )
    .expect_code(1);
    assert!(!store.join("keys/new.json").exists());

    let existing = tmp.path().join("reveal.json");
    std::fs::write(&existing, b"keep me").unwrap();
    let existing_arg = existing.display().to_string();
    let refused =
        issuer(&store, &["reveal", "--emission", "1", "-o", &existing_arg]).expect_code(1);
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep me");

    issuer(
        &store,
        &["reveal", "--emission", "1", "-o", &existing_arg, "--force"],
    )
    .expect_code(0);
    Reveal::read(&existing).unwrap();

    let to_stdout = issuer(&store, &["reveal", "--emission", "1", "-o", "-"]).expect_code(0);
    assert_eq!(to_stdout.json()["kind"], "ticket-issuer emission reveal");
}

#[test]
fn records_key_out_dash_is_stdout_and_an_existing_file_is_kept() {
    let (tmp, store) = copy_of_base();
    let run = |args: &[&str]| {
        let out = Command::new(ISSUER)
            .current_dir(tmp.path())
            .arg("--store")
            .arg(&store)
            .args(["keys", "export-records-key", "--emission", "1"])
            .args(args)
            .output()
            .unwrap();
        (out.status.code().unwrap(), out.stdout)
    };
    let (code, stdout) = run(&["-o", "-"]);
    assert_eq!(code, 0);
    let file: RecordsKeyFile = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(file.emission, 1);
    assert!(!tmp.path().join("-").exists(), "no file named '-'");

    let existing = tmp.path().join("key.json");
    std::fs::write(&existing, b"keep me").unwrap();
    let path = existing.display().to_string();
    assert_eq!(run(&["--out", &path]).0, 1);
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep me");
    assert_eq!(run(&["--out", &path, "--force"]).0, 0);
    assert_eq!(RecordsKeyFile::read(&existing).unwrap(), file);
    let inside = store.join("keys/records.json").display().to_string();
    assert_eq!(run(&["--out", &inside, "--force"]).0, 1);
    assert!(!store.join("keys/records.json").exists());
}

#[test]
fn export_out_writes_a_file_and_refuses_to_overwrite() {
    let (tmp, store) = copy_of_base();
    let block = emission_dir(&store).join("b000001.tkb");
    let block = block.display().to_string();
    let out = tmp.path().join("units.jsonl");
    std::fs::write(&out, b"keep me").unwrap();
    let out_arg = out.display().to_string();
    issuer(&store, &["export", &block, "-o", &out_arg]).expect_code(1);
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    issuer(&store, &["export", &block, "-o", &out_arg, "--force"]).expect_code(0);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 450_000);
    assert_eq!(mode(&out), 0o600, "every outcome is in it");
}

/// `-o /dev/null --force` once renamed a temp file over the device,
/// leaving a regular 0600 file in its place. A FIFO exercises the same
/// path safely: written into, never replaced, with or without --force;
/// a directory is refused.
#[test]
fn output_to_a_pipe_or_device_writes_into_it_and_never_replaces_it() {
    use std::os::unix::fs::FileTypeExt;
    let fixture = crate::common::Fixture::new();
    // A drawn game's small block is a real block (no test size).
    let block = fixture
        .test_block_game(Game::TRESORS_ENSABLES, 1, 100, 3_000)
        .display()
        .to_string();
    let store = fixture.dir.path().join("store");
    for force in [false, true] {
        let fifo = fixture.dir.path().join(format!("pipe-{force}"));
        mkfifo(&fifo);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        let fifo_arg = fifo.display().to_string();
        let mut args = vec!["export", block.as_str(), "-q", "-o", fifo_arg.as_str()];
        if force {
            args.push("--force");
        }
        issuer_within(&store, &args, Duration::from_secs(60)).expect_code(0);
        let text = reader.join().unwrap();
        assert_eq!(text.lines().count(), 3_000);
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "--force {force}: the pipe was replaced");
    }
    let dir = fixture.dir.path().join("a-folder");
    std::fs::create_dir(&dir).unwrap();
    let run = issuer(
        &store,
        &[
            "export",
            &block,
            "-o",
            &dir.display().to_string(),
            "--force",
        ],
    );
    let run = run.expect_code(2);
    assert!(run.stderr.contains("directory"), "{}", run.stderr);
    assert!(dir.is_dir());
}

// ---- 2. Keys that do not belong together ----

#[test]
fn a_signing_key_that_does_not_match_the_public_key_is_refused() {
    let (_tmp, store) = copy_of_base();
    let other = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]);
    write_private(
        &store.join("keys/issuer.key.pem"),
        seal::private_pem(&other).as_bytes(),
    );
    let err = Store::new(&store).secrets().err().expect("refused");
    assert!(matches!(err, Error::SigningKeyMismatch { .. }), "{err}");

    let args = [
        "generate",
        "--game",
        "ile-au-tresor",
        "--emission",
        "2",
        "--block",
        "1",
        "--price",
        "1",
        "--quiet",
    ];
    let run = issuer(&store, &args).expect_code(2);
    assert!(run.stderr.contains("does not match"), "{}", run.stderr);
    assert!(!emission_dir(&store).with_file_name("e000002").exists());
}

#[test]
fn another_master_secret_is_refused_by_the_manifest_commitment() {
    let (_tmp, store_path) = copy_of_base();
    let store = Store::new(&store_path);
    let emission = Emission::new(&store, Game::ILE_AU_TRESOR, 1);
    let secrets = store.secrets().unwrap();
    let manifest = emission
        .require_manifest(&secrets.signing.verifying_key())
        .unwrap();
    assert_eq!(
        manifest.master_commitment,
        Some(hex::encode(
            secrets.master_commitment(Game::ILE_AU_TRESOR, 1)
        ))
    );
    let before = contents(&emission.dir());

    write_private(
        &store.master_path(),
        format!("{}\n", "ab".repeat(32)).as_bytes(),
    );
    let swapped = store.secrets().unwrap();
    let refused = |r: Result<(), Error>| {
        let err = r.expect_err("refused");
        assert!(matches!(err, Error::MasterSecretMismatch { .. }), "{err}");
        assert_eq!(err.kind(), ticket_issuer::error::ErrorKind::InvalidInput);
    };
    refused(
        emission
            .generate(&swapped, 100, BlockChoice::Count(1), &|_| {})
            .map(drop),
    );
    refused(emission.close(&swapped).map(drop));
    refused(emission.reveal(&swapped).map(drop));
    assert_eq!(contents(&emission.dir()), before, "nothing was written");
}

#[test]
fn a_manifest_without_commitment_is_checked_by_its_seed_commitment_then_upgraded() {
    let (_tmp, store_path) = copy_of_base();
    let store = Store::new(&store_path);
    let emission = Emission::new(&store, Game::ILE_AU_TRESOR, 1);
    let secrets = store.secrets().unwrap();
    // The manifest as written before the commitment existed.
    let mut legacy: serde_json::Value =
        serde_json::from_slice(&std::fs::read(emission.manifest_path()).unwrap()).unwrap();
    legacy.as_object_mut().unwrap().remove("master_commitment");
    let mut bytes = serde_json::to_vec_pretty(&legacy).unwrap();
    bytes.push(b'\n');
    std::fs::write(emission.manifest_path(), &bytes).unwrap();
    std::fs::write(
        emission.signature_path(),
        seal::sign(&secrets.signing, &bytes),
    )
    .unwrap();

    let verified = issuer(&store_path, &["verify", "--emission", "1", "--json"]).expect_code(0);
    assert_eq!(
        verified.json()["ok"],
        true,
        "an old manifest stays verifiable"
    );

    let master = std::fs::read(store.master_path()).unwrap();
    write_private(
        &store.master_path(),
        format!("{}\n", "cd".repeat(32)).as_bytes(),
    );
    let err = emission
        .close(&store.secrets().unwrap())
        .expect_err("refused");
    assert!(matches!(err, Error::MasterSecretMismatch { .. }), "{err}");

    write_private(&store.master_path(), &master);
    let closed = emission.close(&secrets).unwrap();
    assert!(closed.closed);
    assert_eq!(
        closed.master_commitment,
        Some(hex::encode(
            secrets.master_commitment(Game::ILE_AU_TRESOR, 1)
        )),
        "the next save records the commitment"
    );
}

// ---- 3. FIFOs, directories and devices ----

#[test]
fn fifos_and_devices_are_refused_without_blocking() {
    let (tmp, store) = copy_of_base();
    let fifo = tmp.path().join("fifo");
    mkfifo(&fifo);
    let fifo_arg = fifo.display().to_string();
    let deadline = Duration::from_secs(60);
    let refused = |args: &[&str], what: &str| {
        let run = issuer_within(&store, args, deadline).expect_code(2);
        assert!(run.stderr.contains(what), "{args:?}: {}", run.stderr);
    };
    refused(&["verify", &fifo_arg], "FIFO");
    refused(&["verify", tmp.path().to_str().unwrap()], "directory");
    let block = emission_dir(&store).join("b000001.tkb");
    let block = block.display().to_string();
    for (option, file) in [
        ("--public-key", fifo_arg.as_str()),
        ("--records-key", fifo_arg.as_str()),
        ("--public-key", "/dev/zero"),
        ("--records-key", "/dev/zero"),
    ] {
        let what = if file == "/dev/zero" {
            "character device"
        } else {
            "FIFO"
        };
        refused(&["verify", &block, option, file], what);
    }
    issuer(&store, &["close", "--emission", "1"]).expect_code(0);
    refused(
        &["verify", "--emission", "1", "--seeds", "/dev/zero"],
        "character device",
    );
    refused(&["verify", "--emission", "1", "--seeds", &fifo_arg], "FIFO");

    // A FIFO where a block of the emission should be: named, not waited on.
    let listed = emission_dir(&store).join("b000001.tkb");
    std::fs::rename(&listed, tmp.path().join("moved.tkb")).unwrap();
    mkfifo(&listed);
    let run = issuer_within(&store, &["verify", "--emission", "1"], deadline).expect_code(1);
    assert!(run.stdout.contains("FIFO"), "{}", run.stdout);
    let secrets = Store::new(&store).secrets().unwrap();
    let id = ticket_issuer::unit_id::UnitId {
        game: Game::ILE_AU_TRESOR,
        emission: 1,
        block: 1,
        index: 0,
        check_code: ticket_issuer::derive::check_code(
            &secrets
                .block_seed(Game::ILE_AU_TRESOR, 1, 1)
                .unwrap()
                .unwrap(),
            0,
        ),
    }
    .to_string();
    refused(&["show", &id], "FIFO");
    refused(&["redeem", &id], "FIFO");
}

#[test]
fn small_inputs_are_read_up_to_their_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big.pem");
    std::fs::write(&big, vec![b'A'; fsutil::KEY_FILE_LIMIT as usize + 1]).unwrap();
    let err = seal::read_public(&big).expect_err("too large");
    assert!(
        matches!(err, Error::FileTooLarge { limit, .. } if limit == fsutil::KEY_FILE_LIMIT),
        "{err}"
    );
    let err = fsutil::read_small(Path::new("/dev/zero"), 1 << 30).expect_err("a device");
    assert!(matches!(err, Error::NotRegularFile { .. }), "{err}");
    let exact = tmp.path().join("exact");
    std::fs::write(&exact, b"12345").unwrap();
    assert_eq!(fsutil::read_small(&exact, 5).unwrap(), b"12345");
}

// ---- 4. Modes whatever the umask ----

#[test]
fn keygen_under_umask_000_makes_a_private_store() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let status = Command::new("sh")
        .arg("-c")
        .arg("umask 000 && exec \"$0\" --store \"$1\" keygen")
        .arg(ISSUER)
        .arg(&store)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(mode(&store), 0o700);
    assert_eq!(mode(&store.join("keys")), 0o700);
    assert_eq!(mode(&store.join("keys/master.key")), 0o600);
    assert_eq!(mode(&store.join("keys/issuer.key.pem")), 0o600);
}

#[test]
fn the_ledger_and_its_wal_files_are_private() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("ledger.sqlite");
    let ledger = Ledger::open(&path).unwrap();
    ledger.summary().unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        assert!(file.exists(), "{} exists while open", file.display());
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
}

#[test]
fn a_keys_folder_others_can_write_is_refused() {
    let (_tmp, store) = copy_of_base();
    let keys = store.join("keys");
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o770)).unwrap();
    let err = Store::new(&store).secrets().err().expect("refused");
    assert!(matches!(err, Error::LooseKeysFolder { .. }), "{err}");
    let err = Store::new(&store).public_key().expect_err("refused");
    assert!(matches!(err, Error::LooseKeysFolder { .. }), "{err}");
    let run = issuer(&store, &["close", "--emission", "1"]).expect_code(2);
    assert!(
        run.stderr
            .contains(&format!("chmod 700 {}", keys.display())),
        "{}",
        run.stderr
    );
}

// ---- 5. Kills, reruns and concurrent writers ----

#[test]
fn leftover_partials_are_removed_by_the_next_writer() {
    let (tmp, store_path) = copy_of_base();
    let store = Store::new(&store_path);
    let emission = Emission::new(&store, Game::ILE_AU_TRESOR, 1);
    let dir = emission.dir();
    // What a close and a reveal killed mid-write leave.
    let leftovers = [
        dir.join(".manifest.json.AbC123.partial"),
        dir.join(".revealed.XyZ789.partial"),
    ];
    for f in &leftovers {
        std::fs::write(f, b"half").unwrap();
    }
    emission.close(&store.secrets().unwrap()).unwrap();
    for f in &leftovers {
        assert!(!f.exists(), "{} removed", f.display());
    }
    // Beside a reveal --out target, only that target's leftovers go.
    let target = tmp.path().join("reveal.json");
    let ours = tmp.path().join(".reveal.json.Q1w2E3.partial");
    let theirs = tmp.path().join(".other.Q1w2E3.partial");
    std::fs::write(&ours, b"half").unwrap();
    std::fs::write(&theirs, b"not ours").unwrap();
    issuer(
        &store_path,
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
    issuer(
        &store_path,
        &["reveal", "--emission", "1", "-o", target.to_str().unwrap()],
    )
    .expect_code(0);
    assert!(!ours.exists());
    assert!(theirs.exists());
}

#[test]
fn until_block_is_a_no_op_once_done() {
    let (_tmp, store_path) = copy_of_base();
    let store = Store::new(&store_path);
    let secrets = store.secrets().unwrap();
    let emission = Emission::new(&store, Game::ILE_AU_TRESOR, 1);
    let before = contents(&emission.dir());
    let kept = emission
        .generate(&secrets, 100, BlockChoice::Until(1), &|_| {})
        .unwrap();
    assert_eq!(kept.len(), 1);
    assert!(!kept[0].fresh);
    assert_eq!(contents(&emission.dir()), before, "nothing written");

    let until_2 = [
        "generate",
        "--game",
        "ile-au-tresor",
        "--emission",
        "1",
        "--until-block",
        "2",
        "--price",
        "2",
        "--quiet",
        "--json",
    ];
    let run = issuer(&store_path, &until_2).expect_code(0);
    let blocks = run.json()["blocks"].as_array().unwrap().clone();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[1]["block"], 2);
    assert_eq!(blocks[1]["price"], "2");
    // The same command again, in words this time.
    let again = issuer(&store_path, &until_2[..10]).expect_code(0);
    assert_eq!(again.stdout.matches("kept already sealed").count(), 2);
    assert!(!emission.dir().join("b000003.tkb").exists());
}

#[test]
fn a_rerun_after_a_kill_between_manifest_and_cleanup_matches_an_uninterrupted_run() {
    let (_tmp, store_path) = copy_of_base();
    let store = Store::new(&store_path);
    let emission = Emission::new(&store, Game::ILE_AU_TRESOR, 1);
    let dir = emission.dir();
    let finished = contents(&dir);
    // Killed after the manifest was saved and before its `.next` copy and
    // the generation record were removed.
    std::fs::copy(emission.manifest_path(), dir.join("manifest.json.next")).unwrap();
    std::fs::write(
        dir.join("pending.json"),
        br#"{"game":"ile-au-tresor","price_cents":100,"first_block":1,"count":1,"explicit":true}"#,
    )
    .unwrap();
    let rerun = emission
        .generate(
            &store.secrets().unwrap(),
            100,
            BlockChoice::Number(1),
            &|_| {},
        )
        .unwrap();
    assert!(!rerun[0].fresh);
    let after = contents(&dir);
    assert_eq!(names(&after), names(&finished));
    assert_eq!(after, finished);
}

#[test]
fn a_second_writer_on_an_emission_is_refused_as_busy() {
    let (_tmp, store_path) = copy_of_base();
    let store = Store::new(&store_path);
    let emission = Emission::new(&store, Game::ILE_AU_TRESOR, 1);
    // Claims end only on a closed emission; closing it again is still
    // refused below while another writer holds it.
    issuer(&store_path, &["close", "--emission", "1"]).expect_code(0);
    issuer(
        &store_path,
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
    let held = emission.lock().unwrap();
    assert!(matches!(emission.lock(), Err(Error::EmissionBusy { .. })));
    for args in [
        &["close", "--emission", "1"][..],
        &["reveal", "--emission", "1"],
        &[
            "generate",
            "--game",
            "ile-au-tresor",
            "--emission",
            "1",
            "--blocks",
            "1",
            "--price",
            "1",
            "--quiet",
        ],
    ] {
        let run = issuer(&store_path, args).expect_code(3);
        assert!(run.stderr.contains("busy"), "{args:?}: {}", run.stderr);
    }
    assert!(!emission.dir().join("pending.json").exists());
    drop(held);
    issuer(&store_path, &["close", "--emission", "1"]).expect_code(0);
}

/// Kills `generate --until-block 2` at random moments over its whole run,
/// reruns it, and compares the emission with an uninterrupted run's, byte
/// for byte. `KILL_TRIALS` sets the number of trials (default 3),
/// `KILL_SEED` the random seed (printed on failure).
#[test]
fn generation_killed_at_random_moments_ends_identical_to_an_uninterrupted_run() {
    use rand::{Rng, SeedableRng};
    let trials: u32 = std::env::var("KILL_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let seed: u64 = std::env::var("KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    Store::new(tmp.path().join("keygen")).keygen().unwrap();
    std::fs::rename(tmp.path().join("keygen/keys"), &keys).unwrap();
    let new_store = |name: &str| {
        let store = tmp.path().join(name);
        std::fs::create_dir(&store).unwrap();
        let status = Command::new("cp").arg("-a").arg(&keys).arg(&store).status();
        assert!(status.unwrap().success());
        store
    };
    let args = [
        "generate",
        "--game",
        "ile-au-tresor",
        "--emission",
        "3",
        "--until-block",
        "2",
        "--price",
        "1",
        "--jobs",
        "2",
        "--quiet",
    ];
    let reference = new_store("reference");
    let start = Instant::now();
    issuer(&reference, &args).expect_code(0);
    let full_run = start.elapsed();
    let expected = contents(&reference.join("emissions"));

    for trial in 0..trials {
        let store = new_store(&format!("trial{trial}"));
        // One to three kills, each at a moment spread over a whole run.
        for _ in 0..rng.random_range(1..=3) {
            let mut child = Command::new(ISSUER)
                .arg("--store")
                .arg(&store)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let delay = full_run.mul_f64(rng.random_range(0.0..1.1));
            std::thread::sleep(delay);
            child.kill().unwrap(); // SIGKILL, or nothing if it already ended
            child.wait().unwrap();
        }
        let finish = issuer(&store, &args);
        let got = contents(&store.join("emissions"));
        assert!(
            finish.code == 0 && got == expected,
            "trial {trial} (KILL_SEED={seed}): exit {} {}\nfiles {:?}\nexpected {:?}",
            finish.code,
            finish.stderr,
            names(&got),
            names(&expected)
        );
        issuer(&store, &args).expect_code(0);
        assert!(
            contents(&store.join("emissions")) == expected,
            "rerun after success changed nothing"
        );
    }
}

// ---- 6. Secrets ----

#[test]
fn records_key_debug_does_not_print_the_key() {
    let (_tmp, store_path) = copy_of_base();
    let store = Store::new(&store_path);
    let file = RecordsKeyFile::export(&store.secrets().unwrap(), Game::ILE_AU_TRESOR, 1, None);
    let shown = format!("{file:?}");
    assert!(!shown.contains(&hex::encode(file.key)), "{shown}");
    assert!(shown.contains("redacted"), "{shown}");
}

#[test]
fn a_malformed_key_in_a_records_key_file_is_an_error_not_a_zero_key() {
    let tmp = tempfile::tempdir().unwrap();
    for key in ["zz".repeat(32), "11".repeat(31), String::new()] {
        let json = serde_json::json!({
            "kind": "ticket-issuer records key",
            "game": "ile-au-tresor",
            "emission": 1,
            "block": null,
            "key": key,
        });
        assert!(serde_json::from_value::<RecordsKeyFile>(json.clone()).is_err());
        let path = tmp.path().join("key.json");
        std::fs::write(&path, json.to_string()).unwrap();
        let err = RecordsKeyFile::read(&path).expect_err("malformed key");
        assert!(matches!(err, Error::BadKey { .. }), "{err}");
        assert!(err.to_string().contains("64 hex digits"), "{err}");
    }
}

#[test]
fn a_reveal_with_a_malformed_records_key_is_named_when_read() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("reveal.json");
    let reveal = serde_json::json!({
        "kind": "ticket-issuer emission reveal",
        "game": "ile-au-tresor",
        "emission": 1,
        "records_key": "not hex",
        "blocks": [],
    });
    std::fs::write(&path, reveal.to_string()).unwrap();
    match Reveal::read(&path) {
        Err(Error::BadFile { path: p, reason }) => {
            assert_eq!(p, path);
            assert!(reason.contains("64 hex digits"), "{reason}");
        }
        other => panic!("expected BadFile, got {other:?}"),
    }
}

// ---- Read-only commands create nothing ----

#[test]
fn read_only_commands_create_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no/such/dir");
    let run = issuer(&missing, &["ledger"]).expect_code(2);
    assert!(run.stderr.contains("no store"), "{}", run.stderr);
    let (_keep, store) = copy_of_base();
    let block = emission_dir(&store).join("b000001.tkb");
    let block = block.display().to_string();
    for args in [
        &["verify", block.as_str()][..],
        &["show", "IAT-1-1-0-AAAAAAAA"],
        &["redeem", "--check", "IAT-1-1-0-AAAAAAAA"],
        &["verify", "--emission", "1"],
    ] {
        let run = issuer(&missing, args);
        assert_ne!(run.code, 0, "{args:?}");
    }
    assert!(!tmp.path().join("no").exists(), "nothing created");

    // A store that has redeemed nothing: an empty summary, no ledger made.
    let run = issuer(&store, &["ledger", "--json"]).expect_code(0);
    assert_eq!(run.json()["units"], 0);
    issuer(&store, &["redeem", "--check", "IAT-1-1-0-AAAAAAAA"]);
    assert!(!Store::new(&store).ledger_path().exists());
}
