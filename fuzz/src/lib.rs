//! The fuzz targets' entry functions (docs/FUZZING.md). Each takes arbitrary
//! bytes, runs them through the library's byte-based readers and the checks
//! that follow, and names the outcome. A panic, a hang or an unbounded
//! allocation is a defect; any `Err` is a correct refusal.
//!
//! `tests/fuzz_replay.rs` includes this file by path and replays every
//! corpus and crash file through the same functions.

use std::path::Path;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use ed25519_dalek::VerifyingKey;
use ticket_issuer::block::reader::BlockFile;
use ticket_issuer::emission::{manifest_game, Manifest, Reveal};
use ticket_issuer::merkle::{self, Hash};
use ticket_issuer::money::Cents;
use ticket_issuer::records_key::RecordsKeyFile;
use ticket_issuer::seal;
use ticket_issuer::test_support::OpenProblem;
use ticket_issuer::unit_id::UnitId;
use ticket_issuer::verify::check_unit;
use ticket_issuer::Error;

/// The records key the block seed corpus is encrypted with.
pub const RECORDS_KEY: [u8; 32] = [0x42; 32];

/// The name every input goes by in error messages.
const INPUT: &str = "fuzz-input";

/// The variant name of an error ("BadFile"), the outcome tests assert.
fn refused(e: &Error) -> String {
    let debug = format!("{e:?}");
    let end = debug.find([' ', '(', '{']).unwrap_or(debug.len());
    debug[..end].to_string()
}

/// Reads `data` as a block file: header, index, seal, then chunk 0,
/// decrypted with [`RECORDS_KEY`], decompressed, and every record decoded
/// and played. When chunk 0 does not decrypt, its bytes are also taken as
/// a zstd frame and encrypted with its place, so the decompressor and the
/// unit checks see fuzzed bytes too.
pub fn block_reader(data: &[u8]) -> String {
    let block = match BlockFile::from_bytes(Path::new(INPUT), data.to_vec()) {
        Ok(b) => b,
        Err(e) => return refused(&e),
    };
    let h = &block.header;
    let sealed = match (VerifyingKey::from_bytes(&h.signer), block.seal.as_ref()) {
        (Ok(signer), Some(s)) => seal::verify(&signer, &block.header_bytes, s),
        _ => false,
    };
    let roots: Vec<Hash> = block.index.iter().map(|e| e.subtree_root).collect();
    let layer = format!(
        "seal {}, index {}, roots {}",
        verdict(sealed),
        verdict(block.index_digest_ok()),
        verdict(merkle::root_from_hashes(&roots) == h.merkle_root)
    );
    format!("{layer}; {}", chunk_zero(&block))
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "bad"
    }
}

/// Opens chunk 0 and checks its records, or re-encrypts it as a plain frame.
fn chunk_zero(block: &BlockFile) -> String {
    let ciphertext = match block.read_ciphertext(0) {
        Ok(c) => c,
        Err(e) => return refused(&e),
    };
    match block.open_chunk(0, &ciphertext, &RECORDS_KEY) {
        Ok(records) => format!("sealed chunk: {}", check_records(block, &records)),
        Err(OpenProblem::Decompress(_)) => "sealed chunk: Decompress".into(),
        Err(OpenProblem::NotOneFrame { .. }) => "sealed chunk: NotOneFrame".into(),
        Err(OpenProblem::WrongSize { .. }) => "sealed chunk: WrongSize".into(),
        Err(OpenProblem::Decrypt) => {
            let place = block.place(0);
            let resealed = ChaCha20Poly1305::new(Key::from_slice(&RECORDS_KEY))
                .encrypt(
                    Nonce::from_slice(&place.nonce()),
                    Payload {
                        msg: &ciphertext,
                        aad: &place.associated_data(),
                    },
                )
                .unwrap_or_default();
            match block.open_chunk(0, &resealed, &RECORDS_KEY) {
                Ok(records) => format!("plain chunk: {}", check_records(block, &records)),
                Err(OpenProblem::Decompress(_)) => "plain chunk: Decompress".into(),
                Err(OpenProblem::NotOneFrame { .. }) => "plain chunk: NotOneFrame".into(),
                Err(OpenProblem::WrongSize { .. }) => "plain chunk: WrongSize".into(),
                Err(OpenProblem::Decrypt) => "plain chunk: Decrypt".into(),
            }
        }
    }
}

