//! The JSON Schema that `ozcheck schema` prints agrees with the lint: every `ok` file validates
//! against its kind's schema, and files with wrong types or missing keys do not. The validator is
//! a small one for the draft-07 keywords the schema uses (`type`, `properties`, `required`,
//! `items`, `enum`, `minimum`), written here so the test has no heavy dependency.

use std::path::Path;

use ozcheck_lint::schema::json_schema;
use ozcheck_lint::yaml::{self, Node, ScalarKind, Value};
use ozcheck_lint::{FileKind, SourceFile};
use serde_json::{Value as Json, json};

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

fn type_matches(ty: &str, value: &Json) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    }
}

fn validate(schema: &Json, value: &Json, path: &str, errors: &mut Vec<String>) {
    if let Some(ty) = schema.get("type") {
        let ok = match ty {
            Json::String(t) => type_matches(t, value),
            Json::Array(ts) => ts
                .iter()
                .any(|t| type_matches(t.as_str().unwrap_or(""), value)),
            _ => true,
        };
        if !ok {
            errors.push(format!("{path}: not {ty}"));
            return;
        }
    }
    if let Some(words) = schema.get("enum").and_then(Json::as_array)
        && !words.contains(value)
    {
        errors.push(format!("{path}: not one of {words:?}"));
    }
    if let Some(min) = schema.get("minimum").and_then(Json::as_i64)
        && value.as_i64().is_some_and(|n| n < min)
    {
        errors.push(format!("{path}: below {min}"));
    }
    if let (Some(props), Some(object)) = (schema.get("properties"), value.as_object()) {
        for (key, sub) in object {
            if let Some(prop) = props.get(key) {
                validate(prop, sub, &format!("{path}.{key}"), errors);
            }
        }
        for required in schema
            .get("required")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            if !object.contains_key(required.as_str().unwrap_or("")) {
                errors.push(format!("{path}: missing {required}"));
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, item) in array.iter().enumerate() {
            validate(items, item, &format!("{path}[{i}]"), errors);
        }
    }
}

fn errors_of(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("readable");
    let display = path.to_string_lossy().into_owned();
    let kind = FileKind::from_path(&display).expect("a kind folder");
    let doc = yaml::parse(&SourceFile::new(display, text));
    let value = to_json(doc.root.as_ref().expect("a root"));
    let mut errors = Vec::new();
    validate(&json_schema(kind), &value, "", &mut errors);
    errors
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

#[test]
fn ok_files_validate_against_their_schema() {
    let mut files = Vec::new();
    yaml_files(Path::new("../corpus/plugins/ok"), &mut files);
    assert!(files.len() >= 6);
    for file in files {
        let errors = errors_of(&file);
        assert!(errors.is_empty(), "{}: {errors:?}", file.display());
    }
}

#[test]
fn wrong_types_and_missing_keys_fail_the_schema() {
    let typed = errors_of(Path::new("../corpus/plugins/err/agents/typed-wrong.yaml"));
    assert_eq!(typed.len(), 3, "{typed:?}");
    let waits = errors_of(Path::new("../corpus/plugins/err/flows/waits.yaml"));
    assert!(
        waits.iter().any(|e| e.contains("missing \"source\"")),
        "{waits:?}"
    );
    let review = errors_of(Path::new("../corpus/plugins/err/routines/review.yaml"));
    assert!(review.iter().any(|e| e.contains("below 1")), "{review:?}");
}
