//! `invalid-since`: a wait's `since` other than `job` or `now`.

use ozcheck_analyzer::wait_args::Since;

use super::{Context, Rule, event_specs};
use crate::finding::{Finding, Fix, Severity};

/// `since` must be `job` or `now`.
pub const RULE: Rule = Rule {
    id: "invalid-since",
    severity: Severity::Error,
    summary: "A wait's `since` is neither `job` nor `now`",
    what: "Reports a `since` value other than `job` (events since the job started count, the default) or `now`.",
    why: "The runtime refuses any other value (E1) and the wait fails when it starts.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      since: start\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      since: now\n",
    assumptions: "",
    fix: "Writes `job` or `now` in lowercase when the value is one of them in other case or with spaces (`Now` → `now`).",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    for spec in event_specs(cx.model) {
        let Some(node) = spec.since else { continue };
        let Some(text) = node.text() else { continue };
        if let Err(error) = Since::parse(text) {
            let mut finding = Finding::new(RULE.id, node.span.clone(), error.to_string())
                .label("since")
                .help(error.help());
            // `Now` and ` job ` can only mean the word itself; anything else is left to the author.
            if let Ok(word) = Since::parse(&text.trim().to_ascii_lowercase())
                && let Some(span) = crate::position::literal_span(&cx.source.text, node)
            {
                finding = finding.fix(Fix::replace(
                    format!("write {}", word.as_str()),
                    span,
                    word.as_str(),
                ));
            }
            out.push(finding);
        }
    }
}
