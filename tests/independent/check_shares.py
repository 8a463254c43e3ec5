#!/usr/bin/env python3
"""Re-derives the seeds of a ticket-issuer emission made from shares.

Written from docs/FORMAT.md §Keys and derivations (§Share-derived seeds)
and docs/EMISSIONS.md (§Manifest, §Reveal, §A seed no one party controls)
alone: it shares no code with the issuer. Uses the standard library only
(hashlib, hmac, json, struct).

    check_shares.py MANIFEST REVEAL

From the emission's manifest (its `seed_shares` commitments and beacon
round) and the reveal file (every share and the beacon value), it checks
every share against its party's commitment, derives the emission seed key
and every block seed, and compares each seed with the one revealed, with
the manifest's `seed_commitment` and with the block file's header (offset
52; the block files are read from the manifest's folder, named by their
`file`). It does not check the manifest's signature (that needs Ed25519:
`openssl pkeyutl -verify`, EMISSIONS.md §Its signature).

Prints a JSON summary on stdout, one line per failure on stderr.
Exit status: 0 every check passed, 1 a check failed, 2 bad usage or a file
that can't be read.
"""

import hashlib
import hmac
import json
import os
import struct
import sys

LABEL = b"ticket-issuer/v1/"
SEED_COMMITMENT_OFFSET = 52
MAGIC = b"TKTBLOCK"


def sha256(data):
    return hashlib.sha256(data).digest()


def hmac_sha256(key, message):
    return hmac.new(key, message, hashlib.sha256).digest()


def share_commitment(game, emission, party, share):
    label = LABEL + b"share-commitment/%s/%d" % (game.encode(), emission)
    return sha256(label + b"\x00" + party.encode() + b"\x00" + share)


def seed_contributions(shares, beacon):
    data = LABEL + b"seed-contributions" + b"\x00"
    data += struct.pack("<I", len(shares))
    for party, share in sorted(shares, key=lambda s: s[0].encode()):
        data += party.encode() + b"\x00" + share
    if beacon is None:
        data += b"\x00"
    else:
        name, round_, value = beacon
        data += b"\x01" + name.encode() + b"\x00"
        data += struct.pack("<Q", round_) + struct.pack("<I", len(value)) + value
    return sha256(data)


def emission_seed_key(contributions, game, emission):
    return hmac_sha256(contributions, LABEL + b"emission-seed-key/%s/%d" % (game.encode(), emission))


def block_seed(key, game, emission, block):
    return hmac_sha256(key, LABEL + b"block-seed/%s/%d/%d" % (game.encode(), emission, block))


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    manifest_path, reveal_path = argv[1], argv[2]
    try:
        with open(manifest_path, "rb") as f:
            manifest = json.load(f)
        with open(reveal_path, "rb") as f:
            reveal = json.load(f)
    except (OSError, ValueError) as e:
        print(f"cannot read: {e}", file=sys.stderr)
        return 2

    failures = []

    def fail(message):
        failures.append(message)
        print(message, file=sys.stderr)

    game, emission = manifest["game"], manifest["emission"]
    if (reveal["game"], reveal["emission"]) != (game, emission):
        fail(f"the reveal is of {reveal['game']} emission {reveal['emission']}, not {game} emission {emission}")
    committed = manifest.get("seed_shares")
    revealed = reveal.get("seed_shares")
    if manifest.get("version") != 2 or committed is None or revealed is None:
        fail("not an emission made from shares: the manifest (version 2) and the reveal both need seed_shares")
        print(json.dumps({"ok": False, "failures": failures}))
        return 1

    # Every committed party's share, each matching its commitment.
    commitments = {c["party"]: c["commitment"] for c in committed["commitments"]}
    shares = []
    for s in revealed["shares"]:
        party, share = s["party"], bytes.fromhex(s["share"])
        if len(share) != 32:
            fail(f"party {party}: the share is not 32 bytes")
            continue
        made = share_commitment(game, emission, party, share).hex()
        if party not in commitments:
            fail(f"party {party}: no commitment in the manifest")
        elif made != commitments[party]:
            fail(f"party {party}: the share does not match its commitment ({made} != {commitments[party]})")
        shares.append((party, share))
    missing = set(commitments) - {p for p, _ in shares}
    if missing or len(shares) != len({p for p, _ in shares}):
        fail(f"the reveal's parties {sorted(p for p, _ in shares)} are not the committed {sorted(commitments)}")

    # The beacon round named before generation, and its value.
    beacon = None
    named = committed.get("beacon")
    given = revealed.get("beacon")
    if named is not None:
        if given is None or (given["name"], given["round"]) != (named["name"], named["round"]):
            fail(f"the reveal's beacon {given} is not the round the manifest names {named}")
        elif "value" in named and named["value"] != given["value"]:
            fail("the reveal's beacon value is not the one the manifest recorded")
        else:
            beacon = (given["name"], given["round"], bytes.fromhex(given["value"]))
    elif given is not None:
        fail("the reveal has a beacon value, the manifest names no beacon")

    key = emission_seed_key(seed_contributions(shares, beacon), game, emission)
    folder = os.path.dirname(os.path.abspath(manifest_path))
    revealed_seeds = {b["block"]: b["seed"] for b in reveal["blocks"]}
    blocks = []
    for entry in manifest["blocks"]:
        n = entry["block"]
        seed = block_seed(key, game, emission, n)
        commitment = sha256(seed)
        if revealed_seeds.get(n) != seed.hex():
            fail(f"block {n}: the revealed seed {revealed_seeds.get(n)} is not the derived {seed.hex()}")
        if entry["seed_commitment"] != commitment.hex():
            fail(f"block {n}: the manifest's seed commitment is not SHA-256 of the derived seed")
        with open(os.path.join(folder, entry["file"]), "rb") as f:
            header = f.read(SEED_COMMITMENT_OFFSET + 32)
        if header[:8] != MAGIC:
            fail(f"block {n}: {entry['file']} is not a block file")
        header_commitment = header[SEED_COMMITMENT_OFFSET:SEED_COMMITMENT_OFFSET + 32]
        if header_commitment != commitment:
            fail(f"block {n}: the header's seed commitment is not SHA-256 of the derived seed")
        blocks.append({"block": n, "seed": seed.hex(), "header_seed_commitment": header_commitment.hex()})

    print(json.dumps({
        "ok": not failures,
        "game": game,
        "emission": emission,
        "parties": sorted(p for p, _ in shares),
        "beacon": None if beacon is None else {"name": beacon[0], "round": beacon[1]},
        "seed_key": key.hex(),
        "blocks": blocks,
        "failures": failures,
    }))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
