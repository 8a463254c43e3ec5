import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  Refusal, centsOf, euros, hexOf, parseHeader, parseUnitId, priceLabel, u16,
} from '../format.js';
import { GAMES } from '../games/index.js';
import { sealVerifies } from '../verify.js';
import { bytes, unhex, values } from './fixtures.mjs';

test('euros are shown as the player reads them', () => {
  assert.equal(euros(0), '0,00 €');
  assert.equal(euros(5), '0,05 €');
  assert.equal(euros(100), '1,00 €');
  assert.equal(euros(1001050), '10\u202f010,50 €');
  assert.equal(euros(100000000), '1\u202f000\u202f000,00 €');
  assert.equal(priceLabel(50), '0,50 €');
  assert.equal(priceLabel(100), '1 €');
  assert.equal(priceLabel(200), '2 €');
});

test("the API's euro amounts are read in cents, and only those", () => {
  for (const [text, cents] of [['0', 0], ['0.1', 10], ['0.05', 5], ['3.2', 320], ['12.50', 1250], ['10000', 1000000]]) {
    assert.equal(centsOf(text, 'x', 'prize'), cents, text);
  }
  for (const bad of ['1.234', '01', '-1', '1.', '.5', '1e3', '', 1, null]) {
    assert.throws(() => centsOf(bad, 'x', 'prize'), (e) => e instanceof Refusal && e.check === 'prize', String(bad));
  }
});

test('the unit IDs of fixtures/derive read as their units, in either case', () => {
  for (const slug of Object.keys(GAMES)) {
    const lines = new Map(values(`fixtures/derive/${slug}.txt`));
    let ids = 0;
    for (const [name, id] of lines) {
      const m = /^id ([0-9]+)$/.exec(name);
      if (!m) {
        continue;
      }
      for (const text of [id, id.toLowerCase()]) {
        const read = parseUnitId(text, GAMES);
        assert.equal(read.slug, slug);
        assert.deepEqual([read.emission, read.block, read.index], [1, 1, Number(m[1])]);
        assert.equal(hexOf(read.checkCode), lines.get(`check-code ${m[1]}`));
      }
      ids += 1;
    }
    assert.ok(ids >= 3, slug);
  }
  for (const bad of ['IAT-1-1-0', 'XX-1-1-0-7Z4ZQFW2', 'IAT-1-1-0-7Z4ZQFW', 'IAT-1-1-0-7Z4ZQFWU', 'IAT-x-1-0-7Z4ZQFW2', 'IAT-1-1-4294967296-7Z4ZQFW2']) {
    assert.throws(() => parseUnitId(bad, GAMES), (e) => e instanceof Refusal && e.check === 'unit ID', bad);
  }
});

/** The header and seal of block vector `name` (fixtures/vectors/README.md). */
function block(name) {
  const file = bytes(`fixtures/vectors/${name}.vec`);
  let at = 0;
  while (!(file[at] === 10 && file[at + 1] === 10)) {
    at += 1;
  }
  const body = file.subarray(at + 2);
  const length = Math.min(u16(body, 10), body.length);
  return { header: body.slice(0, length), seal: body.slice(body.length - 64) };
}

const key = unhex(new Map(values('fixtures/vectors/keys.txt')).get('public-key'));

test('a sealed header of fixtures/vectors reads, and its seal verifies with the key of keys.txt', async () => {
  const { header, seal } = block('lot-table');
  assert.ok(await sealVerifies(key, header, seal));
  const h = parseHeader(header, GAMES);
  assert.deepEqual(
    [h.slug, h.emission, h.block, h.priceCents, h.unitCount, h.recordSize, h.params],
    ['ile-au-tresor', 1, 1, 100, 600, GAMES['ile-au-tresor'].facts.recordSize, GAMES['ile-au-tresor'].facts.params],
  );
  assert.equal(hexOf(h.signer), hexOf(key));
  // One bit of the header changed: the seal no longer verifies.
  const changed = header.slice();
  changed[84] ^= 1;
  assert.equal(await sealVerifies(key, changed, seal), false);
});

test('the forged seals of fixtures/vectors do not verify', async () => {
  for (const name of ['bad-seal', 'seal-s-not-reduced', 'wrong-signer']) {
    const { header, seal } = block(name);
    assert.equal(await sealVerifies(key, header, seal), false, name);
  }
});

test('a header of another magic or format version is refused', () => {
  for (const [name, words] of [['bad-magic', /TKTBLOCK/], ['unsupported-version', /au format 2/]]) {
    assert.throws(() => parseHeader(block(name).header, GAMES), (e) => e instanceof Refusal && e.check === 'header' && words.test(e.message), name);
  }
});
