//! Every node's span covers its whole sub-expression: parentheses around an operand, a call
//! through its `)`, a macro over the whole call, a negative literal with its sign.

use ozcheck_analyzer::syntax::{Ast, ExprKind, ParseOptions, parse};

fn ast(source: &str) -> Ast {
    parse(source, &ParseOptions::default()).unwrap_or_else(|d| panic!("{source:?}: {d:#?}"))
}

/// The source text of every node, in node order.
fn texts<'a>(source: &'a str, ast: &Ast) -> Vec<&'a str> {
    ast.nodes()
        .iter()
        .map(|n| &source[n.span.start as usize..n.span.end as usize])
        .collect()
}

fn root_text(source: &str) -> String {
    let ast = ast(source);
    let span = ast.span(ast.root());
    source[span.start as usize..span.end as usize].to_owned()
}

#[test]
fn each_node_kind_spans_its_whole_sub_expression() {
    let cases = [
        ("  -12 ", "-12"),
        ("'ñ' ", "'ñ'"),
        ("a.b.c", "a.b.c"),
        (" .a ", ".a"),
        ("x.`content-type`", "x.`content-type`"),
        ("has(a.b) ", "has(a.b)"),
        ("f(1, 2) ", "f(1, 2)"),
        ("x.f(1) ", "x.f(1)"),
        (" !a", "!a"),
        ("-a ", "-a"),
        ("a + b", "a + b"),
        ("a ? b : c", "a ? b : c"),
        ("a[0] ", "a[0]"),
        ("[1, 2,] ", "[1, 2,]"),
        ("{1: 2} ", "{1: 2}"),
        ("a.B{f: 1} ", "a.B{f: 1}"),
        (".B{} ", ".B{}"),
        ("l.all(x, x > 0) ", "l.all(x, x > 0)"),
        ("l.map(x, x < 1, x) ", "l.map(x, x < 1, x)"),
        ("(a + b)", "(a + b)"),
        ("((a)) ", "((a))"),
        ("!!a ", "!!a"),
    ];
    for (source, want) in cases {
        assert_eq!(root_text(source), want, "root of {source:?}");
    }
}

#[test]
fn operands_keep_their_parentheses_and_children_lie_within_parents() {
    let source = "(a + b) * c.d(e)[0] && !(f || g)";
    let ast = ast(source);
    let texts = texts(source, &ast);
    for want in [
        "(a + b)",
        "c.d(e)",
        "c.d(e)[0]",
        "!(f || g)",
        "(f || g)",
        "a",
        "e",
    ] {
        assert!(texts.contains(&want), "no node spans {want:?} in {texts:?}");
    }
    for node in ast.nodes() {
        let parent = node.span;
        for child in node.kind.children() {
            let c = ast.span(child);
            assert!(
                parent.start <= c.start && c.end <= parent.end,
                "{c:?} outside {parent:?}"
            );
        }
    }
}

#[test]
fn names_and_macro_variables_have_their_own_spans() {
    let source = "x.exists(item, item.`a-b` == f(1))";
    let ast = ast(source);
    let at = |s: ozcheck_analyzer::syntax::Span| &source[s.start as usize..s.end as usize];
    for node in ast.nodes() {
        match &node.kind {
            ExprKind::Comprehension(c) => assert_eq!(at(c.var_span), "item"),
            ExprKind::Select {
                field, field_span, ..
            } => {
                assert_eq!(&**field, "a-b");
                assert_eq!(at(*field_span), "`a-b`");
            }
            ExprKind::Call { name_span, .. } => assert_eq!(at(*name_span), "f"),
            _ => {}
        }
    }
}

#[test]
fn nodes_are_children_before_parents_with_no_orphans() {
    for source in [
        "has(a.b.c)",
        "l.all(x, x)",
        "l.map(y, y.z).filter(w, has(w.v))",
        "a.b{c: [1, {2: 3}]}",
    ] {
        let ast = ast(source);
        let mut used = vec![false; ast.len()];
        used[ast.root() as usize] = true;
        for (id, node) in ast.nodes().iter().enumerate() {
            for child in node.kind.children() {
                assert!(
                    (child as usize) < id,
                    "{source:?}: child {child} after parent {id}"
                );
                used[child as usize] = true;
            }
        }
        assert!(used.iter().all(|&u| u), "{source:?} has an orphan node");
    }
}
