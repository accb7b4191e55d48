#!/usr/bin/env bash
# Builds benches/side_by_side/bench.rs with two analyzers in one binary and runs it in both
# orders, ROUNDS times (default 2): OLD_TREE's analyzer (a checkout of an earlier commit, e.g. a
# worktree) as `old`, this tree's as `new`. Prints the medians side by side
# (benches/side_by_side/compare.py).
#
#   git worktree add ../r1 314e586
#   benches/side-by-side.sh ../r1 [SCRATCH_DIR]
#
# Both analyzers are compiled with the same settings (opt-level 3, one scratch package), so only
# their source differs. The scratch package is written to SCRATCH_DIR (default: a new temporary
# folder) and is not part of the repository.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
old=$(cd "$1" && pwd)
scratch=${2:-$(mktemp -d)}
mkdir -p "$scratch/benches/side_by_side"
# The old analyzer is copied so that its version can differ: one dependency graph cannot hold
# two path packages of one name and one version.
rm -rf "$scratch/old"
mkdir -p "$scratch/old"
cp -r "$old/analyzer" "$scratch/old/"
python3 "$here/benches/side_by_side/standalone.py" "$scratch/old/analyzer/Cargo.toml" "$old/Cargo.toml"
cat > "$scratch/Cargo.toml" <<TOML
[package]
name = "side-by-side"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
analyzer_old = { package = "ozcheck-analyzer", path = "old/analyzer" }
analyzer_new = { package = "ozcheck-analyzer", path = "$here/analyzer" }
criterion = { version = "0.8", default-features = false, features = ["cargo_bench_support"] }
serde_json = "1"

[[bench]]
name = "bench"
path = "benches/side_by_side/bench.rs"
harness = false

[profile.bench]
debug = false

[workspace]
TOML
cp "$here/benches/side_by_side/bench.rs" "$scratch/benches/side_by_side/"
rm -rf "$scratch/benches/shared"
cp -r "$here/benches/shared" "$scratch/benches/"
cd "$scratch"
export OZCHECK_EVENTS="$here/corpus/events"
cargo bench --bench bench --no-run
args=(--warm-up-time 1 --measurement-time 3)
# ROUNDS rounds of both orders; on a shared machine one run of a 100 ns benchmark can move by a
# fifth, so the table's median over the runs is the figure to read.
baselines=()
for round in $(seq "${ROUNDS:-2}"); do
  for order in old-first new-first; do
    ORDER=$order cargo bench --bench bench -- "${args[@]}" --save-baseline "$order-$round"
    baselines+=("$order-$round")
  done
done
python3 "$here/benches/side_by_side/compare.py" "$scratch/target/criterion" "${baselines[@]}"
