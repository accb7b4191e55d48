//! The checker against the cel-spec corpus: every in-scope test that expects a value must
//! type-check in the environment it declares, and deduce the type the test names.

use std::fs;

use ozcheck_analyzer::check::{Env, SizeHint, check};
use ozcheck_analyzer::conformance::skip_reason;
use ozcheck_analyzer::syntax::{ParseOptions, parse};
use ozcheck_analyzer::types::Type;

#[test]
fn in_scope_tests_that_expect_values_type_check() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/cel-spec");
    let options = ParseOptions {
        max_bytes: usize::MAX,
        ..ParseOptions::default()
    };
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut paths: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
    {
        for line in fs::read_to_string(path).unwrap().lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            if skip_reason(&record).is_some() || record["disable_check"] == true {
                continue;
            }
            let expects_value = record["expected"].get("value").is_some();
            let deduced = record["deduced_type"].as_str();
            if !expects_value && deduced.is_none() {
                continue;
            }
            let mut env = Env::general();
            for (name, ty) in record["type_env"].as_object().unwrap() {
                let ty: Type = ty.as_str().unwrap().parse().unwrap();
                env = env.declare(name, ty, SizeHint::default());
            }
            let id = record["id"].as_str().unwrap();
            let ast = parse(record["expr"].as_str().unwrap(), &options).unwrap();
            checked += 1;
            match check(ast, &env) {
                Ok(c) => {
                    if let Some(want) = deduced {
                        if c.result_type().to_string() != want {
                            failures.push(format!("{id}: deduced {} not {want}", c.result_type()));
                        }
                    }
                }
                Err(errors) => failures.push(format!("{id}: {}", errors[0].message)),
            }
        }
    }
    assert!(checked > 900, "only {checked} tests checked");
    assert!(
        failures.is_empty(),
        "{} of {checked}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
