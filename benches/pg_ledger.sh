#!/usr/bin/env bash
# Durable redemptions per second with two nodes on one PostgreSQL ledger,
# next to the same load on the store's SQLite ledger (docs/DEPLOY.md
# §Throughput). Starts a throwaway PostgreSQL (fsync on, its defaults) on
# a free loopback port, as the `postgres` user when run as root. The units
# are L'île au trésor IDs of one closed block, marked sold in each ledger
# before the timing (a redemption requires a sale, issue 13).
#   STREAM_IDS  IDs per node for the stream of `redeem ID` processes (500)
#   BATCH_IDS   IDs per node for `redeem --batch` (20000)
set -euo pipefail
cd "$(dirname "$0")/.."
STREAM_IDS=${STREAM_IDS:-500}
BATCH_IDS=${BATCH_IDS:-20000}
# With the examples: the same features as `cargo test`, so no second build.
cargo build --release --quiet --bins --examples
ISSUER=$PWD/target/release/issuer
work=$(mktemp -d /tmp/pg-bench-XXXXXX)
. benches/pg_cluster.sh
stop() { pg_stop; rm -rf "$work"; }
trap stop EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at start"
pg_start

units=$(( 2 * (STREAM_IDS + BATCH_IDS) ))
node_store "$units"
split_ids() { # first-line count file
    sed -n "$1,$(( $1 + $2 - 1 ))p" "$work/ids" >"$3"
}
split_ids 1 "$STREAM_IDS" "$work/stream-a"
split_ids $(( 1 + STREAM_IDS )) "$STREAM_IDS" "$work/stream-b"
split_ids $(( 1 + 2 * STREAM_IDS )) "$BATCH_IDS" "$work/batch-a"
split_ids $(( 1 + 2 * STREAM_IDS + BATCH_IDS )) "$BATCH_IDS" "$work/batch-b"

now() { date +%s.%N; }
rate() { python3 -c "print(f'{$1 / ($3 - $2):.0f} redemptions/s ({$1} in {$3 - $2:.2f} s)')"; }
stream() { # store ids [ledger args…]
    local store=$1 ids=$2; shift 2
    while read -r id; do "$ISSUER" --store "$store" redeem "$id" "$@" >/dev/null; done <"$ids"
}
run_pair() { # label node-a node-b [ledger args…]
    local label=$1 na=$2 nb=$3; shift 3
    local t0 t1
    t0=$(now); stream "$na" "$work/stream-a" "$@" & stream "$nb" "$work/stream-b" "$@" & wait; t1=$(now)
    echo "$label, 2 streams of redeem processes: $(rate $(( 2 * STREAM_IDS )) "$t0" "$t1")"
    t0=$(now)
    "$ISSUER" --store "$na" redeem --batch "$work/batch-a" "$@" >/dev/null &
    "$ISSUER" --store "$nb" redeem --batch "$work/batch-b" "$@" >/dev/null &
    wait; t1=$(now)
    echo "$label, 2 concurrent redeem --batch: $(rate $(( 2 * BATCH_IDS )) "$t0" "$t1")"
}

expect_log() { # label verify-json: it passes and holds every sale and redemption
    grep -q '"ok":true' <<<"$2" && grep -q "\"size\":$(( 2 * units ))," <<<"$2" \
        || { echo "$1 ledger: not ok or not $(( 2 * units )) entries: $2" >&2; exit 1; }
    echo "$1 ledger verifies: $(( 2 * units )) entries ($units sales, $units redemptions)"
}

# SQLite: both streams on the one store (one ledger file).
cp -a "$a" "$work/sqlite"
mark_sold "$work/sqlite"
run_pair "SQLite, one store" "$work/sqlite" "$work/sqlite"
expect_log SQLite "$("$ISSUER" --store "$work/sqlite" ledger verify --json)"

# PostgreSQL: two nodes (copies of the store), one database.
cp -a "$a" "$work/node-b"
"$ISSUER" --store "$a" ledger migrate --ledger "$url" >/dev/null
mark_sold "$a" --ledger "$url"
share_log_key "$a" "$work/node-b"
run_pair "PostgreSQL, two nodes" "$a" "$work/node-b" --ledger "$url"
expect_log PostgreSQL "$("$ISSUER" --store "$a" ledger verify --ledger "$url" --json \
    --ledger-key "$a/keys/ledger.pub.pem")"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the end"
