//! The failure-class vectors of fixtures/vectors/ (README there): one small
//! block file per class, each forged from fixed test keys so that only the
//! targeted check can catch it, and one test per file asserting exactly the
//! failure kinds (or the error) its header names.
//!
//! Regenerate them with
//! `cargo test --release --test it -- --ignored vectors::generate_vectors`.
//!
//! Also the derivation and unit-ID vectors of every game in
//! fixtures/derive/ (`derivation_vectors_hold`; regenerate with
//! `… --ignored vectors::generate_derivation_vectors`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{failure_kind_names, json_names};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use ed25519_dalek::SigningKey;
use ticket_issuer::block::build::{self, BlockSpec, BuiltBlock};
use ticket_issuer::block::{writer, HeaderProblem, CHUNK_UNITS, SEAL_LEN};
use ticket_issuer::derive;
use ticket_issuer::game::Game;
use ticket_issuer::merkle;
use ticket_issuer::records_key::{KeyAccess, RecordsKeyFile, KIND};
use ticket_issuer::test_support::ChunkPlace;
use ticket_issuer::unit_id::UnitId;
use ticket_issuer::verify::{verify_block, VerifyOptions};

/// Units of a vector block: one partial chunk, a few kB per file.
const VECTOR_UNITS: u32 = 600;
/// The group order L of Ed25519, little-endian.
const ED25519_L: [u8; 32] = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/vectors")
}

/// The fixed test keys: each is SHA-256 of its label, so the generator
/// needs no randomness. keys.txt records them in hex.
struct Keys {
    signing: SigningKey,
    other_signing: SigningKey,
    records: [u8; 32],
    other_records: [u8; 32],
    seed: [u8; 32],
}

fn keys() -> Keys {
    let k = |label: &str| derive::sha256(format!("ticket-issuer vector {label}").as_bytes());
    Keys {
        signing: SigningKey::from_bytes(&k("signing key")),
        other_signing: SigningKey::from_bytes(&k("other signing key")),
        records: k("records key"),
        other_records: k("other records key"),
        seed: k("block seed"),
    }
}

fn spec() -> BlockSpec {
    BlockSpec {
        game: Game::ILE_AU_TRESOR,
        emission: 1,
        block: 1,
        price_cents: 100,
        units: VECTOR_UNITS,
    }
}

/// A vector file: its `key: value` header and its body.
struct Vector {
    header: BTreeMap<String, String>,
    body: Vec<u8>,
}

fn read_vector(name: &str) -> Vector {
    let bytes = std::fs::read(dir().join(format!("{name}.vec"))).unwrap();
    let split = bytes
        .windows(2)
        .position(|w| w == b"\n\n")
        .unwrap_or_else(|| panic!("{name}: no blank line after the header"));
    let header = std::str::from_utf8(&bytes[..split])
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(": ").unwrap_or_else(|| panic!("{name}: {l}"));
            (k.to_string(), v.to_string())
        })
        .collect();
    Vector {
        header,
        body: bytes[split + 2..].to_vec(),
    }
}

fn write_vector(name: &str, comment: &str, expect: &str, body: &[u8]) {
    let mut out =
        format!("expect: {name}\ncomment: {comment}\nkeys: keys.txt\n{expect}\n\n").into_bytes();
    out.extend_from_slice(body);
    std::fs::write(dir().join(format!("{name}.vec")), out).unwrap();
}

/// The block's chunk records, made from the seed (one chunk).
fn records() -> Vec<u8> {
    let s = spec();
    let table = s.game.lot_table_for(s.price_cents, s.units).unwrap();
    let lots = build::lot_order(&keys().seed, &table, s.units);
    build::records(s.game, &keys().seed, &table, &lots, 0, s.units)
}

fn built() -> BuiltBlock {
    build::build(spec(), &keys().seed, Some(&keys().records), &|_| {}).unwrap()
}

