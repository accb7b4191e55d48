//! Differential-testing support: our parser against the `cel` crate's ANTLR parser (the
//! oracle), compared through one normalised s-expression.
//!
//! Only built with the `oracle` feature, which the analyzer's own tests and the fuzz targets
//! enable; it is not part of the supported API.
//!
//! The normal form makes the two trees comparable without ids:
//! - every operator is a call with cel-go's operator name (`_+_`, `!_`, `_[_]`, `@in`, …);
//! - chains of `&&` and of `||` are flattened to one n-ary call, because the oracle balances
//!   them and we associate them to the left (both evaluate the same way);
//! - our first-class macro nodes are expanded into exactly the comprehension cel-go's macros
//!   build, so the oracle's expansion is checked part for part; the macros the oracle does not
//!   know (two-variable forms, `transformList`, `transformMap`, `transformMapEntry`, `sortBy`,
//!   `optMap`, `optFlatMap`) become the plain member call it parses them as, and `exists_one`
//!   called with three arguments is named `existsOne` on both sides;
//! - optional syntax is cel-go's: `_?._` and `_[?_]` calls, `?` marks on list elements, map
//!   entries and message fields (the oracle runs with optional syntax enabled);
//! - literals print their exact value (doubles by their bits).

use std::fmt::Write as _;
use std::panic;

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use crate::syntax::{self, Ast, ExprKind, Literal, MacroKind, NodeId, ParseOptions, UnaryOp};

/// A normalised tree: an atom or a list headed by its operator.
#[derive(Clone, Debug, PartialEq)]
enum S {
    Atom(String),
    List(Vec<S>),
}

fn atom(text: impl Into<String>) -> S {
    S::Atom(text.into())
}

fn list(items: impl IntoIterator<Item = S>) -> S {
    S::List(items.into_iter().collect())
}

fn call(function: &str, args: impl IntoIterator<Item = S>) -> S {
    let mut items = vec![atom("call"), atom(function)];
    items.extend(args);
    S::List(items)
}

/// Flattens nested `&&` (or `||`) calls into one call with every operand in order.
fn flatten(s: S) -> S {
    let S::List(items) = s else { return s };
    let items: Vec<S> = items.into_iter().map(flatten).collect();
    let logic = matches!(
        (items.first(), items.get(1)),
        (Some(S::Atom(c)), Some(S::Atom(f))) if c == "call" && (f == "_&&_" || f == "_||_")
    );
    if !logic {
        return S::List(items);
    }
    let function = items[1].clone();
    let mut out = vec![items[0].clone(), function.clone()];
    for item in items.into_iter().skip(2) {
        match item {
            S::List(inner)
                if inner.len() >= 2 && inner[1] == function && inner[0] == atom("call") =>
            {
                out.extend(inner.into_iter().skip(2));
            }
            other => out.push(other),
        }
    }
    S::List(out)
}

fn render(s: &S, out: &mut String) {
    match s {
        S::Atom(a) => out.push_str(a),
        S::List(items) => {
            out.push('(');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                render(item, out);
            }
            out.push(')');
        }
    }
}

fn finish(s: S) -> String {
    let mut out = String::new();
    render(&flatten(s), &mut out);
    out
}

fn double_atom(d: f64) -> S {
    atom(format!("(double {:#018x})", d.to_bits()))
}

fn string_atom(s: &str) -> S {
    atom(format!("(string {s:?})"))
}

fn bytes_atom(b: &[u8]) -> S {
    atom(format!("(bytes {b:?})"))
}

/// The normal form of our AST.
pub fn normalise_ast(ast: &Ast) -> String {
    finish(ours(ast, ast.root()))
}

