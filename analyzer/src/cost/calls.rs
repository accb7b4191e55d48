//! Costs of operators and function calls, from the shared table: each returns the node's cost
//! on top of its operands, as a polynomial upper bound, a lower bound, and the result's shape.
//!
//! Every sized table formula `f` is bounded by `max(CALL, f)`, so the bound holds whether the
//! meter charges the formula alone or at least one unit per call. A traversal `ceil(n / 10)` of
//! a symbolic size is bounded by `n / 10 + 9 / 10`; of a constant size it is exact.

use super::estimate::{Val, Walker};
use super::parts::Uses;
use super::poly::Poly;
use super::shape::{ListShape, Shape, UNBOUNDED};
use super::table;
use crate::syntax::BinaryOp;
use crate::types::Type;

/// `max(CALL, x)` for a non-negative polynomial: raising the constant term suffices.
pub(super) fn sized(x: &Poly) -> Poly {
    x.max(&Poly::constant(table::CALL as f64))
}

/// `ceil(len / 10)`.
pub(super) fn traversal(len: &Poly) -> Poly {
    match len.as_constant() {
        Some(c) => Poly::constant(table::traversal(c.ceil() as u64) as f64),
        None => len.scale(0.1).add_const(0.9),
    }
}

/// A polynomial bound on `min(a, b)`: a constant when either is one; else, from model
/// version 5 on, the operand that holds the element of the innermost loop summing over it
/// ([`Walker::loop_depth`]), so that the loop's sum absorbs it (`r == event.attributes.author`
/// inside a loop over `reviewers` is bounded by `r`, and the loop sums `r` to the list's bytes);
/// otherwise, from version 6 on, the operand with the smaller maximum; and when that does not
/// decide (always under earlier versions), the operand whose newest variable is newer. Any
/// choice is sound: `min(a, b)` is at most either.
pub(super) fn min_poly(walker: &Walker<'_>, a: Poly, b: Poly) -> Poly {
    match (a.as_constant(), b.as_constant()) {
        (Some(first), Some(second)) => Poly::constant(first.min(second)),
        (Some(_), None) => a,
        (None, Some(_)) => b,
        (None, None) => {
            if walker.model.loop_aware_min() {
                let (depth_a, depth_b) = (walker.loop_depth(&a), walker.loop_depth(&b));
                if depth_a != depth_b {
                    return if depth_b > depth_a { b } else { a };
                }
            }
            // From version 6 one part may stand on both sides (`l[0]` is one part wherever it
            // is written), so the newest variable says nothing: the operand with the smaller
            // maximum bounds the minimum more tightly.
            if walker.model.indexes_apart() {
                let (most_a, most_b) = (walker.parts.maximize(&a), walker.parts.maximize(&b));
                match most_a.total_cmp(&most_b) {
                    std::cmp::Ordering::Less => return a,
                    std::cmp::Ordering::Greater => return b,
                    std::cmp::Ordering::Equal => {}
                }
            }
            if b.newest_var() > a.newest_var() {
                b
            } else {
                a
            }
        }
    }
}

/// What the estimator knows of a call's arguments besides their values' shapes.
pub(crate) struct Literals {
    /// The compiled size of the pattern of a `matches` call whose pattern is a literal (the
    /// program compiles those once).
    pub(crate) pattern: Option<u64>,
    /// The value of each argument (after the receiver) that is an int literal.
    pub(crate) ints: Vec<Option<i64>>,
    /// For `format` on a literal pattern with no `%s` clause: its clauses by kind
    /// ([`super::libraries::numeric_clauses`]).
    pub(crate) numeric_format: Option<super::libraries::FormatClauses>,
    /// For `format` on a literal pattern: whether every clause is `%s` or `%d`
    /// ([`super::libraries::text_clauses_only`]).
    pub(crate) text_format: bool,
    /// For `format` on a literal pattern and a list literal without optional elements (version
    /// 6): the shapes of the elements its clauses may take, the first
    /// [`super::libraries::consumed_args`] of them in order.
    pub(crate) format_items: Option<Vec<Shape>>,
    /// For the same calls, when the evaluator parses every clause: each position's verb and
    /// the exact text of a literal element ([`super::libraries::FormatPosition`]).
    pub(crate) format_positions: Option<Vec<super::libraries::FormatPosition>>,
    /// For `format` on a literal pattern: how many of its clauses are `%f` or `%e`
    /// ([`super::libraries::precise_clauses`]).
    pub(crate) precise_clauses: Option<u64>,
}

