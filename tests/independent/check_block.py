#!/usr/bin/env python3
"""Checks a ticket-issuer block file from docs/FORMAT.md alone.

Written from the specification, not from the Rust code: it shares no code
with the issuer, only the document. Uses the standard library (hashlib,
hmac, struct), the `cryptography` package (Ed25519, ChaCha20-Poly1305,
ChaCha20) and the `zstd` command-line tool.

    check_block.py BLOCK --public-key issuer.pub.pem
                   [--records-key records-key.json] [--seed HEX]

Without a records key it checks what anyone can (§Seal: header, layout,
index digest, chunk digests, seal, chunk roots against the Merkle root).
With the key it also opens every chunk and checks every record (§Unit
record, §Lots; a Trésors Ensablés record is decoded by §Trésors Ensablés
payload and replayed to the end against its prefix's lot and prize), every
chunk's subtree root and the Merkle root
from the leaves (§Merkle tree), and the lot table and total. With a
revealed block seed it also checks the seed commitment, the lot order
(§Randomness) and every check code (§Keys and derivations).

Prints a JSON summary on stdout, one line per failure on stderr.
Exit status: 0 every check passed, 1 a check failed, 2 bad usage, a file
that cannot be read as a block (including an unsupported format version), or
a records key that is not the block's.
"""

import argparse
import hashlib
import hmac
import json
import struct
import subprocess
import sys

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

# §Header
MAGIC = b"TKTBLOCK"
FORMAT_VERSION = 1
FIXED_HEADER_LEN = 213
TIER_LEN = 9
INDEX_ENTRY_LEN = 80
SEAL_LEN = 64

# §Chunks: every chunk's plaintext is one zstd frame (RFC 8878).
ZSTD_MAGIC = 0xFD2FB528

# §Header, games table: code -> (slug, ID prefix, rules version, record size,
# params, (fewest, most) units in a block)
GAMES = {
    1: ("ile-au-tresor", "IAT", 1, 53, (8, 8), (450000, 450000)),
    2: ("tresors-ensables", "TE", 1, 80, (60, 3), (1, 10000000)),
}
TRESORS = 2

# §Trésors Ensablés payload: square codes, chest value tables (cents) by
# chest (squares 6, 12, ..., 60), the rules' outcomes (3.2.2).
BLANK, START, BRONZE, SILVER, GOLD = 1, 0, 7, 8, 9
LIFE = {2: 1, 3: 2, 4: -1, 5: -2, 6: -3}
TE_CHEST_CODES = [BRONZE, SILVER] * 4 + [BRONZE, GOLD]
TE_VALUES = {BRONZE: [10, 20, 50], SILVER: [50, 100, 200],
             GOLD: [100, 200, 500, 1000, 10000, 1000000]}
TE_RULES = [(1, 2, 3), (4, 5, 6), (4, 1, 2)]

# §Lots: lot code -> (content code, count); amounts per price (cents).
LOT_GROUPS = {1: (1, 3), 2: (2, 3), 3: (3, 3), 4: (4, 3),
              5: (1, 2), 6: (2, 2), 7: (3, 2), 8: (4, 2), 9: (1, 1)}
LOT_COUNTS = [1, 3, 100, 1000, 500, 2000, 26000, 38000, 52000]
LOT_AMOUNTS = {
    50: [500000, 25000, 7500, 2500, 1250, 500, 150, 100, 50],
    100: [1000000, 50000, 15000, 5000, 2500, 1000, 300, 200, 100],
    200: [2000000, 100000, 30000, 10000, 5000, 2000, 600, 400, 200],
}

# §Unit record: direction code -> (dx, dy); x grows east, y grows south.
DELTAS = [(0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1)]

LABEL = b"ticket-issuer/v1/"
MAX_REPORTED = 50


class Unreadable(Exception):
    """The input cannot be read as a block (exit 2)."""


class Report:
    def __init__(self):
        self.failures = []
        self.count = 0
        self.checks = {}

    def fail(self, check, message):
        self.count += 1
        self.checks[check] = "failed"
        if len(self.failures) < MAX_REPORTED:
            self.failures.append({"check": check, "message": message})
            print(f"FAIL {check}: {message}", file=sys.stderr)

    def passed(self, check):
        self.checks.setdefault(check, "passed")


