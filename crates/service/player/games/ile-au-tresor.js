// L'île au trésor (GAMES.md §L'île au trésor; FORMAT.md §Île au trésor
// payload, §Lots): the map and its four throws, shown whole by the sale
// and revealed here one per click; its record decoded and replayed.

import { Failure, Refusal, centsOf, euros, prefixOf } from '../format.js';
import { $, clearPion, el, setPhase } from '../ui.js';

export const slug = 'ile-au-tresor';

/** The game's name, as the regulation writes it. */
export const name = "L'île au trésor";

/** Article 4.4: four throws, always played; no « Arrêter ». */
export const hasStop = false;

/** The game's facts the checks need (FORMAT.md §Header, games table). */
export const facts = { code: 1, prefix: 'IAT', rulesVersion: 1, recordSize: 53, params: [8, 8] };

const DIRECTIONS = ['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'];
/** The boussole's letters as a French player reads them. */
const BOUSSOLE = { N: 'N', NE: 'NE', E: 'E', SE: 'SE', S: 'S', SW: 'SO', W: 'O', NW: 'NO' };
const STEP = { N: [0, -1], NE: [1, -1], E: [1, 0], SE: [1, 1], S: [0, 1], SW: [-1, 1], W: [-1, 0], NW: [-1, -1] };
const CONTENTS = ['vide', 'chandelier', 'singe', 'saphir', 'tete_de_mort'];
const CONTENT_LABEL = { vide: '✕ vide', chandelier: 'chandelier', singe: 'singe', saphir: 'saphir', tete_de_mort: 'tête de mort' };
/** Lot codes 1 … 9: the rows of article 4.5. */
export const LOTS = [null, 'chandelier-3', 'singe-3', 'saphir-3', 'tete_de_mort-3', 'chandelier-2', 'singe-2', 'saphir-2', 'tete_de_mort-2', 'chandelier-1'];
/** The regulation's amounts (cents) of lots 0 … 9 at each price (cents). */
export const AMOUNTS = {
  50: [0, 500000, 25000, 7500, 2500, 1250, 500, 150, 100, 50],
  100: [0, 1000000, 50000, 15000, 5000, 2500, 1000, 300, 200, 100],
  200: [0, 2000000, 100000, 30000, 10000, 5000, 2000, 600, 400, 200],
};
const THROWS = 4;

/** A lot in the player's words: "tete_de_mort-2" → "2 têtes de mort". */
export function lotWords(lot) {
  const [symbol, n] = lot.split('-');
  const plural = { chandelier: 'chandeliers', singe: 'singes', saphir: 'saphirs', tete_de_mort: 'têtes de mort' };
  return n === '1' ? `1 ${CONTENT_LABEL[symbol]}` : `${n} ${plural[symbol]}`;
}

/** The record's payload as the sale's `unit` writes it. */
export function decode(record) {
  const chests = [];
  for (let k = 0; k < 9; k += 1) {
    const content = CONTENTS[record[20 + 3 * k]];
    if (!content) {
      throw new Refusal('rules', `le coffre ${k} a le code de contenu ${record[20 + 3 * k]}`);
    }
    chests.push({ x: record[18 + 3 * k], y: record[19 + 3 * k], content });
  }
  const throws = [];
  for (let t = 0; t < THROWS; t += 1) {
    const direction = DIRECTIONS[record[45 + 2 * t]];
    const steps = record[46 + 2 * t];
    if (!direction || steps < 1 || steps > 7) {
      throw new Refusal('rules', `le lancer ${t + 1} n'est pas une direction et un compteur de 1 à 7`);
    }
    throws.push({ direction, steps });
  }
  return { map: { width: record[14], height: record[15] }, start: { x: record[16], y: record[17] }, chests, throws };
}

/** The four throws played from the start: the landings, or why not. */
function landingsOf(unit) {
  const { width, height } = unit.map;
  const onMap = (x, y) => x >= 0 && y >= 0 && x < width && y < height;
  const seen = new Set([`${unit.start.x},${unit.start.y}`]);
  const landings = [];
  let { x, y } = unit.start;
  unit.throws.forEach((t, i) => {
    const [dx, dy] = STEP[t.direction] || [0, 0];
    x += dx * t.steps;
    y += dy * t.steps;
    const chest = unit.chests.find((c) => c.x === x && c.y === y);
    if (!onMap(x, y) || seen.has(`${x},${y}`) || !chest) {
      throw new Refusal('rules', `le lancer ${i + 1} (${BOUSSOLE[t.direction] || t.direction} ${t.steps}) ne mène pas sur un coffre de la carte pas encore découvert`);
    }
    seen.add(`${x},${y}`);
    landings.push({ x, y, content: chest.content });
  });
  return landings;
}