/// The cost of a call on top of its operands' costs.
/// The receiver of a member call comes first in `operands`, and `types` are the operands' static
/// types; a namespaced function (`sets.contains`) comes by its qualified name, without a
/// receiver.
pub(crate) fn call(
    w: &mut Walker<'_>,
    function: &str,
    operands: &[Val],
    types: &[Type],
    literals: &Literals,
) -> Val {
    let mut max = Poly::zero();
    let mut min = 0u64;
    for v in operands {
        max = max.add(&v.max);
        min = min.saturating_add(v.min);
    }
    // `or` and `orValue` evaluate their argument only when the receiver is empty.
    if let ("or" | "orValue", [receiver, _]) = (function, operands) {
        min = receiver.min;
    }
    // Only the elements the pattern's clauses take are formatted: price the formatting over a
    // list of just those (the whole list's building is in its operand cost above).
    let consumed;
    let operands = match (&literals.format_items, operands) {
        (Some(items), [pattern, args]) => {
            let elem = items
                .iter()
                .cloned()
                .reduce(Shape::union)
                .unwrap_or(Shape::Scalar);
            let list = Shape::List(Box::new(ListShape {
                len: Poly::constant(items.len() as f64),
                min_len: 0,
                elem,
                elem_var: None,
                pieces: Vec::new(),
                spacing: None,
                scalar_from_source: false,
            }));
            consumed = [
                Val {
                    max: pattern.max.clone(),
                    min: pattern.min,
                    shape: pattern.shape.clone(),
                },
                Val {
                    max: args.max.clone(),
                    min: args.min,
                    shape: list,
                },
            ];
            &consumed[..]
        }
        _ => operands,
    };
    // The text each consumed element formats to is bounded by position (each element on its
    // own, summed), not as the count times the largest.
    let items = literals.format_items.as_deref();
    let by_position = match (&literals.format_positions, items, operands) {
        (Some(positions), Some(items), [pattern, _]) if function == "format" => {
            Some(w.format_by_position(pattern, items, positions))
        }
        _ => None,
    };
    let library = match (function, literals.numeric_format, operands) {
        _ if by_position.is_some() => by_position,
        // Version 4 bounded `%d`, `%f` and `%e` per clause; version 5 also `%b`, `%o`, `%x`.
        ("format", Some(clauses), [pattern, args])
            if w.model.tighter_bounds()
                && (w.model.bounds_radix_clauses() || clauses.radix + clauses.hex == 0) =>
        {
            Some(w.numeric_format(pattern, args, clauses, items))
        }
        _ => w.library_call(
            function,
            operands,
            &literals.ints,
            literals.text_format,
            items,
        ),
    };
    let (mut own, own_min, shape) = match library {
        Some(own) => own,
        None => own_cost(w, function, operands, types, literals.pattern),
    };
    // Version 8: each `%f` and `%e` clause pays for the digits it works out.
    if function == "format" && w.model.format_float() > 0 {
        let clauses = match (literals.precise_clauses, operands) {
            (Some(n), _) => Poly::constant(n as f64),
            (None, [pattern, args]) => precise_clauses_at_most(w, pattern, args),
            _ => Poly::zero(),
        };
        own = own.add(&clauses.scale(w.model.format_float() as f64));
    }
    Val {
        max: max.add(&own),
        min: min.saturating_add(own_min),
        shape,
    }
}

/// The most `%f` and `%e` clauses a pattern that is not a literal may have: every clause
/// takes two bytes of the pattern at least and one element of the list (the evaluator fails on
/// a missing one), so the fewer of the two bounds, by their largest values.
fn precise_clauses_at_most(w: &Walker<'_>, pattern: &Val, args: &Val) -> Poly {
    let Some(len) = pattern.shape.as_str() else {
        return Poly::zero();
    };
    let by_pattern = len.scale(0.5);
    let by_list = args
        .shape
        .as_list(&w.parts)
        .map_or_else(|| Poly::constant(UNBOUNDED), |(n, _)| n);
    if w.parts.maximize(&by_list) < w.parts.maximize(&by_pattern) {
        by_list
    } else {
        by_pattern
    }
}

