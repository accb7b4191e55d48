//! The two answers that have no `--format json` in the CLI: what dominates a cost (the data of
//! the language server's hover) and the rule catalogue (`ozcheck rules`). Every other answer is
//! written by the shared serializers the CLI calls (`ozcheck_analyzer::json`,
//! `ozcheck_lint::render::json_value`), so the module and the command line cannot drift.

use ozcheck_analyzer::CostSummary;
use ozcheck_analyzer::cost::COST_MODEL_VERSION;
use serde_json::{Value, json};

/// What dominates the cost.
pub fn summary(summary: &CostSummary) -> Value {
    json!({
        "cost": summary.cost,
        "limit": summary.limit,
        "dominant": {"start": summary.dominant.start, "end": summary.dominant.end},
        "dominant_max": summary.dominant_max,
        "dominant_runs": summary.dominant_runs,
        "assumption": summary.assumption,
        "would_pass": summary.would_pass.as_ref().map(ozcheck_analyzer::json::would_pass),
        "cost_model_version": COST_MODEL_VERSION,
    })
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
