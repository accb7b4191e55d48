//! The memory cap through the public entry points: what an evaluation counts for the values it
//! builds, so that the 32 MiB figure bounds what the process really holds.

use std::sync::Arc;
use std::time::Duration;

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::cost::table::{
    BUILT_PER_CONTAINER, BUILT_PER_ELEMENT, BUILT_PER_ENTRY, MEMORY_LIMIT,
};
use ozcheck_analyzer::eval::{EvalError, Event, Limits, ManualClock, Program, Stop};
use ozcheck_analyzer::{EventBounds, Options, compile};

/// Bytes counted for one inner iteration of the nested-lists filter below.
const PER_ITERATION: u64 = 6 * (BUILT_PER_ELEMENT + BUILT_PER_CONTAINER) + BUILT_PER_ELEMENT;
/// Empty maps built by the empty-maps filter below.
const MAPS: u64 = 3900 * 110;

/// Evaluates `source` over an event with `attributes` (JSON) and an empty text.
fn run(source: &str, attributes: &str) -> Result<bool, EvalError> {
    run_on(
        source,
        &format!(
            r#"{{"id":"1","source":"s","type":"t","action":"a","subject":"x","text":"","attributes":{attributes}}}"#
        ),
    )
}

/// Evaluates `source` over an event whose text is `text` and whose attributes are empty.
fn run_on_text(source: &str, text: &str) -> Result<bool, EvalError> {
    let json = serde_json::json!({
        "id": "1", "source": "s", "type": "t", "action": "a", "subject": "x",
        "text": text, "attributes": {}
    });
    run_on(source, &json.to_string())
}

/// Evaluates `source` over the event `json` with the cost limit off and a clock that never
/// moves, so only the memory cap can stop it.
fn run_on(source: &str, json: &str) -> Result<bool, EvalError> {
    let options = Options::default();
    let checked = compile(source, &Env::filter(), &options).expect("compiles");
    let program = Program::from_checked(&checked).expect("prepares");
    let event = Event::from_json(json, &EventBounds::DEFAULT).expect("in bounds");
    let limits = Limits {
        cost: None,
        deadline: Duration::from_secs(3600),
        clock: Arc::new(ManualClock::new()),
        model: options.model,
        ..Limits::default()
    };
    program
        .eval_event(&event, &limits)
        .map(|e| matches!(e.value, ozcheck_analyzer::eval::Value::Bool(true)))
}

