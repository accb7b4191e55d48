//! `invalid-name`: a name or step id with characters other than lowercase letters, digits and
//! `-` (a `.` above all).

use super::{Context, Rule};
use crate::finding::{Finding, Severity};
use crate::model::Model;
use crate::yaml::Node;

/// Names are lowercase letters, digits and `-`.
pub const RULE: Rule = Rule {
    id: "invalid-name",
    severity: Severity::Error,
    summary: "A name holds characters other than lowercase letters, digits, `-` and `_`",
    what: "Checks the `name` of agents, flows, routines, triggers and outputs, and step ids: \
lowercase ASCII letters, digits, `-` and `_`, starting with a letter or digit; a `.` is refused \
with its own message.",
    why: "Job ids such as `rt.<routine>.<trigger>.<event id>` and `event-<flow>-<event id>` are \
built from names; a `.` in a name makes them ambiguous (E8).",
    example: "# file: routines/review.yaml\nname: review\nagent: helper\ntriggers:\n  - name: pr.opened\n    event: { source: github-events }\n",
    use_instead: "# file: routines/review.yaml\nname: review\nagent: helper\ntriggers:\n  - name: pr-opened\n    event: { source: github-events }\n",
    assumptions: "`_` is allowed besides PLUGIN-SCHEMA.md's letters, digits and `-`, because a \
step id is read in CEL as `steps.<id>`, where `-` cannot appear but `_` can.",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let mut names: Vec<(&Node, &str)> = Vec::new();
    match cx.model {
        Model::Agent(a) => names.extend(a.name.map(|n| (n, "agent name"))),
        Model::Flow(f) => {
            names.extend(f.name.map(|n| (n, "flow name")));
            names.extend(f.steps.iter().filter_map(|s| s.id).map(|n| (n, "step id")));
        }
        Model::Routine(r) => {
            names.extend(r.name.map(|n| (n, "routine name")));
            names.extend(
                r.triggers
                    .iter()
                    .filter_map(|t| t.name)
                    .map(|n| (n, "trigger name")),
            );
            names.extend(r.output_names.iter().map(|&n| (n, "output name")));
        }
        Model::None => {}
    }
    for (node, what) in names {
        let Some(text) = node.text() else { continue };
        let valid = text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
            && text
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric());
        if valid {
            continue;
        }
        let fixed: String = text
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        let message = if text.contains('.') {
            format!("{what} `{text}` holds a `.`, which makes job ids ambiguous")
        } else {
            format!("{what} `{text}` may hold only lowercase letters, digits, `-` and `_`")
        };
        out.push(
            Finding::new(RULE.id, node.span.clone(), message)
                .label(what)
                .help(format!("write `{}`", fixed.trim_matches('-'))),
        );
    }
}
