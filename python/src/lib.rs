//! The extension module `ozcheck._ozcheck`: the analyzer, the lint and the command line behind
//! the Python package. It holds no logic of its own beyond conversion: every answer is the JSON
//! text the shared serializer writes (`ozcheck_analyzer::json`, `ozcheck_lint::render`), which
//! the package's Python layer turns into typed reports, so the package cannot drift from
//! `ozcheck … --format json`. Every analysis runs with the GIL released (`Python::detach`), so
//! threads check filters in parallel.
//!
//! One exception to the JSON rule, for speed: a compiled [`Compiled`] program's result value is
//! converted to Python objects directly ([`to_python`]), mirroring `Value::to_json` case by case
//! so that the value equals what `json.loads` of the JSON report gives; the report's JSON text
//! itself is still written by the shared serializer, on demand ([`Rendered`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyInt, PyList};

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::eval::{self, Key, Limits, Program, SystemClock, Value};
use ozcheck_analyzer::syntax::{self, ParseOptions};
use ozcheck_analyzer::{CostRange, EventBounds, Extensions, Options, Verdict, json};

/// The environment named `context`, with `extensions` (`None`: Kubernetes' default set;
/// `"none"`: the standard library alone; else names separated by commas).
fn environment(context: &str, extensions: Option<&str>) -> PyResult<Env> {
    let env = match context {
        "filter" => Env::filter(),
        "sender" => Env::sender(),
        "when" => Env::when(true, &[]),
        "template" => Env::template(true, &[]),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown context `{other}` (expected filter, sender, when or template)"
            )));
        }
    };
    let Some(list) = extensions else {
        return Ok(env);
    };
    if list.trim() == "none" {
        return Ok(env.with_extensions(Extensions::NONE));
    }
    let names: Vec<&str> = list.split(',').map(str::trim).collect();
    let set = Extensions::from_names(&names).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(env.with_extensions(set))
}

/// The options of a check: the cost limit and the source's three bounds.
fn options(limit: u64, text: u64, attributes: u64, header_field: u64) -> Options {
    Options {
        limit,
        bounds: EventBounds {
            text,
            attributes,
            header_field,
        },
        ..Options::default()
    }
}

/// `ozcheck filter --format json [--explain]`: the report as JSON text.
#[pyfunction]
#[pyo3(signature = (expr, limit, text, attributes, header_field, context, extensions, explain))]
#[allow(clippy::too_many_arguments)]
fn check_filter(
    py: Python<'_>,
    expr: String,
    limit: u64,
    text: u64,
    attributes: u64,
    header_field: u64,
    context: &str,
    extensions: Option<&str>,
    explain: bool,
) -> PyResult<String> {
    let env = environment(context, extensions)?;
    let options = options(limit, text, attributes, header_field);
    Ok(py.detach(|| {
        let report = ozcheck_analyzer::check_expression(&expr, &env, &options);
        let mut value = json::report(&report);
        if explain {
            if let Ok(tree) = ozcheck_analyzer::explain_expression(&expr, &env, &options) {
                json::add_explain(&mut value, &tree);
            }
        }
        value.to_string()
    }))
}

/// The witness of a filter as JSON text (`json::witness`), with the report beside it; the
/// witness is `None` when the expression does not compile.
#[pyfunction]
#[pyo3(signature = (expr, limit, text, attributes, header_field, extensions))]
fn witness(
    py: Python<'_>,
    expr: String,
    limit: u64,
    text: u64,
    attributes: u64,
    header_field: u64,
    extensions: Option<&str>,
) -> PyResult<(String, Option<String>)> {
    let env = environment("filter", extensions)?;
    let options = options(limit, text, attributes, header_field);
    Ok(py.detach(|| {
        let (report, witness) = ozcheck_analyzer::check_with_witness(&expr, &env, &options);
        let mut value = json::report(&report);
        if let Some(witness) = &witness {
            json::add_witness(&mut value, witness);
        }
        (
            value.to_string(),
            witness.map(|w| json::witness(&w).to_string()),
        )
    }))
}