fn ours(ast: &Ast, id: NodeId) -> S {
    let sub = |id: NodeId| ours(ast, id);
    match ast.kind(id) {
        ExprKind::Literal(literal) => match literal {
            Literal::Null => atom("null"),
            Literal::Bool(b) => atom(format!("(bool {b})")),
            Literal::Int(i) => atom(format!("(int {i})")),
            Literal::Uint(u) => atom(format!("(uint {u})")),
            Literal::Double(d) => double_atom(*d),
            Literal::String(s) => string_atom(s),
            Literal::Bytes(b) => bytes_atom(b),
        },
        ExprKind::Ident { name, rooted } => {
            atom(format!("(id {}{name})", if *rooted { "." } else { "" }))
        }
        ExprKind::Select { operand, field, .. } => {
            list([atom("sel"), sub(*operand), atom(field.to_string())])
        }
        ExprKind::OptSelect { operand, field, .. } => {
            call("_?._", [sub(*operand), string_atom(field)])
        }
        ExprKind::Has { operand, field, .. } => {
            list([atom("has"), sub(*operand), atom(field.to_string())])
        }
        ExprKind::Call {
            target,
            function,
            args,
            ..
        } => {
            let mut items = vec![atom("call"), atom(function.to_string())];
            if let Some(t) = target {
                items.push(list([atom("target"), sub(*t)]));
            }
            items.extend(args.iter().map(|&a| sub(a)));
            S::List(items)
        }
        ExprKind::Unary { op, operand } => call(
            match op {
                UnaryOp::Not => "!_",
                UnaryOp::Neg => "-_",
            },
            [sub(*operand)],
        ),
        ExprKind::Binary { op, lhs, rhs } => {
            let name = match op.symbol() {
                "in" => "@in".to_owned(),
                symbol => format!("_{symbol}_"),
            };
            call(&name, [sub(*lhs), sub(*rhs)])
        }
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => call("_?_:_", [sub(*cond), sub(*then), sub(*otherwise)]),
        ExprKind::Index { operand, index } => call("_[_]", [sub(*operand), sub(*index)]),
        ExprKind::OptIndex { operand, index } => call("_[?_]", [sub(*operand), sub(*index)]),
        ExprKind::List {
            items,
            optional_indices,
        } => {
            let mut out = vec![atom("list")];
            out.extend(items.iter().enumerate().map(|(i, &item)| {
                optional_mark(optional_indices.contains(&(i as u32)), sub(item))
            }));
            S::List(out)
        }
        ExprKind::Map(entries) => {
            let mut out = vec![atom("map")];
            out.extend(
                entries
                    .iter()
                    .map(|e| optional_mark(e.optional, list([sub(e.key), sub(e.value)]))),
            );
            S::List(out)
        }
        ExprKind::Struct { type_name, fields } => {
            let mut out = vec![atom("struct"), atom(type_name.to_string())];
            out.extend(fields.iter().map(|f| {
                optional_mark(f.optional, list([atom(f.name.to_string()), sub(f.value)]))
            }));
            S::List(out)
        }
        ExprKind::Comprehension(c) => {
            let range = sub(c.range);
            let predicate = c.predicate.map(sub);
            let transform = c.transform.map(sub);
            if c.var2.is_some()
                || !matches!(
                    c.kind,
                    MacroKind::All
                        | MacroKind::Exists
                        | MacroKind::ExistsOne
                        | MacroKind::Map
                        | MacroKind::Filter
                )
            {
                return unexpanded_macro(c, range, predicate, transform);
            }
            expand_macro(c.kind, range, &c.var, predicate, transform)
        }
    }
}

/// An element, entry or field marked `?`.
fn optional_mark(optional: bool, s: S) -> S {
    if optional { list([atom("?"), s]) } else { s }
}

/// A macro the oracle does not expand, as the member call it parses it as.
fn unexpanded_macro(
    c: &syntax::Comprehension,
    range: S,
    predicate: Option<S>,
    transform: Option<S>,
) -> S {
    let name = match c.kind {
        MacroKind::ExistsOne => "existsOne",
        kind => kind.name(),
    };
    let mut items = vec![atom("call"), atom(name), list([atom("target"), range])];
    items.push(atom(format!("(id {})", c.var)));
    if let Some((var2, _)) = &c.var2 {
        items.push(atom(format!("(id {var2})")));
    }
    items.extend(predicate);
    items.extend(transform);
    S::List(items)
}

