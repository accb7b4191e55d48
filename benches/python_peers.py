"""The Python package beside the Python CEL peers (issue 36, item 5): time per call of
`ozcheck.check_filter` against cel-expr-python's compile, and of a compiled `ozcheck.compile(...)`
program's `evaluate` (event bound once; the one-shot `ozcheck.evaluate` beside it) against
cel-expr-python, common-expression-language (`cel`) and cel-python (`celpy`), over
the eight benchmark expressions and the 1 KiB expression on the realistic and the largest event;
plus the package's import time and wheel size.

Run in a virtual environment with the wheel and the peers installed:

    pip install target/wheels/ozcheck-*.whl cel-expr-python common-expression-language cel-python
    python benches/python_peers.py [--rounds 5] [--wheel target/wheels/ozcheck-*.whl]

The machine is shared and loaded: every row's implementations are measured in interleaved
rounds (one short batch of each per round) and the best batch is kept, so that a burst of load
hits every implementation alike. Calls that take longer than a second are measured once.

The compiled ozcheck program runs without a cost limit and with a minute's deadline, so that it
does the whole evaluation as the peers do (the default limit would stop the heaviest rows early
and flatter it); the one-shot `ozcheck.evaluate` column keeps its defaults (static check off).
"""

import argparse
import glob
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ROOT / "corpus" / "events"
# One batch lasts about this long; the best batch of all rounds is the figure.
BATCH_S = 0.05
SLOW_S = 1.0


def per_call(fn):
    """Seconds per call of `fn`: one batch; None when it raises what no peer would."""
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    if first > SLOW_S:
        return first
    n = max(1, int(BATCH_S / max(first, 1e-7)))
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


# (implementation, expression, event) -> the first exception a call raised: such a row's time is
# that of a failure (a peer's own budget, an unsupported function), marked in the table.
FAILED = {}


def quiet(fn, key):
    """`fn` with any exception swallowed and noted: a stopped or failed evaluation still costs
    its time, but the table must say that it did not give a value."""
    def call():
        try:
            value = fn()
        except Exception as e:  # noqa: BLE001 - a limit stopping the call is a result here
            FAILED.setdefault(key, f"{type(e).__name__}: {str(e)[:80]}")
            return
        # celpy returns some errors as values (CELEvalError), cel-expr-python as a Value of
        # type ERROR, rather than raising them.
        kind = getattr(value, "type", None)
        if "Error" in type(value).__name__ or (callable(kind) and str(kind()) == "ERROR"):
            FAILED.setdefault(key, f"{type(value).__name__}: {str(value)[:80]}")
    return call


def implementations(name, ev_name, expr, event_text, event):
    """(name, callable) for compile and evaluate of each implementation that can run `expr`."""
    import ozcheck

    compile_rows, eval_rows = [], []
    compile_rows.append(("ozcheck.check_filter", lambda: ozcheck.check_filter(expr)))
    bound = ozcheck.Event(event_text)
    program = ozcheck.compile(expr, static_check=False)
    eval_rows.append(("ozcheck Program.evaluate",
                      quiet(lambda: program.evaluate(bound, limit=0, deadline_ms=60_000),
                            ("ozcheck Program.evaluate", name, ev_name))))
    eval_rows.append(("ozcheck.evaluate", quiet(lambda: ozcheck.evaluate(expr, bound, static_check=False),
                                                    ("ozcheck.evaluate", name, ev_name))))
    try:
        from cel_expr_python import cel as google_cel
        env = google_cel.NewEnv(variables={"event": google_cel.Type.DYN})
        compile_rows.append(("cel-expr-python compile", lambda: env.compile(expr)))
        compiled = env.compile(expr)
        act = env.Activation(data={"event": event})
        eval_rows.append(("cel-expr-python", quiet(lambda: compiled.eval(activation=act),
                                                         ("cel-expr-python", name, ev_name))))
    except Exception as e:  # noqa: BLE001
        print(f"cel-expr-python: {e}", file=sys.stderr)
    try:
        import cel as cel_rust
        rust_program = cel_rust.compile(expr)
        ctx = cel_rust.Context(variables={"event": event})
        eval_rows.append(("common-expression-language", quiet(lambda: rust_program.execute(ctx),
                                   ("common-expression-language", name, ev_name))))
    except Exception as e:  # noqa: BLE001
        print(f"common-expression-language: {e}", file=sys.stderr)
    if name == "expr_1024":
        print("celpy: not run on expr_1024 (its parser exhausts memory)", file=sys.stderr)
        return compile_rows, eval_rows
    try:
        import celpy
        cenv = celpy.Environment()
        prog = cenv.program(cenv.compile(expr))
        activation = {"event": celpy.json_to_cel(event)}
        eval_rows.append(("celpy", quiet(lambda: prog.evaluate(activation), ("celpy", name, ev_name))))
    except Exception as e:  # noqa: BLE001
        print(f"celpy: {e}", file=sys.stderr)
    return compile_rows, eval_rows


