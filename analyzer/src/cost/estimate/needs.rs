//! What a loop's body needs of the JSON element its variable binds in order to run without an
//! error (cost-model version 9): `map`, `filter`, `exists_one`, `sortBy` and the transforms stop
//! at the first element their body fails on (`eval/loops.rs`), so every iteration but the last
//! one of such a loop saw an element the body ran on, and an element the body needs a field or a
//! member function of takes more bytes than the one byte a number may take (docs/cost-model.md
//! §4, "What a loop's body needs of an element").
//!
//! [`requirement`] reads the body as the evaluator runs it: the operands of a call, of an
//! arithmetic or comparison operator, of a list or map literal and of an index are all
//! evaluated, and an error in any is the node's error, so their requirements add up; `&&` and
//! `||` absorb an error of one side when the other decides, and a conditional runs one branch,
//! so there only what both sides need is needed. Nothing else is read: a nested loop's body
//! (which may bind the same name), `has`, `.?f` and `or`/`orValue` add no requirement of their
//! own.

use std::collections::BTreeMap;

use crate::syntax::{Ast, BinaryOp, ExprKind, NodeId};

/// What a JSON value must be for an expression over it to run without an error: a value that
/// is not a number, a bool or null (`sized`), or an object holding each of `fields`, each value
/// meeting its own requirement.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Req {
    sized: bool,
    fields: BTreeMap<Box<str>, Req>,
}

impl Req {
    fn sized() -> Req {
        Req {
            sized: true,
            fields: BTreeMap::new(),
        }
    }

    /// Both requirements at once (the operands of a strict operation).
    fn and(mut self, other: Req) -> Req {
        self.sized |= other.sized;
        for (field, req) in other.fields {
            let merged = match self.fields.remove(&field) {
                Some(mine) => mine.and(req),
                None => req,
            };
            self.fields.insert(field, merged);
        }
        self
    }

    /// What either requirement implies (the sides of `&&` and `||`, the branches of `?:`):
    /// a value meeting one of them meets this.
    fn either(self, other: &Req) -> Req {
        let sized =
            (self.sized || !self.fields.is_empty()) && (other.sized || !other.fields.is_empty());
        let mut fields = BTreeMap::new();
        for (field, req) in self.fields {
            if let Some(theirs) = other.fields.get(&field) {
                fields.insert(field, req.either(theirs));
            }
        }
        Req { sized, fields }
    }

    /// The fewest bytes of compact JSON a value meeting the requirement takes: an object
    /// `{"f":v,…}` is its braces, every key with its quotes and colon, every value (at least
    /// one byte) and the commas between; a string, list or object at least two bytes (`""`,
    /// `[]`, `{}`); anything else one (`0`). Keys are never shorter than their UTF-8 bytes in
    /// JSON (escaping only lengthens them).
    pub(crate) fn least_json_bytes(&self) -> u64 {
        if self.fields.is_empty() {
            return if self.sized { 2 } else { 1 };
        }
        let entries: u64 = self
            .fields
            .iter()
            .map(|(field, req)| (field.len() as u64) + 3 + req.least_json_bytes())
            .sum();
        2 + entries + (self.fields.len() as u64 - 1)
    }

    /// The requirement on the value at the end of the path of fields `path` (outermost first).
    fn at(path: &[&str], leaf: Req) -> Req {
        path.iter().rev().fold(leaf, |inner, field| Req {
            sized: true,
            fields: BTreeMap::from([(Box::<str>::from(*field), inner)]),
        })
    }
}

/// What `node` needs of the value `var` names for it to evaluate without an error.
pub(crate) fn requirement(ast: &Ast, node: NodeId, var: &str) -> Req {
    Reader {
        ast,
        var,
        depth: std::cell::Cell::new(0),
    }
    .read(node)
}

/// Deeper than this the reader stops and needs nothing more (a requirement may always be
/// weakened): the estimator's own recursion is bounded apart, and this one must not add to it.
const MAX_DEPTH: u32 = 48;

struct Reader<'a> {
    ast: &'a Ast,
    var: &'a str,
    depth: std::cell::Cell<u32>,
}

