//! The analyzer and the lint for JavaScript hosts (the playground page, Node, Deno, Workers),
//! through wasm-bindgen. This crate holds no logic of its own beyond conversion: every call
//! reads its options as JSON, calls the library entry point the CLI calls, and answers with the
//! JSON the CLI prints with `--format json` (docs/cli.md), so the page, the npm package and the
//! command line cannot disagree. The npm package's `index.js` parses these strings and gives
//! them TypeScript types.
//!
//! WebAssembly in a browser has no system clock (`std::time::Instant::now` panics on
//! `wasm32-unknown-unknown`): the meter's deadline reads the host's `performance.now()` through
//! [`clock::HostClock`], and the analyzer's own evaluations (constant folding, the witness
//! search) use a manual clock. A panic, should one happen, becomes a JavaScript exception with
//! its message instead of an opaque trap ([`panic_hook`]).

mod clock;
mod json;
mod options;

use std::sync::Arc;
use std::time::Duration;

use wasm_bindgen::prelude::*;

use ozcheck_analyzer::eval::{Event, Limits, Program};
use ozcheck_analyzer::json as shared;
use ozcheck_analyzer::syntax::{self, ParseOptions};
use ozcheck_analyzer::{Diagnostic, EventBounds, Verdict};

use crate::clock::HostClock;
use crate::options::FilterOptions;

/// Installs the panic hook once, when the module is instantiated.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(panic_hook));
}

/// Turns a panic into a JavaScript `Error` carrying the panic's message: the caller's `try`
/// catches it and the page stays up. Without it, a panic is an `unreachable` trap that says
/// nothing about its cause.
fn panic_hook(info: &std::panic::PanicHookInfo<'_>) {
    wasm_bindgen::throw_str(&format!("ozcheck panicked: {info}"));
}

/// Panics on purpose, so that the npm package's tests can show that a panic reaches JavaScript
/// as an exception and the module goes on answering. Not part of the documented API.
#[wasm_bindgen(js_name = _panicForTest)]
pub fn panic_for_test() {
    panic!("a panic asked for by a test");
}

/// Checks an expression in the environment of `options` (JSON, see `options.rs`): the report of
/// `ozcheck filter --format json`. With `"witness": true` it also carries `witness_cost` and
/// `witness_complete`, and with `"explain": true` the cost tree, as the CLI's flags add them.
#[wasm_bindgen(js_name = checkFilter)]
pub fn check_filter(source: &str, options: &str) -> Result<String, JsError> {
    let options = FilterOptions::parse(options)?;
    let (env, analyzer) = (options.env(), options.analyzer());
    let (report, witness) = if options.witness {
        ozcheck_analyzer::check_with_witness(source, &env, &analyzer)
    } else {
        (
            ozcheck_analyzer::check_expression(source, &env, &analyzer),
            None,
        )
    };
    let mut value = shared::report(&report);
    if let Some(witness) = &witness {
        shared::add_witness(&mut value, witness);
    }
    if options.explain
        && let Ok(tree) = ozcheck_analyzer::explain_expression(source, &env, &analyzer)
    {
        shared::add_explain(&mut value, &tree);
    }
    Ok(value.to_string())
}

/// What dominates an expression's cost (the sub-expression's byte span, its per-evaluation max
/// and how many times it may run, the size assumption); `null` when it does not compile (the
/// diagnostics are in [`check_filter`]'s report).
#[wasm_bindgen(js_name = costSummary)]
pub fn cost_summary(source: &str, options: &str) -> Result<String, JsError> {
    let options = FilterOptions::parse(options)?;
    let summary = ozcheck_analyzer::cost_summary(source, &options.env(), &options.analyzer());
    Ok(summary
        .ok()
        .map_or(serde_json::Value::Null, |s| json::summary(&s))
        .to_string())
}

/// The cost tree that `ozcheck filter --explain` prints, or the first diagnostic's message.
#[wasm_bindgen]
pub fn explain(source: &str, options: &str) -> Result<String, JsError> {
    let options = FilterOptions::parse(options)?;
    ozcheck_analyzer::explain_expression(source, &options.env(), &options.analyzer()).map_err(
        |diagnostics| {
            JsError::new(
                diagnostics
                    .first()
                    .map_or("the expression does not compile", |d| d.message.as_str()),
            )
        },
    )
}