def sha256(data):
    return hashlib.sha256(data).digest()


def hmac_sha256(key, message):
    return hmac.new(key, message, hashlib.sha256).digest()


# §Merkle tree: RFC 9162 §2.1.1, written from the RFC's definition.
def mth(hashes):
    """Merkle Tree Hash over entries already hashed (leaf hashes or roots of
    aligned complete subtrees)."""
    n = len(hashes)
    if n == 0:
        return sha256(b"")
    if n == 1:
        return hashes[0]
    k = 1
    while k * 2 < n:
        k *= 2
    return sha256(b"\x01" + mth(hashes[:k]) + mth(hashes[k:]))


def leaf_hashes(records, size):
    return [sha256(b"\x00" + records[i:i + size]) for i in range(0, len(records), size)]


# §Randomness
class Stream:
    """Stream s of seed k: ChaCha20 keystream, key k, 64-bit block counter
    from 0, 64-bit nonce s, read as consecutive u32 LE words."""

    def __init__(self, seed, s):
        nonce = bytes(8) + struct.pack("<Q", s)
        self._enc = Cipher(algorithms.ChaCha20(seed, nonce), mode=None).encryptor()
        self._words = []
        self._at = 0

    def next_u32(self):
        if self._at == len(self._words):
            block = self._enc.update(bytes(4096))
            self._words = struct.unpack("<1024I", block)
            self._at = 0
        w = self._words[self._at]
        self._at += 1
        return w

    def below(self, n):
        threshold = (2**32 - n) % n
        while True:
            m = self.next_u32() * n
            if m & 0xFFFFFFFF >= threshold:
                return m >> 32

    def shuffle(self, items):
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def parse_header(data, file_len):
    """§Header. Raises Unreadable when the bytes are not a version-1 header."""
    if len(data) < 12:
        raise Unreadable(f"file is {len(data)} bytes, too short for a block header")
    if data[:8] != MAGIC:
        raise Unreadable(f"not a block file (magic {data[:8].hex()}, expected {MAGIC.hex()})")
    version, header_len = struct.unpack_from("<HH", data, 8)
    if version != FORMAT_VERSION:
        raise Unreadable(f"unsupported format version {version} (this checker reads {FORMAT_VERSION})")
    if header_len < FIXED_HEADER_LEN or len(data) < header_len:
        raise Unreadable(f"header length {header_len} is impossible for a file of {file_len} bytes")
    (game, rules, emission, block, price, units, record_size, p0, p1,
     chunk_units, chunk_count, seal_offset) = struct.unpack_from("<HHIIIIHBBIIQ", data, 12)
    h = {
        "header_len": header_len, "game": game, "rules_version": rules,
        "emission": emission, "block": block, "price_cents": price,
        "unit_count": units, "record_size": record_size, "params": (p0, p1),
        "chunk_units": chunk_units, "chunk_count": chunk_count,
        "seal_offset": seal_offset,
        "seed_commitment": data[52:84], "merkle_root": data[84:116],
        "index_sha256": data[116:148], "records_key_id": data[148:180],
        "signer": data[180:212], "tier_count": data[212],
    }
    if header_len != FIXED_HEADER_LEN + TIER_LEN * h["tier_count"]:
        raise Unreadable(f"header length {header_len} does not match {h['tier_count']} lot tiers")
    h["tiers"] = [struct.unpack_from("<BII", data, FIXED_HEADER_LEN + TIER_LEN * i)
                  for i in range(h["tier_count"])]
    if game not in GAMES:
        raise Unreadable(f"unknown game code {game}")
    slug, _, rules_version, size, params, (fewest, most) = GAMES[game]
    if rules != rules_version or record_size != size or h["params"] != params:
        raise Unreadable(f"{slug}: rules version {rules}, record size {record_size}, "
                         f"params {h['params']}: not the version-{rules_version} model")
    if not fewest <= units <= most:
        raise Unreadable(f"{slug}: unit count {units}, a block holds {fewest} to {most}")
    if chunk_units == 0 or chunk_units & (chunk_units - 1):
        raise Unreadable(f"chunk size {chunk_units} is not a power of two")
    if chunk_count != -(-units // chunk_units):
        raise Unreadable(f"{chunk_count} chunks cannot hold {units} units of {chunk_units}")
    return h


def units_in_chunk(h, i):
    return min(h["chunk_units"], h["unit_count"] - i * h["chunk_units"])


def check_structure(data, h, public_key, r):
    """§Seal: everything that needs no key. Returns the parsed index."""
    header = data[:h["header_len"]]
    index_at = h["header_len"]
    index_len = INDEX_ENTRY_LEN * h["chunk_count"]
    index_bytes = data[index_at:index_at + index_len]

    if len(data) != h["seal_offset"] + SEAL_LEN:
        r.fail("layout", f"file is {len(data)} bytes, header says {h['seal_offset'] + SEAL_LEN}")
    entries = [struct.unpack_from("<QII32s32s", index_bytes, INDEX_ENTRY_LEN * i)
               for i in range(len(index_bytes) // INDEX_ENTRY_LEN)]
    offset = index_at + index_len
    for i, (off, length, units, _, _) in enumerate(entries):
        if off != offset or units != units_in_chunk(h, i):
            r.fail("layout", f"index entry {i}: offset {off}, {units} units; "
                             f"expected offset {offset}, {units_in_chunk(h, i)} units")
        offset = off + length
    if len(entries) != h["chunk_count"]:
        r.fail("layout", f"index has {len(entries)} entries, header says {h['chunk_count']}")
    elif offset != h["seal_offset"]:
        r.fail("layout", f"chunks end at {offset}, the seal is at {h['seal_offset']}")
    r.passed("layout")

    if sha256(index_bytes) != h["index_sha256"]:
        r.fail("index_digest", "SHA-256 of the chunk index is not the header's index digest")
    r.passed("index_digest")

    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    if h["signer"] != raw:
        r.fail("seal", f"header names signer {h['signer'].hex()}, trusted key is {raw.hex()}")
    try:
        public_key.verify(data[h["seal_offset"]:h["seal_offset"] + SEAL_LEN], header)
    except InvalidSignature:
        r.fail("seal", "the seal is not the trusted key's Ed25519 signature of the header bytes")
    r.passed("seal")

    for i, (off, length, _, _, digest) in enumerate(entries):
        if sha256(data[off:off + length]) != digest:
            r.fail("chunk_digests", f"chunk {i}: ciphertext SHA-256 differs from the index")
    r.passed("chunk_digests")

    if mth([e[3] for e in entries]) != h["merkle_root"]:
        r.fail("index_roots", "the chunk subtree roots do not make the header's Merkle root")
    r.passed("index_roots")
    return entries


def block_records_key(key_file, h):
    """§Records key file and §Keys and derivations."""
    with open(key_file, encoding="utf-8") as f:
        k = json.load(f)
    if k.get("kind") != "ticket-issuer records key":
        raise Unreadable(f"{key_file}: not a records key file (kind {k.get('kind')!r})")
    slug = GAMES[h["game"]][0]
    if k["game"] != slug or k["emission"] != h["emission"]:
        raise Unreadable(f"{key_file}: key of {k['game']} emission {k['emission']}, "
                         f"block is {slug} emission {h['emission']}")
    key = bytes.fromhex(k["key"])
    if k["block"] is None:
        key = hmac_sha256(key, LABEL + b"block-records-key/" + str(h["block"]).encode())
    elif k["block"] != h["block"]:
        raise Unreadable(f"{key_file}: key of block {k['block']}, this is block {h['block']}")
    if sha256(LABEL + b"records-key-id" + key) != h["records_key_id"]:
        raise Unreadable(f"{key_file}: not this block's records key (key id differs)")
    return key


def zstd_frame_end(data):
    """Where the zstd frame starting data ends (RFC 8878 §3.1.1: frame
    header, blocks up to the last one, optional checksum), or an error."""
    if len(data) < 5 or struct.unpack_from("<I", data)[0] != ZSTD_MAGIC:
        raise ValueError("does not start with a zstd frame")
    fhd = data[4]
    fcs_flag, single, checksum, dict_flag = fhd >> 6, fhd >> 5 & 1, fhd >> 2 & 1, fhd & 3
    at = 5 + (1 - single) + [0, 1, 2, 4][dict_flag] + [single, 2, 4, 8][fcs_flag]
    last = False
    while not last:
        if at + 3 > len(data):
            raise ValueError("the zstd frame is cut short")
        bh = int.from_bytes(data[at:at + 3], "little")
        last, block_type, size = bh & 1, bh >> 1 & 3, bh >> 3
        at += 3 + (1 if block_type == 1 else size)  # an RLE block stores one byte
    at += 4 * checksum
    if at > len(data):
        raise ValueError("the zstd frame is cut short")
    return at


def open_chunk(data, h, entries, key, i):
    """§Chunks: AEAD open, then exactly one zstd frame, nothing after it."""
    off, length = entries[i][0], entries[i][1]
    ad = (MAGIC + struct.pack("<HH", FORMAT_VERSION, h["game"])
          + struct.pack("<IIII", h["emission"], h["block"], i, units_in_chunk(h, i)))
    nonce = struct.pack("<IIHH", i, h["price_cents"], h["rules_version"], FORMAT_VERSION)
    compressed = ChaCha20Poly1305(key).decrypt(nonce, data[off:off + length], ad)
    end = zstd_frame_end(compressed)
    if end != len(compressed):
        raise ValueError(f"not one zstd frame: {len(compressed) - end} more bytes "
                         f"(another frame?) follow the first frame's {end}")
    out = subprocess.run(["zstd", "-d", "-c", "-q"], input=compressed,
                         capture_output=True, check=False)
    if out.returncode != 0:
        raise ValueError("the zstd frame does not decompress ("
                         + out.stderr.decode(errors="replace").strip() + ")")
    return out.stdout


def judge(uncovered):
    """§Lots: the lot four uncovered contents win, or None if no
    valid unit can uncover them."""
    counts = [uncovered.count(c) for c in range(5)]
    if max(counts[1:]) == 4:
        return None
    groups = [lot for lot, (content, n) in LOT_GROUPS.items() if counts[content] == n]
    if len(groups) > 1:
        return None
    return groups[0] if groups else 0


def play(rec, width, height):
    """Plays one île payload (record bytes 14..53); returns the lot or an error."""
    if rec[14] != width or rec[15] != height:
        return f"map {rec[14]}x{rec[15]}, header says {width}x{height}"
    start = (rec[16], rec[17])
    chests = {}
    for c in range(9):
        x, y, content = rec[18 + 3 * c:21 + 3 * c]
        if x >= width or y >= height or content > 4:
            return f"chest {c} ({x}, {y}, content {content}) is invalid"
        if (x, y) == start or (x, y) in chests:
            return f"chest {c} on the start or on another chest at ({x}, {y})"
        chests[(x, y)] = content
    if start[0] >= width or start[1] >= height:
        return f"start {start} is off the map"
    at, seen, uncovered = start, {start}, []
    for t in range(4):
        direction, steps = rec[45 + 2 * t], rec[46 + 2 * t]
        if direction > 7 or steps == 0:
            return f"throw {t + 1} has direction {direction}, {steps} steps"
        dx, dy = DELTAS[direction]
        at = (at[0] + dx * steps, at[1] + dy * steps)
        if not (0 <= at[0] < width and 0 <= at[1] < height):
            return f"throw {t + 1} leaves the map"
        if at in seen:
            return f"throw {t + 1} lands again on {at}"
        if at not in chests:
            return f"throw {t + 1} lands on {at} where there is no chest"
        seen.add(at)
        uncovered.append(chests[at])
    lot = judge(uncovered)
    return f"uncovers {uncovered}, which no unit may" if lot is None else lot


def te_series_possible(series):
    """3.2.2: one outcome of each rule plus two blanks, in any places."""
    want = sorted(series)
    return any(sorted([a, b, c, BLANK, BLANK]) == want
               for a in TE_RULES[0] for b in TE_RULES[1] for c in TE_RULES[2])


def play_tresors(rec):
    """Decodes a Trésors Ensablés payload (record bytes 14..80) and plays it
    to the end; returns (lot, prize in cents) or an error string."""
    payload = rec[14:80]

    def nibbles(offset, count):
        return [(payload[offset + i // 2] >> (0 if i % 2 else 4)) & 0x0F for i in range(count)]

    board = [START] + nibbles(0, 60)
    for n in range(1, 61):
        fixed = TE_CHEST_CODES[n // 6 - 1] if n % 6 == 0 else None
        if fixed is not None and board[n] != fixed:
            return f"square {n} holds code {board[n]}, its chest is {fixed}"
        if fixed is None and board[n] not in (BLANK, *LIFE):
            return f"square {n} holds code {board[n]}"
    for first in range(1, 60, 6):
        if not te_series_possible(board[first:first + 5]):
            return f"series {first}-{first + 4} {board[first:first + 5]} is no draw of 3.2.2"
    values = nibbles(30, 10)
    chest_cents = []
    for k, v in enumerate(values):
        table = TE_VALUES[TE_CHEST_CODES[k]]
        if v >= len(table):
            return f"chest {k + 1} has value code {v}"
        chest_cents.append(table[v])
    n = payload[35]
    dice = nibbles(36, 60)
    if not 10 <= n <= 60:
        return f"tape of {n} rolls"
    if any(d != 0 for d in dice[n:]) or not all(1 <= d <= 6 for d in dice[:n]):
        return f"dice {dice} (tape of {n})"
    square, life, found, dead = 0, 3, 0, False
    for t, die in enumerate(dice[:n], 1):
        square = min(square + die, 60)
        code = board[square]
        if code in LIFE:
            life = min(life + LIFE[code], 3)
        elif code in TE_VALUES:
            found += chest_cents[square // 6 - 1]
        # A death loses everything; the tape still runs to 60.
        dead = dead or life <= 0
        if square == 60:
            if t != n:
                return f"roll {t} reaches 60 before the tape's end ({n})"
            return (0, 0) if dead else (1, found)
    return f"the tape of {n} rolls ends on square {square}"


def check_records(data, h, entries, key, r, summary):
    size = h["record_size"]
    amounts = {code: amount for code, _, amount in h["tiers"]}
    amounts[0] = 0
    width, height = h["params"]
    counts = {code: 0 for code in amounts}
    total = 0
    leaves = []
    lots = []
    check_codes = []
    for i in range(h["chunk_count"]):
        try:
            records = open_chunk(data, h, entries, key, i)
        except InvalidTag:
            r.fail("chunks", f"chunk {i}: ChaCha20-Poly1305 tag does not verify")
            continue
        except ValueError as e:
            r.fail("chunks", f"chunk {i}: {e}")
            continue
        units = units_in_chunk(h, i)
        if len(records) != units * size:
            r.fail("chunks", f"chunk {i}: {len(records)} bytes, expected {units} records of {size}")
            continue
        chunk_leaves = leaf_hashes(records, size)
        if mth(chunk_leaves) != entries[i][3]:
            r.fail("subtree_roots", f"chunk {i}: records do not hash to the index's subtree root")
        leaves.extend(chunk_leaves)
        first = i * h["chunk_units"]
        for n, at in enumerate(range(0, len(records), size)):
            rec = records[at:at + size]
            index, check, lot, prize = struct.unpack_from("<I5sBI", rec)
            unit = first + n
            lots.append(lot)
            check_codes.append(check)
            if index != unit:
                r.fail("records", f"unit {unit}: record says index {index}")
            if h["game"] == TRESORS:
                played = play_tresors(rec)
                if played != (lot, prize):
                    r.fail("records", f"unit {unit} (lot {lot}, {prize} cents): {played}")
                counts[lot] = counts.get(lot, 0) + 1
                total += prize
                continue
            if lot not in amounts:
                r.fail("records", f"unit {unit}: lot code {lot} is not in the lot table")
                continue
            if prize != amounts[lot]:
                r.fail("records", f"unit {unit}: prize {prize} cents, lot {lot} is {amounts[lot]}")
            played = play(rec, width, height)
            if played != lot:
                r.fail("records", f"unit {unit} (lot {lot}): {played}")
            counts[lot] += 1
            total += prize
    r.passed("chunks")
    r.passed("subtree_roots")
    r.passed("records")

    if len(leaves) == h["unit_count"]:
        root = mth(leaves)
        summary["merkle_root_recomputed"] = root.hex()
        if root != h["merkle_root"]:
            r.fail("merkle_root", f"records hash to {root.hex()}, header says {h['merkle_root'].hex()}")
        r.passed("merkle_root")
    else:
        r.fail("merkle_root", "not every chunk could be read")

    if h["game"] == TRESORS:
        # A drawn game: no lot table, one price.
        if h["tiers"] or h["price_cents"] != 100:
            r.fail("lot_table", f"tiers {h['tiers']} at {h['price_cents']} cents: "
                                "Trésors Ensablés has no lot table and costs 1 €")
        r.passed("lot_table")
        summary["lots"] = {str(code): counts[code] for code in sorted(counts)}
        summary["total_cents"] = total
        return lots, check_codes
    expected = [(code, count, amount) for code, (count, amount)
                in enumerate(zip(LOT_COUNTS, LOT_AMOUNTS.get(h["price_cents"], [])), 1)]
    if h["tiers"] != expected:
        r.fail("lot_table", f"header lot table {h['tiers']} is not the regulation's "
                            f"for {h['price_cents']} cents")
    for code, count, _ in h["tiers"]:
        if counts.get(code) != count:
            r.fail("lot_table", f"lot {code}: {counts.get(code)} units, table says {count}")
    losers = h["unit_count"] - sum(t[1] for t in h["tiers"])
    if counts[0] != losers:
        r.fail("lot_table", f"{counts[0]} losing units, expected {losers}")
    table_total = sum(count * amount for _, count, amount in h["tiers"])
    if total != table_total:
        r.fail("lot_table", f"prizes total {total} cents, the table {table_total}")
    r.passed("lot_table")
    summary["lots"] = {str(code): counts[code] for code in sorted(counts)}
    summary["total_cents"] = total
    return lots, check_codes


def check_seed(seed, h, lots, check_codes, r):
    """§Randomness and §Keys and derivations, given a revealed block seed."""
    if sha256(seed) != h["seed_commitment"]:
        r.fail("seed_commitment", "SHA-256 of the seed is not the header's commitment")
    r.passed("seed_commitment")
    if h["game"] != TRESORS:  # a drawn game has no lot order (stream 0 unused)
        order = []
        for code, count, _ in h["tiers"]:
            order.extend([code] * count)
        order.extend([0] * (h["unit_count"] - len(order)))
        Stream(seed, 0).shuffle(order)
        if lots != order:
            first = next((i for i, (a, b) in enumerate(zip(lots, order)) if a != b), len(lots))
            r.fail("lot_order", f"lot order differs from the seed's shuffle (first at unit {first})")
        r.passed("lot_order")
    prefix = LABEL + b"check-code/"
    for i, check in enumerate(check_codes):
        if hmac_sha256(seed, prefix + struct.pack("<I", i))[:5] != check:
            r.fail("check_codes", f"unit {i}: check code differs from the seed's")
    r.passed("check_codes")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("block")
    p.add_argument("--public-key", required=True, help="issuer public key, SPKI PEM")
    p.add_argument("--records-key", help="records key file (JSON)")
    p.add_argument("--seed", help="the block's revealed seed, 64 hex digits")
    args = p.parse_args()

    try:
        with open(args.block, "rb") as f:
            data = f.read()
        with open(args.public_key, "rb") as f:
            public_key = serialization.load_pem_public_key(f.read())
        if not isinstance(public_key, Ed25519PublicKey):
            raise Unreadable(f"{args.public_key}: not an Ed25519 public key")
        h = parse_header(data, len(data))
        key = block_records_key(args.records_key, h) if args.records_key else None
        seed = bytes.fromhex(args.seed) if args.seed else None
        if seed is not None and len(seed) != 32:
            raise Unreadable("--seed must be 64 hex digits")
    except (OSError, ValueError, KeyError, Unreadable) as e:
        print(f"cannot check {args.block}: {e}", file=sys.stderr)
        return 2

    r = Report()
    summary = {
        "block": args.block,
        "game": GAMES[h["game"]][0],
        "emission": h["emission"],
        "block_number": h["block"],
        "price_cents": h["price_cents"],
        "units": h["unit_count"],
        "merkle_root": h["merkle_root"].hex(),
        "merkle_root_recomputed": None,
        "lots": None,
        "total_cents": None,
    }
    entries = check_structure(data, h, public_key, r)
    if key is not None and len(entries) == h["chunk_count"]:
        lots, check_codes = check_records(data, h, entries, key, r, summary)
        if seed is not None:
            check_seed(seed, h, lots, check_codes, r)
    summary["checks"] = r.checks
    summary["failure_count"] = r.count
    summary["failures"] = r.failures
    summary["ok"] = r.count == 0
    print(json.dumps(summary))
    return 0 if r.count == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
