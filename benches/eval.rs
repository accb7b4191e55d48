//! Evaluation benchmarks: the eight expressions of `corpus/events/expressions.json` on the
//! realistic and the largest event, ozcheck's metered evaluator next to the `cel` crate's
//! interpreter in the same group; both bind the event once and compile the program once. Also the
//! nested `exists` on the adversarial event, which the meter stops at the default limit.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use ozcheck_analyzer::EventBounds;
use ozcheck_analyzer::eval::{Activation, Event, Limits, Program};
use ozcheck_analyzer::syntax::{self, ParseOptions};

fn corpus(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/events")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn program(expr: &str) -> Program {
    let ast = syntax::parse(expr, &ParseOptions::default()).expect("benchmark expressions parse");
    Program::new(ast).expect("benchmark expressions compile")
}

include!("shared/expressions.rs");

fn expressions() -> Vec<(String, String)> {
    expressions_of(&corpus("expressions.json"))
}

fn eval_vs_cel_rust(c: &mut Criterion) {
    let limits = Limits::default();
    for event_file in ["realistic.json", "max.json"] {
        let text = corpus(event_file);
        let event = Event::from_json(&text, &EventBounds::DEFAULT).expect("within bounds");
        let activation = Activation::event(&event);
        let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let mut context = cel::Context::default();
        context.add_variable_from_value("event", cel::to_value(&json).expect("convertible"));
        let event_name = event_file.trim_end_matches(".json");
        for (name, expr) in expressions() {
            let ours = program(&expr);
            let theirs = cel::Program::compile(&expr).expect("cel-rust parses it");
            let mut group = c.benchmark_group(format!("eval/{name}/{event_name}"));
            // The nested loops over the largest event take cel-rust about half a second per call.
            if event_file == "max.json" && name == "adv_nested_exists" {
                group
                    .sample_size(10)
                    .measurement_time(Duration::from_secs(8));
            }
            group.bench_function("ozcheck", |b| {
                b.iter(|| black_box(ours.eval(black_box(&activation), &limits)));
            });
            group.bench_function("cel-rust", |b| {
                b.iter(|| black_box(theirs.execute(black_box(&context))));
            });
            group.finish();
        }
    }
}

fn meter_stops_nested_exists(c: &mut Criterion) {
    let event =
        Event::from_json(&corpus("adv_int8k.json"), &EventBounds::DEFAULT).expect("within bounds");
    let activation = Activation::event(&event);
    let nested = program("event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))");
    let limits = Limits::default();
    c.bench_function(
        "eval/adv_nested_exists/adv_int8k/ozcheck-default-limit",
        |b| {
            b.iter(|| {
                let result = nested.eval(black_box(&activation), &limits);
                assert!(result.is_err(), "the default limit stops it");
                black_box(result)
            });
        },
    );
}

fn bind_event(c: &mut Criterion) {
    for event_file in ["realistic.json", "max.json"] {
        let text = corpus(event_file);
        c.bench_function(
            &format!("bind/{}", event_file.trim_end_matches(".json")),
            |b| {
                b.iter(|| black_box(Event::from_json(black_box(&text), &EventBounds::DEFAULT)));
            },
        );
    }
}

criterion_group!(
    benches,
    eval_vs_cel_rust,
    meter_stops_nested_exists,
    bind_event
);
criterion_main!(benches);
