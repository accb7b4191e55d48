//! Costs of the extension libraries' functions (strings, lists, sets, optional types) in the
//! estimator: each mirrors what the meter charges for the call (`eval::strings`, `eval::lists`,
//! `eval::format`, `eval::optional`), as a polynomial upper bound on top of the operands, with
//! the size of the result, so that a sized operation on it is bounded too.
//!
//! Results derived from one event part keep its budget: the parts of `s.split(sep)` are
//! elements of `s` (together never longer than `s`), so a comprehension over them sums over
//! the budget instead of multiplying the count by the largest part.

use super::calls::{min_poly, sized, traversal};
use super::estimate::{Val, Walker, units};
use super::parts::{PartKind, Uses};
use super::poly::Poly;
use super::shape::{ListShape, MapShape, Shape, UNBOUNDED};
use super::table;

/// A call's own cost: its max on top of the operands, its least cost, and the result's shape.
pub(crate) type Own = (Poly, u64, Shape);

use table::{FORMATTED_DOUBLE_MAX, FORMATTED_SCALAR_MAX};
/// Bytes of `%s` text per byte of a JSON event part. The most text per byte comes from short
/// exponent forms: `1e308` (5 bytes, and 1 more for the `,` before the next element) prints as
/// 309 digits, and `, ` after it: 311 bytes for 6, under 52 a byte. A value alone (no separator)
/// is covered by the constant [`FORMATTED_DOUBLE_MAX`] added to the per-byte term.
const FORMATTED_PER_JSON_BYTE: f64 = 52.0;
/// Bytes of `%s` text a JSON value of the event writes beyond [`FORMATTED_PER_JSON_BYTE`] per
/// byte (cost-model version 6): `1e308` (5 bytes, 309 digits) is the most, `309 − 52·5 = 49`; a
/// number of 6 bytes or more writes at most [`FORMATTED_DOUBLE_MAX`] (343 ≤ 52·6 + 49), of 4
/// bytes or fewer at most 101 (`1e-99` needs 5), and a string, a bool or null no more than its
/// bytes. A list or an object then stays within `52·b + 49` too: every element with its `, `
/// writes at most `52·b + 49 + 2 ≤ 52·(b + 1)`, which its bytes and its comma pay for
/// (docs/cost-model.md §2.1). A `%f` or `%e` with a precision writes more for a short number
/// (`%.100f` of `0` is 102 bytes), so an argument that such a clause may take keeps
/// [`FORMATTED_SCALAR_MAX`].
pub(crate) const FORMATTED_JSON_EXTRA: f64 = 49.0;
/// The most digits of a list's index (`i64::MAX` has 19).
const INDEX_DIGITS_MAX: f64 = 19.0;

fn constant(c: u64) -> Poly {
    Poly::constant(c as f64)
}

fn unbounded() -> Own {
    (Poly::constant(UNBOUNDED), 0, Shape::Unknown)
}