/// Encrypts `plaintext` as chunk 0 (the format's AEAD, any plaintext).
fn encrypt(plaintext: &[u8]) -> Vec<u8> {
    let s = spec();
    let place = ChunkPlace {
        game: s.game.id(),
        emission: s.emission,
        block: s.block,
        chunk: 0,
        units: s.units,
        price_cents: s.price_cents,
        rules_version: s.game.rules_version(),
    };
    ChaCha20Poly1305::new(Key::from_slice(&keys().records))
        .encrypt(
            Nonce::from_slice(&place.nonce()),
            Payload {
                msg: plaintext,
                aad: &place.associated_data(),
            },
        )
        .unwrap()
}

/// Writes `block` sealed with `signer` and encrypted for `records_key`, and
/// returns the file's bytes: index, digests and seal all consistent.
fn sealed(block: &BuiltBlock, records_key: &[u8; 32], signer: &SigningKey) -> Vec<u8> {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("b.tkb");
    writer::write(block, records_key, signer, &path).unwrap();
    std::fs::read(&path).unwrap()
}

/// A block whose one chunk holds `plaintext` (as the frame(s)) and whose
/// subtree and Merkle roots are those of `recs`, sealed with the test keys.
fn with_chunk(plaintext: &[u8], recs: &[u8]) -> Vec<u8> {
    let mut b = built();
    b.chunks[0].ciphertext = encrypt(plaintext);
    b.chunks[0].subtree_root = build::records_root(recs, recs.len() / VECTOR_UNITS as usize);
    b.merkle_root = b.chunks[0].subtree_root;
    sealed(&b, &keys().records, &keys().signing)
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(bytes, 3).unwrap()
}

