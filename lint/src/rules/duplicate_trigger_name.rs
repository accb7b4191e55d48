//! `duplicate-trigger-name`: two triggers of a routine with the same `name`.

use super::{Context, Rule, duplicates};
use crate::finding::{Finding, Severity};
use crate::model::Model;

/// Trigger names must be unique.
pub const RULE: Rule = Rule {
    id: "duplicate-trigger-name",
    severity: Severity::Error,
    summary: "Two triggers of a routine have the same name",
    what: "Reports every trigger whose `name` an earlier trigger of the routine already has.",
    why: "A fire's job id is `rt.<routine>.<trigger>.<event id>` (E8): two triggers with one name \
would share job ids, so one event could fire only one of them and audits could not tell them apart.",
    example: "# file: routines/review.yaml\nname: review\nagent: helper\ntriggers:\n  - name: opened\n    event: { source: github-events }\n  - name: opened\n    event: { source: gitlab-events }\n",
    use_instead: "# file: routines/review.yaml\nname: review\nagent: helper\ntriggers:\n  - name: github-opened\n    event: { source: github-events }\n  - name: gitlab-opened\n    event: { source: gitlab-events }\n",
    assumptions: "",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Routine(routine) = cx.model else {
        return;
    };
    let names: Vec<_> = routine.triggers.iter().filter_map(|t| t.name).collect();
    duplicates(cx, RULE.id, "trigger name", &names, out);
}