/// An event read once (strictly, within its bounds) and evaluated against many times, as the
/// Python peers bind theirs.
#[pyclass(frozen, module = "ozcheck._ozcheck")]
struct Event {
    event: Arc<eval::Event>,
}

#[pymethods]
impl Event {
    /// Reads an event from its JSON text; a malformed or oversized event raises `ValueError`
    /// with the reader's message.
    #[new]
    #[pyo3(signature = (json, text, attributes, header_field))]
    fn new(
        py: Python<'_>,
        json: String,
        text: u64,
        attributes: u64,
        header_field: u64,
    ) -> PyResult<Self> {
        let bounds = EventBounds {
            text,
            attributes,
            header_field,
        };
        let event = py
            .detach(|| eval::Event::from_json(&json, &bounds))
            .map_err(|e| PyValueError::new_err(format!("event: {e}")))?;
        Ok(Self {
            event: Arc::new(event),
        })
    }
}

/// The deadline of an evaluation that names none (`ozcheck.evaluate`'s default).
const DEFAULT_DEADLINE_MS: u64 = 250;

/// The limits of one evaluation: `limit` cost units (0: none) and `deadline_ms`, on a clock
/// started now.
fn limits(limit: u64, deadline_ms: u64) -> Limits {
    Limits::with_clock_of(Arc::new(SystemClock::new()))
        .with_cost((limit > 0).then_some(limit))
        .with_deadline(Duration::from_millis(deadline_ms))
}

/// `ozcheck.Program`: a filter parsed, checked and estimated once, evaluated any number of
/// times. It is immutable (`frozen`; the report is set once, by `compile`): several threads may
/// evaluate one program at once, each with its own meter.
///
/// The whole of `evaluate` is here rather than in the Python layer: a Python wrapper (argument
/// checks, building the `Evaluation`) cost as much again as a small filter's evaluation. The
/// Python layer is still called for what is rare: reading an event that is not an `Event`,
/// checking an argument that is not a plain int, and building the exception of a stopped run.
#[pyclass(frozen, name = "Program", module = "ozcheck")]
struct Compiled {
    program: Program,
    /// The static estimate (`None` when compiled without the static check).
    estimate: Option<CostRange>,
    /// The cost limit an evaluation gets by default (0: none).
    limit: u64,
    /// The source.
    expr: String,
    /// The static check's `FilterReport` (unset without the static check).
    report: PyOnceLock<Py<PyAny>>,
}

/// Compiles `expr` as `ozcheck.evaluate` prepares it: the static check under `limit` (0: no
/// limit) in `context`, then the parse `ozcheck eval` evaluates. Returns the program (`None`
/// when refused), the check's report as JSON text (`None` without the static check) and the
/// refusal as `ozcheck eval --format json` writes it (`None` when compiled).
#[pyfunction]
#[pyo3(signature = (expr, limit, text, attributes, header_field, context, extensions, static_check))]
#[allow(clippy::too_many_arguments)]
fn compile(
    py: Python<'_>,
    expr: String,
    limit: u64,
    text: u64,
    attributes: u64,
    header_field: u64,
    context: &str,
    extensions: Option<&str>,
    static_check: bool,
) -> PyResult<(Option<Compiled>, Option<String>, Option<String>)> {
    let env = environment(context, extensions)?;
    // `ozcheck eval` checks against no limit when it runs with none (`static_check`).
    let static_limit = if limit == 0 { u64::MAX } else { limit };
    let options = options(static_limit, text, attributes, header_field);
    Ok(py.detach(|| {
        let (estimate, report) = if static_check {
            let report = ozcheck_analyzer::check_expression(&expr, &env, &options);
            let text = json::report(&report).to_string();
            if report.verdict == Verdict::Refused {
                let errors: Vec<_> = report
                    .diagnostics
                    .into_iter()
                    .filter(ozcheck_analyzer::Diagnostic::is_error)
                    .collect();
                return (None, Some(text), Some(json::refused(&errors).to_string()));
            }
            (report.cost, Some(text))
        } else {
            (None, None)
        };
        match syntax::parse(&expr, &ParseOptions::default()).and_then(Program::new) {
            Ok(program) => (
                Some(Compiled {
                    program,
                    estimate,
                    limit,
                    expr,
                    report: PyOnceLock::new(),
                }),
                report,
                None,
            ),
            Err(diagnostics) => (None, report, Some(json::refused(&diagnostics).to_string())),
        }
    }))
}

