#!/bin/bash
# Runs route_bench builds against one PostgreSQL server in alternation, ROUNDS times, so that
# each build meets the machine in the same states: on a shared two-core machine the same work
# costs up to twice as much CPU from one minute to the next, and only pairs run one after the
# other compare builds. Before each run it times a fixed piece of work (sha256 of 100 MB from the
# page cache) so the machine's speed that minute is printed beside the run.
#
#   benches/route-pairs.sh URL EDGES IN_FLIGHT EVENTS ROUNDS path/to/route_bench [more...]
#
# Each line: time, round, build, calibration seconds, then route_bench's events/s, latencies
# (ms) and the machine's busy CPU per event with its split.
set -euo pipefail
url=$1 edges=$2 in_flight=$3 events=$4 rounds=$5
shift 5
scratch=$(mktemp -d "${TMPDIR:-/tmp}/route-pairs.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
head -c 100000000 /dev/urandom >"$scratch/calibration"
for round in $(seq 1 "$rounds"); do
    for bench in "$@"; do
        start=$(date +%s.%N)
        sha256sum "$scratch/calibration" >/dev/null
        calibration=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
        out=$("$bench" postgres "$url" "$edges" "$events" "$in_flight" 2>&1)
        summary=$(printf '%s\n' "$out" | grep -oE '[0-9]+ events/s wall|p50 [0-9.]+ms|p99 [0-9.]+ms|every process\): [0-9.]+ µs \([^)]*\)' | tr '\n' ' ')
        printf '%s r%s %s cal %.2fs %s\n' "$(date +%T)" "$round" "$bench" "$calibration" "$summary"
    done
done
