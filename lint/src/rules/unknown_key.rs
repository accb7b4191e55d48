//! `unknown-key`: a key the plugin schema does not know, with "did you mean".

use super::{Context, Rule};
use crate::finding::{Finding, Severity};
use crate::schema::Problem;

/// A key the schema does not know.
pub const RULE: Rule = Rule {
    id: "unknown-key",
    severity: Severity::Warning,
    summary: "A key the plugin schema does not know",
    what: "Reports keys that PLUGIN-SCHEMA.md does not list for their place, suggesting the closest known key.",
    why: "A misspelt key is silently ignored by the platform: `timout: 5m` leaves the default of \
one hour in force. It is a warning, not an error, because the platform may know keys we have not seen; \
the JSON Schema says the same with an editor warning (docs/decisions/0011).",
    example: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timout: 5m\n",
    use_instead: "# file: flows/watch.yaml\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 5m\n",
    assumptions: "The keys are those of PLUGIN-SCHEMA.md, including the ones it marks as our \
decisions (`delegates`, `remote.url`, `steps[].approval`).",
    fix: "Renames the key to the suggestion when it is the only known key that close and the mapping does not have it yet.",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    for problem in cx.schema {
        let Problem::UnknownKey {
            span,
            key,
            path,
            suggestion,
            expected,
            fix,
        } = problem
        else {
            continue;
        };
        let place = if path.is_empty() {
            match cx.kind {
                Some(crate::model::FileKind::Agent) => "an agent file".to_owned(),
                Some(kind) => format!("a {} file", kind.name()),
                None => "a plugin file".to_owned(),
            }
        } else {
            format!("`{path}`")
        };
        let help = match suggestion {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("expected one of: {}", expected.join(", ")),
        };
        let mut finding = Finding::new(
            RULE.id,
            span.clone(),
            format!("unknown key `{key}` in {place}"),
        )
        .label("unknown key")
        .help(help);
        finding.fix.clone_from(fix);
        out.push(finding);
    }
}
