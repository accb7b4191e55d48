//! Evaluation of the extension functions and macros filter authors write (strings, optional
//! types, two-variable comprehensions) on the realistic and the largest event of
//! `corpus/events`: ozcheck's metered evaluator beside the `cel` crate's interpreter in the same
//! group, as `benches/eval.rs` at the workspace root does for the standard library. Both bind the
//! event once and compile the program once; cel-rust runs in its standard environment with its
//! strings and lists extensions. Where cel-rust cannot compile or run an expression, the group
//! measures ozcheck alone and the reason is printed (BENCHMARKS.md lists it per row).
//!
//! A bench of the analyzer package so that it builds without the runtime's dependencies:
//! `cargo bench -p ozcheck-analyzer --bench ext`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use ozcheck_analyzer::EventBounds;
use ozcheck_analyzer::eval::{Activation, Event, Limits, Program};
use ozcheck_analyzer::syntax::{self, ParseOptions};

/// The benchmarks: name and expression.
const EXPRESSIONS: [(&str, &str); 5] = [
    ("lower_contains", "event.text.lowerAscii().contains('lgtm')"),
    (
        "split_exists",
        "event.text.split(' ').exists(w, w == 'fix')",
    ),
    (
        "opt_or_value",
        "event.attributes.?labels.orValue([]).size() > 0",
    ),
    (
        "exists2_map",
        "event.attributes.exists(k, v, k == 'conclusion' && v == 'success')",
    ),
    (
        "exists2_list",
        "event.attributes.a.exists(i, v, i > 0 && v == 'zz')",
    ),
];

fn corpus(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/events")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn program(expr: &str) -> Program {
    let ast = syntax::parse(expr, &ParseOptions::default()).expect("benchmark expressions parse");
    Program::new(ast).expect("benchmark expressions compile")
}

/// cel-rust's program for `expr` and its value on `context`, or why it has none.
fn cel_rust(
    env: &cel::Env,
    expr: &str,
    context: &cel::Context,
) -> Result<(cel::Program, cel::Value), String> {
    let program = env
        .compile(expr)
        .map_err(|e| format!("does not compile it: {e}"))?;
    let value = program
        .execute(context)
        .map_err(|e| format!("fails on it at run time: {e:?}"))?;
    Ok((program, value))
}

fn cel_rust_env() -> Arc<cel::Env> {
    let mut env = cel::Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .expect("the strings extension registers");
    env.add_extension(cel::extensions::lists)
        .expect("the lists extension registers");
    Arc::new(env)
}

fn ext_vs_cel_rust(c: &mut Criterion) {
    let limits = Limits::default();
    let env = cel_rust_env();
    for event_file in ["realistic.json", "max.json"] {
        let text = corpus(event_file);
        let event = Event::from_json(&text, &EventBounds::DEFAULT).expect("within bounds");
        let activation = Activation::event(&event);
        let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let mut context = cel::Context::with_env(env.clone());
        context.add_variable_from_value("event", cel::to_value(&json).expect("convertible"));
        let event_name = event_file.trim_end_matches(".json");
        for (name, expr) in EXPRESSIONS {
            let ours = program(expr);
            let value = ours
                .eval(&activation, &limits)
                .expect("ozcheck evaluates it");
            let ours_bool = value.value.to_json().as_bool().expect("a boolean");
            let mut group = c.benchmark_group(format!("ext/{name}/{event_name}"));
            group.bench_function("ozcheck", |b| {
                b.iter(|| black_box(ours.eval(black_box(&activation), &limits)));
            });
            match cel_rust(&env, expr, &context) {
                Ok((theirs, their_value)) => {
                    assert_eq!(
                        their_value,
                        cel::Value::Bool(ours_bool),
                        "{name} on {event_name}: both give the same value"
                    );
                    group.bench_function("cel-rust", |b| {
                        b.iter(|| black_box(theirs.execute(black_box(&context))));
                    });
                }
                Err(why) => eprintln!("ext/{name}/{event_name}: cel-rust {why}"),
            }
            group.finish();
        }
    }
}

criterion_group!(benches, ext_vs_cel_rust);
criterion_main!(benches);
