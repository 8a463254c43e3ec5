//! The block format's parsers on hostile input: any bytes give a header or
//! a named problem, never a panic; what is written parses back unchanged.

use std::sync::OnceLock;

use crate::common::Fixture;
use proptest::prelude::*;
use ticket_issuer::block::reader::BlockFile;
use ticket_issuer::block::{Header, HeaderProblem, IndexEntry, CHUNK_UNITS, FORMAT_VERSION, MAGIC};
use ticket_issuer::game::Game;
use ticket_issuer::record::{self, RecordPrefix};
use ticket_issuer::unit_id::UnitId;
use ticket_issuer::Error;

fn sample_header() -> Header {
    let game = Game::ILE_AU_TRESOR;
    let units = game.block_units();
    Header {
        game,
        rules_version: game.rules_version(),
        emission: 7,
        block: 3,
        price_cents: 200,
        unit_count: units,
        record_size: record::record_size(game) as u16,
        params: game.params(),
        chunk_units: CHUNK_UNITS,
        chunk_count: units.div_ceil(CHUNK_UNITS),
        seal_offset: 12_345_678,
        seed_commitment: [1; 32],
        merkle_root: [2; 32],
        index_sha256: [3; 32],
        records_key_id: [4; 32],
        signer: [5; 32],
        lot_table: game.lot_table(200).unwrap(),
    }
}

#[test]
fn a_header_parses_back_to_itself() {
    let h = sample_header();
    let bytes = h.encode();
    assert_eq!(bytes.len(), 294);
    assert_eq!(&bytes[..8], &MAGIC);
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), FORMAT_VERSION);
    assert_eq!(Header::parse(&bytes).unwrap(), h);
    // A short file that is not a block's beginning is named as not a block.
    assert!(matches!(
        Header::parse(b"abc"),
        Err(HeaderProblem::BadMagic(_))
    ));
    // Cut anywhere: named as truncated, not as corrupt.
    for len in [0, 5, 11, 12, 100, 293] {
        match Header::parse(&bytes[..len]) {
            Err(HeaderProblem::Truncated { .. }) => {}
            other => panic!("{len} bytes: {other:?}"),
        }
    }
}

/// A header whose `params` (offset 34, 35: map width and height) are not the
/// game's is unreadable (exit 2) and says so, like a wrong record size: the
/// seal is not the check that names it.
#[test]
fn params_other_than_the_games_make_the_header_unreadable() {
    for (at, value) in [(34, 9), (35, 7), (34, 0)] {
        let mut bytes = sample_header().encode();
        bytes[at] = value;
        match Header::parse(&bytes) {
            Err(HeaderProblem::Field(m)) => assert!(m.contains("params"), "{m}"),
            other => panic!("byte {at} = {value}: {other:?}"),
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("params.tkb");
        std::fs::write(&path, &bytes).unwrap();
        let e = BlockFile::open(&path).err().expect("the header is refused");
        assert!(matches!(e, Error::UnreadableBlock { .. }), "{e:?}");
        // Invalid input: exit 2 (docs/CLI.md).
        assert_eq!(e.kind(), ticket_issuer::error::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("header: params ["), "{e}");
    }
}

/// A valid test-size block (two chunks, the last partial), made once.
fn small_block() -> &'static (Fixture, Vec<u8>) {
    static BLOCK: OnceLock<(Fixture, Vec<u8>)> = OnceLock::new();
    BLOCK.get_or_init(|| {
        let fx = Fixture::new();
        let path = fx.test_block_of(1, 100, CHUNK_UNITS + 500);
        let report = fx.verify(&path, true);
        assert!(report.ok && report.complete, "{:#?}", report.failures);
        let bytes = std::fs::read(&path).unwrap();
        (fx, bytes)
    })
}

/// [start, end) of header, index, chunks and seal in a valid block file.
fn regions(bytes: &[u8]) -> [(usize, usize); 4] {
    let h = Header::parse(bytes).unwrap();
    let index = h.encoded_len();
    let chunks = index + 80 * h.chunk_count as usize;
    let seal = h.seal_offset as usize;
    [
        (0, index),
        (index, chunks),
        (chunks, seal),
        (seal, seal + 64),
    ]
}

proptest! {
    // Each case verifies a 4,596-unit block with its key (a few ms).
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A valid (test-size) block changed anywhere — a bit flipped, cut
    /// short, bytes inserted, in the header, the index, a chunk or the seal —
    /// is never read as valid: verify (with the key) errors cleanly or
    /// reports a failure, and never panics.
    #[test]
    fn a_changed_block_file_is_never_passed(
        region in 0usize..4,
        at in any::<prop::sample::Index>(),
        mutation in 0usize..3,
        bit in 0u8..8,
        inserted in proptest::collection::vec(any::<u8>(), 1..40),
    ) {
        let (fx, bytes) = small_block();
        let regions = regions(bytes);
        let (start, end) = regions[region];
        let i = start + at.index(end - start);
        let mut changed = bytes.clone();
        let what = match mutation {
            0 => {
                changed[i] ^= 1 << bit;
                format!("bit {bit} of byte {i} flipped")
            }
            1 => {
                changed.truncate(i);
                format!("cut to {i} bytes")
            }
            _ => {
                changed.splice(i..i, inserted.iter().copied());
                format!("{} bytes inserted at {i}", inserted.len())
            }
        };
        let path = fx.dir.path().join("changed.tkb");
        std::fs::write(&path, &changed).unwrap();
        if let Ok(report) = fx.try_verify(&path, true) {
            prop_assert!(!report.ok, "{} passed verification", what);
            prop_assert!(!report.failures.is_empty(), "{}", what);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// One changed byte of a valid header: either it still parses (a field
    /// the seal then catches) or it is named; never a panic.
    #[test]
    fn a_changed_header_byte_never_panics(at in 0usize..294, value in any::<u8>()) {
        let mut bytes = sample_header().encode();
        bytes[at] = value;
        if let Ok(h) = Header::parse(&bytes) {
            prop_assert!(h.unit_count >= 1 && h.unit_count <= 450_000);
            prop_assert_eq!(h.chunk_count, h.unit_count.div_ceil(h.chunk_units));
        }
    }

    #[test]
    fn index_entries_and_record_prefixes_round_trip(
        offset in any::<u64>(), length in any::<u32>(), units in any::<u32>(),
        root in any::<[u8; 32]>(), digest in any::<[u8; 32]>(),
        index in any::<u32>(), lot in 0u8..=9, prize in any::<u32>(),
    ) {
        let entry = IndexEntry { offset, length, units, subtree_root: root, ciphertext_sha256: digest };
        let mut bytes = Vec::new();
        entry.encode(&mut bytes);
        prop_assert_eq!(bytes.len(), 80);
        prop_assert_eq!(IndexEntry::parse(&bytes), entry);
        let mut rec = index.to_le_bytes().to_vec();
        rec.extend_from_slice(&root[..5]);
        rec.push(lot);
        rec.extend_from_slice(&prize.to_le_bytes());
        let p = RecordPrefix::parse(&rec).unwrap();
        prop_assert_eq!((p.index, p.check_code, p.lot, p.prize_cents), (index, [root[0], root[1], root[2], root[3], root[4]], lot, prize));
        prop_assert!(RecordPrefix::parse(&rec[..13]).is_none());
    }

    #[test]
    fn any_text_is_an_id_or_a_named_problem(text in ".{0,40}") {
        let _ = text.parse::<UnitId>();
    }
}
