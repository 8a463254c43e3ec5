// The repository's fixtures, read as the Rust tests read them.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

export function text(path) {
  return readFileSync(root + path, 'utf8');
}

export function json(path) {
  return JSON.parse(text(path));
}

export function bytes(path) {
  return new Uint8Array(readFileSync(root + path));
}

export function unhex(hex) {
  return Uint8Array.from(hex.match(/../g) || [], (b) => parseInt(b, 16));
}

/** `name: value` lines of a vector file (fixtures/derive, keys.txt). */
export function values(path) {
  return text(path).split('\n').filter((l) => l && !l.startsWith('#')).map((l) => {
    const at = l.indexOf(': ');
    return [l.slice(0, at), l.slice(at + 2)];
  });
}

/** Euros as the API writes them: 10 → "0.1", 100 → "1". */
export function apiEuros(cents) {
  return String(cents / 100);
}
