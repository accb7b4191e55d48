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
