//! ozcheck's evaluator against the `cel` crate's interpreter on random filters and events: where
//! both give a bool they agree, apart from the documented differences
//! (`testgen::KNOWN_INTERPRETER_DIFFERENCES`). The fuzz target `eval_vs_cel` runs the same
//! comparison for as long as you like.

use ozcheck_analyzer::testgen::differential_case;

#[test]
fn evaluator_agrees_with_cel_rust() {
    let cases: u64 = std::env::var("DIFFERENTIAL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000);
    let failures: Vec<String> = (0..cases)
        .filter_map(|seed| differential_case(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} disagreements, first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}
