//! The hostile generator (`ozcheck_analyzer::hostile`): it reaches the whole grammar, and its
//! cases end without a panic, with accepted filters never stopped on cost. The elapsed-time
//! bound is asserted by the `hostile` fuzz target and its runner (`examples/hostile.rs`), not
//! here: tests make no timed assertions.

use ozcheck_analyzer::hostile::{Choices, expression, hostile_case, pattern};
use ozcheck_analyzer::testgen::Rng;

fn bytes(seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..200).map(|_| rng.next_u64() as u8).collect()
}

#[test]
fn expressions_and_patterns_reach_the_whole_grammar() {
    let sources: Vec<String> = (1..=2000)
        .map(|seed| expression(&mut Choices::new(&bytes(seed))))
        .collect();
    for needle in [
        "matches(",
        ".map(",
        ".filter(",
        ".all(",
        ".exists(",
        ".exists_one(",
        " ? ",
        " in ",
        " % ",
        " / ",
        "!(",
        "-(",
        "has(",
        "size(",
        "string(",
        "int(",
        "uint(",
        "double(",
        "bytes(",
        "bool(",
        "dyn(",
        "type(",
        "timestamp(",
        "duration(",
        "getHours(",
        "{",
        "[",
        "18446744073709551615u",
        "b'",
        "null",
        ".contains(",
        ".startsWith(",
        ".endsWith(",
        "x + x",
        "event.text.matches(event.subject)",
        ".lowerAscii()",
        ".replace(",
        ".split(",
        ".join(",
        ".substring(",
        ".format(",
        "'%.100f'",
        "strings.quote(",
        ".sort()",
        ".sortBy(",
        ".distinct()",
        ".flatten(",
        ".slice(",
        "lists.range(",
        "sets.contains(",
        "sets.equivalent(",
        ".?k",
        "[?",
        "optional.of(",
        ".optMap(",
        ".existsOne(",
        ".transformList(",
        ".transformMap(",
        ".transformMapEntry(",
    ] {
        assert!(
            sources.iter().any(|s| s.contains(needle)),
            "no generated expression has `{needle}`"
        );
    }
    assert!(sources.iter().all(|s| s.len() <= 1024));
    let patterns: Vec<String> = (1..=2000)
        .map(|seed| pattern(&mut Choices::new(&bytes(seed)), 3, 300))
        .collect();
    for needle in [
        "(?i)",
        "\\pL",
        "\\p{Greek}",
        "{1000",
        "{1001",
        "[^",
        "|",
        "*?",
        "\\b",
        "^",
        "$",
        "(",
    ] {
        assert!(
            patterns.iter().any(|p| p.contains(needle)),
            "no generated pattern has `{needle}`"
        );
    }
}

#[test]
fn hostile_cases_end_without_a_panic() {
    let mut evaluated = 0;
    for seed in 1..=20 {
        match hostile_case(&bytes(seed)) {
            Ok(outcome) => evaluated += usize::from(!outcome.ends.is_empty()),
            Err(failure) => panic!("seed {seed}: {failure}"),
        }
    }
    // Most generated expressions parse and run (the rest are refused by the parser).
    assert!(evaluated >= 8, "only {evaluated} of 20 cases evaluated");
}

/// The inputs the `hostile` fuzz target stopped on (`corpus/regressions/hostile/*.bin`) run
/// here too, with the expression each one chose: no panic, nothing accepted stopped on cost.
#[test]
fn saved_fuzz_findings_replay_without_a_failure() {
    let folder =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/regressions/hostile");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&folder).expect("the regression folder") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|e| e != "bin") {
            continue;
        }
        let data = std::fs::read(&path).expect("readable");
        let outcome = hostile_case(&data).unwrap_or_else(|f| panic!("{}: {f}", path.display()));
        assert!(
            !outcome.ends.is_empty(),
            "{}: {} did not run",
            path.display(),
            outcome.source
        );
        replayed += 1;
    }
    assert!(replayed >= 3, "only {replayed} saved inputs");
}
