//! The checker through the public API: types deduced, names resolved, and the diagnostics (code,
//! exact span, help) for what it refuses.

use ozcheck_analyzer::check::{Env, Expected, SizeHint, StepDecl, StepKind, check};
use ozcheck_analyzer::syntax::{ParseOptions, parse};
use ozcheck_analyzer::types::Type;
use ozcheck_analyzer::{Diagnostic, Options, compile};

fn type_of(source: &str, env: &Env) -> String {
    let checked =
        compile(source, env, &Options::default()).unwrap_or_else(|d| panic!("{source}: {d:?}"));
    checked.result_type().to_string()
}

fn errors(source: &str, env: &Env) -> Vec<Diagnostic> {
    let ast = parse(source, &ParseOptions::default()).expect("parses");
    check(ast, env).expect_err("refused")
}

fn snippet<'a>(source: &'a str, d: &Diagnostic) -> &'a str {
    &source[d.span.start as usize..d.span.end as usize]
}

#[test]
fn filter_expressions_get_their_types() {
    // Any result type, to see the types of sub-expressions a filter would compare.
    let env = Env::filter().expecting(Expected::Any);
    assert_eq!(type_of("event.action == 'opened'", &env), "bool");
    assert_eq!(type_of("event.text", &env), "string");
    assert_eq!(type_of("event.attributes", &env), "map(string, dyn)");
    assert_eq!(type_of("event.attributes.labels", &env), "dyn");
    assert_eq!(type_of("event.text.size()", &env), "int");
    assert_eq!(type_of("size(event.attributes)", &env), "int");
    assert_eq!(
        type_of("event.attributes.a.map(x, x + x)", &env),
        "list(dyn)"
    );
    assert_eq!(
        type_of("[event.id, event.type].filter(s, s != '')", &env),
        "list(string)"
    );
    assert_eq!(type_of("event.attributes['k'] == 1", &env), "bool");
    assert_eq!(type_of("has(event.attributes.draft)", &env), "bool");
    assert_eq!(type_of("event.text.matches('^fix')", &env), "bool");
    assert_eq!(type_of("type(event.text) == string", &env), "bool");
}

#[test]
fn literals_and_collections_join_their_types() {
    let env = Env::general();
    assert_eq!(type_of("{'abc': 123}", &env), "map(string, int)");
    assert_eq!(
        type_of("[[], [[]], [[[]]]]", &env),
        "list(list(list(list(dyn))))"
    );
    assert_eq!(type_of("[1, 'a']", &env), "list(dyn)");
    assert_eq!(type_of("true ? 1 : 2", &env), "int");
    assert_eq!(
        type_of("timestamp('2009-02-13T23:31:30Z') - duration('1h')", &env),
        "google.protobuf.Timestamp"
    );
    assert_eq!(type_of("1 < 2u && 2.0 > 1", &env), "bool");
    assert_eq!(type_of("type(1)", &env), "type(int)");
}

#[test]
fn general_environment_resolves_declared_and_dotted_names() {
    let env = Env::general()
        .declare("x", Type::Int, SizeHint::default())
        .declare("a.b.c", Type::String, SizeHint::max(10))
        .declare(
            "m",
            Type::map(Type::String, Type::list(Type::Int)),
            SizeHint::default(),
        );
    assert_eq!(type_of("x + 1", &env), "int");
    assert_eq!(type_of("a.b.c", &env), "string");
    assert_eq!(type_of("m.k", &env), "list(int)");
    assert_eq!(type_of("m.all(k, m[k].size() > 0)", &env), "bool");
    // The iteration variable shadows a declared variable of the same name.
    assert_eq!(type_of("['s'].all(x, x == 's')", &env), "bool");
}

#[test]
fn unknown_event_field_points_at_the_field_with_a_suggestion() {
    let source = "event.atributes.draft == false";
    let errs = errors(source, &Env::filter());
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].code, "unknown-field");
    assert_eq!(snippet(source, &errs[0]), "atributes");
    assert_eq!(errs[0].help.as_deref(), Some("did you mean `attributes`?"));
}

