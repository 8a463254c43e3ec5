#!/usr/bin/env bash
# Durable redemptions per second over HTTP with two `issuer serve` nodes on
# one PostgreSQL ledger, next to one node on the store's SQLite ledger
# (issue 12; figures in docs/PERFORMANCE.md §Shared PostgreSQL ledger).
# Starts its own throwaway PostgreSQL (benches/pg_cluster.sh: defaults,
# fsync on). Needs no hyperfine or wrk: the load client is examples/load.rs,
# CLIENTS keep-alive clients spread over the nodes, distinct IDs of one
# closed L'île au trésor block, marked sold in each ledger before the
# timing (a redemption requires a sale, issue 13).
# Each phase ends by checking the ledger holds exactly the sales and the
# units redeemed and verifies.
#   IDS          IDs per phase (20000; IDS=200 is a smoke run)
#   CLIENTS      concurrent clients (16)
#   MAX_SECONDS  bound on each load phase (60)
set -euo pipefail
cd "$(dirname "$0")/.."
IDS=${IDS:-20000}
CLIENTS=${CLIENTS:-16}
MAX_SECONDS=${MAX_SECONDS:-60}
cargo build --release --quiet --bin issuer --example load
ISSUER=$PWD/target/release/issuer
LOAD=$PWD/target/release/examples/load
work=$(mktemp -d /tmp/pg-service-bench-XXXXXX)
. benches/pg_cluster.sh
servers=()
stop() {
    for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
    pg_stop
    rm -rf "$work"
}
trap stop EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at start"
pg_start
node_store "$IDS"
cp -a "$a" "$work/node-b"
cp -a "$a" "$work/sqlite"
mark_sold "$work/sqlite"
token="bench-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

load() { # prints the load client's line; sets $redeemed
    local out
    out=$("$LOAD" "$urls" "$token" "$work/ids" "$CLIENTS" "$MAX_SECONDS")
    echo "  $out"
    redeemed=$(echo "$out" | sed -E 's/.*: ([0-9]+) redeemed.*/\1/')
}
expect_size() { # verify-json redeemed: the log holds the IDS sales and the redemptions
    local size
    size=$(echo "$1" | grep -o '"size":[0-9]*' | head -1 | cut -d: -f2)
    echo "$1" | grep -q '"ok":true' || { echo "ledger does not verify: $1" >&2; exit 1; }
    [ "$size" = $(( IDS + $2 )) ] || { echo "ledger holds $size entries, $IDS sold + $2 redeemed" >&2; exit 1; }
    echo "  ledger: $size entries ($IDS sales, $2 redemptions), verifies"
}

echo "(a) one node, SQLite ledger in its store: $CLIENTS clients, $IDS IDs"
urls=""
serve "$work/sqlite"
load
stop_servers
expect_size "$("$ISSUER" --store "$work/sqlite" ledger verify --json)" "$redeemed"

echo "(b) two nodes, one PostgreSQL ledger: $CLIENTS clients spread over both, $IDS IDs"
"$ISSUER" --store "$a" ledger migrate --ledger "$url" >/dev/null
mark_sold "$a" --ledger "$url"
urls=""
serve "$a" --ledger "$url"
serve "$work/node-b" --ledger "$url"
load
stop_servers
expect_size "$("$ISSUER" --store "$a" ledger verify --ledger "$url" --json \
    --ledger-key "$a/keys/ledger.pub.pem" --ledger-key "$work/node-b/keys/ledger.pub.pem")" \
    "$redeemed"
commits=$("$PGBIN/psql" "$url" -Atc 'SELECT COUNT(*) FROM ledger_heads')
echo "  commits: $commits signed heads (one a commit, mark-sold's included) for $redeemed redemptions"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the end"
