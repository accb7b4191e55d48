//! Differential test: our parser against the `cel` crate's ANTLR parser on every expression of
//! the cel-spec conformance corpus, and on deterministic mutants of them.

use std::path::PathBuf;

use ozcheck_analyzer::syntax::ParseOptions;
use ozcheck_analyzer::testing::{describe, oracle_normalised, ours_normalised};

struct Case {
    id: String,
    expr: String,
    in_scope: bool,
}

fn corpus() -> Vec<Case> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/cel-spec");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus/cel-spec exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("corpus file is UTF-8");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let value: serde_json::Value = serde_json::from_str(line).expect("corpus line is JSON");
            cases.push(Case {
                id: value["id"].as_str().unwrap_or_default().to_owned(),
                expr: value["expr"]
                    .as_str()
                    .expect("every test has an expr")
                    .to_owned(),
                in_scope: value["skip_reason"].is_null(),
            });
        }
    }
    cases
}

fn options() -> ParseOptions {
    ParseOptions {
        max_bytes: 1 << 20,
        ..ParseOptions::default()
    }
}

#[test]
fn corpus_agrees_with_the_oracle() {
    let cases = corpus();
    let mut failures = Vec::new();
    for case in &cases {
        let ours = ours_normalised(&case.expr, &options());
        if case.in_scope && ours.is_err() {
            failures.push(format!(
                "in-scope test {} does not parse\n{}",
                case.id,
                describe(&case.expr, &ours, &oracle_normalised(&case.expr))
            ));
            continue;
        }
        let theirs = oracle_normalised(&case.expr);
        let agree = match (&ours, &theirs) {
            (Ok(a), Ok(b)) => a == b,
            (Err(_), Err(_)) => true,
            _ => false,
        };
        if !agree {
            failures.push(format!(
                "{}\n{}",
                case.id,
                describe(&case.expr, &ours, &theirs)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} disagree:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