impl Reader<'_> {
    /// The fields selected from `var` down to `node` (`var.a.b` gives `[a, b]`), when `node` is
    /// such a path.
    fn path(&self, node: NodeId) -> Option<Vec<&str>> {
        let mut fields = Vec::new();
        let mut at = node;
        loop {
            match self.ast.kind(at) {
                ExprKind::Ident {
                    name,
                    rooted: false,
                } if &**name == self.var => break,
                ExprKind::Select { operand, field, .. } if fields.len() < MAX_DEPTH as usize => {
                    fields.push(&**field);
                    at = *operand;
                }
                _ => return None,
            }
        }
        fields.reverse();
        Some(fields)
    }

    fn read(&self, node: NodeId) -> Req {
        if self.depth.get() >= MAX_DEPTH {
            return Req::default();
        }
        self.depth.set(self.depth.get() + 1);
        let req = self.read_node(node);
        self.depth.set(self.depth.get() - 1);
        req
    }

    /// `node` evaluated, and its value then used where only a string, a list or a map is
    /// accepted (a member function's receiver, `size`, the container of `in` or of an index,
    /// a nested loop's range).
    fn sized(&self, node: NodeId) -> Req {
        let own = self.read(node);
        match self.path(node) {
            Some(path) => own.and(Req::at(&path, Req::sized())),
            None => own,
        }
    }

    fn read_node(&self, node: NodeId) -> Req {
        match self.ast.kind(node) {
            ExprKind::Literal(_) | ExprKind::Ident { .. } => Req::default(),
            // `operand.field` fails unless the operand is a map holding `field`.
            ExprKind::Select { operand, field, .. } => match self.path(*operand) {
                Some(path) => {
                    let mut full = path;
                    full.push(field);
                    self.read(*operand).and(Req::at(&full, Req::default()))
                }
                None => self.read(*operand),
            },
            ExprKind::OptSelect { operand, .. } | ExprKind::Has { operand, .. } => {
                self.read(*operand)
            }
            ExprKind::Unary { operand, .. } => self.read(*operand),
            ExprKind::Binary { op, lhs, rhs } => match op {
                BinaryOp::And | BinaryOp::Or => self.read(*lhs).either(&self.read(*rhs)),
                BinaryOp::In => self.read(*lhs).and(self.sized(*rhs)),
                _ => self.read(*lhs).and(self.read(*rhs)),
            },
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => self
                .read(*cond)
                .and(self.read(*then).either(&self.read(*otherwise))),
            ExprKind::Index { operand, index } | ExprKind::OptIndex { operand, index } => {
                self.sized(*operand).and(self.read(*index))
            }
            ExprKind::List { items, .. } => items
                .iter()
                .fold(Req::default(), |req, &item| req.and(self.read(item))),
            ExprKind::Map(entries) => entries.iter().fold(Req::default(), |req, entry| {
                req.and(self.read(entry.key)).and(self.read(entry.value))
            }),
            ExprKind::Struct { .. } => Req::default(),
            // The range is evaluated first, in the enclosing scope, and must be a list or a
            // map; the body may bind the same name and is not read.
            ExprKind::Comprehension(c) => self.sized(c.range),
            ExprKind::Call {
                target,
                function,
                args,
                ..
            } => self.call(*target, function, args),
        }
    }

    fn call(&self, target: Option<NodeId>, function: &str, args: &[NodeId]) -> Req {
        // A namespaced function (`optional.of`) has no receiver: its name is not evaluated.
        let target =
            target.filter(|_| crate::check::namespaced(self.ast, target, function).is_none());
        if let Some(t) = target {
            // No member function accepts a number, a bool or null as its receiver.
            let receiver = self.sized(t);
            if matches!(function, "or" | "orValue") {
                // The argument runs only when the optional is empty.
                return receiver;
            }
            return args
                .iter()
                .fold(receiver, |req, &arg| req.and(self.read(arg)));
        }
        let mut req = Req::default();
        for (i, &arg) in args.iter().enumerate() {
            // `size(x)` and `matches(s, p)` fail on a number, a bool or null.
            let sized = (function == "size" && args.len() == 1)
                || (function == "matches" && args.len() == 2 && i == 0);
            req = req.and(if sized {
                self.sized(arg)
            } else {
                self.read(arg)
            });
        }
        req
    }
}