/// Writes every vector and keys.txt. Deterministic: the same bytes on every
/// run with the same zstd (compressed bytes may differ between versions).
#[test]
#[ignore = "writes fixtures/vectors; run by hand to regenerate"]
fn generate_vectors() {
    let k = keys();
    std::fs::create_dir_all(dir()).unwrap();
    std::fs::write(
        dir().join("keys.txt"),
        format!(
            "comment: fixed test keys of the vectors, each SHA-256(\"ticket-issuer vector <label>\"); test material only\n\
             public-key: {}\nrecords-key: {}\nsigning-key: {}\nblock-seed: {}\ngame: ile-au-tresor\nemission: 1\nblock: 1\n",
            hex::encode(k.signing.verifying_key().to_bytes()),
            hex::encode(k.records),
            hex::encode(k.signing.to_bytes()),
            hex::encode(k.seed),
        ),
    )
    .unwrap();
    let valid = sealed(&built(), &k.records, &k.signing);
    let recs = records();
    let size = recs.len() / VECTOR_UNITS as usize;

    let mut v = valid.clone();
    v[0] = b'X';
    write_vector(
        "bad-magic",
        "first magic byte changed",
        "error: bad_magic",
        &v,
    );

    let mut v = valid.clone();
    v[8..10].copy_from_slice(&2u16.to_le_bytes());
    write_vector(
        "unsupported-version",
        "format version 2: unsupported, not corrupt",
        "error: unsupported_version",
        &v,
    );

    let v = &valid[..valid.len() - 10];
    write_vector(
        "truncated",
        "the last 10 bytes (of the seal) cut off",
        "failures: truncated, seal_invalid",
        v,
    );

    let mut v = valid.clone();
    v.extend_from_slice(b"garbage");
    write_vector(
        "trailing-data",
        "7 bytes after the seal",
        "failures: trailing_bytes",
        &v,
    );

    let mut garbage = zstd(&recs);
    garbage[..4].copy_from_slice(b"NOTZ");
    write_vector(
        "bad-zstd-frame",
        "the chunk's plaintext is not a zstd frame (magic changed); re-encrypted and re-sealed",
        "failures: decompress",
        &with_chunk(&garbage, &recs),
    );

    let half = (VECTOR_UNITS as usize / 2) * size;
    let mut two = zstd(&recs[..half]);
    two.extend_from_slice(&zstd(&recs[half..]));
    write_vector(
        "two-frames",
        "the chunk is two zstd frames whose records total the right size; re-encrypted and re-sealed",
        "failures: chunk_frames",
        &with_chunk(&two, &recs),
    );

    let short = &recs[..recs.len() - size];
    write_vector(
        "record-count",
        "one frame of 599 records for a 600-unit chunk; re-encrypted and re-sealed",
        "failures: record_count",
        &with_chunk(&zstd(short), &recs),
    );

    let mut b = built();
    b.chunks[0].subtree_root[0] ^= 1;
    b.merkle_root = merkle::root_from_hashes(&[b.chunks[0].subtree_root]);
    write_vector(
        "chunk-root",
        "index subtree root changed, header root made from it, re-sealed: the records do not hash to either",
        "failures: subtree_root, merkle_root",
        &sealed(&b, &k.records, &k.signing),
    );

    let mut b = built();
    b.merkle_root[0] ^= 1;
    write_vector(
        "merkle-root",
        "header Merkle root changed and re-sealed: neither the index roots nor the records make it",
        "failures: index_roots, merkle_root",
        &sealed(&b, &k.records, &k.signing),
    );

    let mut v = valid.clone();
    let last = v.len() - 1;
    v[last] ^= 0x01;
    write_vector(
        "bad-seal",
        "one bit of the seal flipped",
        "failures: seal_invalid",
        &v,
    );

    // S + L: the same signature, S not reduced (RFC 8032 §5.1.7 rejects it).
    let mut v = valid.clone();
    let s_at = v.len() - SEAL_LEN + 32;
    let mut carry = 0u16;
    for i in 0..32 {
        let sum = u16::from(v[s_at + i]) + u16::from(ED25519_L[i]) + carry;
        v[s_at + i] = sum as u8;
        carry = sum >> 8;
    }
    assert_eq!(carry, 0);
    write_vector(
        "seal-s-not-reduced",
        "the seal's S replaced by S + L (a valid signature otherwise)",
        "failures: seal_invalid",
        &v,
    );

    write_vector(
        "wrong-signer",
        "sealed by another Ed25519 key, which the header names",
        "failures: wrong_signer",
        &sealed(&built(), &k.records, &k.other_signing),
    );

    let mut b = build::build(spec(), &k.seed, Some(&k.other_records), &|_| {}).unwrap();
    b.spec = spec();
    write_vector(
        "wrong-records-key",
        "a valid block encrypted for another records key than keys.txt's",
        "error: wrong_records_key",
        &sealed(&b, &k.other_records, &k.signing),
    );

    // Unit 0's chest 1 moved onto chest 0: two chests on one square.
    let mut bad = recs.clone();
    bad.copy_within(18..20, 21);
    write_vector(
        "rule-violation",
        "unit 0 has two chests on one square; re-encrypted, roots recomputed, re-sealed",
        "failures: unit_rules",
        &with_chunk(&zstd(&bad), &bad),
    );
    generate_emission_vectors();

    let mut b = built();
    b.lot_table.tiers[8].amount_cents += 1;
    write_vector(
        "lot-table",
        "header lot table: chandelier-1 pays 1.01 €; re-sealed (the records keep the regulation's)",
        "failures: lot_table",
        &sealed(&b, &k.records, &k.signing),
    );
}

/// Block `block` of emission 1 (test size, 1 €), sealed with the test
/// key, its seed SHA-256("ticket-issuer vector block seed <block>"): its bytes.
fn emission_block(block: u32) -> Vec<u8> {
    let k = keys();
    let seed = derive::sha256(format!("ticket-issuer vector block seed {block}").as_bytes());
    // The emission's records key file holds k.records; each block's key is
    // derived from it (docs/FORMAT.md §Records key file).
    let key = derive::block_records_key(&k.records, block);
    let spec = BlockSpec { block, ..spec() };
    let b = build::build(spec, &seed, Some(&key), &|_| {}).unwrap();
    sealed(&b, &key, &k.signing)
}