fn own_cost(
    w: &mut Walker<'_>,
    function: &str,
    ops: &[Val],
    types: &[Type],
    pattern: Option<u64>,
) -> (Poly, u64, Shape) {
    let call = || Poly::constant(table::CALL as f64);
    if matches!(
        function,
        "contains" | "startsWith" | "endsWith" | "matches" | "string" | "bytes"
    ) {
        for op in ops {
            w.parts.note(op.shape.part_vars(), Uses::STRING);
        }
    }
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
            // Version 8: `double(s)` also pays a unit a byte and the decimal arithmetic.
            Some(len) if f == "double" && w.model.parse_double(0) > 0 => (
                sized(&traversal(&len))
                    .add(&len)
                    .add_const(table::PARSE_DOUBLE as f64),
                table::CALL,
                Shape::Scalar,
            ),
            Some(len) => (sized(&traversal(&len)), table::CALL, Shape::Scalar),
            None => (call(), table::CALL, Shape::Scalar),
        },
        ("string" | "bytes", [x]) => conversion(w, function, x, types.first()),
        ("dyn", [x]) => (call(), table::CALL, x.shape.clone()),
        _ => (call(), table::CALL, Shape::Unknown),
    };
    (cost, min, known_result(function, shape))
}

/// `s.matches(re)`: the search, every byte of `s` times a quarter of the compiled size; a pattern
/// that is not a literal is compiled per call (the fixed `REGEX_COMPILE`) and may compile to the
/// largest size the limits allow.
fn matches(len: &Poly, input: &Val, re: &Val, pattern: Option<u64>) -> (Poly, u64, Shape) {
    let size = pattern.unwrap_or(table::REGEX_MAX_SIZE);
    let search = sized(&len.add_const(1.0).scale(size.div_ceil(4) as f64));
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
        "size" | "int" | "uint" | "double" | "bool" | "type" | "timestamp" | "duration"
    ) || crate::check::functions::is_time_accessor(function);
    if scalar { Shape::Scalar } else { shape }
}

/// `string(x)` or `bytes(x)`. The meter charges one call for the identity conversions
/// (`string` of a string, `bytes` of bytes), a traversal plus the result's bytes for the
/// conversions between strings and bytes, and one call plus the formatted result (at most
/// `SCALAR_STRING_MAX` bytes) for a scalar. The checker's type of `x` says which of these can
/// happen; a JSON value of the event is a string or a scalar, never bytes.
fn conversion(w: &Walker<'_>, function: &str, x: &Val, ty: Option<&Type>) -> (Poly, u64, Shape) {
    let call = || Poly::constant(table::CALL as f64);
    let identity = match function {
        "string" => Type::String,
        _ => Type::Bytes,
    };
    let other = match function {
        "string" => Type::Bytes,
        _ => Type::String,
    };
    // The least charge is never below one call; the lower bound stays the traversal of the
    // shortest argument, as cel-go states it.
    let ty = ty.unwrap_or(&Type::Dyn);
    let mut cost: Option<Poly> = None;
    let mut shape: Option<Shape> = None;
    let mut add = |c: Poly, s: Shape| {
        cost = Some(cost.take().map_or(c.clone(), |k| k.max(&c)));
        shape = Some(shape.take().map_or(s.clone(), |k| k.union(s)));
    };
    if let Some(len) = x.shape.as_str() {
        if *ty == identity {
            add(call(), x.shape.clone());
        } else if *ty == other || ty.is_dyn_or_error() && !json_only(&x.shape) {
            let alloc = len.scale(w.model.alloc(table::ALLOC_PER_BYTE) as f64);
            add(
                sized(&traversal(&len)).add(&alloc),
                Shape::Str { max: len, min: 0 },
            );
        } else if function == "string" {
            // A JSON string converted to a string is itself.
            add(call(), x.shape.clone());
        } else {
            let alloc = len.scale(w.model.alloc(table::ALLOC_PER_BYTE) as f64);
            add(
                sized(&traversal(&len)).add(&alloc),
                Shape::Str { max: len, min: 0 },
            );
        }
    }
    if x.shape.may_be_scalar() {
        let max = table::SCALAR_STRING_MAX;
        let c = Poly::constant((table::CALL + w.model.alloc(table::alloc_bytes(max))) as f64);
        add(
            c,
            Shape::Str {
                max: Poly::constant(max as f64),
                min: 0,
            },
        );
    }
    let min = match x.shape {
        Shape::Str { min, .. } => table::convert_sized(min),
        _ => table::CALL,
    };
    (
        cost.unwrap_or_else(call),
        min.min(table::CALL),
        shape.unwrap_or(Shape::Scalar),
    )
}

