//! YAML into a small tree of our own, with a byte span on every key and value.
//!
//! saphyr's parser gives span-carrying events; we build the tree ourselves so that duplicate
//! keys stay in it (a rule reports them and parsing goes on), so that scalar styles are kept
//! (positions inside a filter map back to the file), and so that hostile input stays bounded:
//! nesting deeper than [`MAX_DEPTH`] and alias expansion beyond [`MAX_NODES`] nodes stop the
//! parse with a problem instead of exhausting the stack or memory.

use std::collections::HashMap;
use std::ops::Range;

use saphyr_parser::{Event, Parser, ScalarStyle};

use crate::source::SourceFile;

/// Deepest nesting of mappings and sequences accepted. Plugin files nest four or five levels;
/// the bound keeps building and dropping the tree off the stack's limits.
pub const MAX_DEPTH: usize = 64;

/// Most nodes a file may hold once aliases are expanded (the "billion laughs" bound).
pub const MAX_NODES: usize = 100_000;

/// How a scalar was written, which decides how its value maps back to the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Unquoted.
    Plain,
    /// `'…'`.
    SingleQuoted,
    /// `"…"`, with escapes.
    DoubleQuoted,
    /// A `|` block.
    Literal,
    /// A `>` block.
    Folded,
}

/// A scalar: its value after unquoting and folding, and how it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scalar {
    /// The value.
    pub text: String,
    /// The style.
    pub style: Style,
}

/// A key and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The key node (usually a plain scalar).
    pub key: Node,
    /// The value node.
    pub value: Node,
}

/// The shape of a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A scalar.
    Scalar(Scalar),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, entries in file order, duplicates kept.
    Map(Vec<Entry>),
}

/// A node with the byte range it covers in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// What it is.
    pub value: Value,
    /// Bytes of the file it covers (for a scalar, including quotes).
    pub span: Range<usize>,
}

/// What a YAML scalar means under the core schema, for type checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    /// `null`, `~` or nothing.
    Null,
    /// `true` or `false`.
    Bool,
    /// A whole number.
    Int,
    /// A number with a fraction or exponent.
    Float,
    /// Anything else, and every quoted or block scalar.
    String,
}

impl Node {
    /// The scalar, if this is one.
    pub fn scalar(&self) -> Option<&Scalar> {
        match &self.value {
            Value::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The scalar's text when it reads as a string (not null, bool or number).
    pub fn as_str(&self) -> Option<&str> {
        let s = self.scalar()?;
        (self.scalar_kind() == Some(ScalarKind::String)).then_some(s.text.as_str())
    }

    /// The scalar's text whatever it means (keys, names that look like numbers).
    pub fn text(&self) -> Option<&str> {
        self.scalar().map(|s| s.text.as_str())
    }

    /// The mapping's entries, if this is one.
    pub fn entries(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Map(e) => Some(e),
            _ => None,
        }
    }

    /// The sequence's items, if this is one.
    pub fn items(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(i) => Some(i),
            _ => None,
        }
    }

    /// The value of the first entry with this key.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    /// The first entry with this key.
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries()?.iter().find(|e| e.key.text() == Some(key))
    }

    /// Whether a scalar is null (`~`, `null`, or nothing).
    pub fn is_null(&self) -> bool {
        self.scalar_kind() == Some(ScalarKind::Null)
    }

    /// What a scalar means under the YAML 1.2 core schema.
    pub fn scalar_kind(&self) -> Option<ScalarKind> {
        let s = self.scalar()?;
        if s.style != Style::Plain {
            return Some(ScalarKind::String);
        }
        Some(match s.text.as_str() {
            "" | "~" | "null" | "Null" | "NULL" => ScalarKind::Null,
            "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => ScalarKind::Bool,
            t if is_int(t) => ScalarKind::Int,
            t if is_float(t) => ScalarKind::Float,
            _ => ScalarKind::String,
        })
    }

    /// A short name of the node's kind for messages.
    pub fn kind_name(&self) -> &'static str {
        match &self.value {
            Value::Map(_) => "a mapping",
            Value::Seq(_) => "a list",
            Value::Scalar(_) => match self.scalar_kind() {
                Some(ScalarKind::Null) => "nothing (null)",
                Some(ScalarKind::Bool) => "a boolean",
                Some(ScalarKind::Int) => "a whole number",
                Some(ScalarKind::Float) => "a number",
                _ => "a string",
            },
        }
    }
}

