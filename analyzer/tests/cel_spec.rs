//! The cel-spec corpus through the conformance runner: no record (in scope or not) makes the
//! analyzer panic, every in-scope record parses, and evaluation fails only on the records listed
//! in `corpus/cel-spec-known-failures.txt`.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use ozcheck_analyzer::conformance::{self, Mode, Outcome};

fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

fn records() -> Vec<serde_json::Value> {
    let mut files: Vec<_> = std::fs::read_dir(corpus_dir().join("cel-spec"))
        .expect("corpus/cel-spec")
        .map(|entry| entry.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            out.push(serde_json::from_str(line).expect("a JSON record"));
        }
    }
    out
}

fn id(record: &serde_json::Value) -> String {
    record["id"].as_str().expect("id").to_owned()
}

#[test]
fn no_record_panics_in_either_mode() {
    let records = records();
    assert!(records.len() > 2000, "the whole corpus is read");
    let mut panicked = Vec::new();
    for record in &records {
        for mode in [Mode::ParseOnly, Mode::Evaluate] {
            if catch_unwind(AssertUnwindSafe(|| conformance::run_unscoped(record, mode))).is_err() {
                panicked.push(format!("{} ({mode:?})", id(record)));
            }
        }
    }
    assert!(panicked.is_empty(), "panicked on: {panicked:#?}");
}

#[test]
fn every_in_scope_record_parses() {
    let failures: Vec<_> = records()
        .iter()
        .filter_map(|r| match conformance::run(r, Mode::ParseOnly) {
            Outcome::Fail(reason) => Some(format!("{}: {reason}", id(r))),
            _ => None,
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn evaluation_fails_only_on_known_failures() {
    let known_text = std::fs::read_to_string(corpus_dir().join("cel-spec-known-failures.txt"))
        .expect("known failures list");
    let known: BTreeSet<&str> = known_text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    let (mut passed, mut in_scope) = (0usize, 0usize);
    let mut unexpected = Vec::new();
    for record in records() {
        match conformance::run(&record, Mode::Evaluate) {
            Outcome::Skip(_) => {}
            Outcome::Pass => {
                passed += 1;
                in_scope += 1;
            }
            Outcome::Fail(reason) => {
                in_scope += 1;
                if !known.contains(id(&record).as_str()) {
                    unexpected.push(format!("{}: {reason}", id(&record)));
                }
            }
        }
    }
    assert!(
        unexpected.is_empty(),
        "failures not in the known list: {unexpected:#?}"
    );
    assert!(
        passed * 100 >= in_scope * 99,
        "{passed} of {in_scope} in-scope records pass, under 99%"
    );
}
