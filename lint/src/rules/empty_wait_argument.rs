//! `empty-wait-argument`: an empty `source`, `subject` or entry of `types`.

use ozcheck_analyzer::wait_args::{validate_source, validate_subject, validate_type};

use super::{Context, Rule, event_specs};
use crate::finding::{Finding, Severity};
use crate::yaml::ScalarKind;

/// Wait arguments may not be empty strings.
pub const RULE: Rule = Rule {
    id: "empty-wait-argument",
    severity: Severity::Error,
    summary: "A wait or trigger has an empty source, subject or type",
    what: "Reports `source: ''`, `subject: ''` and empty strings in `types`.",
    why: "An empty value matches no event: the wait times out and the trigger never fires, \
silently. Leave `subject` and `types` out to match any.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      subject: ''\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n",
    assumptions: "",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let is_empty_string = |node: &crate::yaml::Node| {
        node.scalar_kind() == Some(ScalarKind::String) && node.text() == Some("")
    };
    for spec in event_specs(cx.model) {
        let mut checks = Vec::new();
        if let Some(source) = spec.node.get("source").filter(|n| is_empty_string(n)) {
            checks.push((source, validate_source("")));
        }
        if let Some(subject) = spec.node.get("subject").filter(|n| is_empty_string(n)) {
            checks.push((subject, validate_subject("")));
        }
        for item in spec.types.and_then(|t| t.items()).unwrap_or_default() {
            if is_empty_string(item) {
                checks.push((item, validate_type("")));
            }
        }
        for (node, result) in checks {
            if let Err(error) = result {
                out.push(
                    Finding::new(RULE.id, node.span.clone(), error.to_string())
                        .label("empty")
                        .help(error.help()),
                );
            }
        }
    }
}