fn is_int(t: &str) -> bool {
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if let Some(hex) = digits.strip_prefix("0x") {
        return !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    if let Some(oct) = digits.strip_prefix("0o") {
        return !oct.is_empty() && oct.bytes().all(|b| (b'0'..=b'7').contains(&b));
    }
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn is_float(t: &str) -> bool {
    matches!(
        t,
        ".inf" | ".Inf" | ".INF" | "-.inf" | "+.inf" | "-.Inf" | "+.Inf" | ".nan" | ".NaN" | ".NAN"
    ) || (t.bytes().any(|b| b.is_ascii_digit())
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && t.parse::<f64>().is_ok())
}

/// A problem that stopped or limited the parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlProblem {
    /// What went wrong.
    pub message: String,
    /// Where (bytes of the file).
    pub span: Range<usize>,
}

/// A parsed file: its root node (if the parse got that far) and the problems met.
#[derive(Clone, Debug, Default)]
pub struct Document {
    /// The first document's root; `None` for an empty file or a failed parse.
    pub root: Option<Node>,
    /// Syntax errors and exceeded limits.
    pub problems: Vec<YamlProblem>,
}

enum Frame {
    Seq {
        items: Vec<Node>,
        start: usize,
        anchor: usize,
    },
    Map {
        entries: Vec<Entry>,
        key: Option<Node>,
        start: usize,
        anchor: usize,
    },
}

struct Builder<'s> {
    source: &'s SourceFile,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    nodes: usize,
    roots: Vec<Node>,
}

/// Parses a file. Never panics; stops at the first syntax error, keeping what came before it
/// only as problems (a half-read file would give misleading findings).
pub fn parse(source: &SourceFile) -> Document {
    let mut builder = Builder {
        source,
        stack: Vec::new(),
        anchors: HashMap::new(),
        nodes: 0,
        roots: Vec::new(),
    };
    let mut problems = Vec::new();
    for event in Parser::new_from_str(source.yaml_text()) {
        match event {
            Ok((event, span)) => {
                let start = source.byte_at(span.start.line(), span.start.col());
                let end = source.byte_at(span.end.line(), span.end.col()).max(start);
                if let Err(problem) = builder.on_event(event, start..end) {
                    problems.push(problem);
                    return Document {
                        root: None,
                        problems,
                    };
                }
            }
            Err(error) => {
                let at = source.byte_at(error.marker().line(), error.marker().col());
                let end = source.text[at..]
                    .chars()
                    .next()
                    .map_or(at, |c| at + c.len_utf8());
                problems.push(YamlProblem {
                    message: format!("invalid YAML: {}", error.info()),
                    span: at..end,
                });
                return Document {
                    root: None,
                    problems,
                };
            }
        }
    }
    let mut roots = builder.roots.into_iter();
    let root = roots.next();
    if let Some(extra) = roots.next() {
        problems.push(YamlProblem {
            message: "a plugin file holds one YAML document; this file has more".to_owned(),
            span: extra.span.start..extra.span.start,
        });
    }
    Document { root, problems }
}

/// The byte after the closing quote of the quoted scalar that starts at `span.start` (the end
/// of `span` when no closing quote lies inside it).
fn quoted_end(text: &str, span: Range<usize>, style: Style) -> usize {
    let Some(body) = text.get(span.start..span.end) else {
        return span.end;
    };
    let bytes = body.as_bytes();
    let quote = if style == Style::SingleQuoted {
        b'\''
    } else {
        b'"'
    };
    if bytes.first() != Some(&quote) {
        return span.end;
    }
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote => return span.start + i + 1,
            _ => i += 1,
        }
    }
    span.end
}

fn node_count(node: &Node) -> usize {
    match &node.value {
        Value::Scalar(_) => 1,
        Value::Seq(items) => 1 + items.iter().map(node_count).sum::<usize>(),
        Value::Map(entries) => {
            1 + entries
                .iter()
                .map(|e| node_count(&e.key) + node_count(&e.value))
                .sum::<usize>()
        }
    }
}

