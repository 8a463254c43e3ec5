#!/usr/bin/env bash
# Emission generation benchmark (issue 5; figures in docs/PERFORMANCE.md
# §Emissions). Not a timed test: it measures, it does not judge.
#
# Builds the release binary, then in fresh stores times
#   issuer generate --game ile-au-tresor --emission N --price 1 --blocks 20 --jobs J --quiet
# for J = 1 and 2, and prints units per second (blocks × 450,000 / seconds)
# and the peak resident memory (GNU time's "Maximum resident set size").
# A 2-block run with 1 job is timed too: its peak memory next to the
# 20-block run's shows that memory does not grow with the block count.
#
# Usage: benches/emission.sh [EMISSION [BLOCKS]]   (default emission 1,
# 20 blocks; CI's quick run: `benches/emission.sh 1 1`)
# Needs about 0.5 GB of free disk in $TMPDIR (two 20-block emissions).
set -euo pipefail

emission="${1:-1}"
blocks="${2:-20}"
units_per_block=450000
root="$(cd "$(dirname "$0")/.." && pwd)"

cd "$root"
# With the examples: the same features as `cargo test`, so no second build.
cargo build --release --quiet --bins --examples
issuer="$root/target/release/issuer"

gnu_time=/usr/bin/time
if [[ -x $gnu_time ]] && "$gnu_time" -v true >/dev/null 2>&1; then
    have_time=1
else
    have_time=0
    echo "note: GNU time ($gnu_time) is absent: peak memory is NOT measured" >&2
    echo "      (install it with: apt-get install -y time)" >&2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "machine: $(nproc) core(s), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "issuer:  $("$issuer" --version)"
# Other work on the machine slows the wall clock: the CPU seconds (user +
# system, from GNU time) show the work itself.
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min averages before the runs)"
printf '%-6s %-6s %10s %14s %10s %14s\n' jobs blocks seconds units/s "CPU s" "peak RSS MiB"

run() {
    local jobs="$1" blocks="$2"
    local store="$work/store-j$jobs-b$blocks"
    "$issuer" --store "$store" keygen >/dev/null
    local cmd=("$issuer" --store "$store" generate --game ile-au-tresor
        --emission "$emission" --price 1 --blocks "$blocks" --jobs "$jobs" --quiet)
    local start end rss="n/a" cpu="n/a"
    start=$(date +%s%N)
    if ((have_time)); then
        "$gnu_time" -v -o "$work/time.txt" "${cmd[@]}" >/dev/null
    else
        "${cmd[@]}" >/dev/null
    fi
    end=$(date +%s%N)
    if ((have_time)); then
        rss=$(awk -F: '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$work/time.txt")
        cpu=$(awk -F: '/(User|System) time \(seconds\)/ { t += $2 } END { printf "%.2f", t }' "$work/time.txt")
    fi
    awk -v ns="$((end - start))" -v n="$((blocks * units_per_block))" \
        -v jobs="$jobs" -v blocks="$blocks" -v rss="$rss" -v cpu="$cpu" \
        'BEGIN { s = ns / 1e9; printf "%-6s %-6s %10.2f %14.0f %10s %14s\n", jobs, blocks, s, n / s, cpu, rss }'
    rm -rf "$store"
}

run 1 "$blocks"
run 2 "$blocks"
if ((blocks > 2)); then run 1 2; fi
