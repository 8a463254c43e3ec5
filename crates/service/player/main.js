// The reference player page (docs/API.md §A client that checks what it
// shows). Lists the games GET /v1/games gives that it has a module for
// (games/index.js), buys a unit, plays it, redeems it through the public
// API, and shows the outcome only once it has checked it (verify.js):
//
//   1. the block's header, fetched as stored, carries a seal that verifies
//      (Ed25519, WebCrypto) with the issuer's key pinned in this page, and
//      names that key as its signer (FORMAT.md §Header, §Seal);
//   2. the unit ID, the record and the proof agree with the sealed header
//      (game, emission, block, index, check code, tree size, record size;
//      FORMAT.md §Unit ID, §Unit record);
//   3. the record hashes up its inclusion proof to the *sealed* Merkle root
//      (RFC 9162 §2.1.3.2, SHA-256 in WebCrypto), never the answer's word;
//   4. the record, replayed by the game's rules (GAMES.md; the game's
//      module), gives what the page displayed (the map or the board, every
//      step) and what the redemption answered (lot, stop, prize).
//
// Any mismatch refuses the outcome and names the check that failed; no win
// is shown. Money is integer cents throughout. The token never leaves the
// browser but in the page's own requests, and is kept in memory only.

import { api } from './api.js';
import {
  Failure, centsOf, euros, parseUnitId, priceLabel,
} from './format.js';
import { GAMES } from './games/index.js';
import { $, el, say, setPhase } from './ui.js';
import { verify } from './verify.js';

/** The games on offer, by slug: GET /v1/games's row and the module. */
let offered = {};

/** Every game module this page plays: its own table and those imported. */
const modules = () => ({
  ...GAMES,
  ...Object.fromEntries(Object.values(offered).map(({ info, game }) => [info.slug, game])),
});

/** What this page bought and displayed: what the checks compare. */
let shown = null;

const request = (method, path, body) => api(method, path, body, $('token').value.trim());

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
  $('stop').disabled = !(playing && shown.game.mayStop(shown));
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

/**
 * The module of the game GET /v1/games describes in `info`: this page's
 * own (games/index.js), else the one the answer names under /player/games/;
 * null when neither, or when its facts are not the answer's.
 */
async function moduleOf(info) {
  let game = GAMES[info.slug];
  if (!game && typeof info.module === 'string' && /^\/player\/games\/[a-z0-9-]+\.js$/.test(info.module)) {
    try {
      game = await import(info.module);
    } catch (e) {
      game = null;
    }
  }
  const f = game && game.facts;
  const agrees = f && game.slug === info.slug && f.code === info.code && f.prefix === info.id_prefix
    && f.rulesVersion === info.rules_version && f.recordSize === info.record_size
    && f.params.join() === (info.params || []).join();
  return agrees ? game : null;
}

/** The shop: a button per game this page plays and price GET /v1/games gives. */
async function loadGames() {
  const answer = await request('GET', '/v1/games');
  if (answer.kind !== 'games' || !Array.isArray(answer.games)) {
    throw new Failure('GET /v1/games did not answer the games');
  }
  offered = {};
  const buttons = [];
  const unplayable = [];
  for (const info of answer.games) {
    const game = await moduleOf(info);
    if (!game) {
      unplayable.push(info.name || info.slug);
      continue;
    }
    offered[info.slug] = { info, game };
    for (const price of info.prices) {
      const b = el('button', '', `${info.name} · ${priceLabel(price.cents)}`);
      b.type = 'button';
      b.id = `buy-${info.slug}-${price.cents}`;
      b.dataset.game = info.slug;
      b.dataset.price = price.euros;
      b.addEventListener('click', act(() => buy(info.slug, price.euros)));
      buttons.push(b);
    }
  }
  $('games').replaceChildren(...buttons);
  reset();
  if (unplayable.length) {
    say(`Cette page ne sait pas jouer : ${unplayable.join(', ')}.`);
  }
}

async function buy(slug, price) {
  reset();
  const { info, game } = offered[slug];
  const sale = await request('POST', '/v1/sales', { game: slug, price });
  if (sale.kind !== 'sale' || sale.game !== slug || typeof sale.id !== 'string') {
    throw new Failure(`the sale's answer is not a sale of ${slug}`);
  }
  shown = { slug, info, game, sale, id: sale.id, over: false, redeemed: false };
  $('game-title').textContent = `${info.name} · ${euros(centsOf(sale.price, 'the price', 'sale'))}`;
  $('unit-id').textContent = sale.id;
  $('game').hidden = false;
  game.start(shown, sale.unit);
  setPhase('playing');
}

// --- Redemption, then the checks, then (only then) the outcome

async function redeem() {
  const id = parseUnitId(shown.id, modules());
  const redemption = await request('POST', '/v1/redemptions', { id: shown.id });
  shown.redeemed = true;
  setPhase('verifying');
  const sealed = await request('GET', `/v1/blocks/${id.slug}/${id.emission}/${id.block}`);
  const meta = document.querySelector('meta[name="issuer-public-key"]');
  const verdict = await verify(redemption, sealed, shown, meta ? meta.content : '', modules());
  show(verdict);
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
  $('roll').addEventListener('click', act(() => shown.game.step(shown, request)));
  $('stop').addEventListener('click', act(() => shown.game.stop(shown, request)));
  $('redeem').addEventListener('click', act(redeem));
  $('again').addEventListener('click', act(async () => {
    reset();
  }));
  // The games are listed once there is a token to ask for them with.
  $('token').addEventListener('change', act(loadGames));
  reset();
  if ($('token').value.trim()) {
    act(loadGames)();
  } else {
    say('Saisissez le jeton de la plateforme pour voir les jeux.');
    refreshButtons();
  }
}

start();
