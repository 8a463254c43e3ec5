#!/usr/bin/env bash
# The shared PostgreSQL ledger measured per CPU (issue 38; figures in
# docs/PERFORMANCE.md §Scale per CPU budget): PostgreSQL and each `issuer
# serve` node run in a CPU budget of their own (benches/cpu_budget.sh:
# cgroup v1 or v2, as root), and the CPU each spends is counted, so the
# figures do not depend on how many cores the machine has or on the
# processes sharing them. The load client (examples/load) runs outside
# every budget and is not counted.
#
# Phases, each on a fresh ledger with IDS distinct units sold (mark-sold,
# untimed) and redeemed over HTTP by CLIENTS keep-alive clients:
#   nodes bound     PostgreSQL at PG_CPUS, each node at NODE_CPUS: 1, 2 and
#                   3 nodes: redemptions/s, node CPU µs per redemption
#                   (all nodes' CPU over the redemptions), PostgreSQL CPU
#                   µs per redemption
#   database bound  PostgreSQL at PG_CPUS, 2 nodes unbounded: redemptions/s
#                   and p99 against pgbench's one-row rate
#   two databases   two PostgreSQL clusters, each at PG_CPUS, 2 nodes
#                   unbounded given both (serve --ledger-routes): emission 1
#                   routed to one, emission 2 to the other, IDS units of
#                   each: redemptions/s against the database-bound phase's,
#                   and each database's CPU µs per redemption
#   pgbench         PostgreSQL at PG_CPUS: one INSERT … ON CONFLICT DO
#                   NOTHING a transaction, CLIENTS clients, PGBENCH_SECONDS:
#                   tps and PostgreSQL CPU µs per transaction, the yardstick
# Then the issue's targets, each said met or not, with its figure.
#   IDS              units per phase (12000; IDS=300 is a smoke run)
#   CLIENTS          concurrent clients (32)
#   PG_CPUS          PostgreSQL's budget (1.0)
#   NODE_CPUS        each node's budget in the nodes-bound phase (0.2)
#   MAX_SECONDS      bound on each load phase (120)
#   PGBENCH_SECONDS  length of the pgbench run (10)
set -euo pipefail
cd "$(dirname "$0")/.."
IDS=${IDS:-12000}
CLIENTS=${CLIENTS:-32}
PG_CPUS=${PG_CPUS:-1.0}
NODE_CPUS=${NODE_CPUS:-0.2}
MAX_SECONDS=${MAX_SECONDS:-120}
PGBENCH_SECONDS=${PGBENCH_SECONDS:-10}
. benches/cpu_budget.sh
budget_check
cargo build --release --quiet --bins --examples
ISSUER=$PWD/target/release/issuer
LOAD=$PWD/target/release/examples/load
work=$(mktemp -d /tmp/scale-bench-XXXXXX)
. benches/pg_cluster.sh
servers=()
stop() {
    for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
    pg_stop
    for g in pg pg2 node1 node2 node3; do budget_drop "$g"; done
    rm -rf "$work"
}
trap stop EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr), cgroup $cg_mode"
echo "budgets: PostgreSQL $PG_CPUS CPU; each node $NODE_CPUS CPU (nodes bound) or unbounded (database bound); $CLIENTS clients, $IDS units a phase"
budget_make pg "$PG_CPUS"
# PostgreSQL and every process it forks run in the group "pg".
(budget_enter pg && pg_start && echo "$url" >"$work/url")
url=$(cat "$work/url")
node_store "$IDS"
cp -a "$a" "$work/node-b"
cp -a "$a" "$work/node-c"
nodes=("$a" "$work/node-b" "$work/node-c")
token="bench-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
psql_q() { PGOPTIONS='-c client_min_messages=warning' "$PGBIN/psql" "$url" -qAtc "$1"; }