/// The manifest entry of a block file's bytes.
fn manifest_entry(bytes: &[u8], file: &str) -> serde_json::Value {
    let h = ticket_issuer::block::Header::parse(bytes).unwrap();
    serde_json::json!({
        "block": h.block,
        "price": "1",
        "units": h.unit_count,
        "merkle_root": hex::encode(h.merkle_root),
        "file_sha256": hex::encode(derive::sha256(bytes)),
        "seed_commitment": hex::encode(h.seed_commitment),
        "file": file,
    })
}

/// An emission folder's files: the block files, and the manifest listing
/// `entries`, signed with the test key.
fn emission_files(
    blocks: Vec<(&str, Vec<u8>)>,
    entries: Vec<serde_json::Value>,
) -> Vec<(String, Vec<u8>)> {
    let manifest = serde_json::to_vec_pretty(&serde_json::json!({
        "kind": "ticket-issuer emission manifest",
        "version": 1,
        "game": "ile-au-tresor",
        "emission": 1,
        "closed": false,
        "issuer_public_key": hex::encode(keys().signing.verifying_key().to_bytes()),
        "blocks": entries,
    }))
    .unwrap();
    let signature = ticket_issuer::seal::sign(&keys().signing, &manifest);
    let mut files: Vec<(String, Vec<u8>)> = blocks
        .into_iter()
        .map(|(n, b)| (n.to_string(), b))
        .collect();
    files.push(("manifest.json".into(), manifest));
    files.push(("manifest.json.sig".into(), signature.to_vec()));
    files
}

/// A folder as one body: per file `file: NAME LENGTH`, a newline, the
/// bytes, a newline.
fn pack(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, bytes) in files {
        out.extend_from_slice(format!("file: {name} {}\n", bytes.len()).as_bytes());
        out.extend_from_slice(bytes);
        out.push(b'\n');
    }
    out
}

fn unpack(mut body: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    while !body.is_empty() {
        let line_end = body.iter().position(|&b| b == b'\n').unwrap();
        let line = std::str::from_utf8(&body[..line_end]).unwrap();
        let (name, len) = line
            .strip_prefix("file: ")
            .and_then(|l| l.rsplit_once(' '))
            .unwrap_or_else(|| panic!("bad file line {line:?}"));
        let len: usize = len.parse().unwrap();
        let start = line_end + 1;
        files.push((name.to_string(), body[start..start + len].to_vec()));
        assert_eq!(body[start + len], b'\n');
        body = &body[start + len + 1..];
    }
    files
}

/// Writes the two emission-folder vectors.
fn generate_emission_vectors() {
    let (one, two) = (emission_block(1), emission_block(2));
    let entries = vec![
        manifest_entry(&one, "b000001.tkb"),
        manifest_entry(&two, "b000002.tkb"),
    ];
    // The two files swapped: each holds the other block.
    let swapped = emission_files(
        vec![("b000001.tkb", two.clone()), ("b000002.tkb", one.clone())],
        entries.clone(),
    );
    write_vector(
        "misplaced-block",
        "emission folder: blocks 1 and 2 swapped between their files; manifest signed",
        "problems: misplaced_block",
        &pack(&swapped),
    );
    // The manifest (re-signed) lists block 1 with another Merkle root and
    // file digest than its file's.
    let mut altered = entries;
    altered[0]["merkle_root"] = serde_json::Value::String("11".repeat(32));
    altered[0]["file_sha256"] = serde_json::Value::String("22".repeat(32));
    let files = emission_files(vec![("b000001.tkb", one), ("b000002.tkb", two)], altered);
    write_vector(
        "manifest-mismatch",
        "emission folder: the signed manifest lists block 1 with another root and digest than its file",
        "problems: altered_block",
        &pack(&files),
    );
}