/// The package's Python objects that a compiled program's evaluation uses, imported once.
static EVALUATION: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static READ_EVENT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static CHECK_INT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static STOPPED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The extension's event for `event`: an `Event` of the extension or of the package as it is,
/// else read now by the package (`ozcheck._event`: JSON text, bytes or a dict, or a `TypeError`).
fn bound_event<'py>(py: Python<'py>, event: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Event>> {
    if let Ok(event) = event.cast::<Event>() {
        return Ok(event.clone());
    }
    if let Ok(inner) = event.getattr(intern!(py, "_event")) {
        if let Ok(inner) = inner.cast_into::<Event>() {
            return Ok(inner);
        }
    }
    let read = READ_EVENT.import(py, "ozcheck", "_event")?;
    Ok(read.call1((event,))?.cast_into::<Event>()?)
}

/// A count argument: a plain int that fits 64 bits as it is; anything else through the
/// package's own check, which raises the `TypeError` or `ValueError` that names the argument.
fn count(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    if value.is_exact_instance_of::<PyInt>() {
        if let Ok(n) = value.extract::<u64>() {
            return Ok(n);
        }
    }
    let check = CHECK_INT.import(py, "ozcheck", "_int")?;
    check.call1((value, what))?.extract()
}

#[pymethods]
impl Compiled {
    /// Evaluates over `event` within `limit` (default: the compiled limit; 0: no cost limit)
    /// and `deadline_ms`, the GIL released while it runs: an `ozcheck.Evaluation`, or the
    /// exception of what stopped it.
    #[pyo3(signature = (event, *, limit = None, deadline_ms = None))]
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        event: &Bound<'py, PyAny>,
        limit: Option<&Bound<'py, PyAny>>,
        deadline_ms: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let event = Arc::clone(&bound_event(py, event)?.get().event);
        let limit = match limit {
            None => self.limit,
            Some(value) => count(py, value, "limit")?,
        };
        let deadline_ms = match deadline_ms {
            None => DEFAULT_DEADLINE_MS,
            Some(value) => count(py, value, "deadline_ms")?,
        };
        let (result, elapsed_us) = py.detach(|| {
            let limits = limits(limit, deadline_ms);
            let started = Instant::now();
            let result = self.program.eval_event(&event, &limits);
            (result, started.elapsed().as_micros() as u64)
        });
        let done = match result {
            Ok(done) => done,
            Err(error) => {
                let stopped = STOPPED.import(py, "ozcheck", "_stopped")?;
                let error = stopped.call1((json::eval_error(&error).to_string(),))?;
                return Err(PyErr::from_value(error));
            }
        };
        // The frozen dataclass's __init__ sets each field through object.__setattr__; filling
        // a fresh instance's __dict__ makes the same object for a fraction of the time.
        let class = EVALUATION.import(py, "ozcheck", "Evaluation")?;
        let evaluation = class.call_method1(intern!(py, "__new__"), (class,))?;
        let fields = evaluation
            .getattr(intern!(py, "__dict__"))?
            .cast_into::<PyDict>()?;
        fields.set_item(intern!(py, "value"), to_python(py, &done.value)?)?;
        fields.set_item(intern!(py, "cost"), done.cost)?;
        fields.set_item(intern!(py, "estimate"), self.estimate(py)?)?;
        fields.set_item(intern!(py, "elapsed_us"), elapsed_us)?;
        fields.set_item(
            intern!(py, "cost_model_version"),
            ozcheck_analyzer::cost::COST_MODEL_VERSION,
        )?;
        let rendered = Rendered {
            done,
            estimate: self.estimate,
            elapsed_us,
        };
        fields.set_item(intern!(py, "_json"), Py::new(py, rendered)?)?;
        Ok(evaluation)
    }

    /// The static cost range `{"min", "max"}` (a fresh dict), `None` without the static check.
    #[getter]
    fn estimate<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(estimate) = self.estimate else {
            return Ok(None);
        };
        let range = PyDict::new(py);
        range.set_item(intern!(py, "min"), estimate.min)?;
        range.set_item(intern!(py, "max"), estimate.max)?;
        Ok(Some(range))
    }

    /// The cost limit an evaluation gets by default (0: none).
    #[getter]
    fn limit(&self) -> u64 {
        self.limit
    }

    /// The expression.
    #[getter]
    fn expr(&self) -> &str {
        &self.expr
    }

    /// The static check's `FilterReport`, `None` when compiled without it.
    #[getter]
    fn report(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.report.get(py).map(|r| r.clone_ref(py))
    }

    fn __repr__(&self) -> String {
        format!("Program({:?})", self.expr)
    }
}