impl Walker<'_> {
    fn bytes_alloc(&self, len: &Poly) -> Poly {
        len.scale(self.model.alloc(table::ALLOC_PER_BYTE) as f64)
    }

    fn list_alloc(&self, len: &Poly) -> Poly {
        len.scale(self.model.alloc(table::ALLOC_PER_ELEMENT) as f64)
            .add_const(self.model.list_alloc() as f64)
    }

    /// The list a value may be, with an element variable when its elements are distinct
    /// elements of one event part (a JSON list of the event, or a list derived from one).
    fn list_of(&mut self, shape: &Shape) -> Option<ListShape> {
        match shape {
            Shape::List(l) => Some((**l).clone()),
            Shape::Json(v) if !self.parts.part(*v).object => {
                let x = self.parts.element(*v);
                Some(ListShape {
                    len: self.parts.count(*v),
                    min_len: 0,
                    elem: Shape::Json(x),
                    elem_var: Some(x),
                    pieces: Vec::new(),
                    spacing: None,
                    scalar_from_source: false,
                })
            }
            _ => shape.as_list(&self.parts).map(|(len, elem)| ListShape {
                len,
                min_len: 0,
                elem,
                elem_var: None,
                pieces: Vec::new(),
                spacing: None,
                scalar_from_source: false,
            }),
        }
    }

    /// A bound on `Σ p(eᵢ)` over the elements of `list`, where `p` bounds one element in
    /// terms of the list's element variable (the comprehension rule of docs/cost-model.md §4).
    fn sum_over(&self, list: &ListShape, per: &Poly) -> Poly {
        let Some((x, parent)) = list
            .elem_var
            .and_then(|x| Some((x, self.parts.part(x).parent?)))
        else {
            return list.len.mul(per);
        };
        let per = self.parts.split_entry(per, x);
        let per = self.parts.fold_into(&per, x);
        if self.sizes == super::model::SizeModel::Shared {
            let (p0, q) = per.split_on(x);
            list.len.mul(&p0).add(&q.substitute(x, parent))
        } else {
            list.len.mul(&per.substitute(x, parent))
        }
    }

    /// `per` for the largest element of `list` (the element variable at its whole part).
    fn at_largest(&self, list: &ListShape, per: &Poly) -> Poly {
        match list
            .elem_var
            .and_then(|x| Some((x, self.parts.part(x).parent?)))
        {
            Some((x, parent)) => {
                let per = self.parts.split_entry(per, x);
                self.parts.fold_into(&per, x).substitute(x, parent)
            }
            None => per.clone(),
        }
    }

    /// `pattern.format(args)` on a literal pattern with no `%s` ([`FormatClauses`]): each
    /// clause writes at most [`FORMATTED_SCALAR_MAX`] bytes or fails before it writes, and
    /// the `%x` clauses also the hex text of the strings among the arguments, each argument used
    /// once (docs/cost-model.md §2.1).
    pub(crate) fn numeric_format(
        &mut self,
        pattern: &Val,
        args: &Val,
        clauses: FormatClauses,
        items: Option<&[Shape]>,
    ) -> Own {
        let Some(n) = pattern.shape.as_str() else {
            return unbounded();
        };
        let count = clauses
            .numeric
            .saturating_add(clauses.radix)
            .saturating_add(clauses.hex);
        let mut out = n.add_const(count.saturating_mul(FORMATTED_SCALAR_MAX) as f64);
        if clauses.hex > 0 {
            // The consumed elements by position (version 6): each its own hex text, summed.
            let text = match (items, self.list_of(&args.shape)) {
                (Some(items), _) => items
                    .iter()
                    .fold(Poly::zero(), |sum, item| sum.add(&hex_text(item))),
                (None, Some(list)) => self.sum_over(&list, &hex_text(&list.elem)),
                (None, None) => Poly::constant(UNBOUNDED),
            };
            out = out.add(&text);
        }
        let cost = sized(&traversal(&n)).add(&self.bytes_alloc(&out));
        (cost, table::CALL, Shape::Str { max: out, min: 0 })
    }

    /// `pattern.format([e₀, e₁, …])` on a literal pattern and a list literal (version 6): the
    /// `i`-th clause formats `eᵢ` only, so each position is priced by its own verb and its own
    /// element ([`clause_bound`]), or by the exact text of a literal element, and the bounds are
    /// summed with the pattern's own text (docs/cost-model.md §2.1).
    pub(crate) fn format_by_position(
        &mut self,
        pattern: &Val,
        items: &[Shape],
        positions: &[FormatPosition],
    ) -> Own {
        let Some(n) = pattern.shape.as_str() else {
            return unbounded();
        };
        let mut out = n.clone();
        for (item, position) in items.iter().zip(positions) {
            let text = match (position.exact, position.typed) {
                (Some(len), _) | (None, Some(len)) => constant(len),
                (None, None) => clause_bound(self, position.verb, item),
            };
            out = out.add(&text);
        }
        let cost = sized(&traversal(&n)).add(&self.bytes_alloc(&out));
        (cost, table::CALL, Shape::Str { max: out, min: 0 })
    }

    /// The cost of an extension-library call, or `None` when `function` is not one.
    pub(crate) fn library_call(
        &mut self,
        function: &str,
        ops: &[Val],
        ints: &[Option<i64>],
        text_format: bool,
        items: Option<&[Shape]>,
    ) -> Option<Own> {
        let own = match (function, ops) {
            (
                "charAt" | "indexOf" | "lastIndexOf" | "lowerAscii" | "upperAscii" | "trim"
                | "replace" | "split" | "substring" | "format",
                _,
            ) => self.string_call(function, ops, ints, text_format, items),
            ("reverse", [recv]) => self.reverse(recv),
            ("join", [list, ..]) => self.join(list, ops.get(1)),
            ("strings.quote", [s]) => {
                let Some(n) = s.shape.as_str() else {
                    return Some(unbounded());
                };
                let len = n.scale(2.0).add_const(2.0);
                let cost = sized(&traversal(&n)).add(&self.bytes_alloc(&len));
                (cost, 0, Shape::Str { max: len, min: 2 })
            }
            (
                "slice" | "flatten" | "distinct" | "sort" | "first" | "last" | "unwrapOpt"
                | "optional.unwrap",
                _,
            ) => self.list_call(function, ops, ints),
            ("lists.range", [_]) => match ints.first().copied().flatten() {
                Some(n) => {
                    let len = n.max(0) as u64;
                    let fixed = table::CALL + table::LIST_CREATE;
                    let cost = constant(fixed).add(&self.list_alloc(&constant(len)));
                    let shape = Shape::List(Box::new(ListShape {
                        len: constant(len),
                        min_len: len,
                        elem: Shape::Scalar,
                        elem_var: None,
                        pieces: Vec::new(),
                        spacing: None,
                        scalar_from_source: false,
                    }));
                    (
                        cost,
                        fixed + self.model.alloc(table::alloc_list(len)),
                        shape,
                    )
                }
                // A length computed at evaluation time may be anything an int holds.
                None => unbounded(),
            },
            ("sets.contains" | "sets.equivalent" | "sets.intersects", [a, b]) => {
                self.set_relation(function, a, b)
            }
            ("optional.of" | "optional.ofNonZeroValue", [x]) => (
                constant(table::CALL + self.model.optional_alloc()),
                table::CALL,
                x.shape.clone(),
            ),
            ("optional.none", []) | ("hasValue", [_]) => {
                (constant(table::CALL), table::CALL, Shape::Scalar)
            }
            ("value", [opt]) => (constant(table::CALL), table::CALL, opt.shape.clone()),
            ("or" | "orValue", [opt, other]) => (
                constant(table::CALL),
                table::CALL,
                opt.shape.clone().union(other.shape.clone()),
            ),
            _ => return None,
        };
        Some(own)
    }

    /// The strings extension on a string receiver (`format`'s receiver is its pattern).
    /// `text_format`: `format` on a literal pattern whose every clause is `%s` or `%d`
    /// ([`text_clauses_only`]).
    fn string_call(
        &mut self,
        function: &str,
        ops: &[Val],
        ints: &[Option<i64>],
        text_format: bool,
        items: Option<&[Shape]>,
    ) -> Own {
        let Some((s, args)) = ops.split_first() else {
            return unbounded();
        };
        // The receiver is read as a string: what the witness builder makes it first (a
        // split string has the parts as its elements, yet it is no list).
        self.parts.note(s.shape.part_vars(), Uses::STRING);
        let Some(n) = s.shape.as_str() else {
            return unbounded();
        };
        let arg_len = |i: usize| {
            args.get(i)
                .and_then(|a| a.shape.as_str())
                .unwrap_or_else(Poly::zero)
        };
        let certain = matches!(s.shape, Shape::Str { .. });
        let least = if certain { table::CALL } else { 0 };
        let pass = sized(&traversal(&n));
        let string = |max: Poly, min: u64| Shape::Str { max, min };
        match function {
            "charAt" => {
                let cost = pass.add(&self.bytes_alloc(&constant(4)));
                (cost, least, string(constant(4), 0))
            }
            "indexOf" | "lastIndexOf" => {
                let search = traversal(&n).mul(&traversal(&arg_len(0)));
                (sized(&search.add(&traversal(&n))), least, Shape::Scalar)
            }
            "lowerAscii" | "upperAscii" => {
                let cost = pass.add(&self.bytes_alloc(&n));
                (cost, least, string(n, s.shape.str_min()))
            }
            "trim" | "substring" => {
                let cost = pass.add(&self.bytes_alloc(&n));
                (cost, least, string(n, 0))
            }
            "replace" => {
                let new = arg_len(1);
                // Every code-point boundary (`n + 1`) may take a copy of `new` (an empty `old`
                // matches at each), up to a literal count; no byte of `s` is lost.
                // A count larger than the boundaries the longest text has is no bound at all:
                // `replace('a', 'b', 1000000)` replaces at most `n + 1` times.
                let boundaries = n.add_const(1.0);
                let most = self.parts.maximize(&boundaries);
                let copies = match ints.get(2).copied().flatten() {
                    Some(c) if c >= 0 && ((c as f64) < most || !self.model.tighter_bounds()) => {
                        constant(c as u64)
                    }
                    _ => boundaries,
                };
                let result = n.add(&copies.mul(&new));
                let search = sized(&traversal(&n).mul(&traversal(&arg_len(0))));
                let cost = search
                    .add(&traversal(&result))
                    .add(&self.bytes_alloc(&result));
                (cost, least, string(result, 0))
            }
            "split" => {
                let sep_min = args.first().map_or(0, |a| a.shape.str_min());
                self.split(
                    s,
                    &n,
                    (&arg_len(0), sep_min),
                    ints.get(1).copied().flatten(),
                )
            }
            "format" => {
                let out = match args.first() {
                    Some(list) => n.add(&self.format_args(&list.shape, text_format, items)),
                    None => n.clone(),
                };
                let cost = pass.add(&self.bytes_alloc(&out));
                (cost, least, string(out, 0))
            }
            _ => unbounded(),
        }
    }

    /// `s.split(sep[, limit])`: at most `|s| + 1` parts (fewer under a positive literal
    /// limit), whose bytes together are at most `|s|`.
    /// `sep` is the separator's largest and least length.
    fn split(&mut self, s: &Val, n: &Poly, sep: (&Poly, u64), limit: Option<i64>) -> Own {
        let (sep, sep_min) = sep;
        let parts = match limit {
            Some(l) if l >= 0 => constant(l as u64),
            _ => n.add_const(1.0),
        };
        let cost = traversal(n)
            .mul(&traversal(sep))
            .add_const(table::LIST_CREATE as f64)
            .add(&traversal(n))
            .add(&self.list_alloc(&parts))
            .add(&self.bytes_alloc(n));
        // A string that is one event part: its parts are elements of it, so sums over them
        // stay within its budget.
        let single = n.vars();
        let (elem, elem_var, spacing) = match single.as_slice() {
            [v] if n.terms().len() == 1 && *n == Poly::var(*v, 1.0) => {
                let x = self.parts.element(*v);
                (
                    Shape::Str {
                        max: Poly::var(x, 1.0),
                        min: 0,
                    },
                    Some(x),
                    // Without a limit every two parts are apart by a whole separator.
                    limit.is_none_or(|l| l < 0).then_some((*v, sep_min)),
                )
            }
            _ => (
                Shape::Str {
                    max: n.clone(),
                    min: 0,
                },
                None,
                None,
            ),
        };
        let least = if matches!(s.shape, Shape::Str { .. }) {
            table::LIST_CREATE
        } else {
            0
        };
        let shape = Shape::List(Box::new(ListShape {
            len: parts,
            min_len: 0,
            elem,
            elem_var,
            pieces: Vec::new(),
            spacing,
            scalar_from_source: false,
        }));
        (cost, least, shape)
    }

    /// `reverse()` of a string or a list.
    fn reverse(&mut self, recv: &Val) -> Own {
        let mut cost: Option<Poly> = None;
        let mut shape: Option<Shape> = None;
        if let Some(n) = recv.shape.as_str() {
            cost = Some(sized(&traversal(&n)).add(&self.bytes_alloc(&n)));
            shape = Some(Shape::Str { max: n, min: 0 });
        }
        if let Some(list) = self.list_of(&recv.shape) {
            let c = constant(table::CALL).add(&self.list_alloc(&list.len));
            cost = Some(cost.map_or(c.clone(), |k| k.max(&c)));
            let s = Shape::List(Box::new(list));
            shape = Some(shape.map_or(s.clone(), |k| k.union(s)));
        }
        match (cost, shape) {
            (Some(cost), Some(shape)) => (cost, 0, shape),
            _ => (constant(table::CALL), 0, Shape::Unknown),
        }
    }

    /// `list.join([sep])`: the call, one unit per element, and one traversal of the result,
    /// whose bytes are the elements' together plus a separator between each two.
    fn join(&mut self, list: &Val, sep: Option<&Val>) -> Own {
        let Some(list) = self.list_of(&list.shape) else {
            return unbounded();
        };
        let sep = sep
            .and_then(|s| s.shape.as_str())
            .unwrap_or_else(Poly::zero);
        let Some(elem) = list.elem.as_str() else {
            return (
                constant(table::CALL).add(&list.len),
                table::CALL,
                Shape::Scalar,
            );
        };
        let total = self.sum_over(&list, &elem).add(&list.len.mul(&sep));
        let cost = constant(table::CALL)
            .add(&list.len)
            .add(&traversal(&total))
            .add(&self.bytes_alloc(&total));
        (cost, table::CALL, Shape::Str { max: total, min: 0 })
    }

    /// The lists extension's functions and the list functions of optional types.
    fn list_call(&mut self, function: &str, ops: &[Val], ints: &[Option<i64>]) -> Own {
        let Some(recv) = ops.first() else {
            return unbounded();
        };
        let Some(list) = self.list_of(&recv.shape) else {
            return (constant(table::CALL), 0, Shape::Unknown);
        };
        let call = constant(table::CALL);
        let same = |l: &ListShape| {
            Shape::List(Box::new(ListShape {
                min_len: 0,
                ..l.clone()
            }))
        };
        match function {
            "slice" => (call.add(&self.list_alloc(&list.len)), 0, same(&list)),
            "flatten" => {
                let depth = ints.first().copied().flatten().unwrap_or(1);
                // Every element visited, at every level, is at most the deep size.
                let visited = recv.shape.deep_size();
                let cost = call.add(&visited).add(&self.list_alloc(&visited));
                let shape = Shape::List(Box::new(ListShape {
                    len: visited,
                    min_len: 0,
                    elem: flat_elem(&list.elem, depth),
                    elem_var: None,
                    pieces: Vec::new(),
                    spacing: None,
                    scalar_from_source: false,
                }));
                (cost, table::CALL, shape)
            }
            "distinct" => {
                // Element i is compared with at most i kept ones, each walk bounded by the
                // deep size of the kept ones.
                let deep = recv.shape.deep_size();
                let per = list.len.add(&deep).add_const(table::CALL as f64);
                let cost = call
                    .add(&self.list_alloc(&list.len))
                    .add(&list.len.mul(&per));
                (cost, table::CALL, same(&list))
            }
            "sort" => {
                let longest = list
                    .elem
                    .as_str()
                    .map_or_else(|| constant(table::CALL), |e| sized(&traversal(&e)));
                let compare = self.at_largest(&list, &longest);
                let log = sort_log(units(self.parts.maximize(&list.len)));
                // Version 6: the elements of a JSON list of `b` bytes, the longest `L` bytes,
                // number `ℓ ≤ (b − L)/2` (every other one takes a byte and a comma), so
                // `ℓ · (L/10 + 1) ≤ b²/80 + ℓ` (AM-GM: `(b − L)·L ≤ b²/4`).
                let within = match (&list.elem, list.elem_var) {
                    (Shape::Json(x), Some(var)) if *x == var && self.model.sorts_within_list() => {
                        self.parts
                            .part(var)
                            .parent
                            .filter(|&p| !self.parts.part(p).object)
                    }
                    _ => None,
                };
                let comparisons = match within {
                    Some(parent) => {
                        let b = Poly::var(parent, 1.0);
                        b.mul(&b)
                            .scale(0.1 / 8.0)
                            .add(&list.len.scale(table::CALL as f64))
                    }
                    None => list.len.mul(&compare),
                };
                let cost = call
                    .add(&list.len)
                    .add(&comparisons.scale(log))
                    .add(&self.list_alloc(&list.len));
                (cost, table::CALL, same(&list))
            }
            "first" | "last" => (
                call.add_const(self.model.optional_alloc() as f64),
                table::CALL,
                list.elem.clone(),
            ),
            "unwrapOpt" | "optional.unwrap" => {
                let cost = call.add(&list.len).add(&self.list_alloc(&list.len));
                (cost, table::CALL, same(&list))
            }
            _ => unbounded(),
        }
    }

    /// `sets.contains(a, b)` (every element of `b` is in `a`), `sets.intersects(a, b)` (some
    /// element of `a` is in `b`) and `sets.equivalent` (contains both ways), each element test
    /// priced as `x in list`.
    fn set_relation(&mut self, function: &str, a: &Val, b: &Val) -> Own {
        let (Some(la), Some(lb)) = (self.list_of(&a.shape), self.list_of(&b.shape)) else {
            return (constant(table::CALL), 0, Shape::Scalar);
        };
        let (da, db) = (a.shape.deep_size(), b.shape.deep_size());
        let w: &Walker<'_> = self;
        // Testing each of `items` (deep sizes together `items_deep`) in `list`.
        let tests = |items: &ListShape, items_deep: &Poly, list: &ListShape, list_deep: &Poly| {
            items
                .len
                .mul(&list.len.add_const(table::CALL as f64))
                .add(&min_poly(
                    w,
                    list.len.mul(items_deep),
                    items.len.mul(list_deep),
                ))
        };
        let call = constant(table::CALL);
        let cost = match function {
            "sets.contains" => call.add(&tests(&lb, &db, &la, &da)),
            "sets.intersects" => call.add(&tests(&la, &da, &lb, &db)),
            _ => call
                .scale(2.0)
                .add(&tests(&lb, &db, &la, &da))
                .add(&tests(&la, &da, &lb, &db)),
        };
        (cost, table::CALL, Shape::Scalar)
    }

    /// The most text `format` appends for its argument list: each argument is used once.
    /// `items`: the elements its clauses take, in order (version 6, a literal pattern and a
    /// list literal), each bounded on its own and the bounds summed by position.
    fn format_args(&mut self, args: &Shape, text_format: bool, items: Option<&[Shape]>) -> Poly {
        if let Some(items) = items {
            return items.iter().fold(Poly::zero(), |sum, item| {
                sum.add(&format_bound(self, item, true, text_format))
            });
        }
        match self.list_of(args) {
            Some(list) => {
                let per = format_bound(self, &list.elem, true, text_format);
                self.sum_over(&list, &per)
            }
            None => Poly::constant(UNBOUNDED),
        }
    }
}