/// 4,000 zeros and 25 zeros: 100,000 inner iterations, each building six nested one-element
/// lists. Counted at their elements only (24 bytes a level, 168 an iteration) they stayed under
/// the cap (16.8 MB counted) while the process held about four times as much; with the
/// container counted (552 bytes an iteration) the cap stops them.
#[test]
fn small_containers_count_their_own_allocation() {
    let zeros = |n: usize| format!("[{}]", vec!["0"; n].join(","));
    let attributes = format!(r#"{{"a":{},"b":{}}}"#, zeros(4000), zeros(25));
    let source = "event.attributes.a.map(i, event.attributes.b.map(j, [[[[[[j]]]]]])).size() > 0";
    const { assert!(100_000 * PER_ITERATION > MEMORY_LIMIT) };
    const { assert!(100_000 * 7 * BUILT_PER_ELEMENT < MEMORY_LIMIT) };
    match run(source, &attributes) {
        Err(EvalError::Stopped(Stop::Memory { bytes, .. })) => {
            assert!(bytes > MEMORY_LIMIT && bytes <= MEMORY_LIMIT + PER_ITERATION);
        }
        other => panic!("expected the memory cap, got {other:?}"),
    }
}

/// An empty map built in a loop is a container too (it was counted as nothing): 429,000 of
/// them pass the cap only when each counts its allocation.
#[test]
fn empty_maps_in_a_loop_reach_the_cap() {
    let zeros = |n: usize| format!("[{}]", vec!["0"; n].join(","));
    let attributes = format!(r#"{{"a":{},"b":{}}}"#, zeros(3900), zeros(110));
    let source = "event.attributes.a.map(i, event.attributes.b.map(j, {})).size() > 0";
    const { assert!(MAPS * (BUILT_PER_ELEMENT + BUILT_PER_CONTAINER) > MEMORY_LIMIT) };
    const { assert!(MAPS * BUILT_PER_ELEMENT < MEMORY_LIMIT) };
    assert!(matches!(
        run(source, &attributes),
        Err(EvalError::Stopped(Stop::Memory { .. }))
    ));
}

/// `transformMap` builds a map entry per kept element; its entries count like a literal's.
#[test]
fn transform_map_entries_count_toward_the_cap() {
    let zeros = |n: usize| format!("[{}]", vec!["0"; n].join(","));
    let attributes = format!(r#"{{"a":{}}}"#, zeros(1100));
    let source = "event.attributes.a.map(i, event.attributes.a.transformMap(k, v, v)).size() > 0";
    const { assert!(1100 * 1100 * BUILT_PER_ENTRY > MEMORY_LIMIT) };
    assert!(matches!(
        run(source, &attributes),
        Err(EvalError::Stopped(Stop::Memory { .. }))
    ));
}

/// The 16 KiB text doubled `n` times in a `map` chain, then measured.
fn doubling(n: usize) -> String {
    format!("[event.text]{}.size() == 1", ".map(x, x + x)".repeat(n))
}

/// A concatenation builds its text in a buffer and copies it into the value's shared
/// allocation, so both are live at once. Counted once, ten doublings of the 16 KiB text (16 MiB
/// at the last, 32 MiB less 32 KiB in all) passed the cap while the last concatenation held the
/// 8 MiB operand, the 16 MiB buffer and its 16 MiB copy: 40 MiB, past the cap and the regex
/// engines' allowance (the `hostile` fuzz target's first finding). Counted twice, nine pass and
/// ten stop.
#[test]
fn a_built_text_counts_its_buffer_and_its_copy() {
    let text = "a".repeat(16 * 1024);
    assert_eq!(run_on_text(&doubling(9), &text).ok(), Some(true));
    match run_on_text(&doubling(10), &text) {
        Err(EvalError::Stopped(Stop::Memory { bytes, .. })) => assert!(bytes > MEMORY_LIMIT),
        other => panic!("expected the memory cap, got {other:?}"),
    }
}

/// A `filter` list grows by doubling, and every buffer it is given counts before it is given.
/// Keeping 2,049 of 3,000 elements, it grows through buffers of 4, 8, …, 4,096 elements (8,188
/// in all, 196 KB); kept 200 times by a `map`, the lists hold 19.7 MB of buffers. Counted by the
/// elements kept (9.8 MB), they stayed far under the cap; counted by their buffers (39.3 MB),
/// they reach it.
#[test]
fn a_filter_counts_the_buffers_it_grows_through() {
    let zeros = |n: usize| format!("[{}]", vec!["0"; n].join(","));
    let kept: Vec<&str> = (0..3000)
        .map(|i| if i <= 2048 { "1" } else { "0" })
        .collect();
    let attributes = format!(r#"{{"a":[{}],"b":{}}}"#, kept.join(","), zeros(200));
    let source = "event.attributes.b.map(i, event.attributes.a.filter(j, j == 1)).size() > 0";
    const { assert!(200 * (2049 * BUILT_PER_ELEMENT + BUILT_PER_CONTAINER) < MEMORY_LIMIT) };
    const { assert!(200 * 8188 * BUILT_PER_ELEMENT > MEMORY_LIMIT) };
    match run(source, &attributes) {
        Err(EvalError::Stopped(Stop::Memory { bytes, .. })) => assert!(bytes > MEMORY_LIMIT),
        other => panic!("expected the memory cap, got {other:?}"),
    }
}
