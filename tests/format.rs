//! The block format's parsers on hostile input: any bytes give a header or
//! a named problem, never a panic; what is written parses back unchanged.

use proptest::prelude::*;
use ticket_issuer::block::reader::BlockFile;
use ticket_issuer::block::{Header, HeaderProblem, IndexEntry, CHUNK_UNITS, FORMAT_VERSION, MAGIC};
use ticket_issuer::game::Game;
use ticket_issuer::record::{self, RecordPrefix};
use ticket_issuer::unit_id::UnitId;
use ticket_issuer::Error;

fn sample_header() -> Header {
    let game = Game::IleAuTresor;
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_bytes_give_a_header_or_a_problem(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = Header::parse(&bytes);
    }

    /// One changed byte of a valid header: either it still parses (a field
    /// the seal then catches) or it is named; never a panic.
    #[test]
    fn a_changed_header_byte_never_panics(at in 0usize..294, value in any::<u8>()) {
        let mut bytes = sample_header().encode();
        bytes[at] = value;
        if let Ok(h) = Header::parse(&bytes) {
            prop_assert_eq!(h.unit_count, 450_000);
            prop_assert_eq!(h.chunk_count, 110);
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