/// Whether every string the shape may be is a JSON string of the event (never bytes).
fn json_only(shape: &Shape) -> bool {
    shape
        .alternatives()
        .iter()
        .all(|a| !matches!(a, Shape::Str { .. } | Shape::Unknown))
}

/// The cost of a binary operator on top of its operands' costs.
pub(crate) fn binary(w: &mut Walker<'_>, op: BinaryOp, l: &Val, r: &Val) -> Val {
    let operands = l.max.add(&r.max);
    let operands_min = l.min.saturating_add(r.min);
    let noted = match op {
        BinaryOp::Eq | BinaryOp::Ne => Some((Uses::COMPARED, Uses::COMPARED)),
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            Some((Uses::STRING, Uses::STRING))
        }
        BinaryOp::In => Some((Uses::NONE, Uses::LIST)),
        BinaryOp::Add => Some((Uses::CONCATENATED, Uses::CONCATENATED)),
        _ => None,
    };
    if let Some((left, right)) = noted {
        w.parts.note(l.shape.part_vars(), left);
        w.parts.note(r.shape.part_vars(), right);
    }
    let (own, own_min, shape) = match op {
        // The right operand may be skipped: the least cost is the left operand's alone.
        BinaryOp::And | BinaryOp::Or => {
            return Val {
                max: operands,
                min: l.min,
                shape: Shape::Scalar,
            };
        }
        BinaryOp::Eq | BinaryOp::Ne => equality(w, &l.shape, &r.shape),
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            ordering(w, &l.shape, &r.shape)
        }
        BinaryOp::In => membership(w, &l.shape, &r.shape),
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

/// The lists an operand of a list concatenation contributes: its own pieces when it is a
/// concatenation itself, else the operand (whose list alternatives a loop will iterate).
/// Only an operand's alternatives that may be lists take part: a list concatenation of
/// anything else is an evaluation error.
/// The most shapes the pieces of one concatenation hold together ([`Shape::nodes`]).
const MAX_PIECE_NODES: usize = 64;

