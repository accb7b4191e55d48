//! `invalid-when`: a flow step's `when` that the analyzer refuses in the `when` environment
//! (`trigger` and the earlier steps).

use super::{Context, Rule};
use crate::cel;
use crate::finding::{Finding, Severity};
use crate::model::Model;

/// The analyzer refuses a `when` expression.
pub const RULE: Rule = Rule {
    id: "invalid-when",
    severity: Severity::Error,
    summary: "A step's `when` is refused by the analyzer",
    what: "Checks each step's `when` as CEL over `trigger` (with `trigger.event` when the flow \
has an event trigger) and the steps before it (`steps.<id>.matched` and `.event` of \
`wait_for_event` steps, `.approved` of approvals); it must give a `bool` (`wrong-result-type` \
otherwise). References to missing or later steps are \
reported by `unknown-step-reference` instead.",
    why: "The flow fails at that step at run time, or the condition is never true.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n  - id: tell\n    when: steps.ci.matched &&\n    approval: { details: look }\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n  - id: tell\n    when: steps.ci.matched\n    approval: { details: look }\n",
    assumptions: "An approval step's output is `{approved: bool}`. The extensions a `when` may use \
come from `[extensions]` and `[extensions.when]` in ozcheck.toml (default: Kubernetes' set).",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Flow(flow) = cx.model else { return };
    for (index, step) in flow.steps.iter().enumerate() {
        let Some(node) = step.when else { continue };
        let text = node.text().unwrap_or("");
        let env = cel::flow_env(flow, index, text, false);
        let flagged = crate::rules::unknown_step_reference_spans(flow, index, text);
        let findings = cel::check(cx, RULE.id, node, 0..text.len(), &env, None);
        out.extend(
            findings
                .into_iter()
                .filter(|f| !overlaps(cx, node, f, &flagged)),
        );
    }
}

/// Whether an analyzer finding sits on a step reference that `unknown-step-reference` reports.
pub(crate) fn overlaps(
    cx: &Context<'_>,
    node: &crate::yaml::Node,
    finding: &Finding,
    flagged: &[std::ops::Range<usize>],
) -> bool {
    flagged.iter().any(|r| {
        let mapped = crate::position::map_span(&cx.source.text, node, r.clone());
        finding.span.start < mapped.end.max(mapped.start + 1)
            && mapped.start < finding.span.end.max(finding.span.start + 1)
    })
}
