//! `compound-timeout`: A timeout combines several units.

use super::{Context, Rule, timeout_findings};
use crate::finding::{Finding, Severity};

/// A timeout combines several units.
pub const RULE: Rule = Rule {
    id: "compound-timeout",
    severity: Severity::Error,
    summary: "A timeout combines several units",
    what: "Reports a wait's `timeout` (or an agent's `limits.timeout`) written with more than one number and unit, such as `1h30m`, and says the single-unit form.",
    why: "The documents allow one whole number and one unit, and the runtime refuses `1h30m` the same way (E1); the wait would fail when it starts.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 1h30m\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 90m\n",
    assumptions: "",
    fix: "Writes the same length in the largest single unit that expresses it exactly (`1h30m` → `90m`).",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    timeout_findings(cx, RULE.id, out);
}