/// `⌈log₂ n⌉` for sorting at most `n` values.
fn sort_log(n: u64) -> f64 {
    if n < 2 {
        0.0
    } else {
        f64::from(u64::BITS - (n - 1).leading_zeros())
    }
}

/// The element shape of `flatten(depth)` of a list whose elements are `elem`.
fn flat_elem(elem: &Shape, depth: i64) -> Shape {
    let mut out: Option<Shape> = None;
    for alt in elem.alternatives() {
        let s = match alt {
            Shape::List(inner) if depth > 0 => flat_elem(&inner.elem, depth - 1),
            other => other.clone(),
        };
        out = Some(out.map_or(s.clone(), |o| o.union(s)));
    }
    out.unwrap_or(Shape::Scalar)
}

/// The clauses of a `format` pattern that never take a value's text as it is: `%d`, `%f`,
/// `%e` (with or without a precision), `%b` and `%o` each format a number (or a bool) or fail
/// before they write, so each writes at most [`FORMATTED_SCALAR_MAX`] bytes whatever the
/// argument list holds; `%x` and `%X` format an int or uint the same way, or a string or bytes
/// as two hex digits per byte, and fail on anything else (a list, a map, a double).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FormatClauses {
    /// `%d`, `%f`, `%e`: the clauses version 4 already bounded per clause.
    pub(crate) numeric: u64,
    /// `%b` and `%o`, bounded per clause from version 5 on.
    pub(crate) radix: u64,
    /// `%x` and `%X`, bounded per clause plus two bytes per byte of text from version 5 on.
    pub(crate) hex: u64,
}

