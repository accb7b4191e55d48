//! `duplicate-step-id`: two steps of a flow with the same `id`.

use super::{Context, Rule, duplicates};
use crate::finding::{Finding, Severity};
use crate::model::Model;

/// Step ids must be unique.
pub const RULE: Rule = Rule {
    id: "duplicate-step-id",
    severity: Severity::Error,
    summary: "Two steps of a flow have the same id",
    what: "Reports every step whose `id` an earlier step of the flow already has.",
    why: "`steps.<id>` in later steps would be ambiguous; the platform refuses the flow.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    approval: { details: a }\n  - id: ci\n    approval: { details: b }\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    approval: { details: a }\n  - id: ci-again\n    approval: { details: b }\n",
    assumptions: "",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Flow(flow) = cx.model else { return };
    let ids: Vec<_> = flow.steps.iter().filter_map(|s| s.id).collect();
    duplicates(cx, RULE.id, "step id", &ids, out);
}
