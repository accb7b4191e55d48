//! `timeout-too-long`: A wait's timeout is longer than 7d.

use super::{Context, Rule, timeout_findings};
use crate::finding::{Finding, Severity};

/// A wait's timeout is longer than 7d.
pub const RULE: Rule = Rule {
    id: "timeout-too-long",
    severity: Severity::Error,
    summary: "A wait's timeout is longer than 7d",
    what: "Reports a wait's `timeout` above seven days (`8d`, `169h`).",
    why: "A wait lasts at most 7d (E1); the runtime refuses longer ones when the wait starts.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 8d\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 7d\n",
    assumptions: "An agent's own `limits.timeout` is not bound by 7d (PLUGIN-SCHEMA.md).",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    timeout_findings(cx, RULE.id, out);
}
