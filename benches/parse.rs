//! Front-end speed: our parser, our parse + check, and the whole save-path call
//! (`check_filter`: parse, check and worst-case estimate) against the `cel` crate's ANTLR parser
//! (the differential oracle) and its hidden Pratt parser, side by side in one group, on the
//! event-filter expressions of corpus/events/expressions.json and its 1,024-byte `expr_1024`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::syntax::{ParseOptions, parse};
use ozcheck_analyzer::{Options, check_filter, compile};

fn expressions() -> Vec<(String, String)> {
    let text = include_str!("../corpus/events/expressions.json");
    let json: serde_json::Value = serde_json::from_str(text).expect("expressions.json is JSON");
    let mut out: Vec<(String, String)> = json["expressions"]
        .as_array()
        .expect("an expressions array")
        .iter()
        .map(|e| {
            let name = e["name"].as_str().expect("name").to_owned();
            let expr = e["expr"].as_str().expect("expr").to_owned();
            (name, expr)
        })
        .collect();
    let long = json["expr_1024"].as_str().expect("expr_1024").to_owned();
    out.push(("expr_1024".to_owned(), long));
    out
}

fn parse_group(c: &mut Criterion) {
    let options = ParseOptions::default();
    let check_options = Options::default();
    let env = Env::filter();
    let mut group = c.benchmark_group("parse");
    for (name, expr) in expressions() {
        assert!(parse(&expr, &options).is_ok(), "{name} must parse");
        assert!(
            compile(&expr, &env, &check_options).is_ok(),
            "{name} must check"
        );
        group.bench_with_input(BenchmarkId::new("ozcheck", &name), &expr, |b, e| {
            b.iter(|| parse(black_box(e), &options));
        });
        group.bench_with_input(
            BenchmarkId::new("ozcheck-parse+check", &name),
            &expr,
            |b, e| {
                b.iter(|| compile(black_box(e), &env, &check_options));
            },
        );
        group.bench_with_input(
            BenchmarkId::new("ozcheck-check_filter", &name),
            &expr,
            |b, e| {
                b.iter(|| check_filter(black_box(e), &check_options));
            },
        );
        group.bench_with_input(BenchmarkId::new("cel-antlr", &name), &expr, |b, e| {
            b.iter(|| {
                cel::parser::Parser::new()
                    .enable_ident_escape_syntax(true)
                    .parse(black_box(e))
            });
        });
        group.bench_with_input(BenchmarkId::new("cel-pratt", &name), &expr, |b, e| {
            b.iter(|| {
                cel::parser::PrattParser::new()
                    .enable_ident_escape_syntax(true)
                    .parse(black_box(e))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, parse_group);
criterion_main!(benches);
