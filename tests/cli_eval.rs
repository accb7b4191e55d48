//! `ozcheck eval` and `ozcheck cel-spec` as scripts see them: exit codes and JSON fields.

use std::path::PathBuf;
use std::process::{Command, Output};

fn ozcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn event(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/events")
        .join(name)
        .display()
        .to_string()
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON object")
}

#[test]
fn evaluates_a_filter_and_reports_cost() {
    let out = ozcheck(&[
        "eval",
        "event.attributes.labels.exists(l, l == 'urgent')",
        "--event",
        &event("realistic.json"),
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = json(&out);
    assert_eq!(result["value"], serde_json::Value::Bool(true));
    assert!(result["cost"].as_u64().expect("cost") > 0);
    assert!(result["elapsed_us"].is_u64());
    assert!(result.get("estimate").is_some());
}

#[test]
fn cost_limit_and_deadline_stop_with_exit_1() {
    let nested = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
    let out = ozcheck(&[
        "eval",
        nested,
        "--event",
        &event("adv_int8k.json"),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["error"]["kind"], "cost-limit");
    let out = ozcheck(&[
        "eval",
        nested,
        "--event",
        &event("adv_int8k.json"),
        "--limit",
        "0",
        "--deadline-ms",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["error"]["kind"], "deadline");
}

#[test]
fn runtime_errors_exit_1_and_usage_errors_exit_2() {
    let out = ozcheck(&[
        "eval",
        "1 / 0 == 1",
        "--event",
        &event("realistic.json"),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["error"]["kind"], "runtime");
    let out = ozcheck(&["eval", "true", "--event", "no-such-file.json"]);
    assert_eq!(out.status.code(), Some(2));
    let out = ozcheck(&[
        "eval",
        "event.text.matches('(')",
        "--event",
        &event("realistic.json"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid-regex"));
}

#[test]
fn cel_spec_prints_a_summary_last() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/cel-spec");
    let out = ozcheck(&["cel-spec", &dir.join("logic.jsonl").display().to_string()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().expect("a summary");
    assert!(last.ends_with("0 failed, 0 skipped"), "{last}");
    assert_eq!(out.status.code(), Some(0));
}
