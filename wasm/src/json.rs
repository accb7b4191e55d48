//! The JSON shapes of the answers: those of the CLI's `--format json` (docs/cli.md), field for
//! field, so that the npm package's tests can compare them with the `ozcheck` binary's output.
//!
//! The report and would-pass shapes repeat `src/cmd/filter.rs` until the shared serializer of
//! issue 36 lands in the libraries; the tests in `wasm/npm/test/` compare both on every corpus
//! filter, so a drift fails there.

use ozcheck_analyzer::bounds::Bound;
use ozcheck_analyzer::cost::Remedy;
use ozcheck_analyzer::witness::Witness;
use ozcheck_analyzer::{CostSummary, Diagnostic, Report};
use serde_json::{Value, json};

/// `ozcheck filter --format json`.
pub fn report(report: &Report) -> Value {
    json!({
        "verdict": report.verdict,
        "cost": report.cost,
        "limit": report.limit,
        "diagnostics": report.diagnostics.iter().map(|d| json!({
            "code": d.code,
            "severity": d.severity,
            "message": d.message,
            "span": {"start": d.span.start, "end": d.span.end},
            "label": d.label,
            "help": d.help,
        })).collect::<Vec<_>>(),
        "would_pass": report.would_pass.as_ref().map(would_pass),
    })
}

/// The bounds that would pass a filter refused by cost, and those that would not.
fn would_pass(remedy: &Remedy) -> Value {
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

/// The option of `ozcheck filter` that sets a bound.
fn flag(bound: Bound) -> &'static str {
    match bound {
        Bound::Text => "--max-text",
        Bound::Attributes => "--max-attributes",
        Bound::HeaderField => "--max-header",
    }
}

/// What dominates the cost (what the language server's hover says, as data).
pub fn summary(summary: &CostSummary) -> Value {
    json!({
        "cost": summary.cost,
        "limit": summary.limit,
        "dominant": {"start": summary.dominant.start, "end": summary.dominant.end},
        "dominant_max": summary.dominant_max,
        "dominant_runs": summary.dominant_runs,
        "assumption": summary.assumption,
        "would_pass": summary.would_pass.as_ref().map(would_pass),
    })
}

/// The witness event (parsed back from the compact JSON the CLI writes) and its metered cost.
pub fn witness(witness: &Witness) -> Value {
    json!({
        "event": serde_json::from_str::<Value>(&witness.event).unwrap_or(Value::Null),
        "cost": witness.cost,
        "complete": witness.complete,
        "evaluations": witness.evaluations,
    })
}

/// `ozcheck eval --format json` on a filter that does not run.
pub fn refused(diagnostics: &[Diagnostic]) -> Value {
    let errors: Vec<&Diagnostic> = diagnostics.iter().filter(|d| d.is_error()).collect();
    let message = errors
        .first()
        .map_or("the expression could not be parsed", |d| d.message.as_str());
    let listed: Vec<Value> = errors
        .iter()
        .map(|d| {
            json!({"code": d.code, "message": d.message,
                   "span": {"start": d.span.start, "end": d.span.end}})
        })
        .collect();
    json!({"error": {"kind": "refused", "message": message, "cost": 0, "diagnostics": listed}})
}

/// The rule catalogue (`ozcheck rules`, as data).
pub fn rules() -> Value {
    ozcheck_lint::rules::RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "severity": r.severity.as_str(),
                "summary": r.summary,
                "what": r.what,
                "why": r.why,
                "example": r.example,
                "use_instead": r.use_instead,
                "fix": r.fix,
            })
        })
        .collect()
}