/// Whether every clause of a `format` pattern is `%s` or `%d` (without a precision): each
/// writes the `%s` text of its argument (`%d` of an int, uint or double, and fails on anything
/// else before it writes), never the digits a precision asks for.
pub(crate) fn text_clauses_only(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        match bytes.get(i + 1) {
            Some(b'%' | b's' | b'd') => i += 2,
            _ => return false,
        }
    }
    true
}

/// The most arguments `format` with this pattern formats: the evaluator (`eval/format.rs`)
/// reads the next argument for each `%` that does not start a `%%`, in order, never one past
/// the last clause (it fails on a missing one, and ignores extra ones). Counting every such
/// `%` counts at least the clauses the evaluator parses.
pub(crate) fn consumed_args(pattern: &str) -> usize {
    let bytes = pattern.as_bytes();
    let mut count = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            if bytes.get(i + 1) == Some(&b'%') {
                i += 2;
                continue;
            }
            count += 1;
        }
        i += 1;
    }
    count
}

/// How many clauses of a `format` pattern are `%f` or `%e` (with or without a precision), as
/// the evaluator reads them: a `%` that does not start `%%`, an optional `.` and digits, then
/// the verb. Any other clause is not counted (the evaluator formats it otherwise, or fails).
pub(crate) fn precise_clauses(pattern: &str) -> u64 {
    let bytes = pattern.as_bytes();
    let mut count = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if bytes.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        if matches!(bytes.get(i), Some(b'f' | b'e')) {
            count += 1;
        }
    }
    count
}

