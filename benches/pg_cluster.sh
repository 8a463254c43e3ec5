# Sourced by benches/pg_ledger.sh and benches/pg_service.sh: a throwaway
# PostgreSQL (its default settings, fsync on) in the folder "$work" on a
# free loopback port, run as the `postgres` user when we are root.
#   pg_start [NAME]   initdb + start in $work/NAME (default data); sets $url
#              (fails if PostgreSQL is not installed)
#   pg_stop    stops every cluster at once (call it from the caller's EXIT trap)
#   node_store N   a store $a ("$work/node-a": keys, L'île au trésor
#              emission 1, one closed 450,000-unit block at 1 €); N IDs
#              spread over the block in "$work/ids"
#   serve STORE [serve args…]   starts `issuer serve` on 127.0.0.1:0 with
#              $token; appends its pid to servers and its URL to $urls;
#              with SERVE_BUDGET=NAME, in that CPU budget (cpu_budget.sh)
#   stop_servers   SIGTERM to each server, waits
#   mark_sold STORE [--ledger URL]   records those IDs as sold in that
#              ledger, untimed (a redemption requires a sale, issue 13)
#   share_log_key FROM TO…   copies FROM's log key (made by its first
#              ledger write) to the other nodes: every node of one ledger
#              signs with the one key (docs/DEPLOY.md §Machines and secrets)
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_start() { # [NAME]: the cluster's folder under $work (default data)
    [ -n "$PGBIN" ] || { echo "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin)" >&2; exit 1; }
    [ "$(id -u)" = 0 ] && chown postgres "$work"
    local port data=$work/${1:-data}
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_pg "$PGBIN/initdb" -D "$data" -A trust -U postgres >/dev/null
    as_pg "$PGBIN/pg_ctl" -D "$data" -l "$data/log" -w \
        -o "-p $port -k $work -c listen_addresses=127.0.0.1" start >/dev/null
    url="postgres://postgres@127.0.0.1:$port/postgres"
}
pg_stop() { # every cluster pg_start made
    local data
    for data in "$work"/data*; do
        [ -d "$data" ] && as_pg "$PGBIN/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true
    done
}
node_store() {
    a=$work/node-a
    "$ISSUER" --store "$a" keygen >/dev/null
    "$ISSUER" --store "$a" generate --game ile-au-tresor --emission 1 --block 1 \
        --price 1 --quiet --json >/dev/null
    "$ISSUER" --store "$a" close --emission 1 >/dev/null
    "$ISSUER" --store "$a" export "$a/emissions/ile-au-tresor/e000001/b000001.tkb" \
        | awk -v step=$(( 450000 / $1 )) -v max="$1" 'NR % step == 1 && n < max { print; n++ }' \
        | sed -E 's/^\{"id":"([^"]+)".*/\1/' >"$work/ids"
    [ "$(wc -l <"$work/ids")" = "$1" ] || { echo "node_store: not $1 IDs" >&2; exit 1; }
}
mark_sold() {
    local store=$1; shift
    "$ISSUER" --store "$store" mark-sold --emission 1 --ids "$work/ids" --platform bench "$@" >/dev/null
}
share_log_key() {
    local from=$1; shift
    [ -s "$from/keys/ledger.key.pem" ] || { echo "share_log_key: $from has no log key yet" >&2; exit 1; }
    for node in "$@"; do
        [ "$node" = "$from" ] || cp -p "$from/keys/ledger.key.pem" "$from/keys/ledger.pub.pem" "$node/keys/"
    done
}
serve() { # store [serve args…]; appends the node's URL to $urls
    local store=$1; shift
    echo "bench:$token" >"$store.tokens"
    chmod 600 "$store.tokens"
    # A URL left by an earlier run of this store is not this server's.
    rm -f "$store.out"
    (
        [ -z "${SERVE_BUDGET:-}" ] || budget_enter "$SERVE_BUDGET"
        exec "$ISSUER" --store "$store" serve --listen 127.0.0.1:0 --token-file "$store.tokens" "$@" \
            >"$store.out" 2>"$store.err"
    ) &
    servers+=($!)
    for _ in $(seq 200); do [ -s "$store.out" ] && break; sleep 0.05; done
    [ -s "$store.out" ] || { cat "$store.err" >&2; exit 1; }
    urls="${urls:+$urls,}$(sed 's/^listening on //' "$store.out")"
}
stop_servers() {
    for pid in "${servers[@]}"; do kill -TERM "$pid"; wait "$pid" || true; done
    servers=()
}
