#!/usr/bin/env python3
"""Instructions per static check (`check_expression` in the filter environment, default options:
what the Python package's `check_filter` calls) of the eight benchmark expressions, and per
one-shot evaluation on the realistic event (the check, then the program built and run: what the
package's `evaluate` does), counted by callgrind for one or more builds of
`analyzer/examples/check_instructions.rs`, side by side.

    cargo build --release -p ozcheck-analyzer --example check_instructions
    python3 benches/check_instructions.py LABEL=BINARY [LABEL=BINARY ...]

Each case runs at two repetition counts; the difference of the two totals divided by the
difference of the counts is the cost of one call, without the set-up. Instruction counts do not
depend on the machine's load, so two commits compare exactly even on a busy machine.
"""

import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LOW, HIGH = 10, 110


def collected(binary: str, mode: str, case: str, n: int) -> int:
    """Total instructions of one run under callgrind."""
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", binary, mode, case, str(n)],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if not found:
        sys.exit(f"no callgrind total for {mode} {case}:\n{run.stderr}")
    return int(found.group(1))


def per_call(binary: str, mode: str, case: str) -> float:
    return (collected(binary, mode, case, HIGH) - collected(binary, mode, case, LOW)) / (HIGH - LOW)


def main() -> None:
    builds = [arg.split("=", 1) for arg in sys.argv[1:]]
    if not builds or any(len(b) != 2 for b in builds):
        sys.exit(__doc__)
    names = [e["name"] for e in json.loads((ROOT / "corpus/events/expressions.json").read_text())["expressions"]]
    two = len(builds) == 2
    print("| call | " + " | ".join(label for label, _ in builds) + (" | change |" if two else " |"))
    print("|---|" + "--:|" * (len(builds) + (1 if two else 0)))
    for mode in ("check", "oneshot"):
        for case in names:
            counts = [per_call(binary, mode, case) for _, binary in builds]
            row = f"| {mode} `{case}` | " + " | ".join(f"{c:,.0f}" for c in counts)
            if two:
                row += f" | {(counts[1] / counts[0] - 1) * 100:+.1f}%"
            print(row + " |", flush=True)


if __name__ == "__main__":
    main()
