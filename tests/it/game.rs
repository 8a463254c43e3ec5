//! The L'île au trésor model against the regulation's own numbers, and the
//! generator's guarantees as properties: every lot, every seed → the map
//! reveals exactly that lot.

use proptest::prelude::*;
use ticket_issuer::game::ile::{self, judge, Content, Unit, ARTICLE_3, ARTICLE_4_5};
use ticket_issuer::game::Game;
use ticket_issuer::money::Cents;
use ticket_issuer::rng::Stream;
use ticket_issuer::unit_id::UnitId;

#[test]
fn article_3_tables_total_the_regulation_amounts() {
    // Article 3.1–3.3: 119,604 lots totalling 157,500 / 315,000 / 630,000 €.
    for (price, total_euros) in [(50, 157_500u64), (100, 315_000), (200, 630_000)] {
        let table = Game::ILE_AU_TRESOR.lot_table(price).unwrap();
        assert_eq!(table.winners(), 119_604, "price {price}");
        assert_eq!(table.total_cents(), total_euros * 100, "price {price}");
        // 70 % of the block's sales are paid out.
        let sales = 450_000 * u64::from(price);
        assert_eq!(table.total_cents() * 100, sales * 70, "payout at {price}");
    }
}

#[test]
fn article_3_agrees_with_article_4_5_tier_by_tier() {
    for (column, (price, rows)) in ARTICLE_3.iter().enumerate() {
        for (i, (&(_, amount), &(_, _, amounts))) in rows.iter().zip(ARTICLE_4_5.iter()).enumerate()
        {
            assert_eq!(amount, amounts[column], "price {price} tier {}", i + 1);
        }
    }
}

#[test]
fn maximum_gain_is_the_three_chandeliers_lot() {
    for (price, max) in [(50, 500_000), (100, 1_000_000), (200, 2_000_000)] {
        let table = Game::ILE_AU_TRESOR.lot_table(price).unwrap();
        assert_eq!(table.tiers.iter().map(|t| t.amount_cents).max(), Some(max));
        assert_eq!(table.tiers[0].count, 1);
        assert_eq!(
            Game::ILE_AU_TRESOR.lot_name(table.tiers[0].code),
            Some("chandelier-3")
        );
    }
}

#[test]
fn unsupported_prices_are_refused() {
    let err = Game::ILE_AU_TRESOR.lot_table(150).unwrap_err().to_string();
    assert!(err.contains("1.5") && err.contains("0.5, 1, 2"), "{err}");
    assert_eq!(Cents::parse_price("0,5"), Some(50));
    assert_eq!(Cents::parse_price("2"), Some(200));
    assert_eq!(Cents::parse_price("1.005"), None);
    assert_eq!(Cents::parse_price("-1"), None);
    assert_eq!(Cents::parse_price("un euro"), None);
    assert_eq!(Cents::from(1250u32).to_string(), "12.5");
    assert_eq!(Cents::from(0u32).to_string(), "0");
    assert_eq!(Cents::from(1_000_000u32).to_string(), "10000");
}

/// Guards the fuzz finding fixtures/fuzz/manifest/crashes/: a price whose
/// value in cents overflows a decimal is refused, not a panic.
#[test]
fn a_price_too_large_for_cents_is_refused() {
    assert_eq!(Cents::parse_price("79228162514264337593543950335"), None);
    assert_eq!(Cents::parse_price("792281625142643375935439503.35"), None);
    assert_eq!(Cents::parse_price("42949672.96"), None);
    assert_eq!(Cents::parse_price("42949672.95"), Some(u32::MAX));
}

/// An independent reading of article 4.5: the lot of four uncovered chests,
/// or None when the set is not a legal unit.
fn article_4_5(uncovered: &[Content; 4]) -> Option<Option<&'static str>> {
    let count = |c| uncovered.iter().filter(|&&u| u == c).count();
    let mut wins = Vec::new();
    match count(Content::Chandelier) {
        1 => wins.push("chandelier-1"),
        2 => wins.push("chandelier-2"),
        3 => wins.push("chandelier-3"),
        4 => return None,
        _ => {}
    }
    for (c, two, three) in [
        (Content::Singe, "singe-2", "singe-3"),
        (Content::Saphir, "saphir-2", "saphir-3"),
        (Content::TeteDeMort, "tete_de_mort-2", "tete_de_mort-3"),
    ] {
        match count(c) {
            2 => wins.push(two),
            3 => wins.push(three),
            4 => return None,
            _ => {}
        }
    }
    match wins.as_slice() {
        [] => Some(None),
        [one] => Some(Some(*one)),
        _ => None,
    }
}

#[test]
fn judge_agrees_with_an_independent_reading_on_all_625_sets() {
    let mut by_outcome = std::collections::BTreeMap::new();
    for n in 0..625usize {
        let set = [n % 5, n / 5 % 5, n / 25 % 5, n / 125].map(|i| Content::ALL[i]);
        let expected = article_4_5(&set);
        let got = judge(&set)
            .ok()
            .map(|lot| Game::ILE_AU_TRESOR.lot_name(lot));
        assert_eq!(got, expected, "{set:?}");
        *by_outcome.entry(format!("{expected:?}")).or_insert(0) += 1;
    }
    // Four crosses is a legal loser; two winning groups never are.
    assert_eq!(judge(&[Content::Vide; 4]), Ok(0));
    let two_groups = judge(&[
        Content::Singe,
        Content::Singe,
        Content::Chandelier,
        Content::Vide,
    ]);
    assert!(two_groups.unwrap_err().contains("2 winning groups"));
    assert!(by_outcome.len() > 9);
}

