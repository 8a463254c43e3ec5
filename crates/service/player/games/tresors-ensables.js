// Trésors Ensablés (GAMES.md §Trésors Ensablés; FORMAT.md §Trésors
// Ensablés payload): the board sold, one roll at a time asked of the API,
// « Arrêter »; its record decoded and replayed from square 0.

import { Failure, Refusal, centsOf, euros, prefixOf } from '../format.js';
import { $, clearPion, el, setPhase } from '../ui.js';

export const slug = 'tresors-ensables';

/** The game's name, as the regulation writes it. */
export const name = 'Trésors Ensablés';

/** « Arrêter » once a gain is found (3.2.6). */
export const hasStop = true;

/** "1 lancer", "3 lancers". */
const lancers = (n) => (n === 1 ? '1 lancer' : `${n} lancers`);

/** The game's facts the checks need (FORMAT.md §Header, games table). */
export const facts = { code: 2, prefix: 'TE', rulesVersion: 1, recordSize: 80, params: [60, 3] };

const SQUARES = ['start', 'blank', 'life+1', 'life+2', 'trap-1', 'trap-2', 'trap-3', 'bronze', 'silver', 'gold'];
const LIFE_CHANGE = { blank: 0, 'life+1': 1, 'life+2': 2, 'trap-1': -1, 'trap-2': -2, 'trap-3': -3 };
const CHEST_CENTS = {
  bronze: [10, 20, 50],
  silver: [50, 100, 200],
  gold: [100, 200, 500, 1000, 10000, 1000000],
};
const GOLD_SQUARE = 60;
const FULL_LIFE = 3;

/** Nibble `k` of `bytes`, the first in the high half of each byte. */
function nibble(bytes, k) {
  const b = bytes[k >> 1];
  return k % 2 === 0 ? b >> 4 : b & 15;
}

/** The record's payload: the board, the chests' values, the dice. */
export function decode(record) {
  const payload = record.slice(14);
  const board = ['start'];
  for (let s = 1; s <= GOLD_SQUARE; s += 1) {
    const token = SQUARES[nibble(payload, s - 1)];
    const fixed = s === GOLD_SQUARE ? 'gold' : s % 12 === 6 ? 'bronze' : s % 12 === 0 ? 'silver' : null;
    if (!token || token === 'start' || (fixed !== null) !== ['bronze', 'silver', 'gold'].includes(token)
      || (fixed !== null && token !== fixed)) {
      throw new Refusal('rules', `la case ${s} porte ${token ? SQUARE_LABEL[token] || token : 'un code inconnu'}`);
    }
    board.push(token);
  }
  const chests = [];
  for (let k = 1; k <= 10; k += 1) {
    const cents = CHEST_CENTS[board[6 * k]][nibble(payload.subarray(30), k - 1)];
    if (cents === undefined) {
      throw new Refusal('rules', `le coffre ${k} (case ${6 * k}) a un code de valeur hors de sa table`);
    }
    chests.push(cents);
  }
  const rolls = payload[35];
  const dice = [];
  let position = 0;
  for (let t = 1; t <= GOLD_SQUARE; t += 1) {
    const die = nibble(payload.subarray(36), t - 1);
    if (t <= rolls ? die < 1 || die > 6 || position >= GOLD_SQUARE : die !== 0) {
      throw new Refusal('rules', `le dé ${t} vaut ${die}, la bande en compte ${lancers(rolls)}`);
    }
    if (t <= rolls) {
      dice.push(die);
      position = Math.min(position + die, GOLD_SQUARE);
    }
  }
  if (rolls < 10 || rolls > 60 || position !== GOLD_SQUARE) {
    throw new Refusal('rules', `la bande de dés (${lancers(rolls)}) ne finit pas sur la case 60`);
  }
  return { board, chests, dice };
}

/** Every roll of the decoded `unit` played from square 0 until it ends. */
export function play(unit) {
  const steps = [];
  let position = 0;
  let life = FULL_LIFE;
  let found = 0;
  let opened = 0;
  for (const [i, die] of unit.dice.entries()) {
    const from = position;
    position = Math.min(from + die, GOLD_SQUARE);
    const square = unit.board[position];
    let chest = null;
    let end = null;
    if (CHEST_CENTS[square]) {
      chest = unit.chests[position / 6 - 1];
      found += chest;
      opened += 1;
      end = square === 'gold' ? 'gold' : null;
    } else {
      life = Math.max(0, Math.min(FULL_LIFE, life + LIFE_CHANGE[square]));
      end = life === 0 ? 'death' : null;
    }
    steps.push({ roll: i + 1, die, from, to: position, square, life, chest, found, opened, end });
    if (end) {
      break;
    }
  }
  return steps;
}

/**
 * The record replayed to its end: the unit, every roll, and the lot and
 * prize that end gives (what the record's prefix must hold).
 */
