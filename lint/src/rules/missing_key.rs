//! `missing-key`: a required key is absent (`source` of a wait or trigger, `name`, `id`, …).

use super::{Context, Rule};
use crate::finding::{Finding, Severity};
use crate::schema::Problem;

/// A required key is missing.
pub const RULE: Rule = Rule {
    id: "missing-key",
    severity: Severity::Error,
    summary: "A required key is missing",
    what: "Reports a mapping without a key it must have: `source` of every wait and event trigger \
(E1), `name` of every file, trigger and output, `runtime` of an agent, `agent` of a routine, `id` of a step.",
    why: "Without a source a wait can match no event; without names, job ids and references cannot be formed.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      types: [check_suite]\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      types: [check_suite]\n",
    assumptions: "`runtime` is required of an agent and `agent` of a routine (every example has them).",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    for problem in cx.schema {
        let Problem::MissingKey {
            span,
            path,
            key,
            merge,
        } = problem
        else {
            continue;
        };
        // Point at the mapping's first line rather than the whole mapping.
        let line_end = cx.source.text[span.start..]
            .find('\n')
            .map_or(span.end, |n| (span.start + n).min(span.end.max(span.start)));
        let place = if path.is_empty() {
            "the file".to_owned()
        } else {
            format!("`{path}`")
        };
        let mut finding = Finding::new(
            RULE.id,
            span.start..line_end,
            format!("{place} has no `{key}`"),
        )
        .label(format!("`{key}` is required here"));
        if *merge {
            // The key may sit in the merged anchor, which YAML 1.2 does not merge: say so,
            // so that the finding does not read as false.
            finding = finding.help(format!(
                "the `<<` merge key here does not supply `{key}` (merge-key): write `{key}` in this mapping"
            ));
        }
        out.push(finding);
    }
}
