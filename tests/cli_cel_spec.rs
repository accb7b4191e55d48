//! `ozcheck cel-spec` as scripts see it: one line per failure, the summary last, the exit code.

use std::path::PathBuf;
use std::process::Command;

fn cel_spec(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .arg("cel-spec")
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn corpus(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/cel-spec")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn a_clean_file_prints_only_the_summary_and_exits_0() {
    let (code, stdout) = cel_spec(&[&corpus("logic.jsonl")]);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.trim_end().ends_with("0 failed, 0 skipped"),
        "{stdout}"
    );
    assert_eq!(code, Some(0));
}

#[test]
fn failures_are_listed_before_the_summary_and_exit_1() {
    let dir = std::env::temp_dir().join(format!("ozcheck-cel-spec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("wrong.jsonl");
    let record = serde_json::json!({"id": "t/wrong/one", "expr": "1 + 1", "type_env": {},
        "bindings": {}, "disable_check": false, "check_only": false,
        "expected": {"value": {"int": "3"}}, "skip_reason": null});
    let skipped =
        serde_json::json!({"id": "t/skip/one", "expr": "x", "skip_reason": "protobuf messages"});
    std::fs::write(&file, format!("{record}\n{skipped}\n")).unwrap();
    let (code, stdout) = cel_spec(&[file.to_str().unwrap()]);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[0].starts_with("FAIL t/wrong/one"), "{stdout}");
    assert_eq!(lines[1], "0 passed, 1 failed, 1 skipped");
    assert_eq!(code, Some(1));
    // Parse-only mode only parses, so the wrong expectation does not matter there.
    let (code, stdout) = cel_spec(&["--parse-only", file.to_str().unwrap()]);
    assert_eq!(stdout.trim_end(), "1 passed, 0 failed, 1 skipped");
    assert_eq!(code, Some(0));
    std::fs::remove_dir_all(dir).unwrap();
}

/// The acceptance of the extension libraries: the files they brought into scope pass in full,
/// and every record left out is listed with its reason, which is always a protobuf message.
#[test]
fn the_extension_files_pass_and_list_their_skips() {
    let files = ["string_ext.jsonl", "optionals.jsonl", "macros2.jsonl"].map(corpus);
    let mut args = vec!["--skipped"];
    args.extend(files.iter().map(String::as_str));
    let (code, stdout) = cel_spec(&args);
    assert_eq!(code, Some(0), "{stdout}");
    let summary = stdout.lines().last().expect("a summary");
    assert!(summary.contains(" 0 failed, "), "{summary}");
    let skips: Vec<&str> = stdout.lines().filter(|l| l.starts_with("SKIP ")).collect();
    let skipped: usize = summary
        .rsplit(", ")
        .next()
        .and_then(|s| s.strip_suffix(" skipped"))
        .and_then(|n| n.parse().ok())
        .expect("a count of skipped records");
    assert_eq!(skips.len(), skipped, "{stdout}");
    for skip in skips {
        assert!(skip.ends_with("protobuf messages"), "{skip}");
    }
    let passed: usize = summary
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(passed > 250, "{summary}");
}