/// The clauses of a `format` pattern when none is `%s` ([`FormatClauses`]). `None` for a `%s`
/// or an unknown clause, or a pattern that does not parse.
pub(crate) fn numeric_clauses(pattern: &str) -> Option<FormatClauses> {
    let bytes = pattern.as_bytes();
    let mut i = 0;
    let mut clauses = FormatClauses {
        numeric: 0,
        radix: 0,
        hex: 0,
    };
    while i < bytes.len() {
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if bytes.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        match bytes.get(i) {
            Some(b'd' | b'f' | b'e') => clauses.numeric += 1,
            Some(b'b' | b'o') => clauses.radix += 1,
            Some(b'x' | b'X') => clauses.hex += 1,
            _ => return None,
        }
        i += 1;
    }
    Some(clauses)
}

/// A clause of a `format` pattern by what it may write (version 6 prices each on its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verb {
    /// `%s`: the value's text.
    Text,
    /// `%d`: an int, uint or double as `%s` writes it; fails on anything else.
    Decimal,
    /// `%f`, `%e` (with or without a precision): a number's digits, at most
    /// [`FORMATTED_SCALAR_MAX`] bytes.
    Precise,
    /// `%b`: a bool (one digit), an int or uint in binary.
    Binary,
    /// `%o`: an int or uint in octal.
    Octal,
    /// `%x`, `%X`: an int or uint in hex, a string or bytes as two digits per byte.
    Hex,
}

