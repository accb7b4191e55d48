//! `fractional-timeout`: A timeout is not a whole number.

use super::{Context, Rule, timeout_findings};
use crate::finding::{Finding, Severity};

/// A timeout is not a whole number.
pub const RULE: Rule = Rule {
    id: "fractional-timeout",
    severity: Severity::Error,
    summary: "A timeout is not a whole number",
    what: "Reports a timeout with a fraction, such as `1.5h`, and says the whole-number form when one exists.",
    why: "The runtime refuses fractions (E1); `1.5h` is written `90m`.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 1.5h\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 90m\n",
    assumptions: "",
    fix: "Writes the same length as a whole number of the largest unit that expresses it exactly (`1.5h` → `90m`); a fraction no unit writes exactly (`1.0001ms`) is left for you.",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    timeout_findings(cx, RULE.id, out);
}