def fmt(seconds):
    if seconds is None:
        return "–"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def import_time():
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import ozcheck"],
                         capture_output=True, text=True).stderr
    total = [line for line in out.splitlines() if line.rstrip().endswith("| ozcheck")]
    return int(total[-1].split("|")[1]) * 1e-6 if total else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--wheel", default=None)
    args = parser.parse_args()
    bench = json.loads((EVENTS / "expressions.json").read_text())
    exprs = [(e["name"], e["expr"]) for e in bench["expressions"]] + [("expr_1024", bench["expr_1024"])]
    events = {name: (EVENTS / f"{name}.json").read_text() for name in ("realistic", "max")}
    # celpy is pure Python: the quadratic rows on the largest event take minutes per call, and
    # its parser takes more than 20 GB on the 1 KiB expression (the first run of this script was
    # killed by the kernel's OOM killer there; under a 3 GB cap it raises MemoryError).
    skip = {("celpy", "adv_nested_exists", "max"), ("celpy", "map_filter_size", "max"),
            ("celpy", "expr_1024", "realistic"), ("celpy", "expr_1024", "max")}
    # A shared machine: no implementation may take more than 8 GB of address space.
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
    rows = []
    for name, expr in exprs:
        for ev_name, ev_text in events.items():
            event = json.loads(ev_text)
            compile_rows, eval_rows = implementations(name, ev_name, expr, ev_text, event)
            todo = [("compile", n, f) for n, f in compile_rows if ev_name == "realistic"]
            todo += [("eval", n, f) for n, f in eval_rows if (n, name, ev_name) not in skip]
            best = {}
            for _ in range(args.rounds):
                for kind, impl, fn in todo:
                    t = per_call(fn)
                    key = (kind, impl)
                    best[key] = min(best.get(key, t), t)
                    if t > SLOW_S:
                        todo = [x for x in todo if x[1] != impl or x[0] != kind]
            rows.append((name, ev_name, best))
            print(name, ev_name, {f"{k[0]} {k[1]}": fmt(v) for k, v in best.items()}, flush=True)
    impls = ["ozcheck Program.evaluate", "ozcheck.evaluate", "cel-expr-python", "common-expression-language", "celpy"]
    print("\n| expression | event | ozcheck.check_filter | cel-expr-python compile | "
          + " | ".join(impls) + " |")
    print("|---|---|---|---|" + "---|" * len(impls))
    for name, ev_name, best in rows:
        cells = [fmt(best.get(("compile", "ozcheck.check_filter"))),
                 fmt(best.get(("compile", "cel-expr-python compile")))]
        cells += [fmt(best.get(("eval", i))) + (" †" if (i, name, ev_name) in FAILED else "")
                  for i in impls]
        print(f"| {name} | {ev_name} | " + " | ".join(cells) + " |")
    if FAILED:
        print("\n† the call raised instead of giving a value (its time is the failure's):")
        for (impl, name, ev_name), error in sorted(FAILED.items()):
            print(f"- {impl}, {name}, {ev_name}: {error}")
    print(f"\nimport ozcheck: {fmt(import_time())} (python -X importtime, cumulative)")
    wheels = glob.glob(args.wheel) if args.wheel else []
    for w in wheels:
        print(f"wheel {os.path.basename(w)}: {os.path.getsize(w) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
