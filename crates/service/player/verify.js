// Every check of a redeemed unit, in order, each resting on the ones
// before (docs/API.md §A client that checks what it shows, steps 5 to 11):
// the seal with the pinned key, the header, the unit ID against the record
// and the proof, the inclusion under the sealed root, then the game's own
// replay against what was shown and paid (its module's `check`).

import {
  Refusal, bytesOfHex, centsOf, euros, hexOf, parseHeader, parseUnitId, sameBytes, u32,
} from './format.js';
import { leafHash, rootFromInclusion } from './merkle.js';

/** Whether `seal` is the Ed25519 signature of `header` by `key` (raw bytes). */
export async function sealVerifies(key, header, seal) {
  const trusted = await crypto.subtle.importKey('raw', key, { name: 'Ed25519' }, false, ['verify']);
  return seal.length === 64 && crypto.subtle.verify({ name: 'Ed25519' }, trusted, seal, header);
}

/**
 * The checks of `redemption` (POST /v1/redemptions's answer) and `sealed`
 * (GET /v1/blocks/…'s) for the unit `shown` (its `id`, `sale` and what the
 * page displayed), with the issuer's pinned key (`keyHex`, the 32 raw
 * bytes in hex), the games' modules
 * `games` (slug → module): the checks passed, and the outcome or the
 * check that failed.
 */
export async function verify(redemption, sealed, shown, keyHex, games) {
  const passed = [];
  const pass = (name, detail) => passed.push({ name, detail });
  try {
    if (typeof keyHex !== 'string' || !/^[0-9a-f]{64}$/.test(keyHex)) {
      throw new Refusal('signer', "this page holds no issuer's public key to check seals with");
    }
    const key = bytesOfHex(keyHex, 'the pinned key', 'signer');
    const header = bytesOfHex(sealed.header, "the block's header", 'seal');
    const seal = bytesOfHex(sealed.seal, "the block's seal", 'seal');
    if (!(await sealVerifies(key, header, seal))) {
      throw new Refusal('seal', "the block's seal does not verify with the issuer's key pinned in this page: its header is not the issuer's");
    }
    pass('seal', "Ed25519 over the header bytes, with the issuer's pinned key");
    const h = parseHeader(header, games);
    if (!sameBytes(h.signer, key) || sealed.signer !== hexOf(key)) {
      throw new Refusal('signer', "the header's signer is not the issuer's pinned key");
    }
    pass('signer', hexOf(key));

    const id = parseUnitId(shown.id, games);
    const game = games[id.slug];
    if (h.slug !== id.slug || h.emission !== id.emission || h.block !== id.block
      || sealed.game !== id.slug || sealed.emission !== id.emission || sealed.block !== id.block) {
      throw new Refusal('header', `the sealed header is of ${h.slug} emission ${h.emission} block ${h.block}, the ticket's ID names ${id.slug} emission ${id.emission} block ${id.block}`);
    }
    if (h.recordSize !== game.facts.recordSize || h.params.join() !== game.facts.params.join()) {
      throw new Refusal('header', `the header's record size ${h.recordSize} or parameters ${h.params.join(', ')} are not the game's`);
    }
    const paid = centsOf(shown.sale.price, 'the price paid', 'header');
    if (h.priceCents !== paid) {
      throw new Refusal('header', `the ticket was sold at ${euros(paid)}, its block's sealed price is ${euros(h.priceCents)}`);
    }
    pass('header', `${h.slug}, émission ${h.emission}, bloc ${h.block}, ${euros(h.priceCents)}, ${h.unitCount} unités`);

    const record = bytesOfHex(redemption.record, 'the record', 'unit ID');
    if (redemption.kind !== 'redemption' || redemption.id !== shown.id || redemption.game !== id.slug
      || redemption.emission !== id.emission || redemption.block !== id.block || redemption.index !== id.index) {
      throw new Refusal('unit ID', `the redemption answers for ${redemption.id}, not ${shown.id}`);
    }
    if (record.length !== h.recordSize) {
      throw new Refusal('unit ID', `the record is ${record.length} bytes, the block's records ${h.recordSize}`);
    }
    if (u32(record, 0) !== id.index || redemption.leaf_index !== id.index) {
      throw new Refusal('unit ID', `the record is unit ${u32(record, 0)} and leaf ${redemption.leaf_index}, the ID's index is ${id.index}`);
    }
    if (!sameBytes(record.subarray(4, 9), id.checkCode)) {
      throw new Refusal('unit ID', "the record's check code is not the ID's");
    }
    if (redemption.tree_size !== h.unitCount || id.index >= h.unitCount) {
      throw new Refusal('unit ID', `the proof's tree has ${redemption.tree_size} leaves, the sealed block ${h.unitCount} units`);
    }
    pass('unit ID', `${shown.id}: index, check code, leaf ${id.index} of ${h.unitCount}`);

    const leaf = await leafHash(record);
    const proof = Array.isArray(redemption.inclusion_proof) ? redemption.inclusion_proof : [null];
    const path = proof.map((p) => bytesOfHex(p, 'a proof hash', 'inclusion proof'));
    if (path.some((p) => p.length !== 32)) {
      throw new Refusal('inclusion proof', 'a proof hash is not 32 bytes');
    }
    const root = await rootFromInclusion(leaf, id.index, h.unitCount, path);
    if (!root || !sameBytes(root, h.merkleRoot)) {
      throw new Refusal('inclusion proof', "the unit's record does not hash up its inclusion proof to the block's sealed Merkle root: the record is not the sealed one");
    }
    if (redemption.merkle_root !== hexOf(h.merkleRoot)) {
      throw new Refusal('inclusion proof', "the answer's merkle_root is not the block's sealed root");
    }
    pass('inclusion proof', `RFC 9162: leaf ${hexOf(leaf)} up ${path.length} hashes to the sealed root`);

    const outcome = game.check(record, h, redemption, shown, pass);
    return { ok: true, passed, outcome, facts: { signer: hexOf(key), root: hexOf(h.merkleRoot), leaf: hexOf(leaf), place: `leaf ${id.index} of ${h.unitCount}` } };
  } catch (e) {
    if (e instanceof Refusal) {
      return { ok: false, passed, failed: e };
    }
    throw e;
  }
}
