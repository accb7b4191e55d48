//! `name-mismatch`: an agent's or flow's `name` that differs from its file stem.

use super::{Context, Rule};
use crate::finding::{Finding, Severity};
use crate::model::Model;

/// An agent's or flow's name should equal its file stem.
pub const RULE: Rule = Rule {
    id: "name-mismatch",
    severity: Severity::Warning,
    summary: "An agent's or flow's `name` differs from its file name",
    what: "Warns when the `name` of an agent or flow is not the file's name without `.yaml`.",
    why: "Routines and delegates name agents, and people look for `agents/<name>.yaml`; a file \
whose name says something else is easy to edit by mistake, and two files may claim one name.",
    example: "# file: agents/helper.yaml\nname: reviewer\nruntime: acp\n",
    use_instead: "# file: agents/reviewer.yaml\nname: reviewer\nruntime: acp\n",
    assumptions: "Routines are not checked: the documents show a routine in `pr-review.yaml` \
outside `routines/`, so their file names may follow other conventions.",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let name = match cx.model {
        Model::Agent(agent) => agent.name,
        Model::Flow(flow) => flow.name,
        _ => None,
    };
    let Some(node) = name else { return };
    if cx.anonymous {
        return;
    }
    let Some(text) = node.text() else { return };
    let file = cx.source.path.rsplit(['/', '\\']).next().unwrap_or("");
    let stem = file
        .strip_suffix(".yaml")
        .or_else(|| file.strip_suffix(".yml"))
        .unwrap_or(file);
    if stem.is_empty() || stem == text {
        return;
    }
    out.push(
        Finding::new(
            RULE.id,
            node.span.clone(),
            format!("name `{text}` differs from the file name `{file}`"),
        )
        .label("name")
        .help(format!(
            "rename the file to {text}.yaml, or write `name: {stem}`"
        )),
    );
}
