//! `missing-instructions`: an agent's `instructions` file does not exist in the plugin.

use std::path::Path;

use super::{Context, Rule};
use crate::finding::{Finding, Severity};
use crate::model::Model;

/// The instructions file must exist.
pub const RULE: Rule = Rule {
    id: "missing-instructions",
    severity: Severity::Error,
    summary: "An agent's `instructions` file does not exist",
    what: "Reports an agent whose `instructions` path, relative to the plugin folder, names no \
file. Only checked when the lint can see the plugin's files (the command line; not a buffer \
linted alone).",
    why: "The agent would start without its prompt, or the plugin would fail to install.",
    example: "# file: agents/helper.yaml\nname: helper\nruntime: acp\ninstructions: prompts/helpr.md\n# file: prompts/helper.md\nHelp.\n",
    use_instead: "# file: agents/helper.yaml\nname: helper\nruntime: acp\ninstructions: prompts/helper.md\n# file: prompts/helper.md\nHelp.\n",
    assumptions: "The path is relative to the plugin folder, the parent of `agents/` \
(PLUGIN-SCHEMA.md); an absolute path or one with `..` is reported too, as it leaves the plugin.",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Agent(agent) = cx.model else {
        return;
    };
    let (Some(node), Some(root), Some(exists)) =
        (agent.instructions, cx.plugin_root, cx.file_exists)
    else {
        return;
    };
    let Some(text) = node.text() else { return };
    let relative = Path::new(text);
    let escapes = relative.is_absolute()
        || relative
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir));
    if escapes {
        out.push(
            Finding::new(
                RULE.id,
                node.span.clone(),
                format!("`{text}` leaves the plugin folder"),
            )
            .label("instructions")
            .help("give a path inside the plugin, such as prompts/<agent>.md"),
        );
        return;
    }
    if exists(&Path::new(root).join(relative)) {
        return;
    }
    out.push(
        Finding::new(
            RULE.id,
            node.span.clone(),
            format!("no file `{text}` in this plugin"),
        )
        .label("instructions")
        .help(format!("create {text}, or fix the path")),
    );
}