#[test]
fn other_variables_are_unknown_in_a_filter() {
    let source = "event.id == trigger.event.id";
    let errs = errors(source, &Env::filter());
    assert_eq!(errs[0].code, "unknown-variable");
    assert_eq!(snippet(source, &errs[0]), "trigger");
    assert!(errs[0].help.as_deref().unwrap().contains("`event` alone"));
    // The same names are fine where they exist.
    let when = Env::when(true, &[]).expecting(Expected::Any);
    assert_eq!(type_of("trigger.event.id", &when), "string");
}

#[test]
fn unknown_functions_and_bad_arguments() {
    let source = "event.text.contians('LGTM')";
    let errs = errors(source, &Env::filter());
    assert_eq!(errs[0].code, "unknown-function");
    assert_eq!(snippet(source, &errs[0]), "contians");
    assert_eq!(errs[0].help.as_deref(), Some("did you mean `contains`?"));

    let source = "event.action == 'x' && event.text.contains(1)";
    let errs = errors(source, &Env::filter());
    assert_eq!(errs[0].code, "no-matching-overload");
    assert_eq!(snippet(source, &errs[0]), "event.text.contains(1)");
    assert!(
        errs[0].message.contains("string.contains(int)"),
        "{}",
        errs[0].message
    );
}

#[test]
fn operators_need_matching_types() {
    for (source, culprit) in [
        ("event.action == 1", "event.action == 1"),
        ("event.id != '' && event.text > 5", "event.text > 5"),
        ("!event.text", "!event.text"),
        ("event.text + 1 == ''", "event.text + 1"),
        ("-event.text == ''", "-event.text"),
        ("event.text in 'abc'", "event.text in 'abc'"),
    ] {
        let errs = errors(source, &Env::filter());
        assert_eq!(errs[0].code, "no-matching-overload", "{source}");
        assert_eq!(snippet(source, &errs[0]), culprit, "{source}");
    }
    // Comparing with null, and anything with dyn, is fine.
    assert_eq!(
        type_of("event.attributes.x == null", &Env::filter()),
        "bool"
    );
    assert_eq!(type_of("event.attributes.n > 5", &Env::filter()), "bool");
}

#[test]
fn several_errors_are_reported_together() {
    let source = "event.atributes.x == 1 || event.txt == 'a' || foo(1)";
    let errs = errors(source, &Env::filter());
    let codes: Vec<_> = errs.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        ["unknown-field", "unknown-field", "unknown-function"]
    );
}

#[test]
fn when_sees_only_earlier_steps_and_their_outputs() {
    let steps = [
        StepDecl {
            id: "wait_review".into(),
            kind: StepKind::WaitForEvent,
        },
        StepDecl {
            id: "approve".into(),
            kind: StepKind::Approval,
        },
    ];
    let env = Env::when(true, &steps);
    assert_eq!(type_of("steps.wait_review.matched", &env), "bool");
    assert_eq!(type_of("steps.wait_review.event.attributes.x", &env), "dyn");
    assert_eq!(type_of("steps.approve.approved", &env), "bool");

    let source = "steps.later.matched";
    let errs = errors(source, &env);
    assert_eq!(errs[0].code, "unknown-field");
    assert_eq!(snippet(source, &errs[0]), "later");
    assert!(errs[0].message.contains("no earlier step"));

    let source = "steps.approve.event.id == ''";
    let errs = errors(source, &env);
    assert_eq!(snippet(source, &errs[0]), "event");
}

#[test]
fn iteration_needs_a_list_or_map() {
    let source = "event.text.exists(c, c == 'a')";
    let errs = errors(source, &Env::filter());
    assert_eq!(errs[0].code, "not-iterable");
    assert_eq!(snippet(source, &errs[0]), "event.text");
    let source = "[1, 2].all(x, x + 1)";
    let errs = errors(source, &Env::general());
    assert_eq!(snippet(source, &errs[0]), "x + 1");
}

