//! RFC 9162 §2.1 Merkle tree hashing (Certificate Transparency v2), with SHA-256.
//!
//! This module is the project's single implementation of the Merkle Tree Hash
//! (MTH), inclusion proofs (audit paths) and their verification. Every other
//! module that needs a block root or a proof goes through here, so that there
//! is exactly one definition of how leaves and interior nodes are hashed.
//!
//! The tree shape and hashing are exactly those of RFC 9162 §2.1.1 (unchanged
//! from RFC 6962 §2.1):
//!
//! * the root of an empty tree is `SHA-256("")`;
//! * a leaf hash is `SHA-256(0x00 || data)`;
//! * an interior node hash is `SHA-256(0x01 || left || right)`;
//! * a list of `n > 1` entries is split at the largest power of two `k < n`,
//!   the first `k` entries form the left subtree and the rest the right one.
//!
//! The distinct `0x00` / `0x01` prefixes are what give second-preimage
//! resistance: a leaf can never be reinterpreted as an interior node.
//!
//! Most functions here take entries that are *already hashed* (leaf hashes,
//! or roots of aligned complete subtrees) rather than raw data. That is what
//! lets the block format store a large tree as chunks of a power-of-two number
//! of leaves: the MTH over all leaf hashes equals the MTH over the chunk roots
//! (see [`root_from_hashes`] and [`chunked_inclusion_proof`]).
//!
//! ```
//! use ticket_issuer_core::merkle::{inclusion_proof, leaf_hash, root_from_hashes, verify_inclusion};
//!
//! let leaves: Vec<_> = [&b"a"[..], b"b", b"c"].iter().map(|d| leaf_hash(d)).collect();
//! let root = root_from_hashes(&leaves);
//! let proof = inclusion_proof(&leaves, 2).expect("index 2 is in range");
//! assert!(verify_inclusion(&leaves[2], 2, 3, &proof, &root));
//! ```

use sha2::digest::generic_array::GenericArray;
use sha2::{Digest, Sha256};

/// A SHA-256 output: a leaf hash, an interior node hash or a tree root.
pub type Hash = [u8; 32];

/// Domain-separation prefix for leaf hashes (RFC 9162 §2.1.1).
const LEAF_PREFIX: u8 = 0x00;
/// Domain-separation prefix for interior node hashes (RFC 9162 §2.1.1).
const NODE_PREFIX: u8 = 0x01;

/// SHA-256 of the empty string: the root of an empty tree (RFC 9162 §2.1.1).
#[must_use]
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// Leaf hash: SHA-256(0x00 || data).
#[must_use]
pub fn leaf_hash(data: &[u8]) -> Hash {
    // A unit record (at most 55 bytes with its prefix) is one padded
    // SHA-256 block: compressed directly, without the hasher's buffering.
    if data.len() < ONE_BLOCK_MAX {
        let mut block = [0u8; 64];
        block[0] = LEAF_PREFIX;
        block[1..=data.len()].copy_from_slice(data);
        return one_block_digest(block, data.len() + 1);
    }
    // Feed the prefix and the data separately so no copy of `data` is made.
    Sha256::new()
        .chain_update([LEAF_PREFIX])
        .chain_update(data)
        .finalize()
        .into()
}

/// Interior node hash: SHA-256(0x01 || left || right).
#[must_use]
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    // 65 bytes: two blocks, the second holding the last byte of `right`
    // and the padding; compressed directly (same digest as the hasher's).
    let mut blocks = [GenericArray::default(), GenericArray::default()];
    blocks[0][0] = NODE_PREFIX;
    blocks[0][1..33].copy_from_slice(left);
    blocks[0][33..64].copy_from_slice(&right[..31]);
    blocks[1][0] = right[31];
    blocks[1][1] = 0x80;
    blocks[1][56..].copy_from_slice(&(65u64 * 8).to_be_bytes());
    let mut state = SHA256_IV;
    sha2::compress256(&mut state, &blocks);
    state_bytes(&state)
}

/// Longest message that fits one padded SHA-256 block.
const ONE_BLOCK_MAX: usize = 55;

