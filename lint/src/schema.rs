//! The shapes of agent, flow and routine files (PLUGIN-SCHEMA.md) as data: one table that the
//! schema rules (`unknown-key`, `wrong-type`, `missing-key`) check files against and that
//! `ozcheck schema` turns into JSON Schema, so the two cannot drift.

use std::ops::Range;

use serde_json::{Map, Value as Json, json};

use crate::finding::Fix;
use crate::model::FileKind;
use crate::position::literal_span;
use crate::yaml::{Entry, Node, ScalarKind, Style, Value};

/// What a key's value must be.
#[derive(Debug)]
pub enum Shape {
    /// Any scalar but null (numbers and booleans read as text: `filter: true` is CEL).
    Str,
    /// A whole number greater than zero.
    PositiveInt,
    /// One of these words.
    Enum(&'static [&'static str]),
    /// A list of non-null scalars.
    StrList,
    /// A mapping with these keys.
    Map(&'static [Field]),
    /// A list of mappings with these keys.
    List(&'static [Field]),
    /// A duration, a whole number and one unit: a string here, its grammar checked by the
    /// timeout rules; the JSON Schema gives the pattern.
    Duration,
    /// `job` or `now`: a string here (`invalid-since` checks the word); an enum in the JSON
    /// Schema.
    Since,
    /// A name or id: a string here (`invalid-name` checks it); a pattern in the JSON Schema.
    Name,
    /// A string that may not be empty (`empty-wait-argument` checks it).
    NonEmpty,
    /// A list of strings that may not be empty.
    NonEmptyList,
    /// A CEL expression that gives a `bool` (`filter`, `when`): text or a YAML boolean
    /// (`filter: true` is the expression `true`), never a number, which no CEL `bool` is.
    Cel,
    /// A CEL expression that gives a `string` (`sender`): text only, as a YAML boolean or
    /// number is an expression of the wrong type.
    CelText,
}

/// The key YAML 1.1 reads as a merge of another mapping (`<<: *anchor`). The lint reads YAML
/// 1.2, which has no merge key, and refuses it (`merge-key`, docs/decisions/0011).
pub const MERGE_KEY: &str = "<<";

/// One key of a mapping.
#[derive(Debug)]
pub struct Field {
    /// The key.
    pub name: &'static str,
    /// Its value's shape.
    pub shape: Shape,
    /// Whether it must be present.
    pub required: bool,
    /// One line for editors and `ozcheck schema`.
    pub doc: &'static str,
}

const fn f(name: &'static str, shape: Shape, doc: &'static str) -> Field {
    Field {
        name,
        shape,
        required: false,
        doc,
    }
}

const fn req(name: &'static str, shape: Shape, doc: &'static str) -> Field {
    Field {
        name,
        shape,
        required: true,
        doc,
    }
}

/// The JSON Schema pattern of a duration: a whole number above zero and one unit.
pub const DURATION_PATTERN: &str = "^0*[1-9][0-9]*(ms|s|m|h|d)$";

/// The JSON Schema pattern of a name: lowercase letters, digits, `-` and `_`, starting with a
/// letter or digit (what `invalid-name` accepts).
pub const NAME_PATTERN: &str = "^[a-z0-9][a-z0-9_-]*$";

/// The runtimes an agent may name.
pub const RUNTIMES: &[&str] = &["pydantic-ai", "openai-agents", "acp", "jsonl", "remote"];

const MODEL: &[Field] = &[f("primary", Shape::Str, "The model, as provider/model.")];
const AGENT_LIMITS: &[Field] = &[f(
    "timeout",
    Shape::Duration,
    "The agent's own timeout: a whole number and one unit (ms, s, m, h, d).",
)];
const REMOTE: &[Field] = &[f("url", Shape::Str, "Where the remote agent runs.")];

/// The keys of an agent file.
pub const AGENT: &[Field] = &[
    req("name", Shape::Name, "The agent's name (its file stem)."),
    req("runtime", Shape::Enum(RUNTIMES), "Where the agent runs."),
    f("model", Shape::Map(MODEL), "The model the agent uses."),
    f(
        "instructions",
        Shape::Str,
        "A prompt file, relative to the plugin folder.",
    ),
    f(
        "tools",
        Shape::StrList,
        "Tools the agent may call, such as oz.wait_for_event.",
    ),
    f(
        "delegates",
        Shape::StrList,
        "Agents of this plugin it may hand work to.",
    ),
    f("limits", Shape::Map(AGENT_LIMITS), "The agent's limits."),
    f("remote", Shape::Map(REMOTE), "For runtime: remote only."),
];

const FLOW_EVENT: &[Field] = &[
    req(
        "source",
        Shape::NonEmpty,
        "The event source, such as github-events.",
    ),
    f(
        "types",
        Shape::NonEmptyList,
        "Event types; any type when left out.",
    ),
    f("filter", Shape::Cel, "CEL over event that must be true."),
];
const FLOW_TRIGGER: &[Field] = &[f(
    "event",
    Shape::Map(FLOW_EVENT),
    "Start the flow on an event.",
)];
const WAIT: &[Field] = &[
    req(
        "source",
        Shape::NonEmpty,
        "The event source, such as github-events.",
    ),
    f(
        "types",
        Shape::NonEmptyList,
        "Event types; any type when left out.",
    ),
    f(
        "subject",
        Shape::NonEmpty,
        "What the event is about; may hold ${{ }}.",
    ),
    f(
        "filter",
        Shape::Cel,
        "CEL over event alone that must be true.",
    ),
    f(
        "timeout",
        Shape::Duration,
        "A whole number and one unit, at most 7d; default 1h.",
    ),
    // `since` is a string here; `invalid-since` checks its word with the runtime's own grammar.
    f("since", Shape::Since, "job (the default) or now."),
];
const APPROVAL: &[Field] = &[f(
    "details",
    Shape::Str,
    "Text shown to the approver; may hold ${{ }}.",
)];
const STEP: &[Field] = &[
    req("id", Shape::Name, "The step's id, unique in the flow."),
    f(
        "when",
        Shape::Cel,
        "CEL over trigger and earlier steps; the step runs when true.",
    ),
    f("wait_for_event", Shape::Map(WAIT), "Wait for an event."),
    f("approval", Shape::Map(APPROVAL), "Ask a person."),
];

/// The keys of a flow file.
pub const FLOW: &[Field] = &[
    req("name", Shape::Name, "The flow's name (its file stem)."),
    f("trigger", Shape::Map(FLOW_TRIGGER), "What starts the flow."),
    f("steps", Shape::List(STEP), "The steps, in order."),
];

const ROUTINE_EVENT: &[Field] = &[
    req(
        "source",
        Shape::NonEmpty,
        "The event source, such as github-events.",
    ),
    f(
        "types",
        Shape::NonEmptyList,
        "Event types; any type when left out.",
    ),
    f("filter", Shape::Cel, "CEL over event that must be true."),
    f(
        "sender",
        Shape::CelText,
        "CEL over event giving the sender's name.",
    ),
    f(
        "allow_senders",
        Shape::StrList,
        "Senders that may fire the routine; needs sender.",
    ),
];
const TRIGGER: &[Field] = &[
    req(
        "name",
        Shape::Name,
        "The trigger's name, unique in the routine, without dots.",
    ),
    f("event", Shape::Map(ROUTINE_EVENT), "Fire on an event."),
];
const HTTP: &[Field] = &[
    f("url", Shape::Str, "Where the output is sent."),
    f(
        "secret",
        Shape::Str,
        "The name of the secret that signs it.",
    ),
];
const OUTPUT: &[Field] = &[
    req(
        "name",
        Shape::Name,
        "The output's name, unique in the routine.",
    ),
    f("description", Shape::Str, "What the output does."),
    f("http", Shape::Map(HTTP), "Send the output over HTTP."),
    f(
        "apply",
        Shape::Enum(&["now"]),
        "now: applied when the agent calls it.",
    ),
];
const ROUTINE_LIMITS: &[Field] = &[f(
    "max_fires_per_hour",
    Shape::PositiveInt,
    "Most fires per hour, event fires included.",
)];

/// The keys of a routine file.
pub const ROUTINE: &[Field] = &[
    req("name", Shape::Name, "The routine's name."),
    req(
        "agent",
        Shape::Str,
        "The agent of this plugin that a fire runs.",
    ),
    f("input", Shape::Str, "The prompt a fire starts with."),
    f("owner_team", Shape::Str, "The team that owns the routine."),
    f("tools", Shape::StrList, "The tools a fire may call."),
    f("triggers", Shape::List(TRIGGER), "What fires the routine."),
    f("outputs", Shape::List(OUTPUT), "Safe outputs."),
    f(
        "limits",
        Shape::Map(ROUTINE_LIMITS),
        "The routine's limits.",
    ),
];

/// The top-level keys of a file kind.
pub fn fields(kind: FileKind) -> &'static [Field] {
    match kind {
        FileKind::Agent => AGENT,
        FileKind::Flow => FLOW,
        FileKind::Routine => ROUTINE,
    }
}