/// What one position of a literal `format` call writes: its clause's verb, and the exact
/// length of that text when the element is a literal whose text is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FormatPosition {
    pub(crate) verb: Verb,
    pub(crate) exact: Option<u64>,
    /// The most text `verb` writes for any value of the element's static type, when the
    /// checker typed it `int`, `uint` or `bool` ([`typed_text`]).
    pub(crate) typed: Option<u64>,
}

/// The most text `verb` writes for a value the checker typed `int`, `uint` or `bool`
/// (`eval/format.rs`): an int's decimal text is at most 20 bytes (`-9223372036854775808`), its
/// sign and binary, octal, hex digits at most 65, 23, 17; a uint's at most 20, 64, 22, 16; a
/// bool's `%s` text 5 (`false`), its `%b` one digit, and `%d`, `%o`, `%x` fail on it before they
/// write. `None` for any other type (`dyn` among them) and for `%f`, `%e`.
pub(crate) fn typed_text(verb: Verb, ty: &crate::types::Type) -> Option<u64> {
    use crate::types::Type;
    match (ty, verb) {
        (_, Verb::Precise) => None,
        (Type::Int, Verb::Text | Verb::Decimal) => Some(20),
        (Type::Int, Verb::Binary) => Some(65),
        (Type::Int, Verb::Octal) => Some(23),
        (Type::Int, Verb::Hex) => Some(17),
        (Type::Uint, Verb::Text | Verb::Decimal) => Some(20),
        (Type::Uint, Verb::Binary) => Some(64),
        (Type::Uint, Verb::Octal) => Some(22),
        (Type::Uint, Verb::Hex) => Some(16),
        (Type::Bool, Verb::Text) => Some(5),
        (Type::Bool, Verb::Binary) => Some(1),
        (Type::Bool, Verb::Decimal | Verb::Octal | Verb::Hex) => Some(0),
        _ => None,
    }
}

