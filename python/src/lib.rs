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
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

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

/// The limits of one evaluation: `limit` cost units (0: none) and `deadline_ms`, on a clock
/// started now.
fn limits(limit: u64, deadline_ms: u64) -> Limits {
    Limits::with_clock_of(Arc::new(SystemClock::new()))
        .with_cost((limit > 0).then_some(limit))
        .with_deadline(Duration::from_millis(deadline_ms))
}

/// A filter parsed, checked and estimated once, evaluated any number of times. It is immutable
/// (`frozen`): several threads may evaluate one program at once, each with its own meter.
#[pyclass(frozen, module = "ozcheck._ozcheck")]
struct Compiled {
    program: Program,
    /// The static estimate (`None` when compiled without the static check).
    estimate: Option<CostRange>,
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
            Ok(program) => (Some(Compiled { program, estimate }), report, None),
            Err(diagnostics) => (None, report, Some(json::refused(&diagnostics).to_string())),
        }
    }))
}

/// What `Compiled::evaluate` returns: the value, its metered cost, the elapsed microseconds
/// and the report's JSON (rendered on demand), or, when refused or stopped, the error's JSON.
type Outcome = (
    Option<Py<PyAny>>,
    u64,
    u64,
    Option<Rendered>,
    Option<String>,
);

#[pymethods]
impl Compiled {
    /// Evaluates over `event` within `limit` (0: no cost limit) and `deadline_ms`, the GIL
    /// released while it runs.
    fn evaluate(
        &self,
        py: Python<'_>,
        event: &Event,
        limit: u64,
        deadline_ms: u64,
    ) -> PyResult<Outcome> {
        let result = py.detach(|| {
            let limits = limits(limit, deadline_ms);
            let started = Instant::now();
            let result = self.program.eval_event(&event.event, &limits);
            (result, started.elapsed().as_micros() as u64)
        });
        match result {
            (Ok(done), elapsed_us) => {
                let value = to_python(py, &done.value)?;
                let cost = done.cost;
                let rendered = Rendered {
                    done,
                    estimate: self.estimate,
                    elapsed_us,
                };
                Ok((Some(value), cost, elapsed_us, Some(rendered), None))
            }
            (Err(error), elapsed_us) => Ok((
                None,
                error.cost(),
                elapsed_us,
                None,
                Some(json::eval_error(&error).to_string()),
            )),
        }
    }

    /// The static estimate as `(min, max)`, `None` without the static check.
    #[getter]
    fn estimate(&self) -> Option<(u64, u64)> {
        self.estimate.map(|e| (e.min, e.max))
    }
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
            match ozcheck::cmd::eval::static_check(&expr, limit) {
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
    m.add_function(wrap_pyfunction!(check_filter, m)?)?;
    m.add_function(wrap_pyfunction!(witness, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(lint, m)?)?;
    m.add_function(wrap_pyfunction!(lint_text, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    Ok(())
}