/// What the schema check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A key the schema does not know, with the closest known key.
    UnknownKey {
        /// The key's span.
        span: Range<usize>,
        /// The key.
        key: String,
        /// Where it was (`steps[].wait_for_event`).
        path: String,
        /// The closest known key, if close.
        suggestion: Option<&'static str>,
        /// The known keys.
        expected: Vec<&'static str>,
        /// The rename to the suggestion, when it is the only close key and the mapping does not
        /// already have it.
        fix: Option<Fix>,
    },
    /// A value of the wrong shape.
    WrongType {
        /// The value's span.
        span: Range<usize>,
        /// The key path.
        path: String,
        /// What was expected.
        expected: String,
        /// What was found.
        found: String,
        /// How to fix it.
        help: Option<String>,
        /// The edit that fixes it for certain, if there is one.
        fix: Option<Fix>,
    },
    /// A required key is missing.
    MissingKey {
        /// The key whose mapping lacks it (`wait_for_event`), or the mapping itself for list
        /// items and the file (its first line is then where the key should go).
        span: Range<usize>,
        /// The key path of the mapping.
        path: String,
        /// The missing key.
        key: &'static str,
        /// Whether the mapping has a merge key, which may have been meant to supply it.
        merge: bool,
    },
    /// A YAML 1.1 merge key (`<<`), which YAML 1.2 and the lint do not merge.
    MergeKey {
        /// The key's span.
        span: Range<usize>,
        /// The key path of the mapping holding it.
        path: String,
    },
}

