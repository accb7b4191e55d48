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
fn a_server_that_cannot_start_is_a_failure_in_the_same_json() {
    let (code, stdout, _) = run(&[
        "wait-for",
        "--server",
        "ozcheck-no-such-mcp-server",
        "--tool",
        "pods",
        "--matches",
        "x",
    ]);
    assert_eq!(code, 3);
    let out: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(out["error"]["code"], "mcp-spawn");
    assert_eq!(out["error"]["kind"], "runtime");
    assert!(
        out["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cannot start")),
        "{stdout}"
    );
}

/// Runs `ozcheck` and kills it if it has not ended after a generous minute, so a hang fails
/// the test instead of stalling the suite (a liveness guard, not a timing assertion).
fn run_guarded(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(OZCHECK)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    for _ in 0..600 {
        if child.try_wait().expect("status").is_some() {
            let out = child.wait_with_output().expect("output");
            return (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    (None, String::new())
}

#[test]
fn a_server_that_never_answers_the_handshake_times_out_at_the_bound() {
    let (code, stdout) = run_guarded(&[
        "wait-for",
        "--server",
        "sleep 3600",
        "--tool",
        "t",
        "--matches",
        "x",
        "--max-wait-sec",
        "3",
    ]);
    assert_eq!(
        code,
        Some(1),
        "ended by itself with the timeout code: {stdout}"
    );
    let result: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(result["reason"], "timeout");
    assert_eq!(result["samples"], 0);
    assert_eq!(result["effective_max_wait_sec"], 3);
    assert_eq!(result["last_observation"], serde_json::Value::Null);
}

#[test]
fn an_error_result_is_shown_but_never_matches() {
    let server = server_command(r#"[{"text":"error: no Running pods","is_error":true}]"#);
    let (code, stdout, stderr) = run(&[
        "wait-for",
        "--server",
        &server,
        "--tool",
        "pods",
        "--matches",
        "Running",
        "--poll-sec",
        "1",
        "--max-wait-sec",
        "2",
    ]);
    assert_eq!(code, 1, "{stderr}");
    let result: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(result["reason"], "timeout");
    assert_eq!(result["samples"], 2);
    assert_eq!(result["last_observation"], "error: no Running pods");
    assert_eq!(result["last_is_error"], true);
}

#[test]
fn an_unknown_tool_lists_the_tools_the_server_has() {
    let server = server_command(r#"[{"text":"x"}]"#);
    let (code, stdout, _) = run(&[
        "wait-for",
        "--server",
        &server,
        "--tool",
        "pod",
        "--matches",
        "x",
    ]);
    assert_eq!(code, 2);
    let out: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(out["error"]["code"], "unknown-probe-tool");
    assert!(
        out["error"]["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("it offers: pods")),
        "{stdout}"
    );
}

#[test]
fn usage_errors_are_json_too() {
    let (code, stdout, _) = run(&[
        "wait-for",
        "--server",
        "x",
        "--tool",
        "t",
        "--args",
        "[",
        "--matches",
        "x",
    ]);
    assert_eq!(code, 2);
    let out: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(out["error"]["kind"], "invalid_args");
    assert_eq!(out["error"]["code"], "usage");
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
