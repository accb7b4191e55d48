"""The installed wheel, as a Python user and a pre-commit hook meet it: every call, the command
line beside the cargo binary, hostile input, threads."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import ozcheck

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "corpus" / "events"
# The smallest event the strict reader takes: every header field, text and attributes.
SMALL = {"id": "1", "source": "s", "type": "t", "action": "a", "subject": "x", "text": "",
         "attributes": {}}
NESTED = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))"
_BENCH = json.loads((EVENTS / "expressions.json").read_text())
EXPRESSIONS = [e["expr"] for e in _BENCH["expressions"]] + [_BENCH["expr_1024"]]
# The cargo-built binary the wheel's command is compared with (.ci/run sets it).
CARGO_BIN = os.environ.get("OZCHECK_CARGO_BIN")


def console(*args, stdin=None):
    """Runs the wheel's `ozcheck` command (the venv's console script)."""
    exe = Path(sys.executable).with_name("ozcheck")
    return subprocess.run([str(exe), *args], cwd=ROOT, input=stdin, capture_output=True)


def test_acceptance_line():
    assert ozcheck.check_filter('event.text.contains("LGTM")').verdict == "accepted"


def test_check_filter_report_fields():
    report = ozcheck.check_filter("event.text == 'x'")
    assert report.accepted and report.cost["min"] <= report.cost["max"] <= report.limit
    assert report.cost_model_version == ozcheck.COST_MODEL_VERSION
    assert report.to_dict()["cost_model_version"] == ozcheck.COST_MODEL_VERSION
    refused = ozcheck.check_filter("event.atributes == 1")
    d = refused.diagnostics[0]
    assert (refused.verdict, d.code, d.line, d.column) == ("refused", "unknown-field", 1, 7)
    assert "event.atributes == 1"[d.start:d.end] == "atributes"


def test_would_pass_bounds_limit_and_explain():
    report = ozcheck.check_filter(NESTED, explain=True)
    assert report.verdict == "refused"
    assert report.would_pass["bounds"][0]["flag"] == "--max-attributes"
    assert "exists" in report.explain
    small = ozcheck.check_filter(NESTED, bounds={"attributes": 64})
    assert small.accepted
    assert ozcheck.check_filter("event.text == 'x'", limit=1).verdict == "refused"


def test_extensions_and_context():
    assert ozcheck.check_filter("'a,b'.split(',').size() == 2", extensions="none").verdict == "refused"
    assert ozcheck.check_filter("'a,b'.split(',').size() == 2", extensions=["strings"]).accepted
    assert ozcheck.check_filter("trigger.event.text != ''", context="when").accepted
    assert ozcheck.check_filter("trigger.event.text != ''").verdict == "refused"
    with pytest.raises(ozcheck.OzcheckError, match="unknown context"):
        ozcheck.check_filter("true", context="nope")
    with pytest.raises(ozcheck.OzcheckError):
        ozcheck.check_filter("true", extensions="no-such-extension")


def test_witness_replays_to_its_cost():
    w = ozcheck.witness("event.text.contains('LGTM')")
    assert isinstance(w.event, dict) and w.cost > 0 and w.complete
    again = ozcheck.evaluate("event.text.contains('LGTM')", w.event)
    assert again.cost == w.cost
    with pytest.raises(ozcheck.Refused):
        ozcheck.witness("event.")


def test_evaluate_value_cost_estimate():
    event = ozcheck.Event((EVENTS / "realistic.json").read_text())
    done = ozcheck.evaluate("event.action == 'opened'", event)
    assert done.value is True
    assert done.estimate["min"] <= done.cost <= done.estimate["max"]
    assert done.cost_model_version == ozcheck.COST_MODEL_VERSION


def test_each_limit_raises_its_exception():
    adv = ozcheck.Event((EVENTS / "adv_int8k.json").read_text())
    with pytest.raises(ozcheck.Refused) as refused:
        ozcheck.evaluate(NESTED, adv)
    assert refused.value.details["error"]["diagnostics"][0]["code"] == "cost-over-limit"
    with pytest.raises(ozcheck.CostLimitExceeded):
        ozcheck.evaluate(NESTED, adv, static_check=False, deadline_ms=600_000)
    with pytest.raises(ozcheck.DeadlineExceeded):
        ozcheck.evaluate(NESTED, adv, static_check=False, limit=0, deadline_ms=1)
    with pytest.raises(ozcheck.EvaluationError):
        ozcheck.evaluate("event.attributes.missing == 1", SMALL, static_check=False)
    for cls in (ozcheck.Refused, ozcheck.CostLimitExceeded, ozcheck.DeadlineExceeded,
                ozcheck.MemoryLimitExceeded, ozcheck.EvaluationError):
        assert issubclass(cls, ozcheck.OzcheckError)


def test_lint_and_lint_text():
    report = ozcheck.lint(ROOT / "corpus" / "plugins" / "sample")
    codes = {f.code for f in report.diagnostics}
    assert "compound-timeout" in codes
    assert report.cost_model_version == ozcheck.COST_MODEL_VERSION
    text = (ROOT / "corpus/plugins/sample/flows/ci-watch.yaml").read_text()
    one = ozcheck.lint_text(text, "flows/ci-watch.yaml")
    finding = next(f for f in one.diagnostics if f.code == "compound-timeout")
    assert (finding.line, finding.column) == (11, 16) and finding.fix is not None
    with pytest.raises(ozcheck.OzcheckError):
        ozcheck.lint(ROOT / "corpus", config=ROOT / "no-such.toml")


def test_hostile_input_raises_never_crashes():
    huge = "a" * (2 * 1024 * 1024)
    report = ozcheck.check_filter(huge)
    assert report.verdict == "refused" and report.diagnostics
    assert ozcheck.lint_text(huge, "agents/a.yaml").has_errors
    with pytest.raises(ozcheck.OzcheckError, match="not UTF-8"):
        ozcheck.check_filter(b"event.text == '\xff'")
    assert ozcheck.check_filter(b"event.text == 'x'").accepted
    deep = "(" * 100_000 + "true" + ")" * 100_000
    assert ozcheck.check_filter(deep).verdict == "refused"
    nested_event = "{" + '"a":{' * 10_000 + "}" * 10_000 + "}"
    with pytest.raises(ozcheck.OzcheckError):
        ozcheck.evaluate("true", dict(SMALL, attributes=json.loads('{"a":' * 100 + "1" + "}" * 100)))
    with pytest.raises(ozcheck.OzcheckError):
        ozcheck.Event(nested_event)
    with pytest.raises(ozcheck.OzcheckError):
        ozcheck.lint_text(b"\xff\xfe", "agents/a.yaml")


@pytest.mark.parametrize("call", [
    lambda: ozcheck.check_filter(1),
    lambda: ozcheck.check_filter("true", limit="1"),
    lambda: ozcheck.check_filter("true", limit=-1),
    lambda: ozcheck.check_filter("true", limit=2 ** 64),
    lambda: ozcheck.witness("true", bounds={"text": 2 ** 64}),
    lambda: ozcheck.check_filter("true", bounds=3),
    lambda: ozcheck.check_filter("true", bounds={"nope": 1}),
    lambda: ozcheck.check_filter("true", extensions=3),
    lambda: ozcheck.check_filter("true", context=None),
    lambda: ozcheck.witness(None),
    lambda: ozcheck.evaluate("true", 3),
    lambda: ozcheck.evaluate("true", SMALL, deadline_ms=1.5),
    lambda: ozcheck.lint(3),
    lambda: ozcheck.lint("corpus", config=3),
    lambda: ozcheck.lint_text("x", 3),
    lambda: ozcheck.lint_text(None, "a.yaml"),
])
def test_wrong_argument_types_raise(call):
    with pytest.raises((TypeError, ValueError, ozcheck.OzcheckError)):
        call()


def test_threads_give_the_serial_answers():
    exprs = EXPRESSIONS * 4
    serial = [ozcheck.check_filter(e).to_json() for e in exprs]
    results = [None] * len(exprs)

    def work(i):
        results[i] = ozcheck.check_filter(exprs[i]).to_json()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(exprs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == serial


def test_console_script_lints_the_sample_plugin():
    out = console("lint", "corpus/plugins/sample")
    assert out.returncode == 1
    assert b"compound-timeout" in out.stdout
    assert console("--version").returncode == 0
    assert console("no-such-command").returncode == 2


@pytest.mark.skipif(not CARGO_BIN, reason="OZCHECK_CARGO_BIN not set (.ci/run sets it)")
@pytest.mark.parametrize("args", [
    ["lint", "corpus/plugins/sample"],
    ["lint", "--format", "json", "corpus/plugins"],
    ["lint", "--format", "sarif", "corpus/plugins/err"],
    ["rules"],
    ["schema", "flow"],
    ["filter", NESTED],
    ["filter", "--format", "json", "--explain", NESTED],
    ["eval", "--format", "json", "event.action == 'opened'", "--event", "corpus/events/realistic.json"],
    ["eval", "--format", "json", NESTED, "--event", "corpus/events/adv_int8k.json"],
    ["filter", "--format", "json"] + EXPRESSIONS[:1],
    ["serve"],
    ["--help"],
] + [["filter", "--format", "json", e] for e in EXPRESSIONS])
def test_byte_for_byte_as_the_cargo_binary(args):
    wheel = console(*args)
    cargo = subprocess.run([CARGO_BIN, *args], cwd=ROOT, capture_output=True)
    assert wheel.returncode == cargo.returncode
    if b'"elapsed_us"' in cargo.stdout:
        assert _same_but_time(wheel.stdout, cargo.stdout)
    else:
        assert wheel.stdout == cargo.stdout
    assert wheel.stderr == cargo.stderr


def _same_but_time(a, b):
    """Evaluation JSON differs only in elapsed_us, which is a measurement."""
    try:
        x, y = json.loads(a), json.loads(b)
    except ValueError:
        return False
    x.pop("elapsed_us", None)
    y.pop("elapsed_us", None)
    return x == y


# Filters whose values cover every kind the JSON report writes specially (bytes, timestamps,
# durations, type values, uint, doubles with NaN and infinities, maps with non-string keys,
# optionals), beside the benchmark expressions: a compiled Program must give evaluate's answer.
VALUE_KINDS = [
    "event.attributes",
    "[event.text, event.action, 1, 2u, 2.5, -0.0, null, true]",
    "{1: 'one', 2u: 'two', true: 'yes', 'k': [b'\\x00\\xff']}",
    "[timestamp('2026-01-02T03:04:05Z'), duration('90s'), type(1), int]",
    "[double('NaN'), double('inf'), -double('inf')]",
    "[optional.of(1), optional.none()]",
    "event.attributes.missing == 1",
    "event.text.size() / 0 == 1",
    "event.",
]
PROGRAM_EVENTS = ["realistic", "max", "adv_budget"]


def outcome(call):
    """What a call gave, comparable across calls: the value, cost, estimate and report without
    its elapsed time, or the exception's class and details."""
    try:
        done = call()
    except ozcheck.OzcheckError as e:
        return type(e), e.message, e.details
    report = done.to_dict()
    del report["elapsed_us"]
    return done.value, done.cost, done.estimate, report


