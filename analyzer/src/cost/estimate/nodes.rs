//! The estimate of each kind of node that builds or combines values: calls, indexing, literals
//! of lists, maps and messages, ternaries. Each is its own function, never inlined, so the
//! recursion's dispatch (`Walker::visit_kind`) keeps a small frame: every level of a deep tree
//! pays that frame, and the parser allows 250 levels on a 2 MiB thread.

use super::super::calls;
use super::super::poly::Poly;
use super::super::shape::{ListShape, MapShape, Shape};
use super::super::table;
use super::{Val, Walker, add_cost, constant_pattern, int_literal};
use crate::syntax::{ExprKind, FieldInit, Literal, MapEntry, NodeId};
use crate::types::Type;

impl Walker<'_> {
    /// `a.f`, or a qualified name the checker resolved.
    #[inline(never)]
    pub(super) fn visit_select(
        &mut self,
        id: NodeId,
        operand: NodeId,
        field: &str,
    ) -> (Val, Option<String>) {
        if let Some(shape) = self.qualified(id) {
            return (Val::constant(table::SELECT, shape), None);
        }
        let op = self.visit(operand);
        let shape = self.select(&op.shape, field);
        let assumption = self.describe_shape(&shape);
        (add_cost(&op, table::SELECT, shape), assumption)
    }

    /// `a[i]` and `a[?i]`: the operands and one call; a string literal key selects its entry.
    #[inline(never)]
    pub(super) fn visit_index(&mut self, operand: NodeId, index: NodeId) -> Val {
        let op = self.visit(operand);
        let ix = self.visit(index);
        let key = match self.ast.kind(index) {
            ExprKind::Literal(Literal::String(s)) => Some(&**s),
            _ => None,
        };
        // A non-negative int literal names one element of a list (version 6): elements at two
        // different such indices are different elements.
        let at = int_literal(self.ast, index).filter(|&i| i >= 0 && self.model.indexes_apart());
        // The bare variable of a loop over `lists.range(n)` names a different element of a list
        // at every iteration (version 7).
        let ranged = self.range_loop_of(index);
        let shape = self.index(&op.shape, &ix.shape, key, at, ranged);
        let lookup = calls::key_lookup(self, &op.shape, &ix.shape);
        Val {
            max: op.max.add(&ix.max).add(&lookup),
            min: op.min.saturating_add(ix.min).saturating_add(table::CALL),
            shape,
        }
    }

    /// A function or method call: its operands, then its own cost from the table (a namespaced
    /// function such as `sets.contains` comes by its qualified name, without a receiver).
    #[inline(never)]
    pub(super) fn visit_call(
        &mut self,
        target: Option<NodeId>,
        function: &str,
        args: &[NodeId],
    ) -> Val {
        let ast = self.ast;
        let qualified = crate::check::namespaced(ast, target, function);
        let target = if qualified.is_some() { None } else { target };
        let ids: Vec<NodeId> = target.iter().chain(args).copied().collect();
        self.last_list_items = None;
        let operands: Vec<Val> = ids.iter().map(|&a| self.visit(a)).collect();
        // `size(x)`: what bounds its value, for a `lists.range` around it (version 7).
        if function == "size" && qualified.is_none() {
            if let ([x], [op]) = (ids.as_slice(), operands.as_slice()) {
                self.last_size = Some((*x, size_bound(&op.shape)));
            }
        }
        if let (Some("lists.range"), [n], [op]) = (qualified.as_deref(), args, operands.as_slice())
        {
            if let Some(len) = self.sized_range(*n) {
                // As for a literal length: the call, the list, and an allocation per element.
                let fixed = table::CALL + table::LIST_CREATE;
                let alloc = len
                    .scale(self.model.alloc(table::ALLOC_PER_ELEMENT) as f64)
                    .add_const(self.model.list_alloc() as f64);
                return Val {
                    max: op.max.add(&alloc).add_const(fixed as f64),
                    min: op.min.saturating_add(fixed),
                    shape: Shape::List(Box::new(ListShape {
                        len,
                        min_len: 0,
                        elem: Shape::Scalar,
                        elem_var: None,
                        pieces: Vec::new(),
                        spacing: None,
                        scalar_from_source: false,
                    })),
                };
            }
        }
        let list_items = self.last_list_items.take();
        let types: Vec<Type> = ids.iter().map(|&a| self.static_type(a).clone()).collect();
        // `format` on a literal pattern and a list literal (no optional element, so positions
        // are fixed) formats at most its first `consumed_args` elements (version 6).
        let format_items = match (function, target.map(|t| ast.kind(t)), args) {
            ("format", Some(ExprKind::Literal(Literal::String(pattern))), [list])
                if self.model.formats_consumed_args()
                    && matches!(
                        ast.kind(*list),
                        ExprKind::List { optional_indices, .. } if optional_indices.is_empty()
                    ) =>
            {
                list_items.map(|mut items| {
                    items.truncate(super::super::libraries::consumed_args(pattern));
                    items
                })
            }
            _ => None,
        };
        // Each position's verb, and the exact text of a literal element (version 6).
        let format_positions = match (function, target.map(|t| ast.kind(t)), args) {
            ("format", Some(ExprKind::Literal(Literal::String(pattern))), [list])
                if format_items.is_some() =>
            {
                match ast.kind(*list) {
                    ExprKind::List { items, .. } => super::super::libraries::clause_verbs(pattern)
                        .map(|verbs| {
                            verbs
                                .iter()
                                .zip(items)
                                .map(|(&verb, &item)| super::super::libraries::FormatPosition {
                                    verb,
                                    exact: match ast.kind(item) {
                                        ExprKind::Literal(l) => {
                                            super::super::libraries::literal_text(verb, l)
                                        }
                                        _ => None,
                                    },
                                    typed: super::super::libraries::typed_text(
                                        verb,
                                        self.static_type(item),
                                    ),
                                })
                                .collect()
                        }),
                    _ => None,
                }
            }
            _ => None,
        };
        let literals = calls::Literals {
            pattern: constant_pattern(ast, function, target, args),
            ints: args.iter().map(|&a| int_literal(ast, a)).collect(),
            numeric_format: match (function, target.map(|t| ast.kind(t))) {
                ("format", Some(ExprKind::Literal(Literal::String(pattern)))) => {
                    super::super::libraries::numeric_clauses(pattern)
                }
                _ => None,
            },
            text_format: match (function, target.map(|t| ast.kind(t))) {
                ("format", Some(ExprKind::Literal(Literal::String(pattern)))) => {
                    super::super::libraries::text_clauses_only(pattern)
                }
                _ => false,
            },
            format_items,
            format_positions,
            precise_clauses: match (function, target.map(|t| ast.kind(t))) {
                ("format", Some(ExprKind::Literal(Literal::String(pattern)))) => {
                    Some(super::super::libraries::precise_clauses(pattern))
                }
                _ => None,
            },
        };
        let function = qualified.as_deref().unwrap_or(function);
        calls::call(self, function, &operands, &types, &literals)
    }

    /// The length of `lists.range(n)` when `n` is `size(x)` (or `x.size()`) and the size of `x`
    /// is bounded (version 7): at most `x`'s bytes for a JSON value (a string of `b` bytes has
    /// fewer characters, a list fewer elements, an object fewer entries), its bound for a
    /// string, the length of a list or a map. Version 6 priced any length computed at run time
    /// as unbounded.
    fn sized_range(&mut self, n: NodeId) -> Option<Poly> {
        if !self.model.bounds_sized_ranges() {
            return None;
        }
        let ExprKind::Call {
            target,
            function,
            args,
            ..
        } = self.ast.kind(n)
        else {
            return None;
        };
        let operand = match (target, args.as_slice()) {
            (Some(x), []) | (None, [x]) if &**function == "size" => *x,
            _ => return None,
        };
        match self.last_size.take() {
            Some((x, bound)) if x == operand => bound,
            _ => None,
        }
    }

    /// `c ? t : f`: the condition and the dearer branch; the shape is either branch's.
    #[inline(never)]
    pub(super) fn visit_conditional(
        &mut self,
        cond: NodeId,
        then: NodeId,
        otherwise: NodeId,
    ) -> Val {
        let c = self.visit(cond);
        let t = self.visit(then);
        let f = self.visit(otherwise);
        Val {
            max: c.max.add(&t.max.max(&f.max)),
            min: c.min.saturating_add(t.min.min(f.min)),
            shape: t.shape.union(f.shape),
        }
    }

    /// A list literal: creating it, its elements, and a list shape of exactly that length
    /// (at least, when optional elements may be absent).
    #[inline(never)]
    pub(super) fn visit_list(&mut self, items: &[NodeId], optional: usize) -> Val {
        let n = items.len() as u64;
        let fixed = table::LIST_CREATE.saturating_add(self.model.alloc(table::alloc_list(n)));
        let mut val = Val::constant(fixed, Shape::Scalar);
        let mut elem: Option<Shape> = None;
        let mut items_shapes = Vec::with_capacity(items.len());
        for &e in items {
            let v = self.visit(e);
            val.max = val.max.add(&v.max);
            val.min = val.min.saturating_add(v.min);
            items_shapes.push(v.shape.clone());
            elem = Some(match elem {
                None => v.shape,
                Some(s) => s.union(v.shape),
            });
        }
        // An optional element adds its value, whose shape is the optional's.
        val.shape = Shape::List(Box::new(ListShape {
            len: Poly::constant(n as f64),
            min_len: n - optional as u64,
            elem: elem.unwrap_or(Shape::Scalar),
            elem_var: None,
            pieces: Vec::new(),
            spacing: None,
            scalar_from_source: false,
        }));
        self.last_list_items = Some(items_shapes);
        val
    }

    /// A map literal: creating it, its keys and values, and a map shape of that many entries.
    #[inline(never)]
    pub(super) fn visit_map(&mut self, entries: &[MapEntry]) -> Val {
        let n = entries.len() as u64;
        let fixed = table::MAP_CREATE.saturating_add(self.model.alloc(table::alloc_map(n)));
        let mut val = Val::constant(fixed, Shape::Scalar);
        let (mut key, mut value): (Option<Shape>, Option<Shape>) = (None, None);
        let mut compares = Poly::zero();
        for entry in entries {
            let k = self.visit(entry.key);
            if let Some(len) = k.shape.as_str() {
                compares = compares.add(&calls::key_compare(&len));
            }
            let v = self.visit(entry.value);
            val.max = val.max.add(&k.max).add(&v.max);
            val.min = val.min.saturating_add(k.min).saturating_add(v.min);
            key = Some(key.map_or(k.shape.clone(), |s| s.union(k.shape)));
            value = Some(value.map_or(v.shape.clone(), |s| s.union(v.shape)));
        }
        // The check for repeated keys and the index compare the keys.
        let build = calls::map_build(self, &Poly::constant(n as f64), &compares);
        val.max = val.max.add(&build);
        val.shape = Shape::Map(Box::new(MapShape {
            len: Poly::constant(n as f64),
            min_len: n,
            key: key.unwrap_or(Shape::Scalar),
            val: value.unwrap_or(Shape::Scalar),
        }));
        val
    }

    /// A message literal: creating it and its field values.
    #[inline(never)]
    pub(super) fn visit_struct(&mut self, fields: &[FieldInit]) -> Val {
        let mut val = Val::constant(table::STRUCT_CREATE, Shape::Unknown);
        for field in fields {
            let v = self.visit(field.value);
            val.max = val.max.add(&v.max);
            val.min = val.min.saturating_add(v.min);
        }
        val
    }
}

/// An upper bound of `size(x)` for a value of this shape, when there is one: a string's bound
/// in bytes (never fewer than its characters), a list's or a map's length, a JSON value's
/// bytes (its string has fewer characters, its list fewer elements, its object fewer entries).
/// A value `size` is not defined on fails before any list is built, so it bounds nothing.
fn size_bound(shape: &Shape) -> Option<Poly> {
    let mut out: Option<Poly> = None;
    for alt in shape.alternatives() {
        let len = match alt {
            Shape::Str { max, .. } => max.clone(),
            Shape::Json(v) => Poly::var(*v, 1.0),
            Shape::List(l) => l.len.clone(),
            Shape::Map(m) => m.len.clone(),
            Shape::Scalar => continue,
            Shape::Object(..) | Shape::Unknown | Shape::Union(_) => return None,
        };
        out = Some(out.map_or(len.clone(), |o| o.max(&len)));
    }
    out
}
