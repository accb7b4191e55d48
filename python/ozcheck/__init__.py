"""ozcheck: CEL filters bounded in cost before they run, and the lint of agent-platform plugins.

Every report is built from the JSON that ``ozcheck … --format json`` prints (one serializer in
the Rust libraries behind the command line, this package and the WebAssembly build), and
``to_json()`` gives that text exactly. The analysis releases the GIL: threads check in parallel.
See docs/python.md.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ozcheck import _ozcheck
from ozcheck._ozcheck import COST_MODEL_VERSION, DEFAULT_COST_LIMIT

__all__ = [
    "COST_MODEL_VERSION",
    "DEFAULT_COST_LIMIT",
    "Bounds",
    "CostLimitExceeded",
    "DeadlineExceeded",
    "Diagnostic",
    "Evaluation",
    "EvaluationError",
    "Event",
    "FilterReport",
    "LintFinding",
    "LintReport",
    "MemoryLimitExceeded",
    "OzcheckError",
    "Program",
    "Refused",
    "Witness",
    "check_filter",
    "compile",
    "evaluate",
    "lint",
    "lint_text",
    "witness",
]

_BOUND_KEYS = ("text", "attributes", "header_field")


class OzcheckError(Exception):
    """Base of every error this package raises; ``.details`` is the CLI's JSON object, if any."""

    def __init__(self, message: str, details: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class Refused(OzcheckError):
    """The expression does not compile, or the static check refuses it: it was not evaluated.

    ``.report`` is the static check's FilterReport when ``compile`` raised it (else None)."""

    report: Optional["FilterReport"] = None


class CostLimitExceeded(OzcheckError):
    """The meter stopped the evaluation at the cost limit."""


class DeadlineExceeded(OzcheckError):
    """The deadline stopped the evaluation."""


class MemoryLimitExceeded(OzcheckError):
    """The evaluation would have built more than the memory limit of values."""


class EvaluationError(OzcheckError):
    """A CEL runtime error (no such key, division by zero, no matching overload, ...)."""


_ERRORS = {
    "refused": Refused,
    "cost-limit": CostLimitExceeded,
    "deadline": DeadlineExceeded,
    "memory": MemoryLimitExceeded,
    "runtime": EvaluationError,
}


@dataclass(frozen=True)
class Bounds:
    """The largest event a source may deliver, in bytes (``ozcheck filter --max-…``)."""

    text: int = _ozcheck.DEFAULT_TEXT
    attributes: int = _ozcheck.DEFAULT_ATTRIBUTES
    header_field: int = _ozcheck.DEFAULT_HEADER_FIELD


def _bounds(bounds: Union[Bounds, Mapping[str, int], None]) -> Bounds:
    if bounds is None:
        return Bounds()
    if isinstance(bounds, Bounds):
        return bounds
    if isinstance(bounds, Mapping):
        unknown = set(bounds) - set(_BOUND_KEYS)
        if unknown:
            raise TypeError(f"unknown bound {sorted(unknown)[0]!r} (expected {', '.join(_BOUND_KEYS)})")
        return Bounds(**bounds)
    raise TypeError(f"bounds must be a Bounds or a mapping, not {type(bounds).__name__}")


def _text(value: Union[str, bytes], what: str) -> str:
    """A str as it is; bytes decoded as UTF-8 (invalid UTF-8 raises OzcheckError)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as e:
            raise OzcheckError(f"{what} is not UTF-8: invalid byte at offset {e.start}") from None
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{what} must not be negative")
    if value >= 1 << 64:
        # The extension takes 64-bit counts; past them PyO3 would raise OverflowError, which
        # is no ValueError.
        raise ValueError(f"{what} must be below 2**64")
    return value


def _extensions(value: Union[str, Sequence[str], None]) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return ",".join(value) if value else "none"
    raise TypeError("extensions must be a str or a sequence of str")


class _Json:
    """A report read from the CLI's JSON text, which it keeps to give back byte for byte."""

    _json: str

    def to_json(self) -> str:
        """The JSON text ``ozcheck … --format json`` prints for the same call (no final newline)."""
        return self._json

    def to_dict(self) -> Dict[str, Any]:
        """The same JSON as a fresh dict."""
        return json.loads(self.to_json())


@dataclass(frozen=True)
class Diagnostic:
    """One finding about an expression; ``start``/``end`` are byte offsets into it."""

    code: str
    severity: str
    message: str
    start: int
    end: int
    label: Optional[str]
    help: Optional[str]
    line: int
    column: int


def _line_column(source: str, offset: int) -> "tuple[int, int]":
    prefix = source.encode("utf-8")[:offset].decode("utf-8", errors="ignore")
    line = prefix.count("\n") + 1
    return line, len(prefix) - (prefix.rfind("\n") + 1) + 1


@dataclass(frozen=True)
class FilterReport(_Json):
    """What ``check_filter`` found: the verdict, the cost range and why."""

    verdict: str
    cost: Optional[Dict[str, int]]
    limit: int
    diagnostics: List[Diagnostic]
    would_pass: Optional[Dict[str, Any]]
    explain: Optional[str]
    cost_model_version: int
    _json: str = field(repr=False)

    @property
    def accepted(self) -> bool:
        """Whether the expression may run."""
        return self.verdict == "accepted"

    @classmethod
    def _from(cls, text: str, source: str) -> "FilterReport":
        d = json.loads(text)
        diagnostics = []
        for g in d["diagnostics"]:
            line, column = _line_column(source, g["span"]["start"])
            diagnostics.append(Diagnostic(g["code"], g["severity"], g["message"], g["span"]["start"],
                                          g["span"]["end"], g.get("label"), g.get("help"), line, column))
        return cls(d["verdict"], d["cost"], d["limit"], diagnostics, d["would_pass"], d.get("explain"),
                   d["cost_model_version"], text)


@dataclass(frozen=True)
class Witness(_Json):
    """The heaviest event within the bounds that the estimate leads to, and its metered cost."""

    event: Dict[str, Any]
    cost: int
    complete: bool
    evaluations: int
    report: FilterReport
    cost_model_version: int
    _json: str = field(repr=False)


@dataclass(frozen=True)
class Evaluation(_Json):
    """A finished evaluation: its value, metered cost, static estimate and time."""

    value: Any
    cost: int
    estimate: Optional[Dict[str, int]]
    elapsed_us: int
    cost_model_version: int
    # The JSON text, or (from Program.evaluate) the extension's handle that writes it on demand.
    _json: Any = field(repr=False, compare=False)

    def to_json(self) -> str:
        """The JSON text ``ozcheck eval --format json`` prints for the same call (no final newline)."""
        text = self._json
        return text if isinstance(text, str) else text.json()


@dataclass(frozen=True)
class LintFinding:
    """One lint finding at 1-based lines and columns, with its safe fix if there is one."""

    code: str
    severity: str
    message: str
    help: Optional[str]
    fix: Optional[Dict[str, Any]]
    file: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class LintReport(_Json):
    """The findings of a lint run."""

    diagnostics: List[LintFinding]
    has_errors: bool
    cost_model_version: int
    _json: str = field(repr=False)

    @classmethod
    def _from(cls, text: str, has_errors: bool) -> "LintReport":
        d = json.loads(text)
        findings = [LintFinding(**f) for f in d["diagnostics"]]
        return cls(findings, has_errors, d["cost_model_version"], text.rstrip("\n"))


class Event:
    """An event read once (strictly, within its bounds) for many evaluations."""

    __slots__ = ("_event",)

    def __init__(self, event: Union[str, bytes, Mapping[str, Any]], *,
                 bounds: Union[Bounds, Mapping[str, int], None] = None) -> None:
        if isinstance(event, Mapping):
            try:
                # allow_nan=False: NaN and infinities are not JSON, and the strict reader would
                # refuse them anyway; a dict too deep for the encoder is refused here too.
                text = json.dumps(event, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
            except (ValueError, RecursionError) as e:
                raise OzcheckError(f"event: {e}") from None
        else:
            text = _text(event, "event")
        b = _bounds(bounds)
        try:
            self._event = _ozcheck.Event(text, b.text, b.attributes, b.header_field)
        except ValueError as e:
            raise OzcheckError(str(e)) from None


def check_filter(expr: Union[str, bytes], *, bounds: Union[Bounds, Mapping[str, int], None] = None,
                 limit: int = DEFAULT_COST_LIMIT, extensions: Union[str, Sequence[str], None] = None,
                 context: str = "filter", explain: bool = False) -> FilterReport:
    """Checks a CEL expression (``ozcheck filter --format json``): syntax, types, worst-case cost."""
    source = _text(expr, "expr")
    b = _bounds(bounds)
    if not isinstance(context, str):
        raise TypeError("context must be a str")
    try:
        text = _ozcheck.check_filter(source, _int(limit, "limit"), _int(b.text, "bounds.text"),
                                     _int(b.attributes, "bounds.attributes"),
                                     _int(b.header_field, "bounds.header_field"), context,
                                     _extensions(extensions), bool(explain))
    except ValueError as e:
        raise OzcheckError(str(e)) from None
    return FilterReport._from(text, source)


def witness(expr: Union[str, bytes], *, bounds: Union[Bounds, Mapping[str, int], None] = None,
            limit: int = DEFAULT_COST_LIMIT,
            extensions: Union[str, Sequence[str], None] = None) -> Witness:
    """Builds the worst event within the bounds for a filter (``ozcheck filter --witness``)."""
    source = _text(expr, "expr")
    b = _bounds(bounds)
    try:
        report_text, witness_text = _ozcheck.witness(
            source, _int(limit, "limit"), _int(b.text, "bounds.text"),
            _int(b.attributes, "bounds.attributes"), _int(b.header_field, "bounds.header_field"),
            _extensions(extensions))
    except ValueError as e:
        raise OzcheckError(str(e)) from None
    report = FilterReport._from(report_text, source)
    if witness_text is None:
        message = report.diagnostics[0].message if report.diagnostics else "no witness"
        raise Refused(f"no witness: {message}", report.to_dict())
    d = json.loads(witness_text)
    return Witness(d["event"], d["cost"], d["complete"], d["evaluations"], report,
                   d["cost_model_version"], witness_text)


def _event(event: Union[Event, str, bytes, Mapping[str, Any]]) -> "_ozcheck.Event":
    """The extension's event: an Event's own, else the event read now with the default bounds."""
    if isinstance(event, Event):
        return event._event
    return Event(event)._event


def _stopped(text: str) -> OzcheckError:
    """The exception for an evaluation error in the JSON ``ozcheck eval`` prints."""
    d = json.loads(text)
    return _ERRORS.get(d["error"]["kind"], OzcheckError)(d["error"]["message"], d)


# A filter compiled once by ``compile``: parsed, checked and estimated; ``evaluate(event, *,
# limit=None, deadline_ms=250)`` evaluates it. Immutable: several threads may evaluate one
# Program at once (each evaluation has its own meter and releases the GIL while it runs). The
# class is the extension's (``_ozcheck.Program``): a Python wrapper cost as much again as the
# evaluation of a small filter.
Program = _ozcheck.Program


def compile(expr: Union[str, bytes], *, bounds: Union[Bounds, Mapping[str, int], None] = None,
            limit: int = DEFAULT_COST_LIMIT, extensions: Union[str, Sequence[str], None] = None,
            context: str = "filter", static_check: bool = True) -> Program:
    """Compiles a filter once for many evaluations (``Program.evaluate``).

    The static check is ``check_filter``'s with the same arguments (``limit=0``: no limit); a
    filter it refuses raises ``Refused`` (``.report`` is the FilterReport, ``.details`` what
    ``evaluate`` would have raised), as does one that does not parse. ``static_check=False``
    only parses it (``.report`` and ``.estimate`` are None), as ``evaluate(static_check=False)``."""
    source = _text(expr, "expr")
    b = _bounds(bounds)
    if not isinstance(context, str):
        raise TypeError("context must be a str")
    limit = _int(limit, "limit")
    try:
        compiled, report_text, refused_text = _ozcheck.compile(
            source, limit, _int(b.text, "bounds.text"), _int(b.attributes, "bounds.attributes"),
            _int(b.header_field, "bounds.header_field"), context, _extensions(extensions),
            bool(static_check))
    except ValueError as e:
        raise OzcheckError(str(e)) from None
    report = None if report_text is None else FilterReport._from(report_text, source)
    if compiled is None:
        d = json.loads(refused_text)
        refused = Refused(d["error"]["message"], d)
        refused.report = report
        raise refused
    if report is not None:
        _ozcheck.set_report(compiled, report)
    return compiled


def evaluate(expr: Union[str, bytes], event: Union[Event, str, bytes, Mapping[str, Any]], *,
             limit: int = DEFAULT_COST_LIMIT, deadline_ms: int = 250,
             static_check: bool = True) -> Evaluation:
    """Evaluates a filter over an event with the metered evaluator (``ozcheck eval``).

    Raises the subclass of OzcheckError that names what stopped it."""
    source = _text(expr, "expr")
    bound = event if isinstance(event, Event) else Event(event)
    ok, text = _ozcheck.evaluate(source, bound._event, _int(limit, "limit"),
                                 _int(deadline_ms, "deadline_ms"), bool(static_check))
    d = json.loads(text)
    if not ok:
        error = d["error"]
        raise _ERRORS.get(error["kind"], OzcheckError)(error["message"], d)
    return Evaluation(d["value"], d["cost"], d["estimate"], d["elapsed_us"], d["cost_model_version"],
                      text)


def lint(paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]], *,
         config: Union[str, "os.PathLike[str]", None] = None) -> LintReport:
    """Lints plugin files and folders (``ozcheck lint --format json``)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, (list, tuple)):
        raise TypeError("paths must be a path or a sequence of paths")
    listed = [os.fspath(p) for p in paths]
    if not all(isinstance(p, str) for p in listed):
        raise TypeError("paths must be str or os.PathLike[str]")
    cfg = None if config is None else os.fspath(config)
    if cfg is not None and not isinstance(cfg, str):
        raise TypeError("config must be a str path")
    try:
        text, has_errors = _ozcheck.lint(listed, cfg)
    except ValueError as e:
        raise OzcheckError(str(e)) from None
    return LintReport._from(text, has_errors)


def lint_text(text: Union[str, bytes], path: str) -> LintReport:
    """Lints one buffer as the file ``path`` (the save-time call), default configuration."""
    source = _text(text, "text")
    if not isinstance(path, str):
        raise TypeError("path must be a str")
    report = _ozcheck.lint_text(source, path)
    d = json.loads(report)
    return LintReport._from(report, any(f["severity"] == "error" for f in d["diagnostics"]))