/** Article 4.5: the lot code the uncovered contents win (0: none). */
function lotOf(uncovered) {
  const wins = [];
  for (const symbol of ['chandelier', 'singe', 'saphir', 'tete_de_mort']) {
    const n = uncovered.filter((c) => c === symbol).length;
    if (n === 4) {
      throw new Refusal('rules', `quatre « ${CONTENT_LABEL[symbol]} » découverts : ce n'est pas un ticket valable`);
    }
    if (n >= (symbol === 'chandelier' ? 1 : 2)) {
      wins.push(`${symbol}-${n}`);
    }
  }
  if (wins.length > 1) {
    throw new Refusal('rules', `plusieurs groupes gagnants (${wins.map(lotWords).join(', ')}) : ce n'est pas un ticket valable`);
  }
  return wins.length ? LOTS.indexOf(wins[0]) : 0;
}

/**
 * The record replayed under `header` (its `params` and `priceCents`): its
 * map, landings, lot and amount at the block's price.
 */
export function replay(record, header) {
  const unit = decode(record);
  if (unit.map.width !== header.params[0] || unit.map.height !== header.params[1]) {
    throw new Refusal('rules', `la carte de l'enregistrement fait ${unit.map.width} × ${unit.map.height}, celle de l'en-tête ${header.params.join(' × ')}`);
  }
  const squares = new Set(unit.chests.map((c) => `${c.x},${c.y}`));
  if (squares.size !== 9 || squares.has(`${unit.start.x},${unit.start.y}`)
    || unit.chests.some((c) => c.x >= unit.map.width || c.y >= unit.map.height)) {
    throw new Refusal('rules', 'les neuf coffres ne sont pas sur neuf cases distinctes de la carte, hors du départ');
  }
  const landings = landingsOf(unit);
  const lot = lotOf(landings.map((l) => l.content));
  const amounts = AMOUNTS[header.priceCents];
  if (!amounts) {
    throw new Refusal('rules', `L'île au trésor n'est pas vendue à ${euros(header.priceCents)}`);
  }
  return { unit, landings, lot, lotName: LOTS[lot], prizeCents: amounts[lot] };
}

/**
 * The record replayed, compared with what the page showed (`shown.unit`,
 * `shown.thrown`) and what the redemption answered; each check passed is
 * given to `pass`. The outcome to show, or a Refusal.
 */
export function check(record, header, redemption, shown, pass) {
  const played = replay(record, header);
  const prefix = prefixOf(record);
  if (prefix.lot !== played.lot || prefix.prizeCents !== played.prizeCents) {
    throw new Refusal('rules', `l'enregistrement annonce le lot ${prefix.lot} ; ses lancers gagnent le lot ${played.lot} (${euros(played.prizeCents)})`);
  }
  const won = played.lotName ? `${lotWords(played.lotName)} (article 4.5)` : 'aucun lot (article 4.6)';
  pass('rules', `les quatre lancers découvrent ${played.landings.map((l) => CONTENT_LABEL[l.content]).join(', ')} : ${won}`);

  const seen = shown.unit;
  const differs = [];
  if (seen.start.x !== played.unit.start.x || seen.start.y !== played.unit.start.y) {
    differs.push(`le départ affiché (${seen.start.x}, ${seen.start.y}) est (${played.unit.start.x}, ${played.unit.start.y}) dans le scellé`);
  }
  played.unit.chests.forEach((c, k) => {
    const s = seen.chests[k] || {};
    if (s.x !== c.x || s.y !== c.y || s.content !== c.content) {
      differs.push(`coffre ${k + 1} affiché en (${s.x}, ${s.y}) avec ${CONTENT_LABEL[s.content] || s.content}, scellé en (${c.x}, ${c.y}) avec ${CONTENT_LABEL[c.content]}`);
    }
  });
  played.unit.throws.forEach((t, i) => {
    const s = seen.throws[i] || {};
    if (s.direction !== t.direction || s.steps !== t.steps) {
      differs.push(`lancer ${i + 1} affiché ${BOUSSOLE[s.direction] || s.direction} ${s.steps}, scellé ${BOUSSOLE[t.direction]} ${t.steps}`);
    }
  });
  if (seen.chests.length !== 9 || seen.throws.length !== THROWS || shown.thrown !== THROWS) {
    differs.push("la carte affichée n'a pas neuf coffres et quatre lancers joués");
  }
  if (differs.length) {
    throw new Refusal('display', `la carte affichée n'est pas celle du ticket scellé : ${differs.join(' ; ')}`);
  }
  pass('display', 'la carte, ses coffres et les quatre lancers affichés sont ceux du ticket scellé');

  const answered = centsOf(redemption.prize, 'le gain annoncé', 'prize');
  if (redemption.lot !== played.lotName || answered !== played.prizeCents) {
    throw new Refusal('prize', `la réponse annonce un autre lot ou un autre gain que le ticket scellé (${played.lotName ? lotWords(played.lotName) : 'aucun lot'})`);
  }
  pass('prize', `${played.lotName ? lotWords(played.lotName) : 'aucun lot'} : ${euros(played.prizeCents)}`);
  return {
    prizeCents: played.prizeCents,
    text: played.lot ? `Gagné : ${lotWords(played.lotName)}, ${euros(played.prizeCents)}` : 'Perdu : aucun lot (article 4.6)',
  };
}