/// Sets a program's report once (`ozcheck.compile` builds it from the JSON text).
#[pyfunction]
fn set_report(py: Python<'_>, program: &Compiled, report: Py<PyAny>) -> PyResult<()> {
    program
        .report
        .set(py, report)
        .map_err(|_| PyValueError::new_err("the program's report is already set"))
}

/// A finished evaluation kept to write its JSON report only if asked: most callers want the
/// value alone, and the text costs more than the evaluation for small filters.
#[pyclass(frozen, module = "ozcheck._ozcheck")]
struct Rendered {
    done: eval::Evaluation,
    estimate: Option<CostRange>,
    elapsed_us: u64,
}

#[pymethods]
impl Rendered {
    /// The text `ozcheck eval --format json` prints for this evaluation (no final newline).
    fn json(&self) -> String {
        json::evaluation(&self.done, self.estimate, self.elapsed_us).to_string()
    }
}

/// A value as Python objects, case by case as `Value::to_json` writes it (so `json.loads` of the
/// report gives an equal object): numbers, strings, lists and maps as themselves (map keys as
/// strings), `null` and an empty optional as `None`, and bytes, timestamps, durations, type
/// values and non-finite doubles as the strings the JSON holds.
fn to_python(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::Null | Value::Optional(None) => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::Uint(u) => u.into_pyobject(py)?.into_any().unbind(),
        Value::Double(d) if d.is_finite() => d.into_pyobject(py)?.into_any().unbind(),
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::List(items) => {
            let list = PyList::empty(py);
            for item in items.iter() {
                list.append(to_python(py, item)?)?;
            }
            list.into_any().unbind()
        }
        Value::Map(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map.entries() {
                let item = to_python(py, item)?;
                match key {
                    Key::String(s) => dict.set_item(&**s, item)?,
                    Key::Bool(b) => dict.set_item(b.to_string(), item)?,
                    Key::Int(i) => dict.set_item(i.to_string(), item)?,
                    Key::Uint(u) => dict.set_item(u.to_string(), item)?,
                }
            }
            dict.into_any().unbind()
        }
        Value::Optional(Some(inner)) => to_python(py, inner)?,
        // Bytes (base64), timestamps, durations, type values, NaN and infinities: the JSON
        // string, so the value equals the JSON report's.
        other => match other.to_json() {
            serde_json::Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
            // Not reached (every remaining case writes a string); kept total rather than
            // panicking on a future value kind: its JSON text.
            json => json.to_string().into_pyobject(py)?.into_any().unbind(),
        },
    })
}

