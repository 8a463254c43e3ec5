#!/usr/bin/env bash
# Durable redemptions per second over HTTP with two and three `issuer
# serve` nodes on one PostgreSQL ledger, next to one node on the store's
# SQLite ledger, and PostgreSQL's own commit rate for one
# `INSERT … ON CONFLICT DO NOTHING` a transaction (pgbench) on the same
# cluster as the floor to compare with (issues 12 and 21; figures in
# docs/PERFORMANCE.md §Shared PostgreSQL ledger).
# Starts its own throwaway PostgreSQL (benches/pg_cluster.sh: defaults,
# fsync on). Needs no hyperfine or wrk: the load client is examples/load.rs,
# CLIENTS keep-alive clients spread over the nodes, distinct IDs of one
# closed L'île au trésor block, marked sold in each ledger before the
# timing (a redemption requires a sale, issue 13).
# Each phase ends by checking the ledger holds exactly the sales and the
# units redeemed and verifies.
#   IDS          IDs per phase (20000; IDS=200 is a smoke run)
#   CLIENTS      concurrent clients of the first phases (16)
#   MANY         concurrent clients of the later phases (64)
#   MAX_SECONDS  bound on each load phase (60)
set -euo pipefail
cd "$(dirname "$0")/.."
IDS=${IDS:-20000}
CLIENTS=${CLIENTS:-16}
MANY=${MANY:-64}
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
cp -a "$a" "$work/node-c"
cp -a "$a" "$work/sqlite"
mark_sold "$work/sqlite"
token="bench-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

load() { # [clients]: prints the load client's line; sets $redeemed
    local out
    out=$("$LOAD" "$urls" "$token" "$work/ids" "${1:-$CLIENTS}" "$MAX_SECONDS")
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

pgbench_floor() { # clients: pgbench's rate of one INSERT … ON CONFLICT DO NOTHING a transaction
    [ -x "$PGBIN/pgbench" ] || { echo "(pgbench is not installed)"; return; }
    PGOPTIONS='-c client_min_messages=warning' "$PGBIN/psql" "$url" -qc \
        'DROP TABLE IF EXISTS floor; CREATE TABLE floor (k BIGINT PRIMARY KEY)'
    echo '\set k random(1, 1000000000)
INSERT INTO floor (k) VALUES (:k) ON CONFLICT DO NOTHING;' >"$work/floor.sql"
    "$PGBIN/pgbench" -n -c "$1" -j 2 -T 10 -f "$work/floor.sql" "$url" 2>/dev/null \
        | sed -nE 's/^tps = ([0-9.]+).*/\1/p' | cut -d. -f1
}
fresh_ledger() { # an empty schema, migrated, the IDs sold in it
    # A new ledger: the emissions' bindings to the last one go with it.
    rm -f "$work"/*/emissions/*/*/ledger.json
    PGOPTIONS='-c client_min_messages=warning' "$PGBIN/psql" "$url" -qc \
        'DROP SCHEMA public CASCADE; CREATE SCHEMA public'
    "$ISSUER" --store "$a" ledger migrate --ledger "$url" >/dev/null
    mark_sold "$a" --ledger "$url"
}
pg_phase() { # clients nodes…: a fresh ledger, the nodes, the load, the check
    local clients=$1; shift
    fresh_ledger
    share_log_key "$a" "$@"
    urls=""
    for node in "$@"; do serve "$node" --ledger "$url"; done
    local before after
    before=$("$PGBIN/psql" "$url" -Atc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
    load "$clients"
    stop_servers
    # Counted once the nodes' sessions ended (a session reports its
    # commits to the statistics at most once a second, and when it ends).
    sleep 1
    after=$("$PGBIN/psql" "$url" -Atc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
    echo "  database: $(( after - before - 1 )) transactions committed by the nodes (writers' batches, sequencer turns, the drain at stop)"
    expect_size "$("$ISSUER" --store "$a" ledger verify --ledger "$url" --json \
        --ledger-key "$a/keys/ledger.pub.pem")" "$redeemed"
    commits=$("$PGBIN/psql" "$url" -Atc 'SELECT COUNT(*) FROM ledger_heads')
    echo "  sequencer: $commits signed heads (mark-sold's included) for $redeemed redemptions"
}

echo "(b) two nodes, one PostgreSQL ledger: $CLIENTS clients spread over both, $IDS IDs"
pg_phase "$CLIENTS" "$a" "$work/node-b"
echo "(c) two nodes, one PostgreSQL ledger: $MANY clients, $IDS IDs"
pg_phase "$MANY" "$a" "$work/node-b"
echo "(d) three nodes, one PostgreSQL ledger: $MANY clients, $IDS IDs"
pg_phase "$MANY" "$a" "$work/node-b" "$work/node-c"
echo "(e) pgbench on the same cluster, one INSERT … ON CONFLICT DO NOTHING a transaction, 10 s"
echo "  $CLIENTS clients: $(pgbench_floor "$CLIENTS") tps"
echo "  $MANY clients: $(pgbench_floor "$MANY") tps"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the end"
