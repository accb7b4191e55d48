//! The JSON Schemas that `ozcheck schema` prints (and docs/schema/*.json holds) agree with the
//! lint, checked with an independent JSON Schema implementation (the `jsonschema` crate, draft
//! 07, formats on): every `ok` plugin file validates; every rule the schema can express refuses
//! its rule's Example and accepts its Use-instead; every `err` fixture that declares such a rule
//! fails. Unknown keys are accepted with a warning-level annotation, as the lint warns of them.

use std::path::Path;

use ozcheck_lint::docs::example_files;
use ozcheck_lint::rules::RULES;
use ozcheck_lint::schema::json_schema;
use ozcheck_lint::yaml::{self, Node, ScalarKind, Value};
use ozcheck_lint::{FileKind, SourceFile};
use serde_json::{Value as Json, json};

/// The rules a JSON Schema can express; the others need CEL, other files or arithmetic.
/// `unknown-key` is not among them: the lint warns and the schema accepts the key with a
/// warning-level annotation (`lint/tests/schema_verdicts.rs` checks that verdict).
const CATCHABLE: &[&str] = &[
    "merge-key",
    "wrong-type",
    "missing-key",
    "compound-timeout",
    "fractional-timeout",
    "invalid-timeout",
    "invalid-since",
    "empty-wait-argument",
    "invalid-name",
    "step-action-count",
    "allow-senders-without-sender",
    "wait-tool-unsupported-runtime",
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

/// The schema's complaints about a file, or `None` when the file has no kind or no root.
fn errors_of(path: &str, text: &str) -> Option<Vec<String>> {
    let kind = FileKind::from_path(path)?;
    let doc = yaml::parse(&SourceFile::new(path, text));
    let value = to_json(doc.root.as_ref()?);
    let validator = jsonschema::draft7::options()
        .should_validate_formats(true)
        .build(&json_schema(kind))
        .expect("the schema compiles");
    Some(
        validator
            .iter_errors(&value)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect(),
    )
}

fn yaml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push(path);
        }
    }
}

fn corpus_files(dir: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    yaml_files(Path::new(dir), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable");
            (p.to_string_lossy().into_owned(), text)
        })
        .collect()
}

#[test]
fn ok_files_validate_against_their_schema() {
    let files = corpus_files("../corpus/plugins/ok");
    assert!(files.len() >= 6);
    for (path, text) in files {
        let errors = errors_of(&path, &text).expect("a plugin file");
        assert!(errors.is_empty(), "{path}: {errors:?}");
    }
}

#[test]
fn each_catchable_rule_is_refused_by_the_schema_and_its_fix_accepted() {
    for rule in RULES {
        let catchable = CATCHABLE.contains(&rule.id);
        for file in example_files(rule.use_instead) {
            if let Some(errors) = errors_of(&file.path, &file.text) {
                assert!(
                    errors.is_empty(),
                    "{}: Use instead {}: {errors:?}",
                    rule.id,
                    file.path
                );
            }
        }
        if !catchable {
            continue;
        }
        let refused = example_files(rule.example)
            .iter()
            .filter_map(|file| errors_of(&file.path, &file.text))
            .any(|errors| !errors.is_empty());
        assert!(refused, "the schema accepts the Example of `{}`", rule.id);
    }
}

#[test]
fn err_fixtures_with_a_catchable_rule_fail_the_schema() {
    let mut checked = 0;
    for (path, text) in corpus_files("../corpus/plugins/err") {
        let declared = text.lines().next().unwrap_or("");
        if !CATCHABLE
            .iter()
            .any(|id| declared.contains(&format!("{id}@")))
        {
            continue;
        }
        let Some(errors) = errors_of(&path, &text) else {
            continue;
        };
        assert!(!errors.is_empty(), "{path} passes the schema");
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} err fixtures checked");
}

#[test]
fn the_schema_refuses_timeouts_words_and_names_the_lint_refuses() {
    let wait = |extra: &str| {
        format!("name: w\nsteps:\n  - id: a\n    wait_for_event:\n      source: s\n{extra}")
    };
    for (extra, ok) in [
        ("      timeout: 90m\n", true),
        ("      timeout: 1500ms\n", true),
        ("      timeout: 1h30m\n", false),
        ("      timeout: 1.5h\n", false),
        ("      timeout: 0s\n", false),
        ("      timeout: 5\n", false),
        ("      timeout: 5 m\n", false),
        ("      since: job\n", true),
        ("      since: Now\n", false),
        ("      types: ['']\n", false),
        ("      subject: ''\n", false),
        // An unknown key is accepted, with the editor warning of `additionalProperties`.
        ("      sourse: s\n", true),
    ] {
        let errors = errors_of("flows/w.yaml", &wait(extra)).expect("a flow");
        assert_eq!(errors.is_empty(), ok, "{extra}: {errors:?}");
    }
    let bad_name = "name: W.x\nsteps: []\n";
    assert!(
        !errors_of("flows/w.yaml", bad_name)
            .expect("a flow")
            .is_empty()
    );
}

#[test]
fn the_schema_marks_unknown_keys_with_a_warning_an_editor_shows() {
    for kind in [FileKind::Agent, FileKind::Flow, FileKind::Routine] {
        let schema = json_schema(kind);
        let extra = &schema["additionalProperties"];
        assert!(
            extra["deprecationMessage"]
                .as_str()
                .is_some_and(|m| m.contains("unknown-key")),
            "{schema}"
        );
        assert_eq!(extra["doNotSuggest"], json!(true));
        assert_eq!(schema["properties"]["<<"]["not"], json!({}));
    }
}
