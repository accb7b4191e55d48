//! Evaluator tests over hand-built ASTs, through the public `Program` entry point.

// Short names keep the hand-built trees readable next to the expressions they spell.
#![allow(clippy::many_single_char_names)]

use std::sync::Arc;
use std::time::Duration as StdDuration;

use super::*;
use crate::cost::table;
use crate::syntax::{BinaryOp, Comprehension, ExprKind, Literal, MacroKind, Node, Span, UnaryOp};

/// Builds ASTs children-first, as the parser does.
#[derive(Default)]
struct B {
    nodes: Vec<Node>,
}

impl B {
    fn push(&mut self, kind: ExprKind) -> NodeId {
        self.nodes.push(Node {
            kind,
            span: Span::new(0, 1),
        });
        (self.nodes.len() - 1) as NodeId
    }
    fn int(&mut self, i: i64) -> NodeId {
        self.push(ExprKind::Literal(Literal::Int(i)))
    }
    fn str(&mut self, s: &str) -> NodeId {
        self.push(ExprKind::Literal(Literal::String(s.into())))
    }
    fn ident(&mut self, name: &str) -> NodeId {
        self.push(ExprKind::Ident {
            name: name.into(),
            rooted: false,
        })
    }
    fn select(&mut self, operand: NodeId, field: &str) -> NodeId {
        self.push(ExprKind::Select {
            operand,
            field: field.into(),
            field_span: Span::default(),
        })
    }
    fn bin(&mut self, op: BinaryOp, lhs: NodeId, rhs: NodeId) -> NodeId {
        self.push(ExprKind::Binary { op, lhs, rhs })
    }
    fn call(&mut self, target: Option<NodeId>, function: &str, args: Vec<NodeId>) -> NodeId {
        self.push(ExprKind::Call {
            target,
            function: function.into(),
            name_span: Span::default(),
            args,
        })
    }
    fn list(&mut self, items: Vec<NodeId>) -> NodeId {
        self.push(ExprKind::List {
            items,
            optional_indices: Vec::new(),
        })
    }
    fn macro_(
        &mut self,
        kind: MacroKind,
        range: NodeId,
        var: &str,
        predicate: Option<NodeId>,
        transform: Option<NodeId>,
    ) -> NodeId {
        self.push(ExprKind::Comprehension(Box::new(Comprehension {
            kind,
            range,
            var: var.into(),
            var_span: Span::default(),
            var2: None,
            predicate,
            transform,
        })))
    }
    /// `event.attributes.<field>`.
    fn attr(&mut self, field: &str) -> NodeId {
        let e = self.ident("event");
        let a = self.select(e, "attributes");
        self.select(a, field)
    }
    fn program(self) -> Program {
        Program::new(Ast::from_nodes(self.nodes).expect("non-empty")).expect("valid program")
    }
}

fn run(
    program: &Program,
    activation: &Activation,
    limit: Option<u64>,
) -> Result<Evaluation, EvalError> {
    let limits = Limits::default()
        .with_cost(limit)
        .with_clock(Arc::new(ManualClock::new()));
    program.eval(activation, &limits)
}

fn event(attributes: &str) -> Event {
    let json = format!(
        r#"{{"id":"1","source":"s","type":"t","text":"hello world","attributes":{attributes}}}"#
    );
    Event::from_json(&json, &EventBounds::DEFAULT).expect("valid event")
}

fn adv_int8k() -> Event {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus/events/adv_int8k.json"
    ))
    .expect("corpus event");
    Event::from_json(&text, &EventBounds::DEFAULT).expect("within bounds")
}

use crate::EventBounds;

