#!/usr/bin/env bash
# Sales and plays over HTTP (issue 13; figures in docs/PERFORMANCE.md
# §Sales and plays). Builds the release binary and the load client
# (examples/play_load.rs), makes a store with a closed Trésors Ensablés
# emission (2, one block of TE_UNITS units) and a closed L'île au trésor
# emission (1, one 450,000-unit block at 1 €), then, first with one
# `issuer serve` on the store's SQLite ledger, then with two `serve` nodes
# (copies of the store) on one throwaway PostgreSQL (benches/pg_cluster.sh,
# `ledger migrate`; CLIENTS spread over both), measures:
#   (a) sales/s, CLIENTS keep-alive clients POSTing /v1/sales: Trésors
#       Ensablés, then L'île au trésor, COUNT sales each;
#   (b) whole Trésors Ensablés plays/s, COUNT of them: sale, rolls one at a
#       time until a stop is allowed (then stop) or the play ends, and the
#       redemption, every step durable before its answer.
# Each phase ends by checking that `ledger verify` passes (on PostgreSQL
# with the one log key both nodes sign with) and that the log holds exactly the
# sales, play ends and redemptions made so far.
#   COUNT        sales per game in (a), plays in (b) (5000; COUNT=100 is the
#                smoke run)
#   CLIENTS      concurrent clients (16)
#   MAX_SECONDS  bound on each load step (60)
#   TE_UNITS     units of the Trésors Ensablés block (the larger of 20000
#                and 2 × COUNT)
#   NO_PG=1      skips the PostgreSQL part
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5000}
CLIENTS=${CLIENTS:-16}
MAX_SECONDS=${MAX_SECONDS:-60}
TE_UNITS=${TE_UNITS:-$(( 2 * COUNT > 20000 ? 2 * COUNT : 20000 ))}
[ "$TE_UNITS" -ge $(( 2 * COUNT )) ] || { echo "TE_UNITS must be at least 2 × COUNT" >&2; exit 2; }
[ "$COUNT" -le 450000 ] || { echo "COUNT must be at most 450000" >&2; exit 2; }
cargo build --release --quiet --bin issuer --example play_load
ISSUER=$PWD/target/release/issuer
PLAY=$PWD/target/release/examples/play_load
work=$(mktemp -d /tmp/sale-bench-XXXXXX)
servers=()
stop() {
    for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
    if [ -z "${NO_PG:-}" ]; then pg_stop; fi
    rm -rf "$work"
}
trap stop EXIT
. benches/pg_cluster.sh

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at start"
a=$work/node-a
"$ISSUER" --store "$a" keygen >/dev/null
"$ISSUER" --store "$a" generate --game tresors-ensables --emission 2 --block 1 \
    --units "$TE_UNITS" --quiet --json >/dev/null
"$ISSUER" --store "$a" generate --game ile-au-tresor --emission 1 --block 1 \
    --price 1 --quiet --json >/dev/null
"$ISSUER" --store "$a" close --emission 2 >/dev/null
"$ISSUER" --store "$a" close --emission 1 >/dev/null
cp -a "$a" "$work/node-b"
cp -a "$a" "$work/sqlite"
token="bench-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

drive() { # sell|play game: prints the client's line; sets $n (operations completed)
    local out
    out=$("$PLAY" "$1" "$urls" "$token" "$2" 1 "$COUNT" "$CLIENTS" "$MAX_SECONDS")
    echo "  $1 $2: $out"
    n=$(echo "$out" | sed -E 's/.*node\(s\): ([0-9]+) .*/\1/')
}
expect_log() { # verify-command…: it passes and its log holds every sale, play end and redemption
    local size out
    # On PostgreSQL what is committed is sequenced within about 100 ms
    # (docs/REDEMPTION.md §Sequencing): wait up to 2 s for the queue.
    for _ in $(seq 40); do
        out=$("$@")
        echo "$out" | grep -q '"pending":0' && break
        sleep 0.05
    done
    size=$(echo "$out" | grep -o '"size":[0-9]*' | head -1 | cut -d: -f2)
    echo "$out" | grep -q '"ok":true' || { echo "ledger does not verify: $out" >&2; exit 1; }
    [ "$size" = $(( sold + ends + redeemed )) ] || {
        echo "log holds $size entries, expected $sold sales + $ends play ends + $redeemed redemptions" >&2
        exit 1
    }
    echo "  ledger verifies: $size entries = $sold sales + $ends play ends + $redeemed redemptions"
}
phases() { # label verify-command…: (a) and (b) against the nodes in $urls
    local label=$1; shift
    sold=0 ends=0 redeemed=0
    echo "(a) $label: sales, $CLIENTS clients, $COUNT a game"
    drive sell tresors-ensables
    sold=$(( sold + n ))
    drive sell ile-au-tresor
    sold=$(( sold + n ))
    expect_log "$@"
    echo "(b) $label: whole Trésors Ensablés plays, $CLIENTS clients, $COUNT plays"
    drive play tresors-ensables
    sold=$(( sold + n )) ends=$(( ends + n )) redeemed=$(( redeemed + n ))
    expect_log "$@"
}

urls=""
serve "$work/sqlite"
phases "one node, SQLite ledger" "$ISSUER" --store "$work/sqlite" ledger verify --json
stop_servers

if [ -z "${NO_PG:-}" ]; then
    pg_start
    "$ISSUER" --store "$a" ledger migrate --ledger "$url" >/dev/null
    urls=""
    serve "$a" --ledger "$url"
    share_log_key "$a" "$work/node-b"
    serve "$work/node-b" --ledger "$url"
    phases "two nodes, one PostgreSQL ledger" "$ISSUER" --store "$a" ledger verify --ledger "$url" \
        --json --ledger-key "$a/keys/ledger.pub.pem"
    stop_servers
    echo "  commits: $("$PGBIN/psql" "$url" -Atc 'SELECT COUNT(*) FROM ledger_heads') signed heads"
fi
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the end"
