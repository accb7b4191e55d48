//! Costs of operators and function calls, from the shared table: each returns the node's cost
//! on top of its operands, as a polynomial upper bound, a lower bound, and the result's shape.
//!
//! Every sized table formula `f` is bounded by `max(CALL, f)`, so the bound holds whether the
//! meter charges the formula alone or at least one unit per call. A traversal `ceil(n / 10)` of
//! a symbolic size is bounded by `n / 10 + 9 / 10`; of a constant size it is exact.

use super::estimate::{Val, Walker};
use super::poly::Poly;
use super::size::{ListShape, Shape};
use super::table;
use crate::syntax::BinaryOp;

/// `max(CALL, x)` for a non-negative polynomial: raising the constant term suffices.
fn sized(x: &Poly) -> Poly {
    x.max(&Poly::constant(table::CALL as f64))
}

/// `ceil(len / 10)`.
fn traversal(len: &Poly) -> Poly {
    match len.as_constant() {
        Some(c) => Poly::constant(table::traversal(c.ceil() as u64) as f64),
        None => len.scale(0.1).add_const(0.9),
    }
}

/// A polynomial bound on `min(a, b)`: a constant when either is one, else the operand whose
/// newest variable is newer (the innermost loop's), so that the inner sum absorbs it.
fn min_poly(a: Poly, b: Poly) -> Poly {
    match (a.as_constant(), b.as_constant()) {
        (Some(x), Some(y)) => Poly::constant(x.min(y)),
        (Some(_), None) => a,
        (None, Some(_)) => b,
        (None, None) => {
            if b.newest_var() > a.newest_var() {
                b
            } else {
                a
            }
        }
    }
}

/// The cost of a call on top of its operands' costs.
/// The receiver of a member call comes first in `operands`. `pattern` is the compiled size of
/// the pattern of a `matches` call whose pattern is a literal (the program compiles those once).
pub(crate) fn call(
    w: &mut Walker<'_>,
    function: &str,
    operands: &[Val],
    pattern: Option<u64>,
) -> Val {
    let mut max = Poly::zero();
    let mut min = 0u64;
    for v in operands {
        max = max.add(&v.max);
        min = min.saturating_add(v.min);
    }
    let (own, own_min, shape) = own_cost(w, function, operands, pattern);
    Val {
        max: max.add(&own),
        min: min.saturating_add(own_min),
        shape,
    }
}

fn own_cost(
    w: &mut Walker<'_>,
    function: &str,
    ops: &[Val],
    pattern: Option<u64>,
) -> (Poly, u64, Shape) {
    let call = || Poly::constant(table::CALL as f64);
    let (cost, min, shape) = match (function, ops) {
        ("contains", [haystack, needle]) => {
            match (haystack.shape.as_str(), needle.shape.as_str()) {
                (Some(h), Some(n)) => (
                    sized(&traversal(&h).mul(&traversal(&n))),
                    table::contains(haystack.shape.str_min(), needle.shape.str_min()),
                    Shape::Scalar,
                ),
                _ => (call(), table::CALL, Shape::Scalar),
            }
        }
        ("startsWith" | "endsWith", [_, affix]) => match affix.shape.as_str() {
            Some(len) => (
                sized(&traversal(&len)),
                table::starts_ends_with(affix.shape.str_min()),
                Shape::Scalar,
            ),
            None => (call(), table::CALL, Shape::Scalar),
        },
        ("matches", [input, re]) => match (input.shape.as_str(), re.shape.as_str()) {
            (Some(len), Some(_)) => matches(&len, input, re, pattern),
            _ => (call(), table::CALL, Shape::Scalar),
        },
        (f, [x]) if table::reads_string(f) => match x.shape.as_str() {
            Some(len) => (sized(&traversal(&len)), table::CALL, Shape::Scalar),
            None => (call(), table::CALL, Shape::Scalar),
        },
        ("string" | "bytes", [x]) => conversion(w, x),
        ("dyn", [x]) => (call(), table::CALL, x.shape.clone()),
        // The extension libraries are not priced yet: an unbounded estimate keeps the bound
        // sound until they are.
        (
            "charAt" | "indexOf" | "lastIndexOf" | "lowerAscii" | "upperAscii" | "trim" | "reverse"
            | "replace" | "split" | "substring" | "join" | "quote" | "format" | "slice" | "flatten"
            | "distinct" | "sort" | "range" | "contains" | "equivalent" | "intersects" | "of"
            | "ofNonZeroValue" | "none" | "hasValue" | "value" | "orValue" | "or" | "first"
            | "last" | "unwrap" | "unwrapOpt",
            _,
        ) => (
            Poly::constant(super::size::UNBOUNDED),
            table::CALL,
            Shape::Unknown,
        ),
        _ => (call(), table::CALL, Shape::Unknown),
    };
    (cost, min, known_result(function, shape))
}