impl Builder<'_> {
    fn on_event(&mut self, event: Event<'_>, span: Range<usize>) -> Result<(), YamlProblem> {
        match event {
            Event::Scalar(text, style, anchor, _tag) => {
                let style = match style {
                    ScalarStyle::SingleQuoted => Style::SingleQuoted,
                    ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
                    ScalarStyle::Literal => Style::Literal,
                    ScalarStyle::Folded => Style::Folded,
                    ScalarStyle::Plain => Style::Plain,
                };
                let span = match style {
                    // Block scalars end where the next token starts; trim the trailing lines.
                    Style::Literal | Style::Folded => {
                        let trimmed = self.source.text[span.clone()].trim_end().len();
                        span.start..span.start + trimmed
                    }
                    // A quoted scalar followed by a comment is given a span to the line's end;
                    // it ends at its closing quote.
                    Style::SingleQuoted | Style::DoubleQuoted => {
                        let end = quoted_end(&self.source.text, span.clone(), style);
                        span.start..end
                    }
                    Style::Plain => span,
                };
                let node = Node {
                    value: Value::Scalar(Scalar {
                        text: text.into_owned(),
                        style,
                    }),
                    span,
                };
                self.finish(node, anchor, 1)
            }
            Event::Alias(id) => {
                let Some(target) = self.anchors.get(&id) else {
                    return Err(YamlProblem {
                        message: "alias of an unknown anchor".to_owned(),
                        span,
                    });
                };
                // Expanding an alias copies its anchor; counting first keeps a bomb of nested
                // aliases from being built at all.
                let count = node_count(target);
                if self.nodes + count > MAX_NODES {
                    return Err(YamlProblem {
                        message: format!(
                            "aliases expand this file past {MAX_NODES} nodes; refusing to read further"
                        ),
                        span,
                    });
                }
                let mut node = target.clone();
                node.span = span;
                self.finish(node, 0, count)
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if self.stack.len() >= MAX_DEPTH {
                    return Err(YamlProblem {
                        message: format!(
                            "nesting deeper than {MAX_DEPTH} levels; refusing to read further"
                        ),
                        span,
                    });
                }
                let frame = if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq {
                        items: Vec::new(),
                        start: span.start,
                        anchor,
                    }
                } else {
                    Frame::Map {
                        entries: Vec::new(),
                        key: None,
                        start: span.start,
                        anchor,
                    }
                };
                self.stack.push(frame);
                Ok(())
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(frame) = self.stack.pop() else {
                    return Ok(());
                };
                let (value, start, anchor) = match frame {
                    Frame::Seq {
                        items,
                        start,
                        anchor,
                    } => (Value::Seq(items), start, anchor),
                    Frame::Map {
                        entries,
                        start,
                        anchor,
                        ..
                    } => (Value::Map(entries), start, anchor),
                };
                // A block collection's end event sits at the next token; end at the last child.
                let end = match &value {
                    Value::Seq(items) => items.last().map(|n| n.span.end),
                    Value::Map(entries) => entries.last().map(|e| e.value.span.end),
                    Value::Scalar(_) => None,
                };
                let flow = self
                    .source
                    .text
                    .as_bytes()
                    .get(start)
                    .is_some_and(|b| matches!(b, b'[' | b'{'));
                let end = if flow {
                    span.end
                } else {
                    end.unwrap_or(span.end)
                };
                let node = Node {
                    value,
                    span: start..end.max(start),
                };
                self.finish(node, anchor, 1)
            }
            _ => Ok(()),
        }
    }

    fn finish(&mut self, node: Node, anchor: usize, count: usize) -> Result<(), YamlProblem> {
        self.nodes += count;
        if self.nodes > MAX_NODES {
            return Err(YamlProblem {
                message: format!("more than {MAX_NODES} nodes; refusing to read further"),
                span: node.span,
            });
        }
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => *key = Some(node),
                Some(k) => entries.push(Entry {
                    key: k,
                    value: node,
                }),
            },
            None => self.roots.push(node),
        }
        Ok(())
    }
}