fresh_ledger() { # an empty schema, migrated, the IDs sold in it
    rm -f "$work"/*/emissions/*/*/ledger.json
    psql_q 'DROP SCHEMA public CASCADE; CREATE SCHEMA public'
    "$ISSUER" --store "$a" ledger migrate --ledger "$url" >/dev/null
    mark_sold "$a" --ledger "$url"
}
# phase NODES CPUS: a fresh ledger, NODES nodes each in its own budget
# of CPUS, the load; sets rate p99 node_us pg_us redeemed
phase() {
    local n=$1 cpus=$2 i
    fresh_ledger
    share_log_key "$a" "${nodes[@]:0:n}"
    urls=""
    for ((i = 1; i <= n; i++)); do
        budget_make "node$i" "$cpus"
        # `serve` appends to servers and urls in this shell; the budget
        # is entered by the server's own subshell.
        SERVE_BUDGET="node$i" serve "${nodes[i - 1]}" --ledger "$url"
    done
    local pg0 pg1 n0=0 n1=0 out
    pg0=$(budget_usage pg)
    for ((i = 1; i <= n; i++)); do n0=$((n0 + $(budget_usage "node$i"))); done
    out=$("$LOAD" "$urls" "$token" "$work/ids" "$CLIENTS" "$MAX_SECONDS")
    pg1=$(budget_usage pg)
    for ((i = 1; i <= n; i++)); do n1=$((n1 + $(budget_usage "node$i"))); done
    stop_servers
    redeemed=$(echo "$out" | sed -E 's/.*: ([0-9]+) redeemed.*/\1/')
    rate=$(echo "$out" | sed -E 's/.* ([0-9]+) durable redemptions\/s.*/\1/')
    p99=$(echo "$out" | sed -E 's/.*p99 ([0-9.]+) ms.*/\1/')
    [ "$redeemed" -gt 0 ] || { echo "no redemption: $out" >&2; exit 1; }
    node_us=$(((n1 - n0) / redeemed))
    pg_us=$(((pg1 - pg0) / redeemed))
    local v
    v=$("$ISSUER" --store "$a" ledger verify --ledger "$url" --json --ledger-key "$a/keys/ledger.pub.pem")
    echo "$v" | grep -q '"ok":true' || { echo "the ledger does not verify: $v" >&2; exit 1; }
    [ "$(psql_q 'SELECT COUNT(*) FROM redemptions')" = "$redeemed" ] \
        || { echo "the ledger holds another count of redemptions than the $redeemed answered" >&2; exit 1; }
    for ((i = 1; i <= n; i++)); do budget_drop "node$i"; done
}

printf '\n%-34s %14s %12s %12s %10s\n' "phase" "redemptions/s" "node µs/red" "PG µs/red" "p99 ms"
declare -A R N P
for n in 1 2 3; do
    phase "$n" "$NODE_CPUS"
    R[$n]=$rate N[$n]=$node_us P[$n]=$pg_us
    printf '%-34s %14s %12s %12s %10s\n' "nodes bound: $n node(s) at $NODE_CPUS" "$rate" "$node_us" "$pg_us" "$p99"
done
phase 2 max
db_rate=$rate db_p99=$p99
printf '%-34s %14s %12s %12s %10s\n' "database bound: 2 nodes unbounded" "$rate" "$node_us" "$pg_us" "$p99"

# Two databases, each in its own budget, emissions split between them.
budget_make pg2 "$PG_CPUS"
(budget_enter pg2 && pg_start data2 && echo "$url" >"$work/url2")
url2=$(cat "$work/url2")
"$ISSUER" --store "$a" generate --game ile-au-tresor --emission 2 --block 1 --price 1 --quiet --json >/dev/null
"$ISSUER" --store "$a" close --emission 2 >/dev/null
"$ISSUER" --store "$a" export "$a/emissions/ile-au-tresor/e000002/b000001.tkb" \
    | awk -v step=$((450000 / IDS)) -v max="$IDS" 'NR % step == 1 && n < max { print; n++ }' \
    | sed -E 's/^\{"id":"([^"]+)".*/\1/' >"$work/ids2"
for node in "${nodes[@]:1:2}"; do rm -rf "$node/emissions/ile-au-tresor/e000002" && cp -a "$a/emissions/ile-au-tresor/e000002" "$node/emissions/ile-au-tresor/"; done
fresh_ledger
"$ISSUER" --store "$a" ledger migrate --ledger "$url2" >/dev/null
"$ISSUER" --store "$a" mark-sold --emission 2 --ids "$work/ids2" --platform bench --ledger "$url2" >/dev/null
cat >"$work/routes.json" <<JSON
{"kind": "ticket-issuer ledger routes",
 "ledgers": [{"name": "one", "url": "$url"}, {"name": "two", "url": "$url2"}],
 "emissions": [{"game": "ile-au-tresor", "emission": 1, "ledger": "one"},
               {"game": "ile-au-tresor", "emission": 2, "ledger": "two"}]}
JSON
share_log_key "$a" "${nodes[@]:0:2}"
cp "$work/ids" "$work/ids1"
paste -d '\n' "$work/ids1" "$work/ids2" >"$work/ids"
urls=""
serve "$a" --ledger-routes "$work/routes.json"
serve "$work/node-b" --ledger-routes "$work/routes.json"
pa0=$(budget_usage pg) pb0=$(budget_usage pg2)
out=$("$LOAD" "$urls" "$token" "$work/ids" "$CLIENTS" "$MAX_SECONDS")
pa1=$(budget_usage pg) pb1=$(budget_usage pg2)
stop_servers
two_redeemed=$(echo "$out" | sed -E 's/.*: ([0-9]+) redeemed.*/\1/')
two_rate=$(echo "$out" | sed -E 's/.* ([0-9]+) durable redemptions\/s.*/\1/')
two_p99=$(echo "$out" | sed -E 's/.*p99 ([0-9.]+) ms.*/\1/')
[ "$two_redeemed" -gt 0 ] || { echo "no redemption: $out" >&2; exit 1; }
in_one=$(psql_q 'SELECT COUNT(*) FROM redemptions')
in_two=$(PGOPTIONS='-c client_min_messages=warning' "$PGBIN/psql" "$url2" -qAtc 'SELECT COUNT(*) FROM redemptions')
[ "$((in_one + in_two))" = "$two_redeemed" ] \
    || { echo "the two ledgers hold $in_one + $in_two redemptions, not the $two_redeemed answered" >&2; exit 1; }
