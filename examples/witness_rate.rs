//! How fast a witness cosigns (docs/PERFORMANCE.md §Witnesses;
//! `benches/witness.sh`): `issuer witness serve` is started on a fresh
//! state folder for a log made here, then fed COUNT checkpoints one after
//! another, each one entry larger than the last with its consistency
//! proof (one client: a witness serialises one log's checkpoints anyway,
//! and a node sends one at a time). Prints the rate and the latency
//! quantiles; every answer must be a cosignature.
//!
//! Usage: `witness_rate ISSUER_BINARY WORK_DIR COUNT`

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

use ed25519_dalek::SigningKey;
use ticket_issuer::ledger::log::{origin, verifier_key, LedgerKey};
use ticket_issuer::merkle;
use ticket_issuer::service::witness::{add_checkpoint, AddOutcome};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, issuer, work, count] = args.as_slice() else {
        eprintln!("usage: witness_rate ISSUER_BINARY WORK_DIR COUNT");
        std::process::exit(2);
    };
    let count: u64 = count.parse().expect("COUNT is a number");
    let work = std::path::Path::new(work);
    let key = LedgerKey::from_signing(SigningKey::from_bytes(&[7; 32]));
    let leaves: Vec<merkle::Hash> = (0..=count)
        .map(|i| merkle::leaf_hash(&i.to_be_bytes()))
        .collect();
    let wkey = work.join("witness.pem");
    let made = Command::new(issuer)
        .args(["witness", "keygen", "--key"])
        .arg(&wkey)
        .output()
        .expect("issuer runs");
    assert!(made.status.success(), "keygen failed");
    let mut child = Command::new(issuer)
        .args(["witness", "serve", "--listen", "127.0.0.1:0", "--key"])
        .arg(&wkey)
        .arg("--state")
        .arg(work.join("state"))
        .args([
            "--log",
            &origin(&key.public()),
            &verifier_key(&key.public()),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the witness starts");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("it says where it listens");
    let url = first
        .trim()
        .strip_prefix("listening on ")
        .expect("listening on URL")
        .to_string();

    let mut took = Vec::with_capacity(count as usize);
    let started = Instant::now();
    for size in 1..=count {
        let old = size - 1;
        let root = merkle::root_from_hashes(&leaves[..size as usize]);
        let note = key.sign_checkpoint(size, &root);
        let proof = match old {
            0 => Vec::new(),
            o => merkle::consistency_proof(&leaves[..size as usize], o as usize).expect("a proof"),
        };
        let asked = Instant::now();
        match add_checkpoint(&url, old, &proof, &note).expect("the witness answers") {
            AddOutcome::Cosigned(_) => {}
            other => panic!("size {size}: not cosigned: {other:?}"),
        }
        took.push(asked.elapsed());
    }
    let total = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    took.sort();
    let q = |p: f64| took[((took.len() as f64 - 1.0) * p) as usize];
    println!(
        "{count} checkpoints cosigned in {:.2} s: {:.0} /s; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (each persisted with fsync before its answer)",
        total.as_secs_f64(),
        count as f64 / total.as_secs_f64(),
        q(0.5).as_secs_f64() * 1e3,
        q(0.99).as_secs_f64() * 1e3,
        took.last().map_or(0.0, |d| d.as_secs_f64() * 1e3)
    );
}
