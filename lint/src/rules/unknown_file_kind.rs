//! `unknown-file-kind`: a YAML file named on the command line that is no agent, flow or routine.

use super::{Context, Rule};
use crate::finding::{Finding, Severity};

/// The file's kind cannot be told.
pub const RULE: Rule = Rule {
    id: "unknown-file-kind",
    severity: Severity::Warning,
    summary: "A file named for linting is neither an agent, a flow nor a routine",
    what: "Reports a file given by name (not found in a folder) that is not under `agents/`, \
`flows/` or `routines/` and whose keys do not say its kind either.",
    why: "Nothing in it was checked; the file was probably meant to be something else.",
    example: "# file: misc.yaml\ntitle: notes\n",
    use_instead: "# file: agents/helper.yaml\nname: helper\nruntime: pydantic-ai\n",
    assumptions: "A routine has `triggers`, `agent` or `owner_team`; a flow `steps` or \
`trigger`; an agent `runtime`, `model` or `instructions`.",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    if cx.kind.is_some() || !cx.explicit || !cx.problems.is_empty() {
        return;
    }
    out.push(
        Finding::new(
            RULE.id,
            0..0,
            "not an agent, flow or routine file; nothing was checked",
        )
        .help("put the file under agents/, flows/ or routines/"),
    );
}
