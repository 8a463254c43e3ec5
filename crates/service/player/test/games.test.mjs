// The games' modules against fixtures/player/units.json: the records the
// library made, and what it decodes and plays from each (tests/it/
// player_modules.rs checks the file is the library's).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Refusal, centsOf } from '../format.js';
import { GAMES } from '../games/index.js';
import { apiEuros, json, unhex } from './fixtures.mjs';

const vectors = json('fixtures/player/units.json');

const refusal = (check, words) => (e) => e instanceof Refusal && e.check === check && (!words || words.test(e.message));

/** The header facts a game's replay reads: its parameters and the block's price. */
function headerOf(v) {
  return { params: GAMES[v.game].facts.params, priceCents: v.price_cents };
}

/** A step as the page keeps it: the API's step with amounts in cents. */
function shownStep(s) {
  return {
    roll: s.roll, die: s.die, from: s.from, to: s.to, square: s.square, life: s.life,
    chest: s.chest === undefined ? null : centsOf(s.chest, 'chest', 'play'),
    found: centsOf(s.found, 'found', 'play'),
  };
}

test('every game of the table has the facts and functions the page calls', () => {
  assert.deepEqual(Object.keys(GAMES).sort(), [...new Set(vectors.units.map((v) => v.game))].sort());
  for (const [slug, game] of Object.entries(GAMES)) {
    assert.equal(game.slug, slug);
    for (const f of ['decode', 'replay', 'check', 'start', 'draw', 'step', 'mayStop', 'stop']) {
      assert.equal(typeof game[f], 'function', `${slug}.${f}`);
    }
    for (const v of vectors.units.filter((u) => u.game === slug)) {
      assert.equal(unhex(v.record).length, game.facts.recordSize);
    }
  }
});

test("L'île au trésor: each record decodes to the sale's unit and replays to its lot and prize", () => {
  const game = GAMES['ile-au-tresor'];
  const units = vectors.units.filter((v) => v.game === 'ile-au-tresor');
  assert.ok(units.length >= 20);
  for (const v of units) {
    const record = unhex(v.record);
    assert.deepEqual(game.decode(record), v.unit, `unit ${v.index}`);
    const played = game.replay(record, headerOf(v));
    assert.deepEqual([played.lot, played.lotName, played.prizeCents], [v.lot, v.lot_name, v.prize_cents], `unit ${v.index}`);

    // Checked as shown and paid: the outcome; any other map or prize: refused.
    const shown = { unit: structuredClone(v.unit), thrown: 4 };
    const redemption = { lot: v.lot_name, prize: apiEuros(v.prize_cents) };
    const passed = [];
    const outcome = game.check(record, headerOf(v), redemption, shown, (name) => passed.push(name));
    assert.equal(outcome.prizeCents, v.prize_cents);
    assert.deepEqual(passed, ['rules', 'display', 'prize']);
    assert.ok(v.lot ? outcome.text.startsWith(`Gagné : ${game.lotWords(v.lot_name)}, `) : outcome.text === 'Perdu : aucun lot (article 4.6)', outcome.text);
    assert.ok(!outcome.text.includes(v.lot_name || '-'), `no lot code shown: ${outcome.text}`);

    const map = structuredClone(shown);
    map.unit.chests[0].content = map.unit.chests[0].content === 'chandelier' ? 'vide' : 'chandelier';
    assert.throws(() => game.check(record, headerOf(v), redemption, map, () => {}), refusal('display', /carte affichée/));
    assert.throws(() => game.check(record, headerOf(v), redemption, { ...shown, thrown: 3 }, () => {}), refusal('display'));
    const paid = { ...redemption, prize: apiEuros(v.prize_cents + 1) };
    assert.throws(() => game.check(record, headerOf(v), paid, shown, () => {}), refusal('prize'));
    // The record's own lot field made another: the rules refuse it.
    const claimed = record.slice();
    claimed[9] = v.lot === 9 ? 8 : 9;
    assert.throws(() => game.check(claimed, headerOf(v), redemption, shown, () => {}), refusal('rules'));
  }
});

test('Trésors Ensablés: each record decodes to the board sold and replays every step the API shows', () => {
  const game = GAMES['tresors-ensables'];
  const units = vectors.units.filter((v) => v.game === 'tresors-ensables');
  assert.ok(units.some((v) => v.end === 'gold') && units.some((v) => v.end === 'death'));
  for (const v of units) {
    const record = unhex(v.record);
    assert.deepEqual(game.decode(record).board, v.unit.board, `unit ${v.index}`);
    const played = game.replay(record);
    const steps = v.steps.map(shownStep);
    assert.deepEqual(played.steps.map(shownStepOfReplay), steps, `unit ${v.index}`);
    assert.deepEqual([played.last.end, played.lot, played.prizeCents], [v.end, v.lot, v.prize_cents]);

    // Played to its end, as shown and paid.
    const board = v.unit.board.slice();
    const toEnd = { board, steps, end: v.end, playPrize: v.prize_cents };
    const paid = { lot: v.lot_name, prize: apiEuros(v.prize_cents), stopped_after_rolls: null };
    assert.equal(game.check(record, null, paid, toEnd, () => {}).prizeCents, v.prize_cents);

    // Stopped wherever a stop is allowed: what the library says it pays.
    for (const s of v.stops) {
      const shown = { board, steps: steps.slice(0, s.after), end: 'stopped', playPrize: s.prize_cents };
      const answer = { lot: 'arret', prize: apiEuros(s.prize_cents), stopped_after_rolls: s.after };
      const outcome = game.check(record, null, answer, shown, () => {});
      assert.equal(outcome.prizeCents, s.prize_cents, `unit ${v.index} stopped after ${s.after}`);
      assert.ok(outcome.text.startsWith(`Gagné : « Arrêter » après ${s.after} lancer${s.after === 1 ? '' : 's'}, `), outcome.text);
    }
    // A stop the rules do not allow, a step or square shown otherwise: refused.
    if (v.first_stop === null || v.first_stop > 1) {
      const early = { board, steps: steps.slice(0, 1), end: 'stopped', playPrize: 0 };
      assert.throws(() => game.check(record, null, { lot: 'arret', prize: '0', stopped_after_rolls: 1 }, early, () => {}), refusal('display', /ne permet pas « Arrêter »/));
    }
    const life = { ...toEnd, steps: steps.map((s, i) => (i === 0 ? { ...s, life: s.life % 3 + 1 } : s)) };
    assert.throws(() => game.check(record, null, paid, life, () => {}), refusal('display', /lancer 1 affiché/));
    const square = { ...toEnd, board: board.map((t, i) => (i === 1 ? (t === 'blank' ? 'trap-1' : 'blank') : t)) };
    assert.throws(() => game.check(record, null, paid, square, () => {}), refusal('display', /plateau affiché/));
    assert.throws(() => game.check(record, null, { ...paid, prize: '10000' }, toEnd, () => {}), refusal('prize'));
  }
});

/** A replayed step in the page's shown form. */
function shownStepOfReplay(s) {
  return { roll: s.roll, die: s.die, from: s.from, to: s.to, square: s.square, life: s.life, chest: s.chest, found: s.found };
}

test('the records the library refuses, the modules refuse by the rules', () => {
  assert.ok(vectors.refused.length >= 4);
  for (const v of vectors.refused) {
    const game = GAMES[v.game];
    assert.throws(() => game.replay(unhex(v.record), headerOf(v)), refusal('rules'), `${v.game}: ${v.why}`);
  }
});
