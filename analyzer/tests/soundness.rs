//! Soundness of the static bound, tested: for random well-typed filters and events within
//! bounds — random ones and adversarial ones that pour the whole budget into the shapes that
//! make a filter expensive — the metered cost of an evaluation never exceeds the estimate's max,
//! so an accepted filter can never be stopped by the cost limit.
//!
//! The meter runs with its limit set to the estimate's max: any evaluation that would cost more
//! stops with `cost-limit`, which this test reports together with the filter and the event. The
//! generators live in `ozcheck_analyzer::testgen`, shared with the `estimate_vs_eval` fuzz
//! target. `SOUNDNESS_CASES` overrides the number of cases (default 10,000).

use std::sync::Arc;
use std::time::Duration;

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::cost::estimate;
use ozcheck_analyzer::eval::{Event, Limits, ManualClock, Program};
use ozcheck_analyzer::testgen::soundness_case;
use ozcheck_analyzer::{EventBounds, Options, compile};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("SOUNDNESS_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn metered_cost_never_exceeds_the_estimate(seed in any::<u64>()) {
        soundness_case(seed).map_err(TestCaseError::fail)?;
    }
}

/// The named worst cases from the issue, on events built to be their worst case.
#[test]
fn nested_exists_on_the_densest_attributes_stays_within_its_estimate() {
    let bounds = EventBounds::DEFAULT;
    let options = Options::default();
    let env = Env::filter();
    let source = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
    let checked = compile(source, &env, &options).unwrap();
    let estimate = estimate(&checked, &env, &options);
    let program = Program::from_checked(&checked).unwrap();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus/events/adv_int8k.json"
    ))
    .unwrap();
    let event = Event::from_json(&text, &bounds).unwrap();
    let limits = Limits {
        cost: Some(estimate.cost.max),
        deadline: Duration::from_secs(3600),
        clock: Arc::new(ManualClock::new()),
        model: options.model,
    };
    let evaluation = program
        .eval_event(&event, &limits)
        .expect("completes within its estimate");
    assert!(evaluation.cost <= estimate.cost.max);
    // The bound is also tight: the densest event reaches a good part of it.
    assert!(
        evaluation.cost * 4 >= estimate.cost.max,
        "cost {} vs estimate {}",
        evaluation.cost,
        estimate.cost.max
    );
}

/// The extension libraries' functions and syntax, as they appear in generated filters.
const EXTENSION_FEATURES: &[&str] = &[
    ".lowerAscii(",
    ".upperAscii(",
    ".trim(",
    ".reverse(",
    ".replace(",
    ".substring(",
    ".charAt(",
    ".join(",
    "strings.quote(",
    ".format(",
    ".indexOf(",
    ".lastIndexOf(",
    ".split(",
    ".slice(",
    ".distinct(",
    ".sort(",
    ".flatten(",
    "lists.range(",
    ".transformList(",
    ".sortBy(",
    "optional.unwrap(",
    "optional.of(",
    "optional.ofNonZeroValue(",
    "optional.none(",
    ".hasValue(",
    ".orValue(",
    ".value(",
    "sets.contains(",
    "sets.intersects(",
    "sets.equivalent(",
    ".existsOne(",
    ".?",
    "[?",
];

/// The generator reaches every extension function and piece of optional syntax in filters that
/// type-check, and gives some of them a bounded estimate (the soundness property above is only
/// as strong as the filters it is run on). Prints the coverage report.
#[test]
fn the_generator_covers_the_extension_libraries() {
    use ozcheck_analyzer::testgen::{FilterGen, Rng};
    let options = Options::default();
    let env = Env::filter();
    let mut checked_with = vec![0u32; EXTENSION_FEATURES.len()];
    let mut bounded_with = vec![0u32; EXTENSION_FEATURES.len()];
    let mut two_variable = 0u32;
    for seed in 0..20_000u64 {
        let mut rng = Rng::new(seed);
        let depth = 1 + rng.below(3) as u32;
        let source = FilterGen::new(&mut rng).bool_expr(depth);
        let Ok(checked) = compile(&source, &env, &options) else {
            continue;
        };
        let bounded = estimate(&checked, &env, &options).cost.max < u64::MAX;
        for (i, feature) in EXTENSION_FEATURES.iter().enumerate() {
            if source.contains(feature) {
                checked_with[i] += 1;
                bounded_with[i] += u32::from(bounded);
            }
        }
        two_variable += u32::from(source.contains(", x") && source.contains("(i"));
    }
    println!("extension coverage (filters that type-check / with a bounded estimate):");
    for (i, feature) in EXTENSION_FEATURES.iter().enumerate() {
        println!(
            "  {feature:<26} {:>5} / {:>5}",
            checked_with[i], bounded_with[i]
        );
    }
    println!("  two-variable macros        {two_variable:>5}");
    let missing: Vec<&str> = EXTENSION_FEATURES
        .iter()
        .zip(&bounded_with)
        .filter(|(_, n)| **n == 0)
        .map(|(f, _)| *f)
        .collect();
    assert!(
        missing.is_empty(),
        "never generated with a bounded estimate: {missing:?}"
    );
    assert!(two_variable > 0, "no two-variable macro generated");
}
