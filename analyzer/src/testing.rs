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
//!   build, so the oracle's expansion is checked part for part;
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
        ExprKind::List(items) => {
            let mut out = vec![atom("list")];
            out.extend(items.iter().map(|&i| sub(i)));
            S::List(out)
        }
        ExprKind::Map(entries) => {
            let mut out = vec![atom("map")];
            out.extend(entries.iter().map(|e| list([sub(e.key), sub(e.value)])));
            S::List(out)
        }
        ExprKind::Struct { type_name, fields } => {
            let mut out = vec![atom("struct"), atom(type_name.to_string())];
            out.extend(
                fields
                    .iter()
                    .map(|f| list([atom(f.name.to_string()), sub(f.value)])),
            );
            S::List(out)
        }
        ExprKind::Comprehension(c) => {
            let range = sub(c.range);
            let predicate = c.predicate.map(sub);
            let transform = c.transform.map(sub);
            expand_macro(c.kind, range, &c.var, predicate, transform)
        }
    }
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
            let mut items = vec![atom("call"), atom(c.func_name.clone())];
            if let Some(t) = &c.target {
                items.push(list([atom("target"), theirs(t)]));
            }
            items.extend(c.args.iter().map(theirs));
            S::List(items)
        }
        Expr::List(l) => {
            let mut out = vec![atom("list")];
            out.extend(l.elements.iter().map(theirs));
            S::List(out)
        }
        Expr::Map(m) => {
            let mut out = vec![atom("map")];
            for entry in &m.entries {
                match &entry.expr {
                    EntryExpr::MapEntry(me) => out.push(list([theirs(&me.key), theirs(&me.value)])),
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
                        out.push(list([atom(f.field.clone()), theirs(&f.value)]));
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
        (Err(codes), Ok(_)) => codes.as_slice() == ["nesting-too-deep"],
        (Ok(_), Err(messages)) if messages.iter().all(|m| m.contains("Recursion limit")) => true,
        // The oracle's lexer does not let `.` match NUL in raw triple-quoted literals (the
        // grammar's `RAW '"""' .*? '"""'`); every other string form accepts NUL there too.
        (Ok(_), Err(_)) => source.contains('\0') && RAW_TRIPLE.iter().any(|p| source.contains(p)),
        _ => false,
    }
}

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