def same(a, b):
    """Equality that takes NaN as equal to itself (it arrives as the string "NaN" in both)."""
    return json.dumps(a, sort_keys=True, default=repr) == json.dumps(b, sort_keys=True, default=repr)


@pytest.mark.parametrize("static_check", [True, False])
def test_program_gives_evaluate_s_answer(static_check):
    for name in PROGRAM_EVENTS:
        event = ozcheck.Event((EVENTS / f"{name}.json").read_text())
        for expr in EXPRESSIONS + VALUE_KINDS:
            expected = outcome(lambda: ozcheck.evaluate(expr, event, static_check=static_check,
                                                        deadline_ms=600_000))
            try:
                program = ozcheck.compile(expr, static_check=static_check)
            except ozcheck.Refused as e:
                assert expected[0] is ozcheck.Refused, (name, expr)
                assert (e.message, e.details) == expected[1:], (name, expr)
                continue
            got = outcome(lambda: program.evaluate(event, deadline_ms=600_000))
            assert got[0] is not ozcheck.Refused
            assert same(got, expected), (name, expr, got, expected)


def test_program_value_is_python_not_json_text():
    done = ozcheck.compile("[1, 2u, 'x', {'a': true}, 1.5]", static_check=False).evaluate(SMALL)
    assert done.value == [1, 2, "x", {"a": True}, 1.5] and done.estimate is None
    assert json.loads(done.to_json())["value"] == done.value
    for expr in VALUE_KINDS[:6]:
        done = ozcheck.compile(expr, static_check=False).evaluate(SMALL)
        assert same(done.value, json.loads(done.to_json())["value"]), expr
    checked = ozcheck.compile("event.text == 'x'")
    assert checked.evaluate(SMALL).estimate == checked.estimate == checked.report.cost