/// Checks a file's root against its kind's table; `text` is the file's text (fixes are edits
/// of it).
pub fn check(text: &str, root: &Node, kind: FileKind) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut cx = Walk {
        text,
        out: &mut problems,
    };
    cx.map(root, fields(kind), "", None);
    problems
}

/// What an agent, flow or routine file with no YAML document (empty, or only comments)
/// breaks: its root must be a mapping, as the JSON Schema's `"type": "object"` says of the
/// null such a file reads as. Without this the file would pass with nothing checked.
pub fn empty_file() -> Problem {
    Problem::WrongType {
        span: 0..0,
        path: FILE.to_owned(),
        expected: "a mapping".to_owned(),
        found: "empty (it holds no YAML document, only comments or nothing)".to_owned(),
        help: Some("write the file's keys, at least `name:`".to_owned()),
        fix: None,
    }
}

/// The path of the file's root in problems.
pub const FILE: &str = "the file";

/// The state of one schema walk: the file's text and the problems found so far.
struct Walk<'a> {
    text: &'a str,
    out: &'a mut Vec<Problem>,
}

/// The rename of an unknown key to the one close key, unless the mapping has that key already.
fn rename_fix(text: &str, mapping: &Node, key: &Node, fields: &'static [Field]) -> Option<Fix> {
    let name = key.text()?;
    let to = ozcheck_analyzer::check::suggest::unique_closest(name, fields.iter().map(|f| f.name))?;
    if mapping.entry(to).is_some() {
        return None;
    }
    let span = literal_span(text, key)?;
    Some(Fix::replace(format!("rename `{name}` to `{to}`"), span, to))
}

