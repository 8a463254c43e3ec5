#!/usr/bin/env bash
# Service benchmark (issue 11; figures in docs/PERFORMANCE.md §Service).
#
# Builds the release binary and the load client (examples/load.rs),
# generates one block in a temporary store and closes the emission; every
# phase's IDs are marked sold first (`mark-sold --ids`, untimed: a
# redemption requires a sale, issue 13), then it measures:
#   (a) `issuer serve` on 127.0.0.1 with 16 concurrent keep-alive clients
#       redeeming distinct IDs: durable redemptions/s and p50/p99 latency;
#   (b) `issuer redeem --batch` of the same number of IDs from one process.
# Each phase starts from an empty ledger and ends by checking that the
# ledger holds exactly the units redeemed and that `ledger verify` passes.
#
# Usage: benches/service.sh
# Environment: IDS (default 20000) IDs per phase; CLIENTS (default 16);
# MAX_SECONDS (default 60) bounds the load phase.
set -euo pipefail

IDS=${IDS:-20000}
CLIENTS=${CLIENTS:-16}
MAX_SECONDS=${MAX_SECONDS:-60}

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
echo "building release binary and load client..."
cargo build --release --quiet --bin issuer --example load
ISSUER="$root/target/release/issuer"
LOAD="$root/target/release/examples/load"

work=$(mktemp -d "${TMPDIR:-/tmp}/service-bench.XXXXXX")
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
store="$work/store"
block="$store/emissions/ile-au-tresor/e000001/b000001.tkb"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at start"
"$ISSUER" --store "$store" generate --game ile-au-tresor --emission 1 --block 1 \
    --price 1 --quiet --json >/dev/null
"$ISSUER" --store "$store" close --emission 1 >/dev/null
step=$(( 450000 / IDS ))
"$ISSUER" --store "$store" export "$block" \
    | awk -v step="$step" -v max="$IDS" 'NR % step == 1 && n < max { print; n++ }' \
    | sed -E 's/^\{"id":"([^"]+)".*/\1/' >"$work/ids"

# An empty ledger where the IDs are then marked sold (the sales live in it).
fresh_ledger() {
    rm -f "$store"/ledger.sqlite "$store"/ledger.sqlite-wal "$store"/ledger.sqlite-shm
    # A new ledger: the emissions' bindings to the last one go with it.
    rm -f "$store"/emissions/*/*/ledger.json
    "$ISSUER" --store "$store" mark-sold --emission 1 --ids "$work/ids" --platform bench >/dev/null
}
check_ledger() {
    units=$("$ISSUER" --store "$store" ledger --json | sed -E 's/.*"units":([0-9]+).*/\1/')
    [ "$units" = "$1" ] || { echo "ledger holds $units units, expected $1" >&2; exit 1; }
    "$ISSUER" --store "$store" ledger verify >/dev/null
    echo "  ledger: $units units, reconciled, log verifies"
    if command -v sqlite3 >/dev/null; then
        echo "  commits: $(sqlite3 "$store/ledger.sqlite" 'SELECT COUNT(*) FROM ledger_heads') signed heads (mark-sold's included) for $units redemptions"
    fi
}

echo "(a) issuer serve, $CLIENTS clients over 127.0.0.1, $IDS IDs"
fresh_ledger
token="bench-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "bench:$token" >"$work/tokens"
chmod 600 "$work/tokens"
"$ISSUER" --store "$store" serve --listen 127.0.0.1:0 --token-file "$work/tokens" \
    >"$work/serve.out" 2>"$work/serve.err" &
server=$!
for _ in $(seq 100); do [ -s "$work/serve.out" ] && break; sleep 0.05; done
url=$(sed 's/^listening on //' "$work/serve.out")
out=$("$LOAD" "$url" "$token" "$work/ids" "$CLIENTS" "$MAX_SECONDS")
echo "  $out"
kill -TERM "$server"
wait "$server" || true
server=""
check_ledger "$(echo "$out" | sed -E 's/.*: ([0-9]+) redeemed.*/\1/')"

echo "(b) issuer redeem --batch, one process, $IDS IDs"
fresh_ledger
start=$(date +%s%N)
"$ISSUER" --store "$store" redeem --batch "$work/ids" >/dev/null
end=$(date +%s%N)
ms=$(( (end - start) / 1000000 ))
echo "  $IDS redeemed in $ms ms: $(( IDS * 1000 / (ms > 0 ? ms : 1) )) durable redemptions/s"
check_ledger "$IDS"