#[test]
fn filters_and_whens_must_be_bool_and_senders_strings() {
    for source in [
        "size(event.text)",
        "event.subject",
        "1 + 2",
        "event.attributes.a.map(x, x)",
    ] {
        let errs = errors(source, &Env::filter());
        assert_eq!(errs.len(), 1, "{source}: {errs:?}");
        assert_eq!(errs[0].code, "wrong-result-type", "{source}");
        assert_eq!(snippet(source, &errs[0]), source);
        assert!(
            errs[0]
                .message
                .starts_with("a filter must give a bool, but this one gives ")
        );
    }
    let errs = errors("size(event.text)", &Env::filter());
    assert_eq!(
        errs[0].message,
        "a filter must give a bool, but this one gives int"
    );
    assert_eq!(errs[0].label, "this is int");
    // `dyn` passes: its value is checked when it runs.
    assert_eq!(type_of("event.attributes.draft", &Env::filter()), "dyn");
    assert_eq!(type_of("event.attributes.sender", &Env::sender()), "dyn");
    assert_eq!(type_of("event.subject", &Env::sender()), "string");
    let errs = errors("event.text.size() > 0", &Env::sender());
    assert_eq!(
        errs[0].message,
        "a sender expression must give a string, but this one gives bool"
    );
    let when = Env::when(true, &[]);
    assert_eq!(
        errors("trigger.event.id", &when)[0].code,
        "wrong-result-type"
    );
    assert_eq!(type_of("trigger.event.id != ''", &when), "bool");
    // Templates take any type.
    assert_eq!(
        type_of("trigger.event.id", &Env::template(true, &[])),
        "string"
    );
    // Other errors come first: the result type of a broken expression is not judged.
    let errs = errors("event.nope", &Env::filter());
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].code, "unknown-field");
}

#[test]
fn the_branches_of_a_conditional_must_agree() {
    let env = Env::general();
    for source in [
        "true ? 1 : true",
        "true ? 'a' : 1u",
        "true ? [1] : ['a']",
        "true ? null : 1",
    ] {
        let errs = errors(source, &env);
        assert_eq!(errs[0].code, "no-matching-overload", "{source}");
        assert!(
            errs[0]
                .message
                .starts_with("the branches of `? :` must have one type")
        );
    }
    let errs = errors("true ? 1 : true", &env);
    assert_eq!(
        errs[0].message,
        "the branches of `? :` must have one type, not int and bool"
    );
    assert_eq!(snippet("true ? 1 : true", &errs[0]), "true");
    // `dyn` joins anything, and empty lists take the other branch's element type.
    assert_eq!(type_of("true ? 1 : dyn(true)", &env), "dyn");
    assert_eq!(type_of("true ? [] : [1]", &env), "list(int)");
    assert_eq!(type_of("true ? 1 : 2", &env), "int");
    // A filter's branches must agree and give a bool.
    let errs = errors("event.text == '' ? 1 : true", &Env::filter());
    assert_eq!(errs[0].code, "no-matching-overload");
}

/// A map keyed by its own value (`{x: x}`) is an error, reported once: the key type then says
/// nothing more, or down a chain of `map`s the type would hold its operand twice at every step
/// (fourteen steps: a type of 2^14 parts in every message; forty did not end).
#[test]
fn a_map_keyed_by_a_map_does_not_double_its_type_down_a_chain() {
    let chain: String = (0..14).map(|_| ".map(x, {x: x})").collect();
    let source = format!("event.attributes.a{chain}.size() > 0");
    let found = errors(&source, &Env::filter());
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|d| d.code == "no-matching-overload"),
        "{found:?}"
    );
    for d in &found {
        assert!(
            d.message.len() < 400,
            "{} bytes: {}",
            d.message.len(),
            d.message
        );
    }
}
