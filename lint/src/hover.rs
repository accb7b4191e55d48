//! What an editor shows over a byte of a plugin file: for a key, its place and description in
//! the schema; for a filter, `sender` or `when`, the expression's worst-case cost range, the
//! limit, the sub-expression that dominates and the size assumption behind it (from the
//! analyzer's `cost_summary`). Pure: the language server turns the result into LSP.

use std::fmt::Write as _;
use std::ops::Range;

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::cost::{Remedy, group};
use ozcheck_analyzer::{Options, cost_summary};

use crate::config::Config;
use crate::model::{FileKind, Model};
use crate::position::map_span;
use crate::schema::{self, Field, Shape};
use crate::source::SourceFile;
use crate::yaml::{self, Node, Value};

/// The hover at one offset: the bytes it is about and Markdown to show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    /// The key or value the hover is about.
    pub span: Range<usize>,
    /// What to show.
    pub markdown: String,
}

/// One step of the way from the root to a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The key path to the entry whose key or value holds `offset`, that entry, and whether the
/// offset is on the key.
fn locate(root: &Node, offset: usize) -> Option<(Vec<Step<'_>>, &crate::yaml::Entry, bool)> {
    let mut path = Vec::new();
    let mut node = root;
    loop {
        match &node.value {
            Value::Map(entries) => {
                let entry = entries.iter().find(|e| {
                    e.key.span.contains(&offset)
                        || e.value.span.contains(&offset)
                        || e.value.span.end == offset
                })?;
                let key = entry.key.text().unwrap_or("");
                if entry.key.span.contains(&offset) || entry.value.scalar().is_some() {
                    path.push(Step::Key(key));
                    return Some((path, entry, entry.key.span.contains(&offset)));
                }
                path.push(Step::Key(key));
                node = &entry.value;
            }
            Value::Seq(items) => {
                let (i, item) = items
                    .iter()
                    .enumerate()
                    .find(|(_, n)| n.span.contains(&offset) || n.span.end == offset)?;
                path.push(Step::Index(i));
                node = item;
            }
            Value::Scalar(_) => return None,
        }
    }
}

/// The schema field a key path names.
fn field_of(kind: FileKind, path: &[Step<'_>]) -> Option<&'static Field> {
    let mut fields = schema::fields(kind);
    let mut found = None;
    for step in path {
        let Step::Key(key) = step else { continue };
        let field = fields.iter().find(|f| f.name == *key)?;
        found = Some(field);
        fields = match &field.shape {
            Shape::Map(inner) | Shape::List(inner) => inner,
            _ => &[],
        };
    }
    found
}

fn dotted(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => {
                let _ = write!(out, ".{k}");
            }
            Step::Index(_) => out.push_str("[]"),
        }
    }
    out
}

