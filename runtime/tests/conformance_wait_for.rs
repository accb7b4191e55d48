//! The `wait_for` conformance scenarios against the reference runtime in process: every file
//! under `corpus/conformance/wait_for/` must pass, and together they cover W1–W9.

use std::collections::BTreeSet;
use std::path::PathBuf;

use ozcheck_runtime::conformance::{RunOptions, Scenario, collect, run_file};

fn scenario_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/conformance/wait_for")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_wait_for_scenario_passes_in_process() {
    let files = collect(&[scenario_dir()]).expect("scenario directory");
    assert!(files.len() >= 9, "{files:?}");
    let options = RunOptions {
        adapter: None,
        restart_every_step: false,
        ..RunOptions::default()
    };
    let mut failures = Vec::new();
    for file in &files {
        let result = run_file(file, &options).await;
        if let Some(failure) = result.failure {
            failures.push(format!("{}: {failure}", result.id));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_w_requirement_has_a_scenario() {
    let mut covered = BTreeSet::new();
    for file in collect(&[scenario_dir()]).expect("scenario directory") {
        let text = std::fs::read_to_string(&file).expect("readable");
        let scenario = Scenario::parse(&text).expect("valid scenario");
        covered.extend(scenario.requirements);
    }
    for n in 1..=9 {
        assert!(covered.contains(&format!("W{n}")), "no scenario names W{n}");
    }
}
