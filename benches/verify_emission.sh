#!/usr/bin/env bash
# An auditor's check of a whole revealed emission (issue 14; figures in
# docs/PERFORMANCE.md §Speed against the floor). Not a timed test: it
# measures, it does not judge.
#
# Generates BLOCKS L'île au trésor blocks of 450,000 units (--jobs 2),
# closes the emission, ends its claims, reveals its seeds, then times, as a
# whole process under GNU time (wall, CPU, peak RSS):
#   issuer verify --emission 1 --seeds REVEAL --quiet
# which checks every block against the signed manifest, every unit against
# the rules and the lot table, every check code, and regenerates every
# unit from its revealed seed.
#
# Usage: benches/verify_emission.sh [BLOCKS [UNITS]]   (default 20 blocks)
# A UNITS count makes Trésors Ensablés blocks of that size instead, for a
# quick run (CI: `benches/verify_emission.sh 2 2000`). Needs about 13 MB of
# free disk in $TMPDIR per full-size block.
set -euo pipefail

blocks="${1:-20}"
units="${2:-}"
# shellcheck source=benches/common.sh
source "$(dirname "$0")/common.sh"

if [[ -n $units ]]; then
    game=(--game tresors-ensables --units "$units")
    unit_count=$((blocks * units))
else
    game=(--game ile-au-tresor --price 1)
    unit_count=$((blocks * 450000))
fi
store="$work/store"
"$issuer" --store "$store" keygen >/dev/null
echo "making $blocks block(s), $unit_count units ($(printf '%s ' "${game[@]}"))"
"$issuer" --store "$store" generate "${game[@]}" --emission 1 --blocks "$blocks" --jobs 2 --quiet >/dev/null
"$issuer" --store "$store" close --emission 1 >/dev/null
"$issuer" --store "$store" end-claims --emission 1 --force --reason "benchmark: no claim deadline" >/dev/null
"$issuer" --store "$store" reveal --emission 1 --out "$work/reveal" >/dev/null
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min averages before the run)"

timed "$work/out" "$issuer" --store "$store" verify --emission 1 --seeds "$work/reveal" --quiet
tail -n 1 "$work/out"
awk -v w="$wall" -v n="$unit_count" -v c="$cpu" -v m="$rss" \
    'BEGIN { printf "verify --emission with seeds: %.2f s wall, %.2f s CPU, %.0f MiB peak, %.0f units/s\n", w, c, m / 1024, n / w }'
