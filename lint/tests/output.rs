//! Output formats through the public renderer: the JSON contract of DESIGN.md, SARIF 2.1.0
//! (checked against the structure the SARIF 2.1.0 schema requires), GitHub workflow commands with
//! their escaping, and the concise line format.
//!
//! The SARIF schema file itself is not vendored: it is published under the OASIS IPR policy
//! (RF on RAND terms), not an open-source license that plainly allows redistribution. So the
//! check below is hand-written from the schema's required properties, enumerations and closed
//! property sets for every object we emit.

use std::collections::HashSet;

use ozcheck_lint::render::{Format, render};
use ozcheck_lint::rules::RULES;
use ozcheck_lint::{Config, FileReport, Input, PluginContext, lint};
use serde_json::Value;

const FLOW: &str = "name: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 1h30m\n      timout: 5m\n";

fn reports() -> Vec<FileReport> {
    let files = [Input::from_text("flows/watch.yaml", FLOW, true)];
    lint(&files, &PluginContext::default(), &Config::default())
}

#[test]
fn json_follows_the_contract() {
    let text = render(&reports(), Format::Json, false);
    let value: Value = serde_json::from_str(&text).expect("valid JSON");
    let diagnostics = value["diagnostics"].as_array().expect("diagnostics array");
    assert_eq!(diagnostics.len(), 2);
    let first = &diagnostics[0];
    let keys: HashSet<&str> = first
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    let contract: HashSet<&str> = [
        "code",
        "severity",
        "message",
        "help",
        "fix",
        "file",
        "line",
        "column",
        "end_line",
        "end_column",
    ]
    .into_iter()
    .collect();
    assert_eq!(keys, contract);
    assert_eq!(first["code"], "compound-timeout");
    assert_eq!(first["severity"], "error");
    assert_eq!(first["file"], "flows/watch.yaml");
    assert_eq!(
        (first["line"].as_u64(), first["column"].as_u64()),
        (Some(6), Some(16))
    );
    assert_eq!(
        (first["end_line"].as_u64(), first["end_column"].as_u64()),
        (Some(6), Some(21))
    );
    assert_eq!(first["help"], "write 90m");
    assert_eq!(first["fix"]["message"], "write 90m");
    assert_eq!(
        first["fix"]["edits"][0],
        serde_json::json!({"content": "90m", "line": 6, "column": 16, "end_line": 6, "end_column": 21})
    );
    assert_eq!(diagnostics[1]["code"], "unknown-key");
    // `timeout` is in the mapping already: no rename is offered.
    assert!(diagnostics[1]["fix"].is_null());
    assert_eq!(diagnostics[1]["severity"], "warning");
}

#[test]
fn concise_is_one_line_per_finding() {
    let text = render(&reports(), Format::Concise, false);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "flows/watch.yaml:6:16: error[compound-timeout] timeout `1h30m` combines several units; a timeout is a whole number and one unit (help: write 90m)",
            "flows/watch.yaml:7:7: warning[unknown-key] unknown key `timout` in `steps[].wait_for_event` (help: did you mean `timeout`?)",
        ]
    );
}

#[test]
fn full_has_code_snippet_label_and_help() {
    let text = render(&reports(), Format::Full, false);
    assert!(text.contains("compound-timeout"), "{text}");
    assert!(text.contains("[flows/watch.yaml:6:16]"), "{text}");
    assert!(text.contains("timeout: 1h30m"), "{text}");
    assert!(text.contains("help: write 90m"), "{text}");
    assert!(text.contains("did you mean `timeout`?"), "{text}");
    assert!(text.ends_with("1 error, 1 warning in 1 file\n"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "no colour codes when colour is off"
    );
}

#[test]
fn github_commands_are_escaped() {
    let files = [Input::from_text(
        "flows/a,b:c%.yaml",
        "name: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 1h30m\n",
        true,
    )];
    // The file name is odd on purpose; that it differs from the flow's name is not the point.
    let config = Config::parse("[rules]\nname-mismatch = \"off\"\n").expect("valid");
    let text = render(
        &lint(&files, &PluginContext::default(), &config),
        Format::Github,
        false,
    );
    let line = text.lines().next().expect("one command");
    assert!(
        line.starts_with("::error file=flows/a%2Cb%3Ac%25.yaml,line=6,endLine=6,col=16,endColumn=21,title=compound-timeout::"),
        "{line}"
    );
    // The help goes on a second line of the message, escaped, so the command stays one line.
    assert!(line.ends_with("one unit%0Ahelp: write 90m"), "{line}");
    assert_eq!(text.lines().count(), 1);
}

fn object<'a>(
    value: &'a Value,
    what: &str,
    allowed: &[&str],
) -> &'a serde_json::Map<String, Value> {
    let map = value
        .as_object()
        .unwrap_or_else(|| panic!("{what} is not an object"));
    for key in map.keys() {
        assert!(
            allowed.contains(&key.as_str()),
            "{what} has a property SARIF does not define: {key}"
        );
    }
    map
}