/// Unpacks an emission vector into a store and verifies the emission.
fn check_emission(name: &str, vector: &Vector, wanted: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let store = ticket_issuer::store::Store::new(tmp.path().join("store"));
    let emission = ticket_issuer::emission::Emission::new(&store, Game::ILE_AU_TRESOR, 1);
    std::fs::create_dir_all(emission.dir()).unwrap();
    for (file, bytes) in unpack(&vector.body) {
        std::fs::write(emission.dir().join(file), bytes).unwrap();
    }
    let report = with_test_keys(None, |opts| {
        ticket_issuer::audit::verify_emission(&emission, opts, None)
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(!report.ok, "{name} passed verification");
    assert!(report.blocks.iter().all(|b| b.ok), "{name}: a block fails");
    let kinds = json_names(report.problems.iter().map(|p| p.kind));
    let mut wanted: Vec<&str> = wanted.split(", ").collect();
    wanted.sort();
    assert_eq!(kinds, wanted, "{name}: {:#?}", report.problems);
}

/// Runs `f` with verification options of the test keys: the trusted public
/// key, a records key file holding keys.txt's key for emission 1 (`block`
/// None: an emission key) and test sizes allowed.
fn with_test_keys<R>(block: Option<u32>, f: impl FnOnce(&VerifyOptions) -> R) -> R {
    let k = keys();
    let key_file = RecordsKeyFile {
        kind: KIND.into(),
        game: "ile-au-tresor".into(),
        emission: 1,
        block,
        key: k.records,
    };
    let trusted = k.signing.verifying_key();
    f(&VerifyOptions {
        allow_test_sizes: true,
        ..VerifyOptions::new(
            &trusted,
            KeyAccess {
                secrets: None,
                files: &[(key_file.clone(), "keys.txt".into())],
            },
        )
    })
}

/// Verifies a vector's body with the test keys and test sizes allowed.
fn check(name: &str) {
    let vector = read_vector(name);
    assert_eq!(vector.header["expect"], name);
    if let Some(wanted) = vector.header.get("problems") {
        return check_emission(name, &vector, wanted);
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(format!("{name}.tkb"));
    std::fs::write(&path, &vector.body).unwrap();
    let result = with_test_keys(Some(1), |opts| verify_block(&path, opts));
    match (vector.header.get("failures"), vector.header.get("error")) {
        (Some(wanted), None) => {
            let report = result.unwrap_or_else(|e| panic!("{name}: {e}"));
            let kinds = failure_kind_names(&report);
            let mut wanted: Vec<&str> = wanted.split(", ").collect();
            wanted.sort();
            assert!(!report.ok, "{name} passed verification");
            assert_eq!(kinds, wanted, "{name}: {:#?}", report.failures);
        }
        (None, Some(wanted)) => {
            let error = match result {
                Ok(report) => panic!("{name}: read as a block: {:#?}", report.failures),
                Err(e) => e,
            };
            let got = match &error {
                ticket_issuer::Error::UnreadableBlock {
                    problem: HeaderProblem::BadMagic(_),
                    ..
                } => "bad_magic",
                ticket_issuer::Error::UnreadableBlock {
                    problem: HeaderProblem::UnsupportedVersion { .. },
                    ..
                } => "unsupported_version",
                ticket_issuer::Error::WrongRecordsKey { .. } => "wrong_records_key",
                _ => "another error",
            };
            assert_eq!(got, wanted.as_str(), "{name}: {error}");
        }
        _ => panic!("{name}: the header needs exactly one of failures: or error:"),
    }
}

/// One test per vector file, named after its class.
macro_rules! vector_tests {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                check($name);
            }
        )*

        /// Every .vec file in the folder has its test above.
        #[test]
        fn every_vector_file_has_a_test() {
            let mut tested = vec![$($name),*];
            tested.sort();
            let mut files: Vec<String> = std::fs::read_dir(dir())
                .unwrap()
                .filter_map(|e| {
                    let name = e.unwrap().file_name().to_string_lossy().into_owned();
                    name.strip_suffix(".vec").map(str::to_string)
                })
                .collect();
            files.sort();
            assert_eq!(files, tested);
        }
    };
}

