//! `ozcheck lint`, `ozcheck rules` and `ozcheck schema` as a script or hook sees them: exit
//! codes, standard input with `--stdin-filename`, the configuration file, and the JSON outputs.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn ozcheck(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ozcheck runs");
    let mut pipe = child.stdin.take().expect("stdin");
    pipe.write_all(stdin.unwrap_or("").as_bytes())
        .expect("write stdin");
    drop(pipe);
    child.wait_with_output().expect("ozcheck ends")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn exit_codes_follow_the_contract() {
    let clean = ozcheck(&["lint", "corpus/plugins/ok"], None);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    let findings = ozcheck(&["lint", "corpus/plugins/err"], None);
    assert_eq!(findings.status.code(), Some(1));
    let missing = ozcheck(&["lint", "corpus/plugins/no-such-folder"], None);
    assert_eq!(missing.status.code(), Some(2));
    let bad_format = ozcheck(&["lint", "--format", "xml", "corpus/plugins/ok"], None);
    assert_eq!(bad_format.status.code(), Some(2));
}

#[test]
fn warnings_alone_exit_zero() {
    let text = "name: a\nruntime: acp\nmodle: x\n";
    let args = [
        "lint",
        "--format",
        "concise",
        "--stdin-filename",
        "agents/a.yaml",
    ];
    let out = ozcheck(&args, Some(text));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "agents/a.yaml:3:1: warning[unknown-key] unknown key `modle` in an agent file (help: did you mean `model`?)\n"
    );
}

#[test]
fn stdin_is_reported_under_its_filename_and_sees_the_plugin() {
    // The routine names an agent of the sample plugin, which is read from disk as context.
    let text = "name: r\nagent: pr-helpr\ntools: [oz.wait_for_event]\n";
    let name = "corpus/plugins/sample/routines/r.yaml";
    let out = ozcheck(
        &["lint", "--format", "json", "--stdin-filename", name, "-"],
        Some(text),
    );
    assert_eq!(out.status.code(), Some(1));
    let value: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(
        value["cost_model_version"],
        ozcheck_analyzer::cost::COST_MODEL_VERSION
    );
    let d = &value["diagnostics"][0];
    assert_eq!(d["code"], "unknown-agent");
    assert_eq!(d["file"], name);
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(2), Some(8))
    );
}

#[test]
fn config_file_sets_levels_and_bad_config_is_a_usage_error() {
    let dir = std::env::temp_dir().join(format!("ozcheck-lint-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let good = dir.join("ozcheck.toml");
    std::fs::write(
        &good,
        "[rules]\ncompound-timeout = \"off\"\nunknown-key = \"off\"\n",
    )
    .expect("write");
    let good = good.to_str().expect("utf-8");
    let out = ozcheck(&["lint", "--config", good, "corpus/plugins/sample"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[rules]\nno-such-rule = \"off\"\n").expect("write");
    let bad = bad.to_str().expect("utf-8");
    let out = ozcheck(&["lint", "--config", bad, "corpus/plugins/sample"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown rule `no-such-rule`"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sarif_and_github_formats_run() {
    let sarif = ozcheck(
        &["lint", "--format", "sarif", "corpus/plugins/sample"],
        None,
    );
    let value: serde_json::Value = serde_json::from_str(&stdout(&sarif)).expect("json");
    assert_eq!(value["version"], "2.1.0");
    let github = ozcheck(
        &["lint", "--format", "github", "corpus/plugins/sample"],
        None,
    );
    assert!(
        stdout(&github)
            .starts_with("::error file=corpus/plugins/sample/flows/ci-watch.yaml,line=11,"),
        "{}",
        stdout(&github)
    );
}

#[test]
fn rules_lists_and_documents() {
    let all = ozcheck(&["rules"], None);
    assert_eq!(all.status.code(), Some(0));
    assert!(
        stdout(&all)
            .lines()
            .any(|l| l.starts_with("compound-timeout "))
    );
    let one = ozcheck(&["rules", "compound-timeout"], None);
    assert!(stdout(&one).contains("### Why is this bad?"));
    let unknown = ozcheck(&["rules", "compund-timeout"], None);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("did you mean `compound-timeout`?"));
}

#[test]
fn schema_is_draft_07_per_kind() {
    for kind in ["agent", "flow", "routine"] {
        let out = ozcheck(&["schema", kind], None);
        assert_eq!(out.status.code(), Some(0));
        let value: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        assert_eq!(value["$schema"], "http://json-schema.org/draft-07/schema#");
        assert_eq!(value["type"], "object");
        assert!(
            value["required"]
                .as_array()
                .is_some_and(|r| r.contains(&"name".into()))
        );
    }
}
