//! `invalid-suppression`: a `# ozcheck: ignore` that cannot suppress anything (no ids, or an
//! id that names no rule). Reported by `crate::suppress` after the other rules have run.

use super::{Context, Rule};
use crate::finding::{Finding, Severity};

/// A suppression that names no rule, or a rule that does not exist.
pub const RULE: Rule = Rule {
    id: "invalid-suppression",
    severity: Severity::Warning,
    summary: "A suppression comment names no rule, or a rule that does not exist",
    what: "Reports a bare `# ozcheck: ignore` (naming the rules reported on its line and the \
next, which it would have to list) and every id in `# ozcheck: ignore[…]` that is no rule id, \
with the closest id.",
    why: "Such a comment looks like it silences a finding and silences nothing: the finding \
shows up anyway, or a typo leaves it on while the reader believes it is handled.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 30d  # ozcheck: ignore[timeout-to-long]\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 30d  # ozcheck: ignore[timeout-too-long]\n",
    assumptions: "",
    fix: "",
    check,
};

/// The findings come from `crate::suppress`, which needs every other rule's findings first.
fn check(_cx: &Context<'_>, _out: &mut Vec<Finding>) {}