export function replay(record) {
  const unit = decode(record);
  const steps = play(unit);
  const last = steps[steps.length - 1];
  const toEnd = last.end === 'gold' ? { lot: 1, prizeCents: last.found } : { lot: 0, prizeCents: 0 };
  return { unit, steps, last, ...toEnd };
}

/**
 * The record replayed, compared with what the page showed (`shown.board`,
 * `shown.steps`, `shown.end`, `shown.playPrize`) and what the redemption
 * answered; each check passed is given to `pass`. The outcome to show,
 * or a Refusal.
 */
export function check(record, header, redemption, shown, pass) {
  const { unit, steps, last, ...toEnd } = replay(record);
  const prefix = prefixOf(record);
  if (prefix.lot !== toEnd.lot || prefix.prizeCents !== toEnd.prizeCents) {
    throw new Refusal('rules', `l'enregistrement annonce le lot ${prefix.lot} joué jusqu'au bout ; ses dés donnent le lot ${toEnd.lot} (${euros(toEnd.prizeCents)})`);
  }
  pass('rules', `${unit.dice.length} dés sur le plateau scellé ; joué jusqu'au bout : ${last.end === 'gold' ? `coffre or, ${euros(last.found)}` : `plus de vie au lancer ${last.roll}`}`);

  const differs = [];
  shown.board.forEach((token, s) => {
    if (token !== unit.board[s]) {
      differs.push(`case ${s} affichée ${SQUARE_LABEL[token] || token || 'vierge'}, scellée ${SQUARE_LABEL[unit.board[s]] || 'vierge'}`);
    }
  });
  if (differs.length) {
    throw new Refusal('display', `le plateau affiché n'est pas celui du ticket scellé : ${differs.join(' ; ')}`);
  }
  const fields = ['roll', 'die', 'from', 'to', 'square', 'life', 'chest', 'found'];
  shown.steps.forEach((s, i) => {
    const sealed = steps[i];
    const wrong = sealed ? fields.filter((f) => s[f] !== sealed[f]) : ['roll'];
    if (wrong.length) {
      const was = sealed ? `dé ${sealed.die} → case ${sealed.to}, vie ${sealed.life}, gains ${euros(sealed.found)}` : 'pas de tel lancer';
      throw new Refusal('display', `le lancer ${i + 1} affiché (dé ${s.die} → case ${s.to}, vie ${s.life}, gains ${euros(s.found)}) n'est pas celui du ticket scellé (${was})`);
    }
  });
  const rolls = shown.steps.length;
  const at = steps[rolls - 1];
  let prizeCents;
  let lot;
  if (shown.end === 'stopped') {
    if (!at || at.end || at.opened === 0) {
      throw new Refusal('display', `la partie affichée s'arrête après ${lancers(rolls)}, où le ticket scellé ne permet pas « Arrêter »`);
    }
    prizeCents = at.found;
    lot = 'arret';
  } else {
    if (!at || at.end !== shown.end || rolls !== steps.length) {
      throw new Refusal('display', `la partie affichée finit après ${lancers(rolls)} ; le ticket scellé finit après ${lancers(steps.length)}`);
    }
    prizeCents = at.end === 'gold' ? at.found : 0;
    lot = at.end === 'gold' ? 'coffre-or' : null;
  }
  pass('display', `le plateau et ${rolls === 1 ? 'le lancer affiché sont ceux' : `les ${rolls} lancers affichés sont ceux`} du ticket scellé`);

  const answered = centsOf(redemption.prize, 'le gain annoncé', 'prize');
  const stopped = shown.end === 'stopped' ? rolls : null;
  if (answered !== prizeCents || shown.playPrize !== prizeCents || redemption.lot !== lot
    || redemption.stopped_after_rolls !== stopped) {
    throw new Refusal('prize', `la réponse annonce un autre lot, arrêt ou gain que le ticket scellé joué comme affiché`);
  }
  const how = { arret: '« Arrêter »', 'coffre-or': 'coffre or atteint' }[lot] || 'aucun gain';
  pass('prize', `${how} : ${euros(prizeCents)}`);
  const text = {
    stopped: `Gagné : « Arrêter » après ${lancers(rolls)}, ${euros(prizeCents)}`,
    gold: `Gagné : coffre or atteint en ${lancers(rolls)}, ${euros(prizeCents)}`,
    death: `Perdu : plus de points de vie au lancer ${rolls}, aucun gain (3.2.8)`,
  }[shown.end];
  return { prizeCents, text };
}

// --- The page: the board, one roll at a time, « Arrêter »

const SQUARE_LABEL = {
  start: 'Départ', blank: '', 'life+1': 'vie +1', 'life+2': 'vie +2', 'trap-1': 'piège −1',
  'trap-2': 'piège −2', 'trap-3': 'piège −3', bronze: 'coffre bronze', silver: 'coffre argent', gold: 'coffre or',
};
const SQUARE_CLASS = {
  'life+1': 'life', 'life+2': 'life', 'trap-1': 'trap', 'trap-2': 'trap', 'trap-3': 'trap',
  bronze: 'bronze', silver: 'silver', gold: 'gold', start: 'start',
};

