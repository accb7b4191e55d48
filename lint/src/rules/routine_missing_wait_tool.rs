//! `routine-missing-wait-tool`: a routine runs an agent that uses `oz.wait_for_event` but does
//! not list the tool itself (E8).

use super::{Context, Rule, WAIT_TOOL};
use crate::finding::{Finding, Severity};
use crate::model::Model;

/// Warn when a routine's fires cannot call the wait tool its agent uses.
pub const RULE: Rule = Rule {
    id: "routine-missing-wait-tool",
    severity: Severity::Warning,
    summary: "A routine's agent uses `oz.wait_for_event` but the routine does not list it",
    what: "Warns when the routine's agent lists `oz.wait_for_event` and the routine's `tools` does \
not (or the routine has no `tools`).",
    why: "A fire calls only the tools its routine lists (E8): the agent would try to wait and be refused.",
    example: "# file: agents/helper.yaml\nname: helper\nruntime: pydantic-ai\ntools: [oz.wait_for_event]\n# file: routines/review.yaml\nname: review\nagent: helper\ntools: [oz.output]\n",
    use_instead: "# file: agents/helper.yaml\nname: helper\nruntime: pydantic-ai\ntools: [oz.wait_for_event]\n# file: routines/review.yaml\nname: review\nagent: helper\ntools: [oz.output, oz.wait_for_event]\n",
    assumptions: "A routine without `tools` lets a fire call no tool.",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Routine(routine) = cx.model else {
        return;
    };
    let Some(agent_node) = routine.agent else {
        return;
    };
    let Some(agent) = agent_node.text().and_then(|n| cx.plugin.agents.get(n)) else {
        return;
    };
    if !agent.tools.iter().any(|t| t == WAIT_TOOL) {
        return;
    }
    if routine.tools.iter().any(|t| t.text() == Some(WAIT_TOOL)) {
        return;
    }
    let at = routine.tools_key.unwrap_or(agent_node);
    out.push(
        Finding::new(
            RULE.id,
            at.span.clone(),
            format!(
                "agent `{}` waits for events, but this routine does not list `{WAIT_TOOL}`",
                agent_node.text().unwrap_or("")
            ),
        )
        .label("a fire calls only these tools")
        .help(format!("add `{WAIT_TOOL}` to the routine's tools")),
    );
}