/// Decodes and plays every record of chunk 0; "ok" or the first refusal.
fn check_records(block: &BlockFile, records: &[u8]) -> String {
    let h = &block.header;
    let size = usize::from(h.record_size);
    if records.len() != size * h.units_in_chunk(0) as usize {
        return "wrong record count".into();
    }
    let table = h
        .game
        .lot_table(h.price_cents)
        .unwrap_or(h.lot_table.clone());
    let leaves: Vec<Hash> = records.chunks_exact(size).map(merkle::leaf_hash).collect();
    let root_ok = block
        .index
        .first()
        .is_some_and(|e| merkle::root_from_hashes(&leaves) == e.subtree_root);
    let mut first_refusal = (!root_ok).then(|| "subtree root differs".to_string());
    for (i, record) in records.chunks_exact(size).enumerate() {
        if let Err((kind, _)) = check_unit(h, &table, i as u32, record) {
            first_refusal.get_or_insert_with(|| format!("{kind:?}"));
        }
    }
    first_refusal.unwrap_or_else(|| "ok".into())
}

/// Parses `data` as a unit ID; a parsed ID must print as text that parses
/// back to the same ID and prints the same.
pub fn unit_id(data: &[u8]) -> String {
    let Ok(text) = std::str::from_utf8(data) else {
        return "not UTF-8".into();
    };
    let id: UnitId = match text.parse() {
        Ok(id) => id,
        Err(e) => return refused(&e),
    };
    let shown = id.to_string();
    let again: UnitId = shown
        .parse()
        .unwrap_or_else(|e| panic!("{id:?} prints as {shown:?}, which does not parse: {e}"));
    assert_eq!(again, id, "{shown:?} parses to another ID");
    assert_eq!(again.to_string(), shown, "printing is not canonical");
    "ok".into()
}

/// Parses `data` as an emission manifest; an accepted manifest names a
/// known game or is refused for it, its prices parse, and it survives a
/// write and read back unchanged.
pub fn manifest(data: &[u8]) -> String {
    let path = Path::new(INPUT);
    let m = match Manifest::parse(path, data) {
        Ok(m) => m,
        Err(e) => return refused(&e),
    };
    for b in &m.blocks {
        assert!(
            Cents::parse_price(&b.price).is_some(),
            "accepted price {:?}",
            b.price
        );
    }
    let again = Manifest::parse(path, &serde_json::to_vec_pretty(&m).unwrap_or_default())
        .unwrap_or_else(|e| panic!("an accepted manifest does not read back: {e}"));
    assert_eq!(again, m, "the manifest changes when written and read back");
    match manifest_game(&m, path) {
        Ok(_) => "ok".into(),
        Err(e) => refused(&e),
    }
}

/// Parses `data` as a reveal file, then every seed it lists and the
/// records key file it stands for.
pub fn reveal(data: &[u8]) -> String {
    let path = Path::new(INPUT);
    let r = match Reveal::parse(path, data) {
        Ok(r) => r,
        Err(e) => return refused(&e),
    };
    let bad_seeds = r
        .blocks
        .iter()
        .filter(|b| matches!(r.seed(b.block), Some(Err(_))))
        .count();
    let key_file = serde_json::to_vec(&r.records_key_file()).unwrap_or_default();
    match RecordsKeyFile::parse(path, &key_file) {
        Ok(_) => format!("ok, {bad_seeds} bad seeds"),
        Err(e) => format!("{}, {bad_seeds} bad seeds", refused(&e)),
    }
}

/// Parses `data` as a records key file, a private key PEM and a public key
/// PEM; a key read from PEM must write back to PEM and read the same.
pub fn key_files(data: &[u8]) -> String {
    let path = Path::new(INPUT);
    let records = match RecordsKeyFile::parse(path, data) {
        Ok(_) => "records key ok".to_string(),
        Err(e) => refused(&e),
    };
    let Ok(text) = std::str::from_utf8(data) else {
        return format!("{records}, PEM not UTF-8");
    };
    let private = match seal::private_from_pem(path, text) {
        Ok(key) => {
            let again = seal::private_from_pem(path, &seal::private_pem(&key))
                .unwrap_or_else(|e| panic!("a private key does not read back: {e}"));
            assert_eq!(again.to_bytes(), key.to_bytes());
            "private ok".to_string()
        }
        Err(e) => refused(&e),
    };
    let public = match seal::public_from_pem(path, text) {
        Ok(key) => {
            let again = seal::public_from_pem(path, &seal::public_pem(&key))
                .unwrap_or_else(|e| panic!("a public key does not read back: {e}"));
            assert_eq!(again, key);
            "public ok".to_string()
        }
        Err(e) => refused(&e),
    };
    format!("{records}, {private}, {public}")
}