vector_tests! {
    bad_magic => "bad-magic",
    unsupported_version => "unsupported-version",
    truncated => "truncated",
    trailing_data => "trailing-data",
    bad_zstd_frame => "bad-zstd-frame",
    two_frames => "two-frames",
    record_count => "record-count",
    chunk_root => "chunk-root",
    merkle_root => "merkle-root",
    bad_seal => "bad-seal",
    seal_s_not_reduced => "seal-s-not-reduced",
    wrong_signer => "wrong-signer",
    wrong_records_key => "wrong-records-key",
    rule_violation => "rule-violation",
    lot_table => "lot-table",
    misplaced_block => "misplaced-block",
    manifest_mismatch => "manifest-mismatch",
}

// Derivation and unit-ID vectors, one file per game in fixtures/derive/
// (docs/FORMAT.md §Keys and derivations): every secret, check code and ID
// the game derives from master secret 00 01 … 1f, a chunk's nonce and
// associated data, and unit 0's record of the block whose seed is 00 01 …
// 1f. Written by the code; the test fails when the code's output changes.

/// The games whose vectors fixtures/derive/ holds, in header-code order.
const DERIVATION_GAMES: [Game; 2] = [Game::ILE_AU_TRESOR, Game::TRESORS_ENSABLES];

fn derive_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/derive")
}

/// The units whose check code and ID a vector file gives: the first two,
/// the last of a default block and the last of the largest block.
fn vector_indices(game: Game) -> Vec<u32> {
    let mut indices = vec![0, 1, game.block_units() - 1, game.max_units() - 1];
    indices.dedup();
    indices
}

/// The vector file of `game`, as the code makes it: `# ` comment lines,
/// then one `name: value` a line.
fn derivation_vectors(game: Game) -> String {
    let slug = game.slug();
    let master: [u8; 32] = std::array::from_fn(|i| i as u8);
    let price_cents = 100;
    assert!(game.prices_cents().contains(&price_cents), "{slug} at 1 €");
    let seed = derive::block_seed(&master, game, 1, 1);
    let emission_key = derive::emission_records_key(&master, game, 1);
    let block_key = derive::block_records_key(&emission_key, 1);
    let mut lines = vec![
        format!(
            "# Derivation and unit-ID vectors of {slug} (docs/FORMAT.md §Keys and derivations,"
        ),
        "# §Unit ID, §Chunks, §Unit record), written by the code:".into(),
        "#   cargo test --release --test it -- --ignored vectors::generate_derivation_vectors"
            .into(),
        "# and checked by tests/it/vectors.rs (vectors::derivation_vectors_hold). Emission 1,"
            .into(),
        "# block 1 of master secret 00 01 … 1f; the chunk is the last of a default block at 1 €;"
            .into(),
        "# the record is unit 0 of the 1 € block whose seed is 00 01 … 1f (record-seed). A change"
            .into(),
        "# here changes every block, ID and key of the game: never without a new version.".into(),
        format!("game: {slug}"),
        format!("master: {}", hex::encode(master)),
        "emission: 1".into(),
        "block: 1".into(),
        format!("block-seed: {}", hex::encode(seed)),
        format!(
            "seed-commitment: {}",
            hex::encode(derive::seed_commitment(&seed))
        ),
        format!("emission-records-key: {}", hex::encode(emission_key)),
        format!("block-records-key: {}", hex::encode(block_key)),
        format!(
            "records-key-id: {}",
            hex::encode(derive::records_key_id(&block_key))
        ),
    ];
    for index in vector_indices(game) {
        let check_code = derive::check_code(&seed, index);
        let id = UnitId {
            game,
            emission: 1,
            block: 1,
            index,
            check_code,
        };
        lines.push(format!("check-code {index}: {}", hex::encode(check_code)));
        lines.push(format!("id {index}: {id}"));
    }
    let chunk = (game.block_units() - 1) / CHUNK_UNITS;
    let place = ChunkPlace {
        game: game.id(),
        emission: 1,
        block: 1,
        chunk,
        units: game.block_units() - chunk * CHUNK_UNITS,
        price_cents,
        rules_version: game.rules_version(),
    };
    lines.push(format!("chunk {chunk} units: {}", place.units));
    lines.push(format!(
        "chunk {chunk} nonce: {}",
        hex::encode(place.nonce())
    ));
    lines.push(format!(
        "chunk {chunk} associated-data: {}",
        hex::encode(place.associated_data())
    ));
    let record_seed: [u8; 32] = std::array::from_fn(|i| i as u8);
    let table = game.lot_table(price_cents).unwrap();
    let lots = build::lot_order(&record_seed, &table, game.block_units());
    let record = build::records(game, &record_seed, &table, &lots, 0, 1);
    lines.push(format!("record-seed: {}", hex::encode(record_seed)));
    lines.push(format!("record 0: {}", hex::encode(record)));
    lines.push(String::new());
    lines.join("\n")
}

