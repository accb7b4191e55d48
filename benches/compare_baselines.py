#!/usr/bin/env python3
"""Prints a Markdown table of two criterion baselines side by side: the median of every benchmark
that both hold, and the second's change against the first.

    cargo bench --bench eval -- --save-baseline before     # at the older commit
    cargo bench --bench eval -- --save-baseline after      # at the newer one, same target dir
    python3 benches/compare_baselines.py before after [TARGET_DIR] [FILTER]

TARGET_DIR defaults to ./target; FILTER keeps the benchmarks whose id contains it.
"""

import json
import pathlib
import sys


def saved(root: pathlib.Path, baseline: str):
    """(criterion's benchmark.json, median in nanoseconds) of every benchmark saved under
    `baseline`."""
    for estimates in root.glob(f"**/{baseline}/estimates.json"):
        bench = json.loads((estimates.parent / "benchmark.json").read_text())
        yield bench, json.loads(estimates.read_text())["median"]["point_estimate"]


def medians(root: pathlib.Path, baseline: str) -> dict:
    """Benchmark id -> median in nanoseconds, for every benchmark saved under `baseline`."""
    return {bench["full_id"]: median for bench, median in saved(root, baseline)}


def show(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    before, after = sys.argv[1], sys.argv[2]
    root = pathlib.Path(sys.argv[3] if len(sys.argv) > 3 else "target") / "criterion"
    keep = sys.argv[4] if len(sys.argv) > 4 else ""
    old, new = medians(root, before), medians(root, after)
    print(f"| benchmark | {before} | {after} | change |")
    print("|---|--:|--:|--:|")
    for bench in sorted(old.keys() & new.keys()):
        if keep in bench:
            change = (new[bench] / old[bench] - 1) * 100
            print(f"| `{bench}` | {show(old[bench])} | {show(new[bench])} | {change:+.1f}% |")


if __name__ == "__main__":
    main()
