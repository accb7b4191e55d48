//! `duplicate-key`: the same key twice in one mapping.

use std::collections::HashMap;

use super::{Context, Rule};
use crate::finding::{Finding, Severity};
use crate::yaml::{Node, Value};

/// A key appears twice in one mapping.
pub const RULE: Rule = Rule {
    id: "duplicate-key",
    severity: Severity::Error,
    summary: "A key appears more than once in a mapping",
    what: "Reports every repeated key of a mapping, pointing at the later one and naming the line of the first.",
    why: "YAML readers disagree on which value wins (the first, the last, or an error), so the \
platform may see a different file than the one you reviewed.",
    example: "# file: agents/helper.yaml\nname: helper\nruntime: pydantic-ai\nruntime: acp\n",
    use_instead: "# file: agents/helper.yaml\nname: helper\nruntime: acp\n",
    assumptions: "",
    fix: "",
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Finding>) {
    if let Some(root) = cx.root {
        walk(cx, root, out);
    }
}

fn walk(cx: &Context<'_>, node: &Node, out: &mut Vec<Finding>) {
    match &node.value {
        Value::Map(entries) => {
            // A map from key to its first entry keeps this linear on files with many keys.
            let mut first_of: HashMap<&str, &Node> = HashMap::with_capacity(entries.len());
            for entry in entries {
                let Some(key) = entry.key.text() else {
                    continue;
                };
                if let Some(first) = first_of.get(key).copied() {
                    let (line, _) = cx.source.line_col(first.span.start);
                    out.push(
                        Finding::new(
                            RULE.id,
                            entry.key.span.clone(),
                            format!("key `{key}` is already set on line {line}"),
                        )
                        .label("repeated key")
                        .help("keep one of the two entries"),
                    );
                } else {
                    first_of.insert(key, &entry.key);
                }
                walk(cx, &entry.value, out);
            }
        }
        Value::Seq(items) => items.iter().for_each(|n| walk(cx, n, out)),
        Value::Scalar(_) => {}
    }
}
