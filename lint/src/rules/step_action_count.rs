//! `step-action-count`: a flow step without an action, or with more than one.

use super::{Context, Rule};
use crate::finding::{Finding, Severity};
use crate::model::{Model, STEP_ACTIONS};

/// A step has exactly one action.
pub const RULE: Rule = Rule {
    id: "step-action-count",
    severity: Severity::Error,
    summary: "A flow step has no action or more than one",
    what: "Reports a step with neither `wait_for_event` nor `approval`, and a step with both.",
    why: "The platform runs one action per step; a step without one does nothing and one with two is refused.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    when: true\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    when: true\n    approval: { details: look }\n",
    assumptions: "The actions we know are `wait_for_event` and `approval`; a step with an unknown \
key (reported by `unknown-key`) is not reported here, as that key may be an action we do not know.",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Flow(flow) = cx.model else { return };
    for step in &flow.steps {
        match step.actions.as_slice() {
            [_] => {}
            [] => {
                let has_unknown = step.node.entries().unwrap_or_default().iter().any(|e| {
                    !matches!(e.key.text(), Some("id" | "when") | None)
                        && !e.key.text().is_some_and(|k| STEP_ACTIONS.contains(&k))
                });
                if has_unknown {
                    continue;
                }
                let at = step.id.map_or(step.node.span.clone(), |n| n.span.clone());
                out.push(
                    Finding::new(RULE.id, at, "this step has no action")
                        .label("step")
                        .help("add `wait_for_event` or `approval`"),
                );
            }
            [_, rest @ ..] => {
                for extra in rest {
                    out.push(
                        Finding::new(
                            RULE.id,
                            extra.span.clone(),
                            "a step has one action; this is a second",
                        )
                        .label("second action")
                        .help("split it into two steps"),
                    );
                }
            }
        }
    }
}
