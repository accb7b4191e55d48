//! `unused-suppression`: a rule id in `# ozcheck: ignore[…]` with no finding of that rule on
//! its line or the next. Reported by `crate::suppress` after the other rules have run.

use super::{Context, Rule};
use crate::finding::{Finding, Severity};

/// A suppression with nothing to suppress.
pub const RULE: Rule = Rule {
    id: "unused-suppression",
    severity: Severity::Warning,
    summary: "A suppression comment suppresses nothing",
    what: "Reports each rule id of `# ozcheck: ignore[…]` that no finding on the comment's line \
or the next one has (ids of rules turned off in `ozcheck.toml` excepted).",
    why: "A stale suppression hides the next real finding of that rule on the line, and tells \
the reader a problem is there that is not.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 90m  # ozcheck: ignore[compound-timeout]\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 90m\n",
    assumptions: "In an editor without the plugin's other files, suppressions of `unknown-agent`, \
`missing-instructions` and `name-mismatch` are not called unused (those rules need them).",
    fix: "Removes the unused id, or the whole comment when none of its ids is used (the whole \
line when the comment stands alone).",
    check,
};

/// The findings come from `crate::suppress`, which needs every other rule's findings first.
fn check(_cx: &Context<'_>, _out: &mut Vec<Finding>) {}
