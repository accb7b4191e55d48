#!/usr/bin/env python3
"""Instructions per evaluation of the eight benchmark expressions (and per event binding), counted
by callgrind for one or more builds of `analyzer/examples/eval_instructions.rs`, side by side.

    cargo build --release -p ozcheck-analyzer --example eval_instructions
    python3 benches/eval_instructions.py LABEL=BINARY [LABEL=BINARY ...]

Each case runs at two repetition counts; the difference of the two totals divided by the
difference of the counts is the cost of one evaluation, without the set-up (parsing, binding).
Instruction counts do not depend on the machine's load, so two commits compare exactly even on
a busy machine; they are not times (a cache miss and an add count the same), so BENCHMARKS.md
shows them beside criterion's medians.
"""

import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
EVENTS = ("realistic.json", "max.json")


def collected(binary: str, case: str, event: str, n: int) -> int:
    """Total instructions of one run under callgrind."""
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", binary, case, event, str(n)],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if not found:
        sys.exit(f"no callgrind total for {case} {event}:\n{run.stderr}")
    return int(found.group(1))


def per_eval(binary: str, case: str, event: str) -> float:
    # The nested loops over the largest event take milliseconds each: fewer repetitions.
    low, high = (1, 4) if (case, event) == ("adv_nested_exists", "max.json") else (10, 210)
    return (collected(binary, case, event, high) - collected(binary, case, event, low)) / (high - low)


def main() -> None:
    builds = [arg.split("=", 1) for arg in sys.argv[1:]]
    if not builds or any(len(b) != 2 for b in builds):
        sys.exit(__doc__)
    names = [e["name"] for e in json.loads((ROOT / "corpus/events/expressions.json").read_text())["expressions"]]
    labels = [label for label, _ in builds]
    header = "| case | " + " | ".join(labels) + (" | change |" if len(builds) == 2 else " |")
    print(header)
    print("|---|" + "--:|" * (len(builds) + (1 if len(builds) == 2 else 0)))
    for case in ["bind", *names]:
        for event in EVENTS:
            counts = [per_eval(binary, case, event) for _, binary in builds]
            row = f"| `{case}/{event.removesuffix('.json')}` | " + " | ".join(f"{c:,.0f}" for c in counts)
            if len(counts) == 2:
                row += f" | {(counts[1] / counts[0] - 1) * 100:+.1f}%"
            print(row + " |", flush=True)


if __name__ == "__main__":
    main()
