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

/** Each check's name as the player reads it (verify.js names them). */
const CHECK_LABEL = {
  seal: 'sceau',
  signer: 'signataire',
  header: 'en-tête du bloc',
  'unit ID': 'identifiant du ticket',
  'inclusion proof': "preuve d'inclusion",
  rules: 'règles du jeu',
  display: 'affichage',
  prize: 'gain',
};
const label = (check) => CHECK_LABEL[check] || check;

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
      // A refusal the player can act on (sold out, suspended…) leaves the
      // page as it was; anything else is an error of this page.
      if (!(e instanceof Failure && e.code)) {
        setPhase('error');
      }
      say(e instanceof Failure ? e.message : "Cette page a rencontré une erreur ; rechargez-la et réessayez.");
      if (!(e instanceof Failure)) {
        console.error(e);
      }
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
  // A game without « Arrêter » (L'île au trésor) shows no such button.
  $('stop').hidden = Boolean(shown && shown.game.hasStop === false);
  $('redeem').disabled = !(shown && shown.over && !shown.redeemed && !shown.lost);
  $('redeem').hidden = Boolean(shown && shown.lost);
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
    throw new Failure("Le service n'a pas donné la liste des jeux ; rechargez la page.");
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
    for (const price of await onSale(info)) {
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
  if (!buttons.length) {
    say("Aucun jeu n'est en vente pour le moment.");
  } else if (unplayable.length) {
    say(`Cette page ne sait pas jouer : ${unplayable.join(', ')}.`);
  }
}

/**
 * The prices of the game `info` with tickets left to sell (GET
 * /v1/remaining: units not withdrawn, less those sold): a price with
 * none on sale is not offered.
 */
async function onSale(info) {
  const prices = [];
  for (const price of info.prices) {
    const query = `game=${encodeURIComponent(info.slug)}&price=${encodeURIComponent(price.euros)}`;
    const left = await request('GET', `/v1/remaining?${query}`);
    if (left.kind === 'remaining' && Number.isSafeInteger(left.units) && left.units - left.sold > 0) {
      prices.push(price);
    }
  }
  return prices;
}

async function buy(slug, price) {
  reset();
  const { info, game } = offered[slug];
  const sale = await request('POST', '/v1/sales', { game: slug, price });
  if (sale.kind !== 'sale' || sale.game !== slug || typeof sale.id !== 'string') {
    throw new Failure("La vente n'a pas donné de ticket de ce jeu ; réessayez.");
  }
  shown = { slug, info, game, sale, id: sale.id, over: false, redeemed: false, lost: false };
  $('game-title').textContent = `${info.name} · ${euros(centsOf(sale.price, 'the price', 'sale'))}`;
  $('unit-id').textContent = sale.id;
  $('game').hidden = false;
  game.start(shown, sale.unit);
  setPhase('playing');
}

// --- Redemption, then the checks, then (only then) the outcome

async function redeem() {
  const redemption = await request('POST', '/v1/redemptions', { id: shown.id });
  shown.redeemed = true;
  await checkAndShow(redemption);
}

/**
 * A play over that wins nothing: nothing to cash, its result verified all
 * the same from the unit's own answer (GET /v1/units/{id}: its record and
 * proof), with the same checks as a redemption's.
 */
async function showLoss() {
  shown.lost = true;
  shown.redeemed = true;
  const unit = await request('GET', `/v1/units/${encodeURIComponent(shown.id)}`);
  await checkAndShow(unit);
}

/** The checks of `answer` (a redemption, or a unit's check), then the verdict. */
async function checkAndShow(answer) {
  const id = parseUnitId(shown.id, modules());
  setPhase('verifying');
  const sealed = await request('GET', `/v1/blocks/${id.slug}/${id.emission}/${id.block}`);
  const meta = document.querySelector('meta[name="issuer-public-key"]');
  const verdict = await verify(answer, sealed, shown, meta ? meta.content : '', modules());
  show(verdict);
}

/** After each step: a play over that lost is verified at once. */
async function afterStep() {
  if (shown && shown.over && !shown.redeemed && shown.game.lost && shown.game.lost(shown)) {
    await showLoss();
  }
}

function show(verdict) {
  $('verification').hidden = false;
  const checks = $('checks');
  for (const p of verdict.passed) {
    const li = el('li', 'ok', `${label(p.name)} : ${p.detail}`);
    li.dataset.check = p.name;
    checks.append(li);
  }
  if (!verdict.ok) {
    const f = verdict.failed;
    const li = el('li', 'failed', `${label(f.check)} : ${f.message}`);
    li.dataset.check = f.check;
    checks.append(li);
    $('verdict').dataset.verdict = 'refused';
    $('verdict').dataset.check = f.check;
    $('verdict').textContent = `Refusé : la vérification « ${label(f.check)} » a échoué : ${f.message}. Ce résultat n'est pas affiché ; signalez le ticket ${shown.id} au support.`;
    $('outcome').hidden = true;
    setPhase('refused');
    return;
  }
  const facts = $('facts');
  for (const [term, value] of [
    ['signataire', verdict.facts.signer],
    ['racine scellée', verdict.facts.root],
    ['empreinte du ticket', verdict.facts.leaf],
    ['position', verdict.facts.place],
  ]) {
    facts.append(el('dt', '', term), el('dd', '', value));
  }
  $('verdict').dataset.verdict = 'verified';
  $('verdict').textContent = 'Vérifié : le résultat ci-dessous est celui du ticket scellé, tel que joué et affiché.';
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
  $('roll').addEventListener('click', act(async () => {
    await shown.game.step(shown, request);
    await afterStep();
  }));
  $('stop').addEventListener('click', act(async () => {
    await shown.game.stop(shown, request);
    await afterStep();
  }));
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
