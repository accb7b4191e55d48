//! `duplicate-output-name`: two outputs of a routine with the same `name`.

use super::{Context, Rule, duplicates};
use crate::finding::{Finding, Severity};
use crate::model::Model;

/// Output names must be unique.
pub const RULE: Rule = Rule {
    id: "duplicate-output-name",
    severity: Severity::Error,
    summary: "Two outputs of a routine have the same name",
    what: "Reports every output whose `name` an earlier output of the routine already has.",
    why: "The agent calls an output by name; with two of one name it is not clear which one applies.",
    example: "# file: routines/review.yaml\nname: review\nagent: helper\noutputs:\n  - name: post\n    description: a\n  - name: post\n    description: b\n",
    use_instead: "# file: routines/review.yaml\nname: review\nagent: helper\noutputs:\n  - name: post\n    description: a\n  - name: post-draft\n    description: b\n",
    assumptions: "Output names are unique per routine (PLUGIN-SCHEMA.md).",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Routine(routine) = cx.model else {
        return;
    };
    duplicates(cx, RULE.id, "output name", &routine.output_names, out);
}
