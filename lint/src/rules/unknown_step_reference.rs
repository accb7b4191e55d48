//! `unknown-step-reference`: `steps.<id>` naming a step that does not exist or comes later, or
//! `steps.<id>.event` of a step that is not a `wait_for_event` step.

use std::ops::Range;

use ozcheck_analyzer::check::StepKind;

use super::{Context, Rule};
use crate::cel::{self, Template};
use crate::finding::{Finding, Severity};
use crate::model::{Flow, Model};
use crate::yaml::Node;

/// A step reference that cannot resolve.
pub const RULE: Rule = Rule {
    id: "unknown-step-reference",
    severity: Severity::Error,
    summary: "`steps.<id>` names a missing or later step, or reads `event` of a step that has none",
    what: "Reports `steps.<id>` in a `when` or a template when no step has that id, when the \
step comes at or after the current one, and `steps.<id>.event` or `.matched` when the step is \
not a `wait_for_event` step (E7).",
    why: "A step's output exists only once it has run, and only a `wait_for_event` step has an \
`event`; the expression fails at run time.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: tell\n    when: steps.ci.matched\n    approval: { details: look }\n  - id: ci\n    wait_for_event:\n      source: github-events\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n  - id: tell\n    when: steps.ci.matched\n    approval: { details: look }\n",
    assumptions: "",
    fix: "",
    check,
};

/// One unresolvable reference: its bytes in the expression and the message.
struct Unresolved {
    span: Range<usize>,
    message: String,
    help: Option<String>,
}

fn unresolved(flow: &Flow<'_>, index: usize, expr: &str) -> Vec<Unresolved> {
    let mut out = Vec::new();
    for reference in cel::step_refs(expr) {
        let position = flow
            .steps
            .iter()
            .position(|s| s.id.and_then(Node::text) == Some(reference.id.as_str()));
        match position {
            None => {
                let earlier = flow.steps[..index]
                    .iter()
                    .filter_map(|s| s.id.and_then(Node::text));
                out.push(Unresolved {
                    span: reference.id_span,
                    message: format!("no step has the id `{}`", reference.id),
                    help: crate::schema::closest(&reference.id, earlier)
                        .map(|s| format!("did you mean `{s}`?")),
                });
            }
            Some(p) if p >= index => out.push(Unresolved {
                span: reference.id_span,
                message: format!(
                    "step `{}` does not run before this one; only earlier steps can be read",
                    reference.id
                ),
                help: Some("move the step earlier, or the expression later".to_owned()),
            }),
            Some(p) => {
                let Some((field, span)) = reference.field else {
                    continue;
                };
                let kind = cel::step_kind(&flow.steps[p]);
                if matches!(field.as_str(), "event" | "matched") && kind != StepKind::WaitForEvent {
                    out.push(Unresolved {
                        span,
                        message: format!(
                            "step `{}` is not a wait_for_event step, so it has no `{field}`",
                            reference.id
                        ),
                        help: (kind == StepKind::Approval)
                            .then(|| "an approval step has `approved`".to_owned()),
                    });
                }
            }
        }
    }
    out
}

/// The expression bytes this rule reports in `expr` (other rules skip analyzer findings there).
pub fn spans(flow: &Flow<'_>, index: usize, expr: &str) -> Vec<Range<usize>> {
    unresolved(flow, index, expr)
        .into_iter()
        .map(|u| u.span)
        .collect()
}

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Flow(flow) = cx.model else { return };
    for (index, step) in flow.steps.iter().enumerate() {
        let subject = step.wait.as_ref().and_then(|w| w.subject);
        if let Some(when) = step.when {
            report(
                cx,
                flow,
                index,
                when,
                0..when.text().map_or(0, str::len),
                out,
            );
        }
        for node in [subject, step.details].into_iter().flatten() {
            for template in cel::templates(node.text().unwrap_or("")) {
                if let Template::Expr(range) = template {
                    report(cx, flow, index, node, range, out);
                }
            }
        }
    }
}

fn report(
    cx: &Context<'_>,
    flow: &Flow<'_>,
    index: usize,
    node: &Node,
    range: Range<usize>,
    out: &mut Vec<Finding>,
) {
    let text = node.text().unwrap_or("");
    for u in unresolved(flow, index, &text[range.clone()]) {
        let span = u.span.start + range.start..u.span.end + range.start;
        let mut finding = Finding::new(
            RULE.id,
            crate::position::map_span(&cx.source.text, node, span),
            u.message,
        )
        .label("step reference");
        finding.help = u.help;
        out.push(finding);
    }
}
