//! The reproducible stream: raw ChaCha20 against RFC 8439, and our own
//! bounded draw and shuffle pinned by golden vectors (fixtures/rng/).

use ticket_issuer::rng::Stream;

/// RFC 8439 §2.3.2 / RFC 7539 A.1 test vector #1: the ChaCha20 block with
/// an all-zero key, nonce and counter.
#[test]
fn raw_stream_is_rfc_8439_chacha20() {
    let expected = hex::decode(
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7\
         da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586",
    )
    .unwrap();
    let mut s = Stream::new(&[0u8; 32], 0);
    let words: Vec<u8> = (0..16).flat_map(|_| s.next_u32().to_le_bytes()).collect();
    assert_eq!(words, expected);
}

/// Parses `name: value` lines of a vector file.
fn vectors(name: &str) -> Vec<(String, String)> {
    let path = format!("{}/fixtures/rng/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l.split_once(':').expect("key: value");
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect()
}

fn test_seed() -> [u8; 32] {
    let mut seed = [0u8; 32];
    for (i, b) in seed.iter_mut().enumerate() {
        *b = i as u8;
    }
    seed
}

#[test]
fn bounded_draws_and_shuffle_match_the_golden_vectors() {
    let v = vectors("draws.txt");
    let get = |k: &str| {
        v.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    let mut s = Stream::new(&test_seed(), 1);
    let words: Vec<String> = (0..4).map(|_| format!("{:08x}", s.next_u32())).collect();
    assert_eq!(words.join(" "), get("seed 000102…1f stream 1 first words"));
    for n in [1u32, 2, 3, 5, 6, 7, 64, 450_000, 3_000_000_000] {
        let mut s = Stream::new(&test_seed(), 2);
        let draws: Vec<String> = (0..8).map(|_| s.below(n).to_string()).collect();
        assert_eq!(
            draws.join(" "),
            get(&format!("stream 2 below {n}")),
            "below({n})"
        );
    }
    let mut items: Vec<u32> = (0..20).collect();
    Stream::new(&test_seed(), 3).shuffle(&mut items);
    let shuffled: Vec<String> = items.iter().map(u32::to_string).collect();
    assert_eq!(shuffled.join(" "), get("stream 3 shuffle 0..20"));
}

/// The bounded draw rejects exactly the words whose low product falls under
/// 2^32 mod n: with n = 3_000_000_000 that is 1_294_967_296 of 2^32 words,
/// so rejections happen and the result stays below n and unbiased.
#[test]
fn bounded_draw_is_in_range_and_uniform() {
    let mut s = Stream::new(&test_seed(), 9);
    let mut counts = [0u32; 6];
    for _ in 0..60_000 {
        counts[s.below(6) as usize] += 1;
    }
    let chi2: f64 = counts
        .iter()
        .map(|&c| (f64::from(c) - 10_000.0).powi(2) / 10_000.0)
        .sum();
    assert!(chi2 < 20.52, "{counts:?} chi2 {chi2}"); // 5 d.o.f., p = 0.001
    for _ in 0..10_000 {
        assert!(s.below(3_000_000_000) < 3_000_000_000);
    }
}
