#!/usr/bin/env python3
"""Prints the side-by-side bench's medians as a Markdown table: for every group, `old` and `new`
in each saved run (baseline), the change, and the median and the largest change of the runs.

    python3 compare.py CRITERION_DIR BASELINE [BASELINE ...]
"""

import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from compare_baselines import saved, show  # noqa: E402


def medians(root: pathlib.Path, baseline: str) -> dict:
    """(group, function) -> median in nanoseconds, for every benchmark saved under `baseline`."""
    return {(b["group_id"], b["function_id"]): m for b, m in saved(root, baseline)}


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1])
    runs = [(name, medians(root, name)) for name in sys.argv[2:]]
    groups = sorted({g for _, m in runs for (g, _) in m})
    head = "| benchmark |"
    rule = "|---|"
    for name, _ in runs:
        head += f" old ({name}) | new ({name}) | change |"
        rule += "--:|--:|--:|"
    print(head + " median change | largest change |")
    print(rule + "--:|--:|")
    for group in groups:
        row = f"| `{group}` |"
        changes = []
        for _, m in runs:
            old, new = m.get((group, "old")), m.get((group, "new"))
            if old is None or new is None:
                row += " | | |"
                continue
            change = (new / old - 1) * 100
            changes.append(change)
            row += f" {show(old)} | {show(new)} | {change:+.1f}% |"
        worst = max(changes, key=abs) if changes else 0.0
        middle = statistics.median(changes) if changes else 0.0
        print(row + f" {middle:+.1f}% | {worst:+.1f}% |")


if __name__ == "__main__":
    main()