#[test]
fn a_limit_that_exactly_fits_passes_and_one_less_stops() {
    // [1, 2] + [3]: two list literals (10 + 2 and 10 + 1) and the concatenation (1 + 3).
    let mut b = B::default();
    let (one, two, three) = (b.int(1), b.int(2), b.int(3));
    let l = b.list(vec![one, two]);
    let r = b.list(vec![three]);
    b.bin(BinaryOp::Add, l, r);
    let program = b.program();
    let act = Activation::new();
    let full = run(&program, &act, None).unwrap();
    let expected = 2 * table::LIST_CREATE
        + table::alloc_list(2)
        + table::alloc_list(1)
        + table::CALL
        + table::alloc_list(3);
    assert_eq!(full.cost, expected);
    assert!(run(&program, &act, Some(expected)).is_ok());
    assert_eq!(
        run(&program, &act, Some(expected - 1)).unwrap_err(),
        EvalError::Stopped(Stop::CostLimit { cost: expected })
    );
}

#[test]
fn string_concat_charges_the_bytes_it_builds() {
    let mut b = B::default();
    let x = b.str("abcdefghij");
    let y = b.str("klmnopqrstu");
    b.bin(BinaryOp::Add, x, y);
    let result = run(&b.program(), &Activation::new(), None).unwrap();
    assert_eq!(result.cost, table::concat(10, 11) + table::alloc_bytes(21));
    assert!(matches!(result.value, Value::String(s) if &*s == "abcdefghijklmnopqrstu"));
}