// --- The page: the map, the four throws revealed one per click

/** Draws the unit the sale gave (`unit`: its whole map and throws). */
export function start(shown, unit) {
  if (!unit || !unit.map || !Array.isArray(unit.chests) || !Array.isArray(unit.throws) || !unit.start) {
    throw new Failure("La vente n'a pas donné la carte du ticket ; réessayez.");
  }
  Object.assign(shown, { unit, thrown: 0 });
  const board = $('board');
  board.className = 'ile';
  for (let y = 0; y < unit.map.height; y += 1) {
    for (let x = 0; x < unit.map.width; x += 1) {
      const cell = el('div', 'cell');
      cell.id = `square-${x}-${y}`;
      cell.append(el('span', 'number', `${x},${y}`), el('span', 'label', ''));
      board.append(cell);
    }
  }
  const first = $(`square-${unit.start.x}-${unit.start.y}`);
  if (first) {
    first.classList.add('start', 'pion');
    first.querySelector('.label').textContent = 'Départ';
  }
  for (const c of unit.chests) {
    const cell = $(`square-${c.x}-${c.y}`);
    if (cell) {
      cell.classList.add('closed');
      cell.querySelector('.label').textContent = 'coffre';
    }
  }
  draw(shown);
}

/** The « Lancers restants » indicator (article 4.1: red dots), as the play stands. */
export function draw(shown) {
  $('roll').textContent = 'Lancer';
  const left = THROWS - shown.thrown;
  $('rolls').replaceChildren(
    'Lancers restants : ',
    ...Array.from({ length: THROWS }, (_, i) => el('span', i < left ? 'dot' : 'dot spent', '●')),
  );
  $('rolls').dataset.left = String(left);
}

/** « Lancer »: the next throw of the sold unit, revealed (no request). */
export async function step(shown) {
  const { unit } = shown;
  let { x, y } = shown.thrown === 0 ? unit.start : shown.at;
  const t = unit.throws[shown.thrown];
  const [dx, dy] = STEP[t.direction] || [0, 0];
  x += dx * t.steps;
  y += dy * t.steps;
  const chest = unit.chests.find((c) => c.x === x && c.y === y);
  clearPion();
  const cell = $(`square-${x}-${y}`);
  const content = chest ? chest.content : null;
  if (cell) {
    cell.classList.remove('closed');
    cell.classList.add('uncovered', 'pion');
    cell.querySelector('.label').textContent = `${shown.thrown + 1} ${content ? CONTENT_LABEL[content] : '?'}`;
  }
  shown.at = { x, y };
  shown.thrown += 1;
  $('steps').append(el('li', '', `Lancer ${shown.thrown} : boussole ${BOUSSOLE[t.direction]}, compteur ${t.steps} → case (${x}, ${y}) : ${content ? CONTENT_LABEL[content] : 'pas de coffre'}`));
  if (shown.thrown === THROWS) {
    shown.over = true;
    $('steps').append(el('li', '', lost(shown)
      ? 'Les quatre lancers sont joués. Vérification du résultat…'
      : 'Les quatre lancers sont joués. Encaissez pour voir le résultat vérifié.'));
    setPhase('ended');
  }
  draw(shown);
}

/**
 * Whether the four throws shown uncover no lot (article 4.6): nothing to
 * cash, the result is verified without it.
 */
export function lost(shown) {
  if (!shown.over) {
    return false;
  }
  try {
    return lotOf(landingsOf(shown.unit).map((l) => l.content)) === 0;
  } catch (e) {
    return false;
  }
}

/** L'île au trésor has no stop: its four throws are always played. */
export function mayStop() {
  return false;
}

export async function stop() {
  throw new Failure("L'île au trésor n'a pas de bouton « Arrêter » : ses quatre lancers sont toujours joués.");
}
