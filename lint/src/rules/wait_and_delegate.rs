//! `wait-and-delegate`: an agent that waits for events and delegates (E11).

use super::{Context, Rule, WAIT_TOOL};
use crate::finding::{Finding, Severity};
use crate::model::Model;

/// Warn about an agent that waits for events and delegates.
pub const RULE: Rule = Rule {
    id: "wait-and-delegate",
    severity: Severity::Warning,
    summary: "An agent waits for events and delegates to other agents",
    what: "Warns when an agent lists `oz.wait_for_event` and has `delegates`.",
    why: "From the moment an event arrives the job counts as outside-started: the sessions it \
delegates to run in the sandbox, and an agent that can run a shell or write runs only on a node \
with sandbox tier 1 (E11). Event text can steer what the delegates are asked to do.",
    example: "# file: agents/helper.yaml\nname: helper\nruntime: pydantic-ai\ntools: [oz.wait_for_event]\ndelegates: [writer]\n",
    use_instead: "# file: agents/helper.yaml\nname: helper\nruntime: pydantic-ai\ntools: [oz.wait_for_event]\n",
    assumptions: "Delegation is declared with `delegates` (PLUGIN-SCHEMA.md's decision).",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Agent(agent) = cx.model else {
        return;
    };
    let Some(tool) = agent.tools.iter().find(|t| t.text() == Some(WAIT_TOOL)) else {
        return;
    };
    let Some(first) = agent.delegates.first() else {
        return;
    };
    out.push(
        Finding::new(
            RULE.id,
            tool.span.clone(),
            "this agent waits for events and delegates; after an event arrives its delegates run as outside-started",
        )
        .label("waits for events")
        .help(format!(
            "make sure the delegates (first: `{}`) may run sandboxed on outside text, or split the agent",
            first.text().unwrap_or("")
        )),
    );
}
