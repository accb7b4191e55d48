from dataclasses import dataclass
from os import PathLike
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

COST_MODEL_VERSION: int
DEFAULT_COST_LIMIT: int

_Bounds = Union["Bounds", Mapping[str, int], None]
_Text = Union[str, bytes]
_Extensions = Union[str, Sequence[str], None]
_Path = Union[str, PathLike[str]]

class OzcheckError(Exception):
    message: str
    details: Dict[str, Any]
    def __init__(self, message: str, details: Optional[Dict[str, Any]] = ...) -> None: ...

class Refused(OzcheckError):
    report: Optional[FilterReport]
class CostLimitExceeded(OzcheckError): ...
class DeadlineExceeded(OzcheckError): ...
class MemoryLimitExceeded(OzcheckError): ...
class EvaluationError(OzcheckError): ...

@dataclass(frozen=True)
class Bounds:
    text: int = ...
    attributes: int = ...
    header_field: int = ...

@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: str
    message: str
    start: int
    end: int
    label: Optional[str]
    help: Optional[str]
    line: int
    column: int

class _Json:
    def to_json(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...

@dataclass(frozen=True)
class FilterReport(_Json):
    verdict: str
    cost: Optional[Dict[str, int]]
    limit: int
    diagnostics: List[Diagnostic]
    would_pass: Optional[Dict[str, Any]]
    explain: Optional[str]
    cost_model_version: int
    @property
    def accepted(self) -> bool: ...

@dataclass(frozen=True)
class Witness(_Json):
    event: Dict[str, Any]
    cost: int
    complete: bool
    evaluations: int
    report: FilterReport
    cost_model_version: int

@dataclass(frozen=True)
class Evaluation(_Json):
    value: Any
    cost: int
    estimate: Optional[Dict[str, int]]
    elapsed_us: int
    cost_model_version: int

@dataclass(frozen=True)
class LintFinding:
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
    diagnostics: List[LintFinding]
    has_errors: bool
    cost_model_version: int

class Event:
    def __init__(self, event: Union[_Text, Mapping[str, Any]], *, bounds: _Bounds = ...) -> None: ...

def check_filter(expr: _Text, *, bounds: _Bounds = ..., limit: int = ..., extensions: _Extensions = ...,
                 context: str = ..., explain: bool = ...) -> FilterReport: ...
def witness(expr: _Text, *, bounds: _Bounds = ..., limit: int = ...,
            extensions: _Extensions = ...) -> Witness: ...
class Program:
    """A filter compiled once by ``compile``: parsed, checked and estimated.

    Immutable and thread-safe: several threads may evaluate one Program at once (each
    evaluation has its own meter and releases the GIL while it runs)."""

    expr: str
    report: Optional[FilterReport]
    limit: int
    @property
    def estimate(self) -> Optional[Dict[str, int]]: ...
    def evaluate(self, event: Union[Event, _Text, Mapping[str, Any]], *, limit: Optional[int] = ...,
                 deadline_ms: int = ...) -> Evaluation: ...

def compile(expr: _Text, *, bounds: _Bounds = ..., limit: int = ..., extensions: _Extensions = ...,
            context: str = ..., static_check: bool = ...) -> Program: ...
def evaluate(expr: _Text, event: Union[Event, _Text, Mapping[str, Any]], *, limit: int = ...,
             deadline_ms: int = ..., static_check: bool = ...) -> Evaluation: ...
def lint(paths: Union[_Path, Sequence[_Path]], *, config: Optional[_Path] = ...) -> LintReport: ...
def lint_text(text: _Text, path: str) -> LintReport: ...
