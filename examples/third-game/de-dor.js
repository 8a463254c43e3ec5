// « Dé d'or » on the reference player page (de_dor.rs has the rules): four
// dice shown one a step, « Arrêter » once the first is shown. The server
// serves this module at /player/games/de-dor.js (GameRules::page_module);
// the page imports it from GET /v1/games's `module`, with no edit to the
// page.

import { Failure, Refusal, centsOf, euros, prefixOf } from '../format.js';
import { $, el, setPhase } from '../ui.js';

export const slug = 'de-dor';

/** The game's facts the checks need (de_dor.rs: code, prefix, record). */
export const facts = { code: 99, prefix: 'DD', rulesVersion: 1, recordSize: 18, params: [4, 0] };

const DICE = 4;
const CENTS_PER_PIP = 10;
const LOT_END = 1;

/** The record's payload: four dice, 1 to 6. */
export function decode(record) {
  const dice = Array.from(record.slice(14));
  if (dice.length !== DICE || dice.some((d) => d < 1 || d > 6)) {
    throw new Refusal('rules', `the payload is not four dice: ${dice.join(', ')}`);
  }
  return { dice };
}

/** Every step of the dice played until a 1 or the fourth die. */
export function play(unit) {
  const steps = [];
  let found = 0;
  for (const [i, die] of unit.dice.entries()) {
    found += die * CENTS_PER_PIP;
    const end = die === 1 ? 'lost' : i === DICE - 1 ? 'end' : null;
    steps.push({ die, found, end });
    if (end) {
      break;
    }
  }
  return steps;
}

/** The record replayed to its end: the lot and prize its prefix must hold. */
export function replay(record) {
  const unit = decode(record);
  const steps = play(unit);
  const last = steps[steps.length - 1];
  const toEnd = last.end === 'end' ? { lot: LOT_END, prizeCents: last.found } : { lot: 0, prizeCents: 0 };
  return { unit, steps, last, ...toEnd };
}

/** The record against what the page showed and what was paid. */
export function check(record, header, redemption, shown, pass) {
  const { unit, steps, ...toEnd } = replay(record);
  const prefix = prefixOf(record);
  if (prefix.lot !== toEnd.lot || prefix.prizeCents !== toEnd.prizeCents) {
    throw new Refusal('rules', `the record claims lot ${prefix.lot} (${euros(prefix.prizeCents)}); its dice give lot ${toEnd.lot} (${euros(toEnd.prizeCents)})`);
  }
  pass('rules', `dés ${unit.dice.join(', ')}`);
  shown.dice.forEach((d, i) => {
    if (d !== unit.dice[i]) {
      throw new Refusal('display', `die ${i + 1} shown as ${d}, sealed as ${unit.dice[i]}`);
    }
  });
  const n = shown.dice.length;
  let prizeCents;
  let lot;
  if (shown.end === 'stopped') {
    prizeCents = steps[n - 1].found;
    lot = 'arret';
  } else {
    if (n !== steps.length || steps[n - 1].end !== shown.end) {
      throw new Refusal('display', `the play shown ended (${shown.end}) after ${n} dice; the sealed record ends after ${steps.length}`);
    }
    prizeCents = toEnd.prizeCents;
    lot = toEnd.lot ? 'fin' : null;
  }
  pass('display', `les ${n} dés montrés sont ceux du ticket scellé`);
  const answered = centsOf(redemption.prize, 'the prize answered', 'prize');
  if (answered !== prizeCents || shown.playPrize !== prizeCents || redemption.lot !== lot) {
    throw new Refusal('prize', `the redemption answers a lot or prize other than the sealed record's played as shown (${lot || 'no lot'})`);
  }
  pass('prize', `${lot || 'aucun lot'} : ${euros(prizeCents)}`);
  const text = prizeCents > 0 ? `Gagné : ${euros(prizeCents)}` : 'Perdu : aucun gain';
  return { prizeCents, text };
}

/** Four empty dice. */
export function start(shown, unit) {
  if (unit.dice !== DICE) {
    throw new Failure('the sale did not give four dice');
  }
  Object.assign(shown, { dice: [], found: 0 });
  $('board').className = 'de-dor';
  for (let i = 0; i < DICE; i += 1) {
    const die = el('div', 'cell');
    die.id = `die-${i}`;
    die.append(el('span', 'label', '?'));
    $('board').append(die);
  }
  $('roll').textContent = 'Lancer';
  draw(shown);
}

/** The dice shown and the gains. */
export function draw(shown) {
  shown.dice.forEach((d, i) => {
    $(`die-${i}`).querySelector('.label').textContent = String(d);
  });
  $('found').textContent = `Gains : ${euros(shown.found)}`;
  $('rolls').textContent = `Dés : ${shown.dice.length}/${DICE}`;
}

function took(shown, view, steps, expected) {
  if (view.kind !== 'play' || view.id !== shown.id || view.rolls !== steps
    || !Array.isArray(view.steps) || view.steps.length !== expected) {
    throw new Failure(`the play's answer is not step ${steps} of ${shown.id}`);
  }
  for (const s of view.steps) {
    shown.dice.push(s.die);
    $('steps').append(el('li', '', `Dé ${shown.dice.length} : ${s.die}`));
  }
  shown.found = view.gains_cents;
  shown.mayStop = view.may_stop === true;
  shown.over = view.over === true;
  if (shown.over) {
    shown.end = view.end;
    shown.playPrize = centsOf(view.prize, "the play's prize", 'play');
    setPhase('ended');
  }
  draw(shown);
}

function route(shown, which) {
  const template = shown.info.play && shown.info.play[which];
  if (typeof template !== 'string') {
    throw new Failure(`GET /v1/games gives no ${which} route for ${slug}`);
  }
  return template.replace('{id}', encodeURIComponent(shown.id));
}

/** « Lancer »: the next die. */
export async function step(shown, request) {
  const n = shown.dice.length + 1;
  took(shown, await request('POST', route(shown, 'step'), { step: n }), n, 1);
}

export function mayStop(shown) {
  return shown.mayStop === true;
}

/** « Arrêter ». */
export async function stop(shown, request) {
  took(shown, await request('POST', route(shown, 'stop')), shown.dice.length, 0);
}
