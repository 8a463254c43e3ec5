//! Tests for `ticket_issuer::merkle` (RFC 9162 §2.1 Merkle tree hashing).
//!
//! Three kinds of evidence:
//! * known-answer vectors published by transparency-dev/merkle (the Go
//!   reference implementation behind Certificate Transparency logs), read from
//!   `fixtures/merkle/rfc9162_vectors.json`, which names the exact source files;
//! * an independent, deliberately naive transcription of the RFC's recursive
//!   definitions (`reference_*` below) that the optimised code must match, and
//!   exhaustive proof/tamper checks for every index of every size 1..=40;
//! * the chunking property the block format depends on: with power-of-two
//!   chunks, roots and proofs computed chunk-wise equal the flat ones.

use proptest::prelude::*;
use serde::Deserialize;
use ticket_issuer::merkle::{
    chunked_inclusion_proof, empty_root, inclusion_proof, leaf_hash, node_hash, root_from_hashes,
    verify_inclusion, Hash,
};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Decodes a 64-hex-digit string from the fixture into a `Hash`.
fn h(hex_str: &str) -> Hash {
    let bytes = hex::decode(hex_str).unwrap_or_else(|e| panic!("bad hex {hex_str:?}: {e}"));
    bytes
        .try_into()
        .unwrap_or_else(|b: Vec<u8>| panic!("hash {hex_str:?} has {} bytes, not 32", b.len()))
}

/// Distinct, deterministic leaf hashes for tree-shape tests. `salt` varies the
/// data between tests so that no two tests share a tree by accident.
fn leaves(n: usize, salt: u64) -> Vec<Hash> {
    (0..n as u64)
        .map(|i| {
            let mut data = salt.to_be_bytes().to_vec();
            data.extend_from_slice(&i.to_be_bytes());
            leaf_hash(&data)
        })
        .collect()
}

/// The RFC's split point (largest power of two strictly below `n`, `n >= 2`),
/// computed with a plain loop so it does not share code with the module.
fn reference_split(n: usize) -> usize {
    assert!(n >= 2);
    let mut k = 1;
    while k * 2 < n {
        k *= 2;
    }
    k
}

/// MTH exactly as written in RFC 9162 §2.1.1, with no attention to cost.
fn reference_mth(d: &[Hash]) -> Hash {
    match d.len() {
        0 => empty_root(),
        1 => d[0],
        n => {
            let k = reference_split(n);
            node_hash(&reference_mth(&d[..k]), &reference_mth(&d[k..]))
        }
    }
}

/// PATH(m, D[n]) exactly as written in RFC 9162 §2.1.3.1.
fn reference_path(m: usize, d: &[Hash]) -> Vec<Hash> {
    let n = d.len();
    if n == 1 {
        return Vec::new();
    }
    let k = reference_split(n);
    if m < k {
        let mut p = reference_path(m, &d[..k]);
        p.push(reference_mth(&d[k..]));
        p
    } else {
        let mut p = reference_path(m - k, &d[k..]);
        p.push(reference_mth(&d[..k]));
        p
    }
}

/// Bottom-up "is the sibling on the left?" sequence for leaf `m` of a tree of
/// `n` leaves, derived from the tree recursion. Two (index, size) pairs accept
/// the same proof exactly when these sequences are equal, which gives an exact
/// oracle for the wrong-index / wrong-size tests.
fn shape(m: u64, n: u64) -> Vec<bool> {
    if n == 1 {
        return Vec::new();
    }
    let k = reference_split(n as usize) as u64;
    let mut s = if m < k {
        shape(m, k)
    } else {
        shape(m - k, n - k)
    };
    s.push(m >= k);
    s
}

/// Splits `all` into chunks of `chunk_size` leaves and returns each chunk's root.
fn chunk_roots(all: &[Hash], chunk_size: usize) -> Vec<Hash> {
    all.chunks(chunk_size).map(root_from_hashes).collect()
}

/// Chunked proof for global leaf `index`, built the way the block format will.
fn chunked_proof(all: &[Hash], chunk_size: usize, index: usize) -> Option<Vec<Hash>> {
    let roots = chunk_roots(all, chunk_size);
    let chunk_index = index / chunk_size;
    let chunk = all.chunks(chunk_size).nth(chunk_index)?;
    chunked_inclusion_proof(chunk, index % chunk_size, &roots, chunk_index)
}

