// The reference player page (docs/API.md §A client that checks what it
// shows). Buys a unit, plays it, redeems it through the public API, and
// shows the outcome only once it has checked it:
//
//   1. the block's header, fetched as stored, carries a seal that verifies
//      (Ed25519, WebCrypto) with the issuer's key pinned in this page, and
//      names that key as its signer (FORMAT.md §Header, §Seal);
//   2. the unit ID, the record and the proof agree with the sealed header
//      (game, emission, block, index, check code, tree size, record size;
//      FORMAT.md §Unit ID, §Unit record);
//   3. the record hashes up its inclusion proof to the *sealed* Merkle root
//      (RFC 9162 §2.1.3.2, SHA-256 in WebCrypto), never the answer's word;
//   4. the record, replayed by the game's rules (GAMES.md), gives what the
//      page displayed (the map or the board, every roll) and what the
//      redemption answered (lot, stop, prize).
//
// Any mismatch refuses the outcome and names the check that failed; no win
// is shown. Money is integer cents throughout. The token never leaves the
// browser but in the page's own requests, and is kept in memory only.

'use strict';

(() => {
  // ---------------------------------------------------------------------
  // Bytes, integers, money
  // ---------------------------------------------------------------------

  /**
   * A refusal of the outcome: `check` names the check that failed. Its
   * words never repeat an amount an answer claimed: a refusal shows no win.
   */
  class Refusal extends Error {
    constructor(check, detail) {
      super(detail);
      this.check = check;
    }
  }

  /** A request that failed, or an answer the page cannot use. */
  class Failure extends Error {}

  function bytesOfHex(hex, what, check) {
    if (typeof hex !== 'string' || hex.length % 2 !== 0 || /[^0-9a-f]/i.test(hex)) {
      throw new Refusal(check, `${what} is not hexadecimal bytes`);
    }
    const bytes = new Uint8Array(hex.length / 2);
    for (let i = 0; i < bytes.length; i += 1) {
      bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
    }
    return bytes;
  }

  function hexOf(bytes) {
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  function sameBytes(a, b) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
  }

  function u16(b, at) {
    return b[at] | (b[at + 1] << 8);
  }

  function u32(b, at) {
    return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
  }

  /** Euros as the API writes them ("0.1", "3.2", "10000") in cents. */
  function centsOf(euros, what, check) {
    const m = typeof euros === 'string' ? /^(0|[1-9][0-9]{0,9})(?:\.([0-9]{1,2}))?$/.exec(euros) : null;
    if (!m) {
      throw new Refusal(check, `${what} (${JSON.stringify(euros)}) is not an amount in euros`);
    }
    return Number(m[1]) * 100 + Number((m[2] || '').padEnd(2, '0'));
  }

  /** Cents as the player reads them: "10 010,50 €". */
  function euros(cents) {
    const whole = Math.floor(cents / 100).toString().replace(/\B(?=([0-9]{3})+(?![0-9]))/g, '\u202f');
    return `${whole},${String(cents % 100).padStart(2, '0')} €`;
  }

  async function sha256(bytes) {
    return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  }

  function concat(...parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  // ---------------------------------------------------------------------
  // The format: unit IDs, headers, the Merkle tree (FORMAT.md)
  // ---------------------------------------------------------------------

  /** Each game's facts the checks need (FORMAT.md §Header, games table). */
  const GAMES = {
    'ile-au-tresor': { code: 1, prefix: 'IAT', recordSize: 53, params: [8, 8], title: "L'île au trésor" },
    'tresors-ensables': { code: 2, prefix: 'TE', recordSize: 80, params: [60, 3], title: 'Trésors Ensablés' },
  };

  const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

  /** A unit ID read as FORMAT.md §Unit ID says. */
  function parseUnitId(text) {
    const parts = String(text).trim().split('-');
    const number = (s) => (/^[0-9]{1,10}$/.test(s) ? Number(s) : NaN);
    if (parts.length !== 5) {
      throw new Refusal('unit ID', `${text} is not PREFIX-emission-block-index-check`);
    }
    const [prefix, emission, block, index] = [parts[0].toUpperCase(), ...parts.slice(1, 4).map(number)];
    const slug = Object.keys(GAMES).find((g) => GAMES[g].prefix === prefix);
    const check = parts[4].toUpperCase().replace(/[IL]/g, '1').replace(/O/g, '0');
    if (!slug || [emission, block, index].some((n) => !Number.isSafeInteger(n) || n > 0xffffffff)
      || check.length !== 8 || [...check].some((c) => !CROCKFORD.includes(c))) {
      throw new Refusal('unit ID', `${text} is not a unit ID`);
    }
    let v = 0n;
    for (const c of check) {
      v = (v << 5n) | BigInt(CROCKFORD.indexOf(c));
    }
    const checkCode = new Uint8Array(5);
    for (let j = 0; j < 5; j += 1) {
      checkCode[j] = Number((v >> BigInt(32 - 8 * j)) & 0xffn);
    }
    return { slug, emission, block, index, checkCode };
  }

  /** The header's fields (FORMAT.md §Header), from its bytes as stored. */
  function parseHeader(h) {
    const magic = 'TKTBLOCK';
    if (h.length < 213 || [...magic].some((c, i) => h[i] !== c.charCodeAt(0))) {
      throw new Refusal('header', 'the sealed header does not start with TKTBLOCK');
    }
    if (u16(h, 8) !== 1) {
      throw new Refusal('header', `the block has format version ${u16(h, 8)}; this page reads version 1`);
    }
    if (u16(h, 10) !== h.length || h.length !== 213 + 9 * h[212]) {
      throw new Refusal('header', `the header is ${h.length} bytes, its header_len says ${u16(h, 10)}`);
    }
    const code = u16(h, 12);
    const slug = Object.keys(GAMES).find((g) => GAMES[g].code === code);
    if (!slug || u16(h, 14) !== 1) {
      throw new Refusal('header', `game code ${code}, rules version ${u16(h, 14)}: not a game this page plays`);
    }
    return {
      slug,
      emission: u32(h, 16),
      block: u32(h, 20),
      priceCents: u32(h, 24),
      unitCount: u32(h, 28),
      recordSize: u16(h, 32),
      params: [h[34], h[35]],
      merkleRoot: h.slice(84, 116),
      signer: h.slice(180, 212),
    };
  }

  /** RFC 9162 §2.1.3.2: the root `leaf` reaches up `path`, or null. */
  async function rootFromInclusion(leaf, index, size, path) {
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
        r = await sha256(concat(Uint8Array.of(1), p, r));
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      } else {
        r = await sha256(concat(Uint8Array.of(1), r, p));
      }
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
    }
    return sn === 0 ? r : null;
  }

  // ---------------------------------------------------------------------
  // L'île au trésor (GAMES.md §L'île au trésor; FORMAT.md §Île au trésor
  // payload, §Lots)
  // ---------------------------------------------------------------------

  const DIRECTIONS = ['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'];
  const STEP = { N: [0, -1], NE: [1, -1], E: [1, 0], SE: [1, 1], S: [0, 1], SW: [-1, 1], W: [-1, 0], NW: [-1, -1] };
  const CONTENTS = ['vide', 'chandelier', 'singe', 'saphir', 'tete_de_mort'];
  const CONTENT_LABEL = { vide: '✕ vide', chandelier: 'chandelier', singe: 'singe', saphir: 'saphir', tete_de_mort: 'tête de mort' };
  /** Lot codes 1 … 9: the rows of article 4.5. */
  const ILE_LOTS = [null, 'chandelier-3', 'singe-3', 'saphir-3', 'tete_de_mort-3', 'chandelier-2', 'singe-2', 'saphir-2', 'tete_de_mort-2', 'chandelier-1'];
  /** The regulation's amounts (cents) of lots 0 … 9 at each price (cents). */
  const ILE_AMOUNTS = {
    50: [0, 500000, 25000, 7500, 2500, 1250, 500, 150, 100, 50],
    100: [0, 1000000, 50000, 15000, 5000, 2500, 1000, 300, 200, 100],
    200: [0, 2000000, 100000, 30000, 10000, 5000, 2000, 600, 400, 200],
  };

  /** A lot in the player's words: "tete_de_mort-2" → "2 têtes de mort". */
  function lotWords(lot) {
    const [symbol, n] = lot.split('-');
    const plural = { chandelier: 'chandeliers', singe: 'singes', saphir: 'saphirs', tete_de_mort: 'têtes de mort' };
    return n === '1' ? `1 ${CONTENT_LABEL[symbol]}` : `${n} ${plural[symbol]}`;
  }

  /** The record's payload as the sale's `unit` writes it. */
  function decodeIle(record) {
    const chests = [];
    for (let k = 0; k < 9; k += 1) {
      const content = CONTENTS[record[20 + 3 * k]];
      if (!content) {
        throw new Refusal('rules', `chest ${k} has content code ${record[20 + 3 * k]}`);
      }
      chests.push({ x: record[18 + 3 * k], y: record[19 + 3 * k], content });
    }
    const throws = [];
    for (let t = 0; t < 4; t += 1) {
      const direction = DIRECTIONS[record[45 + 2 * t]];
      const steps = record[46 + 2 * t];
      if (!direction || steps < 1 || steps > 7) {
        throw new Refusal('rules', `throw ${t + 1} is not a direction and 1 to 7 steps`);
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
        throw new Refusal('rules', `throw ${i + 1} (${t.direction} ${t.steps}) does not land on a chest not visited before, on the map`);
      }
      seen.add(`${x},${y}`);
      landings.push({ x, y, content: chest.content });
    });
    return landings;
  }

  /** Article 4.5: the lot code the uncovered contents win (0: none). */
  function ileLot(uncovered) {
    const wins = [];
    for (const symbol of ['chandelier', 'singe', 'saphir', 'tete_de_mort']) {
      const n = uncovered.filter((c) => c === symbol).length;
      if (n === 4) {
        throw new Refusal('rules', `four ${symbol} uncovered: not a valid unit`);
      }
      if (n >= (symbol === 'chandelier' ? 1 : 2)) {
        wins.push(`${symbol}-${n}`);
      }
    }
    if (wins.length > 1) {
      throw new Refusal('rules', `several winning groups (${wins.join(', ')}): not a valid unit`);
    }
    return wins.length ? ILE_LOTS.indexOf(wins[0]) : 0;
  }

  /** The record replayed: its map, landings, lot and amount at `priceCents`. */
  function replayIle(record, header) {
    const unit = decodeIle(record);
    if (unit.map.width !== header.params[0] || unit.map.height !== header.params[1]) {
      throw new Refusal('rules', `the record's map is ${unit.map.width} × ${unit.map.height}, the header's ${header.params.join(' × ')}`);
    }
    const squares = new Set(unit.chests.map((c) => `${c.x},${c.y}`));
    if (squares.size !== 9 || squares.has(`${unit.start.x},${unit.start.y}`)
      || unit.chests.some((c) => c.x >= unit.map.width || c.y >= unit.map.height)) {
      throw new Refusal('rules', 'the nine chests are not on nine distinct squares of the map, off the start');
    }
    const landings = landingsOf(unit);
    const lot = ileLot(landings.map((l) => l.content));
    const amounts = ILE_AMOUNTS[header.priceCents];
    if (!amounts) {
      throw new Refusal('rules', `L'île au trésor is not sold at ${header.priceCents} cents`);
    }
    return { unit, landings, lot, lotName: ILE_LOTS[lot], prizeCents: amounts[lot] };
  }

  // ---------------------------------------------------------------------
  // Trésors Ensablés (GAMES.md §Trésors Ensablés; FORMAT.md §Trésors
  // Ensablés payload)
  // ---------------------------------------------------------------------

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
  function decodeTresors(record) {
    const payload = record.slice(14);
    const board = ['start'];
    for (let s = 1; s <= GOLD_SQUARE; s += 1) {
      const token = SQUARES[nibble(payload, s - 1)];
      const fixed = s === GOLD_SQUARE ? 'gold' : s % 12 === 6 ? 'bronze' : s % 12 === 0 ? 'silver' : null;
      if (!token || token === 'start' || (fixed !== null) !== ['bronze', 'silver', 'gold'].includes(token)
        || (fixed !== null && token !== fixed)) {
        throw new Refusal('rules', `square ${s} holds ${token || 'an unknown code'}`);
      }
      board.push(token);
    }
    const chests = [];
    for (let k = 1; k <= 10; k += 1) {
      const cents = CHEST_CENTS[board[6 * k]][nibble(payload.subarray(30), k - 1)];
      if (cents === undefined) {
        throw new Refusal('rules', `chest ${k} (square ${6 * k}) has a value code beyond its table`);
      }
      chests.push(cents);
    }
    const rolls = payload[35];
    const dice = [];
    let position = 0;
    for (let t = 1; t <= GOLD_SQUARE; t += 1) {
      const die = nibble(payload.subarray(36), t - 1);
      if (t <= rolls ? die < 1 || die > 6 || position >= GOLD_SQUARE : die !== 0) {
        throw new Refusal('rules', `die ${t} is ${die}, the tape has ${rolls} rolls`);
      }
      if (t <= rolls) {
        dice.push(die);
        position = Math.min(position + die, GOLD_SQUARE);
      }
    }
    if (rolls < 10 || rolls > 60 || position !== GOLD_SQUARE) {
      throw new Refusal('rules', `the dice tape (${rolls} rolls) does not end on square 60`);
    }
    return { board, chests, dice };
  }

  /** Every roll of the unit played from square 0 until it ends. */
  function playTresors(unit) {
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

  // ---------------------------------------------------------------------
  // The API (docs/API.md)
  // ---------------------------------------------------------------------

  const $ = (id) => document.getElementById(id);

  async function api(method, path, body) {
    const token = $('token').value.trim();
    if (!token) {
      throw new Failure('Saisissez le jeton de la plateforme (ou ouvrez la page avec #token=…).');
    }
    const headers = { Authorization: `Bearer ${token}` };
    if (method === 'POST') {
      // One key per operation: a retry after a lost answer gets the first
      // answer, never a second sale, roll or payment (API.md §Idempotency).
      headers['Idempotency-Key'] = crypto.randomUUID();
      headers['Content-Type'] = 'application/json';
    }
    const init = { method, headers, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
    }
    for (let attempt = 1; ; attempt += 1) {
      let response;
      try {
        response = await fetch(path, init);
      } catch (e) {
        if (attempt < 3) {
          continue;
        }
        throw new Failure(`Le service ne répond pas (${e.message}) ; réessayez.`);
      }
      let answer;
      try {
        answer = JSON.parse(await response.text());
      } catch (e) {
        throw new Failure(`${method} ${path}: the answer is not JSON (status ${response.status})`);
      }
      if (response.status === 503 && attempt < 3) {
        await new Promise((done) => { setTimeout(done, 1000); });
        continue;
      }
      if (!response.ok) {
        throw new Failure(`${answer.error || response.status}: ${answer.message || ''}`);
      }
      return answer;
    }
  }

  // ---------------------------------------------------------------------
  // The page
  // ---------------------------------------------------------------------

  /** What this page bought and displayed: what the checks compare. */
  let shown = null;

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) {
      e.className = className;
    }
    if (text !== undefined) {
      e.textContent = text;
    }
    return e;
  }

  function setPhase(phase) {
    document.body.dataset.phase = phase;
  }

  function say(text) {
    $('message').textContent = text;
  }

  /** Runs `work` for a button, one at a time, saying what failed. */
  function act(work) {
    return async () => {
      if (document.body.dataset.busy === 'true') {
        return;
      }
      document.body.dataset.busy = 'true';
      say('');
      try {
        await work();
      } catch (e) {
        setPhase('error');
        say(e instanceof Failure ? e.message : `Erreur : ${e.message}`);
      } finally {
        document.body.dataset.busy = 'false';
        refreshButtons();
      }
    };
  }

  function refreshButtons() {
    const playing = shown && !shown.over;
    $('roll').disabled = !playing;
    $('stop').disabled = !(playing && shown.slug === 'tresors-ensables' && shown.mayStop);
    $('redeem').disabled = !(shown && shown.over && !shown.redeemed);
    for (const b of document.querySelectorAll('#shop button')) {
      b.disabled = Boolean(shown && !shown.redeemed && document.body.dataset.phase !== 'error');
    }
    $('again').hidden = !(shown && (shown.redeemed || document.body.dataset.phase === 'error'));
  }

  function reset() {
    shown = null;
    for (const id of ['board', 'steps', 'facts', 'checks']) {
      $(id).replaceChildren();
    }
    for (const id of ['life', 'found', 'rolls', 'verdict', 'outcome-text', 'unit-id', 'game-title']) {
      $(id).textContent = '';
    }
    $('verdict').removeAttribute('data-verdict');
    $('outcome-text').className = '';
    $('outcome-text').removeAttribute('data-prize-cents');
    $('game').hidden = true;
    $('verification').hidden = true;
    $('outcome').hidden = true;
    $('board').className = '';
    say('');
    setPhase('choose');
  }

  async function buy(slug, price) {
    reset();
    const sale = await api('POST', '/v1/sales', { game: slug, price });
    if (sale.kind !== 'sale' || sale.game !== slug || typeof sale.id !== 'string') {
      throw new Failure(`the sale's answer is not a sale of ${slug}`);
    }
    shown = { slug, sale, id: sale.id, over: false, mayStop: false, redeemed: false };
    $('game-title').textContent = `${GAMES[slug].title} · ${euros(centsOf(sale.price, 'the price', 'sale'))}`;
    $('unit-id').textContent = sale.id;
    $('game').hidden = false;
    if (slug === 'tresors-ensables') {
      startTresors(sale.unit);
    } else {
      startIle(sale.unit);
    }
    setPhase('playing');
  }

  // --- Trésors Ensablés: the board, one roll at a time, « Arrêter »

  const SQUARE_LABEL = {
    start: 'Départ', blank: '', 'life+1': 'vie +1', 'life+2': 'vie +2', 'trap-1': 'piège −1',
    'trap-2': 'piège −2', 'trap-3': 'piège −3', bronze: 'coffre bronze', silver: 'coffre argent', gold: 'coffre or',
  };
  const SQUARE_CLASS = {
    'life+1': 'life', 'life+2': 'life', 'trap-1': 'trap', 'trap-2': 'trap', 'trap-3': 'trap',
    bronze: 'bronze', silver: 'silver', gold: 'gold', start: 'start',
  };

  function startTresors(unit) {
    if (!Array.isArray(unit.board) || unit.board.length !== 61) {
      throw new Failure('the sale did not give the 61 squares of the board');
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
    drawTresors();
  }

  function drawTresors() {
    for (const c of document.querySelectorAll('#board .pion')) {
      c.classList.remove('pion');
    }
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
  function tookPlay(view, rolls, stepsExpected) {
    if (view.kind !== 'play' || view.id !== shown.id || view.rolls !== rolls
      || !Array.isArray(view.steps) || view.steps.length !== stepsExpected) {
      throw new Failure(`the play's answer is not roll ${rolls} of ${shown.id}`);
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
      const how = { stopped: 'arrêtée', death: 'perdue : plus de vie', gold: "terminée : coffre d'or atteint" }[view.end] || view.end;
      $('steps').append(el('li', '', `Partie ${how} après ${shown.steps.length} lancer(s). Encaissez pour voir le résultat vérifié.`));
      setPhase('ended');
    }
    drawTresors();
  }

  async function rollTresors() {
    const roll = shown.steps.length + 1;
    const view = await api('POST', `/v1/plays/${encodeURIComponent(shown.id)}/roll`, { roll });
    tookPlay(view, roll, 1);
  }

  async function stopTresors() {
    const view = await api('POST', `/v1/plays/${encodeURIComponent(shown.id)}/stop`);
    tookPlay(view, shown.steps.length, 0);
  }

  // --- L'île au trésor: the map, the four throws revealed one per click

  function startIle(unit) {
    if (!unit || !unit.map || !Array.isArray(unit.chests) || !Array.isArray(unit.throws) || !unit.start) {
      throw new Failure("the sale did not give the unit's map");
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
    const start = $(`square-${unit.start.x}-${unit.start.y}`);
    if (start) {
      start.classList.add('start', 'pion');
      start.querySelector('.label').textContent = 'Départ';
    }
    for (const c of unit.chests) {
      const cell = $(`square-${c.x}-${c.y}`);
      if (cell) {
        cell.classList.add('closed');
        cell.querySelector('.label').textContent = 'coffre';
      }
    }
    drawIle();
  }

  function drawIle() {
    $('roll').textContent = shown.thrown < 4 ? `Lancer (jet ${shown.thrown + 1}/4)` : 'Lancer';
    $('rolls').textContent = `Jets : ${shown.thrown}/4`;
  }

  function throwIle() {
    const { unit } = shown;
    let { x, y } = shown.thrown === 0 ? unit.start : shown.at;
    const t = unit.throws[shown.thrown];
    const [dx, dy] = STEP[t.direction] || [0, 0];
    x += dx * t.steps;
    y += dy * t.steps;
    const chest = unit.chests.find((c) => c.x === x && c.y === y);
    for (const c of document.querySelectorAll('#board .pion')) {
      c.classList.remove('pion');
    }
    const cell = $(`square-${x}-${y}`);
    const content = chest ? chest.content : null;
    if (cell) {
      cell.classList.remove('closed');
      cell.classList.add('uncovered', 'pion');
      cell.querySelector('.label').textContent = `${shown.thrown + 1} ${content ? CONTENT_LABEL[content] : '?'}`;
    }
    shown.at = { x, y };
    shown.thrown += 1;
    $('steps').append(el('li', '', `Jet ${shown.thrown} : ${t.direction} ${t.steps} → (${x}, ${y}) : ${content ? CONTENT_LABEL[content] : 'pas de coffre'}`));
    if (shown.thrown === 4) {
      shown.over = true;
      $('steps').append(el('li', '', 'Les quatre jets sont joués. Encaissez pour voir le résultat vérifié.'));
      setPhase('ended');
    }
    drawIle();
  }

  // --- Redemption, then the checks, then (only then) the outcome

  async function redeem() {
    const id = parseUnitId(shown.id);
    const redemption = await api('POST', '/v1/redemptions', { id: shown.id });
    shown.redeemed = true;
    setPhase('verifying');
    const sealed = await api('GET', `/v1/blocks/${id.slug}/${id.emission}/${id.block}`);
    const verdict = await verify(redemption, sealed);
    show(verdict);
  }

  /** The pinned key: the issuer's, written into this page by the server. */
  function pinnedKey() {
    const meta = document.querySelector('meta[name="issuer-public-key"]');
    const hex = meta ? meta.content : '';
    if (!/^[0-9a-f]{64}$/.test(hex)) {
      throw new Refusal('signer', "this page holds no issuer's public key to check seals with");
    }
    return bytesOfHex(hex, 'the pinned key', 'signer');
  }

  /**
   * Every check, in order, each one resting on the ones before: a list of
   * passed checks, and the outcome, or the check that failed.
   */
  async function verify(redemption, sealed) {
    const passed = [];
    const pass = (name, detail) => passed.push({ name, detail });
    try {
      const key = pinnedKey();
      const header = bytesOfHex(sealed.header, "the block's header", 'seal');
      const seal = bytesOfHex(sealed.seal, "the block's seal", 'seal');
      const trusted = await crypto.subtle.importKey('raw', key, { name: 'Ed25519' }, false, ['verify']);
      if (seal.length !== 64 || !(await crypto.subtle.verify({ name: 'Ed25519' }, trusted, seal, header))) {
        throw new Refusal('seal', "the block's seal does not verify with the issuer's key pinned in this page: its header is not the issuer's");
      }
      pass('seal', "Ed25519 over the header bytes, with the issuer's pinned key");
      const h = parseHeader(header);
      if (!sameBytes(h.signer, key) || sealed.signer !== hexOf(key)) {
        throw new Refusal('signer', "the header's signer is not the issuer's pinned key");
      }
      pass('signer', hexOf(key));

      const id = parseUnitId(shown.id);
      const game = GAMES[id.slug];
      if (h.slug !== id.slug || h.emission !== id.emission || h.block !== id.block
        || sealed.game !== id.slug || sealed.emission !== id.emission || sealed.block !== id.block) {
        throw new Refusal('header', `the sealed header is of ${h.slug} emission ${h.emission} block ${h.block}, the ticket's ID names ${id.slug} emission ${id.emission} block ${id.block}`);
      }
      if (h.recordSize !== game.recordSize || h.params.join() !== game.params.join()) {
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

      const leaf = await sha256(concat(Uint8Array.of(0), record));
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

      const outcome = id.slug === 'ile-au-tresor'
        ? checkIle(record, h, redemption, pass)
        : checkTresors(record, h, redemption, pass);
      return { ok: true, passed, outcome, facts: { signer: hexOf(key), root: hexOf(h.merkleRoot), leaf: hexOf(leaf), place: `leaf ${id.index} of ${h.unitCount}` } };
    } catch (e) {
      if (e instanceof Refusal) {
        return { ok: false, passed, failed: e };
      }
      throw e;
    }
  }

  /** The record's lot and prize fields, as the replay must find them. */
  function prefixOf(record) {
    return { lot: record[9], prizeCents: u32(record, 10) };
  }

  function checkIle(record, header, redemption, pass) {
    const played = replayIle(record, header);
    const prefix = prefixOf(record);
    if (prefix.lot !== played.lot || prefix.prizeCents !== played.prizeCents) {
      throw new Refusal('rules', `the record claims lot ${prefix.lot} (${euros(prefix.prizeCents)}); its throws win lot ${played.lot} (${euros(played.prizeCents)})`);
    }
    pass('rules', `four throws uncover ${played.landings.map((l) => l.content).join(', ')}: ${played.lotName || 'no lot'}`);

    const seen = shown.unit;
    const differs = [];
    if (seen.start.x !== played.unit.start.x || seen.start.y !== played.unit.start.y) {
      differs.push(`the start shown (${seen.start.x}, ${seen.start.y}) is (${played.unit.start.x}, ${played.unit.start.y}) sealed`);
    }
    played.unit.chests.forEach((c, k) => {
      const s = seen.chests[k] || {};
      if (s.x !== c.x || s.y !== c.y || s.content !== c.content) {
        differs.push(`chest ${k + 1} shown at (${s.x}, ${s.y}) as ${s.content}, sealed at (${c.x}, ${c.y}) as ${c.content}`);
      }
    });
    played.unit.throws.forEach((t, i) => {
      const s = seen.throws[i] || {};
      if (s.direction !== t.direction || s.steps !== t.steps) {
        differs.push(`throw ${i + 1} shown as ${s.direction} ${s.steps}, sealed as ${t.direction} ${t.steps}`);
      }
    });
    if (seen.chests.length !== 9 || seen.throws.length !== 4 || shown.thrown !== 4) {
      differs.push('the map shown has not nine chests and four throws played');
    }
    if (differs.length) {
      throw new Refusal('display', `the map shown is not the sealed record's: ${differs.join('; ')}`);
    }
    pass('display', 'the map, its chests and the four throws shown are the sealed record\'s');

    const answered = centsOf(redemption.prize, 'the prize answered', 'prize');
    if (redemption.lot !== played.lotName || answered !== played.prizeCents) {
      throw new Refusal('prize', `the redemption answers a lot or prize other than the sealed record's (${played.lotName || 'no lot'})`);
    }
    pass('prize', `${played.lotName || 'no lot'}: ${euros(played.prizeCents)}`);
    return {
      prizeCents: played.prizeCents,
      text: played.lot ? `Gagné : ${lotWords(played.lotName)} (${played.lotName}), ${euros(played.prizeCents)}` : 'Perdu : aucun lot',
    };
  }

  function checkTresors(record, header, redemption, pass) {
    const unit = decodeTresors(record);
    const steps = playTresors(unit);
    const last = steps[steps.length - 1];
    const prefix = prefixOf(record);
    const toEnd = last.end === 'gold' ? { lot: 1, prizeCents: last.found } : { lot: 0, prizeCents: 0 };
    if (prefix.lot !== toEnd.lot || prefix.prizeCents !== toEnd.prizeCents) {
      throw new Refusal('rules', `the record claims lot ${prefix.lot} (${euros(prefix.prizeCents)}) played to the end; its dice give lot ${toEnd.lot} (${euros(toEnd.prizeCents)})`);
    }
    pass('rules', `${unit.dice.length} dice on the sealed board; played to the end: ${last.end === 'gold' ? `gold chest, ${euros(last.found)}` : `death at roll ${last.roll}`}`);

    const differs = [];
    shown.board.forEach((token, s) => {
      if (token !== unit.board[s]) {
        differs.push(`square ${s} shown as ${token}, sealed as ${unit.board[s]}`);
      }
    });
    if (differs.length) {
      throw new Refusal('display', `the board shown is not the sealed record's: ${differs.join('; ')}`);
    }
    const fields = ['roll', 'die', 'from', 'to', 'square', 'life', 'chest', 'found'];
    shown.steps.forEach((s, i) => {
      const sealed = steps[i];
      const wrong = sealed ? fields.filter((f) => s[f] !== sealed[f]) : ['roll'];
      if (wrong.length) {
        const was = sealed ? `die ${sealed.die} → square ${sealed.to}, life ${sealed.life}, found ${euros(sealed.found)}` : 'no such roll';
        throw new Refusal('display', `roll ${i + 1} as shown (die ${s.die} → square ${s.to}, life ${s.life}, found ${euros(s.found)}) is not the sealed record's (${was}): ${wrong.join(', ')} differ`);
      }
    });
    const rolls = shown.steps.length;
    const at = steps[rolls - 1];
    let prizeCents;
    let lot;
    if (shown.end === 'stopped') {
      if (!at || at.end || at.opened === 0) {
        throw new Refusal('display', `the play shown stopped after ${rolls} rolls, where the sealed record allows no stop`);
      }
      prizeCents = at.found;
      lot = 'arret';
    } else {
      if (!at || at.end !== shown.end || rolls !== steps.length) {
        throw new Refusal('display', `the play shown ended (${shown.end}) after ${rolls} rolls; the sealed record ends (${last.end}) after ${steps.length}`);
      }
      prizeCents = at.end === 'gold' ? at.found : 0;
      lot = at.end === 'gold' ? 'coffre-or' : null;
    }
    pass('display', `the board and the ${rolls} rolls shown are the sealed record's`);

    const answered = centsOf(redemption.prize, 'the prize answered', 'prize');
    const stop = shown.end === 'stopped' ? rolls : null;
    if (answered !== prizeCents || shown.playPrize !== prizeCents || redemption.lot !== lot
      || redemption.stopped_after_rolls !== stop) {
      throw new Refusal('prize', `the redemption answers a lot, stop or prize other than the sealed record's played as shown (${lot || 'no lot'}, stop ${stop})`);
    }
    pass('prize', `${lot || 'no lot'}: ${euros(prizeCents)}`);
    const text = {
      stopped: `Gagné : arrêt après ${rolls} lancer(s), ${euros(prizeCents)}`,
      gold: `Gagné : coffre d'or atteint en ${rolls} lancers, ${euros(prizeCents)}`,
      death: `Perdu : plus de vie au lancer ${rolls}, aucun gain`,
    }[shown.end];
    return { prizeCents, text };
  }

  function show(verdict) {
    $('verification').hidden = false;
    const checks = $('checks');
    for (const p of verdict.passed) {
      checks.append(el('li', 'ok', `${p.name}: ${p.detail}`));
    }
    if (!verdict.ok) {
      const f = verdict.failed;
      checks.append(el('li', 'failed', `${f.check}: ${f.message}`));
      $('verdict').dataset.verdict = 'refused';
      $('verdict').textContent = `refused: the check "${f.check}" failed: ${f.message}. Ce résultat n'est pas affiché ; signalez le ticket ${shown.id} au support.`;
      $('outcome').hidden = true;
      setPhase('refused');
      return;
    }
    const facts = $('facts');
    for (const [term, value] of [
      ['signer', verdict.facts.signer],
      ['sealed root', verdict.facts.root],
      ['leaf hash', verdict.facts.leaf],
      ['place', verdict.facts.place],
    ]) {
      facts.append(el('dt', '', term), el('dd', '', value));
    }
    $('verdict').dataset.verdict = 'verified';
    $('verdict').textContent = 'verified: the outcome below is the sealed unit\'s, as played and shown';
    const text = $('outcome-text');
    text.textContent = verdict.outcome.text;
    text.dataset.prizeCents = String(verdict.outcome.prizeCents);
    text.className = verdict.outcome.prizeCents > 0 ? 'win' : '';
    $('outcome').hidden = false;
    setPhase('verified');
  }

  // ---------------------------------------------------------------------
  // Start
  // ---------------------------------------------------------------------

  function start() {
    // A token in the fragment (#token=…) is never sent to any server; it
    // is taken into the field and removed from the address bar.
    const fragment = new URLSearchParams(window.location.hash.slice(1));
    if (fragment.has('token')) {
      $('token').value = fragment.get('token');
      window.history.replaceState(null, '', window.location.pathname + window.location.search);
    }
    for (const b of document.querySelectorAll('#shop button')) {
      b.addEventListener('click', act(() => buy(b.dataset.game, b.dataset.price)));
    }
    $('roll').addEventListener('click', act(async () => {
      if (shown.slug === 'tresors-ensables') {
        await rollTresors();
      } else {
        throwIle();
      }
    }));
    $('stop').addEventListener('click', act(stopTresors));
    $('redeem').addEventListener('click', act(redeem));
    $('again').addEventListener('click', act(async () => {
      reset();
    }));
    reset();
    refreshButtons();
  }

  start();
})();
