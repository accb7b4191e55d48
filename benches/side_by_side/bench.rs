//! The evaluator benchmarks of `benches/eval.rs`, with two builds of the analyzer linked into one
//! binary (`old`: an earlier commit, `new`: this tree) and measured in the same criterion group,
//! one after the other. Comparing two bench binaries mixes the change with where each binary's
//! code happens to lie: the unchanged cel-rust rows of `eval.rs` moved by ±20% between two
//! binaries. Here both evaluators share one binary, one run and one machine state.
//!
//! Not a target of the workspace: `benches/side-by-side.sh OLD_TREE` builds it in a scratch
//! package that depends on both analyzers. `ORDER=new-first` measures `new` first in each group.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

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

fn evaluations(c: &mut Criterion) {
    let mut events: Vec<(&str, String)> = ["realistic", "max"]
        .into_iter()
        .map(|e| (e, format!("{e}.json")))
        .collect();
    events.push(("adv_int8k", "adv_int8k.json".into()));
    for (event_name, file) in events {
        let text = corpus(&file);
        for (name, expr) in expressions() {
            if event_name == "adv_int8k" && name != "adv_nested_exists" {
                continue;
            }
            let (old_case, new_case) = (old::case(&text, &expr), new::case(&text, &expr));
            let mut group = c.benchmark_group(format!("eval/{name}/{event_name}"));
            if event_name == "max" && name == "adv_nested_exists" {
                group.sample_size(20);
            }
            let mut old_run = |g: &mut criterion::BenchmarkGroup<'_, _>| {
                g.bench_function("old", |b| b.iter(|| old::eval(&old_case)));
            };
            let mut new_run = |g: &mut criterion::BenchmarkGroup<'_, _>| {
                g.bench_function("new", |b| b.iter(|| new::eval(&new_case)));
            };
            if new_first() {
                new_run(&mut group);
                old_run(&mut group);
            } else {
                old_run(&mut group);
                new_run(&mut group);
            }
            group.finish();
        }
    }
}

fn binding(c: &mut Criterion) {
    for event_name in ["realistic", "max"] {
        let text = corpus(&format!("{event_name}.json"));
        let mut group = c.benchmark_group(format!("bind/{event_name}"));
        let order: [&str; 2] = if new_first() {
            ["new", "old"]
        } else {
            ["old", "new"]
        };
        for which in order {
            group.bench_function(which, |b| {
                b.iter(|| {
                    if which == "old" {
                        old::bind(black_box(&text))
                    } else {
                        new::bind(black_box(&text))
                    }
                });
            });
        }
        group.finish();
    }
}

criterion_group!(benches, evaluations, binding);
criterion_main!(benches);