/// cel-go's expansion of a comprehension macro, part for part.
fn expand_macro(
    kind: MacroKind,
    range: S,
    var: &str,
    predicate: Option<S>,
    transform: Option<S>,
) -> S {
    let accu = || atom("(id @result)");
    let (init, cond, step, result) = match kind {
        MacroKind::All => (
            atom("(bool true)"),
            call("@not_strictly_false", [accu()]),
            call("_&&_", [accu(), predicate.unwrap_or(atom("?"))]),
            accu(),
        ),
        MacroKind::Exists => (
            atom("(bool false)"),
            call("@not_strictly_false", [call("!_", [accu()])]),
            call("_||_", [accu(), predicate.unwrap_or(atom("?"))]),
            accu(),
        ),
        MacroKind::ExistsOne => (
            atom("(int 0)"),
            atom("(bool true)"),
            call(
                "_?_:_",
                [
                    predicate.unwrap_or(atom("?")),
                    call("_+_", [accu(), atom("(int 1)")]),
                    accu(),
                ],
            ),
            call("_==_", [accu(), atom("(int 1)")]),
        ),
        MacroKind::Map => {
            let add = call(
                "_+_",
                [accu(), list([atom("list"), transform.unwrap_or(atom("?"))])],
            );
            let step = match predicate {
                Some(p) => call("_?_:_", [p, add, accu()]),
                None => add,
            };
            (list([atom("list")]), atom("(bool true)"), step, accu())
        }
        MacroKind::Filter => {
            let add = call(
                "_+_",
                [accu(), list([atom("list"), atom(format!("(id {var})"))])],
            );
            let step = call("_?_:_", [predicate.unwrap_or(atom("?")), add, accu()]);
            (list([atom("list")]), atom("(bool true)"), step, accu())
        }
        _ => unreachable!("only the one-variable macros of the standard library expand"),
    };
    list([
        atom("comprehension"),
        atom(var.to_owned()),
        range,
        atom("@result"),
        init,
        cond,
        step,
        result,
    ])
}

/// The normal form of the oracle's AST.
pub fn normalise_cel(expr: &IdedExpr) -> String {
    finish(theirs(expr))
}

fn theirs(e: &IdedExpr) -> S {
    match &e.expr {
        Expr::Unspecified => atom("unspecified"),
        Expr::Literal(l) => match l {
            LiteralValue::Null => atom("null"),
            LiteralValue::Boolean(b) => atom(format!("(bool {})", b.inner())),
            LiteralValue::Int(i) => atom(format!("(int {})", i.inner())),
            LiteralValue::UInt(u) => atom(format!("(uint {})", u.inner())),
            LiteralValue::Double(d) => double_atom(*d.inner()),
            LiteralValue::String(s) => string_atom(s.inner()),
            LiteralValue::Bytes(b) => bytes_atom(b.inner()),
        },
        Expr::Ident(name) => atom(format!("(id {name})")),
        Expr::Select(s) => list([
            atom(if s.test { "has" } else { "sel" }),
            theirs(&s.operand),
            atom(s.field.clone()),
        ]),
        Expr::Call(c) => {
            // `exists_one` and `existsOne` are one macro; unexpanded (three arguments), one name.
            let name = match (c.func_name.as_str(), &c.target) {
                ("exists_one", Some(_)) => "existsOne".to_owned(),
                (name, _) => name.to_owned(),
            };
            let mut items = vec![atom("call"), atom(name)];
            if let Some(t) = &c.target {
                items.push(list([atom("target"), theirs(t)]));
            }
            items.extend(c.args.iter().map(theirs));
            S::List(items)
        }
        Expr::List(l) => {
            let mut out = vec![atom("list")];
            out.extend(
                l.elements
                    .iter()
                    .enumerate()
                    .map(|(i, e)| optional_mark(l.optional_indices.contains(&i), theirs(e))),
            );
            S::List(out)
        }
        Expr::Map(m) => {
            let mut out = vec![atom("map")];
            for entry in &m.entries {
                match &entry.expr {
                    EntryExpr::MapEntry(me) => out.push(optional_mark(
                        me.optional,
                        list([theirs(&me.key), theirs(&me.value)]),
                    )),
                    EntryExpr::StructField(f) => {
                        out.push(list([atom("?field"), atom(f.field.clone())]));
                    }
                }
            }
            S::List(out)
        }
        Expr::Struct(st) => {
            let mut out = vec![atom("struct"), atom(st.type_name.clone())];
            for entry in &st.entries {
                match &entry.expr {
                    EntryExpr::StructField(f) => {
                        out.push(optional_mark(
                            f.optional,
                            list([atom(f.field.clone()), theirs(&f.value)]),
                        ));
                    }
                    EntryExpr::MapEntry(_) => out.push(atom("?entry")),
                }
            }
            S::List(out)
        }
        Expr::Comprehension(c) => list([
            atom("comprehension"),
            atom(c.iter_var.clone()),
            theirs(&c.iter_range),
            atom(c.accu_var.clone()),
            theirs(&c.accu_init),
            theirs(&c.loop_cond),
            theirs(&c.loop_step),
            theirs(&c.result),
        ]),
    }
}

