//! `wait-tool-unsupported-runtime`: `oz.wait_for_event` listed by a JSON-lines harness agent or a
//! remote agent (E6).

use super::{Context, Rule, WAIT_TOOL};
use crate::finding::{Finding, Severity};
use crate::model::Model;

/// The wait tool is refused for `jsonl` and `remote` agents.
pub const RULE: Rule = Rule {
    id: "wait-tool-unsupported-runtime",
    severity: Severity::Error,
    summary: "`oz.wait_for_event` is listed by an agent whose runtime cannot wait",
    what: "Reports `oz.wait_for_event` in the tools of an agent with `runtime: jsonl` (a JSON-lines \
harness) or `runtime: remote` (a remote agent).",
    why: "Such sessions cannot wait for events yet, and `plugin lint` refuses the tool there (E6).",
    example: "# file: agents/helper.yaml\nname: helper\nruntime: jsonl\ntools: [oz.wait_for_event]\n",
    use_instead: "# file: agents/helper.yaml\nname: helper\nruntime: acp\ntools: [oz.wait_for_event]\n",
    assumptions: "The runtime words are those of PLUGIN-SCHEMA.md (`jsonl`, `remote`).",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let Model::Agent(agent) = cx.model else {
        return;
    };
    let Some(runtime) = agent.runtime.and_then(|r| r.text()) else {
        return;
    };
    let what = match runtime {
        "jsonl" => "a JSON-lines harness session",
        "remote" => "a remote agent",
        _ => return,
    };
    for tool in agent.tools.iter().filter(|t| t.text() == Some(WAIT_TOOL)) {
        out.push(
            Finding::new(
                RULE.id,
                tool.span.clone(),
                format!("{what} cannot wait for events; `{WAIT_TOOL}` is refused for runtime `{runtime}`"),
            )
            .label("not available here")
            .help("use runtime pydantic-ai, openai-agents or acp, or remove the tool"),
        );
    }
}