/// `ozcheck eval --format json`: `(true, outcome)` when it ran to a value, `(false, error)` when
/// it was refused or stopped; the Python layer raises the exception of the error's kind.
#[pyfunction]
#[pyo3(signature = (expr, event, limit, deadline_ms, static_check))]
fn evaluate(
    py: Python<'_>,
    expr: String,
    event: &Event,
    limit: u64,
    deadline_ms: u64,
    static_check: bool,
) -> (bool, String) {
    let event = Arc::clone(&event.event);
    py.detach(|| {
        let estimate = if static_check {
            match ozcheck::cmd::eval::static_check(&expr, limit, ozcheck_analyzer::EventBounds::DEFAULT) {
                Ok(estimate) => estimate,
                Err(diagnostics) => return (false, json::refused(&diagnostics).to_string()),
            }
        } else {
            None
        };
        let program = match syntax::parse(&expr, &ParseOptions::default()).and_then(Program::new) {
            Ok(program) => program,
            Err(diagnostics) => return (false, json::refused(&diagnostics).to_string()),
        };
        let limits = limits(limit, deadline_ms);
        let started = Instant::now();
        let result = program.eval_event(&event, &limits);
        let elapsed_us = started.elapsed().as_micros() as u64;
        match result {
            Ok(done) => (
                true,
                json::evaluation(&done, estimate, elapsed_us).to_string(),
            ),
            Err(error) => (false, json::eval_error(&error).to_string()),
        }
    })
}

/// `ozcheck lint --format json PATH…`: the findings as JSON text and whether any is an error.
/// The configuration is the file `config`, else the nearest `ozcheck.toml` above the first path.
#[pyfunction]
#[pyo3(signature = (paths, config))]
fn lint(py: Python<'_>, paths: Vec<PathBuf>, config: Option<PathBuf>) -> PyResult<(String, bool)> {
    py.detach(|| -> Result<(String, bool), String> {
        let config = match &config {
            Some(path) => ozcheck_lint::discover::read_config(path),
            None => ozcheck_lint::discover::nearest_config(
                paths
                    .first()
                    .map_or(std::path::Path::new("."), PathBuf::as_path),
            ),
        }?;
        let (targets, context) =
            ozcheck_lint::discover::collect(&paths).map_err(|e| e.to_string())?;
        let reports = ozcheck_lint::lint(&targets, &context, &config);
        Ok((
            ozcheck_lint::render::json(&reports),
            ozcheck_lint::has_errors(&reports),
        ))
    })
    .map_err(PyValueError::new_err)
}

/// The lint of one buffer under `path` (the save-time call), with the default configuration:
/// the findings as JSON text.
#[pyfunction]
fn lint_text(py: Python<'_>, text: String, path: String) -> String {
    py.detach(|| {
        let report = ozcheck_lint::lint_text(&path, &text, &ozcheck_lint::Config::default());
        ozcheck_lint::render::json(&[report])
    })
}

/// The `ozcheck` command: runs it with `argv` (the program's name first) and returns its exit
/// status. It prints to the process's own standard output and error, as the cargo binary does.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| ozcheck::cli::status(ozcheck::cli::run(argv)))
}

/// The module.
#[pymodule]
fn _ozcheck(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "COST_MODEL_VERSION",
        ozcheck_analyzer::cost::COST_MODEL_VERSION,
    )?;
    m.add(
        "DEFAULT_COST_LIMIT",
        ozcheck_analyzer::cost::DEFAULT_COST_LIMIT,
    )?;
    m.add("DEFAULT_TEXT", EventBounds::DEFAULT.text)?;
    m.add("DEFAULT_ATTRIBUTES", EventBounds::DEFAULT.attributes)?;
    m.add("DEFAULT_HEADER_FIELD", EventBounds::DEFAULT.header_field)?;
    m.add_class::<Event>()?;
    m.add_class::<Compiled>()?;
    m.add_class::<Rendered>()?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(set_report, m)?)?;
    m.add_function(wrap_pyfunction!(check_filter, m)?)?;
    m.add_function(wrap_pyfunction!(witness, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(lint, m)?)?;
    m.add_function(wrap_pyfunction!(lint_text, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    Ok(())
}
