//! `invalid-yaml`: the file cannot be read as YAML (or as UTF-8, or it exceeds a reader limit).

use super::{Context, Rule};
use crate::finding::{Finding, Severity};

/// The file is not YAML the lint can read.
pub const RULE: Rule = Rule {
    id: "invalid-yaml",
    severity: Severity::Error,
    summary: "The file is not valid YAML, not UTF-8, or beyond the reader's limits",
    what: "Reports the first syntax error of the YAML reader, invalid UTF-8, a file over 1 MiB, \
nesting deeper than 64 levels, aliases that expand past 100,000 nodes, and more than one document.",
    why: "The platform cannot load the file at all; every other rule needs a readable file.",
    example: "# file: agents/helper.yaml\nname: helper\nruntime: [pydantic-ai\n",
    use_instead: "# file: agents/helper.yaml\nname: helper\nruntime: pydantic-ai\n",
    assumptions: "",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    for problem in cx.problems {
        out.push(Finding::new(
            RULE.id,
            problem.span.clone(),
            problem.message.clone(),
        ));
    }
}
