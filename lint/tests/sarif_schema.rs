//! The SARIF output validates against the SARIF 2.1.0 JSON schema with an independent
//! validator (the `jsonschema` crate, formats checked), for relative and absolute paths, odd
//! file names and fixes; and the validator refuses broken logs, so the test can fail.
//!
//! The schema file is OASIS's, published under its IPR policy rather than an open-source
//! licence, so it is not vendored here: the test reads the copy that the `serde-sarif` package
//! (a dev-dependency, MIT) carries in its published sources, wherever cargo unpacked it.

use std::path::PathBuf;

use ozcheck_lint::render::{Format, render};
use ozcheck_lint::{Config, FileReport, Input, PluginContext, lint};
use serde_json::Value;

/// The locked version of a package, from the workspace's Cargo.lock.
fn locked_version(name: &str) -> String {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock"))
        .expect("Cargo.lock");
    let entry = lock
        .split("[[package]]")
        .find(|p| p.contains(&format!("name = \"{name}\"\n")))
        .unwrap_or_else(|| panic!("{name} is not in Cargo.lock"));
    entry
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("a version")
        .to_owned()
}

/// The SARIF 2.1.0 schema shipped in serde-sarif's package sources.
fn sarif_schema() -> Value {
    let home = std::env::var_os("CARGO_HOME").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"),
        PathBuf::from,
    );
    let dir = format!("serde-sarif-{}", locked_version("serde-sarif"));
    let registries =
        std::fs::read_dir(home.join("registry/src")).expect("cargo's registry sources");
    let path = registries
        .filter_map(Result::ok)
        .map(|r| r.path().join(&dir).join("src/schema.json"))
        .find(|p| p.is_file())
        .expect("serde-sarif's schema.json in cargo's registry sources");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("read"))
        .expect("the schema is JSON");
    assert!(
        schema["$id"]
            .as_str()
            .is_some_and(|id| id.ends_with("sarif-schema-2.1.0.json")),
        "not the SARIF 2.1.0 schema: {}",
        schema["$id"]
    );
    schema
}

fn validator() -> jsonschema::Validator {
    let mut schema = sarif_schema();
    // The schema's `language` patterns have a stray `]` (a literal in ECMA-262 regexes, an error
    // in the validator's dialect, which checks the schema before using it). We emit no
    // `language`; the pattern is replaced by the one it means so that the schema compiles.
    let replaced = replace_pattern(
        &mut schema,
        "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$",
        "^[a-zA-Z]{2}(-[a-zA-Z]{2})?$",
    );
    assert!(
        replaced > 0,
        "the schema changed; look at this workaround again"
    );
    jsonschema::draft7::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles")
}

fn replace_pattern(value: &mut Value, from: &str, to: &str) -> usize {
    match value {
        Value::Object(map) => map
            .iter_mut()
            .map(|(k, v)| {
                if k == "pattern" && v == from {
                    *v = to.into();
                    1
                } else {
                    replace_pattern(v, from, to)
                }
            })
            .sum(),
        Value::Array(items) => items.iter_mut().map(|v| replace_pattern(v, from, to)).sum(),
        _ => 0,
    }
}

fn errors(validator: &jsonschema::Validator, log: &Value) -> Vec<String> {
    validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn sarif_of(files: &[Input]) -> Value {
    let reports: Vec<FileReport> = lint(files, &PluginContext::default(), &Config::default());
    assert!(reports.iter().any(|r| !r.findings.is_empty()));
    serde_json::from_str(&render(&reports, Format::Sarif, false)).expect("JSON")
}

const FLOW: &str = "name: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 1h30m\n      sinse: now\n      filter: event.atributes.x == 1\n";

#[test]
fn the_sample_and_err_plugins_give_valid_sarif() {
    let validator = validator();
    for dir in ["../corpus/plugins/sample", "../corpus/plugins/err"] {
        let (targets, context) =
            ozcheck_lint::discover::collect(&[dir.into()]).expect("corpus readable");
        let reports = lint(&targets, &context, &Config::default());
        let log: Value =
            serde_json::from_str(&render(&reports, Format::Sarif, false)).expect("JSON");
        assert_eq!(errors(&validator, &log), Vec::<String>::new(), "{dir}");
        assert!(
            !log["runs"][0]["results"]
                .as_array()
                .expect("results")
                .is_empty()
        );
    }
}

#[test]
fn absolute_and_odd_paths_give_valid_uris() {
    let validator = validator();
    for (path, uri, base) in [
        (
            "/home/a b/plugin/flows/watch.yaml",
            "file:///home/a%20b/plugin/flows/watch.yaml",
            false,
        ),
        (
            "C:\\plugins\\flows\\watch.yaml",
            "file:///C:/plugins/flows/watch.yaml",
            false,
        ),
        ("flows/watch.yaml", "flows/watch.yaml", true),
        (
            "a:b #1/flows/watch.yaml",
            "a%3Ab%20%231/flows/watch.yaml",
            true,
        ),
        ("../up/flows/watch.yaml", "../up/flows/watch.yaml", true),
    ] {
        let log = sarif_of(&[Input::from_text(path, FLOW, true)]);
        assert_eq!(errors(&validator, &log), Vec::<String>::new(), "{path}");
        let location =
            &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(location["uri"], uri, "{path}");
        assert_eq!(location.get("uriBaseId").is_some(), base, "{path}");
    }
}

#[test]
fn every_rule_has_a_help_uri_and_fixes_are_sarif_fixes() {
    let log = sarif_of(&[Input::from_text("flows/watch.yaml", FLOW, true)]);
    for rule in log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
    {
        let uri = rule["helpUri"].as_str().expect("helpUri");
        assert!(
            uri.ends_with(&format!(
                "docs/rules.md#{}",
                rule["id"].as_str().unwrap_or("")
            )),
            "{uri}"
        );
    }
    let results = log["runs"][0]["results"].as_array().expect("results");
    let fixed = results
        .iter()
        .find(|r| r["ruleId"] == "compound-timeout")
        .expect("compound-timeout");
    let replacement = &fixed["fixes"][0]["artifactChanges"][0]["replacements"][0];
    assert_eq!(replacement["insertedContent"]["text"], "90m");
    assert_eq!(replacement["deletedRegion"]["startColumn"], 16);
}

#[test]
fn the_validator_refuses_broken_logs() {
    let validator = validator();
    let good = sarif_of(&[Input::from_text("flows/watch.yaml", FLOW, true)]);
    let breakages: [fn(&mut Value); 5] = [
        |v| v["version"] = "2.0.0".into(),
        |v| v["runs"][0]["results"][0]["level"] = "fatal".into(),
        |v| {
            v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
                0.into();
        },
        |v| v["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = "docs/rules.md".into(),
        |v| {
            if let Some(result) = v["runs"][0]["results"][0].as_object_mut() {
                result.remove("message");
            }
        },
    ];
    for (i, breakage) in breakages.iter().enumerate() {
        let mut bad = good.clone();
        breakage(&mut bad);
        assert!(
            !errors(&validator, &bad).is_empty(),
            "breakage {i} passed the schema"
        );
    }
}
