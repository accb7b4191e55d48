//! `ozcheck conformance --db postgres://…`: the whole suite against the reference runtime on
//! `PostgreSQL`, in process and through its adapter, with and without a crash-restart between
//! every two steps; and `--db` values that name no usable store.

use std::process::Command;

mod scenarios;
use scenarios::scenario_count;

#[path = "../runtime/tests/pg/mod.rs"]
mod pg;

fn ozcheck(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the suite with `extra` arguments against the test server; `None` when skipped.
fn suite(test: &str, extra: &[&str]) -> Option<()> {
    let server = pg::server(test)?;
    let n = scenario_count();
    let mut args = vec!["conformance", "--db", &server.url];
    args.extend_from_slice(extra);
    args.push("corpus/conformance");
    let (code, out, err) = ozcheck(&args);
    assert_eq!(
        out.lines().last().unwrap_or(""),
        format!("{n} passed, 0 failed"),
        "{out}{err}"
    );
    assert_eq!(code, 0);
    Some(())
}

fn adapter(url: &str) -> String {
    format!(
        "{} conformance-adapter --db {url}",
        env!("CARGO_BIN_EXE_ozcheck")
    )
}

#[test]
fn the_suite_passes_on_postgres_in_process() {
    suite("the_suite_passes_on_postgres_in_process", &[]);
}

#[test]
fn the_suite_passes_on_postgres_in_process_with_a_restart_between_every_step() {
    suite(
        "the_suite_passes_on_postgres_with_restarts",
        &["--restart-every-step"],
    );
}

#[test]
fn the_suite_passes_on_postgres_through_the_adapter_in_both_modes() {
    let Some(server) = pg::server("the_suite_passes_on_postgres_through_the_adapter") else {
        return;
    };
    let adapter = adapter(&server.url);
    suite("through the adapter", &["--adapter", &adapter]);
    suite(
        "through the adapter with restarts",
        &["--adapter", &adapter, "--restart-every-step"],
    );
}

#[test]
fn a_db_that_names_no_fresh_store_is_a_usage_error() {
    for (db, words) in [
        ("waits.db", "each scenario runs on a fresh store"),
        ("mysql://db/w", "`mysql` is not supported"),
    ] {
        let (code, _, err) = ozcheck(&["conformance", "--db", db, "corpus/conformance"]);
        assert_eq!(code, 2, "{db}: {err}");
        assert!(err.contains(words), "{db}: {err}");
    }
}

#[test]
fn an_unreachable_database_fails_the_scenarios_and_says_why() {
    // Nothing listens on port 1.
    let (code, out, _) = ozcheck(&[
        "conformance",
        "--db",
        "postgres://nobody@127.0.0.1:1/none",
        "corpus/conformance/e01-arguments",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("reset (setup) failed"), "{out}");
}
