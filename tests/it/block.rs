//! Whole blocks: exact lot tables at every price, every unit accepted by an
//! independent reading of article 4.5, determinism against golden vectors,
//! and every tampering caught with the matching failure.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::common::{
    article_4_5, failure_kind_names, shared_block, Fixture, SharedBlock, TEST_UNITS,
};
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};
use ticket_issuer::block::build::{self, BlockSpec};
use ticket_issuer::block::reader::BlockFile;
use ticket_issuer::block::{IndexEntry, INDEX_ENTRY_LEN};
use ticket_issuer::derive;
use ticket_issuer::export::export_jsonl;
use ticket_issuer::game::Game;
use ticket_issuer::records_key::KeyAccess;
use ticket_issuer::verify::{FailureKind, Status};

/// Article 4.5, as the regulation prints it: lot → amount in € at 0.5, 1, 2 €.
const ARTICLE_4_5_TEXT: [(&str, [&str; 3]); 9] = [
    ("chandelier-3", ["5000", "10000", "20000"]),
    ("singe-3", ["250", "500", "1000"]),
    ("saphir-3", ["75", "150", "300"]),
    ("tete_de_mort-3", ["25", "50", "100"]),
    ("chandelier-2", ["12.5", "25", "50"]),
    ("singe-2", ["5", "10", "20"]),
    ("saphir-2", ["1.5", "3", "6"]),
    ("tete_de_mort-2", ["1", "2", "4"]),
    ("chandelier-1", ["0.5", "1", "2"]),
];

/// Article 3: the number of lots of each line, in the same order.
const ARTICLE_3_COUNTS: [u64; 9] = [1, 3, 100, 1_000, 500, 2_000, 26_000, 38_000, 52_000];

fn step(direction: &str) -> (i64, i64) {
    match direction {
        "N" => (0, -1),
        "NE" => (1, -1),
        "E" => (1, 0),
        "SE" => (1, 1),
        "S" => (0, 1),
        "SW" => (-1, 1),
        "W" => (-1, 0),
        "NW" => (-1, -1),
        other => panic!("unknown direction {other}"),
    }
}

/// Plays one exported unit from its JSON alone; returns its lot name.
fn play_exported(unit: &serde_json::Value) -> Result<Option<String>, String> {
    let (w, h) = (
        unit["map"]["width"].as_i64().unwrap(),
        unit["map"]["height"].as_i64().unwrap(),
    );
    let start = (
        unit["start"]["x"].as_i64().unwrap(),
        unit["start"]["y"].as_i64().unwrap(),
    );
    let chests: Vec<((i64, i64), &str)> = unit["chests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                (c["x"].as_i64().unwrap(), c["y"].as_i64().unwrap()),
                c["content"].as_str().unwrap(),
            )
        })
        .collect();
    if chests.len() != 9 {
        return Err("not nine chests".into());
    }
    let squares: HashSet<_> = chests.iter().map(|c| c.0).collect();
    if squares.len() != 9 || squares.contains(&start) {
        return Err("chests overlap or stand on the start".into());
    }
    let mut at = start;
    let mut visited = vec![start];
    let mut uncovered = Vec::new();
    let throws = unit["throws"].as_array().unwrap();
    if throws.len() != 4 {
        return Err("not four throws".into());
    }
    for t in throws {
        let (dx, dy) = step(t["direction"].as_str().unwrap());
        let n = t["steps"].as_i64().unwrap();
        if n < 1 {
            return Err("a throw of no step".into());
        }
        at = (at.0 + dx * n, at.1 + dy * n);
        if !(0..w).contains(&at.0) || !(0..h).contains(&at.1) || visited.contains(&at) {
            return Err(format!("illegal landing {at:?}"));
        }
        visited.push(at);
        let chest = chests
            .iter()
            .find(|c| c.0 == at)
            .ok_or("landing without a chest")?;
        uncovered.push(chest.1);
    }
    article_4_5(&uncovered)
}