/// Whether `node` yields a number, a bool or null (or fails) whenever `var` is one
/// (cost-model version 10): then a value of it that is a string, a list or a map comes from
/// an element that is one too, which takes at least two bytes (`""`, `[]`, `{}`). True of
/// `var` itself, of literals that are no strings or bytes, of arithmetic with an operand that
/// is (CEL's arithmetic takes two numbers of one type, or two strings, lists, bytes,
/// timestamps or durations, never a number with anything else), of the results that are always
/// numbers or bools (comparisons, `&&`, `||`, `!`, `in`, `has`, `size`, `int`, `uint`,
/// `double`), and of a conditional whose branches both are. Anything else is not.
pub(crate) fn keeps_scalars(ast: &Ast, node: NodeId, var: &str) -> bool {
    keeps_scalars_within(ast, node, var, 0)
}

fn keeps_scalars_within(ast: &Ast, node: NodeId, var: &str, depth: u32) -> bool {
    use crate::syntax::{Literal, UnaryOp};
    if depth >= MAX_DEPTH {
        return false;
    }
    let keeps = |n: NodeId| keeps_scalars_within(ast, n, var, depth + 1);
    match ast.kind(node) {
        ExprKind::Ident {
            name,
            rooted: false,
        } => &**name == var,
        ExprKind::Literal(l) => !matches!(l, Literal::String(_) | Literal::Bytes(_)),
        ExprKind::Has { .. } => true,
        ExprKind::Unary { op, operand } => match op {
            UnaryOp::Not => true,
            UnaryOp::Neg => keeps(*operand),
        },
        ExprKind::Binary { op, lhs, rhs } => match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => {
                keeps(*lhs) || keeps(*rhs)
            }
            _ => true,
        },
        ExprKind::Conditional {
            then, otherwise, ..
        } => keeps(*then) && keeps(*otherwise),
        ExprKind::Call {
            target: None,
            function,
            args,
            ..
        } => args.len() == 1 && matches!(&**function, "size" | "int" | "uint" | "double"),
        _ => false,
    }
}

/// Whether the only identifier `node` reads from outside itself is `var` (cost-model version
/// 10): a loop body over it then costs what its own element makes it cost, whatever the other
/// elements are. Names bound by a nested loop are its own inside its body; any other name
/// (another variable, `event`, a namespace such as `math`, a type name) makes it not so.
pub(crate) fn reads_only(ast: &Ast, node: NodeId, var: &str) -> bool {
    let mut bound = vec![var];
    reads_only_within(ast, node, &mut bound, 0)
}