/// SHA-256's initial state (FIPS 180-4 §5.3.3).
const SHA256_IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// SHA-256 of the `len` (at most 55) bytes at the start of `block`, the
/// rest of which is zero: pads (0x80, bit length) and compresses once.
#[inline]
fn one_block_digest(mut block: [u8; 64], len: usize) -> Hash {
    debug_assert!(len <= ONE_BLOCK_MAX && block[len..].iter().all(|&b| b == 0));
    block[len] = 0x80;
    block[56..].copy_from_slice(&(len as u64 * 8).to_be_bytes());
    let mut state = SHA256_IV;
    sha2::compress256(&mut state, &[GenericArray::from(block)]);
    state_bytes(&state)
}

/// The digest bytes of a final SHA-256 state (big-endian words).
#[inline]
fn state_bytes(state: &[u32; 8]) -> Hash {
    let mut out = [0u8; 32];
    for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// Largest power of two strictly less than `n`: where RFC 9162 §2.1.1 splits
/// a list of `n` entries.
///
/// Only called with `n >= 2` (callers handle 0 and 1 entries first), so
/// `n - 1 >= 1` and `ilog2` cannot panic.
fn split_point(n: usize) -> usize {
    debug_assert!(n >= 2, "split_point needs at least two entries");
    1usize << (n - 1).ilog2()
}

/// MTH over entries that are already hashed (leaf hashes, or roots of aligned complete subtrees):
/// split at the largest power of two strictly less than `n`, recursively. `n == 0` gives [`empty_root()`]; `n == 1` gives the entry itself.
///
/// Cost: exactly `n - 1` node hashes, no heap allocation, recursion depth
/// `ceil(log2 n)` (so about 19 frames for the 450,000-leaf blocks). Recursing
/// on sub-slices, rather than building each level in a new `Vec`, is what
/// keeps this allocation-free.
///
/// Because the left subtree always has a power-of-two size, a tree cut into
/// chunks of `2^k` leaves (the last one possibly partial) has the same root as
/// the tree over those chunks' roots: every split above chunk level falls on a
/// chunk boundary. The block format relies on this.
#[must_use]
pub fn root_from_hashes(hashes: &[Hash]) -> Hash {
    match hashes {
        [] => empty_root(),
        [only] => *only,
        _ => {
            let (left, right) = hashes.split_at(split_point(hashes.len()));
            node_hash(&root_from_hashes(left), &root_from_hashes(right))
        }
    }
}

/// Computes the audit path of `index` within non-empty `hashes` (appending it
/// to `path`, bottom-up) and returns the root of `hashes` as a by-product.
///
/// Returning the root costs nothing extra (the sibling subtree roots have to be
/// computed anyway) and lets [`chunked_inclusion_proof`] check that the chunk
/// it was given really has the claimed root.
///
/// Precondition (checked by callers): `index < hashes.len()`.
fn path_and_root(hashes: &[Hash], index: usize, path: &mut Vec<Hash>) -> Hash {
    match hashes {
        // Unreachable given the precondition; answering with the empty root
        // rather than panicking keeps the function total.
        [] => empty_root(),
        [only] => *only,
        _ => {
            let (left, right) = hashes.split_at(split_point(hashes.len()));
            // Recurse first, push the sibling afterwards: the deeper siblings
            // land in `path` before the shallower ones, giving the bottom-up
            // order of RFC 9162 §2.1.3.1.
            if index < left.len() {
                let left_root = path_and_root(left, index, path);
                let right_root = root_from_hashes(right);
                path.push(right_root);
                node_hash(&left_root, &right_root)
            } else {
                let left_root = root_from_hashes(left);
                let right_root = path_and_root(right, index - left.len(), path);
                path.push(left_root);
                node_hash(&left_root, &right_root)
            }
        }
    }
}

/// Upper bound on an audit path's length for a slice of `n` entries
/// (`ceil(log2 n)`), used only to size the `Vec` once.
fn max_path_len(n: usize) -> usize {
    match n {
        0 | 1 => 0,
        _ => (n - 1).ilog2() as usize + 1,
    }
}

/// RFC 9162 §2.1.3.1 inclusion proof (audit path, bottom-up order) for entry `index` among `hashes` (already hashed entries, as in [`root_from_hashes`]). Returns `None` if `index >= hashes.len()`.
///
/// The proof for the only entry of a one-entry tree is empty. Cost: about
/// `n - 1` node hashes, i.e. the same as computing the root.
#[must_use]
pub fn inclusion_proof(hashes: &[Hash], index: usize) -> Option<Vec<Hash>> {
    if index >= hashes.len() {
        return None;
    }
    let mut path = Vec::with_capacity(max_path_len(hashes.len()));
    path_and_root(hashes, index, &mut path);
    Some(path)
}

/// Inclusion proof for a leaf in a tree stored as chunks of `chunk_size` leaves (`chunk_size` a power of two): the proof inside the chunk (from that chunk's leaf hashes) followed by the proof of the chunk's root among all chunk roots. Equal to [`inclusion_proof`] over all leaves (`tests/it/merkle.rs` checks this).
///
/// Arguments: `chunk_leaf_hashes` are the leaf hashes of chunk number
/// `chunk_index`, `index_in_chunk` is the leaf's position inside that chunk,
/// and `chunk_roots` are [`root_from_hashes`] of every chunk, in order. The
/// result proves leaf number `chunk_index * chunk_size + index_in_chunk` in
/// the tree over all leaves, whose root is `root_from_hashes(chunk_roots)`.
///
/// Precondition (not checkable here, since the other chunks are not passed
/// in): every chunk except the last holds exactly `chunk_size` leaves, a power
/// of two, and the last holds between 1 and `chunk_size`. Under it, every
/// split of the full tree above chunk level falls on a chunk boundary, so the
/// full audit path is the in-chunk path followed by the chunk-level path.
///
/// Returns `None`, instead of a proof that would not verify, when:
/// * `index_in_chunk` is out of range for `chunk_leaf_hashes` (including an
///   empty chunk) or `chunk_index` is out of range for `chunk_roots`;
/// * the chunk is not the last one but its length is not a power of two
///   (so it cannot be a full chunk);
/// * `chunk_roots[chunk_index]` is not the root of `chunk_leaf_hashes`
///   (checked for free: computing the in-chunk path yields that root).
#[must_use]
pub fn chunked_inclusion_proof(
    chunk_leaf_hashes: &[Hash],
    index_in_chunk: usize,
    chunk_roots: &[Hash],
    chunk_index: usize,
) -> Option<Vec<Hash>> {
    if index_in_chunk >= chunk_leaf_hashes.len() {
        return None;
    }
    let claimed_chunk_root = chunk_roots.get(chunk_index)?;
    let is_last_chunk = chunk_index + 1 == chunk_roots.len();
    if !is_last_chunk && !chunk_leaf_hashes.len().is_power_of_two() {
        return None;
    }

    let mut path =
        Vec::with_capacity(max_path_len(chunk_leaf_hashes.len()) + max_path_len(chunk_roots.len()));
    let chunk_root = path_and_root(chunk_leaf_hashes, index_in_chunk, &mut path);
    if chunk_root != *claimed_chunk_root {
        return None;
    }
    // The chunk-level path continues upwards from the chunk root, so it goes
    // after the in-chunk path to keep the whole proof bottom-up.
    path_and_root(chunk_roots, chunk_index, &mut path);
    Some(path)
}

/// RFC 9162 §2.1.3.2 verification algorithm: true iff `proof` proves `leaf_hash` at `leaf_index` in a tree of `tree_size` leaves with root `root`.
///
/// This is the RFC's algorithm step by step; it never panics and rejects
/// proofs that are too short or too long for the claimed position. Note that,
/// as in the RFC, an inclusion proof checks the leaf's position and the root,
/// not `tree_size` on its own: sizes that give the leaf the same path shape
/// accept the same proof (binding the size to the root is the job of the
/// signed tree head, not of this function).
#[must_use]
pub fn verify_inclusion(
    leaf_hash: &Hash,
    leaf_index: u64,
    tree_size: u64,
    proof: &[Hash],
    root: &Hash,
) -> bool {
    // Step 1: the leaf must be inside the tree (this also rejects empty trees).
    if leaf_index >= tree_size {
        return false;
    }
    // Step 2: `node` (the RFC's `fn`) is the index of the running hash's node
    // on the current level and `last` (the RFC's `sn`) the index of the last
    // node on that level.
    let mut node = leaf_index;
    let mut last = tree_size - 1;
    // Step 3.
    let mut r = *leaf_hash;
    // Step 4.
    for p in proof {
        // 4a: the running hash is already the root; extra elements are invalid.
        if last == 0 {
            return false;
        }
        if node & 1 == 1 || node == last {
            // 4b: we are a right child, or the last node of an incomplete
            // level, whose sibling is the next left subtree up.
            r = node_hash(p, &r);
            // 4b.ii: skip the levels where the node had no sibling (it was
            // promoted unchanged as the rightmost node) until it is a right
            // child or the leftmost node.
            while node & 1 == 0 && node != 0 {
                node >>= 1;
                last >>= 1;
            }
        } else {
            // We are a left child with a right sibling.
            r = node_hash(&r, p);
        }
        // 4c.
        node >>= 1;
        last >>= 1;
    }
    // Step 5: the proof must have reached the top level and the root.
    last == 0 && r == *root
}

/// RFC 9162 §2.1.4.1 consistency proof between the tree over the first
/// `old_size` of `hashes` and the tree over all of them. Returns `None`
/// unless `old_size <= hashes.len()`; empty when the sizes are equal or
/// `old_size` is 0 (every tree is consistent with the empty tree).
#[must_use]
pub fn consistency_proof(hashes: &[Hash], old_size: usize) -> Option<Vec<Hash>> {
    if old_size > hashes.len() {
        return None;
    }
    let mut proof = Vec::new();
    if old_size > 0 && old_size < hashes.len() {
        subproof(old_size, hashes, true, &mut proof);
    }
    Some(proof)
}

/// SUBPROOF(m, D[n], b) of RFC 9162 §2.1.4.1, appended to `out`.
fn subproof(m: usize, hashes: &[Hash], complete: bool, out: &mut Vec<Hash>) {
    if m == hashes.len() {
        if !complete {
            out.push(root_from_hashes(hashes));
        }
        return;
    }
    let k = split_point(hashes.len());
    let (left, right) = hashes.split_at(k);
    if m <= k {
        subproof(m, left, complete, out);
        out.push(root_from_hashes(right));
    } else {
        subproof(m - k, right, false, out);
        out.push(root_from_hashes(left));
    }
}

/// RFC 9162 §2.1.4.2 verification: true iff `proof` shows the tree of
/// `old_size` leaves with root `old_root` is a prefix of the tree of
/// `new_size` leaves with root `new_root`.
#[must_use]
pub fn verify_consistency(
    old_size: u64,
    new_size: u64,
    proof: &[Hash],
    old_root: &Hash,
    new_root: &Hash,
) -> bool {
    if old_size > new_size {
        return false;
    }
    if old_size == new_size {
        return proof.is_empty() && old_root == new_root;
    }
    if old_size == 0 {
        return proof.is_empty() && *old_root == empty_root();
    }
    // Step 1: a power-of-two old tree is a node of the new one: its root
    // starts the path.
    let mut path: Vec<&Hash> = Vec::with_capacity(proof.len() + 1);
    if old_size.is_power_of_two() {
        path.push(old_root);
    }
    path.extend(proof);
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    // Steps 2-3.
    let mut node = old_size - 1;
    let mut last = new_size - 1;
    while node & 1 == 1 {
        node >>= 1;
        last >>= 1;
    }
    // Step 4.
    let (mut old_r, mut new_r) = (**first, **first);
    // Step 5.
    for c in rest {
        if last == 0 {
            return false;
        }
        if node & 1 == 1 || node == last {
            old_r = node_hash(c, &old_r);
            new_r = node_hash(c, &new_r);
            while node & 1 == 0 && node != 0 {
                node >>= 1;
                last >>= 1;
            }
        } else {
            new_r = node_hash(&new_r, c);
        }
        node >>= 1;
        last >>= 1;
    }
    // Step 6.
    old_r == *old_root && new_r == *new_root && last == 0
}

/// The right edge of a growing tree (its "compact range"): the roots of the
/// perfect subtrees its leaves fall into, left to right. Appending a leaf
/// and taking the root cost `O(log n)`, so an append-only log keeps its root
/// current without rehashing every leaf.
// INVARIANT: `peaks[i]` is the root of a perfect subtree, sizes strictly
// decreasing, one per set bit of `size`.
#[derive(Clone, Debug, Default)]
pub struct Frontier {
    size: u64,
    peaks: Vec<Hash>,
}

impl Frontier {
    /// Leaves appended so far.
    #[must_use]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Appends a leaf hash.
    pub fn push(&mut self, leaf: Hash) {
        let mut node = leaf;
        let mut size = self.size;
        while size & 1 == 1 {
            let Some(left) = self.peaks.pop() else { break };
            node = node_hash(&left, &node);
            size >>= 1;
        }
        self.peaks.push(node);
        self.size += 1;
    }

    /// Its bytes, to keep beside a log head: the size (u64 little-endian)
    /// then the peaks, left to right.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.size.to_le_bytes().to_vec();
        for peak in &self.peaks {
            out.extend_from_slice(peak);
        }
        out
    }

    /// Reads [`Frontier::to_bytes`]; `None` unless there is one peak per set
    /// bit of the size.
    #[must_use]
    pub fn from_bytes(bytes: &[u8]) -> Option<Frontier> {
        let (size, peaks) = bytes.split_at_checked(8)?;
        let size = u64::from_le_bytes(size.try_into().ok()?);
        if peaks.len() != size.count_ones() as usize * 32 {
            return None;
        }
        let peaks = peaks
            .chunks(32)
            .map(|p| Hash::try_from(p).ok())
            .collect::<Option<Vec<Hash>>>()?;
        Some(Frontier { size, peaks })
    }

    /// The RFC 9162 root of the leaves appended so far.
    #[must_use]
    pub fn root(&self) -> Hash {
        let mut peaks = self.peaks.iter().rev();
        let Some(last) = peaks.next() else {
            return empty_root();
        };
        peaks.fold(*last, |right, left| node_hash(left, &right))
    }
}

