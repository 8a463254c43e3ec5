//! The reproducible random stream: raw ChaCha20 words, our own bounded draw
//! and our own Fisher-Yates shuffle (docs/FORMAT.md §Randomness).
//!
//! rand's `random_range` and `shuffle` may change output between minor
//! versions, so nothing here calls them: only `next_u32` of the raw
//! ChaCha20 keystream is used, which is fixed by RFC 8439's block function.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// A ChaCha20 keystream read as consecutive little-endian `u32` words.
///
/// Stream `s` of seed `k` is ChaCha20 with key `k`, a 64-bit block counter
/// starting at 0 and the 64-bit stream number `s` as nonce (in OpenSSL terms:
/// `-iv` = 8 zero bytes followed by `s` as 8 little-endian bytes).
pub struct Stream {
    rng: ChaCha20Rng,
}

impl Stream {
    /// Opens stream `stream` of the 32-byte `seed`.
    pub fn new(seed: &[u8; 32], stream: u64) -> Stream {
        let mut rng = ChaCha20Rng::from_seed(*seed);
        rng.set_stream(stream);
        Stream { rng }
    }

    /// The next 32-bit word of the keystream (little-endian).
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.rng.next_u32()
    }

    /// An unbiased draw from `0..n` (Lemire's multiply-shift with rejection).
    ///
    /// `m = x * n` as a 64-bit product of the next word `x`; if the low 32
    /// bits of `m` are below `(2^32 - n) mod n` the word is rejected and the
    /// next one taken; the result is the high 32 bits of `m`.
    ///
    /// # Panics
    /// If `n == 0` (a caller bug: there is nothing to draw from).
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        assert!(n > 0, "bounded draw from an empty range");
        loop {
            let m = u64::from(self.next_u32()) * u64::from(n);
            let low = m as u32;
            // The threshold is below `n`, so a low part of at least `n`
            // passes without computing it (no division on almost every draw;
            // the same words are accepted and rejected either way).
            if low >= n || low >= n.wrapping_neg() % n {
                return (m >> 32) as u32;
            }
        }
    }

    /// Fisher-Yates shuffle: for `i` from `len-1` down to 1, swap `items[i]`
    /// with `items[below(i+1)]`.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let bound = u32::try_from(i + 1).expect("shuffle of more than 2^32 items");
            let j = self.below(bound) as usize;
            items.swap(i, j);
        }
    }
}
