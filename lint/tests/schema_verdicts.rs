//! One truth for schema and lint: over every plugin file of the repository (the corpus, the
//! sample plugin, the Examples and Use-insteads of docs/rules.md) and over files generated from
//! the valid ones by seeded mutations (a required key dropped, an unknown key added, a value of
//! another type, a float for a whole number, a number for a string, a merge key, an empty or
//! comment-only file), the lint and the JSON Schema of `ozcheck schema` give the same verdict
//! for every schema-level question: unknown key, missing key, wrong type, merge key.
//!
//! The schema's verdict is read with an independent implementation (the `jsonschema` crate,
//! draft 07). A question's verdict is `None`, `Warning` or `Error`: the lint's is the severity
//! of the question's rule; the schema's is `Error` when the schema refuses the file on that
//! question and `Warning` when only the strict reading refuses it (the schema marks unknown keys
//! with an editor warning rather than refusing them, docs/decisions/0011). The file is read as
//! YAML 1.2 by the lint's own reader, so a merge key stays a key, as it does for a validator
//! that follows YAML 1.2.

use std::path::{Path, PathBuf};

use ozcheck_lint::docs::example_files;
use ozcheck_lint::rules::RULES;
use ozcheck_lint::schema::json_schema;
use ozcheck_lint::yaml::{self, Node, ScalarKind, Value};
use ozcheck_lint::{
    Config, FileKind, FileReport, Input, PluginContext, Severity, SourceFile, lint,
};
use serde_json::{Map, Value as Json, json};

/// The schema-level questions, each with the lint rule that answers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Question {
    UnknownKey,
    MissingKey,
    WrongType,
    MergeKey,
}

const QUESTIONS: [(Question, &str); 4] = [
    (Question::UnknownKey, "unknown-key"),
    (Question::MissingKey, "missing-key"),
    (Question::WrongType, "wrong-type"),
    (Question::MergeKey, "merge-key"),
];