/// Exports a block and checks all 450,000 lines independently of the
/// library's rules; returns the lot counts.
fn check_export(fx: &SharedBlock, column: usize) -> BTreeMap<String, u64> {
    let (path, block_number) = (&fx.path, 1);
    let block = fx.authentic(path).unwrap();
    let mut out = Vec::new();
    assert_eq!(export_jsonl(&block, &mut out, &|_| {}).unwrap(), 450_000);
    let amounts: BTreeMap<&str, Decimal> = ARTICLE_4_5_TEXT
        .iter()
        .map(|(lot, a)| (*lot, a[column].parse().unwrap()))
        .collect();
    let mut counts = BTreeMap::new();
    let mut total = Decimal::ZERO;
    let mut ids = HashSet::new();
    for (i, line) in out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let unit: serde_json::Value = serde_json::from_slice(line).unwrap();
        assert_eq!(unit["index"].as_u64(), Some(i as u64));
        let id = unit["id"].as_str().unwrap();
        assert!(
            id.starts_with(&format!("IAT-1-{block_number}-{i}-")),
            "{id}"
        );
        assert!(ids.insert(id.to_string()), "duplicate id {id}");
        let lot = play_exported(&unit).unwrap_or_else(|e| panic!("unit {i}: {e}"));
        assert_eq!(unit["lot"].as_str(), lot.as_deref(), "unit {i}");
        let prize: Decimal = unit["prize"].as_str().unwrap().parse().unwrap();
        let expected = lot.as_deref().map_or(Decimal::ZERO, |l| amounts[l]);
        assert_eq!(prize, expected, "unit {i}");
        total += prize;
        *counts
            .entry(lot.unwrap_or_else(|| "none".into()))
            .or_insert(0) += 1;
    }
    let total_expected: Decimal = ARTICLE_4_5_TEXT
        .iter()
        .zip(ARTICLE_3_COUNTS)
        .map(|((_, a), n)| a[column].parse::<Decimal>().unwrap() * Decimal::from(n))
        .sum();
    assert_eq!(total, total_expected);
    counts
}

#[test]
fn a_block_of_each_price_holds_exactly_the_regulation_table() {
    for (column, (price, total)) in [(50, "157500"), (100, "315000"), (200, "630000")]
        .into_iter()
        .enumerate()
    {
        let fx = shared_block(price);
        let report = fx.verify(&fx.path, true);
        assert!(report.ok && report.complete, "{:#?}", report.failures);
        assert_eq!(report.summary.units, 450_000);
        let counts = check_export(fx, column);
        for ((lot, _), n) in ARTICLE_4_5_TEXT.iter().zip(ARTICLE_3_COUNTS) {
            assert_eq!(counts.get(*lot), Some(&n), "{lot} at {price} cents");
        }
        assert_eq!(counts["none"], 330_396);
        let lot_check = report
            .checks
            .iter()
            .find(|c| c.check == "lot_table")
            .unwrap();
        assert!(
            lot_check.detail.contains(&format!("{total} €")),
            "{}",
            lot_check.detail
        );
    }
}

fn test_master() -> [u8; 32] {
    derive::sha256(b"ticket-issuer test master secret")
}

/// The golden vector: a fixed secret gives fixed lot orders, records and
/// roots, today and after any dependency upgrade.
#[test]
fn generation_is_deterministic_and_matches_the_golden_vectors() {
    let path = format!(
        "{}/fixtures/golden/ile-au-tresor.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let golden = std::fs::read_to_string(&path).unwrap();
    let value = |key: &str| {
        golden
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}: ")))
            .unwrap_or_else(|| panic!("{path} has no {key}"))
            .to_string()
    };
    assert_eq!(value("master"), hex::encode(test_master()));
    let game = Game::ILE_AU_TRESOR;
    for price in [50u32, 100, 200] {
        let seed = derive::block_seed(&test_master(), game, 1, 1);
        let spec = BlockSpec {
            game,
            emission: 1,
            block: 1,
            price_cents: price,
            units: 450_000,
        };
        // One build per price: the golden root is what proves determinism.
        let a = build::build(spec, &seed, None, &|_| {}).unwrap();
        let table = game.lot_table(price).unwrap();
        let lots = build::lot_order(&seed, &table, 450_000);
        let first = build::records(game, &seed, &table, &lots, 0, 1000);
        assert_eq!(first, build::records(game, &seed, &table, &lots, 0, 1000));
        let got = [
            ("seed", hex::encode(seed)),
            ("lot_order_sha256", hex::encode(Sha256::digest(&lots))),
            (
                "first_1000_records_sha256",
                hex::encode(Sha256::digest(&first)),
            ),
            ("merkle_root", hex::encode(a.merkle_root)),
        ];
        for (key, v) in got {
            assert_eq!(
                value(&format!("price {price} {key}")),
                v,
                "price {price} {key}"
            );
        }
    }
}