#[test]
fn map_and_filter_charge_per_element_and_allocation() {
    // event.attributes.a.map(x, x + x).filter(y, y.size() > 3)
    let ev = event(r#"{"a":["ab","abc"]}"#);
    let mut b = B::default();
    let range = b.attr("a");
    let x1 = b.ident("x");
    let x2 = b.ident("x");
    let doubled = b.bin(BinaryOp::Add, x1, x2);
    let mapped = b.macro_(MacroKind::Map, range, "x", None, Some(doubled));
    let y = b.ident("y");
    let size = b.call(Some(y), "size", vec![]);
    let three = b.int(3);
    let pred = b.bin(BinaryOp::Gt, size, three);
    b.macro_(MacroKind::Filter, mapped, "y", Some(pred), None);
    let result = run(&b.program(), &Activation::event(&ev), None).unwrap();
    let Value::List(items) = &result.value else {
        panic!("a list")
    };
    assert_eq!(items.len(), 2);
    let concat = |n: u64| 2 * table::SELECT + table::concat(n, n) + table::alloc_bytes(2 * n);
    let map_cost = table::MAP_FILTER_FIXED
        + 2 * (table::MAP_APPEND + table::alloc_list(1))
        + concat(2)
        + concat(3);
    let filter_cost = table::MAP_FILTER_FIXED
        + 2 * (table::SELECT + 2 * table::CALL)
        + 2 * (table::FILTER_APPEND + table::alloc_list(1));
    assert_eq!(result.cost, 3 * table::SELECT + map_cost + filter_cost);
}

#[test]
fn errors_are_absorbed_by_logic_and_quantifiers() {
    // (1 / 0 == 1) || true  → true;  [0, 1].exists(x, 1 / x == 1) → true; all with an error → error
    let mut b = B::default();
    let one = b.int(1);
    let zero = b.int(0);
    let div = b.bin(BinaryOp::Div, one, zero);
    let one2 = b.int(1);
    let eq = b.bin(BinaryOp::Eq, div, one2);
    let t = b.push(ExprKind::Literal(Literal::Bool(true)));
    b.bin(BinaryOp::Or, eq, t);
    assert!(matches!(
        run(&b.program(), &Activation::new(), None).unwrap().value,
        Value::Bool(true)
    ));

    for (kind, expect_ok) in [(MacroKind::Exists, true), (MacroKind::All, false)] {
        let mut b = B::default();
        let (z, o) = (b.int(0), b.int(1));
        let range = b.list(vec![z, o]);
        let one = b.int(1);
        let x = b.ident("x");
        let div = b.bin(BinaryOp::Div, one, x);
        let one2 = b.int(1);
        let pred = b.bin(BinaryOp::Eq, div, one2);
        b.macro_(kind, range, "x", Some(pred), None);
        let result = run(&b.program(), &Activation::new(), None);
        assert_eq!(result.is_ok(), expect_ok, "{kind:?}: {result:?}");
    }
}

#[test]
fn arithmetic_overflow_and_division_errors() {
    for (op, a, c, message) in [
        (BinaryOp::Add, i64::MAX, 1, "overflow"),
        (BinaryOp::Div, 1, 0, "division by zero"),
        (BinaryOp::Rem, 1, 0, "modulus by zero"),
        (BinaryOp::Div, i64::MIN, -1, "overflow"),
    ] {
        let mut b = B::default();
        let x = b.int(a);
        let y = b.int(c);
        b.bin(op, x, y);
        match run(&b.program(), &Activation::new(), None) {
            Err(EvalError::Runtime { message: m, .. }) => assert!(m.contains(message), "{m}"),
            other => panic!("expected an error, got {other:?}"),
        }
    }
    let mut b = B::default();
    let x = b.int(i64::MIN);
    b.push(ExprKind::Unary {
        op: UnaryOp::Neg,
        operand: x,
    });
    assert!(run(&b.program(), &Activation::new(), None).is_err());
}

/// `event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))`.
fn nested_exists() -> Program {
    let mut b = B::default();
    let a = b.attr("a");
    let inner_range = b.attr("b");
    let x = b.ident("x");
    let y = b.ident("y");
    let eq = b.bin(BinaryOp::Eq, x, y);
    let inner = b.macro_(MacroKind::Exists, inner_range, "y", Some(eq), None);
    b.macro_(MacroKind::Exists, a, "x", Some(inner), None);
    b.program()
}

#[test]
fn nested_exists_on_adv_int8k_stops_at_the_default_limit() {
    let ev = adv_int8k();
    let limits = Limits::default().with_clock(Arc::new(ManualClock::new()));
    let err = nested_exists().eval_event(&ev, &limits).unwrap_err();
    assert!(
        matches!(err, EvalError::Stopped(Stop::CostLimit { cost }) if cost > table::DEFAULT_COST_LIMIT)
    );
}

#[test]
fn nested_exists_without_a_limit_stops_at_the_deadline() {
    let ev = adv_int8k();
    // Every read of the clock moves it 1 ms: the 250 ms deadline passes after 250 reads,
    // deterministically and without sleeping.
    let limits = Limits::default()
        .with_cost(None)
        .with_clock(Arc::new(ManualClock::stepping(StdDuration::from_millis(1))));
    let err = nested_exists().eval_event(&ev, &limits).unwrap_err();
    assert!(
        matches!(err, EvalError::Stopped(Stop::Deadline { .. })),
        "{err:?}"
    );
}

#[test]
fn deadline_in_the_past_stops_a_loop() {
    let ev = adv_int8k();
    let clock = Arc::new(ManualClock::new());
    let limits = Limits::default()
        .with_cost(None)
        .with_deadline(StdDuration::ZERO)
        .with_clock(clock);
    let err = nested_exists().eval_event(&ev, &limits).unwrap_err();
    assert!(matches!(err, EvalError::Stopped(Stop::Deadline { .. })));
}

#[test]
fn invalid_constant_regex_is_a_diagnostic_on_the_pattern() {
    let mut b = B::default();
    let s = b.str("x");
    let p = b.push(ExprKind::Literal(Literal::String("a(".into())));
    b.nodes[p as usize].span = Span::new(10, 14);
    b.call(Some(s), "matches", vec![p]);
    let err = Program::new(Ast::from_nodes(b.nodes).unwrap()).unwrap_err();
    assert_eq!(err[0].code, "invalid-regex");
    assert_eq!(err[0].span, Span::new(10, 14));
}

#[test]
fn malformed_and_deep_asts_are_refused() {
    let mut b = B::default();
    b.push(ExprKind::Unary {
        op: UnaryOp::Not,
        operand: 5,
    });
    assert_eq!(
        Program::new(Ast::from_nodes(b.nodes).unwrap()).unwrap_err()[0].code,
        "malformed-ast"
    );
    let mut b = B::default();
    let mut id = b.int(1);
    for _ in 0..MAX_DEPTH {
        id = b.push(ExprKind::Unary {
            op: UnaryOp::Neg,
            operand: id,
        });
    }
    assert_eq!(
        Program::new(Ast::from_nodes(b.nodes).unwrap()).unwrap_err()[0].code,
        "expression-too-deep"
    );
}

#[test]
fn qualified_names_and_type_names_resolve() {
    let mut b = B::default();
    let a = b.ident("a");
    let ab = b.select(a, "b");
    b.select(ab, "c");
    let program = b.program();
    let mut act = Activation::new();
    act.bind("a.b.c", Value::Int(7));
    assert!(
        run(&program, &act, None)
            .unwrap()
            .value
            .cel_eq(&Value::Int(7))
    );

    let mut b = B::default();
    let g = b.ident("google");
    let p = b.select(g, "protobuf");
    b.select(p, "Timestamp");
    let value = run(&b.program(), &Activation::new(), None).unwrap().value;
    assert!(matches!(value, Value::Type(TypeValue::Timestamp)));
}

#[test]
fn matches_and_contains_on_event_text() {
    let ev = event("{}");
    for (function, arg, expected) in [
        ("contains", "o w", true),
        ("matches", "^h.*d$", true),
        ("matches", "^world", false),
    ] {
        let mut b = B::default();
        let e = b.ident("event");
        let text = b.select(e, "text");
        let a = b.str(arg);
        b.call(Some(text), function, vec![a]);
        let result = run(&b.program(), &Activation::event(&ev), None).unwrap();
        assert!(
            result.value.cel_eq(&Value::Bool(expected)),
            "{function}({arg})"
        );
    }
}

#[test]
fn cpu_only_model_leaves_allocation_out() {
    let mut b = B::default();
    let x = b.str("abcdefghij");
    let y = b.str("klmnopqrstu");
    b.bin(BinaryOp::Add, x, y);
    let program = b.program();
    let limits = Limits::default()
        .with_model(crate::cost::CostModel::CPU_ONLY)
        .with_clock(Arc::new(ManualClock::new()));
    let result = program.eval(&Activation::new(), &limits).unwrap();
    assert_eq!(result.cost, table::concat(10, 11));
}

/// Parses with the real parser at its default limits.
fn parsed(source: &str) -> Program {
    let ast = crate::syntax::parse(
        source,
        &crate::syntax::ParseOptions {
            max_bytes: 1 << 16,
            ..Default::default()
        },
    )
    .unwrap_or_else(|d| panic!("{source}: {d:?}"));
    Program::new(ast).expect("valid program")
}

#[test]
fn the_deepest_parsable_expressions_evaluate_without_overflowing_the_stack() {
    // The parser accepts nesting up to its depth limit; evaluation recurses once per level, and
    // must fit in a test thread's stack even in a debug build. Each shape is nested as deep as
    // the parser allows.
    let shapes: [fn(usize) -> String; 5] = [
        |k| format!("{}1", "-".repeat(k)),
        |k| format!("{}1{}", "[".repeat(k), "]".repeat(k)),
        |k| format!("{}1{}", "size([".repeat(k), "])".repeat(k)),
        |k| format!("{}true{}", "[1].exists(x, ".repeat(k), ")".repeat(k)),
        |k| format!("{}1{}", "(true ? ".repeat(k), " : 0)".repeat(k)),
    ];
    let options = crate::syntax::ParseOptions {
        max_bytes: 1 << 16,
        ..Default::default()
    };
    for shape in shapes {
        let deepest = (1..=options.max_depth as usize).rev().find_map(|k| {
            crate::syntax::parse(&shape(k), &options)
                .ok()
                .map(|ast| (k, ast))
        });
        let (k, ast) = deepest.expect("some nesting parses");
        assert!(k >= 20, "{}: only {k} levels parse", shape(1));
        let program = Program::new(ast).expect("within depth");
        let result = run(&program, &Activation::new(), None);
        assert!(result.is_ok(), "{} at {k} levels: {result:?}", shape(1));
    }
}

#[test]
fn string_functions_and_conversions_through_the_parser() {
    let ev = event(r#"{"n": 3, "tags": ["a", "b"], "when": "2024-01-02T03:04:05Z"}"#);
    for (source, expected) in [
        (
            "event.text.startsWith('hello') && event.text.endsWith('world')",
            Value::Bool(true),
        ),
        (
            "size(event.text) == 11 && event.text.size() == 11u",
            Value::Bool(true),
        ),
        (
            "'b' in event.attributes.tags && !('c' in event.attributes.tags)",
            Value::Bool(true),
        ),
        (
            "event.attributes.n + 1 == 4 && event.attributes.n == 3.0",
            Value::Bool(true),
        ),
        (
            "timestamp(event.attributes.when).getHours('+01:00')",
            Value::Int(4),
        ),
        ("duration('1h30m').getMinutes()", Value::Int(90)),
        (
            "string(1.5) + string(2u) + string(true)",
            Value::string("1.52true"),
        ),
        ("int('42') + int(3.9) + int(uint(1))", Value::Int(46)),
        (
            "has(event.attributes.n) && !has(event.attributes.m)",
            Value::Bool(true),
        ),
        (
            "event.attributes.tags.exists_one(t, t == 'a')",
            Value::Bool(true),
        ),
        (
            "event.attributes.tags.map(t, t + t)[1]",
            Value::string("bb"),
        ),
        (
            "type(event.attributes.tags) == list && type(1u) == uint",
            Value::Bool(true),
        ),
        (
            "{'a': 1}.exists(k, k == 'a') && [1, 2].all(x, x > 0)",
            Value::Bool(true),
        ),
    ] {
        let result = run(&parsed(source), &Activation::event(&ev), None)
            .unwrap_or_else(|e| panic!("{source}: {e:?}"));
        assert!(
            result.value.cel_eq(&expected) && result.value.type_value() == expected.type_value(),
            "{source}: {}",
            result.value
        );
    }
    for source in [
        "event.attributes.missing",
        "int('x')",
        "uint(-1)",
        "timestamp('2024-13-01T00:00:00Z')",
        "{'a': 1, 'a': 2}",
        "[1][5]",
        "'abc'.matches('(' + '')",
        "1 + 1u",
    ] {
        assert!(
            matches!(
                run(&parsed(source), &Activation::event(&ev), None),
                Err(EvalError::Runtime { .. })
            ),
            "{source} should be a runtime error"
        );
    }
}

#[test]
fn error_messages_quote_long_values_briefly() {
    let text = "é".repeat(3000);
    let ev = event(&format!(r#"{{"k": "{text}"}}"#));
    for source in [
        "event.attributes[event.attributes.k]",
        "int(event.attributes.k)",
        "timestamp(event.attributes.k)",
    ] {
        match run(&parsed(source), &Activation::event(&ev), None) {
            Err(EvalError::Runtime { message, .. }) => {
                assert!(message.len() < 200, "{source}: {} bytes", message.len());
            }
            other => panic!("{source}: {other:?}"),
        }
    }
}

#[test]
fn contains_finds_needles_across_scan_windows() {
    let chunk = 64 * 1024;
    let bounds = EventBounds {
        text: 4 * chunk as u64,
        ..EventBounds::DEFAULT
    };
    for (offset, needle, expected) in [
        (chunk - 3, "needle", true),
        (2 * chunk + 10, "needle", true),
        (chunk - 3, "needlf", false),
    ] {
        let mut text = "a".repeat(offset);
        text.push_str("needle");
        text.push_str(&"a".repeat(chunk + 100));
        let json = serde_json::json!({"id": "1", "source": "s", "type": "t", "text": text});
        let ev = Event::from_json(&json.to_string(), &bounds).expect("within bounds");
        let source = format!("event.text.contains('{needle}')");
        let result = run(&parsed(&source), &Activation::event(&ev), None).unwrap();
        assert!(
            result.value.cel_eq(&Value::Bool(expected)),
            "{offset} {needle}"
        );
    }
}
