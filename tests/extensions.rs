//! The extensions an environment enables, set in `ozcheck.toml` (`[extensions]`) and in the
//! runtime's configuration (`extensions`), as a plugin author and an operator meet them: the
//! lint of a whole plugin, `ozcheck filter` (the nearest `ozcheck.toml`, `--config`,
//! `--extensions`) and the runtime's refusal of a wait all name the extension, in the same
//! words; a bad name is a clear error, not a panic.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::store::MemoryStore;
use ozcheck_runtime::{JobStart, Runtime};
use serde_json::{Value, json};

const FILTER: &str = "event.text.lowerAscii().contains('lgtm')";

/// `strings` off everywhere but in flow steps' `when`.
const CONFIG: &str = "[extensions]\ndisabled = [\"strings\"]\n\n[extensions.when]\nenabled = [\"strings\", \"optional\"]\n";

fn ozcheck(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("ozcheck runs")
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// A plugin whose routine trigger filters with `lowerAscii` and whose flow uses it in a `when`,
/// under an `ozcheck.toml` with `config`.
fn plugin(config: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path();
    for dir in ["agents", "routines", "flows"] {
        std::fs::create_dir_all(root.join(dir)).expect("mkdir");
    }
    std::fs::write(root.join("ozcheck.toml"), config).expect("write");
    std::fs::write(
        root.join("agents/helper.yaml"),
        "name: helper\nruntime: acp\n",
    )
    .expect("write");
    std::fs::write(
        root.join("routines/review.yaml"),
        format!(
            "name: review\nagent: helper\ntools: [oz.wait_for_event]\ntriggers:\n  - name: t\n    \
             event:\n      source: github-events\n      filter: {FILTER}\n"
        ),
    )
    .expect("write");
    std::fs::write(
        root.join("flows/watch.yaml"),
        "name: watch\ntrigger:\n  event: { source: github-events }\nsteps:\n  - id: ci\n    \
         wait_for_event: { source: github-events, timeout: 1h }\n  - id: tell\n    \
         when: steps.ci.matched && steps.ci.event.text.lowerAscii() == 'ok'\n    \
         approval: { details: done }\n",
    )
    .expect("write");
    tmp
}

/// The message the analyzer gives `FILTER` without the strings extension.
fn refusal_words() -> String {
    let env = ozcheck_analyzer::check::Env::filter().with_extensions(
        ozcheck_analyzer::Extensions::KUBERNETES.without(ozcheck_analyzer::Extension::Strings),
    );
    let report =
        ozcheck_analyzer::check_expression(FILTER, &env, &ozcheck_analyzer::Options::default());
    report.diagnostics[0].message.clone()
}

#[test]
fn the_lint_of_a_plugin_refuses_a_disabled_extension_at_its_position() {
    let tmp = plugin(CONFIG);
    let out = ozcheck(tmp.path(), &["lint", "--format", "json", "."]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let report = json_of(&out);
    let findings = report["diagnostics"].as_array().expect("a list");
    let cel: Vec<&Value> = findings
        .iter()
        .filter(|d| d["code"] == "invalid-filter" || d["code"] == "invalid-when")
        .collect();
    // The routine's filter is refused; the flow's `when` has its own table that enables strings.
    assert_eq!(cel.len(), 1, "{findings:#?}");
    let d = cel[0];
    assert_eq!(d["code"], "invalid-filter");
    assert_eq!(d["file"], "routines/review.yaml");
    let column = "      filter: event.text.".len() as u64 + 1;
    assert_eq!(
        (
            d["line"].as_u64(),
            d["column"].as_u64(),
            d["end_column"].as_u64()
        ),
        (
            Some(8),
            Some(column),
            Some(column + "lowerAscii".len() as u64)
        )
    );
    let message = d["message"].as_str().expect("a message");
    assert_eq!(message, format!("{} [unknown-function]", refusal_words()));
    assert!(message.contains("the `strings` extension"), "{message}");
    // Without the setting the same plugin is clean of CEL findings.
    let tmp = plugin("");
    let out = ozcheck(tmp.path(), &["lint", "--format", "json", "."]);
    let report = json_of(&out);
    assert!(
        report["diagnostics"]
            .as_array()
            .expect("a list")
            .iter()
            .all(|d| d["code"] != "invalid-filter" && d["code"] != "invalid-when"),
        "{report:#}"
    );
}

#[test]
fn ozcheck_filter_honours_the_nearest_configuration_and_the_flag_overrides_it() {
    let tmp = plugin(CONFIG);
    let out = ozcheck(tmp.path(), &["filter", "--format", "json", FILTER]);
    assert_eq!(out.status.code(), Some(1));
    let report = json_of(&out);
    let d = &report["diagnostics"][0];
    assert_eq!(d["code"], "unknown-function");
    assert_eq!(d["message"], refusal_words());
    let start = "event.text.".len() as u64;
    assert_eq!(d["span"], json!({"start": start, "end": start + 10}));
    // The `when` environment has its own table.
    let out = ozcheck(
        tmp.path(),
        &[
            "filter",
            "--context",
            "when",
            "trigger.event.text.lowerAscii() == 'a'",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The flag wins over the file, both ways.
    let out = ozcheck(
        tmp.path(),
        &["filter", "--extensions", "strings,sets", FILTER],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = ozcheck(
        tmp.path(),
        &[
            "filter",
            "--extensions",
            "none",
            "--context",
            "when",
            "trigger.event.text.lowerAscii() == 'a'",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    // `--config` names the file; an empty one is Kubernetes' default.
    std::fs::write(tmp.path().join("empty.toml"), "").expect("write");
    let out = ozcheck(tmp.path(), &["filter", "--config", "empty.toml", FILTER]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn bad_extension_names_are_clear_errors_not_panics() {
    let tmp = plugin("[extensions.filter]\nenabled = [\"string\"]\n");
    for args in [&["lint", "."][..], &["filter", FILTER][..]] {
        let out = ozcheck(tmp.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("ozcheck.toml"), "{stderr}");
        assert!(
            stderr.contains("unknown extension `string`; did you mean `strings`?"),
            "{stderr}"
        );
        assert!(stderr.contains("line 2"), "the position is given: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let out = ozcheck(
        tmp.path(),
        &["filter", "--extensions", "strings,regex", FILTER],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown extension `regex`"), "{stderr}");
    let tmp =
        plugin("[extensions]\nenabled = [\"sets\"]\ndisabled = [\"sets\"]\n[extensions.filtr]\n");
    let out = ozcheck(tmp.path(), &["lint", "."]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown field `filtr`"), "{stderr}");
}

fn runtime_config(extensions: &Value) -> Config {
    serde_json::from_value(json!({
        "sources": [{"name": "github-events", "kind": "github"}],
        "extensions": extensions,
    }))
    .expect("a configuration")
}

#[tokio::test]
async fn the_runtime_refuses_the_wait_in_the_lints_words() {
    let config = runtime_config(&json!({"disabled": ["strings"]}));
    let clock = Arc::new(ManualClock::new(Timestamp(0)));
    let rt = Runtime::start(Arc::new(MemoryStore::new()), clock, Arc::new(config))
        .await
        .expect("starts");
    rt.start_job(&JobStart {
        id: "j".into(),
        ..JobStart::default()
    })
    .await
    .expect("a job");
    let args = json!({"source": "github-events", "filter": FILTER});
    let err = rt.wait_for_event("j", "w", &args).await.unwrap_err();
    assert_eq!(err.code(), "unknown-function");
    assert_eq!(
        err.to_string(),
        format!("the filter is refused: {}", refusal_words())
    );
    // A trigger with that filter is refused when the configuration is loaded.
    let mut config = runtime_config(&json!({"disabled": ["strings"]}));
    config.routines = serde_json::from_value(json!([{"name": "r", "triggers": [
        {"name": "t", "event": {"source": "github-events", "filter": FILTER}}]}]))
    .expect("routines");
    let err = ozcheck_runtime::configure::check(&config).unwrap_err();
    assert_eq!(err.code(), "unknown-function");
    assert!(err.to_string().contains(&refusal_words()), "{err}");
    // Enabled for filters, the same wait registers.
    let config =
        runtime_config(&json!({"disabled": ["strings"], "filter": {"enabled": ["strings"]}}));
    let rt = Runtime::start(
        Arc::new(MemoryStore::new()),
        Arc::new(ManualClock::new(Timestamp(0))),
        Arc::new(config),
    )
    .await
    .expect("starts");
    rt.start_job(&JobStart {
        id: "j".into(),
        ..JobStart::default()
    })
    .await
    .expect("a job");
    rt.wait_for_event("j", "w", &args)
        .await
        .expect("registered");
}

#[test]
fn a_bad_name_in_the_serve_configuration_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("serve.yaml");
    std::fs::write(
        &path,
        "sources:\n  - { name: github-events, kind: json }\nextensions:\n  filter:\n    disabled: [strngs]\n",
    )
    .expect("write");
    let out = ozcheck(
        tmp.path(),
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--db",
            "w.db",
            "--config",
            "serve.yaml",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown extension `strngs`; did you mean `strings`?"),
        "{stderr}"
    );
}
