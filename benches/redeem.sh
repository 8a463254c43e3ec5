#!/usr/bin/env bash
# Redemption benchmark (issue 4; figures in docs/PERFORMANCE.md §Redemption).
#
# Builds the release binary, generates one block (emission 1, block 1, 1 €)
# in a temporary store and closes the emission; every phase's IDs are
# marked sold (`mark-sold --ids`, untimed: a redemption requires a sale,
# issue 13), then it measures:
#   (a) one `issuer redeem` as a whole process (start, key and block reads,
#       authentication of header, index and chunk, proof, sale check,
#       ledger commit),
#       every run on a different unit ID, with hyperfine if installed, else
#       a plain loop timed with `date +%s%N`; and `redeem --check` (the same
#       work without the ledger commit) for comparison;
#   (b) the sustained rate of redemptions per second into one ledger, with
#       1 and with 2 concurrent streams of `issuer redeem` processes.
# Every phase starts from an empty ledger and checks afterwards that the
# ledger holds exactly the units redeemed and reconciles.
#
# Usage: benches/redeem.sh
# Environment: RUNS (default 200) IDs for (a); STREAM_IDS (default 2000)
# IDs for (b); NO_HYPERFINE=1 forces the plain loop; TMPDIR picks the disk
# the store lives on (the ledger's fsyncs are part of what is measured).
set -euo pipefail

RUNS=${RUNS:-200}
STREAM_IDS=${STREAM_IDS:-2000}
WARMUP=3

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
echo "building release binary..."
# With the examples: the same features as `cargo test`, so no second build.
cargo build --release --quiet --bins --examples
ISSUER="$root/target/release/issuer"

work=$(mktemp -d "${TMPDIR:-/tmp}/redeem-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
store="$work/store"
block="$store/emissions/ile-au-tresor/e000001/b000001.tkb"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr)"
echo "store:   $store ($(df -T "$work" | awk 'NR == 2 {print $2}'))"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at start"

echo "generating one block of 450,000 units..."
"$ISSUER" --store "$store" generate --game ile-au-tresor --emission 1 --block 1 \
    --price 1 --quiet --json >/dev/null
"$ISSUER" --store "$store" close --emission 1 >/dev/null

# Distinct IDs spread over the whole block (every chunk is exercised).
needed=$(( RUNS + WARMUP + 5 > STREAM_IDS ? RUNS + WARMUP + 5 : STREAM_IDS ))
step=$(( 450000 / needed ))
"$ISSUER" --store "$store" export "$block" \
    | awk -v step="$step" 'NR % step == 1' \
    | sed -E 's/^\{"id":"([^"]+)".*/\1/' >"$work/ids"
[ "$(wc -l <"$work/ids")" -ge "$needed" ] || { echo "not enough IDs" >&2; exit 1; }

# An empty ledger, created before timing so runs measure redemption only,
# where the IDs are then marked sold (the sales live in the ledger).
fresh_ledger() {
    rm -f "$store"/ledger.sqlite "$store"/ledger.sqlite-wal "$store"/ledger.sqlite-shm
    # A new ledger: the emissions' bindings to the last one go with it.
    rm -f "$store"/emissions/*/*/ledger.json
    "$ISSUER" --store "$store" ledger >/dev/null
    "$ISSUER" --store "$store" mark-sold --emission 1 --ids "$work/ids" >/dev/null
}

# Checks that the ledger holds $1 units and reconciles (exit 0 of `ledger`).
check_ledger() {
    local report units
    report=$("$ISSUER" --store "$store" ledger --json) || {
        echo "ledger does not reconcile: $report" >&2
        exit 1
    }
    units=$(sed -E 's/.*\],"units":([0-9]+),.*/\1/' <<<"$report")
    [ "$units" -eq "$1" ] || { echo "ledger holds $units units, expected $1" >&2; exit 1; }
    echo "  ledger: $units units, reconciled, integrity ok"
}