/// Writes fixtures/derive/<slug>.txt for every game.
#[test]
#[ignore = "writes fixtures/derive; run by hand to regenerate"]
fn generate_derivation_vectors() {
    std::fs::create_dir_all(derive_dir()).unwrap();
    for game in DERIVATION_GAMES {
        let path = derive_dir().join(format!("{}.txt", game.slug()));
        std::fs::write(path, derivation_vectors(game)).unwrap();
    }
}

/// Lines of a vector file that docs/FORMAT.md does not print as they are:
/// the inputs and the record (printed split into its fields); nor the
/// chunk's unit count (`chunk N units`).
const NOT_IN_FORMAT: [&str; 6] = [
    "game",
    "master",
    "emission",
    "block",
    "record-seed",
    "record 0",
];

/// The `name: value` lines of a vector file.
fn vector_values(text: &str) -> Vec<(&str, &str)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            l.split_once(": ")
                .unwrap_or_else(|| panic!("bad line {l:?}"))
        })
        .collect()
}

/// The code still gives every value of fixtures/derive/, line for line;
/// every ID reads back (lower case too) as its unit; docs/FORMAT.md prints
/// every derived value.
#[test]
fn derivation_vectors_hold() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/FORMAT.md"))
        .unwrap();
    let mut files: Vec<String> = std::fs::read_dir(derive_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    // One file per game, and the share-derived seeds' (checked by
    // tests/it/shares.rs).
    let mut wanted: Vec<String> = DERIVATION_GAMES
        .iter()
        .map(|g| format!("{}.txt", g.slug()))
        .chain(["seed-shares.txt".to_string()])
        .collect();
    wanted.sort();
    assert_eq!(
        files, wanted,
        "one vector file per game, and seed-shares.txt"
    );
    for game in DERIVATION_GAMES {
        let path = derive_dir().join(format!("{}.txt", game.slug()));
        let stored = std::fs::read_to_string(&path).unwrap();
        let made = derivation_vectors(game);
        let (stored_values, made_values) = (vector_values(&stored), vector_values(&made));
        for (s, m) in stored_values.iter().zip(&made_values) {
            assert_eq!(s, m, "{}: the code now gives another value", path.display());
        }
        assert_eq!(stored_values.len(), made_values.len(), "{}", path.display());
        assert_eq!(stored, made, "{}: comments differ", path.display());
        for (name, value) in stored_values {
            if let Some(index) = name.strip_prefix("id ") {
                let unit: UnitId = value.to_lowercase().parse().unwrap();
                assert_eq!(unit.to_string(), value);
                assert_eq!((unit.game, unit.index.to_string()), (game, index.into()));
            }
            let derived = !NOT_IN_FORMAT.contains(&name) && !name.ends_with(" units");
            if derived {
                assert!(
                    doc.contains(value),
                    "FORMAT.md lacks {name} {value} of {game:?}"
                );
            }
        }
    }
}
