# Shared start of the benchmark scripts that time whole release processes
# (sourced, not run): builds the release binary, sets $root, $issuer and
# $work (a temporary directory removed on exit), prints the machine, and
# defines `timed`. Works without GNU time (wall time only) for CI's smoke
# runs.
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# With the examples: the same features as `cargo test`, so no second build.
cargo build --release --quiet --bins --examples
issuer="$root/target/release/issuer"
gnu_time=/usr/bin/time
have_time=0
if [[ -x $gnu_time ]] && "$gnu_time" -v true >/dev/null 2>&1; then
    have_time=1
else
    echo "note: GNU time ($gnu_time) is absent: wall time only, no CPU or peak memory (apt-get install -y time)" >&2
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) core(s), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "issuer:  $("$issuer" --version)"

# timed OUT COMMAND…: runs COMMAND with its stdout to OUT and sets `wall`
# and `cpu` (seconds) and `rss` (peak, KiB); cpu and rss are 0 without GNU
# time.
timed() {
    local out=$1 start end user sys
    shift
    start=$(date +%s%N)
    if ((have_time)); then
        "$gnu_time" -f "%U %S %M" -o "$work/time" "$@" >"$out"
    else
        "$@" >"$out"
    fi
    end=$(date +%s%N)
    wall=$(awk -v ns="$((end - start))" 'BEGIN { print ns / 1e9 }')
    cpu=0 rss=0
    if ((have_time)); then
        read -r user sys rss <"$work/time"
        cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
    fi
}
