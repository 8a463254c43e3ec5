//! The reproducible random stream: raw ChaCha20 words, our own bounded draw
//! and our own Fisher-Yates shuffle (docs/FORMAT.md §Randomness).
//!
//! rand's `random_range` and `shuffle` may change output between minor
//! versions, so nothing here calls them: only `next_u32` of the raw
//! ChaCha20 keystream is used, which is fixed by RFC 8439's block function.
//! The keystream itself, as bytes, is what `issuer rng-stream` writes for
//! a test lab ([`write_keystream`]).

use std::io::Write;

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};

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

    /// Fills `out` with the next bytes of the keystream: the bytes the
    /// words of [`Stream::next_u32`] are read from, in order (word w is
    /// bytes 4w … 4w + 3, little-endian). Whole words are consumed: a
    /// length that is not a multiple of 4 drops the rest of the last word.
    pub fn fill_bytes(&mut self, out: &mut [u8]) {
        self.rng.fill_bytes(out);
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

/// The pieces [`write_keystream`] generates and writes at a time.
const KEYSTREAM_PIECE: usize = 4 << 20;

/// Writes the first `len` bytes of stream `stream` of `seed` (block counter
/// 0 on) to `out`, and returns their SHA-256: the raw RNG output, before any
/// bounded draw, that `issuer rng-stream` hands a test lab. One thread
/// generates 4 MiB pieces while the caller's hashes and writes the last
/// one; nothing is written after a failed write.
pub fn write_keystream(
    seed: &[u8; 32],
    stream: u64,
    len: u64,
    out: &mut dyn Write,
) -> std::io::Result<[u8; 32]> {
    let piece = usize::try_from(len).map_or(KEYSTREAM_PIECE, |l| l.min(KEYSTREAM_PIECE));
    // Two pieces in flight: one being filled, one being hashed and written.
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
    let (empty_tx, empty_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
    for _ in 0..2 {
        empty_tx
            .send(vec![0u8; piece])
            .expect("the channel holds two");
    }
    std::thread::scope(|scope| {
        // Owned here, so a failed write drops them and the generator stops.
        let (full_rx, empty_tx) = (full_rx, empty_tx);
        scope.spawn(move || {
            let mut keystream = Stream::new(seed, stream);
            let mut left = len;
            // Ends when the writer stops taking pieces (a failed write).
            while left > 0 {
                let Ok(mut buf) = empty_rx.recv() else { return };
                let n = usize::try_from(left).map_or(piece, |l| l.min(piece));
                buf.truncate(n);
                keystream.fill_bytes(&mut buf);
                left -= n as u64;
                if full_tx.send(buf).is_err() {
                    return;
                }
            }
        });
        let mut hash = Sha256::new();
        for buf in full_rx.iter() {
            hash.update(&buf);
            out.write_all(&buf)?;
            // Back to be filled again (only the last piece is shorter).
            let _ = empty_tx.send(buf);
        }
        out.flush()?;
        Ok(hash.finalize().into())
    })
}