/// The environment and event source of the expression at `path`, if it is one.
fn expression_env(
    model: &Model<'_>,
    path: &[Step<'_>],
    value: &Node,
    root: &Node,
) -> Option<(Env, Option<String>)> {
    let Some(Step::Key(last)) = path.last() else {
        return None;
    };
    let parent = &path[..path.len() - 1];
    let in_event = matches!(parent.last(), Some(Step::Key("event" | "wait_for_event")));
    match *last {
        "filter" | "sender" if in_event => {
            let spec = parent_node(root, parent)?;
            let source = spec.get("source").and_then(Node::text).map(str::to_owned);
            let env = if *last == "filter" {
                Env::filter()
            } else {
                Env::sender()
            };
            Some((env, source))
        }
        "when" => {
            let Model::Flow(flow) = model else {
                return None;
            };
            let index = parent.iter().rev().find_map(|s| match s {
                Step::Index(i) => Some(*i),
                Step::Key(_) => None,
            })?;
            let text = value.text()?;
            Some((crate::cel::flow_env(flow, index, text, false), None))
        }
        _ => None,
    }
}

fn parent_node<'a>(root: &'a Node, path: &[Step<'_>]) -> Option<&'a Node> {
    let mut node = root;
    for step in path {
        node = match step {
            Step::Key(k) => node.get(k)?,
            Step::Index(i) => node.items()?.get(*i)?,
        };
    }
    Some(node)
}

fn cost_markdown(
    out: &mut String,
    file_text: &str,
    value: &Node,
    env: &Env,
    source: Option<&str>,
    config: &Config,
) {
    let Some(text) = value.text() else { return };
    let options = Options {
        bounds: config.bounds(source),
        ..Options::default()
    };
    match cost_summary(text, env, &options) {
        Ok(summary) => {
            let share = summary.cost.max as f64 * 100.0 / summary.limit.max(1) as f64;
            let _ = writeln!(
                out,
                "\n**cost** {} – {} of the limit {} ({share:.1}%)\n",
                group(summary.cost.min),
                group(summary.cost.max),
                group(summary.limit)
            );
            let start = summary.dominant.start as usize;
            let end = (summary.dominant.end as usize).min(text.len());
            if let Some(term) = text.get(start..end) {
                let mapped = map_span(file_text, value, start..end);
                let line = file_text[..mapped.start].matches('\n').count() + 1;
                let runs = if summary.dominant_runs > 1 {
                    format!(", evaluated up to {} times", group(summary.dominant_runs))
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "**dominated by** `{term}` (line {line}): up to {} per evaluation{runs}\n",
                    group(summary.dominant_max)
                );
            }
            let _ = writeln!(out, "**worst case** {}", summary.assumption);
            if let Some(remedy) = &summary.would_pass {
                would_pass_markdown(out, remedy, source);
            }
        }
        Err(diagnostics) => {
            out.push_str("\n**not estimated**: ");
            let messages: Vec<_> = diagnostics.iter().map(|d| d.message.as_str()).collect();
            out.push_str(&messages.join("; "));
            out.push('\n');
        }
    }
}

/// What would pass an expression refused by cost: each bound of the source that would, as
/// the line of `ozcheck.toml` that declares it, or why none would.
fn would_pass_markdown(out: &mut String, remedy: &Remedy, source: Option<&str>) {
    let table = crate::cel::source_table(source);
    if remedy.changes.is_empty() {
        let _ = writeln!(out, "\n**would pass** {}", remedy.describe());
        return;
    }
    for change in &remedy.changes {
        let _ = writeln!(
            out,
            "\n**would pass** with `{} = {}` under `{table}` in ozcheck.toml (now {}): cost up to {}",
            change.bound.key(),
            change.at_most,
            change.current,
            group(change.cost)
        );
    }
}

/// The hover at byte `offset` of the file at `path` with `text`.
pub fn hover(path: &str, text: &str, offset: usize, config: &Config) -> Option<Hover> {
    let source = SourceFile::new(path, text);
    let doc = yaml::parse(&source);
    let root = doc.root.as_ref()?;
    let kind = FileKind::from_path(path).or_else(|| FileKind::from_content(root))?;
    let (path, entry, on_key) = locate(root, offset)?;
    let field = field_of(kind, &path);
    let mut markdown = format!("`{}`", dotted(&path));
    match field {
        Some(field) => {
            let _ = write!(markdown, " — {}", field.doc);
            if field.required {
                markdown.push_str(" (required)");
            }
            markdown.push('\n');
        }
        None => markdown.push_str(" — not a key of the plugin schema\n"),
    }
    let model = Model::build(Some(root), Some(kind));
    if let Some((env, source_name)) = expression_env(&model, &path, &entry.value, root) {
        let env = config.extensions.apply(env);
        cost_markdown(
            &mut markdown,
            text,
            &entry.value,
            &env,
            source_name.as_deref(),
            config,
        );
    }
    let span = if on_key {
        entry.key.span.clone()
    } else {
        entry.value.span.clone()
    };
    Some(Hover { span, markdown })
}
