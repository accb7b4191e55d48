//! The evaluator benchmarks of `benches/eval.rs`, with two builds of the analyzer linked into one
//! binary (`old`: an earlier commit, `new`: this tree) and measured in the same criterion group,
//! one after the other. Comparing two bench binaries mixes the change with where each binary's
//! code happens to lie: the unchanged cel-rust rows of `eval.rs` moved by ±20% between two
//! binaries. Here both evaluators share one binary, one run and one machine state.
//!
//! Not a target of the workspace: `benches/side-by-side.sh OLD_TREE` builds it in a scratch
//! package that depends on both analyzers. `ORDER=new-first` measures `new` first in each group.

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};

/// The calls both commits share, on one analyzer crate.
macro_rules! suite {
    ($module:ident, $krate:ident) => {
        mod $module {
            use std::hint::black_box;

            use $krate::EventBounds;
            use $krate::eval::{Activation, Event, Limits, Program};
            use $krate::syntax::{self, ParseOptions};

            pub struct Case {
                program: Program,
                activation: Activation,
                limits: Limits,
            }

            pub fn case(event_text: &str, expr: &str) -> Case {
                let event = Event::from_json(event_text, &EventBounds::DEFAULT)
                    .expect("the benchmark events are within bounds");
                let ast = syntax::parse(expr, &ParseOptions::default())
                    .expect("benchmark expressions parse");
                Case {
                    program: Program::new(ast).expect("benchmark expressions compile"),
                    activation: Activation::event(&event),
                    limits: Limits::default(),
                }
            }

            #[inline(never)]
            pub fn eval(case: &Case) -> bool {
                black_box(case.program.eval(black_box(&case.activation), &case.limits)).is_ok()
            }

            #[inline(never)]
            pub fn bind(text: &str) -> bool {
                black_box(Event::from_json(black_box(text), &EventBounds::DEFAULT)).is_ok()
            }
        }
    };
}

suite!(old, analyzer_old);
suite!(new, analyzer_new);

fn corpus(name: &str) -> String {
    let dir = std::env::var("OZCHECK_EVENTS").expect("OZCHECK_EVENTS names corpus/events");
    let path = std::path::Path::new(&dir).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn new_first() -> bool {
    std::env::var("ORDER").is_ok_and(|o| o == "new-first")
}

include!("../shared/expressions.rs");

fn expressions() -> Vec<(String, String)> {
    expressions_of(&corpus("expressions.json"))
}

/// Measures `old` and `new` in `group`, one after the other, in the order `ORDER` asks for.
fn both(
    group: &mut BenchmarkGroup<'_, WallTime>,
    mut old: impl FnMut() -> bool,
    mut new: impl FnMut() -> bool,
) {
    if new_first() {
        group.bench_function("new", |b| b.iter(&mut new));
        group.bench_function("old", |b| b.iter(&mut old));
    } else {
        group.bench_function("old", |b| b.iter(&mut old));
        group.bench_function("new", |b| b.iter(&mut new));
    }
}

fn evaluations(c: &mut Criterion) {
    for event_name in ["realistic", "max", "adv_int8k"] {
        let text = corpus(&format!("{event_name}.json"));
        for (name, expr) in expressions() {
            if event_name == "adv_int8k" && name != "adv_nested_exists" {
                continue;
            }
            let (old_case, new_case) = (old::case(&text, &expr), new::case(&text, &expr));
            let mut group = c.benchmark_group(format!("eval/{name}/{event_name}"));
            if event_name == "max" && name == "adv_nested_exists" {
                group.sample_size(20);
            }
            both(&mut group, || old::eval(&old_case), || new::eval(&new_case));
            group.finish();
        }
    }
}

fn binding(c: &mut Criterion) {
    for event_name in ["realistic", "max"] {
        let text = corpus(&format!("{event_name}.json"));
        let mut group = c.benchmark_group(format!("bind/{event_name}"));
        both(
            &mut group,
            || old::bind(black_box(&text)),
            || new::bind(black_box(&text)),
        );
        group.finish();
    }
}

criterion_group!(benches, evaluations, binding);
criterion_main!(benches);
