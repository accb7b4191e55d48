//! `allow-senders-without-sender`: a trigger's `allow_senders` without a `sender` expression.

use super::{Context, Rule, event_specs};
use crate::finding::{Finding, Severity};

/// `allow_senders` needs `sender`.
pub const RULE: Rule = Rule {
    id: "allow-senders-without-sender",
    severity: Severity::Error,
    summary: "`allow_senders` is set but `sender` is not",
    what: "Reports an event trigger that lists `allow_senders` without a `sender` expression saying who sent the event.",
    why: "Without `sender` there is nothing to compare the list with: either every event is refused \
or the list is ignored, and neither is what the author meant.",
    example: "# file: routines/review.yaml\nname: review\nagent: helper\ntriggers:\n  - name: opened\n    event:\n      source: github-events\n      allow_senders: [octocat]\n",
    use_instead: "# file: routines/review.yaml\nname: review\nagent: helper\ntriggers:\n  - name: opened\n    event:\n      source: github-events\n      sender: event.attributes.sender\n      allow_senders: [octocat]\n",
    assumptions: "",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    for spec in event_specs(cx.model) {
        let Some(entry) = spec.allow_senders else {
            continue;
        };
        if spec.node.get("sender").is_some() {
            continue;
        }
        out.push(
            Finding::new(
                RULE.id,
                entry.key.span.clone(),
                "`allow_senders` needs a `sender` expression",
            )
            .label("no `sender` in this trigger")
            .help(
                "add `sender:` with a CEL expression over event, such as event.attributes.sender",
            ),
        );
    }
}
