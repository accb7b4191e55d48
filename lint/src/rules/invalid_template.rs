//! `invalid-template`: a `${{ … }}` in a wait's `subject` or an approval's `details` that the
//! analyzer refuses in the template environment, or that is never closed.

use super::{Context, Rule};
use crate::cel::{self, Template};
use crate::finding::{Finding, Severity};
use crate::model::Model;
use crate::yaml::Node;

/// A template expression is refused.
pub const RULE: Rule = Rule {
    id: "invalid-template",
    severity: Severity::Error,
    summary: "A `${{ }}` template is unclosed or refused by the analyzer",
    what: "Checks each `${{ … }}` in a `wait_for_event` step's `subject` and an approval's \
`details` as CEL over `trigger`, the earlier steps and `inputs`, and reports a `${{` without `}}`.",
    why: "The flow fails when it renders the text, or waits on a subject no event has.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ok\n    approval: { details: \"Look at ${{ trigger.event.subject \" }\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ok\n    approval: { details: \"Look at ${{ trigger.event.subject }}\" }\n",
    assumptions: "Only `subject` and `details` are templated (the documents show no other). The \
extensions a template may use come from `[extensions]` and `[extensions.template]` in \
ozcheck.toml (default: Kubernetes' set).",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Flow(flow) = cx.model else { return };
    for (index, step) in flow.steps.iter().enumerate() {
        let subject = step.wait.as_ref().and_then(|w| w.subject);
        for node in [subject, step.details].into_iter().flatten() {
            check_text(cx, flow, index, node, out);
        }
    }
}

fn check_text(
    cx: &Context<'_>,
    flow: &crate::model::Flow<'_>,
    index: usize,
    node: &Node,
    out: &mut Vec<Finding>,
) {
    let text = node.text().unwrap_or("");
    for template in cel::templates(text) {
        match template {
            Template::Unclosed(range) => out.push(
                Finding::new(
                    RULE.id,
                    crate::position::map_span(&cx.source.text, node, range),
                    "`${{` is never closed with `}}`",
                )
                .label("opened here")
                .help("close the expression with `}}`"),
            ),
            Template::Expr(range) => {
                let env = cel::flow_env(flow, index, &text[range.clone()], true);
                let flagged: Vec<_> =
                    crate::rules::unknown_step_reference_spans(flow, index, &text[range.clone()])
                        .into_iter()
                        .map(|r| r.start + range.start..r.end + range.start)
                        .collect();
                let findings = cel::check(cx, RULE.id, node, range, &env, None);
                out.extend(
                    findings
                        .into_iter()
                        .filter(|f| !crate::rules::invalid_when_overlaps(cx, node, f, &flagged)),
                );
            }
        }
    }
}
