//! `issuer witness serve` as a process on 127.0.0.1, fed checkpoints of a
//! log made here with the ledger's own key and Merkle tree: each answer
//! of c2sp.org/tlog-witness, a restart on the same state, and a kill -9
//! in the middle of concurrent requests (nothing cosigned that was not
//! persisted).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ed25519_dalek::SigningKey;
use ticket_issuer::ledger::log::{verifier_key, LedgerKey};
use ticket_issuer::merkle::{self, Hash};
use ticket_issuer::service::witness::{add_checkpoint, AddOutcome};
use ticket_issuer::witness::cosignature::verify_cosignature;
use ticket_issuer::witness::note::Vkey;
use ticket_issuer::witness::{checkpoint_body, state::state_path};

use crate::common::ISSUER;

/// A log made in the test: its key and leaves.
struct Log {
    key: LedgerKey,
    leaves: Vec<Hash>,
}

impl Log {
    fn new(seed: u8, leaves: u32) -> Log {
        Log {
            key: LedgerKey::from_signing(SigningKey::from_bytes(&[seed; 32])),
            leaves: (0..leaves)
                .map(|i| merkle::leaf_hash(&i.to_be_bytes()))
                .collect(),
        }
    }

    fn origin(&self) -> String {
        ticket_issuer::ledger::log::origin(&self.key.public())
    }

    fn vkey(&self) -> String {
        verifier_key(&self.key.public())
    }

    fn note(&self, size: u64) -> String {
        let root = merkle::root_from_hashes(&self.leaves[..size as usize]);
        self.key.sign_checkpoint(size, &root)
    }

    fn proof(&self, old: u64, size: u64) -> Vec<Hash> {
        merkle::consistency_proof(&self.leaves[..size as usize], old as usize).unwrap()
    }
}

/// A running `issuer witness serve`; killed when dropped.
pub(crate) struct Served {
    child: Child,
    pub(crate) url: String,
    pub(crate) vkey: Vkey,
}

impl Served {
    fn start(key: &Path, state: &Path, logs: &[&Log]) -> Served {
        Served::start_with(key, state, logs, &[])
    }

    /// A witness of `logs` with more arguments of `witness serve`.
    fn start_with(key: &Path, state: &Path, logs: &[&Log], more: &[&str]) -> Served {
        let logs: Vec<(String, String)> = logs.iter().map(|l| (l.origin(), l.vkey())).collect();
        Served::spawn(key, state, &logs, more)
    }

    /// A witness of the logs `(origin, verifier key)`.
    pub(crate) fn start_for(key: &Path, state: &Path, logs: &[(String, String)]) -> Served {
        Served::spawn(key, state, logs, &[])
    }

    fn spawn(key: &Path, state: &Path, logs: &[(String, String)], more: &[&str]) -> Served {
        let mut command = Command::new(ISSUER);
        command
            .args(["witness", "serve", "--listen", "127.0.0.1:0", "--key"])
            .arg(key)
            .arg("--state")
            .arg(state)
            .args(more);
        for (origin, vkey) in logs {
            command.args(["--log", origin, vkey]);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let (mut first, mut second) = (String::new(), String::new());
        out.read_line(&mut first).unwrap();
        out.read_line(&mut second).unwrap();
        let url = first
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("witness did not start: {first:?}"))
            .to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        let vkey = Vkey::parse(second.trim().strip_prefix("vkey ").unwrap()).unwrap();
        Served { child, url, vkey }
    }

    fn add(&self, old: u64, proof: &[Hash], note: &str) -> AddOutcome {
        add_checkpoint(&self.url, old, proof, note).unwrap()
    }