def test_program_report_estimate_and_refusal():
    program = ozcheck.compile("event.text.contains('LGTM')", bounds={"text": 1024}, limit=10_000)
    assert program.report.accepted and program.report.limit == 10_000
    assert program.estimate == program.report.cost
    assert program.limit == 10_000
    with pytest.raises(AttributeError):
        program.limit = 1
    with pytest.raises(TypeError):
        ozcheck.Program()
    # The report is set once, by compile: the extension refuses to replace it.
    with pytest.raises(ValueError):
        ozcheck._ozcheck.set_report(program, None)
    with pytest.raises(ozcheck.Refused) as refused:
        ozcheck.compile(NESTED)
    assert refused.value.report.verdict == "refused"
    assert refused.value.report.diagnostics[0].code == "cost-over-limit"
    assert refused.value.details["error"]["diagnostics"][0]["code"] == "cost-over-limit"
    # The bounds decide: with small attributes the same filter is accepted.
    assert ozcheck.compile(NESTED, bounds={"attributes": 64}).report.accepted
    unchecked = ozcheck.compile(NESTED, static_check=False)
    assert unchecked.report is None and unchecked.estimate is None
    with pytest.raises(ozcheck.OzcheckError, match="unknown context"):
        ozcheck.compile("true", context="nope")
    with pytest.raises(ozcheck.OzcheckError):
        ozcheck.compile("true", extensions="nope")


