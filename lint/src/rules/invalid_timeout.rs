//! `invalid-timeout`: A timeout is not a whole number and one unit.

use super::{Context, Rule, timeout_findings};
use crate::finding::{Finding, Severity};

/// A timeout is not a whole number and one unit.
pub const RULE: Rule = Rule {
    id: "invalid-timeout",
    severity: Severity::Error,
    summary: "A timeout is not a whole number and one unit",
    what: "Reports a timeout that is no duration at all: no unit, an unknown unit (`5min`, `1w`), spaces, signs, or zero.",
    why: "The runtime refuses it when the wait starts, so the flow or the agent fails where a lint could have said so at save time.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 30 minutes\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 30m\n",
    assumptions: "A timeout of zero is refused: a wait that ends before it starts is a mistake.",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    timeout_findings(cx, RULE.id, out);
}