    /// SIGTERM, then its exit code (at most 20 s).
    fn terminate(mut self) -> Option<i32> {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        let started = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            assert!(started.elapsed() < Duration::from_secs(20), "did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `issuer witness keygen --key DIR/witness.pem`: its vkey.
pub(crate) fn keygen(dir: &Path) -> (PathBuf, String) {
    let key = dir.join("witness.pem");
    let out = Command::new(ISSUER)
        .args(["witness", "keygen", "--key"])
        .arg(&key)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    (
        key,
        String::from_utf8(out.stdout).unwrap().trim().to_string(),
    )
}

fn cosigned_lines(outcome: AddOutcome) -> String {
    match outcome {
        AddOutcome::Cosigned(lines) => lines.concat(),
        other => panic!("not cosigned: {other:?}"),
    }
}

fn refused_status(outcome: AddOutcome) -> u16 {
    match outcome {
        AddOutcome::Refused { status, .. } => status,
        other => panic!("not refused: {other:?}"),
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn witness_cosigns_extensions_and_refuses_each_case_of_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let (key, printed) = keygen(dir.path());
    // keygen never overwrites a key.
    let again = Command::new(ISSUER)
        .args(["witness", "keygen", "--key"])
        .arg(&key)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    let state = dir.path().join("state");
    let log = Log::new(1, 40);
    let witness = Served::start(&key, &state, &[&log]);
    assert_eq!(witness.vkey.to_string(), printed);

    // First checkpoint (old 0): cosigned, and the line verifies.
    let lines = cosigned_lines(witness.add(0, &[], &log.note(5)));
    let before = now();
    let time = verify_cosignature(&(log.note(5) + &lines), &witness.vkey).unwrap();
    assert!(time.abs_diff(before) < 60, "time {time}");
    // The log's own reader still opens the cosigned note.
    let opened =
        ticket_issuer::ledger::log::open_checkpoint(&(log.note(5) + &lines), &log.key.public())
            .unwrap();
    assert_eq!(opened.size, 5);

    // A consistent extension.
    let lines = cosigned_lines(witness.add(5, &log.proof(5, 9), &log.note(9)));
    verify_cosignature(&(log.note(9) + &lines), &witness.vkey).unwrap();

    // Split view: size 9 again, another root, signed by the real log key.
    let other = log.key.sign_checkpoint(9, &[7; 32]);
    assert_eq!(refused_status(witness.add(9, &[], &other)), 409);
    // A smaller checkpoint than the old size: 400.
    assert_eq!(refused_status(witness.add(9, &[], &log.note(7))), 400);
    // A stale old size: 409 text/x.tlog.size with the size known.
    assert_eq!(
        witness.add(5, &log.proof(5, 12), &log.note(12)),
        AddOutcome::Conflict(9)
    );
    // Unknown origin: 404.
    let stranger = Log::new(2, 10);
    assert_eq!(refused_status(witness.add(0, &[], &stranger.note(3))), 404);
    // A signature that does not verify (the root altered after signing): 403.
    let note = log.note(12);
    let root_line = note.lines().nth(2).unwrap().to_string();
    let altered = note.replacen(
        &root_line,
        &ticket_issuer::witness::state::root_line(&[1; 32]),
        1,
    );
    assert_eq!(
        refused_status(witness.add(9, &log.proof(9, 12), &altered)),
        403
    );
    // A proof that does not verify: 422.
    let mut proof = log.proof(9, 12);
    proof[0][5] ^= 0x10;
    assert_eq!(refused_status(witness.add(9, &proof, &log.note(12))), 422);
    // Malformed: 400.
    assert_eq!(refused_status(witness.add(9, &[], "not a note")), 400);

    // Restart on the same state: it remembers size 9.
    assert_eq!(witness.terminate(), Some(0));
    let witness = Served::start(&key, &state, &[&log]);
    assert_eq!(witness.add(0, &[], &log.note(12)), AddOutcome::Conflict(9));
    cosigned_lines(witness.add(9, &log.proof(9, 12), &log.note(12)));
}

#[test]
fn witness_killed_mid_requests_never_cosigned_what_it_had_not_persisted() {
    let dir = tempfile::tempdir().unwrap();
    let (key, _) = keygen(dir.path());
    let state = dir.path().join("state");
    let log = Arc::new(Log::new(3, 3000));
    let witness = Served::start(&key, &state, &[&log]);
    let url = witness.url.clone();
    let vkey = witness.vkey.clone();
    let known = Arc::new(AtomicU64::new(0));
    let cosigned = Arc::new(Mutex::new(Vec::<u64>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..4u64)
        .map(|w| {
            let (log, known, cosigned, stop, url, vkey) = (
                Arc::clone(&log),
                Arc::clone(&known),
                Arc::clone(&cosigned),
                Arc::clone(&stop),
                url.clone(),
                vkey.clone(),
            );
            std::thread::spawn(move || {
                for n in 0..5000u64 {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let old = known.load(Ordering::SeqCst);
                    let size = old + 1 + (n + w) % 3;
                    if size as usize > log.leaves.len() {
                        return;
                    }
                    let note = log.note(size);
                    match add_checkpoint(&url, old, &log.proof(old, size), &note) {
                        Ok(AddOutcome::Cosigned(lines)) => {
                            verify_cosignature(&(note + &lines.concat()), &vkey).unwrap();
                            cosigned.lock().unwrap().push(size);
                            known.fetch_max(size, Ordering::SeqCst);
                        }
                        Ok(AddOutcome::Conflict(k)) => {
                            known.fetch_max(k, Ordering::SeqCst);
                        }
                        Ok(other) => panic!("refused {other:?}"),
                        // Killed: no answer, nothing to count.
                        Err(_) => return,
                    }
                }
            })
        })
        .collect();
    // Kill -9 once some checkpoints are cosigned, requests still in flight.
    let started = Instant::now();
    while cosigned.lock().unwrap().len() < 40 && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut witness = witness;
    witness.child.kill().unwrap();
    witness.child.wait().unwrap();
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    let text = std::fs::read_to_string(state_path(&state, &log.origin())).unwrap();
    let persisted = checkpoint_body(&text).unwrap();
    let cosigned = cosigned.lock().unwrap().clone();
    assert!(cosigned.len() >= 40, "only {} cosigned", cosigned.len());
    let largest = *cosigned.iter().max().unwrap();
    assert!(
        largest <= persisted.size,
        "cosigned {largest} but persisted {}",
        persisted.size
    );
    // The persisted checkpoint is one the log signed.
    assert_eq!(
        persisted.root,
        merkle::root_from_hashes(&log.leaves[..persisted.size as usize])
    );
    // Restarted, it picks up from the persisted size.
    drop(witness);
    let witness = Served::start(&key, &state, &[&log]);
    let next = persisted.size + 1;
    assert_eq!(
        witness.add(0, &[], &log.note(next)),
        AddOutcome::Conflict(persisted.size)
    );
}

/// A client that sends its headers and part of its body, then stalls, is
/// answered 408 and its connection closed within `--body-timeout`, not
/// held; the witness still cosigns afterwards.
#[test]
fn witness_answers_a_stalled_body_408_and_closes_its_connection() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (key, _) = keygen(dir.path());
    let log = Log::new(3, 10);
    let witness = Served::start_with(
        &key,
        &dir.path().join("state"),
        &[&log],
        &["--body-timeout", "1"],
    );
    let address = witness.url.strip_prefix("http://").unwrap();
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .write_all(
            format!(
                "POST /add-checkpoint HTTP/1.1\r\nHost: {address}\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nold 0\n\nche"
            )
            .as_bytes(),
        )
        .unwrap();
    // Past the bound, the test fails rather than waiting for ever.
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    let took = started.elapsed();
    assert!(
        read.is_ok(),
        "the connection was neither answered nor closed within {took:?}: {read:?}"
    );
    assert!(took < Duration::from_secs(5), "held {took:?}");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("--body-timeout"), "{answer}");
    assert!(answer.contains("text/plain"), "{answer}");
    // A whole request is still cosigned.
    cosigned_lines(witness.add(0, &[], &log.note(4)));
}