def test_program_each_limit_raises_its_exception():
    adv = ozcheck.Event((EVENTS / "adv_int8k.json").read_text())
    program = ozcheck.compile(NESTED, static_check=False)
    with pytest.raises(ozcheck.CostLimitExceeded) as cost:
        program.evaluate(adv, deadline_ms=600_000)
    assert cost.value.details["error"]["cost"] > ozcheck.DEFAULT_COST_LIMIT
    with pytest.raises(ozcheck.CostLimitExceeded):
        program.evaluate(adv, limit=1000, deadline_ms=600_000)
    with pytest.raises(ozcheck.DeadlineExceeded):
        program.evaluate(adv, limit=0, deadline_ms=1)
    with pytest.raises(ozcheck.EvaluationError, match="no such key"):
        ozcheck.compile("event.attributes.missing == 1", static_check=False).evaluate(SMALL)
    # Ten doublings of a 16 KiB text build 32 MiB: past the memory cap before the cost limit.
    doubling = "[event.text]" + ".map(x, x + x)" * 10 + ".size() == 1"
    text = ozcheck.Event(dict(SMALL, text="a" * 16384), bounds={"text": 16384})
    with pytest.raises(ozcheck.MemoryLimitExceeded):
        ozcheck.compile(doubling, static_check=False).evaluate(text, limit=0, deadline_ms=600_000)


