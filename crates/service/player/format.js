// Bytes, integers, money and the block format's shared parts (FORMAT.md
// §Unit ID, §Header, §Unit record): what every game's checks rest on. No
// game is named here; the games' facts come from games/index.js.

/**
 * A refusal of the outcome: `check` names the check that failed. Its
 * words never repeat an amount an answer claimed: a refusal shows no win.
 */
export class Refusal extends Error {
  constructor(check, detail) {
    super(detail);
    this.check = check;
  }
}

/** A request that failed (`code`: the API's error code), or an answer the page cannot use. */
export class Failure extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

export function bytesOfHex(hex, what, check) {
  if (typeof hex !== 'string' || hex.length % 2 !== 0 || /[^0-9a-f]/i.test(hex)) {
    throw new Refusal(check, `${what} n'est pas une suite d'octets en hexadécimal`);
  }
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i += 1) {
    bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  }
  return bytes;
}

export function hexOf(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function sameBytes(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export function u16(b, at) {
  return b[at] | (b[at + 1] << 8);
}

export function u32(b, at) {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Euros as the API writes them ("0.1", "3.2", "10000") in cents. */
export function centsOf(euros, what, check) {
  const m = typeof euros === 'string' ? /^(0|[1-9][0-9]{0,9})(?:\.([0-9]{1,2}))?$/.exec(euros) : null;
  if (!m) {
    throw new Refusal(check, `${what} (${JSON.stringify(euros)}) n'est pas un montant en euros`);
  }
  return Number(m[1]) * 100 + Number((m[2] || '').padEnd(2, '0'));
}

/** Cents as the player reads them: "10 010,50 €". */
export function euros(cents) {
  const whole = Math.floor(cents / 100).toString().replace(/\B(?=([0-9]{3})+(?![0-9]))/g, '\u202f');
  return `${whole},${String(cents % 100).padStart(2, '0')} €`;
}

/** A price on a button: "1 €", "0,50 €" (whole euros without cents). */
export function priceLabel(cents) {
  return cents % 100 === 0 ? `${euros(cents).replace(/,00 €$/, '')} €` : euros(cents);
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The game of `games` (slug → module) whose `facts` satisfy `which`. */
function slugWhere(games, which) {
  return Object.keys(games).find((slug) => which(games[slug].facts));
}

/** A unit ID read as FORMAT.md §Unit ID says, its game one of `games`. */
export function parseUnitId(text, games) {
  const parts = String(text).trim().split('-');
  const number = (s) => (/^[0-9]{1,10}$/.test(s) ? Number(s) : NaN);
  if (parts.length !== 5) {
    throw new Refusal('unit ID', `${text} n'est pas de la forme PRÉFIXE-émission-bloc-rang-contrôle`);
  }
  const [prefix, emission, block, index] = [parts[0].toUpperCase(), ...parts.slice(1, 4).map(number)];
  const slug = slugWhere(games, (f) => f.prefix === prefix);
  const check = parts[4].toUpperCase().replace(/[IL]/g, '1').replace(/O/g, '0');
  if (!slug || [emission, block, index].some((n) => !Number.isSafeInteger(n) || n > 0xffffffff)
    || check.length !== 8 || [...check].some((c) => !CROCKFORD.includes(c))) {
    throw new Refusal('unit ID', `${text} n'est pas un identifiant de ticket`);
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
export function parseHeader(h, games) {
  const magic = 'TKTBLOCK';
  if (h.length < 213 || [...magic].some((c, i) => h[i] !== c.charCodeAt(0))) {
    throw new Refusal('header', "l'en-tête scellé ne commence pas par TKTBLOCK");
  }
  if (u16(h, 8) !== 1) {
    throw new Refusal('header', `le bloc est au format ${u16(h, 8)} ; cette page lit le format 1`);
  }
  if (u16(h, 10) !== h.length || h.length !== 213 + 9 * h[212]) {
    throw new Refusal('header', `l'en-tête fait ${h.length} octets, son champ header_len dit ${u16(h, 10)}`);
  }
  const code = u16(h, 12);
  const slug = slugWhere(games, (f) => f.code === code && f.rulesVersion === u16(h, 14));
  if (!slug) {
    throw new Refusal('header', `jeu de code ${code}, règles version ${u16(h, 14)} : cette page ne sait pas y jouer`);
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

/** The record's lot and prize fields (FORMAT.md §Unit record), as the replay must find them. */
export function prefixOf(record) {
  return { lot: record[9], prizeCents: u32(record, 10) };
}
