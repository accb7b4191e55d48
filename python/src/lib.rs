//! The extension module `ozcheck._ozcheck`: the analyzer, the lint and the command line behind
//! the Python package. It holds no logic of its own beyond conversion: every answer is the JSON
//! text the shared serializer writes (`ozcheck_analyzer::json`, `ozcheck_lint::render`), which
//! the package's Python layer turns into typed reports, so the package cannot drift from
//! `ozcheck … --format json`. Every analysis runs with the GIL released (`Python::detach`), so
//! threads check filters in parallel.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::eval::{self, Limits, Program, SystemClock};
use ozcheck_analyzer::syntax::{self, ParseOptions};
use ozcheck_analyzer::{EventBounds, Extensions, Options, json};

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
        let limits = Limits::default()
            .with_cost((limit > 0).then_some(limit))
            .with_deadline(Duration::from_millis(deadline_ms))
            .with_clock(Arc::new(SystemClock::new()));
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
    m.add_function(wrap_pyfunction!(check_filter, m)?)?;
    m.add_function(wrap_pyfunction!(witness, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(lint, m)?)?;
    m.add_function(wrap_pyfunction!(lint_text, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    Ok(())
}