/// Two stores with the same keys write bit-identical block files.
#[test]
fn the_same_keys_write_identical_files() {
    let a = shared_block(100);
    let b = tempfile::tempdir().unwrap();
    let store_b = ticket_issuer::store::Store::new(b.path().join("store"));
    copy_dir(&a.store_dir.join("keys"), &store_b.root().join("keys"));
    let secrets_b = store_b.secrets().unwrap();
    let pa = &a.path;
    let made = ticket_issuer::emission::Emission::new(&store_b, Game::ILE_AU_TRESOR, 1)
        .generate(
            &secrets_b,
            100,
            ticket_issuer::emission::BlockChoice::Number(1),
            &|_| {},
        )
        .unwrap();
    assert_eq!(
        std::fs::read(pa).unwrap(),
        std::fs::read(&made[0].summary.path).unwrap()
    );
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Applies a mutation from fixtures/tamper/cases.txt to a copy of a block.
fn mutate(bytes: &mut Vec<u8>, block: &BlockFile, mutation: &str) {
    let words: Vec<&str> = mutation.split_whitespace().collect();
    let h = &block.header;
    let at = |section: &str, offset: i64| -> usize {
        let (start, len) = match section {
            "header" => (0, h.encoded_len() as u64),
            "index" => (h.index_offset(), h.index_len() as u64),
            "seal" => (h.seal_offset, 64),
            chunk => {
                let n: usize = chunk.strip_prefix("chunk").unwrap().parse().unwrap();
                let e = &block.index[n];
                (e.offset, u64::from(e.length))
            }
        };
        let offset = if offset < 0 {
            len as i64 + offset
        } else {
            offset
        };
        assert!(
            (offset as u64) < len,
            "{mutation}: offset outside {section}"
        );
        (start as i64 + offset) as usize
    };
    match words.as_slice() {
        ["flip", section, offset, bit] => {
            let i = at(section, offset.parse().unwrap());
            bytes[i] ^= 1 << bit.parse::<u8>().unwrap();
        }
        ["set16", section, offset, value] => {
            let i = at(section, offset.parse().unwrap());
            bytes[i..i + 2].copy_from_slice(&value.parse::<u16>().unwrap().to_le_bytes());
        }
        ["truncate", n] => bytes.truncate(bytes.len() - n.parse::<usize>().unwrap()),
        ["append", n] => bytes.extend(std::iter::repeat_n(0u8, n.parse().unwrap())),
        other => panic!("unknown mutation {other:?}"),
    }
}

/// Every case of fixtures/tamper/cases.txt: the mutation and the exact set
/// of failure kinds verify (with the key) must report, or the error class
/// for a file that can't be read at all.
#[test]
fn every_tampering_is_caught_with_the_matching_failure() {
    let fx = shared_block(100);
    let dir = tempfile::tempdir().unwrap();
    let original = &fx.path;
    let block = BlockFile::open(original).unwrap();
    let pristine = std::fs::read(original).unwrap();
    let cases = std::fs::read_to_string(format!(
        "{}/fixtures/tamper/cases.txt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut seen = 0;
    let mut mismatches = Vec::new();
    for line in cases
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let parts: Vec<&str> = line.split('|').map(str::trim).collect();
        let [name, mutation, expect] = parts.as_slice() else {
            panic!("bad case {line}")
        };
        let mut bytes = pristine.clone();
        mutate(&mut bytes, &block, mutation);
        let path = dir.path().join(format!("{name}.tkb"));
        std::fs::write(&path, &bytes).unwrap();
        match expect.strip_prefix("error:") {
            Some(message) => {
                let err = fx.try_verify(&path, true).expect_err(name).to_string();
                assert!(err.contains(message.trim()), "{name}: {err}");
            }
            None => {
                let report = fx.verify(&path, true);
                let kinds = failure_kind_names(&report);
                let mut wanted: Vec<&str> = expect.split(',').map(str::trim).collect();
                wanted.sort();
                assert!(!report.ok, "{name}");
                if kinds != wanted {
                    mismatches.push(format!("{name}: got {kinds:?}, expected {wanted:?}"));
                }
            }
        }
        seen += 1;
    }
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    assert!(seen >= 12);
}

/// Issue 3: no plaintext of any chunk appears in the file, and the file
/// looks random to a compressor.
#[test]
fn a_block_file_reveals_no_record() {
    let fx = shared_block(100);
    let path = &fx.path;
    let file = std::fs::read(path).unwrap();
    let block = fx.authentic(path).unwrap();
    // Every probe in one set, then one pass over the file: linear, where
    // a search per probe would compare billions of windows.
    let mut probes: HashMap<[u8; 16], u32> = HashMap::new();
    for chunk in 0..block.file.header.chunk_count {
        let records = block.chunk_records(chunk).unwrap().records;
        let compressed = zstd::bulk::compress(&records, 3).unwrap();
        for probe in [&records[..16], &records[53..69], &compressed[..16]] {
            probes.insert(probe.try_into().unwrap(), chunk);
        }
    }
    let found: Vec<u32> = file
        .windows(16)
        .filter_map(|w| probes.get(w).copied())
        .collect();
    assert!(found.is_empty(), "plaintext of chunks {found:?} found");
    assert!(
        zstd::decode_all(&file[..]).is_err(),
        "the file must not be a zstd stream"
    );
    let squeezed = zstd::bulk::compress(&file, 19).unwrap();
    assert!(
        squeezed.len() * 1000 >= file.len() * 999,
        "zstd gained {} of {} bytes",
        file.len() - squeezed.len(),
        file.len()
    );
}

#[test]
fn verify_without_a_key_checks_structure_and_says_what_it_did_not_check() {
    let fx = shared_block(100);
    let path = &fx.path;
    let report = fx.verify(path, false);
    assert!(report.ok && !report.complete);
    let status = |name: &str| {
        report
            .checks
            .iter()
            .find(|c| c.check == name)
            .unwrap()
            .status
    };
    for passed in [
        "format",
        "layout",
        "index_digest",
        "seal",
        "index_roots",
        "chunk_digests",
    ] {
        assert_eq!(status(passed), Status::Passed, "{passed}");
    }
    for not_done in [
        "records",
        "lot_table",
        "merkle_root",
        "check_codes",
        "seed_commitment",
    ] {
        assert_eq!(status(not_done), Status::NotDone, "{not_done}");
    }
    let with_key = fx.verify(path, true);
    assert!(with_key.ok && with_key.complete);
}

/// Rewrites chunk `at`'s ciphertext with `replacement`, fixing the index
/// entries so that only the index digest (keyless) and the AEAD (with the
/// key) can notice.
fn replace_chunk(bytes: &[u8], block: &BlockFile, at: usize, replacement: &[u8]) -> Vec<u8> {
    let h = &block.header;
    let mut index = block.index.clone();
    let mut chunks: Vec<Vec<u8>> = index
        .iter()
        .map(|e| bytes[e.offset as usize..(e.offset + u64::from(e.length)) as usize].to_vec())
        .collect();
    chunks[at] = replacement.to_vec();
    let mut out = bytes[..h.encoded_len()].to_vec();
    let mut offset = h.chunks_offset();
    for (e, c) in index.iter_mut().zip(&chunks) {
        e.offset = offset;
        e.length = c.len() as u32;
        e.ciphertext_sha256 = Sha256::digest(c).into();
        offset += c.len() as u64;
    }
    for e in &index {
        e.encode(&mut out);
    }
    assert_eq!(out.len(), h.encoded_len() + INDEX_ENTRY_LEN * index.len());
    for c in &chunks {
        out.extend_from_slice(c);
    }
    // Keep the seal where the header says it is by padding or cutting.
    out.resize(h.seal_offset as usize, 0);
    out.extend_from_slice(&bytes[h.seal_offset as usize..]);
    out
}

fn kinds(report: &ticket_issuer::verify::BlockReport) -> HashSet<FailureKind> {
    report.failures.iter().map(|f| f.kind).collect()
}

#[test]
fn swapped_or_foreign_chunks_are_caught_with_and_without_the_key() {
    let fx = Fixture::new();
    let a = fx.test_block(1, 100);
    let b = fx.test_block(2, 100);
    let block_a = BlockFile::open(&a).unwrap();
    let bytes_a = std::fs::read(&a).unwrap();
    let ct = |block: &BlockFile, n: u32| block.read_ciphertext(n).unwrap();
    // Chunk 1's ciphertext at position 0 (a swap), and block 2's chunk 0.
    let swapped = replace_chunk(&bytes_a, &block_a, 0, &ct(&block_a, 1));
    let foreign = replace_chunk(&bytes_a, &block_a, 0, &ct(&BlockFile::open(&b).unwrap(), 0));
    for (name, bytes) in [("swapped", swapped), ("foreign", foreign)] {
        let path = fx.dir.path().join(format!("{name}.tkb"));
        std::fs::write(&path, bytes).unwrap();
        let keyless = kinds(&fx.verify(&path, false));
        assert!(
            keyless.contains(&FailureKind::IndexDigest),
            "{name}: {keyless:?}"
        );
        let keyed = kinds(&fx.verify(&path, true));
        assert!(keyed.contains(&FailureKind::Decrypt), "{name}: {keyed:?}");
    }
    // The AEAD alone refuses a chunk opened at another place or block.
    let key_a = fx.secrets.block_records_key(Game::ILE_AU_TRESOR, 1, 1);
    let c1 = ct(&block_a, 1);
    assert!(block_a.open_chunk(1, &c1, &key_a).is_ok());
    assert!(block_a.open_chunk(0, &c1, &key_a).is_err());
    let key_b = fx.secrets.block_records_key(Game::ILE_AU_TRESOR, 1, 2);
    assert!(block_a.open_chunk(1, &c1, &key_b).is_err());
}

#[test]
fn a_records_key_of_another_block_or_a_wrong_key_file_is_refused() {
    use ticket_issuer::records_key::RecordsKeyFile;
    let fx = Fixture::new();
    let a = fx.test_block(1, 100);
    let block_a = BlockFile::open(&a).unwrap();
    let check = |file: RecordsKeyFile| {
        let p = fx.dir.path().join("key.json");
        KeyAccess {
            secrets: None,
            files: &[(file.clone(), p.clone())],
        }
        .records_key(&block_a)
        .map(|k| k.is_some())
    };
    let emission_key = RecordsKeyFile::export(&fx.secrets, Game::ILE_AU_TRESOR, 1, None);
    assert!(check(emission_key.clone()).unwrap());
    assert!(check(RecordsKeyFile::export(
        &fx.secrets,
        Game::ILE_AU_TRESOR,
        1,
        Some(1)
    ))
    .unwrap());
    let other_block = check(RecordsKeyFile::export(
        &fx.secrets,
        Game::ILE_AU_TRESOR,
        1,
        Some(2),
    ))
    .unwrap_err();
    assert!(
        other_block
            .to_string()
            .contains("no records key given is for ile-au-tresor emission 1 block 1")
            && other_block
                .to_string()
                .contains("(ile-au-tresor emission 1 block 2)"),
        "{other_block}"
    );
    // Several files: each block takes the one for its emission and block.
    let several = [
        RecordsKeyFile::export(&fx.secrets, Game::ILE_AU_TRESOR, 2, None),
        RecordsKeyFile::export(&fx.secrets, Game::ILE_AU_TRESOR, 1, Some(2)),
        RecordsKeyFile::export(&fx.secrets, Game::ILE_AU_TRESOR, 1, Some(1)),
    ]
    .map(|f| (f, fx.dir.path().join("k.json")));
    let key = KeyAccess {
        secrets: None,
        files: &several,
    }
    .records_key(&block_a)
    .unwrap();
    assert_eq!(
        key,
        Some(fx.secrets.block_records_key(Game::ILE_AU_TRESOR, 1, 1))
    );
    let other_emission = check(RecordsKeyFile::export(
        &fx.secrets,
        Game::ILE_AU_TRESOR,
        2,
        None,
    ))
    .unwrap_err();
    assert!(
        other_emission.to_string().contains("emission 2"),
        "{other_emission}"
    );
    let mut forged = emission_key;
    forged.key = [0x11; 32];
    let wrong = check(forged).unwrap_err();
    assert!(
        matches!(wrong, ticket_issuer::Error::WrongRecordsKey { .. }),
        "{wrong}"
    );
    assert!(
        wrong.to_string().contains("not this block's records key"),
        "{wrong}"
    );
    // A file that is not a key file at all.
    let junk = fx.dir.path().join("junk.json");
    std::fs::write(&junk, "{\"kind\":\"something else\"}").unwrap();
    assert!(matches!(
        RecordsKeyFile::read(&junk),
        Err(ticket_issuer::Error::BadKey { .. })
    ));
    // Index entries parse back to what was written (layout sanity).
    let first = IndexEntry::parse(&block_a.index_bytes[..INDEX_ENTRY_LEN]);
    assert_eq!(first, block_a.index[0]);
}

fn chi_square(counts: &[u64], expected: f64) -> f64 {
    counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum()
}

/// The shuffle puts any lot anywhere with equal chance: the single top lot
/// of 400 blocks falls evenly into ten tenths of the block, and the 119,604
/// winners of one block spread evenly over its chunks.
#[test]
fn lot_positions_are_uniform() {
    let game = Game::ILE_AU_TRESOR;
    let table = game.lot_table(100).unwrap();
    let mut tenths = [0u64; 10];
    for block in 1..=400 {
        let seed = derive::block_seed(&test_master(), game, 1, block);
        let lots = build::lot_order(&seed, &table, 450_000);
        let top = lots.iter().position(|&l| l == 1).unwrap();
        tenths[top * 10 / 450_000] += 1;
    }
    // 9 degrees of freedom, P(chi2 > 27.88) = 0.001.
    assert!(chi_square(&tenths, 40.0) < 27.88, "{tenths:?}");

    let seed = derive::block_seed(&test_master(), game, 1, 1);
    let lots = build::lot_order(&seed, &table, 450_000);
    let per_chunk: Vec<u64> = lots[..109 * 4096]
        .chunks(4096)
        .map(|c| c.iter().filter(|&&l| l != 0).count() as u64)
        .collect();
    let expected = 4096.0 * 119_604.0 / 450_000.0;
    // 108 degrees of freedom, P(chi2 > 157.0) ≈ 0.001.
    let chi2 = chi_square(&per_chunk, expected);
    assert!(chi2 < 157.0, "chi2 {chi2}");
}

/// A test-size block is a block in every respect but its size: with test
/// sizes allowed it passes every check against the scaled lot table;
/// without, verify fails it as `block_size` and nothing else, and the
/// production paths (export, redeem) refuse to open it.
#[test]
fn a_test_size_block_is_refused_unless_test_sizes_are_allowed() {
    use ticket_issuer::verify::{verify_block, VerifyOptions};
    let fx = Fixture::new();
    let path = fx.test_block(1, 100);
    let allowed = fx.verify(&path, true);
    assert!(allowed.ok && allowed.complete, "{:#?}", allowed.failures);
    assert_eq!(allowed.summary.units, TEST_UNITS);
    let opts = VerifyOptions::new(
        &fx.trusted,
        KeyAccess {
            secrets: Some(&fx.secrets),
            files: &[],
        },
    );
    let refused = verify_block(&path, &opts).unwrap();
    assert!(!refused.ok);
    assert_eq!(kinds(&refused), HashSet::from([FailureKind::BlockSize]));
    let opened = fx.authentic(&path);
    match opened {
        Err(ticket_issuer::Error::BlockRejected { reason, .. }) => {
            assert!(reason.contains("test-size block"), "{reason}")
        }
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("a test-size block was opened for export"),
    }
}

/// The scaled lot table: each tier's count × units / 450,000, rounded down,
/// amounts unchanged; a full block's table is the regulation's.
#[test]
fn a_test_size_lot_table_is_the_regulation_scaled_down() {
    let game = Game::ILE_AU_TRESOR;
    let full = game.lot_table(100).unwrap();
    assert_eq!(game.lot_table_for(100, 450_000).unwrap(), full);
    let small = game.lot_table_for(100, TEST_UNITS).unwrap();
    let counts: Vec<u32> = small.tiers.iter().map(|t| t.count).collect();
    assert_eq!(counts, [0, 0, 2, 20, 10, 40, 531, 776, 1062]);
    for (s, f) in small.tiers.iter().zip(&full.tiers) {
        assert_eq!((s.code, s.amount_cents), (f.code, f.amount_cents));
    }
}

/// A block of no units, or of more than the game's size, is not made, for
/// either game.
#[test]
fn a_block_size_out_of_bounds_is_refused() {
    let seed = [7u8; 32];
    for (game, max) in [
        (Game::ILE_AU_TRESOR, 450_000),
        (Game::TRESORS_ENSABLES, 10_000_000),
    ] {
        for units in [0, max + 1] {
            let spec = BlockSpec {
                game,
                emission: 1,
                block: 1,
                price_cents: 100,
                units,
            };
            match build::build(spec, &seed, None, &|_| {}) {
                Err(ticket_issuer::Error::BlockUnits {
                    units: u, max: m, ..
                }) => {
                    assert_eq!((u, m), (units, max))
                }
                Err(other) => panic!("{}, {units}: {other}", game.slug()),
                Ok(_) => panic!("a {} block of {units} units was made", game.slug()),
            }
        }
    }
}

/// With a revealed seed the chunk pass compares every chunk with its
/// regeneration: the right seed passes `regeneration` and `check_codes`;
/// a wrong one fails `regeneration` (from a full rebuild), `seed_commitment`
/// and every unit's check code, and nothing else.
#[test]
fn a_revealed_seed_regenerates_the_block_or_fails_it() {
    use ticket_issuer::verify::{verify_block, VerifyOptions};
    let fx = Fixture::new();
    let path = fx.test_block(1, 100);
    let with_seed = |seed: [u8; 32]| {
        verify_block(
            &path,
            &VerifyOptions {
                allow_test_sizes: true,
                revealed_seed: Some(seed),
                ..VerifyOptions::new(&fx.trusted, fx.access(true))
            },
        )
        .unwrap()
    };
    let status = |r: &ticket_issuer::verify::BlockReport, check: &str| {
        r.checks.iter().find(|c| c.check == check).unwrap().status
    };
    let right = with_seed(
        fx.secrets
            .block_seed(Game::ILE_AU_TRESOR, 1, 1)
            .unwrap()
            .unwrap(),
    );
    assert!(right.ok && right.complete, "{:#?}", right.failures);
    assert_eq!(status(&right, "regeneration"), Status::Passed);
    assert_eq!(status(&right, "check_codes"), Status::Passed);

    let wrong_seed = fx
        .secrets
        .block_seed(Game::ILE_AU_TRESOR, 1, 2)
        .unwrap()
        .unwrap();
    let wrong = with_seed(wrong_seed);
    let failed: HashSet<&str> = wrong
        .checks
        .iter()
        .filter(|c| c.status == Status::Failed)
        .map(|c| c.check)
        .collect();
    assert_eq!(
        failed,
        HashSet::from(["regeneration", "seed_commitment", "check_codes"])
    );
    assert!(
        wrong.failure_count > TEST_UNITS as usize,
        "every unit's check code fails: {} failures",
        wrong.failure_count
    );
}

/// Issue 19: the SHA-256 `verify` reports is of the file its checks read,
/// through the one descriptor they read (it used to open the path a second
/// time): a file renamed over the path meanwhile is not what is hashed.
#[test]
fn the_reported_digest_is_of_the_file_the_checks_read() {
    let fx = crate::common::Fixture::new();
    let path = fx.test_block(1, 100);
    let original = std::fs::read(&path).unwrap();
    let report = fx.verify(&path, true);
    assert!(report.ok);
    assert_eq!(
        report.summary.file_sha256,
        hex::encode(Sha256::digest(&original))
    );
    let block = BlockFile::open(&path).unwrap();
    let other = fx.test_block(2, 100);
    std::fs::rename(&other, &path).unwrap();
    assert_eq!(
        block.sha256().unwrap(),
        <[u8; 32]>::from(Sha256::digest(&original))
    );
    assert_ne!(
        std::fs::read(&path).unwrap(),
        original,
        "the path now names another file"
    );
}
