//! Writes the fuzz seed corpus under `fixtures/fuzz/<target>/corpus/`
//! (docs/FUZZING.md): small real inputs made with the library and the
//! fixed keys of `fuzz/src/lib.rs`. Not part of the suite; run it with
//! `cargo test --release --test it -- --ignored write_fuzz_seeds`.

use crate::fuzz_entries as entries;

use std::path::Path;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use ed25519_dalek::pkcs8::{spki::der::pem::LineEnding, EncodePrivateKey};
use ed25519_dalek::SigningKey;
use ticket_issuer::block::build::{self, BlockSpec};
use ticket_issuer::block::reader::BlockFile;
use ticket_issuer::block::writer;
use ticket_issuer::emission::{Manifest, ManifestBlock, Reveal, RevealedSeed};
use ticket_issuer::game::Game;
use ticket_issuer::money::Cents;
use ticket_issuer::records_key::{RecordsKeyFile, KIND};
use ticket_issuer::seal;
use ticket_issuer::unit_id::UnitId;

fn put(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/fuzz")
        .join(target)
        .join("corpus");
    std::fs::create_dir_all(&dir).expect("corpus folder");
    std::fs::write(dir.join(name), bytes).expect("seed written");
}

fn json(value: &impl serde::Serialize) -> Vec<u8> {
    serde_json::to_vec_pretty(value).expect("a seed serialises")
}

#[test]
#[ignore = "writes the fuzz seed corpus; run by hand (docs/FUZZING.md)"]
fn write_fuzz_seeds() {
    // The Ed25519 key the block seeds are sealed with.
    let signing = SigningKey::from_bytes(&[0x24; 32]);
    let spec = BlockSpec {
        game: Game::ILE_AU_TRESOR,
        emission: 1,
        block: 1,
        price_cents: 100,
        units: Game::ILE_AU_TRESOR.block_units(),
    };
    let seed = [0x11; 32];
    let built = build::build(spec, &seed, Some(&entries::RECORDS_KEY), &|_| {}).expect("built");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("block.bin");
    let written = writer::write(&built, &entries::RECORDS_KEY, &signing, &path).expect("written");
    let bytes = std::fs::read(&path).expect("block read");
    let block = BlockFile::open(&path).expect("block opens");
    let header_len = block.header.encoded_len();
    let chunks_at = block.header.chunks_offset() as usize;
    let chunk0 = block.index[0];
    put("block_reader", "header", &bytes[..header_len]);
    put("block_reader", "header-index", &bytes[..chunks_at]);
    put(
        "block_reader",
        "sealed-chunk0",
        &bytes[..chunks_at + chunk0.length as usize],
    );
    // Chunk 0 as its plain zstd frame, for the target's re-encrypting path.
    let place = block.place(0);
    let frame = ChaCha20Poly1305::new(Key::from_slice(&entries::RECORDS_KEY))
        .decrypt(
            Nonce::from_slice(&place.nonce()),
            Payload {
                msg: &bytes[chunks_at..chunks_at + chunk0.length as usize],
                aad: &place.associated_data(),
            },
        )
        .expect("chunk 0 decrypts");
    let mut plain = bytes[..chunks_at].to_vec();
    let length_at = header_len + 8;
    plain[length_at..length_at + 4].copy_from_slice(&(frame.len() as u32).to_le_bytes());
    plain.extend_from_slice(&frame);
    put("block_reader", "plain-chunk0", &plain);

    for (name, text) in [
        ("canonical", "IAT-7-1-123456-7KD2M9QX"),
        ("lowercase-lookalikes", "iat-1-1-0-0000000o"),
        ("spaces-max", " IAT-4294967295-1-449999-ZZZZZZZZ\n"),
        ("leading-zeros", "IAT-007-01-0-ILOILOIL"),
    ] {
        put("unit_id", name, text.as_bytes());
    }
    let id = UnitId {
        game: Game::ILE_AU_TRESOR,
        emission: 1,
        block: 1,
        index: 449_999,
        check_code: [0xff, 0, 0x80, 1, 0x7f],
    };
    put("unit_id", "made", id.to_string().as_bytes());

    let listed = ManifestBlock {
        block: 1,
        price: Cents::from(written.header.price_cents).to_string(),
        units: written.header.unit_count,
        merkle_root: hex::encode(written.header.merkle_root),
        file_sha256: hex::encode(written.file_sha256),
        seed_commitment: hex::encode(written.header.seed_commitment),
        file: "b000001.tkb".into(),
    };
    let mut manifest = Manifest {
        kind: "ticket-issuer emission manifest".into(),
        version: 1,
        game: Game::ILE_AU_TRESOR.slug().into(),
        emission: 1,
        closed: false,
        issuer_public_key: hex::encode(signing.verifying_key().to_bytes()),
        master_commitment: None,
        seed_shares: None,
        claims_until: None,
        blocks: vec![listed.clone()],
    };
    put("manifest", "one-block", &json(&manifest));
    manifest.closed = true;
    manifest.blocks.push(ManifestBlock {
        block: 2,
        price: "0.5".into(),
        ..listed
    });
    put("manifest", "closed-two-blocks", &json(&manifest));

    let reveal = Reveal {
        kind: "ticket-issuer emission reveal".into(),
        game: Game::ILE_AU_TRESOR.slug().into(),
        emission: 1,
        records_key: entries::RECORDS_KEY,
        seed_shares: None,
        blocks: vec![
            RevealedSeed {
                block: 1,
                seed: hex::encode(seed),
            },
            RevealedSeed {
                block: 2,
                seed: hex::encode([0x22; 32]),
            },
        ],
    };
    put("reveal", "two-blocks", &json(&reveal));

    let key_file = |block| RecordsKeyFile {
        kind: KIND.into(),
        game: Game::ILE_AU_TRESOR.slug().into(),
        emission: 1,
        block,
        key: entries::RECORDS_KEY,
    };
    put("key_files", "records-key-emission", &json(&key_file(None)));
    put("key_files", "records-key-block", &json(&key_file(Some(1))));
    put(
        "key_files",
        "private-v1.pem",
        seal::private_pem(&signing).as_bytes(),
    );
    let v2 = signing.to_pkcs8_pem(LineEnding::LF).expect("PKCS#8 v2 PEM");
    put("key_files", "private-v2.pem", v2.as_bytes());
    put(
        "key_files",
        "public.pem",
        seal::public_pem(&signing.verifying_key()).as_bytes(),
    );
}