/// A 32-byte value that is not any hash produced by these tests.
const SOME_HASH: Hash = [0xab; 32];

// ---------------------------------------------------------------------------
// Known-answer vectors (fixtures/merkle/rfc9162_vectors.json)
// ---------------------------------------------------------------------------

#[derive(Deserialize)]
struct Vectors {
    source: Source,
    empty_root: String,
    leaf_hashes: Vec<LeafHashVector>,
    leaves_hex: Vec<String>,
    roots: Vec<RootVector>,
    inclusion_proofs: Vec<InclusionVector>,
}

#[derive(Deserialize)]
struct Source {
    repository: String,
    files: Vec<SourceFile>,
}

#[derive(Deserialize)]
struct SourceFile {
    path: String,
}

#[derive(Deserialize)]
struct LeafHashVector {
    data_hex: String,
    leaf_hash: String,
}

#[derive(Deserialize)]
struct RootVector {
    tree_size: usize,
    root: String,
}

#[derive(Deserialize)]
struct InclusionVector {
    leaf_index: usize,
    tree_size: usize,
    proof: Vec<String>,
}

fn vectors() -> Vectors {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/merkle/rfc9162_vectors.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let v: Vectors = serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {path}: {e}"));
    // Keep the provenance in the fixture honest: it must say where it came from.
    assert!(v.source.repository.contains("github.com/"));
    assert!(!v.source.files.is_empty() && v.source.files.iter().all(|f| !f.path.is_empty()));
    v
}

/// Leaf hashes of the published 8-leaf tree.
fn vector_leaves(v: &Vectors) -> Vec<Hash> {
    v.leaves_hex
        .iter()
        .map(|x| leaf_hash(&hex::decode(x).expect("leaf hex")))
        .collect()
}

/// One set of (possibly corrupted) arguments for `verify_inclusion`.
struct Probe {
    desc: String,
    index: u64,
    size: u64,
    leaf: Hash,
    proof: Vec<Hash>,
    root: Hash,
}

#[test]
fn kat_empty_root() {
    let v = vectors();
    assert_eq!(empty_root(), h(&v.empty_root));
    assert_eq!(root_from_hashes(&[]), h(&v.empty_root));
}

#[test]
fn kat_leaf_hashes() {
    let v = vectors();
    assert!(!v.leaf_hashes.is_empty());
    for lv in &v.leaf_hashes {
        let data = hex::decode(&lv.data_hex).expect("data hex");
        assert_eq!(leaf_hash(&data), h(&lv.leaf_hash), "data {:?}", lv.data_hex);
    }
    // The empty leaf's hash must differ from the empty tree's root: that is
    // what the 0x00 prefix is for.
    assert_ne!(leaf_hash(b""), empty_root());
}

#[test]
fn kat_roots_for_every_size_1_to_8() {
    let v = vectors();
    let all = vector_leaves(&v);
    assert_eq!(all.len(), 8);
    let sizes: Vec<usize> = v.roots.iter().map(|r| r.tree_size).collect();
    assert_eq!(
        sizes,
        (1..=8).collect::<Vec<_>>(),
        "fixture must cover 1..=8"
    );
    for rv in &v.roots {
        let leaves = &all[..rv.tree_size];
        assert_eq!(
            root_from_hashes(leaves),
            h(&rv.root),
            "tree_size {}",
            rv.tree_size
        );
        // The naive transcription agrees too, so the vectors and the reference
        // corroborate each other before the reference is used alone below.
        assert_eq!(reference_mth(leaves), h(&rv.root));
    }
}

