# Sourced by benches/pg_ledger.sh and benches/pg_service.sh: a throwaway
# PostgreSQL (its default settings, fsync on) in the folder "$work" on a
# free loopback port, run as the `postgres` user when we are root.
#   pg_start   initdb + start; sets $url
#   pg_stop    stops it at once (call it from the caller's EXIT trap)
#   node_store UNITS   a store $a ("$work/node-a": keys, Trésors Ensablés
#              emission 2, block 1 of UNITS units); its IDs in "$work/ids"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$PGBIN" ] || { echo "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin)" >&2; exit 1; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_start() {
    [ "$(id -u)" = 0 ] && chown postgres "$work"
    local port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_pg "$PGBIN/initdb" -D "$work/data" -A trust -U postgres >/dev/null
    as_pg "$PGBIN/pg_ctl" -D "$work/data" -l "$work/data/log" -w \
        -o "-p $port -k $work -c listen_addresses=127.0.0.1" start >/dev/null
    url="postgres://postgres@127.0.0.1:$port/postgres"
}
pg_stop() { as_pg "$PGBIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true; }
node_store() {
    a=$work/node-a
    "$ISSUER" --store "$a" keygen >/dev/null
    "$ISSUER" --store "$a" generate --game tresors-ensables --emission 2 --block 1 \
        --units "$1" --quiet --json >/dev/null
    "$ISSUER" --store "$a" export "$a/emissions/tresors-ensables/e000002/b000001.tkb" \
        | grep -o '"id":"[^"]*"' | cut -d'"' -f4 >"$work/ids"
}