fn to_json(node: &Node) -> Json {
    match &node.value {
        Value::Map(entries) => Json::Object(
            entries
                .iter()
                .map(|e| (e.key.text().unwrap_or("").to_owned(), to_json(&e.value)))
                .collect(),
        ),
        Value::Seq(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Scalar(s) => match node.scalar_kind() {
            Some(ScalarKind::Null) => Json::Null,
            Some(ScalarKind::Bool) => json!(s.text.eq_ignore_ascii_case("true")),
            Some(ScalarKind::Int) => s.text.parse::<i64>().map_or(json!(s.text), |n| json!(n)),
            Some(ScalarKind::Float) => s.text.parse::<f64>().map_or(json!(s.text), |n| json!(n)),
            _ => json!(s.text),
        },
    }
}

/// The schema with every warning-level `additionalProperties` annotation read as a refusal.
fn strict(schema: &Json) -> Json {
    match schema {
        Json::Object(map) => Json::Object(
            map.iter()
                .map(|(k, v)| {
                    if k == "additionalProperties" && v.is_object() {
                        (k.clone(), json!(false))
                    } else {
                        (k.clone(), strict(v))
                    }
                })
                .collect(),
        ),
        Json::Array(items) => Json::Array(items.iter().map(strict).collect()),
        other => other.clone(),
    }
}

/// The questions a schema error answers, by its keyword. Errors of the cross-key constraints
/// (`oneOf`, `then`, `dependencies`) belong to other rules, and so do the grammar keywords
/// (`pattern`, `minLength`) and the value grammars of `timeout` and `since`, whose rules
/// (`invalid-timeout`, `invalid-since`) explain a scalar better than a type error could.
fn question_of(schema_path: &str, instance: &Json) -> Option<Question> {
    let across = ["/oneOf/", "/then/", "/dependencies/", "/if/"];
    if across.iter().any(|a| schema_path.contains(a)) {
        return None;
    }
    let keyword = schema_path.rsplit('/').next().unwrap_or("");
    let grammar =
        schema_path.contains("/properties/timeout/") || schema_path.contains("/properties/since/");
    match keyword {
        "additionalProperties" => Some(Question::UnknownKey),
        "not" if schema_path.contains("/properties/<</") => Some(Question::MergeKey),
        "required" => Some(Question::MissingKey),
        "type" | "enum" | "minimum" if !(grammar && is_scalar(instance)) => {
            Some(Question::WrongType)
        }
        _ => None,
    }
}

fn is_scalar(value: &Json) -> bool {
    !matches!(value, Json::Object(_) | Json::Array(_) | Json::Null)
}

fn errors(schema: &Json, value: &Json) -> Vec<(Question, String)> {
    let validator = jsonschema::draft7::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("the schema compiles");
    validator
        .iter_errors(value)
        .filter_map(|e| {
            let at = e.instance_path().to_string();
            let instance = value.pointer(&at).unwrap_or(&Json::Null);
            question_of(&e.schema_path().to_string(), instance).map(|q| (q, format!("{e} at {at}")))
        })
        .collect()
}

type Verdicts = Vec<(Question, Option<Severity>, String)>;

fn schema_verdicts(kind: FileKind, text: &str, path: &str) -> Verdicts {
    let doc = yaml::parse(&SourceFile::new(path, text));
    let value = doc.root.as_ref().map_or(Json::Null, to_json);
    let schema = json_schema(kind);
    let normal = errors(&schema, &value);
    let strict = errors(&strict(&schema), &value);
    QUESTIONS
        .iter()
        .map(|&(q, _)| {
            let first = |errs: &[(Question, String)]| {
                errs.iter().find(|(x, _)| *x == q).map(|(_, m)| m.clone())
            };
            match (first(&normal), first(&strict)) {
                (Some(m), _) => (q, Some(Severity::Error), m),
                (None, Some(m)) => (q, Some(Severity::Warning), m),
                (None, None) => (q, None, String::new()),
            }
        })
        .collect()
}

/// The lint's findings on one file alone, with the defaults and every suppression comment
/// disregarded (a comment tells the lint, not a schema validator, to be quiet).
fn lint_file(path: &str, text: &str) -> FileReport {
    let context = PluginContext {
        no_ignores: true,
        ..PluginContext::default()
    };
    let mut reports = lint(
        &[Input::from_text(path, text, true)],
        &context,
        &Config::default(),
    );
    reports.pop().expect("an explicit file is reported")
}

fn lint_verdicts(path: &str, text: &str) -> Verdicts {
    let report = lint_file(path, text);
    QUESTIONS
        .iter()
        .map(|&(q, id)| {
            let found = report.findings.iter().filter(|f| f.rule == id);
            let worst = found
                .clone()
                .map(|f| f.severity)
                .max_by_key(|s| *s == Severity::Error);
            let message = found
                .map(|f| f.message.clone())
                .collect::<Vec<_>>()
                .join("; ");
            (q, worst, message)
        })
        .collect()
}

/// The files whose YAML a schema validator cannot read as the lint does: unparsable ones, and
/// ones with a duplicate key (a validator keeps one of the two values).
fn outside_the_schema(path: &str, text: &str) -> bool {
    lint_file(path, text)
        .findings
        .iter()
        .any(|f| f.rule == "invalid-yaml" || f.rule == "duplicate-key")
}

/// The disagreements of one file, as lines for the failure message.
fn disagreements(path: &str, text: &str) -> Vec<String> {
    let Some(kind) = FileKind::from_path(path) else {
        return Vec::new();
    };
    if outside_the_schema(path, text) {
        return Vec::new();
    }
    let lint = lint_verdicts(path, text);
    let schema = schema_verdicts(kind, text, path);
    lint.iter()
        .zip(&schema)
        .filter(|(l, s)| l.1 != s.1 && !whole_number_written_as_float(l, s, kind))
        .map(|(l, s)| {
            format!(
                "{path}: {:?}: lint {:?} ({}), schema {:?} ({})\n{text}",
                l.0, l.1, l.2, s.1, s.2
            )
        })
        .collect()
}

/// The one difference by design: the lint refuses a whole number written as a YAML float
/// (`max_fires_per_hour: 1.0`), which draft 07 cannot tell from `1` once a loader has read it;
/// the schema says so in the key's description instead (docs/decisions/0011).
fn whole_number_written_as_float(
    lint: &(Question, Option<Severity>, String),
    schema: &(Question, Option<Severity>, String),
    kind: FileKind,
) -> bool {
    let written_as_float = |message: &str| {
        message.contains("max_fires_per_hour")
            && message
                .split('`')
                .nth(3)
                .and_then(|n| n.parse::<f64>().ok())
                .is_some_and(|n| n.fract() == 0.0 && n >= 1.0)
    };
    let described = json_schema(kind)
        .pointer("/properties/limits/properties/max_fires_per_hour/description")
        .and_then(Json::as_str)
        .is_some_and(|d| d.contains("`1.0`"));
    lint.0 == Question::WrongType
        && schema.1.is_none()
        && described
        && lint.2.split("; ").all(written_as_float)
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push(path);
        }
    }
}

