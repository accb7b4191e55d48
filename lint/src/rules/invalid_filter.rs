//! `invalid-filter`: a wait's or trigger's `filter`, or a trigger's `sender`, that the analyzer
//! refuses: syntax, types, names other than `event`, more than 1024 bytes, or a worst-case cost
//! over the limit (E12).

use std::sync::OnceLock;

use ozcheck_analyzer::check::Env;

use super::{Context, Rule, event_specs};
use crate::cel;
use crate::finding::{Finding, Severity};

/// The analyzer refuses a filter or sender expression.
pub const RULE: Rule = Rule {
    id: "invalid-filter",
    severity: Severity::Error,
    summary: "A filter or sender expression is refused by the analyzer",
    what: "Checks every wait `filter` and every trigger `filter` and `sender` as CEL over `event` \
alone, with the bounds of the event source: syntax, unknown fields and functions (with \"did you \
mean\"), types (a filter must give a `bool`, a `sender` a `string`; `dyn` is checked when it \
runs), the 1024-byte limit, and the worst-case cost over the largest event the source may \
give. The analyzer's own code (`unknown-field`, `cost-over-limit`, …) is shown in brackets. A \
refusal by cost names the sub-expression that dominates, and its help gives the largest `text`, \
`attributes` or `header_field` of the source under which the filter would pass (the line to \
declare in ozcheck.toml), or says that no single bound would.",
    why: "The edge refuses such an expression when the wait starts or the routine is saved (E12); \
a filter that reads a misspelt field is never true and the wait times out.",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      filter: event.atributes.conclusion != ''\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      filter: event.attributes.conclusion != ''\n",
    assumptions: "Event source bounds come from `[sources.NAME]` in ozcheck.toml (default 16 KiB \
of text, 8 KiB of attributes); the extensions a filter or `sender` may use from `[extensions]` \
and `[extensions.filter]` or `[extensions.sender]` (default: Kubernetes' set, docs/cli.md).",
    fix: "",
    check,
};

/// The two environments are the same for every filter, so they are built once per process.
static FILTER_ENV: OnceLock<Env> = OnceLock::new();
static SENDER_ENV: OnceLock<Env> = OnceLock::new();

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    let filter_env = FILTER_ENV.get_or_init(Env::filter);
    let sender_env = SENDER_ENV.get_or_init(Env::sender);
    for spec in event_specs(cx.model) {
        let source = spec.source_name();
        // A boolean `sender` is `wrong-type`'s (the schema's: a sender is text).
        let sender = spec
            .sender
            .filter(|n| n.scalar_kind() != Some(crate::yaml::ScalarKind::Bool));
        for (node, env) in [(spec.filter, filter_env), (sender, sender_env)] {
            let Some(node) = node else { continue };
            let len = node.text().map_or(0, str::len);
            out.extend(cel::check(cx, RULE.id, node, 0..len, env, source));
        }
    }
}