# Mean, median, min and max of microsecond figures (one per line), in ms.
summarise() {
    sort -n "$1" | awk '{ v[NR] = $1; s += $1 }
        END { printf "  %d runs: mean %.2f ms, median %.2f ms, min %.2f ms, max %.2f ms\n",
              NR, s / NR / 1000, v[int((NR + 1) / 2)] / 1000, v[1] / 1000, v[NR] / 1000 }'
}

echo
echo "(a) one redemption as a whole process, $RUNS distinct IDs"
fresh_ledger
check_id=$(tail -n 1 "$work/ids")
if [ -z "${NO_HYPERFINE:-}" ] && command -v hyperfine >/dev/null; then
    # Each run redeems the next ID of the queue; the untimed --prepare step
    # drops the one before, so no ID is redeemed twice (a refusal would
    # exit 1 and stop hyperfine).
    cp "$work/ids" "$work/queue"
    hyperfine --style basic --warmup "$WARMUP" --runs "$RUNS" \
        --prepare "tail -n +2 '$work/queue' >'$work/queue.next' && mv '$work/queue.next' '$work/queue'" \
        --command-name "issuer redeem ID --json (records)" \
        "read -r id <'$work/queue'; '$ISSUER' --store '$store' redeem \"\$id\" --json >/dev/null"
    hyperfine --style basic --warmup "$WARMUP" --runs "$RUNS" --shell=none \
        --command-name "issuer redeem ID --check --json (records nothing)" \
        "'$ISSUER' --store '$store' redeem '$check_id' --check --json"
    # hyperfine ran warmups and runs, each on its own ID.
    redeemed=$(( $(wc -l <"$work/ids") - $(wc -l <"$work/queue") ))
else
    echo "  (hyperfine not installed: plain loop timed with date +%s%N; each figure includes one date fork)"
    : >"$work/a.us"
    while read -r id; do
        t0=$(date +%s%N)
        "$ISSUER" --store "$store" redeem "$id" --json >/dev/null
        t1=$(date +%s%N)
        echo $(( (t1 - t0) / 1000 )) >>"$work/a.us"
    done < <(head -n "$RUNS" "$work/ids")
    echo "  issuer redeem ID --json (records):"
    summarise "$work/a.us"
    : >"$work/check.us"
    for _ in $(seq "$RUNS"); do
        t0=$(date +%s%N)
        "$ISSUER" --store "$store" redeem "$check_id" --check --json >/dev/null
        t1=$(date +%s%N)
        echo $(( (t1 - t0) / 1000 )) >>"$work/check.us"
    done
    echo "  issuer redeem ID --check --json (records nothing):"
    summarise "$work/check.us"
    redeemed=$RUNS
fi
check_ledger "$redeemed"

# One stream: redeems the IDs of file $1 one process after another.
stream() {
    while read -r id; do
        "$ISSUER" --store "$store" redeem "$id" --json >/dev/null \
            || { echo "redeem $id failed" >&2; return 1; }
    done <"$1"
}

echo
echo "(b) sustained redemptions into one ledger, $STREAM_IDS distinct IDs"
head -n "$STREAM_IDS" "$work/ids" >"$work/stream-ids"
for streams in 1 2; do
    fresh_ledger
    rm -f "$work"/part.*
    split -n "r/$streams" -d "$work/stream-ids" "$work/part."
    t0=$(date +%s%N)
    pids=()
    for part in "$work"/part.*; do
        stream "$part" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do
        wait "$pid"
    done
    t1=$(date +%s%N)
    elapsed_ms=$(( (t1 - t0) / 1000000 ))
    echo "  $streams stream(s): $STREAM_IDS redemptions in $elapsed_ms ms:" \
        "$(( STREAM_IDS * 1000 / elapsed_ms )) redemptions/s," \
        "one every $(awk -v ms="$elapsed_ms" -v n="$STREAM_IDS" 'BEGIN { printf "%.2f", ms / n }') ms"
    check_ledger "$STREAM_IDS"
done
echo
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at end"
