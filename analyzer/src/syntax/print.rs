//! Prints an AST back to CEL source, fully parenthesised, so that the text parses back to the
//! same tree.
//!
//! The output is meant for explanations, lint messages and round-trip tests, not for pretty
//! formatting: every binary and conditional expression is wrapped in parentheses, as is the
//! operand of a unary operator and any operand of `.`/`[]` that is not already a member
//! expression; literals are written in a canonical form, and field names that are not plain
//! identifiers get backticks.

use std::fmt::Write as _;

use super::{Ast, ExprKind, Literal, MacroKind, NodeId};

/// CEL source for `ast`, fully parenthesised.
pub fn print(ast: &Ast) -> String {
    let mut out = String::new();
    write_node(ast, ast.root(), &mut out);
    out
}

fn write_node(ast: &Ast, id: NodeId, out: &mut String) {
    match ast.kind(id) {
        ExprKind::Literal(literal) => write_literal(literal, out),
        ExprKind::Ident { name, rooted } => {
            if *rooted {
                out.push('.');
            }
            out.push_str(name);
        }
        ExprKind::Select { operand, field, .. } => {
            member_operand(ast, *operand, out);
            out.push('.');
            write_field(field, out);
        }
        ExprKind::OptSelect { operand, field, .. } => {
            member_operand(ast, *operand, out);
            out.push_str(".?");
            write_field(field, out);
        }
        ExprKind::Has { operand, field, .. } => {
            out.push_str("has(");
            member_operand(ast, *operand, out);
            out.push('.');
            write_field(field, out);
            out.push(')');
        }
        ExprKind::Call {
            target,
            function,
            args,
            ..
        } => {
            if let Some(target) = target {
                member_operand(ast, *target, out);
                out.push('.');
            }
            out.push_str(function);
            write_list(ast, args, '(', ')', out);
        }
        ExprKind::Unary { op, operand } => {
            out.push_str(op.symbol());
            operand_in_parens(ast, *operand, out);
        }
        ExprKind::Binary { op, lhs, rhs } => {
            out.push('(');
            write_node(ast, *lhs, out);
            let _ = write!(out, " {} ", op.symbol());
            write_node(ast, *rhs, out);
            out.push(')');
        }
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => {
            out.push('(');
            write_node(ast, *cond, out);
            out.push_str(" ? ");
            write_node(ast, *then, out);
            out.push_str(" : ");
            write_node(ast, *otherwise, out);
            out.push(')');
        }
        ExprKind::Index { operand, index } | ExprKind::OptIndex { operand, index } => {
            member_operand(ast, *operand, out);
            out.push('[');
            if matches!(ast.kind(id), ExprKind::OptIndex { .. }) {
                out.push('?');
            }
            write_node(ast, *index, out);
            out.push(']');
        }
        ExprKind::List {
            items,
            optional_indices,
        } => {
            out.push('[');
            for (i, &item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if optional_indices.contains(&(i as u32)) {
                    out.push('?');
                }
                write_node(ast, item, out);
            }
            out.push(']');
        }
        ExprKind::Map(entries) => {
            out.push('{');
            for (i, entry) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if entry.optional {
                    out.push('?');
                }
                write_node(ast, entry.key, out);
                out.push_str(": ");
                write_node(ast, entry.value, out);
            }
            out.push('}');
        }
        ExprKind::Struct { type_name, fields } => {
            out.push_str(type_name);
            out.push('{');
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if field.optional {
                    out.push('?');
                }
                write_field(&field.name, out);
                out.push_str(": ");
                write_node(ast, field.value, out);
            }
            out.push('}');
        }
        ExprKind::Comprehension(c) => {
            member_operand(ast, c.range, out);
            out.push('.');
            out.push_str(match c.kind {
                MacroKind::ExistsOne => "exists_one",
                kind => kind.name(),
            });
            out.push('(');
            out.push_str(&c.var);
            if let Some((var2, _)) = &c.var2 {
                out.push_str(", ");
                out.push_str(var2);
            }
            for part in [c.predicate, c.transform].into_iter().flatten() {
                out.push_str(", ");
                write_node(ast, part, out);
            }
            out.push(')');
        }
    }
}

fn operand_in_parens(ast: &Ast, id: NodeId, out: &mut String) {
    out.push('(');
    write_node(ast, id, out);
    out.push(')');
}

/// The operand of `.f`, `[i]` or a member call: bare when it is itself a member expression
/// (or a literal that reads back the same way), otherwise in parentheses.
fn member_operand(ast: &Ast, id: NodeId, out: &mut String) {
    let bare = match ast.kind(id) {
        ExprKind::Literal(Literal::Int(i)) => *i >= 0,
        ExprKind::Literal(Literal::Double(d)) => d.is_sign_positive(),
        ExprKind::Unary { .. } | ExprKind::Binary { .. } | ExprKind::Conditional { .. } => false,
        _ => true,
    };
    if bare {
        write_node(ast, id, out);
    } else {
        operand_in_parens(ast, id, out);
    }
}

fn write_list(ast: &Ast, items: &[NodeId], open: char, close: char, out: &mut String) {
    out.push(open);
    for (i, &item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_node(ast, item, out);
    }
    out.push(close);
}

/// A field name as written: bare when it lexes as an identifier, else in backticks.
fn write_field(name: &str, out: &mut String) {
    let plain = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !matches!(name, "in" | "true" | "false" | "null");
    if plain {
        out.push_str(name);
    } else {
        out.push('`');
        out.push_str(name);
        out.push('`');
    }
}

fn write_literal(literal: &Literal, out: &mut String) {
    match literal {
        Literal::Null => out.push_str("null"),
        Literal::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Literal::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Literal::Uint(u) => {
            let _ = write!(out, "{u}u");
        }
        Literal::Double(d) => write_double(*d, out),
        Literal::String(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c.is_control() => {
                        let _ = write!(out, "\\u{:04x}", u32::from(c));
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        Literal::Bytes(bytes) => {
            out.push_str("b\"");
            for &b in bytes {
                if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
                    out.push(b as char);
                } else {
                    let _ = write!(out, "\\x{b:02x}");
                }
            }
            out.push('"');
        }
    }
}

/// A double in a form the lexer reads back exactly: Rust's shortest round-trip digits, with a
/// fraction or exponent so it lexes as a double rather than an int.
fn write_double(d: f64, out: &mut String) {
    let text = format!("{d:?}");
    let (mantissa, exponent) = match text.split_once('e') {
        Some((m, e)) => (m.to_owned(), Some(e.to_owned())),
        None => (text, None),
    };
    out.push_str(&mantissa);
    if !mantissa.contains('.') {
        out.push_str(".0");
    }
    if let Some(e) = exponent {
        out.push('e');
        out.push_str(&e);
    }
}
