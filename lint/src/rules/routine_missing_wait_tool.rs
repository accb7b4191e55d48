//! `routine-missing-wait-tool`: a routine runs an agent that uses `oz.wait_for_event` but does
//! not list the tool itself (E8).

use super::{Context, Rule, WAIT_TOOL};
use crate::finding::{Finding, Fix, Severity};
use crate::model::Model;
use crate::yaml::{Entry, Node};

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
    fix: "Adds `oz.wait_for_event` to the routine's `tools` (after the last item of a flow or block list), or adds `tools: [oz.wait_for_event]` after the `agent` line.",
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
    let mut finding = Finding::new(
        RULE.id,
        at.span.clone(),
        format!(
            "agent `{}` waits for events, but this routine does not list `{WAIT_TOOL}`",
            agent_node.text().unwrap_or("")
        ),
    )
    .label("a fire calls only these tools")
    .help(format!("add `{WAIT_TOOL}` to the routine's tools"));
    let text = &cx.source.text;
    let edit = match cx.root.and_then(|r| r.entry("tools")) {
        Some(entry) => append_tool(text, &entry.value),
        None => cx
            .root
            .and_then(|r| r.entry("agent"))
            .and_then(|entry| insert_tools_line(text, entry)),
    };
    if let Some((at, insert)) = edit {
        finding = finding.fix(Fix::replace(
            format!("add {WAIT_TOOL} to the routine's tools"),
            at..at,
            insert,
        ));
    }
    out.push(finding);
}

/// Where and what to insert to add the wait tool to a `tools` list: after the last item of a
/// flow list (`[a, b]`), or as a new item line after the last one of a block list.
fn append_tool(text: &str, tools: &Node) -> Option<(usize, String)> {
    let items = tools.items()?;
    if text.as_bytes().get(tools.span.start) == Some(&b'[') {
        return Some(match items.last() {
            Some(last) => (last.span.end, format!(", {WAIT_TOOL}")),
            None => (tools.span.start + 1, WAIT_TOOL.to_owned()),
        });
    }
    let last = items.last()?;
    let line_start = text[..last.span.start].rfind('\n').map_or(0, |i| i + 1);
    let prefix = &text[line_start..last.span.start];
    let indent = prefix.strip_suffix("- ")?;
    if !indent.bytes().all(|b| b == b' ') {
        return None;
    }
    let (at, newline) = line_end(text, last.span.end);
    Some((at, format!("{newline}{indent}- {WAIT_TOOL}")))
}

/// A `tools: [oz.wait_for_event]` line after the routine's `agent` line, at its indentation.
fn insert_tools_line(text: &str, agent: &Entry) -> Option<(usize, String)> {
    let line_start = text[..agent.key.span.start]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let indent = &text[line_start..agent.key.span.start];
    if !indent.bytes().all(|b| b == b' ')
        || text[agent.key.span.start..agent.value.span.end].contains('\n')
    {
        return None;
    }
    let (at, newline) = line_end(text, agent.value.span.end);
    Some((at, format!("{newline}{indent}tools: [{WAIT_TOOL}]")))
}

/// The end of the line holding `from` (before its line break) and the break the file uses.
fn line_end(text: &str, from: usize) -> (usize, &'static str) {
    match text[from..].find('\n') {
        Some(i) if i > 0 && text.as_bytes()[from + i - 1] == b'\r' => (from + i - 1, "\r\n"),
        Some(i) => (from + i, "\n"),
        None => (text.len(), "\n"),
    }
}
