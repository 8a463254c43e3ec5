//! Benchmarks of one 450,000-unit L'île au trésor block: the lot shuffle,
//! building (records, Merkle tree, compression, encryption), writing the
//! sealed file, and verifying it with and without the records key.
//! Run: `cargo bench --bench block`. Figures go to docs/PERFORMANCE.md.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ticket_issuer::block::build::{self, BlockSpec};
use ticket_issuer::block::writer;
use ticket_issuer::game::Game;
use ticket_issuer::records_key::KeyAccess;
use ticket_issuer::store::Store;
use ticket_issuer::verify::{verify_block, VerifyOptions};

fn block(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::new(dir.path().join("store"));
    store.keygen().expect("keygen");
    let secrets = store.secrets().expect("secrets");
    let trusted = store.public_key().expect("public key");
    let game = Game::ILE_AU_TRESOR;
    let spec = BlockSpec {
        game,
        emission: 1,
        block: 1,
        price_cents: 100,
        units: game.block_units(),
    };
    let seed = secrets
        .block_seed(game, 1, 1)
        .expect("the block seed")
        .expect("seeded by the master secret");
    let key = secrets.block_records_key(game, 1, 1);
    let units = u64::from(game.block_units());

    let mut g = c.benchmark_group("block");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(15))
        .throughput(Throughput::Elements(units));
    g.bench_function("lot_shuffle", |b| {
        let table = game.lot_table(100).expect("table");
        b.iter(|| build::lot_order(&seed, &table, game.block_units()))
    });
    g.bench_function("build_sealed", |b| {
        b.iter(|| build::build(spec, &seed, Some(&key), &|_| {}).expect("build"))
    });
    let built = build::build(spec, &seed, Some(&key), &|_| {}).expect("build");
    let mut n = 0;
    g.bench_function("write_file", |b| {
        b.iter(|| {
            n += 1;
            let path = dir.path().join(format!("b{n}.tkb"));
            writer::write(&built, &key, &secrets.signing, &path).expect("write");
            std::fs::remove_file(path).expect("remove");
        })
    });
    let path = dir.path().join("kept.tkb");
    writer::write(&built, &key, &secrets.signing, &path).expect("write");
    for (name, with_key) in [("verify_keyless", false), ("verify_full", true)] {
        let opts = VerifyOptions::new(
            &trusted,
            KeyAccess {
                secrets: with_key.then_some(&secrets),
                files: &[],
            },
        );
        g.bench_function(name, |b| {
            b.iter(|| {
                let report = verify_block(&path, &opts).expect("verify");
                assert!(report.ok);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, block);
criterion_main!(benches);