fn concatenation_pieces(s: &Shape) -> Vec<Shape> {
    let lists: Vec<&Shape> = s
        .alternatives()
        .iter()
        .filter(|a| matches!(a, Shape::List(_) | Shape::Json(_) | Shape::Unknown))
        .collect();
    match lists.as_slice() {
        [Shape::List(l)] if !l.pieces.is_empty() => l.pieces.clone(),
        [one] => vec![(*one).clone()],
        _ => vec![s.clone()],
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

/// `==` and `!=`, as the meter charges them: two strings (or two bytes values) by one traversal
/// of the shorter, two containers by one call plus the smaller deep size (the walk visits at
/// most that much), anything else (two kinds that differ included) one call. Under `dyn` a side
/// may be several kinds, so the bound is the max over the pairs its shapes allow.
fn equality(w: &Walker<'_>, a: &Shape, b: &Shape) -> (Poly, u64, Shape) {
    let mut cost = Poly::constant(table::CALL as f64);
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        cost = cost.max(&sized(&traversal(&min_poly(w, x, y))));
    }
    if may_be_container(a) && may_be_container(b) {
        let deep = min_poly(w, a.deep_size(), b.deep_size());
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
fn ordering(w: &Walker<'_>, a: &Shape, b: &Shape) -> (Poly, u64, Shape) {
    let mut cost = Poly::constant(table::CALL as f64);
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        cost = cost.max(&sized(&traversal(&min_poly(w, x, y))));
    }
    let min = if certainly_str(a) && certainly_str(b) {
        table::compare_sized(a.str_min(), b.str_min())
    } else {
        table::CALL
    };
    (cost, min, Shape::Scalar)
}

/// The most probes one key lookup makes in a value of shape `container`: [`table::key_probes`]
/// of the most entries it may have (zero when it cannot be a map, the most any map makes when
/// nothing bounds it).
fn key_probes(w: &Walker<'_>, container: &Shape) -> u64 {
    let most = |entries: &Poly| {
        let n = super::estimate::units(w.parts.maximize(entries));
        table::key_probes(n.min(table::MAP_MAX_ENTRIES))
    };
    let mut probes = 0;
    for alt in container.alternatives() {
        let p = match alt {
            Shape::Map(m) => most(&m.len),
            Shape::Json(v) => most(&w.parts.count(*v)),
            Shape::Object(..) | Shape::Unknown => table::key_probes(table::MAP_MAX_ENTRIES),
            _ => 0,
        };
        probes = probes.max(p);
    }
    probes
}

/// A bound on [`table::key_lookup`] for a key of shape `key` in a value of shape `container`:
/// one call, and when the key may be a string, every probe's `⌊len / 10⌋ ≤ len / 10`.
pub(super) fn key_lookup(w: &Walker<'_>, container: &Shape, key: &Shape) -> Poly {
    let call = Poly::constant(table::CALL as f64);
    let probes = key_probes(w, container);
    match key.as_str() {
        Some(len) if probes > 0 && w.model.key_bytes(1) > 0 => {
            call.add(&key_compare(&len).scale(probes as f64))
        }
        _ => call,
    }
}

/// A bound on [`table::key_compare`] of a key of `len` bytes: exact for a constant length,
/// else `len / 10`.
pub(super) fn key_compare(len: &Poly) -> Poly {
    match len.as_constant() {
        Some(c) => Poly::constant(table::key_compare(c.ceil() as u64) as f64),
        None => len.scale(0.1),
    }
}

/// A bound on [`table::map_build`] for a map of `entries` entries whose keys' comparisons come
/// to `compares` (a bound on `Σ key_compare(|kᵢ|)`, from [`key_compare`] of each key): the
/// passes at the most entries, which never decrease as a map grows.
pub(super) fn map_build(w: &Walker<'_>, entries: &Poly, compares: &Poly) -> Poly {
    if w.model.key_bytes(1) == 0 {
        return Poly::zero();
    }
    let n = super::estimate::units(w.parts.maximize(entries)).min(table::MAP_MAX_ENTRIES);
    compares.scale(table::map_build_passes(n) as f64)
}

/// `x in c`: one comparison per element of a list, each walking at most the smaller of `x` and
/// the element (`in_list`), which the list's deep size bounds; one key lookup in a map.
fn membership(w: &Walker<'_>, key: &Shape, container: &Shape) -> (Poly, u64, Shape) {
    let mut cost = key_lookup(w, container, key);
    if let Some((len, _)) = container.as_list(&w.parts) {
        // A list whose elements are parts of one budget (the parts of a split, a JSON list's
        // elements, what a filter or map keeps of them) walks at most their sizes summed
        // (version 8), not the count times the largest.
        let deep = match container {
            Shape::List(l) if w.model.sums_list_deep_size() => w.list_deep_size(l),
            _ => container.deep_size(),
        };
        cost = cost.max(&sized(&len.add(&deep)));
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
            pieces: if w.model.sums_each_alternative() {
                let mut pieces = concatenation_pieces(a);
                pieces.extend(concatenation_pieces(b));
                // Pieces that would hold more than a bounded number of shapes are dropped (the
                // list is then one list, priced as a whole: sound, looser). Each piece holds an
                // operand whole, so `x + x` repeated down a chain of `map`s would double them
                // at every step: twenty steps took seconds to estimate.
                let held: usize = pieces.iter().map(|p| p.nodes(MAX_PIECE_NODES + 1)).sum();
                if held <= MAX_PIECE_NODES {
                    pieces
                } else {
                    Vec::new()
                }
            } else {
                Vec::new()
            },
            spacing: None,
            scalar_from_source: false,
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