/** Draws the board the sale gave (`unit`: its 61 squares and life). */
export function start(shown, unit) {
  if (!Array.isArray(unit.board) || unit.board.length !== GOLD_SQUARE + 1) {
    throw new Failure("La vente n'a pas donné les 61 cases du plateau ; réessayez.");
  }
  Object.assign(shown, { board: unit.board.slice(), steps: [], life: unit.life, found: 0, position: 0 });
  const board = $('board');
  board.className = 'tresors';
  unit.board.forEach((token, s) => {
    const cell = el('div', `cell ${SQUARE_CLASS[token] || ''}`);
    cell.id = `square-${s}`;
    cell.append(el('span', 'number', String(s)), el('span', 'label', SQUARE_LABEL[token] ?? token));
    board.append(cell);
  });
  $('roll').textContent = 'Lancer';
  draw(shown);
}

/** The pion, the life gauge, the gains and the rolls, as the play stands. */
export function draw(shown) {
  clearPion();
  $(`square-${shown.position}`).classList.add('pion');
  const hearts = [];
  for (let i = 0; i < FULL_LIFE; i += 1) {
    hearts.push(el('span', i < shown.life ? 'heart' : 'heart empty', '♥'));
  }
  $('life').replaceChildren('Vie ', ...hearts, ` ${shown.life}/${FULL_LIFE}`);
  $('found').textContent = `Gains trouvés : ${euros(shown.found)}`;
  $('rolls').textContent = `Lancers : ${shown.steps.length}`;
}

/** Takes a play's answer (a roll's or the stop's) into what is shown. */
function tookPlay(shown, view, rolls, stepsExpected) {
  if (view.kind !== 'play' || view.id !== shown.id || view.rolls !== rolls
    || !Array.isArray(view.steps) || view.steps.length !== stepsExpected) {
    throw new Failure(`Le service n'a pas donné le lancer ${rolls} de ce ticket ; rechargez la page.`);
  }
  for (const s of view.steps) {
    const step = {
      roll: s.roll, die: s.die, from: s.from, to: s.to, square: s.square, life: s.life,
      chest: s.chest === undefined ? null : centsOf(s.chest, 'a chest', 'play'),
      found: centsOf(s.found, 'the gains found', 'play'),
    };
    shown.steps.push(step);
    shown.position = step.to;
    const cell = $(`square-${step.to}`);
    if (cell) {
      cell.classList.add('landed');
      if (step.chest !== null) {
        cell.classList.add('opened');
        cell.querySelector('.label').textContent = `${SQUARE_LABEL[step.square]} ${euros(step.chest)}`;
      }
    }
    const chest = step.chest === null ? '' : `, coffre ${euros(step.chest)}`;
    $('steps').append(el('li', '', `Lancer ${step.roll} : dé ${step.die} → case ${step.to} (${SQUARE_LABEL[step.square] || 'vide'}), vie ${step.life}${chest}, gains ${euros(step.found)}`));
  }
  shown.life = view.life;
  shown.found = centsOf(view.found, 'the gains found', 'play');
  shown.mayStop = view.may_stop === true;
  shown.over = view.over === true;
  if (shown.over) {
    shown.end = view.end;
    shown.playPrize = centsOf(view.prize, "the play's prize", 'play');
    const how = { stopped: 'arrêtée', death: 'perdue : plus de points de vie', gold: 'terminée : coffre or atteint' }[view.end] || 'terminée';
    const next = lost(shown) ? 'Vérification du résultat…' : 'Encaissez pour voir le résultat vérifié.';
    $('steps').append(el('li', '', `Partie ${how} après ${lancers(shown.steps.length)}. ${next}`));
    setPhase('ended');
  }
  draw(shown);
}

/** The route of the play of `shown` named `which` in GET /v1/games's `play`. */
function route(shown, which) {
  const template = shown.info.play && shown.info.play[which];
  if (typeof template !== 'string') {
    throw new Failure("Le service ne dit pas comment jouer ce jeu ; rechargez la page.");
  }
  return template.replace('{id}', encodeURIComponent(shown.id));
}

/** « Lancer »: the next roll, asked of the API. */
export async function step(shown, request) {
  const roll = shown.steps.length + 1;
  const view = await request('POST', route(shown, 'step'), { roll });
  tookPlay(shown, view, roll, 1);
}

/** Whether the play is over and wins nothing: verified without cashing. */
export function lost(shown) {
  return shown.over === true && shown.playPrize === 0;
}

/** Whether « Arrêter » is allowed, as the last answer said. */
export function mayStop(shown) {
  return shown.mayStop === true;
}

/** « Arrêter ». */
export async function stop(shown, request) {
  const view = await request('POST', route(shown, 'stop'));
  tookPlay(shown, view, shown.steps.length, 0);
}