/// The clauses of a `format` pattern in order, parsed as the evaluator parses them
/// (`eval/format.rs`): `%%` is text, an optional `.digits` precision of at most
/// [`table::FORMAT_MAX_PRECISION`], then the verb. `None` if the evaluator would fail on a
/// clause (the caller then keeps the bound that does not read verbs).
pub(crate) fn clause_verbs(pattern: &str) -> Option<Vec<Verb>> {
    let bytes = pattern.as_bytes();
    let mut verbs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if bytes.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            let precision: u64 = pattern[start..i].parse().ok()?;
            if precision > table::FORMAT_MAX_PRECISION {
                return None;
            }
        }
        verbs.push(match bytes.get(i) {
            Some(b's') => Verb::Text,
            Some(b'd') => Verb::Decimal,
            Some(b'f' | b'e') => Verb::Precise,
            Some(b'b') => Verb::Binary,
            Some(b'o') => Verb::Octal,
            Some(b'x' | b'X') => Verb::Hex,
            _ => return None,
        });
        i += 1;
    }
    Some(verbs)
}

/// The exact length of the text `verb` writes for a literal, when it is cheap to know: the
/// decimal text of an int, uint or finite double for `%s` and `%d`, the digits of an int or
/// uint for `%b`, `%o`, `%x` (with `-` before a negative int), a bool's text, and two hex
/// digits per byte of a string or bytes literal for `%x`. `None` otherwise.
pub(crate) fn literal_text(verb: Verb, literal: &crate::syntax::Literal) -> Option<u64> {
    use crate::syntax::Literal;
    let radix = |negative: bool, magnitude: u64| -> Option<u64> {
        let digits = match verb {
            Verb::Binary => format!("{magnitude:b}").len(),
            Verb::Octal => format!("{magnitude:o}").len(),
            Verb::Hex => format!("{magnitude:x}").len(),
            _ => return None,
        };
        Some(digits as u64 + u64::from(negative))
    };
    match (verb, literal) {
        (Verb::Text | Verb::Decimal, Literal::Int(i)) => Some(i.to_string().len() as u64),
        (Verb::Text | Verb::Decimal, Literal::Uint(u)) => Some(u.to_string().len() as u64),
        (Verb::Text | Verb::Decimal, Literal::Double(d)) if d.is_finite() => {
            Some(format!("{d}").len() as u64)
        }
        (Verb::Text, Literal::Bool(b)) => Some(if *b { 4 } else { 5 }),
        (Verb::Binary, Literal::Bool(_)) => Some(1),
        (Verb::Binary | Verb::Octal | Verb::Hex, Literal::Int(i)) => {
            radix(*i < 0, i.unsigned_abs())
        }
        (Verb::Binary | Verb::Octal | Verb::Hex, Literal::Uint(u)) => radix(false, *u),
        (Verb::Hex, Literal::String(s)) => Some(2 * s.len() as u64),
        (Verb::Hex, Literal::Bytes(b)) => Some(2 * b.len() as u64),
        _ => None,
    }
}

/// The longest text a clause writes for an int or uint (the only kinds `%o` takes, and with a
/// bool and a double the only ones `%b` and `%d` take): `%d` at most
/// [`FORMATTED_DOUBLE_MAX`] (a double; an int or uint is at most 20), `%b` 65 (`-` and 64
/// digits of `i64::MIN`), `%o` 23 (`-` and 22 digits), `%x` 17 (`-` and 16 digits).
const fn number_text_max(verb: Verb) -> u64 {
    match verb {
        Verb::Decimal => FORMATTED_DOUBLE_MAX,
        Verb::Binary => 65,
        Verb::Octal => 23,
        Verb::Hex => 17,
        Verb::Text | Verb::Precise => FORMATTED_SCALAR_MAX,
    }
}

/// The most text one clause writes for an element of `shape` (version 6, by position): `%s`
/// as [`format_bound`] bounds a value's text; `%f` and `%e` at most [`FORMATTED_SCALAR_MAX`];
/// `%d`, `%b`, `%o` nothing for a string, bytes, list or map (they fail before they write) and
/// at most [`number_text_max`] for anything else; `%x` two bytes per byte of a string or bytes
/// and at most 17 for a number. A JSON value of the event may be any JSON kind; a key of an
/// object is a string; the key a loop binds over a part that may be a list is such a key or an
/// index (a non-negative int).
fn clause_bound(w: &Walker<'_>, verb: Verb, shape: &Shape) -> Poly {
    match verb {
        Verb::Text => return format_bound(w, shape, true, true),
        Verb::Precise => return constant(FORMATTED_SCALAR_MAX),
        _ => {}
    }
    let number = constant(number_text_max(verb));
    let hex = verb == Verb::Hex;
    let mut out = Poly::zero();
    for alt in shape.alternatives() {
        let bound = match alt {
            Shape::Str { max, .. } if hex => max.scale(2.0),
            Shape::Str { .. } | Shape::List(_) | Shape::Map(_) => Poly::zero(),
            Shape::Json(v) if w.parts.is_object_key(*v) => {
                if hex {
                    Poly::var(*v, 2.0)
                } else {
                    Poly::zero()
                }
            }
            Shape::Json(v) if hex => Poly::var(*v, 2.0).add(&number),
            // `%d` of a JSON value of `b` bytes writes its `%s` text or fails: at most
            // `52·b + 49` as well as 343; a loop summing over the value takes the first, which
            // its sum absorbs, anywhere else the constant.
            Shape::Json(v)
                if verb == Verb::Decimal
                    && w.parts.part(*v).kind != PartKind::Index
                    && w.loop_depth(&Poly::var(*v, 1.0)) > 0 =>
            {
                Poly::var(*v, FORMATTED_PER_JSON_BYTE).add_const(FORMATTED_JSON_EXTRA)
            }
            Shape::Object(..) | Shape::Unknown | Shape::Union(_) if hex => {
                Poly::constant(UNBOUNDED)
            }
            _ => number.clone(),
        };
        out = out.max(&bound);
    }
    out
}

