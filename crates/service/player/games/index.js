// Every game this page plays, by slug: a game's module exports its `slug`,
// `facts` (header code, ID prefix, rules version, record size, header
// parameters), `decode`, `replay` and `check` (its record against
// what was shown and paid), and the page's `start`, `draw`, `step`,
// `mayStop` and `stop`. A new game is its module and one line here; the
// page offers the games GET /v1/games lists that this table holds.

import * as ileAuTresor from './ile-au-tresor.js';
import * as tresorsEnsables from './tresors-ensables.js';

export const GAMES = Object.fromEntries([
  ileAuTresor,
  tresorsEnsables,
].map((game) => [game.slug, game]));
