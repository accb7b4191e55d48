//! Expressions in plugin files, checked through the analyzer's public API, with every analyzer
//! diagnostic mapped to the file position of the byte it points at.
//!
//! The analyzer's diagnostic code (`unknown-field`, `cost-over-limit`, …) is carried in
//! [`Finding::origin`] and named in the message; the finding's rule id is the lint rule of the
//! place the expression sits (`invalid-filter`, `invalid-when`, `invalid-template`). That keeps
//! rule ids stable and few while the analyzer grows codes, and lets `ozcheck.toml` set levels per
//! place.

use std::ops::Range;

use ozcheck_analyzer::check::{Env, StepDecl, StepKind};
use ozcheck_analyzer::cost::Remedy;
use ozcheck_analyzer::{Options, Severity as CelSeverity, check_expression};

use crate::finding::{Finding, Severity};
use crate::model::{Flow, Step};
use crate::position::map_span;
use crate::rules::Context;
use crate::yaml::{Node, ScalarKind};

/// Checks the expression at bytes `expr` of the value of scalar `node` in `env`, with the
/// extensions `ozcheck.toml` enables there, and returns its findings under `rule`.
pub fn check(
    cx: &Context<'_>,
    rule: &'static str,
    node: &Node,
    expr: Range<usize>,
    env: &Env,
    source: Option<&str>,
) -> Vec<Finding> {
    // A number or null where an expression belongs is `wrong-type`'s (the schema's verdict);
    // checking it as CEL too would report one mistake twice.
    if matches!(
        node.scalar_kind(),
        Some(ScalarKind::Int | ScalarKind::Float | ScalarKind::Null)
    ) {
        return Vec::new();
    }
    let Some(text) = node.text() else {
        return Vec::new();
    };
    let Some(expression) = text.get(expr.clone()) else {
        return Vec::new();
    };
    let options = Options {
        bounds: cx.config.bounds(source),
        ..Options::default()
    };
    let env = cx.config.extensions.apply(env.clone());
    let report = check_expression(expression, &env, &options);
    report
        .diagnostics
        .iter()
        .map(|d| {
            let start = expr.start + d.span.start as usize;
            let end = expr.start + (d.span.end as usize).min(expression.len());
            let span = map_span(&cx.source.text, node, start..end.max(start));
            let mut finding = Finding::new(rule, span, format!("{} [{}]", d.message, d.code));
            if d.severity == CelSeverity::Warning {
                finding.severity = Severity::Warning;
            }
            finding.label.clone_from(&d.label);
            finding.help.clone_from(&d.help);
            if d.code == "cost-over-limit" {
                if let (Some(help), Some(remedy)) = (&mut finding.help, &report.would_pass) {
                    help.push_str(&declaration(remedy, source));
                }
            }
            finding.origin = Some(d.code);
            finding
        })
        .collect()
}

/// The `ozcheck.toml` table that declares the bounds of `source` (`[sources.NAME]` when the
/// expression names none).
pub(crate) fn source_table(source: Option<&str>) -> String {
    source.map_or_else(|| "[sources.NAME]".to_owned(), |s| format!("[sources.{s}]"))
}

/// Where a bound that would pass an expression refused by cost is declared: the line of
/// `ozcheck.toml` for each, under the source's table. Empty when no bound would pass it.
fn declaration(remedy: &Remedy, source: Option<&str>) -> String {
    if remedy.changes.is_empty() {
        return String::new();
    }
    let table = source_table(source);
    let lines: Vec<String> = remedy
        .changes
        .iter()
        .map(|c| format!("`{} = {}`", c.bound.key(), c.at_most))
        .collect();
    format!(
        "; to declare it, set {} under `{table}` in ozcheck.toml",
        lines.join(" or ")
    )
}

