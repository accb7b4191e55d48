//! The JSON shapes of the analyzer's answers: a filter's report (with its would-pass bounds,
//! witness and explanation), an evaluation's outcome and the errors that stop one. One serializer
//! sits behind `ozcheck filter --format json`, `ozcheck eval --format json`, the Python package
//! and the WebAssembly build, so the three hosts cannot drift apart; docs/cli.md is the contract
//! these functions write.
//!
//! Every top-level object carries `cost_model_version` ([`COST_MODEL_VERSION`]): a figure is only
//! comparable with another computed under the same cost table.

use serde_json::{Value, json};

use crate::bounds::Bound;
use crate::cost::{COST_MODEL_VERSION, CostRange, Remedy};
use crate::eval::{EvalError, Evaluation, Stop};
use crate::witness::Witness;
use crate::{Diagnostic, Report};

/// A filter's report: `verdict`, `cost` (`{min, max}` or null), `limit`, `diagnostics`,
/// `would_pass` (or null) and `cost_model_version`.
pub fn report(report: &Report) -> Value {
    json!({
        "verdict": report.verdict,
        "cost": report.cost,
        "limit": report.limit,
        "diagnostics": report.diagnostics.iter().map(diagnostic).collect::<Vec<_>>(),
        "would_pass": report.would_pass.as_ref().map(would_pass),
        "cost_model_version": COST_MODEL_VERSION,
    })
}

/// One diagnostic: `code`, `severity`, `message`, `span` (`{start, end}`, bytes of the
/// expression), `label` and `help`.
pub fn diagnostic(diagnostic: &Diagnostic) -> Value {
    json!({
        "code": diagnostic.code,
        "severity": diagnostic.severity,
        "message": diagnostic.message,
        "span": {"start": diagnostic.span.start, "end": diagnostic.span.end},
        "label": diagnostic.label,
        "help": diagnostic.help,
    })
}

/// The bounds that would pass a filter refused by cost, each with the `ozcheck filter` flag that
/// sets it, and the bounds that would not, each at its least value.
pub fn would_pass(remedy: &Remedy) -> Value {
    json!({
        "bounds": remedy.changes.iter().map(|c| json!({
            "bound": c.bound,
            "flag": flag(c.bound),
            "current": c.current,
            "at_most": c.at_most,
            "cost": c.cost,
        })).collect::<Vec<_>>(),
        "not_enough": remedy.floors.iter().map(|f| json!({
            "bound": f.bound,
            "flag": flag(f.bound),
            "least": f.least,
            "cost": f.cost,
        })).collect::<Vec<_>>(),
    })
}

/// The option of `ozcheck filter` that sets a bound (named in `would_pass`, so that a user of any
/// host learns the command line's spelling too).
pub fn flag(bound: Bound) -> &'static str {
    match bound {
        Bound::Text => "--max-text",
        Bound::Attributes => "--max-attributes",
        Bound::HeaderField => "--max-header",
    }
}

/// Adds a witness's metered cost to a [`report`] object (`witness_cost`, `witness_complete`), as
/// `ozcheck filter --witness FILE --format json` prints it; the event itself goes to the file.
pub fn add_witness(report: &mut Value, witness: &Witness) {
    report["witness_cost"] = witness.cost.into();
    report["witness_complete"] = witness.complete.into();
}

/// A witness on its own: `event` (the object `ozcheck eval --event` reads), `cost`, `complete`,
/// `evaluations` and `cost_model_version`.
pub fn witness(witness: &Witness) -> Value {
    // The witness's event is compact JSON the builder wrote; it always parses, and should it
    // not, the text is kept rather than lost.
    let event = serde_json::from_str(&witness.event)
        .unwrap_or_else(|_| Value::String(witness.event.clone()));
    json!({
        "event": event,
        "cost": witness.cost,
        "complete": witness.complete,
        "evaluations": witness.evaluations,
        "cost_model_version": COST_MODEL_VERSION,
    })
}

/// Adds the cost tree (`ozcheck filter --explain`) to a [`report`] object as one string field
/// `explain`; the contract's other fields stay as they are.
pub fn add_explain(report: &mut Value, tree: &str) {
    report["explain"] = Value::String(tree.to_owned());
}

/// A finished evaluation: `value` (the result as JSON), `cost` (metered), `estimate` (`{min,
/// max}` of the static check, or null when it was skipped), `elapsed_us` and
/// `cost_model_version`.
pub fn evaluation(done: &Evaluation, estimate: Option<CostRange>, elapsed_us: u64) -> Value {
    json!({
        "value": done.value.to_json(),
        "cost": done.cost,
        "estimate": estimate.map(|e| json!({"min": e.min, "max": e.max})),
        "elapsed_us": elapsed_us,
        "cost_model_version": COST_MODEL_VERSION,
    })
}

/// The kind of an evaluation error as the JSON names it: `cost-limit`, `deadline`, `memory` or
/// `runtime` (a refused expression is `refused`, see [`refused`]).
pub fn error_kind(error: &EvalError) -> &'static str {
    match error {
        EvalError::Stopped(Stop::CostLimit { .. }) => "cost-limit",
        EvalError::Stopped(Stop::Deadline { .. }) => "deadline",
        EvalError::Stopped(Stop::Memory { .. }) => "memory",
        EvalError::Runtime { .. } => "runtime",
    }
}

/// An evaluation that stopped: `{"error": {kind, message, cost}, "cost_model_version"}`.
pub fn eval_error(error: &EvalError) -> Value {
    json!({
        "error": {"kind": error_kind(error), "message": error.to_string(), "cost": error.cost()},
        "cost_model_version": COST_MODEL_VERSION,
    })
}

/// An expression refused before evaluation (it does not parse, or the static check refuses it):
/// an error of kind `refused` whose message is the first diagnostic's, with every diagnostic's
/// `code`, `message` and `span`, and cost 0 (nothing ran).
pub fn refused(diagnostics: &[Diagnostic]) -> Value {
    let message = diagnostics
        .first()
        .map_or("the expression could not be parsed", |d| d.message.as_str());
    let listed: Vec<Value> = diagnostics
        .iter()
        .map(|d| {
            json!({"code": d.code, "message": d.message,
                   "span": {"start": d.span.start, "end": d.span.end}})
        })
        .collect();
    json!({
        "error": {"kind": "refused", "message": message, "cost": 0, "diagnostics": listed},
        "cost_model_version": COST_MODEL_VERSION,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Options, check_filter};

    #[test]
    fn every_report_carries_the_cost_model_version() {
        let accepted = report(&check_filter("event.text == 'x'", &Options::default()));
        assert_eq!(accepted["cost_model_version"], COST_MODEL_VERSION);
        assert_eq!(accepted["verdict"], "accepted");
        let refused = report(&check_filter("event.", &Options::default()));
        assert_eq!(refused["cost_model_version"], COST_MODEL_VERSION);
        assert_eq!(refused["cost"], Value::Null);
        assert_eq!(super::refused(&[])["error"]["kind"], "refused");
        assert_eq!(
            super::refused(&[])["cost_model_version"],
            COST_MODEL_VERSION
        );
    }

    #[test]
    fn a_refused_filter_names_the_flags_that_would_pass_it() {
        let nested = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
        let value = report(&check_filter(nested, &Options::default()));
        let bounds = value["would_pass"]["bounds"].as_array().expect("bounds");
        assert!(!bounds.is_empty());
        assert_eq!(bounds[0]["flag"], "--max-attributes");
    }
}