#[test]
fn kat_inclusion_proofs() {
    let v = vectors();
    let all = vector_leaves(&v);
    assert!(!v.inclusion_proofs.is_empty());
    for iv in &v.inclusion_proofs {
        let what = format!("leaf {} of {}", iv.leaf_index, iv.tree_size);
        let tree = &all[..iv.tree_size];
        let root = v
            .roots
            .iter()
            .find(|r| r.tree_size == iv.tree_size)
            .map(|r| h(&r.root))
            .expect("fixture has the root for every proof's tree size");
        let want: Vec<Hash> = iv.proof.iter().map(|x| h(x)).collect();

        let got = inclusion_proof(tree, iv.leaf_index).expect(&what);
        assert_eq!(got, want, "{what}: generated proof");

        let leaf = tree[iv.leaf_index];
        let (i, n) = (iv.leaf_index as u64, iv.tree_size as u64);
        assert!(verify_inclusion(&leaf, i, n, &want, &root), "{what}");

        // The corruptions of upstream's corruptInclusionProof, plus a few more.
        let probe = |desc: &str| Probe {
            desc: desc.to_string(),
            index: i,
            size: n,
            leaf,
            proof: want.clone(),
            root,
        };
        let mut bad = vec![
            Probe {
                index: i.wrapping_sub(1),
                ..probe("index - 1")
            },
            Probe {
                index: i + 1,
                ..probe("index + 1")
            },
            Probe {
                index: i ^ 2,
                ..probe("index ^ 2")
            },
            Probe {
                size: n * 2,
                ..probe("size * 2")
            },
            Probe {
                size: n / 2,
                ..probe("size / 2")
            },
            Probe {
                leaf: leaf_hash(b"WrongLeaf"),
                ..probe("wrong leaf")
            },
            Probe {
                root: empty_root(),
                ..probe("empty root")
            },
            Probe {
                root: SOME_HASH,
                ..probe("random root")
            },
        ];
        for extra in [SOME_HASH, root] {
            let mut p = want.clone();
            p.push(extra);
            bad.push(Probe {
                proof: p,
                ..probe("trailing element")
            });
            let mut p = want.clone();
            p.insert(0, extra);
            bad.push(Probe {
                proof: p,
                ..probe("preceding element")
            });
        }
        for k in 0..want.len() {
            let mut p = want.clone();
            p[k][0] ^= 8;
            bad.push(Probe {
                proof: p,
                ..probe(&format!("proof[{k}] bit 3 flipped"))
            });
        }
        if let Some((_, shorter)) = want.split_last() {
            bad.push(Probe {
                proof: shorter.to_vec(),
                ..probe("removed last component")
            });
        }
        if want.len() > 1 {
            let mut p = want.clone();
            p.insert(1, SOME_HASH);
            bad.push(Probe {
                proof: p,
                ..probe("inserted component")
            });
        }
        for b in bad {
            assert!(
                !verify_inclusion(&b.leaf, b.index, b.size, &b.proof, &b.root),
                "{what}: accepted corruption {}",
                b.desc
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Roots and flat proofs against the RFC transcription
// ---------------------------------------------------------------------------

#[test]
fn root_matches_reference_for_sizes_0_to_130() {
    for n in 0..=130 {
        let l = leaves(n, 1);
        assert_eq!(root_from_hashes(&l), reference_mth(&l), "n = {n}");
    }
    // A single entry is its own root: no extra hashing of already-hashed input.
    let one = [SOME_HASH];
    assert_eq!(root_from_hashes(&one), SOME_HASH);
}

#[test]
fn inclusion_proof_out_of_range_is_none() {
    assert_eq!(inclusion_proof(&[], 0), None);
    for n in 1..=10 {
        let l = leaves(n, 2);
        assert_eq!(inclusion_proof(&l, n), None);
        assert_eq!(inclusion_proof(&l, n + 1), None);
        assert_eq!(inclusion_proof(&l, usize::MAX), None);
    }
}

#[test]
fn every_proof_of_every_size_1_to_40_verifies_and_tampering_fails() {
    for n in 1..=40usize {
        let l = leaves(n, 3);
        let root = root_from_hashes(&l);
        let nu = n as u64;
        for i in 0..n {
            let iu = i as u64;
            let leaf = l[i];
            let proof = inclusion_proof(&l, i).expect("in range");
            assert_eq!(
                proof,
                reference_path(i, &l),
                "n {n} i {i}: matches RFC PATH"
            );
            assert_eq!(proof.len(), shape(iu, nu).len(), "n {n} i {i}: length");
            assert!(
                verify_inclusion(&leaf, iu, nu, &proof, &root),
                "n {n} i {i}"
            );

            let ctx = |what: &str| format!("n {n} i {i}: accepted {what}");

            // Flip every bit of every proof element.
            for k in 0..proof.len() {
                for bit in 0..256 {
                    let mut p = proof.clone();
                    p[k][bit / 8] ^= 1 << (bit % 8);
                    assert!(
                        !verify_inclusion(&leaf, iu, nu, &p, &root),
                        "{}",
                        ctx(&format!("flipped bit {bit} of proof[{k}]"))
                    );
                }
            }
            // Remove any one element, or swap two neighbours.
            for k in 0..proof.len() {
                let mut p = proof.clone();
                p.remove(k);
                assert!(
                    !verify_inclusion(&leaf, iu, nu, &p, &root),
                    "{}",
                    ctx(&format!("proof without element {k}"))
                );
                if k + 1 < proof.len() {
                    let mut p = proof.clone();
                    p.swap(k, k + 1);
                    assert!(
                        !verify_inclusion(&leaf, iu, nu, &p, &root),
                        "{}",
                        ctx(&format!("proof with elements {k},{} swapped", k + 1))
                    );
                }
            }
            // Append, prepend or insert an element (junk, the root, a leaf, a copy).
            for extra in [SOME_HASH, root, leaf, empty_root()] {
                for pos in 0..=proof.len() {
                    let mut p = proof.clone();
                    p.insert(pos, extra);
                    assert!(
                        !verify_inclusion(&leaf, iu, nu, &p, &root),
                        "{}",
                        ctx(&format!("extra element at {pos}"))
                    );
                }
            }
            if let Some(last) = proof.last() {
                let mut p = proof.clone();
                p.push(*last);
                assert!(
                    !verify_inclusion(&leaf, iu, nu, &p, &root),
                    "{}",
                    ctx("duplicated last element")
                );
            }
            // Wrong index: no other position accepts this proof.
            for j in (0..nu + 3).chain([u64::MAX]) {
                if j != iu {
                    assert!(
                        !verify_inclusion(&leaf, j, nu, &proof, &root),
                        "{}",
                        ctx(&format!("index {j}"))
                    );
                }
            }
            // Wrong tree size: the upstream probes (2n, n/2) always fail...
            for m in [nu * 2, nu / 2, 0, u64::MAX] {
                assert!(
                    !verify_inclusion(&leaf, iu, m, &proof, &root),
                    "{}",
                    ctx(&format!("tree size {m}"))
                );
            }
            // ...and in general a size is accepted exactly when it gives the
            // leaf the same path shape (RFC 9162 proofs bind position and
            // root, not the size on its own; see verify_inclusion's doc).
            let own_shape = shape(iu, nu);
            for m in 1..=2 * nu + 2 {
                let expect = iu < m && shape(iu, m) == own_shape;
                assert_eq!(
                    verify_inclusion(&leaf, iu, m, &proof, &root),
                    expect,
                    "n {n} i {i}: tree size {m}"
                );
            }
            // Wrong leaf: any other leaf, junk, the raw (unprefixed) hash of
            // the leaf, and interior nodes of the tree.
            for (j, other) in l.iter().enumerate() {
                if j != i {
                    assert!(
                        !verify_inclusion(other, iu, nu, &proof, &root),
                        "{}",
                        ctx(&format!("leaf {j}"))
                    );
                }
            }
            for wrong in [SOME_HASH, leaf_hash(&leaf), root, empty_root()] {
                // In a one-leaf tree the root *is* the leaf, so skip that case.
                if wrong == leaf {
                    continue;
                }
                assert!(
                    !verify_inclusion(&wrong, iu, nu, &proof, &root),
                    "{}",
                    ctx("a wrong leaf hash")
                );
            }
            if let Some(sibling) = proof.first() {
                assert!(
                    !verify_inclusion(sibling, iu, nu, &proof, &root),
                    "{}",
                    ctx("the sibling as leaf")
                );
            }
            // Wrong root.
            for wrong in [SOME_HASH, empty_root(), leaf, root_from_hashes(&l[..n - 1])] {
                if wrong != root {
                    assert!(
                        !verify_inclusion(&leaf, iu, nu, &proof, &wrong),
                        "{}",
                        ctx("a wrong root")
                    );
                }
            }
        }
    }
}

/// Exact oracle over claimed positions: a valid proof for leaf `i` of an
/// `n`-leaf tree is accepted for claimed (index `j`, size `m`) exactly when the
/// leaf would have the same path shape there. In particular, extra proof
/// elements can never be "absorbed" by claiming a smaller tree.
#[test]
fn proofs_are_accepted_only_at_positions_with_the_same_shape() {
    for n in 1..=24u64 {
        let l = leaves(n as usize, 8);
        let root = root_from_hashes(&l);
        for i in 0..n {
            let leaf = l[i as usize];
            let proof = inclusion_proof(&l, i as usize).expect("in range");
            let own_shape = shape(i, n);
            for m in 0..=2 * n + 1 {
                for j in 0..=m {
                    let expect = j < m && shape(j, m) == own_shape;
                    assert_eq!(
                        verify_inclusion(&leaf, j, m, &proof, &root),
                        expect,
                        "proof of leaf {i} of {n} claimed as leaf {j} of {m}"
                    );
                }
            }
        }
    }
}

#[test]
fn verify_rejects_degenerate_inputs() {
    let leaf = leaf_hash(b"x");
    // Empty tree: nothing is included, whatever the proof.
    assert!(!verify_inclusion(&leaf, 0, 0, &[], &empty_root()));
    assert!(!verify_inclusion(&leaf, 0, 0, &[], &leaf));
    // One-leaf tree: the root is the leaf hash and the proof is empty.
    assert!(verify_inclusion(&leaf, 0, 1, &[], &leaf));
    assert!(!verify_inclusion(&leaf, 1, 1, &[], &leaf));
    assert!(!verify_inclusion(&leaf, 0, 1, &[leaf], &leaf));
    // Huge sizes and indices must not overflow or panic.
    assert!(!verify_inclusion(&leaf, u64::MAX, u64::MAX, &[], &leaf));
    assert!(!verify_inclusion(
        &leaf,
        u64::MAX - 1,
        u64::MAX,
        &[SOME_HASH; 64],
        &leaf
    ));
    assert!(!verify_inclusion(
        &leaf,
        0,
        u64::MAX,
        &[SOME_HASH; 100],
        &leaf
    ));
    // The proof of leaf 1 in a two-leaf tree, replayed as "the only leaf of a
    // one-leaf tree with root H(l0 || l1)": rejected because the proof runs
    // past the top of the claimed tree (RFC 9162 §2.1.3.2 step 4a).
    let (l0, l1) = (leaf_hash(b"l0"), leaf_hash(b"l1"));
    let two_root = node_hash(&l0, &l1);
    assert!(verify_inclusion(&l1, 1, 2, &[l0], &two_root));
    assert!(!verify_inclusion(&l1, 0, 1, &[l0], &two_root));
    // A long proof for a small tree is rejected, not read past its end.
    assert!(!verify_inclusion(&leaf, 0, 2, &[SOME_HASH; 1000], &leaf));
}

// ---------------------------------------------------------------------------
// Chunking (the block format's storage layout)
// ---------------------------------------------------------------------------

#[test]
fn chunked_root_and_proof_equal_flat_exhaustive_small() {
    for chunk_size in [1usize, 2, 4, 8, 16, 32] {
        for n in 1..=70usize {
            let l = leaves(n, 4);
            let flat_root = root_from_hashes(&l);
            let roots = chunk_roots(&l, chunk_size);
            assert_eq!(
                root_from_hashes(&roots),
                flat_root,
                "chunk {chunk_size} n {n}"
            );
            for i in 0..n {
                let flat = inclusion_proof(&l, i).expect("in range");
                let chunked = chunked_proof(&l, chunk_size, i);
                assert_eq!(
                    chunked.as_ref(),
                    Some(&flat),
                    "chunk {chunk_size} n {n} i {i}"
                );
                assert!(verify_inclusion(
                    &l[i], i as u64, n as u64, &flat, &flat_root
                ));
            }
        }
    }
}

/// Why the chunk size must be a power of two: with 3-leaf chunks the split
/// points of the flat tree (powers of two) no longer fall on chunk boundaries.
#[test]
fn non_power_of_two_chunks_change_the_root() {
    let l = leaves(4, 5);
    assert_ne!(root_from_hashes(&chunk_roots(&l, 3)), root_from_hashes(&l));
    // And the chunked proof refuses a non-final chunk that cannot be full.
    let roots = chunk_roots(&l, 3);
    assert_eq!(chunked_inclusion_proof(&l[..3], 0, &roots, 0), None);
}

#[test]
fn chunked_proof_rejects_inconsistent_inputs() {
    let l = leaves(20, 6);
    let roots = chunk_roots(&l, 8); // chunks of 8, 8, 4
    let chunk0 = &l[..8];
    let last = &l[16..];
    // Baseline: valid.
    assert!(chunked_inclusion_proof(chunk0, 3, &roots, 0).is_some());
    assert!(chunked_inclusion_proof(last, 3, &roots, 2).is_some());
    // Index out of range inside the chunk, or chunk out of range.
    assert_eq!(chunked_inclusion_proof(chunk0, 8, &roots, 0), None);
    assert_eq!(chunked_inclusion_proof(last, 4, &roots, 2), None);
    assert_eq!(chunked_inclusion_proof(chunk0, 0, &roots, 3), None);
    assert_eq!(chunked_inclusion_proof(chunk0, 0, &roots, usize::MAX), None);
    assert_eq!(chunked_inclusion_proof(&[], 0, &roots, 0), None);
    assert_eq!(chunked_inclusion_proof(chunk0, 0, &[], 0), None);
    // Chunk leaves that do not match the claimed chunk root.
    assert_eq!(chunked_inclusion_proof(&l[8..16], 0, &roots, 0), None);
    let mut tampered = chunk0.to_vec();
    tampered[5][0] ^= 1;
    assert_eq!(chunked_inclusion_proof(&tampered, 0, &roots, 0), None);
    // A partial chunk that is not the last one.
    let mut roots_partial = roots.clone();
    roots_partial[0] = root_from_hashes(&l[..6]);
    assert_eq!(chunked_inclusion_proof(&l[..6], 0, &roots_partial, 0), None);
}

/// The real block shape: 450,000 leaves in chunks of 4096 (the last partial).
/// Also a coarse check that `root_from_hashes` is fast enough for a block.
#[test]
fn block_sized_tree_chunks_of_4096() {
    const N: usize = 450_000;
    const CHUNK: usize = 4096;
    let l = leaves(N, 7);
    let flat_root = root_from_hashes(&l);
    let roots = chunk_roots(&l, CHUNK);
    assert_eq!(roots.len(), N.div_ceil(CHUNK));
    assert_eq!(root_from_hashes(&roots), flat_root);
    for i in [0, 1, CHUNK - 1, CHUNK, 300_000, N - N % CHUNK, N - 2, N - 1] {
        let flat = inclusion_proof(&l, i).expect("in range");
        assert_eq!(chunked_proof(&l, CHUNK, i).as_ref(), Some(&flat), "i {i}");
        assert!(verify_inclusion(
            &l[i], i as u64, N as u64, &flat, &flat_root
        ));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// root_from_hashes(all leaves) == root_from_hashes(chunk roots) for
    /// power-of-two chunk sizes, whatever n (the last chunk may be partial).
    #[test]
    fn prop_chunk_roots_give_flat_root(
        n in 0usize..=300,
        chunk_exp in 0u32..=3,
        salt in any::<u64>(),
    ) {
        let chunk_size = 1usize << chunk_exp;
        let l = leaves(n, salt);
        let roots = chunk_roots(&l, chunk_size);
        prop_assert_eq!(root_from_hashes(&roots), root_from_hashes(&l));
        prop_assert_eq!(root_from_hashes(&l), reference_mth(&l));
    }

    /// The chunked proof is the flat proof, and verifies against the flat root.
    #[test]
    fn prop_chunked_proof_equals_flat(
        n in 1usize..=300,
        chunk_exp in 0u32..=3,
        index_seed in any::<usize>(),
        salt in any::<u64>(),
    ) {
        let chunk_size = 1usize << chunk_exp;
        let l = leaves(n, salt);
        let i = index_seed % n;
        let flat = inclusion_proof(&l, i).expect("in range");
        prop_assert_eq!(chunked_proof(&l, chunk_size, i), Some(flat.clone()));
        prop_assert_eq!(&flat, &reference_path(i, &l));
        prop_assert!(verify_inclusion(&l[i], i as u64, n as u64, &flat, &root_from_hashes(&l)));
    }
}

/// The leaf and node hashes compress their padded blocks directly: they must
/// equal SHA-256 of the RFC's byte strings for every data length on both
/// sides of the one-block limit (55 bytes with the prefix).
#[test]
fn direct_compression_equals_plain_sha256() {
    use sha2::{Digest, Sha256};
    for len in 0..=130usize {
        let data: Vec<u8> = (0..len).map(|i| (i * 37 + len) as u8).collect();
        let mut plain = vec![0x00];
        plain.extend_from_slice(&data);
        let want: Hash = Sha256::digest(&plain).into();
        assert_eq!(leaf_hash(&data), want, "leaf of {len} bytes");
    }
    let (left, right) = (leaf_hash(b"left"), leaf_hash(b"right"));
    let mut plain = vec![0x01];
    plain.extend_from_slice(&left);
    plain.extend_from_slice(&right);
    let want: Hash = Sha256::digest(&plain).into();
    assert_eq!(node_hash(&left, &right), want);
}
