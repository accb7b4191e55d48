//! `unknown-agent`: a routine's `agent` that no agent file of the plugin defines.

use super::{Context, Rule};
use crate::finding::{Finding, Fix, Severity};
use crate::model::Model;

/// The routine's agent must exist.
pub const RULE: Rule = Rule {
    id: "unknown-agent",
    severity: Severity::Error,
    summary: "A routine names an agent the plugin does not define",
    what: "Reports a routine whose `agent` is not the name of an agent file of the same plugin \
(`agents/*.yaml` beside the routine's folder). Linting a routine alone still reads the plugin's \
agents; the rule stays quiet when the plugin has no `agents/` folder to read.",
    why: "Every fire of the routine would fail to start.",
    example: "# file: agents/helper.yaml\nname: helper\nruntime: pydantic-ai\n# file: routines/review.yaml\nname: review\nagent: helpr\n",
    use_instead: "# file: agents/helper.yaml\nname: helper\nruntime: pydantic-ai\n# file: routines/review.yaml\nname: review\nagent: helper\n",
    assumptions: "An agent's name is its `name` key, or its file stem when it has none.",
    fix: "Names the plugin's agent when exactly one agent's name is that close (`pr-helpr` → `pr-helper`).",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Routine(routine) = cx.model else {
        return;
    };
    let Some(agent) = routine.agent else { return };
    let Some(name) = agent.text() else { return };
    if !cx.plugin.complete || cx.plugin.agents.contains_key(name) {
        return;
    }
    let suggestion = crate::schema::closest(name, cx.plugin.agents.keys().map(String::as_str));
    let mut finding = Finding::new(
        RULE.id,
        agent.span.clone(),
        format!("no agent named `{name}` in this plugin"),
    )
    .label("agent");
    finding.help = suggestion.map(|s| format!("did you mean `{s}`?"));
    let unique = ozcheck_analyzer::check::suggest::unique_closest(
        name,
        cx.plugin.agents.keys().map(String::as_str),
    );
    if let (Some(to), Some(span)) = (
        unique,
        crate::position::literal_span(&cx.source.text, agent),
    ) {
        finding = finding.fix(Fix::replace(format!("write `{to}`"), span, to));
    }
    out.push(finding);
}