/// `s.matches(re)`: the search, one traversal of `s` times a quarter of the compiled size; a pattern
/// that is not a literal is compiled per call (the fixed `REGEX_COMPILE`) and may compile to the
/// largest size the limits allow.
fn matches(len: &Poly, input: &Val, re: &Val, pattern: Option<u64>) -> (Poly, u64, Shape) {
    let size = pattern.unwrap_or(table::REGEX_MAX_SIZE);
    let search = sized(&traversal(&len.add_const(1.0)).scale(size.div_ceil(4) as f64));
    let certain = certainly_str(&input.shape) && certainly_str(&re.shape);
    match pattern {
        Some(size) => {
            let min = if certain {
                table::matches(input.shape.str_min(), size)
            } else {
                0
            };
            (search, min, Shape::Scalar)
        }
        None => (
            search.add_const(table::REGEX_COMPILE as f64),
            if certain { table::REGEX_COMPILE } else { 0 },
            Shape::Scalar,
        ),
    }
}

/// Functions whose result is a number, bool, timestamp, duration or type.
fn known_result(function: &str, shape: Shape) -> Shape {
    let scalar = matches!(
        function,
        "size"
            | "int"
            | "uint"
            | "double"
            | "bool"
            | "type"
            | "timestamp"
            | "duration"
            | "getFullYear"
            | "getMonth"
            | "getDate"
            | "getDayOfMonth"
            | "getDayOfWeek"
            | "getDayOfYear"
            | "getHours"
            | "getMinutes"
            | "getSeconds"
            | "getMilliseconds"
    );
    if scalar { Shape::Scalar } else { shape }
}

/// `string(x)` or `bytes(x)`: a copy or validation of a string, or a formatted scalar; both
/// build a new value whose bytes are charged.
fn conversion(w: &Walker<'_>, x: &Val) -> (Poly, u64, Shape) {
    let mut cost: Option<Poly> = None;
    let mut shape: Option<Shape> = None;
    if let Some(len) = x.shape.as_str() {
        let alloc = len.scale(w.model.alloc(table::ALLOC_PER_BYTE) as f64);
        cost = Some(sized(&traversal(&len)).add(&alloc));
        shape = Some(Shape::Str { max: len, min: 0 });
    }
    if x.shape.may_be_scalar() {
        let max = table::SCALAR_STRING_MAX;
        let c = Poly::constant((table::CALL + w.model.alloc(table::alloc_bytes(max))) as f64);
        cost = Some(cost.map_or(c.clone(), |k| k.max(&c)));
        let s = Shape::Str {
            max: Poly::constant(max as f64),
            min: 0,
        };
        shape = Some(shape.map_or(s.clone(), |k| k.union(s)));
    }
    let min = match x.shape {
        Shape::Str { min, .. } => table::convert_sized(min),
        _ => table::CALL,
    };
    (
        cost.unwrap_or_else(|| Poly::constant(table::CALL as f64)),
        min.min(table::CALL),
        shape.unwrap_or(Shape::Scalar),
    )
}

/// The cost of a binary operator on top of its operands' costs.
pub(crate) fn binary(w: &mut Walker<'_>, op: BinaryOp, l: &Val, r: &Val) -> Val {
    let operands = l.max.add(&r.max);
    let operands_min = l.min.saturating_add(r.min);
    let (own, own_min, shape) = match op {
        // The right operand may be skipped: the least cost is the left operand's alone.
        BinaryOp::And | BinaryOp::Or => {
            return Val {
                max: operands,
                min: l.min,
                shape: Shape::Scalar,
            };
        }
        BinaryOp::Eq | BinaryOp::Ne => equality(&l.shape, &r.shape),
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => ordering(&l.shape, &r.shape),
        BinaryOp::In => membership(w, &r.shape),
        BinaryOp::Add => addition(w, &l.shape, &r.shape),
        BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => (
            Poly::constant(table::CALL as f64),
            table::CALL,
            Shape::Scalar,
        ),
    };
    Val {
        max: operands.add(&own),
        min: operands_min.saturating_add(own_min),
        shape,
    }
}

fn certainly_str(s: &Shape) -> bool {
    matches!(s, Shape::Str { .. })
}

