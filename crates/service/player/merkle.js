// The Merkle tree of a block (RFC 9162 §2.1, SHA-256 in WebCrypto): a
// unit's leaf hash, a node's, and the root its inclusion proof reaches.

import { concat } from './format.js';

export async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
}

/** RFC 9162 §2.1.1: SHA-256(0x00 ‖ leaf). */
export function leafHash(leaf) {
  return sha256(concat(Uint8Array.of(0), leaf));
}

/** RFC 9162 §2.1.1: SHA-256(0x01 ‖ left ‖ right). */
export function nodeHash(left, right) {
  return sha256(concat(Uint8Array.of(1), left, right));
}

/** RFC 9162 §2.1.3.2: the root `leaf` reaches up `path`, or null. */
export async function rootFromInclusion(leaf, index, size, path) {
  let fn = index;
  let sn = size - 1;
  if (!(Number.isSafeInteger(fn) && Number.isSafeInteger(sn)) || fn > sn || fn < 0) {
    return null;
  }
  let r = leaf;
  for (const p of path) {
    if (sn === 0) {
      return null;
    }
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}