/// The steps before `index` that `expr` reads, as the analyzer declares them. Declaring only
/// the steps an expression names keeps a flow of n steps linear rather than quadratic; the
/// others cannot change the expression's types, and `unknown-step-reference` reports names that
/// resolve to no earlier step.
pub fn earlier_steps(flow: &Flow<'_>, index: usize, expr: &str) -> Vec<StepDecl> {
    let mut decls: Vec<StepDecl> = Vec::new();
    for reference in step_refs(expr) {
        let Some(at) = flow.step(&reference.id).filter(|&at| at < index) else {
            continue;
        };
        if decls.iter().any(|d| *d.id == *reference.id) {
            continue;
        }
        decls.push(StepDecl {
            id: reference.id.into(),
            kind: step_kind(&flow.steps[at]),
        });
    }
    decls
}

/// What a step's output looks like to later steps.
pub fn step_kind(step: &Step<'_>) -> StepKind {
    if step.wait.is_some() {
        StepKind::WaitForEvent
    } else if step.details.is_some() || step.node.get("approval").is_some() {
        StepKind::Approval
    } else {
        StepKind::Other
    }
}

pub use ozcheck_analyzer::template::{Template, templates};

/// A `steps.<id>` (and maybe `.field`) reference in an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRef {
    /// The step id.
    pub id: String,
    /// Bytes of the id.
    pub id_span: Range<usize>,
    /// The field read after it, if any, and its bytes.
    pub field: Option<(String, Range<usize>)>,
}

/// Finds `steps.<id>` references outside string literals. A small scanner of its own so the
/// step-order rule works on the expression text whatever the analyzer reports.
pub fn step_refs(expr: &str) -> Vec<StepRef> {
    let bytes = expr.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let ident_end = |mut j: usize| {
        while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
            j += 1;
        }
        j
    };
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\'' || b == b'"' {
            // Skip a string literal, honouring backslash escapes.
            let quote = b;
            i += 1;
            while i < bytes.len() && bytes[i] != quote {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        if b.is_ascii_alphabetic() || b == b'_' {
            let end = ident_end(i);
            let preceded_by_dot = expr[..i].trim_end().ends_with('.');
            if &expr[i..end] == "steps" && !preceded_by_dot && bytes.get(end) == Some(&b'.') {
                let id_start = end + 1;
                let id_end = ident_end(id_start);
                if id_end > id_start {
                    let mut field = None;
                    if bytes.get(id_end) == Some(&b'.') {
                        let f_end = ident_end(id_end + 1);
                        if f_end > id_end + 1 {
                            field = Some((expr[id_end + 1..f_end].to_owned(), id_end + 1..f_end));
                        }
                    }
                    out.push(StepRef {
                        id: expr[id_start..id_end].to_owned(),
                        id_span: id_start..id_end,
                        field,
                    });
                    i = id_end;
                    continue;
                }
            }
            i = end;
            continue;
        }
        i += 1;
    }
    out
}

/// The environment of `expr`, a `when` or template of step `index`.
pub fn flow_env(flow: &Flow<'_>, index: usize, expr: &str, template: bool) -> Env {
    let steps = earlier_steps(flow, index, expr);
    let event_trigger = flow.trigger_event.is_some();
    if template {
        Env::template(event_trigger, &steps)
    } else {
        Env::when(event_trigger, &steps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_templates() {
        let t = "CI failed on ${{ trigger.event.subject }}. ${{ x";
        let found = templates(t);
        assert_eq!(found.len(), 2);
        assert_eq!(
            &t[match &found[0] {
                Template::Expr(r) => r.clone(),
                Template::Unclosed(_) => 0..0,
            }],
            " trigger.event.subject "
        );
        assert!(matches!(found[1], Template::Unclosed(_)));
    }

    #[test]
    fn finds_step_references_outside_strings() {
        let refs = step_refs("steps.ci.matched && 'steps.x.y' == steps.tell.event.a && a.steps.z");
        let ids: Vec<_> = refs.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["ci", "tell"]);
        assert_eq!(refs[1].field.as_ref().map(|f| f.0.as_str()), Some("event"));
    }
}
