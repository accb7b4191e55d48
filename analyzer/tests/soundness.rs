//! Soundness of the static bound, tested with the witness as the adversary: for generated
//! filters that cover every node kind and every overload of the checker's tables (including
//! `dyn` shapes: loops over the event and nested maps, lists indexed by their own elements,
//! computed keys, equality across kinds, `in`, macros over built lists, conversions), the
//! metered cost on the filter's own witness — the heaviest event its estimate leads to — and on
//! four random events never exceeds the estimate's max.
//!
//! Case `i` focuses on the `i`-th entry of the overload catalogue, then on each shape in turn,
//! so a run of at least one cycle covers everything; the coverage report is printed and the test
//! fails when an overload or a node kind was never produced. `SOUNDNESS_CASES` sets the number
//! of cases (default 10,000) and `SOUNDNESS_SEED` the seed of the first (default: from the
//! clock, printed, so a failure can be replayed).

use std::sync::Arc;
use std::time::Duration;

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::cost::estimate;
use ozcheck_analyzer::eval::{Event, Limits, ManualClock, Program};
use ozcheck_analyzer::testgen::{Coverage, focus, soundness_case};
use ozcheck_analyzer::{EventBounds, Options, compile};

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn metered_cost_never_exceeds_the_estimate() {
    let cases = env_u64("SOUNDNESS_CASES").unwrap_or(10_000);
    let base = env_u64("SOUNDNESS_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    println!("SOUNDNESS_SEED={base} SOUNDNESS_CASES={cases}");
    let mut coverage = Coverage::new();
    let (mut compiled, mut evaluations) = (0u64, 0u64);
    // How close the witnesses come to the estimates: cases within 1.5×, 4×, 100× and beyond.
    let mut closeness = [0u64; 4];
    let mut failures = Vec::new();
    for i in 0..cases {
        let seed = base.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        match soundness_case(seed, focus(i), &mut coverage) {
            Ok(outcome) => {
                compiled += u64::from(outcome.compiled);
                evaluations += outcome.evaluations as u64;
                if outcome.compiled {
                    let ratio = outcome.estimate as f64 / outcome.witness_cost.max(1) as f64;
                    let bucket = [1.5, 4.0, 100.0].iter().take_while(|&&r| ratio > r).count();
                    closeness[bucket] += 1;
                }
            }
            Err(failure) => failures.push(format!("case {i} (seed {seed}):\n{failure}")),
        }
    }
    println!("{cases} cases, {compiled} compiled, {evaluations} evaluations");
    println!(
        "estimate / witness cost: ≤ 1.5× {}, ≤ 4× {}, ≤ 100× {}, more {}",
        closeness[0], closeness[1], closeness[2], closeness[3]
    );
    println!("{}", coverage.report());
    assert!(
        failures.is_empty(),
        "{} unsound cases, first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
    let overloads = coverage.missing_overloads();
    let kinds = coverage.missing_kinds();
    assert!(
        overloads.is_empty() && kinds.is_empty(),
        "never generated: overloads {overloads:?}, node kinds {kinds:?}"
    );
}

/// The named worst case from the issue, on the event built to be its worst case.
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
        ..Limits::default()
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
