#!/usr/bin/env bash
# How fast a witness cosigns (issue 26; figures in docs/PERFORMANCE.md
# §Witnesses): `issuer witness serve` fed COUNT growing checkpoints of a
# log made in examples/witness_rate.rs, one after another, each persisted
# (fsync) before it is cosigned.
#   COUNT   checkpoints (2000; COUNT=50 is a smoke run)
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-2000}
cargo build --release --quiet --bin issuer --example witness_rate
work=$(mktemp -d /tmp/witness-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr); state on $(df -T "$work" | awk 'NR==2 {print $2}')"
target/release/examples/witness_rate target/release/issuer "$work" "$COUNT"
