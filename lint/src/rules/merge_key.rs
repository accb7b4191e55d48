//! `merge-key`: a YAML 1.1 merge key (`<<: *anchor`), which the YAML 1.2 the lint reads does
//! not merge.

use super::{Context, Rule};
use crate::finding::{Finding, Severity};
use crate::schema::Problem;

/// A merge key.
pub const RULE: Rule = Rule {
    id: "merge-key",
    severity: Severity::Error,
    summary: "A YAML merge key (`<<`), which YAML 1.2 does not have",
    what: "Reports a `<<` key in an agent, flow or routine file. Anchors and aliases \
(`&src`, `*src`) are fine; merging a mapping into another with `<<` is not.",
    why: "`<<` was a YAML 1.1 type that YAML 1.2's core schema dropped, so what the file means \
depends on the reader: a YAML 1.1 loader merges the anchor's keys, a YAML 1.2 one (the lint's, \
and any platform reader that follows the current spec) reads a key named `<<` and no `source`. \
A file that two readers understand differently is refused rather than guessed at.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event: &ci\n      source: github-events\n      types: [check_suite]\n  - id: rerun\n    wait_for_event:\n      <<: *ci\n      timeout: 2h\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      types: [check_suite]\n  - id: rerun\n    wait_for_event:\n      source: github-events\n      types: [check_suite]\n      timeout: 2h\n",
    assumptions: "The platform's documents show no anchors or merge keys, and the lint reads \
YAML 1.2 (docs/decisions/0011).",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    for problem in cx.schema {
        let Problem::MergeKey { span, path } = problem else {
            continue;
        };
        let place = if path.is_empty() {
            "the file".to_owned()
        } else {
            format!("`{path}`")
        };
        out.push(
            Finding::new(
                RULE.id,
                span.clone(),
                format!("merge key `<<` in {place}: YAML 1.2 does not merge mappings"),
            )
            .label("not merged")
            .help("write the keys out in this mapping (an alias of a whole value, `key: *anchor`, is fine)"),
        );
    }
}
