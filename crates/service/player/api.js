// The API (docs/API.md): one request, retried on a lost connection or a
// 503, its JSON answer or a Failure saying what went wrong.

import { Failure } from './format.js';

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
