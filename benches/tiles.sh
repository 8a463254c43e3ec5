#!/usr/bin/env bash
# Proofs read a few rows however large the log (issue 21; figures in
# docs/PERFORMANCE.md §Proofs from tiles): builds a store whose SQLite
# ledger holds ENTRIES synthetic sales (examples/tiles_proof.rs), then
# times inclusion and consistency proofs from the tiles, counting the rows
# each reads, and `ledger verify`'s read of every leaf beside them.
#   ENTRIES   log size (10000000; ENTRIES=20000 is a smoke run)
set -euo pipefail
cd "$(dirname "$0")/.."
ENTRIES=${ENTRIES:-10000000}
cargo build --release --quiet --example tiles_proof
work=$(mktemp -d /tmp/tiles-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr)"
target/release/examples/tiles_proof "$work" "$ENTRIES"