fn text_message(value: &Value, what: &str) {
    let map = object(value, what, &["text", "markdown", "id", "arguments"]);
    assert!(map.get("text").is_some_and(Value::is_string), "{what}.text");
}

fn positive(value: &Value, what: &str) -> u64 {
    let n = value
        .as_u64()
        .unwrap_or_else(|| panic!("{what} is not an integer"));
    assert!(n >= 1, "{what} must be at least 1");
    n
}

/// The SARIF 2.1.0 schema's requirements for the objects we emit.
fn check_sarif(log: &Value) {
    let top = object(
        log,
        "sarifLog",
        &[
            "$schema",
            "version",
            "runs",
            "inlineExternalProperties",
            "properties",
        ],
    );
    assert_eq!(top["version"], "2.1.0");
    let runs = top["runs"].as_array().expect("runs is an array");
    for run in runs {
        let run = object(
            run,
            "run",
            &[
                "tool",
                "results",
                "columnKind",
                "originalUriBaseIds",
                "artifacts",
                "invocations",
                "properties",
            ],
        );
        if let Some(kind) = run.get("columnKind") {
            assert!(["utf16CodeUnits", "unicodeCodePoints"].contains(&kind.as_str().unwrap_or("")));
        }
        let tool = object(
            &run["tool"],
            "tool",
            &["driver", "extensions", "properties"],
        );
        let driver = object(
            &tool["driver"],
            "driver",
            &[
                "name",
                "version",
                "informationUri",
                "rules",
                "semanticVersion",
                "fullName",
                "properties",
            ],
        );
        assert!(driver["name"].is_string(), "driver.name is required");
        let rules = driver["rules"].as_array().expect("rules");
        let mut ids = HashSet::new();
        for rule in rules {
            let rule = object(
                rule,
                "reportingDescriptor",
                &[
                    "id",
                    "name",
                    "shortDescription",
                    "fullDescription",
                    "help",
                    "helpUri",
                    "defaultConfiguration",
                    "properties",
                ],
            );
            let id = rule["id"].as_str().expect("rule id is required");
            assert!(ids.insert(id), "rule ids are unique");
            for key in ["shortDescription", "fullDescription", "help"] {
                if let Some(m) = rule.get(key) {
                    text_message(m, key);
                }
            }
            if let Some(config) = rule.get("defaultConfiguration") {
                let config = object(
                    config,
                    "reportingConfiguration",
                    &["level", "enabled", "rank", "parameters"],
                );
                assert!(
                    ["none", "note", "warning", "error"]
                        .contains(&config["level"].as_str().unwrap_or(""))
                );
            }
        }
        for result in run["results"].as_array().expect("results") {
            let result = object(
                result,
                "result",
                &[
                    "ruleId",
                    "ruleIndex",
                    "level",
                    "message",
                    "locations",
                    "partialFingerprints",
                    "fixes",
                    "properties",
                ],
            );
            text_message(&result["message"], "result.message");
            assert!(
                ["none", "note", "warning", "error"]
                    .contains(&result["level"].as_str().unwrap_or(""))
            );
            let index = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
            assert_eq!(
                rules[index]["id"], result["ruleId"],
                "ruleIndex points at ruleId"
            );
            for location in result["locations"].as_array().expect("locations") {
                let location = object(
                    location,
                    "location",
                    &["physicalLocation", "id", "message", "properties"],
                );
                let physical = object(
                    &location["physicalLocation"],
                    "physicalLocation",
                    &[
                        "artifactLocation",
                        "region",
                        "contextRegion",
                        "address",
                        "properties",
                    ],
                );
                let artifact = object(
                    &physical["artifactLocation"],
                    "artifactLocation",
                    &["uri", "uriBaseId", "index", "description", "properties"],
                );
                let uri = artifact["uri"].as_str().expect("uri");
                assert!(!uri.is_empty() && !uri.contains('\\'), "a URI: {uri}");
                // A base id goes with a relative reference only (SARIF1004).
                assert_eq!(
                    artifact.contains_key("uriBaseId"),
                    !uri.starts_with("file:"),
                    "{uri}"
                );
                let region = object(
                    &physical["region"],
                    "region",
                    &[
                        "startLine",
                        "startColumn",
                        "endLine",
                        "endColumn",
                        "charOffset",
                        "charLength",
                        "snippet",
                        "message",
                        "properties",
                    ],
                );
                let start_line = positive(&region["startLine"], "startLine");
                let start_column = positive(&region["startColumn"], "startColumn");
                let end_line = positive(&region["endLine"], "endLine");
                let end_column = positive(&region["endColumn"], "endColumn");
                assert!(end_line >= start_line);
                assert!(end_line > start_line || end_column >= start_column);
            }
        }
    }
}