fn reads_only_within<'a>(ast: &'a Ast, node: NodeId, bound: &mut Vec<&'a str>, depth: u32) -> bool {
    if depth >= MAX_DEPTH {
        return false;
    }
    match ast.kind(node) {
        ExprKind::Ident { name, rooted } => !rooted && bound.contains(&&**name),
        ExprKind::Comprehension(c) => {
            if !reads_only_within(ast, c.range, bound, depth + 1) {
                return false;
            }
            let before = bound.len();
            bound.push(&c.var);
            if let Some((second, _)) = &c.var2 {
                bound.push(second);
            }
            let ok = [c.predicate, c.transform]
                .into_iter()
                .flatten()
                .all(|n| reads_only_within(ast, n, bound, depth + 1));
            bound.truncate(before);
            ok
        }
        kind => {
            let mut ok = true;
            kind.for_each_child(|child| {
                ok = ok && reads_only_within(ast, child, bound, depth + 1);
            });
            ok
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn least(expr: &str, var: &str) -> u64 {
        let ast =
            crate::syntax::parse(expr, &crate::syntax::ParseOptions::default()).expect("parses");
        let ExprKind::Comprehension(c) = ast.kind(ast.root()) else {
            panic!("not a loop: {expr}");
        };
        let body = c.predicate.or(c.transform).expect("a body");
        requirement(&ast, body, var).least_json_bytes()
    }

    fn body(expr: &str) -> (crate::syntax::Ast, NodeId) {
        let ast =
            crate::syntax::parse(expr, &crate::syntax::ParseOptions::default()).expect("parses");
        let ExprKind::Comprehension(c) = ast.kind(ast.root()) else {
            panic!("not a loop: {expr}");
        };
        let body = c.predicate.or(c.transform).expect("a body");
        (ast, body)
    }

    #[test]
    fn what_keeps_a_number_a_number() {
        let keeps = |expr: &str| {
            let (ast, b) = body(expr);
            keeps_scalars(&ast, b, "x")
        };
        for yes in [
            "a.map(x, x)",
            "a.map(x, x + x)",
            "a.map(x, x * 2 - 1)",
            "a.map(x, -x)",
            "a.map(x, 1)",
            "a.map(x, x > 1 ? x : 0)",
            "a.map(x, x == 'a')",
            "a.map(x, size(x))",
            "a.map(x, int(x) + 1)",
            "a.map(x, x + [1])",
            "a.map(x, x + 'a')",
        ] {
            assert!(keeps(yes), "{yes}");
        }
        for no in [
            "a.map(x, 'a')",
            "a.map(x, [x])",
            "a.map(x, {'k': x})",
            "a.map(x, string(x))",
            "a.map(x, x > 1 ? x : 'a')",
            "a.map(x, y)",
            "a.map(x, 'a' + 'b')",
            "a.map(x, x.f)",
            "a.map(x, x[0])",
            "a.map(x, dyn(x))",
            "a.map(x, optional.of(x))",
            "a.map(x, [1].map(y, y))",
        ] {
            assert!(!keeps(no), "{no}");
        }
    }

    #[test]
    fn a_body_that_reads_only_its_variable() {
        let only = |expr: &str| {
            let (ast, b) = body(expr);
            reads_only(&ast, b, "x")
        };
        assert!(only("a.map(x, x + x)"));
        assert!(only("a.filter(x, x.size() > 3 && x.startsWith('a'))"));
        assert!(only("a.all(x, x.tags.all(t, t.size() > x.n))"));
        assert!(only("a.all(x, x.map(x, x + 1).size() > 0)"));
        assert!(!only("a.all(x, x == y)"));
        assert!(!only("a.all(x, x == event.text)"));
        assert!(!only("a.all(x, x == .x)"));
        assert!(!only("a.all(x, math.abs(x) > 1)"));
        assert!(!only("a.all(x, type(x) == string)"));
        // An inner loop's name is its own only inside its body, not in its range.
        assert!(!only("a.all(x, t.all(t, t > x))"));
    }

    #[test]
    fn fields_and_member_calls_need_bytes() {
        // `{"id":0}`
        assert_eq!(least("a.map(c, c.id)", "c"), 8);
        // `{"price":0,"qty":0}`
        assert_eq!(least("a.map(i, i.qty * i.price)", "i"), 19);
        // `{"a":{"b":0}}`
        assert_eq!(least("a.map(x, x.a.b)", "x"), 13);
        // `{"a":""}`
        assert_eq!(least("a.map(x, x.a.size())", "x"), 8);
        assert_eq!(least("a.filter(l, l.size() > 3)", "l"), 2);
        assert_eq!(least("a.filter(l, size(l) > 3)", "l"), 2);
        assert_eq!(least("a.filter(l, l.startsWith('x'))", "l"), 2);
        assert_eq!(least("a.filter(l, 'x' in l)", "l"), 2);
        assert_eq!(least("a.filter(l, l[0] == 1)", "l"), 2);
        assert_eq!(least("a.filter(l, l.exists(y, y == 1))", "l"), 2);
    }

    #[test]
    fn what_may_absorb_an_error_needs_only_what_both_sides_need() {
        assert_eq!(least("a.filter(x, x == 'a' || x.size() > 3)", "x"), 1);
        assert_eq!(
            least("a.filter(x, x.size() > 3 && x.startsWith('a'))", "x"),
            2
        );
        assert_eq!(least("a.filter(x, x.a == 1 && x.b == 2)", "x"), 2);
        assert_eq!(least("a.filter(x, x.a == 1 || x.a == 2)", "x"), 7);
        assert_eq!(least("a.filter(x, true ? x.a == 1 : x.b == 1)", "x"), 2);
        assert_eq!(least("a.filter(x, x.a ? true : x.b)", "x"), 7);
        assert_eq!(least("a.filter(x, has(x.a))", "x"), 1);
        assert_eq!(least("a.filter(x, x.?a.hasValue())", "x"), 1);
        // A nested loop may bind the same name: only its range is read.
        assert_eq!(least("a.filter(x, [{'a': 1}].exists(x, x.a == 1))", "x"), 1);
        // `{"b":""}`
        assert_eq!(least("a.filter(x, x.b.exists(x, x.a == 1))", "x"), 8);
        // Another variable's needs are not this one's.
        assert_eq!(least("a.filter(x, y.size() > 0)", "x"), 1);
        assert_eq!(least("a.filter(x, x == 1)", "x"), 1);
        assert_eq!(least("a.filter(x, int(x) == 1)", "x"), 1);
        assert_eq!(least("a.filter(x, optional.of(x).hasValue())", "x"), 1);
    }
}