/// The most hex text `%x` writes for a value of `shape` beyond [`FORMATTED_SCALAR_MAX`]: two
/// bytes per byte of a string or bytes value (a JSON string of `b` bytes decodes to at most
/// `b`); numbers are within the per-clause constant, and a list or a map fails before it
/// writes.
fn hex_text(shape: &Shape) -> Poly {
    let mut out = Poly::zero();
    for alt in shape.alternatives() {
        let bound = match alt {
            Shape::Str { max, .. } => max.scale(2.0),
            Shape::Json(v) => Poly::var(*v, 2.0),
            Shape::Scalar | Shape::List(_) | Shape::Map(_) => Poly::zero(),
            Shape::Object(..) | Shape::Unknown | Shape::Union(_) => Poly::constant(UNBOUNDED),
        };
        out = out.max(&bound);
    }
    out
}

/// The most text one value formats to: strings as themselves (bytes at three bytes each, a
/// `%x` at two), a scalar at most [`FORMATTED_SCALAR_MAX`] bytes at the top level (where a
/// precision applies) and [`FORMATTED_DOUBLE_MAX`] inside a list or map (`%s` of a double,
/// never in exponent form), containers with their brackets and separators. The elements of a
/// list that are the elements of one event part (the parts of `split`) are summed over that
/// part rather than each taken at the whole part's size.
///
/// From cost-model version 6 a JSON value of `b` bytes is bounded by `52·b + 49`
/// ([`FORMATTED_JSON_EXTRA`]) wherever `%s` formats it: inside a list or a map, and at the top
/// when every clause of the literal pattern is `%s` or `%d` (`text`); at the top of any other
/// pattern it keeps [`FORMATTED_SCALAR_MAX`].
fn format_bound(w: &Walker<'_>, shape: &Shape, top: bool, text: bool) -> Poly {
    let scalar = if top {
        FORMATTED_SCALAR_MAX
    } else {
        FORMATTED_DOUBLE_MAX
    };
    let json_extra = if w.model.bounds_formatted_json() && (text || !top) {
        FORMATTED_JSON_EXTRA
    } else {
        scalar as f64
    };
    let mut out = Poly::zero();
    for alt in shape.alternatives() {
        let bound = match alt {
            Shape::Scalar => constant(scalar),
            Shape::Str { max, .. } => max.scale(3.0),
            // The key of an entry of an object is a string within its quoted bytes; the key a
            // loop binds over a part that may be a list is such a key or an index, a
            // non-negative int of at most 19 digits.
            Shape::Json(v) if w.parts.is_object_key(*v) => Poly::var(*v, 1.0),
            Shape::Json(v) if w.parts.part(*v).kind == PartKind::Index => {
                Poly::var(*v, 1.0).add_const(INDEX_DIGITS_MAX)
            }
            Shape::Json(v) => Poly::var(*v, FORMATTED_PER_JSON_BYTE).add_const(json_extra),
            Shape::List(l) if w.model.tighter_bounds() => w
                .sum_over(l, &format_bound(w, &l.elem, false, text).add_const(2.0))
                .add_const(2.0),
            Shape::List(l) => l
                .len
                .mul(&format_bound(w, &l.elem, false, text).add_const(2.0))
                .add_const(2.0),
            Shape::Map(m) => {
                let entry =
                    format_bound(w, &m.key, false, text).add(&format_bound(w, &m.val, false, text));
                m.len.mul(&entry.add_const(4.0)).add_const(2.0)
            }
            Shape::Object(..) | Shape::Unknown | Shape::Union(_) => Poly::constant(UNBOUNDED),
        };
        out = out.max(&bound);
    }
    out
}

/// The map a `transformMap` builds: the same keys, the transformed values.
pub(crate) fn transformed_map(len: Poly, key: Shape, val: Shape) -> Shape {
    Shape::Map(Box::new(MapShape {
        len,
        min_len: 0,
        key,
        val,
    }))
}
