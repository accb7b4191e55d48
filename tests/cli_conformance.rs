//! `ozcheck conformance` as a user runs it: the whole suite in process and through the reference
//! runtime's own adapter, both with and without a crash-restart between every two steps; and the
//! runner's own behaviour on failing, unknown and malformed scenarios.

use std::path::Path;
use std::process::Command;

mod scenarios;
use scenarios::scenario_count;

fn ozcheck(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn last_line(stdout: &str) -> &str {
    stdout.lines().last().unwrap_or("")
}

fn adapter() -> String {
    format!("{} conformance-adapter", env!("CARGO_BIN_EXE_ozcheck"))
}

#[test]
fn the_suite_passes_in_process() {
    let n = scenario_count();
    assert!(n >= 40, "only {n} scenarios");
    let (code, out) = ozcheck(&["conformance", "corpus/conformance"]);
    assert_eq!(last_line(&out), format!("{n} passed, 0 failed"), "{out}");
    assert_eq!(code, 0);
}

#[test]
fn the_suite_passes_in_process_with_a_restart_between_every_step() {
    let n = scenario_count();
    let (code, out) = ozcheck(&["conformance", "--restart-every-step", "corpus/conformance"]);
    assert_eq!(last_line(&out), format!("{n} passed, 0 failed"), "{out}");
    assert_eq!(code, 0);
}

#[test]
fn the_suite_passes_through_the_adapter_in_both_modes() {
    let n = scenario_count();
    let adapter = adapter();
    let (code, out) = ozcheck(&["conformance", "--adapter", &adapter, "corpus/conformance"]);
    assert_eq!(last_line(&out), format!("{n} passed, 0 failed"), "{out}");
    assert_eq!(code, 0);
    let (code, out) = ozcheck(&[
        "conformance",
        "--adapter",
        &adapter,
        "--restart-every-step",
        "corpus/conformance",
    ]);
    assert_eq!(last_line(&out), format!("{n} passed, 0 failed"), "{out}");
    assert_eq!(code, 0);
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

const SETUP: &str = "setup:\n  sources:\n    - {name: ci, kind: json}\n";

#[test]
fn a_wrong_expectation_fails_with_the_path_of_the_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "wrong.yaml",
        &format!(
            "id: t/wrong\n{SETUP}steps:\n  - start_job: {{job: j}}\n  - wait_for_event: {{job: j, wait: w, source: ci}}\n    expect: {{state: matched}}\n"
        ),
    );
    for extra in [None, Some(adapter())] {
        let mut args = vec!["conformance".to_owned(), file.clone()];
        if let Some(a) = extra {
            args.extend(["--adapter".to_owned(), a]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out) = ozcheck(&args);
        assert_eq!(code, 1);
        assert!(
            out.contains("FAIL t/wrong")
                && out.contains(
                    "step 2 (wait_for_event): result.state: expected \"matched\", got \"open\""
                ),
            "{out}"
        );
        assert_eq!(last_line(&out), "0 passed, 1 failed");
    }
}

#[test]
fn an_unknown_step_kind_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "unknown.yaml",
        &format!("id: t/unknown\n{SETUP}steps:\n  - teleport: {{to: mars}}\n"),
    );
    let (code, out) = ozcheck(&["conformance", &file]);
    assert_eq!(code, 1);
    assert!(
        out.contains(
            "step 1 (teleport): the implementation does not support the operation `teleport`"
        ),
        "{out}"
    );
}

#[test]
fn an_expected_error_that_does_not_come_fails() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "noerror.yaml",
        &format!(
            "id: t/noerror\n{SETUP}steps:\n  - start_job: {{job: j}}\n    expect_error: {{kind: invalid_args}}\n"
        ),
    );
    let (code, out) = ozcheck(&["conformance", &file]);
    assert_eq!(code, 1);
    assert!(out.contains("expected an error, got success"), "{out}");
}

#[test]
fn malformed_scenarios_fail_and_missing_paths_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.yaml",
        "id: t/two-kinds\nsteps:\n  - {start_job: {job: j}, poll: {wait: w}}\n",
    );
    write(dir.path(), "b.yaml", "steps: [}\n");
    let (code, out) = ozcheck(&["conformance", &dir.path().to_string_lossy()]);
    assert_eq!(code, 1);
    assert!(out.contains("exactly one kind key"), "{out}");
    assert!(out.contains("not valid YAML"), "{out}");
    assert_eq!(last_line(&out), "0 passed, 2 failed");
    let (code, _) = ozcheck(&["conformance", "no/such/dir"]);
    assert_eq!(code, 2);
}

#[test]
fn an_adapter_that_speaks_another_protocol_version_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(
        dir.path(),
        "s.yaml",
        "id: t/one\nsetup: {clock: 2026-01-01T00:00:00Z}\nsteps:\n  - start_job: {job: j}\n",
    );
    // An adapter that answers every request as an adapter of version 2 would answer `hello`.
    let script = dir.path().join("adapter.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nn=0\nwhile read -r line; do n=$((n+1)); \
         echo \"{\\\"seq\\\": $n, \\\"ok\\\": true, \\\"result\\\": \
         {\\\"protocol\\\": \\\"ozcheck-conformance/2\\\"}}\"; done\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, out) = ozcheck(&[
        "conformance",
        "--adapter",
        &script.to_string_lossy(),
        &scenario,
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("speaks the protocol \"ozcheck-conformance/2\", not ozcheck-conformance/1"),
        "{out}"
    );
}
