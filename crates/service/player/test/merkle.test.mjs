import assert from 'node:assert/strict';
import { test } from 'node:test';

import { hexOf } from '../format.js';
import { leafHash, nodeHash, rootFromInclusion } from '../merkle.js';
import { json, unhex } from './fixtures.mjs';

const vectors = json('fixtures/merkle/rfc9162_vectors.json');
const leaves = vectors.leaves_hex.map(unhex);
const rootOf = (size) => vectors.roots.find((r) => r.tree_size === size).root;

test('leaf hashes are RFC 9162 §2.1.1', async () => {
  for (const v of vectors.leaf_hashes) {
    assert.equal(hexOf(await leafHash(unhex(v.data_hex))), v.leaf_hash);
  }
});

test('the tree of the vectors hashes to their roots (MTH of RFC 9162 §2.1.1)', async () => {
  async function mth(from, to) {
    if (to - from === 1) {
      return leafHash(leaves[from]);
    }
    let k = 1;
    while (k * 2 < to - from) {
      k *= 2;
    }
    return nodeHash(await mth(from, from + k), await mth(from + k, to));
  }
  for (const r of vectors.roots) {
    assert.equal(hexOf(await mth(0, r.tree_size)), r.root, `size ${r.tree_size}`);
  }
});

test('every inclusion proof of the vectors reaches its root, and a changed one does not', async () => {
  for (const p of vectors.inclusion_proofs) {
    const leaf = await leafHash(leaves[p.leaf_index]);
    const path = p.proof.map(unhex);
    const root = await rootFromInclusion(leaf, p.leaf_index, p.tree_size, path);
    assert.equal(root && hexOf(root), rootOf(p.tree_size), JSON.stringify(p));
    if (path.length) {
      const changed = path.map((h) => h.slice());
      changed[0][0] ^= 1;
      const wrong = await rootFromInclusion(leaf, p.leaf_index, p.tree_size, changed);
      assert.notEqual(wrong && hexOf(wrong), rootOf(p.tree_size));
      // A proof one hash short or long reaches no root.
      assert.equal(await rootFromInclusion(leaf, p.leaf_index, p.tree_size, path.slice(1)), null);
      assert.equal(await rootFromInclusion(leaf, p.leaf_index, p.tree_size, [...path, path[0]]), null);
    }
    // Another leaf of the tree does not reach its root by this proof.
    const other = await leafHash(Uint8Array.of(0xff));
    const wrong = await rootFromInclusion(other, p.leaf_index, p.tree_size, path);
    assert.notEqual(wrong && hexOf(wrong), rootOf(p.tree_size));
  }
  assert.equal(await rootFromInclusion(new Uint8Array(32), 8, 8, []), null, 'an index beyond the tree');
});
