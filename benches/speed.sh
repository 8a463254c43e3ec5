#!/usr/bin/env bash
# Speed against the hardware's floor (issue 14; figures in
# docs/PERFORMANCE.md §Speed against the floor). Not a timed test: it
# measures, it does not judge.
#
# The floor: a 450,000-unit tree needs about 1.35 M SHA-256 compressions
# (64 bytes each); `openssl speed -evp sha256` on 16 KiB blocks gives this
# machine's SHA-256 rate, measured in the same run, so
#   floor = 1.35e6 × 64 bytes / rate.
# Each job runs as a whole release process under GNU time (wall seconds,
# CPU seconds, peak RSS) and is printed with its ratio to the floor.
#
# Usage: benches/speed.sh [UNITS]   (default 450000; a smaller count makes
# Trésors Ensablés blocks of that size and scales the floor, for a quick run:
# CI runs `benches/speed.sh 2000`). Without GNU time it gives wall times
# only; without openssl it assumes this machine's SHA-256 rate.
set -euo pipefail

units="${1:-450000}"
# shellcheck source=benches/common.sh
source "$(dirname "$0")/common.sh"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min averages before the runs)"

# SHA-256 bytes per second on 16 KiB blocks (openssl prints kB/s).
rate=$(openssl speed -evp sha256 -bytes 16384 -seconds 2 2>/dev/null | awk '/^sha256/ { sub("k", "", $NF); print $NF * 1000 }' || true)
if [[ -z $rate ]]; then
    # Without openssl the floor is this machine's figure of 2026-11-30.
    rate=1450000000
    echo "note: openssl is absent: the floor assumes SHA-256 at 1.45 GB/s" >&2
fi
floor=$(awk -v r="$rate" -v u="$units" 'BEGIN { printf "%.4f", 3 * u * 64 / r }')
echo "floor:   SHA-256 at $(awk -v r="$rate" 'BEGIN { printf "%.2f", r / 1e9 }') GB/s; 3 compressions x $units units = ${floor} s"

# run NAME COMMAND…: wall, CPU, peak RSS and the floor ratio of one process.
run() {
    local name=$1
    shift
    timed /dev/null "$@"
    awk -v n="$name" -v w="$wall" -v c="$cpu" -v m="$rss" -v f="$floor" \
        'BEGIN { printf "%-44s %6.2f s wall %6.2f s CPU %5.0f MiB  %5.1fx floor\n", n, w, c, m / 1024, w / f }'
}

store="$work/store"
"$issuer" --store "$store" keygen >/dev/null
te_units=(--units "$units")
if [[ $units == 450000 ]]; then
    run "generate ile-au-tresor, --jobs 1" "$issuer" --store "$store" generate --game ile-au-tresor --emission 1 --block 1 --price 1 --jobs 1 --quiet
    run "generate ile-au-tresor, --jobs 2" "$issuer" --store "$store" generate --game ile-au-tresor --emission 2 --block 1 --price 1 --jobs 2 --quiet
    block="$store/emissions/ile-au-tresor/e000001/b000001.tkb"
    run "verify ile-au-tresor block (records key)" "$issuer" --store "$store" verify "$block"
    run "export ile-au-tresor block (to /dev/null)" "$issuer" --store "$store" export "$block" -q -o /dev/null --force
    echo "export size: $("$issuer" --store "$store" export "$block" -q | wc -c) bytes; file $(stat -c %s "$block") bytes"
fi
run "generate tresors-ensables, --jobs 1" "$issuer" --store "$store" generate --game tresors-ensables --emission 3 --block 1 "${te_units[@]}" --jobs 1 --quiet
te_block="$store/emissions/tresors-ensables/e000003/b000001.tkb"
run "verify tresors-ensables block" "$issuer" --store "$store" verify "$te_block"
run "export tresors-ensables block (to /dev/null)" "$issuer" --store "$store" export "$te_block" -q -o /dev/null --force