def test_threads_evaluate_one_program_at_once():
    program = ozcheck.compile("event.attributes.labels.exists(l, l.startsWith('bug'))", limit=0)
    events = [ozcheck.Event((EVENTS / f"{n}.json").read_text()) for n in PROGRAM_EVENTS] * 8
    serial = [outcome(lambda: program.evaluate(e, deadline_ms=600_000))[:3] for e in events]
    results = [None] * len(events)
    start = threading.Barrier(len(events))

    def work(i):
        start.wait()
        results[i] = outcome(lambda: program.evaluate(events[i], deadline_ms=600_000))[:3]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(events))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == serial


def test_program_hostile_input_raises_never_crashes():
    mib = "event.text == '" + "a" * (1024 * 1024) + "'"
    for static_check in (True, False):
        with pytest.raises(ozcheck.Refused):
            ozcheck.compile(mib, static_check=static_check)
    with pytest.raises(ozcheck.Refused):
        ozcheck.compile("(" * 100_000 + "true" + ")" * 100_000, static_check=False)
    with pytest.raises(ozcheck.Refused):
        ozcheck.compile("99999999999999999999999 > 1")
    program = ozcheck.compile("event.text == 'x'")
    deep = {}
    for _ in range(100_000):
        deep = {"a": deep}
    with pytest.raises(ozcheck.OzcheckError):
        program.evaluate(dict(SMALL, attributes=deep))
    with pytest.raises(ozcheck.OzcheckError):
        program.evaluate("{" + '"a":{' * 10_000 + "}" * 10_000 + "}")
    for not_an_object in ("[1, 2]", "1", "null", b"\xff", "{"):
        with pytest.raises(ozcheck.OzcheckError):
            program.evaluate(not_an_object)
    for wrong in ([SMALL], 3, None, 1.5):
        with pytest.raises(TypeError):
            program.evaluate(wrong)
    # Refused before serialising (json.dumps would write the non-JSON token NaN), with a
    # message that names the float, not a column of text the caller never wrote.
    for nan in (float("nan"), float("inf")):
        with pytest.raises(ozcheck.OzcheckError, match="float"):
            program.evaluate(dict(SMALL, attributes={"x": nan}))
    with pytest.raises(ozcheck.OzcheckError):
        program.evaluate('{"id":"1","source":"s","type":"t","action":"a","subject":"x","text":"",'
                         '"attributes":{"x":NaN}}')
    # Integers past 64 bits: the reader takes them as doubles or refuses them, never crashes.
    for huge in (2 ** 64, -(2 ** 63) - 1, 10 ** 400):
        try:
            program.evaluate(dict(SMALL, attributes={"x": huge}))
        except ozcheck.OzcheckError:
            pass
    for limits in ({"limit": 2 ** 64}, {"limit": -1}, {"deadline_ms": 2 ** 70}, {"deadline_ms": -5}):
        with pytest.raises(ValueError):
            program.evaluate(SMALL, **limits)
    with pytest.raises(ValueError):
        ozcheck.compile("true", limit=2 ** 64)


@pytest.mark.parametrize("call", [
    lambda: ozcheck.compile(1),
    lambda: ozcheck.compile("true", limit="1"),
    lambda: ozcheck.compile("true", limit=True),
    lambda: ozcheck.compile("true", bounds=3),
    lambda: ozcheck.compile("true", bounds={"nope": 1}),
    lambda: ozcheck.compile("true", extensions=3),
    lambda: ozcheck.compile("true", context=None),
    lambda: ozcheck.compile("true").evaluate(SMALL, limit="1"),
    lambda: ozcheck.compile("true").evaluate(SMALL, deadline_ms=1.5),
])
def test_compile_wrong_argument_types_raise(call):
    with pytest.raises((TypeError, ValueError)):
        call()