/// A scalar where a list of strings belongs, written as a one-item flow list, when the scalar
/// stays the same value inside `[ ]`.
fn list_fix(text: &str, node: &Node) -> Option<Fix> {
    let scalar = node.scalar()?;
    let written = text.get(node.span.clone())?;
    if written.contains(['\n', '\r']) {
        return None;
    }
    let safe = match scalar.style {
        Style::Plain => {
            !written.contains([
                ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`',
            ]) && !written.contains(": ")
                && !written.starts_with(['-', '?', ':', '\'', '"'])
        }
        Style::SingleQuoted | Style::DoubleQuoted => true,
        Style::Literal | Style::Folded => false,
    };
    safe.then(|| {
        Fix::replace(
            format!("write [{written}]"),
            node.span.clone(),
            format!("[{written}]"),
        )
    })
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

impl Walk<'_> {
    /// Checks a mapping; `key` is the key it is the value of, where a missing key is reported (as
    /// actionlint does), rather than at the mapping's first entry.
    fn map(&mut self, node: &Node, fields: &'static [Field], path: &str, key: Option<&Node>) {
        let Some(entries) = node.entries() else {
            self.out.push(Problem::WrongType {
                span: node.span.clone(),
                path: if path.is_empty() {
                    FILE.to_owned()
                } else {
                    path.to_owned()
                },
                expected: "a mapping".to_owned(),
                found: node.kind_name().to_owned(),
                help: None,
                fix: None,
            });
            return;
        };
        for entry in entries {
            let key = entry.key.text().unwrap_or("");
            if key == MERGE_KEY {
                self.out.push(Problem::MergeKey {
                    span: entry.key.span.clone(),
                    path: path.to_owned(),
                });
                continue;
            }
            match fields.iter().find(|f| f.name == key) {
                Some(field) => self.value(entry, &field.shape, &join(path, key)),
                None => self.out.push(Problem::UnknownKey {
                    span: entry.key.span.clone(),
                    key: key.to_owned(),
                    path: path.to_owned(),
                    suggestion: closest(key, fields.iter().map(|f| f.name)),
                    expected: fields.iter().map(|f| f.name).collect(),
                    fix: rename_fix(self.text, node, &entry.key, fields),
                }),
            }
        }
        for field in fields.iter().filter(|f| f.required) {
            if node.entry(field.name).is_none() {
                self.out.push(Problem::MissingKey {
                    span: key.map_or_else(|| node.span.clone(), |k| k.span.clone()),
                    path: path.to_owned(),
                    key: field.name,
                    merge: node.entry(MERGE_KEY).is_some(),
                });
            }
        }
    }

    fn value(&mut self, entry: &Entry, shape: &Shape, path: &str) {
        let node = &entry.value;
        let out = &mut *self.out;
        let wrong = |expected: &str, help: Option<String>| Problem::WrongType {
            span: node.span.clone(),
            path: path.to_owned(),
            expected: expected.to_owned(),
            found: node.kind_name().to_owned(),
            help,
            fix: None,
        };
        match shape {
            Shape::Str | Shape::Duration | Shape::Since | Shape::Name | Shape::NonEmpty => {
                if node.scalar().is_none() || node.is_null() {
                    out.push(wrong("a string", None));
                }
            }
            Shape::Cel | Shape::CelText => {
                let kind = node.scalar_kind();
                let text_only = matches!(shape, Shape::CelText);
                let ok = kind == Some(ScalarKind::String)
                    || (kind == Some(ScalarKind::Bool) && !text_only);
                if !ok {
                    let expected = if text_only {
                        "a CEL expression (text)"
                    } else {
                        "a CEL expression (text, or true or false)"
                    };
                    let mut problem = wrong(expected, None);
                    // Say which number: `1` where a filter belongs is often a typo'd
                    // comparison (`event.attributes.count == 1`).
                    if let (Problem::WrongType { found, .. }, Some(text)) =
                        (&mut problem, node.text())
                        && !node.is_null()
                        && node.scalar().is_some()
                    {
                        *found = format!("{} `{text}`", node.kind_name());
                    }
                    out.push(problem);
                }
            }
            Shape::PositiveInt => {
                let ok = node.scalar_kind() == Some(ScalarKind::Int)
                    && node
                        .text()
                        .and_then(|t| t.parse::<u64>().ok())
                        .is_some_and(|n| n > 0);
                if !ok {
                    let mut problem = wrong("a whole number greater than zero", None);
                    if let (Problem::WrongType { found, .. }, Some(text)) =
                        (&mut problem, node.text())
                        && node.scalar().is_some()
                        && !node.is_null()
                    {
                        *found = format!("`{text}`");
                    }
                    out.push(problem);
                }
            }
            Shape::Enum(words) => match node.text() {
                Some(t) if node.scalar().is_some() && words.contains(&t) => {}
                Some(t) if node.scalar().is_some() && !node.is_null() => {
                    out.push(Problem::WrongType {
                        span: node.span.clone(),
                        path: path.to_owned(),
                        expected: format!("one of {}", words.join(", ")),
                        found: format!("`{t}`"),
                        help: closest(t, words.iter().copied())
                            .map(|s| format!("did you mean `{s}`?")),
                        fix: ozcheck_analyzer::check::suggest::unique_closest(
                            t,
                            words.iter().copied(),
                        )
                        .zip(literal_span(self.text, node))
                        .map(|(to, span)| Fix::replace(format!("write `{to}`"), span, to)),
                    });
                }
                _ => out.push(wrong(&format!("one of {}", words.join(", ")), None)),
            },
            Shape::StrList | Shape::NonEmptyList => match &node.value {
                Value::Seq(items) => {
                    for item in items {
                        if item.scalar().is_none() || item.is_null() {
                            out.push(Problem::WrongType {
                                span: item.span.clone(),
                                path: format!("{path}[]"),
                                expected: "a string".to_owned(),
                                found: item.kind_name().to_owned(),
                                help: None,
                                fix: None,
                            });
                        }
                    }
                }
                Value::Scalar(s) if !node.is_null() => {
                    let mut problem =
                        wrong("a list of strings", Some(format!("write [{}]", s.text)));
                    if let Problem::WrongType { fix, .. } = &mut problem {
                        *fix = list_fix(self.text, node);
                    }
                    out.push(problem);
                }
                _ => out.push(wrong("a list of strings", None)),
            },
            Shape::Map(fields) => self.map(node, fields, path, Some(&entry.key)),
            Shape::List(fields) => match node.items() {
                Some(items) => {
                    let item_path = format!("{path}[]");
                    for item in items {
                        self.map(item, fields, &item_path, None);
                    }
                }
                None => out.push(wrong("a list", None)),
            },
        }
    }
}

/// The candidate closest to `word`, if it is close enough to be a typo: the analyzer's "did you
/// mean", so the lint and the CEL checker suggest alike.
pub fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    ozcheck_analyzer::check::suggest::closest(word, candidates)
}

/// The JSON Schema (draft-07) of a file kind, for yaml-language-server and other editors. It
/// gives the lint's verdict where a schema can say it (docs/decisions/0011): it refuses wrong
/// types, missing keys, merge keys, the duration and name grammars, `since`, empty wait
/// arguments, one action per step, `allow_senders` without `sender`, and the wait tool on
/// runtimes that cannot wait; it accepts unknown keys with the warning annotation editors show,
/// as the lint warns of them. What needs more than one file (agents named by routines), CEL,
/// arithmetic (the 7d bound) or a number's written form (`1.0`) stays the lint's.
pub fn json_schema(kind: FileKind) -> Json {
    let mut schema = object_schema(fields(kind));
    add_rules(&mut schema, kind);
    if let Json::Object(map) = &mut schema {
        map.insert(
            "$schema".to_owned(),
            json!("http://json-schema.org/draft-07/schema#"),
        );
        map.insert(
            "title".to_owned(),
            json!(format!("ozcheck {} file", kind.name())),
        );
    }
    schema
}

/// The constraints across keys that the tables do not hold.
fn add_rules(schema: &mut Json, kind: FileKind) {
    match kind {
        FileKind::Agent => {
            schema["if"] = json!({
                "properties": { "runtime": { "enum": ["jsonl", "remote"] } },
                "required": ["runtime"],
            });
            schema["then"] = json!({
                "properties": { "tools": { "not": { "contains": { "const": crate::rules::WAIT_TOOL } } } },
            });
        }
        FileKind::Flow => {
            if let Some(step) = schema.pointer_mut("/properties/steps/items") {
                step["oneOf"] = json!([
                    { "required": ["wait_for_event"], "not": { "required": ["approval"] } },
                    { "required": ["approval"], "not": { "required": ["wait_for_event"] } },
                ]);
            }
        }
        FileKind::Routine => {
            if let Some(event) = schema.pointer_mut("/properties/triggers/items/properties/event") {
                event["dependencies"] = json!({ "allow_senders": ["sender"] });
            }
        }
    }
}

fn object_schema(fields: &'static [Field]) -> Json {
    let mut properties = Map::new();
    for field in fields {
        let mut prop = shape_schema(&field.shape);
        if let Json::Object(map) = &mut prop {
            let doc = match field.shape {
                Shape::PositiveInt => format!("{}{WHOLE_NUMBER_NOTE}", field.doc),
                _ => field.doc.to_owned(),
            };
            map.insert("description".to_owned(), json!(doc));
        }
        properties.insert(field.name.to_owned(), prop);
    }
    let required: Vec<&str> = fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name)
        .collect();
    // A merge key is refused as the lint refuses it (`merge-key`); validators that merge
    // (YAML 1.1 loaders) never see it, which docs/decisions/0011 accepts.
    properties.insert(
        MERGE_KEY.to_owned(),
        json!({
            "not": {},
            "doNotSuggest": true,
            "description": MERGE_MESSAGE,
            "errorMessage": MERGE_MESSAGE,
        }),
    );
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        // A key the lint reports as `unknown-key` is a warning there, as the platform may know
        // keys we have not seen (PLUGIN-SCHEMA.md): the schema accepts it too and says so with
        // the annotations editors show as a warning (VS Code and yaml-language-server mark a
        // value whose schema has a `deprecationMessage`), never as an error.
        "additionalProperties": {
            "deprecationMessage": UNKNOWN_KEY_MESSAGE,
            "doNotSuggest": true,
            "description": UNKNOWN_KEY_MESSAGE,
        },
    });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// What an editor shows on a key the schema does not know: the lint's `unknown-key` warning.
pub const UNKNOWN_KEY_MESSAGE: &str = "Unknown key (ozcheck's unknown-key warning): the plugin \
schema does not list it here, and the platform ignores keys it does not know. A misspelling?";

/// What an editor shows on a merge key: the lint's `merge-key` error.
pub const MERGE_MESSAGE: &str = "A YAML merge key (ozcheck's merge-key error): YAML 1.2 has \
none, so the keys of the mapping are not merged here. Write them out.";

/// What the JSON Schema says of a whole number: draft 07 cannot tell `1.0` from `1` once a YAML
/// loader has read them, so the schema states what the lint refuses (docs/decisions/0011).
const WHOLE_NUMBER_NOTE: &str = " A whole number written without a decimal point or exponent: \
the lint refuses `1.0` (a YAML float), which a JSON Schema validator cannot tell from `1`.";

fn shape_schema(shape: &Shape) -> Json {
    const SCALAR: [&str; 3] = ["string", "number", "boolean"];
    match shape {
        Shape::Str => json!({"type": SCALAR}),
        Shape::Duration => json!({"type": "string", "pattern": DURATION_PATTERN}),
        Shape::Since => json!({"type": "string", "enum": ["job", "now"]}),
        Shape::Name => json!({"type": SCALAR, "pattern": NAME_PATTERN}),
        Shape::NonEmpty => json!({"type": SCALAR, "minLength": 1}),
        Shape::NonEmptyList => json!({"type": "array", "items": {"type": SCALAR, "minLength": 1}}),
        Shape::PositiveInt => json!({"type": "integer", "minimum": 1}),
        Shape::Cel => json!({"type": ["string", "boolean"]}),
        Shape::CelText => json!({"type": "string"}),
        Shape::Enum(words) => json!({"type": "string", "enum": words}),
        Shape::StrList => {
            json!({"type": "array", "items": {"type": ["string", "number", "boolean"]}})
        }
        Shape::Map(fields) => object_schema(fields),
        Shape::List(fields) => json!({"type": "array", "items": object_schema(fields)}),
    }
}
