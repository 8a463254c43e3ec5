// The API (docs/API.md): one request, retried on a lost connection or a
// 503, its JSON answer or a Failure saying what went wrong.

import { Failure } from './format.js';

/**
 * A refusal in the player's words, by its code (API.md §Errors): never the
 * operator's sentence the answer carries for the platform's developers.
 */
const REFUSALS = {
  sold_out: 'Plus aucun ticket de ce jeu à ce prix pour le moment : essayez un autre prix ou revenez plus tard.',
  suspended: 'Ce jeu est momentanément suspendu : revenez plus tard.',
  emission_closed: "Ce jeu n'est plus en vente : sa période est terminée.",
  emission_revealed: "Ce jeu n'est plus en vente : sa période est terminée.",
  play_over: 'Cette partie est déjà terminée.',
  play_unfinished: "La partie n'est pas terminée : jouez-la jusqu'au bout avant d'encaisser.",
  bad_stop: "« Arrêter » n'est pas possible à ce moment de la partie.",
  roll_out_of_order: 'Ce lancer a déjà été joué.',
  already_redeemed: 'Ce ticket a déjà été encaissé.',
  not_sold: "Ce ticket n'a pas été vendu.",
  unknown_unit: "Ce ticket n'existe pas.",
  invalid_id: "Ce n'est pas un identifiant de ticket.",
  wrong_check_code: "Ce n'est pas un identifiant de ticket.",
  unauthorized: "Le jeton de la plateforme n'est pas reconnu.",
  forbidden: "Le jeton de la plateforme n'y donne pas droit.",
  ledger_unavailable: 'Le service est momentanément indisponible ; réessayez dans un instant.',
  ledger_outcome_unknown: "Le service n'a pas pu confirmer l'opération : elle a peut-être été faite ; consultez votre historique avant de recommencer.",
  overloaded: 'Le service est très sollicité ; réessayez dans un instant.',
};

/** What the player reads of a refusal coded `code` (status `status`). */
export function refusalWords(code, status) {
  return REFUSALS[code]
    || (status >= 500 ? 'Le service est momentanément indisponible ; réessayez dans un instant.'
      : `Le service a refusé la demande (code ${code || status}).`);
}

export async function api(method, path, body, token) {
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
      throw new Failure(`Le service a répondu d'une façon que cette page ne lit pas (statut ${response.status}) ; réessayez.`);
    }
    if (response.status === 503 && attempt < 3) {
      await new Promise((done) => { setTimeout(done, 1000); });
      continue;
    }
    if (!response.ok) {
      throw new Failure(refusalWords(answer.error, response.status), answer.error);
    }
    return answer;
  }
}
