//! Calibrates the cost unit: the worst nanoseconds per charged unit over the hostile
//! generator's output (`ozcheck_analyzer::hostile`) and the held cases of docs/cost-model.md
//! (the issue 33 classes: long keys looked up and built into maps, nested optionals, the
//! regex, sort and concatenation amplifiers, runtime errors quoting wide characters), each
//! evaluated at the default cost limit by the real clock. The goal is at most 100 ns a unit, so that the default limit of 1,000,000 units
//! ends far inside the 250 ms deadline.
//!
//! `nice -n 10 cargo run --release -p ozcheck-analyzer --example calibrate -- [CASES] [FIRST_SEED]`
//!
//! Evaluations charged fewer than `MIN_UNITS` are not rated (a clock read is about as long as a
//! cheap filter). Each rated case runs three times and keeps its fastest run, so that a
//! loaded machine's pauses do not count against the model. Prints the five worst cases.

use std::time::{Duration, Instant};

use ozcheck_analyzer::EventBounds;
use ozcheck_analyzer::eval::{EvalError, Event, Limits, Program, Stop};
use ozcheck_analyzer::hostile::{Choices, event, expression};
use ozcheck_analyzer::syntax::{self, ParseOptions};
use ozcheck_analyzer::testgen::Rng;

/// Cases charged fewer units than this are not rated.
const MIN_UNITS: u64 = 20_000;

/// The held cases: the shapes issue 33 reported, with the event that feeds them.
fn held() -> Vec<(String, serde_json::Value)> {
    let text = "a".repeat(16_384);
    let long_event = serde_json::json!({
        "id": "1", "source": "s", "type": "t", "action": "a", "subject": "x",
        "text": text, "attributes": {}
    });
    let keys: Vec<String> = (0..8).map(|i| format!("event.text + '{i}': {i}")).collect();
    let literal: Vec<String> = (0..8).map(|i| format!("event.text + '{i}'")).collect();
    let entries: Vec<String> = (0..8).map(|i| format!("ks[{i}]: {i}")).collect();
    let mut nested = "i".to_owned();
    for _ in 0..45 {
        nested = format!("optional.of({nested})");
    }
    let mut cases = Vec::new();
    for lookup in [
        "!(event.text in m)",
        "m[?event.text].orValue(0) == 0",
        "m[k] == 0",
    ] {
        cases.push(format!(
            "[{{{}}}].all(m, [event.text + '0'].all(k, lists.range(230000).all(i, {lookup})))",
            keys.join(", ")
        ));
    }
    cases.push(format!(
        "[[{}]].all(ks, lists.range(50000).all(i, {{{}}}.size() == 8))",
        literal.join(", "),
        entries.join(", ")
    ));
    cases.push(format!("lists.range(13000).all(i, {nested}.hasValue())"));
    cases.push("lists.range(100000).all(i, [].reverse().reverse().reverse().size() == 0)".into());
    cases.push(
        "lists.range(1000).transformMapEntry(i, v, {event.text + string(v): v}).size() > 0".into(),
    );
    cases.push("event.text.split('').sort().size() > 0".into());
    cases.push("event.text.split('').distinct().size() > 0".into());
    cases.push("event.text.lowerAscii().upperAscii() == event.text".into());
    cases.push("[event.text].map(x, x + x).map(x, x + x).map(x, x + x)[0].size() > 0".into());
    let mut held: Vec<(String, serde_json::Value)> =
        cases.into_iter().map(|c| (c, long_event.clone())).collect();
    // Runtime errors absorbed by `||` or `exists` on every step, each quoting a subject of
    // characters outside ASCII (an error message's escaping once cost µs per character).
    let mut wide = long_event;
    wide["subject"] = serde_json::Value::String("\u{1f389}".repeat(15));
    for case in [
        "lists.range(111109).all(i, timestamp(0).getHours(event.subject) >= 0 || true)",
        "event.text.split('').exists(c, timestamp(0).getHours(event.subject) == 9)",
        "event.text.split('').exists(c, int(event.subject) == 1)",
        "lists.range(100000).all(i, duration(event.subject) > duration('0s') || true)",
    ] {
        held.push((case.to_owned(), wide.clone()));
    }
    // Version 8's charges for arithmetic: `double()` of decimals that leave the parser's fast
    // path, and `%f`/`%e` of the doubles whose exact digits take the most big-integer work.
    let mut doubles = held[0].1.clone();
    doubles["subject"] = serde_json::Value::String(
        "2.4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818081799618989828234772285886546332835517796989819938739800539093906315035659515570226392290858392449105184435931802849936536152500319370457678249219365623669e-324".into(),
    );
    doubles["text"] = serde_json::Value::String(format!(
        "2.4703282292062327208828439643411068618252990130716238221279{}1e-324",
        "0".repeat(16_300)
    ));
    doubles["attributes"] =
        serde_json::json!({ "x": -1.797_693_134_862_315_7e308, "t": 2.225_073_858_507_201_4e-308 });
    for case in [
        "lists.range(1000).exists(i, double(event.subject) < 0.0)",
        "lists.range(60).exists(i, double(event.text) < 0.0)",
        "lists.range(1000).exists(i, double('6e-319') < 0.0)",
        "lists.range(1000).exists(i, '%.100f'.format([event.attributes.x]) == 'x')",
        "lists.range(1000).exists(i, '%.100e'.format([event.attributes.t]) == 'x')",
        "lists.range(1000).exists(i, '%f'.format([event.attributes.x]) == 'x')",
    ] {
        held.push((case.to_owned(), doubles.clone()));
    }
    held
}