/// Our verdict on `source`: the normal form, or the diagnostic codes.
pub fn ours_normalised(source: &str, options: &ParseOptions) -> Result<String, Vec<&'static str>> {
    match syntax::parse(source, options) {
        Ok(ast) => Ok(normalise_ast(&ast)),
        Err(diagnostics) => Err(diagnostics.iter().map(|d| d.code).collect()),
    }
}

/// The oracle's verdict on `source`: the normal form, or its error messages. It runs on its
/// own thread with a 4 MiB stack, inside `catch_unwind`; a panic is reported as an error
/// starting with `PANIC`.
pub fn oracle_normalised(source: &str) -> Result<String, Vec<String>> {
    let src = source.to_owned();
    let handle = std::thread::Builder::new()
        .stack_size(4 << 20)
        .spawn(move || {
            panic::catch_unwind(|| {
                match cel::parser::Parser::new()
                    .enable_ident_escape_syntax(true)
                    .enable_optional_syntax(true)
                    .parse(&src)
                {
                    Ok(expr) => Ok(normalise_cel(&expr)),
                    Err(errors) => Err(errors.errors.iter().map(|e| e.msg.clone()).collect()),
                }
            })
        })
        .expect("spawn the oracle thread");
    match handle.join() {
        Ok(Ok(result)) => result,
        Ok(Err(_)) | Err(_) => Err(vec!["PANIC in the oracle".to_owned()]),
    }
}

/// Whether a disagreement is one of those explained in
/// `docs/decisions/0002-parser-oracle-differences.md`; each is as narrow as its reason.
pub fn known_difference(
    source: &str,
    ours: &Result<String, Vec<&'static str>>,
    theirs: &Result<String, Vec<String>>,
) -> bool {
    match (ours, theirs) {
        // Our depth limit bounds the height of the tree (member and operator chains count);
        // the oracle's bounds only its recursion through `expr`, and counts parentheses.
        (Err(codes), Ok(_)) if codes.as_slice() == ["nesting-too-deep"] => true,
        (Ok(_), Err(messages)) if messages.iter().all(|m| m.contains("Recursion limit")) => true,
        // The oracle's lexer does not let `.` match NUL in raw triple-quoted literals (the
        // grammar's `RAW '"""' .*? '"""'`); every other string form accepts NUL there too.
        (Ok(_), Err(_)) => source.contains('\0') && RAW_TRIPLE.iter().any(|p| source.contains(p)),
        // The oracle lacks the two-variable, `transform…`, `sortBy` and `optMap`/`optFlatMap`
        // macros, so it takes any arguments as those of a plain call; we refuse a variable that
        // is not a simple name, or two variables of the same name, as cel-go does with the
        // macros enabled.
        (Err(codes), Ok(tree)) => {
            codes.iter().all(|c| *c == "cel-syntax")
                && UNKNOWN_TO_THE_ORACLE
                    .iter()
                    .any(|name| tree.contains(&format!("(call {name} (target")))
        }
        _ => false,
    }
}

/// The macros the oracle parses as plain member calls.
const UNKNOWN_TO_THE_ORACLE: [&str; 9] = [
    "all",
    "exists",
    "existsOne",
    "transformList",
    "transformMap",
    "transformMapEntry",
    "sortBy",
    "optMap",
    "optFlatMap",
];

/// The openings of raw triple-quoted literals.
const RAW_TRIPLE: [&str; 4] = ["r'''", "R'''", "r\"\"\"", "R\"\"\""];

/// Compares both parsers on `source`: `Ok` when they agree (or differ in a known way), else
/// a description of the disagreement.
pub fn compare(source: &str, options: &ParseOptions) -> Result<(), String> {
    let ours = ours_normalised(source, options);
    let theirs = oracle_normalised(source);
    let agree = match (&ours, &theirs) {
        (Ok(a), Ok(b)) => a == b,
        (Err(_), Err(_)) => true,
        _ => false,
    };
    if agree || known_difference(source, &ours, &theirs) {
        Ok(())
    } else {
        Err(describe(source, &ours, &theirs))
    }
}

/// Formats a disagreement for a test failure message.
pub fn describe(
    source: &str,
    ours: &Result<String, Vec<&'static str>>,
    theirs: &Result<String, Vec<String>>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "source: {source:?}");
    let _ = writeln!(out, "  ours:   {ours:?}");
    let _ = writeln!(out, "  oracle: {theirs:?}");
    out
}
