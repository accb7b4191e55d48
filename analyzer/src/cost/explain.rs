//! Explanations: which sub-expression dominates an estimate, the `cost-over-limit` diagnostic
//! of a refused expression, and the indented cost tree that `ozcheck filter --explain` prints.

use std::fmt::Write as _;

use super::estimate::Estimate;
use super::remedy::Remedy;
use crate::Diagnostic;
use crate::syntax::NodeId;

/// The sub-expression that dominates the estimate: starting at the root, descend into the
/// child whose total contribution (its max times how often it runs per run of its parent) is
/// at least half of the parent's max, as long as there is one.
pub fn dominant(estimate: &Estimate) -> NodeId {
    dominant_path(estimate)
        .last()
        .copied()
        .unwrap_or(estimate.root)
}

fn dominant_path(estimate: &Estimate) -> Vec<NodeId> {
    let mut path = vec![estimate.root];
    let mut at = estimate.root;
    while let Some(Some(node)) = estimate.nodes.get(at as usize) {
        let contribution = |id: NodeId| -> f64 {
            estimate.nodes[id as usize].as_ref().map_or(0.0, |c| {
                c.max as f64 * (c.multiplier as f64 / node.multiplier.max(1) as f64)
            })
        };
        let best = node
            .children
            .iter()
            .copied()
            .max_by(|a, b| contribution(*a).total_cmp(&contribution(*b)));
        match best {
            Some(child) if contribution(child) * 2.0 >= node.max as f64 && node.max > 0 => {
                path.push(child);
                at = child;
            }
            _ => break,
        }
    }
    path
}

/// The `cost-over-limit` error for an estimate whose max exceeds `limit`, labelled on the
/// dominating sub-expression, with what would pass (see [`super::remedy`]) in its help when
/// it is given; `None` when the estimate fits.
pub fn diagnostic(estimate: &Estimate, limit: u64, remedy: Option<&Remedy>) -> Option<Diagnostic> {
    if estimate.cost.max <= limit {
        return None;
    }
    let path = dominant_path(estimate);
    let id = *path.last()?;
    let node = estimate.nodes[id as usize].as_ref()?;
    let label = if node.multiplier > 1 {
        format!(
            "up to {} per evaluation, evaluated up to {} times",
            group(node.max),
            group(node.multiplier)
        )
    } else {
        format!("costs up to {}", group(node.max))
    };
    let mut help = format!("the bound assumes {}", estimate.assumption);
    for step in &path {
        if let Some(Some(n)) = estimate.nodes.get(*step as usize) {
            if let Some(a) = &n.assumption {
                let _ = write!(help, "; {a}");
            }
        }
    }
    if let Some(remedy) = remedy {
        let _ = write!(help, "; {}", remedy.describe());
    }
    help.push_str(
        "; avoid iterating event data inside another iteration, or compare against constants",
    );
    Some(
        Diagnostic::error(
            "cost-over-limit",
            node.span,
            format!(
                "worst-case cost {} exceeds the limit of {}",
                group(estimate.cost.max),
                group(limit)
            ),
        )
        .with_label(label)
        .with_help(help),
    )
}

/// Renders the cost tree: one line per estimated node, indented by depth, with its source,
/// its `[min, max]`, the multiplier it sits under and the size assumption it introduces.
pub fn explain(estimate: &Estimate, source: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cost [{}, {}]; worst case: {}",
        group(estimate.cost.min),
        group(estimate.cost.max),
        estimate.assumption
    );
    let mut stack = vec![(estimate.root, 0usize)];
    while let Some((id, depth)) = stack.pop() {
        let Some(Some(node)) = estimate.nodes.get(id as usize) else {
            continue;
        };
        let _ = write!(
            out,
            "{:indent$}{}  [{}, {}]",
            "",
            snippet(source, node.span.start as usize, node.span.end as usize),
            group(node.min),
            group(node.max),
            indent = depth * 2
        );
        if node.multiplier > 1 {
            let _ = write!(out, " × {}", group(node.multiplier));
        }
        if let Some(a) = &node.assumption {
            let _ = write!(out, "  ({a})");
        }
        out.push('\n');
        for &child in node.children.iter().rev() {
            stack.push((child, depth + 1));
        }
    }
    out
}

/// The source of a node on one line, shortened to 48 characters.
fn snippet(source: &str, start: usize, end: usize) -> String {
    const WIDTH: usize = 48;
    let text = source.get(start..end).unwrap_or("?");
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > WIDTH {
        let head: String = flat.chars().take(WIDTH - 1).collect();
        format!("{head}…")
    } else {
        flat
    }
}

/// A number with thousands separators (`16,777,216`), or "unbounded" for a saturated bound:
/// how every count, cost and size is written in text for people (the analyzer's messages, the
/// lint's summaries, `ozcheck filter`'s verdict line; docs/cli.md, "Numbers"), while JSON and
/// SARIF carry raw digits.
pub fn group(n: u64) -> String {
    if n == u64::MAX {
        return "unbounded".to_owned();
    }
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}
