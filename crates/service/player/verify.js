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
      throw new Refusal('signer', "cette page ne détient pas de clé publique de l'émetteur pour vérifier les sceaux");
    }
    const key = bytesOfHex(keyHex, 'la clé épinglée', 'signer');
    const header = bytesOfHex(sealed.header, "l'en-tête du bloc", 'seal');
    const seal = bytesOfHex(sealed.seal, "le sceau du bloc", 'seal');
    if (!(await sealVerifies(key, header, seal))) {
      throw new Refusal('seal', "le sceau du bloc ne se vérifie pas avec la clé de l'émetteur épinglée dans cette page : son en-tête n'est pas celui de l'émetteur");
    }
    pass('seal', "Ed25519 sur les octets de l'en-tête, avec la clé épinglée de l'émetteur");
    const h = parseHeader(header, games);
    if (!sameBytes(h.signer, key) || sealed.signer !== hexOf(key)) {
      throw new Refusal('signer', "le signataire de l'en-tête n'est pas la clé épinglée de l'émetteur");
    }
    pass('signer', hexOf(key));

    const id = parseUnitId(shown.id, games);
    const game = games[id.slug];
    if (h.slug !== id.slug || h.emission !== id.emission || h.block !== id.block
      || sealed.game !== id.slug || sealed.emission !== id.emission || sealed.block !== id.block) {
      throw new Refusal('header', `l'en-tête scellé est celui de ${h.slug} émission ${h.emission} bloc ${h.block}, l'identifiant du ticket nomme ${id.slug} émission ${id.emission} bloc ${id.block}`);
    }
    if (h.recordSize !== game.facts.recordSize || h.params.join() !== game.facts.params.join()) {
      throw new Refusal('header', `la taille d'enregistrement ${h.recordSize} ou les paramètres ${h.params.join(', ')} de l'en-tête ne sont pas ceux du jeu`);
    }
    const paid = centsOf(shown.sale.price, 'le prix payé', 'header');
    if (h.priceCents !== paid) {
      throw new Refusal('header', `le ticket a été vendu ${euros(paid)}, le prix scellé de son bloc est ${euros(h.priceCents)}`);
    }
    pass('header', `${game.name || h.slug}, émission ${h.emission}, bloc ${h.block}, ${euros(h.priceCents)}, ${h.unitCount} tickets`);

    const record = bytesOfHex(redemption.record, "l'enregistrement", 'unit ID');
    if (!['redemption', 'check'].includes(redemption.kind) || redemption.id !== shown.id || redemption.game !== id.slug
      || redemption.emission !== id.emission || redemption.block !== id.block || redemption.index !== id.index) {
      throw new Refusal('unit ID', `la réponse porte sur ${redemption.id}, pas sur ${shown.id}`);
    }
    if (record.length !== h.recordSize) {
      throw new Refusal('unit ID', `l'enregistrement fait ${record.length} octets, ceux du bloc ${h.recordSize}`);
    }
    if (u32(record, 0) !== id.index || redemption.leaf_index !== id.index) {
      throw new Refusal('unit ID', `l'enregistrement est le ticket ${u32(record, 0)} et la feuille ${redemption.leaf_index}, l'identifiant dit ${id.index}`);
    }
    if (!sameBytes(record.subarray(4, 9), id.checkCode)) {
      throw new Refusal('unit ID', "le code de contrôle de l'enregistrement n'est pas celui de l'identifiant");
    }
    if (redemption.tree_size !== h.unitCount || id.index >= h.unitCount) {
      throw new Refusal('unit ID', `l'arbre de la preuve a ${redemption.tree_size} feuilles, le bloc scellé ${h.unitCount} tickets`);
    }
    pass('unit ID', `${shown.id} : rang, code de contrôle, feuille ${id.index} sur ${h.unitCount}`);

    const leaf = await leafHash(record);
    const proof = Array.isArray(redemption.inclusion_proof) ? redemption.inclusion_proof : [null];
    const path = proof.map((p) => bytesOfHex(p, 'une empreinte de la preuve', 'inclusion proof'));
    if (path.some((p) => p.length !== 32)) {
      throw new Refusal('inclusion proof', 'une empreinte de la preuve ne fait pas 32 octets');
    }
    const root = await rootFromInclusion(leaf, id.index, h.unitCount, path);
    if (!root || !sameBytes(root, h.merkleRoot)) {
      throw new Refusal('inclusion proof', "l'enregistrement du ticket ne remonte pas sa preuve d'inclusion jusqu'à la racine de Merkle scellée du bloc : ce n'est pas l'enregistrement scellé");
    }
    if (redemption.merkle_root !== hexOf(h.merkleRoot)) {
      throw new Refusal('inclusion proof', "la racine de Merkle de la réponse n'est pas la racine scellée du bloc");
    }
    pass('inclusion proof', `RFC 9162 : la feuille ${hexOf(leaf)} remonte ${path.length} empreintes jusqu'à la racine scellée`);

    const outcome = game.check(record, h, redemption, shown, pass);
    return { ok: true, passed, outcome, facts: { signer: hexOf(key), root: hexOf(h.merkleRoot), leaf: hexOf(leaf), place: `feuille ${id.index} sur ${h.unitCount}` } };
  } catch (e) {
    if (e instanceof Refusal) {
      return { ok: false, passed, failed: e };
    }
    throw e;
  }
}
