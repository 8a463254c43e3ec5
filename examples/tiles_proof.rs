//! Proofs on a large log read a few rows (issue 21; docs/PERFORMANCE.md
//! §Proofs from tiles; run by benches/tiles.sh).
//!
//! Usage: tiles_proof DIR [ENTRIES=10000000]
//! Builds, in DIR, a store whose SQLite ledger holds ENTRIES synthetic
//! sales (units marked sold, 100,000 a commit, each commit signing a head
//! and extending the tiles, as any commit does), then proves: inclusion
//! of entries spread over the log and consistency between sizes, counting
//! the rows each proof reads and checking each against the signed head.
//! For comparison it times the proof from every leaf (the path a ledger
//! without tiles takes).

use std::path::PathBuf;
use std::time::Instant;

use ticket_issuer::game::Game;
use ticket_issuer::ledger::log::SourceTiles;
use ticket_issuer::ledger::log::{self, LedgerKey, LogSource};
use ticket_issuer::ledger::ops::{Op, UnitRef};
use ticket_issuer::ledger::tiles::Cached;
use ticket_issuer::merkle::{self, Hash};
use ticket_issuer::store::Store;
use ticket_issuer::Ledger;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(args.get(1).expect("usage: tiles_proof DIR [ENTRIES]"));
    let entries: u64 = args
        .get(2)
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000_000);
    let store = Store::new(dir.join("store"));
    std::fs::create_dir_all(store.keys_dir()).expect("make the keys folder");
    let key = LedgerKey::from_signing(store.ledger_signing_key().expect("a ledger key"));
    let mut ledger = Ledger::open(&store.ledger_path()).expect("open the ledger");

    let started = Instant::now();
    let per_commit = 100_000u64;
    let mut done = 0u64;
    while done < entries {
        let n = per_commit.min(entries - done);
        let ops: Vec<Op> = (done..done + n)
            .map(|i| {
                let unit = UnitRef {
                    game: Game::ILE_AU_TRESOR,
                    emission: 1,
                    block: u32::try_from(i / 450_000 + 1).expect("a block number"),
                    index: u32::try_from(i % 450_000).expect("an index"),
                };
                Op::MarkSold {
                    unit,
                    unit_id: format!("synthetic-{i}"),
                }
            })
            .collect();
        for outcome in ledger.commit(&ops, &key).expect("a commit") {
            outcome.expect("a unit marked sold");
        }
        done += n;
    }
    let built = started.elapsed();
    let head = ledger.latest_head().expect("read").expect("a head");
    let size = head.size;
    let bytes = std::fs::metadata(store.ledger_path()).map_or(0, |m| m.len());
    println!(
        "ledger: {size} entries ({} MB) built in {:.1} s ({:.0} entries/s, commits of {per_commit})",
        bytes / 1_000_000,
        built.as_secs_f64(),
        size as f64 / built.as_secs_f64()
    );
    assert_eq!(size, entries);
    assert_eq!(
        ledger.tiles_covered().expect("read"),
        size,
        "the tiles cover the log"
    );

    let root: Hash = head.root.as_slice().try_into().expect("a 32-byte root");
    let mut most = 0;
    for index in [0, 1, size / 3, size / 2, size - 2, size - 1] {
        let mut rows = SourceTiles(&ledger);
        let mut tiles = Cached::new(&mut rows);
        let t = Instant::now();
        let proof = tiles.inclusion_proof(index, size).expect("a proof");
        let took = t.elapsed();
        // What `ledger prove` checks: the entry's leaf (as stored) leads
        // to the root of the signed head.
        let leaf = ledger.tile((0, index / 256)).expect("a tile")[(index % 256) as usize];
        assert!(
            merkle::verify_inclusion(&leaf, index, size, &proof, &root),
            "entry {index}"
        );
        // The entry, the head and the coverage, then the tiles.
        let read = 3 + tiles.reads;
        most = most.max(read);
        println!(
            "inclusion of entry {index:>9} in {size}: {:>2} hashes, {read:>2} rows read, {:.2} ms",
            proof.len(),
            took.as_secs_f64() * 1e3
        );
    }
    for old in [1, size / 2, size - 1] {
        let mut rows = SourceTiles(&ledger);
        let mut tiles = Cached::new(&mut rows);
        let t = Instant::now();
        let proof = tiles.consistency_proof(old, size).expect("a proof");
        let old_root = tiles.root(old).expect("a root");
        let took = t.elapsed();
        assert!(merkle::verify_consistency(
            old, size, &proof, &old_root, &root
        ));
        let read = 1 + tiles.reads;
        most = most.max(read);
        println!(
            "consistency {old:>9} → {size}: {:>2} hashes, {read:>2} rows read, {:.2} ms",
            proof.len(),
            took.as_secs_f64() * 1e3
        );
    }
    println!("most rows read by one proof: {most} (target: fewer than 100)");
    assert!(most < 100);

    let t = Instant::now();
    let report = log::verify(&ledger, &[key.public()], None).expect("a snapshot");
    println!(
        "for comparison, reading every leaf (`ledger verify`, the path without tiles): {:.1} s, ok {}",
        t.elapsed().as_secs_f64(),
        report.ok
    );
}
