//! `ozcheck wait-for` and the `wait_for` conformance scenarios as a user runs them: real
//! processes, real MCP over stdio.

use std::path::{Path, PathBuf};
use std::process::Command;

const OZCHECK: &str = env!("CARGO_BIN_EXE_ozcheck");

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(OZCHECK).args(args).output().expect("runs");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The scripted MCP server binary, built beside `ozcheck` by `cargo test --workspace`.
fn test_server() -> PathBuf {
    let dir = Path::new(OZCHECK).parent().expect("a directory");
    let server = dir.join(format!("ozcheck-test-mcp{}", std::env::consts::EXE_SUFFIX));
    assert!(
        server.exists(),
        "{} is missing: run `cargo test --workspace`, which builds it",
        server.display()
    );
    server
}

fn server_command(script: &str) -> String {
    format!(
        "{} --tool pods --script '{script}'",
        test_server().display()
    )
}

#[test]
fn wait_for_prints_the_result_and_exits_zero_when_the_condition_holds() {
    let server = server_command(r#"[{"calls":1,"text":"Pending"},{"text":"Running"}]"#);
    let (code, stdout, stderr) = run(&[
        "wait-for",
        "--server",
        &server,
        "--tool",
        "pods",
        "--args",
        r#"{"ns":"web"}"#,
        "--matches",
        "Running",
        "--poll-sec",
        "1",
        "--max-wait-sec",
        "20",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let result: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(result["reason"], "matched");
    assert_eq!(result["samples"], 2);
    assert_eq!(result["last_observation"], "Running");
    assert_eq!(result["effective_max_wait_sec"], 20);
}

#[test]
fn invalid_calls_exit_two_with_the_error_code() {
    let server = server_command(r#"[{"text":"Running"}]"#);
    let (code, stdout, _) = run(&[
        "wait-for",
        "--server",
        &server,
        "--tool",
        "pods",
        "--matches",
        "Running",
        "--poll-sec",
        "5",
        "--max-wait-sec",
        "5",
    ]);
    assert_eq!(code, 2);
    let out: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(out["error"]["code"], "poll-not-below-max-wait");
    assert_eq!(out["error"]["kind"], "invalid_args");
}

#[test]
fn a_server_that_cannot_start_is_a_usage_error() {
    let (code, _, stderr) = run(&[
        "wait-for",
        "--server",
        "ozcheck-no-such-mcp-server",
        "--tool",
        "pods",
        "--matches",
        "x",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot start"), "{stderr}");
}

#[test]
fn wait_for_scenarios_pass_through_the_adapter() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/conformance/wait_for");
    let files = std::fs::read_dir(&dir).expect("scenario directory").count();
    let adapter = format!("{OZCHECK} conformance-adapter");
    let dir = dir.to_str().expect("a UTF-8 path");
    let (code, stdout, stderr) = run(&["conformance", "--adapter", &adapter, dir]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        stdout.lines().last(),
        Some(format!("{files} passed, 0 failed").as_str())
    );
}