#[test]
fn sarif_has_the_required_structure_and_rule_metadata() {
    let text = render(&reports(), Format::Sarif, false);
    let log: Value = serde_json::from_str(&text).expect("valid JSON");
    check_sarif(&log);
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules");
    assert_eq!(rules.len(), RULES.len());
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["ruleId"], "compound-timeout");
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        6
    );
}

#[test]
fn sarif_deserializes_into_the_types_generated_from_the_sarif_2_1_0_schema() {
    // serde-sarif's types are generated from the OASIS SARIF 2.1.0 JSON schema (required
    // properties are non-optional fields, enumerations are enums), so a log that deserializes
    // into them has the schema's shape; the hand-written checker above adds what the types allow
    // too loosely (positive positions, rule metadata).
    let text = render(&reports(), Format::Sarif, false);
    let log: serde_sarif::sarif::Sarif =
        serde_json::from_str(&text).expect("the SARIF log matches the 2.1.0 schema's types");
    assert_eq!(serde_json::to_value(&log.version).unwrap(), "2.1.0");
    assert_eq!(log.runs.len(), 1);
    let broken = text.replace("\"version\"", "\"versio\"");
    assert!(serde_json::from_str::<serde_sarif::sarif::Sarif>(&broken).is_err());
}

#[test]
fn the_sarif_checker_catches_what_it_checks() {
    // The hand-written checker must refuse broken logs, or the test above proves nothing.
    let good: Value =
        serde_json::from_str(&render(&reports(), Format::Sarif, false)).expect("json");
    let breakages: [fn(&mut Value); 5] = [
        |v| v["version"] = "2.0.0".into(),
        |v| v["runs"][0]["results"][0]["ruleIndex"] = 1.into(),
        |v| v["runs"][0]["results"][0]["level"] = "fatal".into(),
        |v| {
            v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
                0.into();
        },
        |v| v["runs"][0]["tool"]["driver"]["extra"] = true.into(),
    ];
    for breakage in breakages {
        let mut bad = good.clone();
        breakage(&mut bad);
        assert!(std::panic::catch_unwind(|| check_sarif(&bad)).is_err());
    }
}

/// Counts in text for people carry thousands separators (`1,200 warnings`), in the summary of
/// `full` and in the `--statistics` table; JSON carries raw digits (docs/cli.md, "Numbers").
#[test]
fn counts_are_grouped_in_text_and_raw_in_json() {
    use std::fmt::Write as _;

    use ozcheck_lint::render::{statistics, summary};
    let mut text = String::from("name: many\n");
    for i in 0..1200 {
        let _ = writeln!(text, "zz{i:04}: x");
    }
    let files = [Input::from_text("flows/many.yaml", text, true)];
    let reports = lint(&files, &PluginContext::default(), &Config::default());
    assert_eq!(summary(&reports), "0 errors, 1,200 warnings in 1 file\n");
    let full = render(&reports, Format::Full, false);
    assert!(
        full.ends_with("0 errors, 1,200 warnings in 1 file\n"),
        "{full}"
    );
    let table = statistics(&reports, false);
    assert!(table.starts_with("1,200  unknown-key"), "{table}");
    assert!(table.contains("Found 1,200 findings (0 fixable"), "{table}");
    let rows: Value = serde_json::from_str(&statistics(&reports, true)).expect("JSON");
    assert_eq!(rows[0]["count"], 1200);
    let json = render(&reports, Format::Json, false);
    assert!(!json.contains("1,200"), "JSON counts are raw digits");
}