fn may_be_container(s: &Shape) -> bool {
    s.alternatives().iter().any(|a| {
        matches!(
            a,
            Shape::List(_) | Shape::Map(_) | Shape::Json(_) | Shape::Object(..) | Shape::Unknown
        )
    })
}

/// `==` and `!=`: strings by one traversal of the shorter; containers by at most one unit per
/// element, entry and string byte of the smaller side (a deep comparison); anything else one
/// call.
fn equality(a: &Shape, b: &Shape) -> (Poly, u64, Shape) {
    let mut cost = Poly::constant(table::CALL as f64);
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        cost = cost.max(&sized(&traversal(&min_poly(x, y))));
    }
    if may_be_container(a) && may_be_container(b) {
        let deep = min_poly(a.deep_size(), b.deep_size());
        cost = cost.max(&deep.add_const(table::CALL as f64));
    }
    let min = if certainly_str(a) && certainly_str(b) {
        table::compare_sized(a.str_min(), b.str_min())
    } else {
        table::CALL
    };
    (cost, min, Shape::Scalar)
}

/// `<`, `<=`, `>`, `>=`: strings and bytes by one traversal of the shorter, else one call.
fn ordering(a: &Shape, b: &Shape) -> (Poly, u64, Shape) {
    let mut cost = Poly::constant(table::CALL as f64);
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        cost = cost.max(&sized(&traversal(&min_poly(x, y))));
    }
    let min = if certainly_str(a) && certainly_str(b) {
        table::compare_sized(a.str_min(), b.str_min())
    } else {
        table::CALL
    };
    (cost, min, Shape::Scalar)
}

/// `x in c`: one comparison per element of a list, each walking at most the smaller of `x` and
/// the element (`in_list`), which the list's deep size bounds; one lookup in a map.
fn membership(w: &Walker<'_>, container: &Shape) -> (Poly, u64, Shape) {
    let mut cost = Poly::constant(table::CALL as f64);
    if let Some((len, _)) = container.as_list(&w.parts) {
        cost = cost.max(&sized(&len.add(&container.deep_size())));
    }
    let min = match container {
        Shape::List(l) => table::in_list(l.min_len, 0, 0),
        _ => table::CALL,
    };
    (cost, min, Shape::Scalar)
}

/// `a + b`: string or bytes concatenation (one traversal of the result, plus its bytes), list
/// concatenation (one call, plus its elements), or arithmetic (one call).
fn addition(w: &Walker<'_>, lhs: &Shape, rhs: &Shape) -> (Poly, u64, Shape) {
    let (a, b) = (lhs, rhs);
    let mut cost = Poly::constant(table::CALL as f64);
    let mut shape: Option<Shape> = None;
    let mut min = 0;
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        let len = x.add(&y);
        let alloc = len.scale(w.model.alloc(table::ALLOC_PER_BYTE) as f64);
        cost = cost.max(&sized(&traversal(&len)).add(&alloc));
        let (amin, bmin) = (a.str_min(), b.str_min());
        if certainly_str(a) && certainly_str(b) {
            min = table::concat(amin, bmin)
                .saturating_add(w.model.alloc(table::alloc_bytes(amin.saturating_add(bmin))));
        }
        shape = Some(Shape::Str {
            max: len,
            min: amin.saturating_add(bmin),
        });
    }
    if let (Some((la, ea)), Some((lb, eb))) = (a.as_list(&w.parts), b.as_list(&w.parts)) {
        let len = la.add(&lb);
        let alloc = len.scale(w.model.alloc(table::ALLOC_PER_ELEMENT) as f64);
        cost = cost.max(&alloc.add_const(table::CALL as f64));
        let (amin, bmin) = match (a, b) {
            (Shape::List(first), Shape::List(second)) => {
                let total = first.min_len.saturating_add(second.min_len);
                min = table::CALL.saturating_add(w.model.alloc(table::alloc_list(total)));
                (first.min_len, second.min_len)
            }
            _ => (0, 0),
        };
        let s = Shape::List(Box::new(ListShape {
            len,
            min_len: amin.saturating_add(bmin),
            elem: ea.union(eb),
            elem_var: None,
        }));
        shape = Some(shape.map_or(s.clone(), |k| k.union(s)));
    }
    if a.may_be_scalar() && b.may_be_scalar() {
        shape = Some(shape.map_or(Shape::Scalar, |k| k.union(Shape::Scalar)));
        if matches!((a, b), (Shape::Scalar, Shape::Scalar)) {
            min = table::CALL;
        }
    }
    (cost, min, shape.unwrap_or(Shape::Scalar))
}
