//! `syntax::print` writes text that parses back to the same tree: checked on every corpus
//! expression and, with proptest, on generated expressions.

use std::path::PathBuf;

use ozcheck_analyzer::syntax::{ParseOptions, parse, print};
use ozcheck_analyzer::testing::normalise_ast;
use proptest::prelude::*;

fn options() -> ParseOptions {
    ParseOptions {
        max_bytes: 1 << 20,
        ..ParseOptions::default()
    }
}

/// Parses, prints, parses again; both trees must have the same normal form.
fn round_trip(source: &str) -> Result<(), String> {
    let Ok(first) = parse(source, &options()) else {
        return Ok(());
    };
    let printed = print(&first);
    let second = parse(&printed, &options())
        .map_err(|d| format!("{source:?} printed as {printed:?}, which does not parse: {d:?}"))?;
    let (a, b) = (normalise_ast(&first), normalise_ast(&second));
    if a == b {
        Ok(())
    } else {
        Err(format!("{source:?} printed as {printed:?}\n  {a}\n  {b}"))
    }
}

#[test]
fn every_corpus_expression_round_trips() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/cel-spec");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).expect("corpus") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        for line in std::fs::read_to_string(&path).expect("utf-8").lines() {
            let value: serde_json::Value = serde_json::from_str(line).expect("json");
            let source = value["expr"].as_str().expect("expr");
            round_trip(source).unwrap();
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} corpus expressions");
}

#[test]
fn printing_is_fully_parenthesised() {
    let ast = parse("a + b * -c.d[0] ? x : y", &options()).unwrap();
    assert_eq!(print(&ast), "((a + (b * -(c.d[0]))) ? x : y)");
    let ast = parse("l.exists_one(v, v.`a-b`) && has(m.in_)", &options()).unwrap();
    assert_eq!(print(&ast), "(l.exists_one(v, v.`a-b`) && has(m.in_))");
    // A negative literal under a unary minus keeps its parentheses, or it would cancel out.
    let ast = parse("-(-1)", &options()).unwrap();
    assert_eq!(print(&ast), "-(-1)");
}

/// Source text from a small CEL grammar: literals of every kind, names, operators, calls,
/// macros and aggregates.
fn expression() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(|i| i.to_string()),
        any::<u64>().prop_map(|u| format!("{u}u")),
        any::<f64>()
            .prop_filter("finite", |d| d.is_finite())
            .prop_map(|d| format!("{d:?}").replace("inf", "1.0")),
        "[a-z_][a-z0-9_]{0,4}".prop_filter("not a keyword", |s| !is_word(s)),
        "[ -~]{0,6}".prop_map(|s| format!("{s:?}")),
        Just("b'\\xff\\x00'".to_owned()),
        Just("r'\\n'".to_owned()),
        Just("'''a\r\nb'''".to_owned()),
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just(".root".to_owned()),
    ];
    leaf.prop_recursive(5, 40, 4, |inner| {
        prop_oneof![
            (
                inner.clone(),
                "[-+*/%]|==|!=|<|<=|>|>=|&&|\\|\\||in",
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("({a}) ? ({b}) : ({c})")),
            inner.clone().prop_map(|a| format!("!({a})")),
            inner.clone().prop_map(|a| format!("-({a})")),
            inner.clone().prop_map(|a| format!("({a}).field")),
            inner.clone().prop_map(|a| format!("({a}).`odd-name`")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a})[{b}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("f({a}, {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}).size({b})")),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| format!("[{}]", v.join(", "))),
            (inner.clone(), inner.clone()).prop_map(|(k, v)| format!("{{{k}: {v}}}")),
            inner.clone().prop_map(|v| format!("pkg.Msg{{f: {v}}}")),
            inner.clone().prop_map(|a| format!("has(({a}).f)")),
            (inner.clone(), inner.clone()).prop_map(|(r, p)| format!("({r}).all(x, {p})")),
            (inner.clone(), inner.clone()).prop_map(|(r, p)| format!("({r}).exists_one(x, {p})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(r, p, t)| format!("({r}).map(x, {p}, {t})")),
            (inner.clone(), inner).prop_map(|(r, p)| format!("({r}).filter(x, {p})")),
        ]
    })
}

fn is_word(s: &str) -> bool {
    matches!(
        s,
        "in" | "true"
            | "false"
            | "null"
            | "as"
            | "break"
            | "const"
            | "continue"
            | "else"
            | "for"
            | "function"
            | "if"
            | "import"
            | "let"
            | "loop"
            | "package"
            | "namespace"
            | "return"
            | "var"
            | "void"
            | "while"
    )
}

proptest! {
    #[test]
    fn parse_print_parse_gives_the_same_tree(source in expression()) {
        let first = parse(&source, &options());
        prop_assert!(first.is_ok(), "generated {source:?} does not parse: {first:?}");
        prop_assert_eq!(round_trip(&source), Ok(()));
    }

    #[test]
    fn arbitrary_text_never_panics_and_round_trips_when_it_parses(source in "\\PC{0,40}") {
        prop_assert_eq!(round_trip(&source), Ok(()));
    }
}