for u in "$url" "$url2"; do
    "$ISSUER" --store "$a" ledger verify --ledger "$u" --json --ledger-key "$a/keys/ledger.pub.pem" | grep -q '"ok":true' \
        || { echo "the ledger $u does not verify" >&2; exit 1; }
done
pa_us=$(((pa1 - pa0) / (in_one > 0 ? in_one : 1)))
pb_us=$(((pb1 - pb0) / (in_two > 0 ? in_two : 1)))
printf '%-34s %14s %12s %12s %10s\n' "two databases: 2 nodes unbounded" "$two_rate" "-" "$pa_us / $pb_us" "$two_p99"
cp "$work/ids1" "$work/ids"

# pgbench's yardstick under the same budget.
psql_q 'DROP TABLE IF EXISTS floor; CREATE TABLE floor (k BIGINT PRIMARY KEY)'
echo '\set k random(1, 1000000000)
INSERT INTO floor (k) VALUES (:k) ON CONFLICT DO NOTHING;' >"$work/floor.sql"
pg0=$(budget_usage pg)
bench=$("$PGBIN/pgbench" -n -c "$CLIENTS" -j 2 -T "$PGBENCH_SECONDS" -f "$work/floor.sql" "$url" 2>/dev/null)
pg1=$(budget_usage pg)
tx=$(echo "$bench" | sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p')
tps=$(echo "$bench" | sed -nE 's/^tps = ([0-9.]+).*/\1/p' | cut -d. -f1)
bench_us=$(((pg1 - pg0) / tx))
printf '%-34s %14s %12s %12s %10s\n' "pgbench, one row a transaction" "$tps tps" "-" "$bench_us" "-"

verdict() { # label ok figure
    if [ "$2" = 1 ]; then echo "  met      $1: $3"; else echo "  NOT MET  $1: $3"; fi
}
echo
echo "targets (issue 38):"
maxn=$(printf '%s\n' "${N[1]}" "${N[2]}" "${N[3]}" | sort -n | tail -1)
minn=$(printf '%s\n' "${N[1]}" "${N[2]}" "${N[3]}" | sort -n | head -1)
verdict "node CPU ≤ 100 µs a redemption" "$([ "$maxn" -le 100 ] && echo 1)" "${N[1]} / ${N[2]} / ${N[3]} µs for 1 / 2 / 3 nodes"
verdict "node CPU within ±15 % from 1 to 3 nodes" \
    "$(awk -v a="$minn" -v b="$maxn" 'BEGIN { m = (a + b) / 2; print (b - m <= 0.15 * m) ? 1 : 0 }')" "from $minn to $maxn µs"
maxp=$(printf '%s\n' "${P[1]}" "${P[2]}" "${P[3]}" | sort -n | tail -1)
verdict "PostgreSQL CPU a redemption ≤ pgbench's a transaction" "$([ "$maxp" -le "$bench_us" ] && echo 1)" \
    "${P[1]} / ${P[2]} / ${P[3]} µs against $bench_us µs"
verdict "3 nodes ≥ 2.7 × one node (nodes bound)" \
    "$(awk -v a="${R[1]}" -v b="${R[3]}" 'BEGIN { print (b >= 2.7 * a) ? 1 : 0 }')" \
    "$(awk -v a="${R[1]}" -v b="${R[3]}" 'BEGIN { printf "%.2f ×", b / a }')"
verdict "database bound ≥ pgbench's one-row tps" "$([ "$db_rate" -ge "$tps" ] && echo 1)" "$db_rate against $tps"
verdict "database bound p99 ≤ 50 ms" "$(awk -v p="$db_p99" 'BEGIN { print (p <= 50) ? 1 : 0 }')" "$db_p99 ms"
verdict "two databases ≥ 1.8 × one (database bound)" \
    "$(awk -v a="$db_rate" -v b="$two_rate" 'BEGIN { print (b >= 1.8 * a) ? 1 : 0 }')" \
    "$(awk -v a="$db_rate" -v b="$two_rate" 'BEGIN { printf "%.2f ×", b / a }') ($two_rate against $db_rate; each database's CPU a redemption $pa_us / $pb_us µs against ${P[1]} µs alone)"