fn seed_from(n: u64) -> [u8; 32] {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&n.to_le_bytes());
    s[31] = 0xA5;
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Every lot (0 = loser) and every seed: the generated map is legal and
    /// reveals exactly that lot, and encodes and decodes to itself.
    #[test]
    fn generated_units_reveal_exactly_their_lot(seed in any::<u64>(), stream in any::<u64>(), lot in 0u8..=9) {
        let mut s = Stream::new(&seed_from(seed), stream);
        let unit = Unit::generate(&mut s, lot);
        prop_assert_eq!(unit.play(), Ok(lot));
        let mut bytes = Vec::new();
        unit.encode(&mut bytes);
        prop_assert_eq!(bytes.len(), ile::PAYLOAD_SIZE);
        let back = Unit::decode(&bytes).unwrap();
        prop_assert_eq!(&back, &unit);
        // Independent reading of what the four landings uncover.
        let landings = unit.landings().unwrap();
        let uncovered = landings.map(|sq| unit.chests.iter().find(|c| c.square == sq).unwrap().content);
        let expected = if lot == 0 { None } else { Game::ILE_AU_TRESOR.lot_name(lot) };
        prop_assert_eq!(article_4_5(&uncovered), Some(expected));
        // Nine distinct squares, none the start, all on the 8×8 map.
        for (i, c) in unit.chests.iter().enumerate() {
            prop_assert!(c.square != unit.start);
            prop_assert!(c.square.x < 8 && c.square.y < 8);
            prop_assert!(unit.chests[..i].iter().all(|o| o.square != c.square));
        }
        prop_assert!(unit.throws.iter().all(|t| t.steps >= 1));
    }

    /// Any single-byte change to a payload is either refused by decode/play
    /// or still a legal unit (never a panic).
    #[test]
    fn corrupted_payloads_never_panic(seed in any::<u64>(), at in 0usize..ile::PAYLOAD_SIZE, value in any::<u8>()) {
        let unit = Unit::generate(&mut Stream::new(&seed_from(seed), 1), 0);
        let mut bytes = Vec::new();
        unit.encode(&mut bytes);
        bytes[at] = value;
        if let Ok(u) = Unit::decode(&bytes) {
            let _ = u.play();
        }
    }

    /// IDs print and parse back; check codes survive case changes.
    #[test]
    fn unit_ids_round_trip(emission in any::<u32>(), block in any::<u32>(), index in 0u32..450_000, code in any::<[u8; 5]>()) {
        let id = UnitId { game: Game::ILE_AU_TRESOR, emission, block, index, check_code: code };
        let text = id.to_string();
        prop_assert_eq!(text.parse::<UnitId>().unwrap(), id);
        prop_assert_eq!(text.to_lowercase().parse::<UnitId>().unwrap(), id);
    }
}

#[test]
fn crockford_aliases_and_malformed_ids() {
    let id = UnitId {
        game: Game::ILE_AU_TRESOR,
        emission: 7,
        block: 1,
        index: 123_456,
        check_code: [0, 0, 0, 0, 1],
    };
    assert_eq!(id.to_string(), "IAT-7-1-123456-00000001");
    assert_eq!("IAT-7-1-123456-OOOOOOOI".parse::<UnitId>().unwrap(), id);
    assert_eq!("iat-7-1-123456-oooooool".parse::<UnitId>().unwrap(), id);
    for (bad, says) in [
        ("IAT-7-1-123456", "5 parts"),
        ("XYZ-7-1-1-00000001", "unknown game"),
        ("IAT-x-1-1-00000001", "emission"),
        ("IAT-7--1-00000001", "block"),
        ("IAT-7-1-1e3-00000001", "index"),
        ("IAT-7-1-99999999999-00000001", "too large"),
        ("IAT-7-1-1-0000001", "8"),
        ("IAT-7-1-1-0000000U", "invalid character"),
    ] {
        let err = bad.parse::<UnitId>().unwrap_err().to_string();
        assert!(err.contains(says), "{bad}: {err}");
    }
}

/// Unlanded chests follow one distribution for winners and losers alike:
/// each content 1/5. A chi-square test on fixed seeds (deterministic).
#[test]
fn unlanded_chests_have_the_same_distribution_for_every_lot() {
    for lot in [0u8, 1, 5, 9] {
        let mut counts = [0u64; 5];
        for i in 0..20_000u64 {
            let unit = Unit::generate(&mut Stream::new(&seed_from(99), i + 1), lot);
            let landings = unit.landings().unwrap();
            for c in unit.chests.iter().filter(|c| !landings.contains(&c.square)) {
                counts[c.content as usize] += 1;
            }
        }
        let n: u64 = counts.iter().sum();
        assert_eq!(n, 100_000);
        let expected = n as f64 / 5.0;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        // 4 degrees of freedom: P(chi2 > 18.47) = 0.001.
        assert!(chi2 < 18.47, "lot {lot}: counts {counts:?}, chi2 {chi2}");
    }
}

#[test]
fn pictures_show_start_landings_and_chests() {
    let unit = Unit::generate(&mut Stream::new(&seed_from(5), 1), 1);
    let picture = unit.picture();
    let grid: Vec<&str> = picture.lines().take(8).collect();
    assert_eq!(picture.lines().count(), 9, "8 rows and a legend");
    // Three landings uncover a chandelier (C), marked with their throw number;
    // the five closed chests show nothing of their contents.
    assert_eq!(grid.concat().matches('C').count(), 3, "{picture}");
    assert_eq!(grid.concat().matches('#').count(), 5, "{picture}");
    assert_eq!(grid.concat().matches('@').count(), 1, "{picture}");
    for n in 1..=4 {
        assert!(grid.concat().contains(&n.to_string()), "{picture}");
    }
}
