//! Time of the static cost estimate for the bench expressions of corpus/events/expressions.json
//! and the 1024-byte `expr_1024`: the estimate alone (on an expression checked once) and the
//! whole save-path check (parse, check, estimate).

use criterion::{Criterion, criterion_group, criterion_main};
use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::{Options, check_filter, compile, cost};

include!("shared/expressions.rs");

fn expressions() -> Vec<(String, String)> {
    let text = include_str!("../corpus/events/expressions.json");
    let corpus: serde_json::Value = serde_json::from_str(text).expect("expressions.json");
    let mut out = expressions_of(text);
    out.push((
        "expr_1024".to_owned(),
        corpus["expr_1024"].as_str().expect("expr_1024").to_owned(),
    ));
    out
}

fn estimate(c: &mut Criterion) {
    let env = Env::filter();
    let options = Options::default();
    let mut group = c.benchmark_group("estimate");
    for (name, source) in expressions() {
        let checked = compile(&source, &env, &options).expect("bench expressions compile");
        group.bench_function(&name, |b| {
            b.iter(|| cost::estimate(std::hint::black_box(&checked), &env, &options));
        });
    }
    group.finish();
    let mut group = c.benchmark_group("check_filter");
    for (name, source) in expressions() {
        group.bench_function(&name, |b| {
            b.iter(|| check_filter(std::hint::black_box(&source), &options));
        });
    }
    group.finish();
}

criterion_group!(benches, estimate);
criterion_main!(benches);