/// The fastest of three evaluations at the default limit: its time, cost and how it ended.
fn measure(program: &Program, event: &Event) -> (Duration, u64, &'static str) {
    let mut best: Option<(Duration, u64, &'static str)> = None;
    for _ in 0..3 {
        let limits = Limits::default().with_deadline(Duration::from_secs(30));
        let started = Instant::now();
        let result = program.eval_event(event, &limits);
        let elapsed = started.elapsed();
        let (cost, end) = match &result {
            Ok(done) => (done.cost, "value"),
            Err(EvalError::Runtime { cost, .. }) => (*cost, "error"),
            Err(EvalError::Stopped(Stop::CostLimit { cost })) => (*cost, "cost"),
            Err(EvalError::Stopped(Stop::Deadline { cost })) => (*cost, "deadline"),
            Err(EvalError::Stopped(Stop::Memory { cost, .. })) => (*cost, "memory"),
        };
        // A stop on cost is charged up to the limit: the work done is what was charged before.
        let cost = cost.min(ozcheck_analyzer::cost::DEFAULT_COST_LIMIT);
        if best.is_none_or(|(b, _, _)| elapsed < b) {
            best = Some((elapsed, cost, end));
        }
    }
    best.expect("three runs")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cases: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(3000);
    let first: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let mut inputs = held();
    for seed in first..first + cases {
        let mut rng = Rng::new(seed);
        let len = 16 + rng.below(240) as usize;
        let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        let mut c = Choices::new(&data);
        let source = expression(&mut c);
        inputs.push((source, event(&mut c)));
    }
    let mut rated: Vec<(f64, Duration, u64, &'static str, String)> = Vec::new();
    for (source, json) in &inputs {
        let Ok(program) = syntax::parse(source, &ParseOptions::default()).and_then(Program::new)
        else {
            continue;
        };
        let Ok(event) = Event::from_value(json, &EventBounds::DEFAULT) else {
            continue;
        };
        let (elapsed, cost, end) = measure(&program, &event);
        if cost < MIN_UNITS {
            continue;
        }
        let per_unit = elapsed.as_nanos() as f64 / cost as f64;
        rated.push((per_unit, elapsed, cost, end, source.clone()));
    }
    rated.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!(
        "{} cases ({} held), {} rated (charged at least {MIN_UNITS} units)",
        inputs.len(),
        held().len(),
        rated.len()
    );
    for (per_unit, elapsed, cost, end, source) in rated.iter().take(5) {
        let shown: String = source.chars().take(150).collect();
        println!("{per_unit:8.1} ns/unit  {elapsed:>10.2?}  {cost:>9} units  {end:<8} {shown}");
    }
    if let Some((worst, ..)) = rated.first() {
        println!("worst: {worst:.1} ns/unit");
    }
}
