#!/usr/bin/env bash
# PAR sheet benchmark (issue 10; figures in docs/PERFORMANCE.md §PAR
# sheets). Not a timed test: it measures, it does not judge.
#
# Builds the release binary, then times whole `issuer par` processes:
#   1. the exact figures alone (2 boards, 2 Monte Carlo units, no exact board);
#   2. the same plus optimal play over BOARDS boards (default 20,000):
#      the difference of 2 and 1 is the optimal play's cost;
#   3. the default sheet (20,000 boards, 3 exact boards, 200,000 units).
#
# Usage: benches/par.sh [BOARDS]   (QUICK=1 skips the default sheet: a smoke run)
set -euo pipefail

boards="${1:-20000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# With the examples: the same features as `cargo test`, so no second build.
cargo build --release --quiet --bins --examples
issuer="$root/target/release/issuer"
store="$(mktemp -d)"
trap 'rm -rf "$store"' EXIT

echo "machine: $(nproc) core(s), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "issuer:  $("$issuer" --version)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min averages before the runs)"

# Wall seconds of one run of `issuer par --game tresors-ensables ARGS…`.
seconds() {
    local start end
    start=$(date +%s.%N)
    "$issuer" --store "$store" par --game tresors-ensables --json "$@" >/dev/null
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

exact=$(seconds --boards 2 --samples 2 --exact-boards 0)
with_boards=$(seconds --boards "$boards" --samples 2 --exact-boards 0)
full=$([[ -n ${QUICK:-} ]] && echo 0 || seconds)
printf 'exact figures (whole process):          %6.2f s\n' "$exact"
printf 'exact + optimal play over %6d boards: %6.2f s (optimal play: %.2f s)\n' \
    "$boards" "$with_boards" "$(awk -v a="$exact" -v b="$with_boards" 'BEGIN { print b - a }')"
printf 'default sheet (20000 boards, 3 exact boards, 200000 units): %6.2f s\n' "$full"