/// Every plugin file of the repository: the corpus (ok, err and the sample plugin) and the
/// Examples and Use-insteads of every rule.
fn repository_files() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    yaml_files(Path::new("../corpus/plugins"), &mut paths);
    paths.sort();
    let mut files: Vec<(String, String)> = paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable");
            (p.to_string_lossy().into_owned(), text)
        })
        .collect();
    for rule in RULES {
        for file in example_files(rule.example)
            .into_iter()
            .chain(example_files(rule.use_instead))
        {
            files.push((file.path, file.text));
        }
    }
    files
}

#[test]
fn every_repository_file_gets_the_same_verdict_from_schema_and_lint() {
    let files = repository_files();
    assert!(files.len() >= 80, "only {} files", files.len());
    let wrong: Vec<String> = files
        .iter()
        .flat_map(|(path, text)| disagreements(path, text))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n---\n"));
}

struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// The places of a value: JSON pointers to every mapping, list and scalar under the root.
fn places(value: &Json, at: &str, out: &mut Vec<String>) {
    out.push(at.to_owned());
    match value {
        Json::Object(map) => {
            for (k, v) in map {
                places(v, &format!("{at}/{k}"), out);
            }
        }
        Json::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                places(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// A value of another type than `value`'s, picked by `pick`.
fn other_type(value: &Json, pick: usize) -> Json {
    let choices = [
        json!(7),
        json!(1.0),
        json!(2.5),
        json!(true),
        json!("text"),
        json!(["a"]),
        json!({"k": "v"}),
        Json::Null,
        json!(0),
    ];
    let mut i = pick % choices.len();
    while choices[i] == *value {
        i = (i + 1) % choices.len();
    }
    choices[i].clone()
}

/// One seeded mutation of a valid file's value; `true` when it added a merge key.
fn mutate(rng: &mut Lcg, root: &mut Json) -> bool {
    let mut all = Vec::new();
    places(root, "", &mut all);
    let maps: Vec<String> = all
        .iter()
        .filter(|p| root.pointer(p).is_some_and(Json::is_object))
        .cloned()
        .collect();
    let map_at = maps[rng.below(maps.len())].clone();
    match rng.below(6) {
        0 => {
            // Drop a key (a required one or not).
            let map = root.pointer_mut(&map_at).and_then(Json::as_object_mut);
            if let Some(map) = map
                && !map.is_empty()
            {
                let key = map
                    .keys()
                    .nth(rng.below(map.len()))
                    .cloned()
                    .unwrap_or_default();
                map.remove(&key);
            }
        }
        1 => {
            // Add an unknown key, or a misspelling of a known one.
            let map = root.pointer_mut(&map_at).and_then(Json::as_object_mut);
            if let Some(map) = map {
                let name = match map.keys().next() {
                    Some(k) if rng.below(2) == 0 => format!("{k}x"),
                    _ => "colour".to_owned(),
                };
                map.insert(name, json!("blue"));
            }
        }
        2 => {
            // Move a key under a merge key (`<<: {key: value}`, a YAML 1.1 merge).
            let map = root.pointer_mut(&map_at).and_then(Json::as_object_mut);
            if let Some(map) = map
                && let Some(key) = map.keys().next().cloned()
            {
                let value = map.remove(&key).unwrap_or(Json::Null);
                let mut merged = Map::new();
                merged.insert(key, value);
                map.insert("<<".to_owned(), Json::Object(merged));
                return true;
            }
        }
        _ => {
            // Swap a value for one of another type: floats and ints for strings, strings for
            // numbers, lists and mappings for scalars and back.
            if all.len() < 2 {
                return false;
            }
            let at = &all[1 + rng.below(all.len() - 1)];
            let pick = rng.below(9);
            if let Some(slot) = root.pointer_mut(at) {
                *slot = other_type(slot, pick);
            }
        }
    }
    false
}

/// The value written as YAML: JSON is YAML 1.2 flow style, where a string is a quoted scalar
/// and `1.0` is a float; a merge key is written plain, as YAML 1.1 reads it.
fn write_yaml(value: &Json, merge: bool) -> String {
    let text = serde_json::to_string_pretty(value).expect("serializes");
    if merge {
        text.replace("\"<<\":", "<<:")
    } else {
        text
    }
}

#[test]
fn generated_files_get_the_same_verdict_from_schema_and_lint() {
    let valid: Vec<(String, String)> = repository_files()
        .into_iter()
        .filter(|(path, text)| {
            FileKind::from_path(path).is_some()
                && lint_file(path, text)
                    .findings
                    .iter()
                    .all(|f| f.severity != Severity::Error && f.rule != "unknown-key")
        })
        .collect();
    assert!(valid.len() >= 20, "only {} valid files", valid.len());
    let mut rng = Lcg(34);
    let mut wrong = Vec::new();
    let mut seen = [0usize; 4];
    for round in 0..12 {
        for (path, text) in &valid {
            let doc = yaml::parse(&SourceFile::new(path.as_str(), text.as_str()));
            let Some(root) = doc.root.as_ref() else {
                continue;
            };
            let mut value = to_json(root);
            let mut merge = false;
            for _ in 0..=rng.below(2) {
                merge |= mutate(&mut rng, &mut value);
            }
            let text = write_yaml(&value, merge);
            for (q, verdict, _) in lint_verdicts(path, &text) {
                if verdict.is_some() {
                    seen[QUESTIONS.iter().position(|(x, _)| *x == q).unwrap_or(0)] += 1;
                }
            }
            wrong.extend(disagreements(path, &text));
            if round == 0 {
                wrong.extend(disagreements(path, ""));
                wrong.extend(disagreements(path, "# only a comment\n"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n---\n"));
    // Every question was asked of the lint, so that the agreement is not vacuous.
    assert!(seen.iter().all(|&n| n >= 10), "questions asked: {seen:?}");
}

#[test]
fn merge_keys_and_float_counts_get_the_same_verdict() {
    let cases = [
        (
            "flows/w.yaml",
            "name: w\ndefaults: &src\n  source: github-events\nsteps:\n  - id: a\n    wait_for_event:\n      <<: *src\n      types: [push]\n",
        ),
        (
            "routines/r.yaml",
            "name: r\nagent: a\nlimits:\n  max_fires_per_hour: 2.5\n",
        ),
        (
            "routines/r.yaml",
            "name: r\nagent: a\nlimits:\n  max_fires_per_hour: 1.0\n",
        ),
        (
            "routines/r.yaml",
            "name: r\nagent: a\ntriggers:\n  - name: t\n    event:\n      source: s\n      filter: 1\n",
        ),
        (
            "routines/r.yaml",
            "name: r\nagent: a\ntriggers:\n  - name: t\n    event:\n      source: s\n      sender: 12\n",
        ),
        (
            "flows/w.yaml",
            "name: w\nsteps:\n  - id: a\n    when: 1.5\n    approval: {details: x}\n",
        ),
    ];
    for (path, text) in cases {
        let lint = lint_verdicts(path, text);
        assert!(
            lint.iter().any(|(_, v, _)| *v == Some(Severity::Error)),
            "{path}: the lint accepts\n{text}"
        );
        let wrong = disagreements(path, text);
        assert!(wrong.is_empty(), "{}", wrong.join("\n---\n"));
    }
}
