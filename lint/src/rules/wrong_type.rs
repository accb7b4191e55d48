//! `wrong-type`: a known key with a value of the wrong shape or an unknown word.

use super::{Context, Rule};
use crate::finding::{Finding, Severity};
use crate::schema::Problem;

/// A value of the wrong type.
pub const RULE: Rule = Rule {
    id: "wrong-type",
    severity: Severity::Error,
    summary: "A known key has a value of the wrong type",
    what: "Reports values whose shape does not match the schema: a string where a list is \
expected, a mapping where a string is expected, a word outside a key's allowed set (such as \
`runtime` or `since`), a `max_fires_per_hour` that is not a whole number above zero written \
as one (`1.0` is a YAML float), a number where a CEL expression belongs (`filter: 1`), and an \
agent, flow or routine file that is empty or holds only comments.",
    why: "The platform refuses the file when it loads it, or worse, reads it differently from what you meant.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      types: check_suite\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      types: [check_suite]\n",
    assumptions: "Text keys accept numbers and booleans too (`name: 42`); `filter` and `when` \
accept text or a boolean (`filter: true` is the CEL expression `true`) but not a number, and \
`sender` only text; `max_fires_per_hour` must be a whole number above zero. The JSON Schema \
says the same, except that it cannot tell `1.0` from `1` (docs/decisions/0011).",
    fix: "Writes a single string where a list belongs as a one-item list (`types: check_suite` → `types: [check_suite]`), and a misspelt word as the only allowed word that close (`runtime: pydantic_ai` → `pydantic-ai`).",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    for problem in cx.schema {
        let Problem::WrongType {
            span,
            path,
            expected,
            found,
            help,
            fix,
        } = problem
        else {
            continue;
        };
        let place = if path == crate::schema::FILE {
            path.clone()
        } else {
            format!("`{path}`")
        };
        let mut finding = Finding::new(
            RULE.id,
            span.clone(),
            format!("{place} must be {expected}, not {found}"),
        )
        .label(format!("expected {expected}"));
        finding.help.clone_from(help);
        finding.fix.clone_from(fix);
        out.push(finding);
    }
}
