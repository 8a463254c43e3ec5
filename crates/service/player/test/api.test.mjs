// The API's refusals in the player's words: every code the page may meet
// while buying, playing or cashing says something French, never the
// operator's sentence.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { refusalWords } from '../api.js';

test('a refusal is told in French by its code, and an unknown one names only its code', () => {
  for (const code of ['sold_out', 'suspended', 'emission_closed', 'play_over', 'bad_stop',
    'already_redeemed', 'unauthorized', 'ledger_unavailable', 'overloaded']) {
    const words = refusalWords(code, 409);
    assert.ok(!/close a new emission|operator|emission \d/i.test(words), `${code}: ${words}`);
    assert.ok(/[àâçéèêëîïôûù«]|ce |le |la /i.test(words), `${code} in French: ${words}`);
  }
  assert.match(refusalWords('sold_out', 409), /Plus aucun ticket/);
  assert.equal(refusalWords('something_new', 409), 'Le service a refusé la demande (code something_new).');
  assert.match(refusalWords(undefined, 502), /indisponible/);
});