/// Every level of a perfect tree (a power-of-two number of leaves), kept so
/// that an audit path inside it is a lookup, not a rehash: a redeemer keeps
/// one per cached chunk.
#[derive(Clone, Debug)]
pub struct PerfectTree {
    // INVARIANT: levels[0] are the leaves; levels[k + 1][i] is the node
    // over levels[k][2i] and levels[k][2i + 1]; the last level has one hash.
    levels: Vec<Vec<Hash>>,
}

impl PerfectTree {
    /// The tree over `leaves`; `None` unless their number is a power of two.
    #[must_use]
    pub fn new(leaves: &[Hash]) -> Option<PerfectTree> {
        if !leaves.len().is_power_of_two() {
            return None;
        }
        let mut levels = vec![leaves.to_vec()];
        while let Some(top) = levels.last().filter(|l| l.len() > 1) {
            let up = top.chunks(2).map(|p| node_hash(&p[0], &p[1])).collect();
            levels.push(up);
        }
        Some(PerfectTree { levels })
    }

    /// Its root.
    #[must_use]
    pub fn root(&self) -> Hash {
        self.levels.last().map_or_else(empty_root, |top| top[0])
    }

    /// The audit path of leaf `index`, bottom-up (as [`inclusion_proof`]
    /// over the leaves gives it); `None` when out of range.
    #[must_use]
    pub fn path(&self, index: usize) -> Option<Vec<Hash>> {
        if index >= self.levels[0].len() {
            return None;
        }
        let depth = self.levels.len() - 1;
        Some(
            self.levels[..depth]
                .iter()
                .enumerate()
                .map(|(k, level)| level[(index >> k) ^ 1])
                .collect(),
        )
    }
}