/// The heaviest event within the bounds that the estimate leads to (`ozcheck filter --witness`):
/// `{"event": {…}, "cost": N, "complete": bool, "evaluations": N}`, or `null` when the
/// expression does not compile or its environment is not an event filter's.
#[wasm_bindgen]
pub fn witness(source: &str, options: &str) -> Result<String, JsError> {
    let options = FilterOptions::parse(options)?;
    let (_, witness) =
        ozcheck_analyzer::check_with_witness(source, &options.env(), &options.analyzer());
    Ok(witness
        .map_or(serde_json::Value::Null, |w| shared::witness(&w))
        .to_string())
}

/// Evaluates a filter on an event (JSON text) with the metered evaluator, as `ozcheck eval
/// --format json` does: the value, cost, estimate and elapsed microseconds, or an `error` with
/// its kind (`refused`, `cost-limit`, `deadline`, `memory`, `runtime`). A malformed event throws.
/// `limit` 0 turns the cost limit off (the deadline alone stops the evaluation).
#[wasm_bindgen]
pub fn evaluate(
    source: &str,
    event: &str,
    limit: f64,
    deadline_ms: f64,
    static_check: bool,
) -> Result<String, JsError> {
    let limit = limit.max(0.0) as u64;
    let event = Event::from_json(event, &EventBounds::DEFAULT)
        .map_err(|e| JsError::new(&format!("event: {e}")))?;
    let estimate = if static_check {
        let options = ozcheck_analyzer::Options {
            limit: if limit == 0 { u64::MAX } else { limit },
            ..ozcheck_analyzer::Options::default()
        };
        let report = ozcheck_analyzer::check_filter(source, &options);
        if report.verdict == Verdict::Refused {
            // As `ozcheck eval`: only the errors that keep the filter from running.
            let errors: Vec<Diagnostic> = report
                .diagnostics
                .into_iter()
                .filter(Diagnostic::is_error)
                .collect();
            return Ok(shared::refused(&errors).to_string());
        }
        report.cost
    } else {
        None
    };
    let program = match syntax::parse(source, &ParseOptions::default()).and_then(Program::new) {
        Ok(program) => program,
        Err(diagnostics) => return Ok(shared::refused(&diagnostics).to_string()),
    };
    let clock = Arc::new(HostClock::new());
    let limits = Limits::with_clock_of(clock.clone())
        .with_cost((limit > 0).then_some(limit))
        .with_deadline(Duration::from_secs_f64(deadline_ms.max(0.0) / 1000.0));
    let started = clock.now_micros();
    let result = program.eval_event(&event, &limits);
    let elapsed_us = clock.now_micros().saturating_sub(started);
    let value = match result {
        Ok(done) => shared::evaluation(&done, estimate, elapsed_us),
        Err(error) => shared::eval_error(&error),
    };
    Ok(value.to_string())
}

/// Lints one file's text alone (`ozcheck lint --format json` on that file): findings with their
/// line, column and fix. `config` is the text of an `ozcheck.toml`, or empty.
#[wasm_bindgen(js_name = lintText)]
pub fn lint_text(text: &str, path: &str, config: &str) -> Result<String, JsError> {
    let config = options::lint_config(config)?;
    let report = ozcheck_lint::lint_text(path, text, &config);
    Ok(ozcheck_lint::render::json_value(&[report]).to_string())
}

/// Applies the safe fixes to one file's text and lints it again, up to the lint's rounds (what
/// `ozcheck lint --fix` does to a file): the findings that remain as `lintText` gives them, with
/// `text` (the fixed text) and `applied` (how many fixes).
#[wasm_bindgen(js_name = fixText)]
pub fn fix_text(text: &str, path: &str, config: &str) -> Result<String, JsError> {
    let config = options::lint_config(config)?;
    let input = ozcheck_lint::Input::from_text(path, text, true);
    let context = ozcheck_lint::PluginContext::default();
    let fixed = ozcheck_lint::fix::fix(&[input], &context, &config);
    let Some(file) = fixed.into_iter().next() else {
        let mut value = ozcheck_lint::render::json_value(&[]);
        value["text"] = text.into();
        value["applied"] = 0.into();
        return Ok(value.to_string());
    };
    let mut value = ozcheck_lint::render::json_value(std::slice::from_ref(&file.report));
    value["text"] = file.report.source.text.clone().into();
    value["applied"] = file.applied.into();
    Ok(value.to_string())
}

/// The rule catalogue: every rule's id, default level, summary and documentation sections.
#[wasm_bindgen]
pub fn rules() -> String {
    json::rules().to_string()
}
