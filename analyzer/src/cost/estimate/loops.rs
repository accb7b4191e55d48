//! Comprehensions: what a macro iterates over, how often, and the sum of its body's cost over
//! every iteration (the shared-budget rule of docs/cost-model.md §4).

use std::collections::HashMap;

use super::super::model::SizeModel;
use super::super::parts::Uses;
use super::super::poly::{Poly, Var};
use super::super::shape::{ListShape, Shape, UNBOUNDED};
use super::super::table;
use super::access::EVENT_FIELDS;
use super::{Val, Walker, units};
use crate::syntax::{Ast, Comprehension, ExprKind, Literal, MacroKind, NodeId};

/// How the passes over several shapes of a range combine.
#[derive(Clone, Copy)]
enum Combine {
    /// The range is one of the shapes: the largest pass bounds the loop.
    Largest,
    /// The range is the concatenation of the shapes: the loop is every pass in turn.
    Sum,
}

/// The shape of the concatenation of lists of the given shapes: one list whose pieces they
/// are, when every one is a list; else the union (a sound, looser bound).
fn concatenated(shapes: Vec<Shape>) -> Shape {
    let lists: Option<Vec<&ListShape>> = shapes
        .iter()
        .map(|s| match s {
            Shape::List(l) => Some(&**l),
            _ => None,
        })
        .collect();
    match lists {
        Some(lists) if !lists.is_empty() => {
            let mut len = Poly::zero();
            let mut min_len = 0u64;
            let mut elem: Option<Shape> = None;
            for l in &lists {
                len = len.add(&l.len);
                min_len = min_len.saturating_add(l.min_len);
                elem = Some(match elem {
                    None => l.elem.clone(),
                    Some(e) => e.union(l.elem.clone()),
                });
            }
            Shape::List(Box::new(ListShape {
                len,
                min_len,
                elem: elem.unwrap_or(Shape::Scalar),
                elem_var: None,
                pieces: shapes.clone(),
                spacing: None,
                scalar_from_source: false,
            }))
        }
        _ => shapes
            .into_iter()
            .reduce(Shape::union)
            .unwrap_or(Shape::Scalar),
    }
}

/// One iteration plan: how often a comprehension runs its body and what its variable is.
struct Iteration {
    count: Poly,
    min_count: u64,
    /// What one variable binds: the element of a list, the key of a map.
    elem: Shape,
    /// What the first of two variables binds: the index of a list, the key of a map.
    index: Shape,
    /// What the second of two variables binds: the element of a list, the value of a map.
    value: Shape,
    /// The element variable to sum over, and the part whose elements it ranges over.
    sum: Option<(Var, Var)>,
    /// Whether the variable binds a number, a bool or null whenever the element of the part it
    /// comes from is one ([`ListShape::scalar_from_source`]; version 10).
    scalar_from_source: bool,
}

impl<'a> Walker<'a> {
    /// What a comprehension iterates over.
    fn iteration(&mut self, range: &Shape) -> Iteration {
        let mut plans = Vec::new();
        for alt in range.alternatives() {
            let plan = match alt {
                Shape::List(l) => match l
                    .elem_var
                    .and_then(|x| Some((x, self.parts.part(x).parent?)))
                {
                    // A fresh variable per comprehension: two loops over the same list must
                    // not share one, or one loop's sum would absorb the other's variable. The
                    // parts inside the element move with it, keeping their kinds (a key stays
                    // a key, the value of an entry stays a value).
                    Some((x, parent)) => {
                        let fresh = self.parts.element(parent);
                        let parts = &mut self.parts;
                        let mut moved = HashMap::new();
                        let elem = l.elem.map_vars(&mut |v| {
                            *moved.entry(v).or_insert_with(|| parts.rebase(v, x, fresh))
                        });
                        Iteration {
                            count: l.len.clone(),
                            min_count: l.min_len,
                            value: elem.clone(),
                            elem,
                            index: Shape::Scalar,
                            sum: Some((fresh, parent)),
                            scalar_from_source: l.scalar_from_source,
                        }
                    }
                    None => Iteration {
                        count: l.len.clone(),
                        min_count: l.min_len,
                        elem: l.elem.clone(),
                        index: Shape::Scalar,
                        value: l.elem.clone(),
                        sum: None,
                        scalar_from_source: false,
                    },
                },
                Shape::Map(m) => Iteration {
                    count: m.len.clone(),
                    min_count: m.min_len,
                    elem: m.key.clone(),
                    index: m.key.clone(),
                    value: m.val.clone(),
                    sum: None,
                    scalar_from_source: false,
                },
                Shape::Json(v) => {
                    self.parts.note([*v], Uses::ITERATED);
                    let x = self.parts.element(*v);
                    // An element of a JSON list or an entry of a JSON object: its index or key and
                    // its value all lie within the element's bytes. From version 6 the key (or
                    // index) and the value are parts of their own, together at most the
                    // element's bytes plus one (`Parts::split_entry`), and the one variable of a
                    // loop over an object known to be one is its key.
                    let (elem, index, value) = if self.model.splits_entries() {
                        let k = self.parts.entry_index(x);
                        let item = self.parts.entry_item(x);
                        let elem = if self.parts.part(*v).object { k } else { x };
                        (Shape::Json(elem), Shape::Json(k), Shape::Json(item))
                    } else {
                        (Shape::Json(x), Shape::Json(x), Shape::Json(x))
                    };
                    Iteration {
                        count: self.parts.count(*v),
                        min_count: 0,
                        elem,
                        index,
                        value,
                        sum: Some((x, *v)),
                        scalar_from_source: false,
                    }
                }
                // An event is a map from its seven field names to their values.
                Shape::Object(obj, path) if &*obj.name == "event" => {
                    let longest = EVENT_FIELDS.iter().map(|f| f.len()).max().unwrap_or(0);
                    let shortest = EVENT_FIELDS.iter().map(|f| f.len()).min().unwrap_or(0);
                    let key = Shape::Str {
                        max: Poly::constant(longest as f64),
                        min: shortest as u64,
                    };
                    // Two variables bind a field's name and its value. From version 7 the value
                    // is one of the seven fields, as `event[k]` is (a header, the text or the
                    // attributes, each within its bound); before, it was priced as unknown
                    // (unbounded).
                    let value = if self.model.binds_event_fields() {
                        self.any_event_field(path)
                    } else {
                        Shape::Unknown
                    };
                    Iteration {
                        count: Poly::constant(EVENT_FIELDS.len() as f64),
                        min_count: EVENT_FIELDS.len() as u64,
                        elem: key.clone(),
                        index: key,
                        value,
                        sum: None,
                        scalar_from_source: false,
                    }
                }
                // Other host objects may hold more than their declared fields.
                Shape::Object(..) | Shape::Unknown => Iteration {
                    count: Poly::constant(UNBOUNDED),
                    min_count: 0,
                    elem: Shape::Unknown,
                    index: Shape::Unknown,
                    value: Shape::Unknown,
                    sum: None,
                    scalar_from_source: false,
                },
                // Iterating anything else is an evaluation error before the first element.
                _ => continue,
            };
            plans.push(plan);
        }
        if plans.len() <= 1 {
            return plans.pop().unwrap_or(Iteration {
                count: Poly::zero(),
                min_count: 0,
                elem: Shape::Scalar,
                index: Shape::Scalar,
                value: Shape::Scalar,
                sum: None,
                scalar_from_source: false,
            });
        }
        // Several possible ranges: bound the count by the largest, and every element by its
        // whole part (an element is never larger than the part it comes from).
        let mut merged: Option<Iteration> = None;
        for plan in plans {
            let whole = |s: Shape| match plan.sum {
                Some((x, parent)) => s.map_vars(&mut |v| if v == x { parent } else { v }),
                None => s,
            };
            let (elem, index, value) = (
                whole(plan.elem.clone()),
                whole(plan.index.clone()),
                whole(plan.value.clone()),
            );
            merged = Some(match merged {
                None => Iteration {
                    elem,
                    index,
                    value,
                    sum: None,
                    scalar_from_source: false,
                    ..plan
                },
                Some(m) => Iteration {
                    count: m.count.max(&plan.count),
                    min_count: m.min_count.min(plan.min_count),
                    elem: m.elem.union(elem),
                    index: m.index.union(index),
                    value: m.value.union(value),
                    sum: None,
                    scalar_from_source: false,
                },
            });
        }
        merged.expect("at least two plans")
    }

    pub(super) fn comprehension(&mut self, c: &'a Comprehension) -> (Val, Option<String>) {
        let range = self.visit(c.range);
        if matches!(c.kind, MacroKind::OptMap | MacroKind::OptFlatMap) {
            return (self.opt_map(c, &range), None);
        }
        let alternatives = range.shape.alternatives().len();
        if self.model.sums_each_alternative()
            && alternatives > 1
            && alternatives <= self.extra_passes
        {
            self.extra_passes -= alternatives;
            return self.comprehension_per_alternative(c, &range);
        }
        self.comprehension_over(c, &range)
    }

    /// A range that may be one of several values (`c ? event.attributes.l :
    /// event.text.split('')`, `m.?l.orValue(…)`): the loop runs over exactly one of them, so
    /// its cost is at most the largest of the loops over each, and each of those sums its
    /// elements over its own part. Merging the alternatives first would bound every element by
    /// the largest whole part and count the most elements of any, pricing the loop at the
    /// product of the two (docs/cost-model.md §4, "Comprehensions").
    fn comprehension_per_alternative(
        &mut self,
        c: &'a Comprehension,
        range: &Val,
    ) -> (Val, Option<String>) {
        let shapes = range.shape.alternatives().to_vec();
        self.comprehension_passes(c, range, &shapes, Combine::Largest)
    }

    /// The passes of [`Walker::comprehension_per_alternative`] and of a loop over a
    /// concatenation (`Combine::Sum`): the body is visited once per shape, and the per-node
    /// figures kept for explanations are the largest of the passes. [`Walker::extra_passes`]
    /// bounds the passes over the whole expression, so nested unions cannot multiply them.
    fn comprehension_passes(
        &mut self,
        c: &'a Comprehension,
        range: &Val,
        shapes: &[Shape],
        combine: Combine,
    ) -> (Val, Option<String>) {
        let before = self.nodes.clone();
        let mut kept = before.clone();
        let mut passes = Vec::new();
        for shape in shapes {
            // A concatenation's range is evaluated once: its cost is added once, below.
            let one = match combine {
                Combine::Largest => Val {
                    max: range.max.clone(),
                    min: range.min,
                    shape: shape.clone(),
                },
                Combine::Sum => Val {
                    max: Poly::zero(),
                    min: 0,
                    shape: shape.clone(),
                },
            };
            let (val, assumption) = self.comprehension_over(c, &one);
            for (k, node) in kept.iter_mut().zip(&self.nodes) {
                if let Some(n) = node {
                    if k.as_ref().is_none_or(|old| old.max < n.max) {
                        *k = Some(n.clone());
                    }
                }
            }
            self.nodes.clone_from(&before);
            let peak = self.parts.maximize(&val.max);
            passes.push((val, assumption, peak));
        }
        self.nodes = kept;
        let assumption = passes
            .iter()
            .max_by(|a, b| a.2.total_cmp(&b.2))
            .and_then(|p| p.1.clone());
        let min = passes.iter().map(|p| p.0.min).min().unwrap_or(0);
        let val = match combine {
            Combine::Largest => {
                // A pass over a value that cannot be iterated ends in an evaluation error: its
                // cost counts, its (empty) result does not, or it would erase what the other
                // passes know of theirs (a concatenation's pieces).
                let iterable = |s: &Shape| {
                    matches!(
                        s,
                        Shape::List(_)
                            | Shape::Map(_)
                            | Shape::Json(_)
                            | Shape::Object(..)
                            | Shape::Unknown
                    )
                };
                let any_iterable = shapes.iter().any(iterable);
                let mut max = Poly::zero();
                let mut result: Option<Shape> = None;
                for ((val, _, _), shape) in passes.into_iter().zip(shapes) {
                    max = max.max(&val.max);
                    if iterable(shape) || !any_iterable {
                        result = Some(match result {
                            None => val.shape,
                            Some(r) => r.union(val.shape),
                        });
                    }
                }
                Val {
                    max,
                    min,
                    shape: result.unwrap_or(Shape::Scalar),
                }
            }
            Combine::Sum => {
                // Every pass paid the macro's fixed part; the loop pays it once.
                let fixed = match c.kind {
                    MacroKind::All | MacroKind::Exists => table::COMPREHENSION_RESULT,
                    MacroKind::ExistsOne => table::EXISTS_ONE_RESULT,
                    _ => table::MAP_FILTER_FIXED,
                };
                let repeated = fixed.saturating_mul(passes.len().saturating_sub(1) as u64);
                let mut max = range.max.clone();
                let mut shapes = Vec::new();
                for (val, _, _) in passes {
                    max = max.add(&val.max);
                    shapes.push(val.shape);
                }
                Val {
                    // Subtracted last, so no coefficient is ever negative: the constant
                    // term holds every pass's fixed part by now.
                    max: max.sub_const(repeated as f64),
                    min: range.min.saturating_add(min),
                    shape: concatenated(shapes),
                }
            }
        };
        (val, assumption)
    }

    /// A comprehension over a range of one shape (or of alternatives merged into one).
    fn comprehension_over(&mut self, c: &'a Comprehension, range: &Val) -> (Val, Option<String>) {
        // A loop over a concatenation visits each piece's elements in turn: its cost is the sum
        // of the loops over each piece, each summing its elements over its own part. Not for
        // `sortBy` and the transforms into a map, whose sorting (`n·log n`) grows faster than
        // the sum over the pieces.
        if let Shape::List(l) = &range.shape {
            let per_element = c.kind.runs_once_per_element();
            if per_element && l.pieces.len() > 1 && l.pieces.len() <= self.extra_passes {
                self.extra_passes -= l.pieces.len();
                let pieces = l.pieces.clone();
                return self.comprehension_passes(c, range, &pieces, Combine::Sum);
            }
        }
        let plan = self.iteration(&range.shape);
        if let Some((scalars, sized)) = self.scalar_split(c, &plan) {
            return self.comprehension_split(c, range, plan, scalars, sized);
        }
        self.comprehension_planned(c, range, plan)
    }

    /// A comprehension over a range of one shape, iterated as `plan` says.
    fn comprehension_planned(
        &mut self,
        c: &'a Comprehension,
        range: &Val,
        mut plan: Iteration,
    ) -> (Val, Option<String>) {
        let probe = std::mem::take(&mut self.probe_body);
        // A loop that stops at its body's first error over the elements of a JSON part
        // (version 9): every element but the last meets what the body needs.
        let needed = self.needed_bytes(c, &plan);
        if let Some((count, _)) = &needed {
            plan.count = count.clone();
        }
        let count_max = self.parts.maximize(&plan.count);
        let outer = self
            .multipliers
            .last()
            .map_or_else(|| Poly::constant(1.0), |(m, _)| m.clone());
        let joint = self.parts.coarsen(outer.mul(&plan.count));
        // Maximised once here rather than for every node below.
        let joint_max = units(self.parts.maximize(&joint));
        self.multipliers.push((joint, joint_max));
        let bound = if let Some((second, _)) = &c.var2 {
            self.scopes.push((&c.var, plan.index.clone()));
            self.scopes.push((second, plan.value.clone()));
            2
        } else {
            self.scopes.push((&c.var, plan.elem.clone()));
            1
        };
        if let Some((x, _)) = plan.sum {
            self.summing.push(vec![x]);
        }
        // A loop over `lists.range(n)` (version 7): its variable, used bare as the index of a
        // JSON list, names an element the loop sums over ([`Walker::range_element`]).
        let ranged = plan.sum.is_none() && self.sums_range_indices(c);
        if ranged {
            let start = self.scopes.len() - bound;
            self.ranges.push(super::RangeLoop {
                scopes: start..self.scopes.len(),
                frame: self.summing.len(),
            });
            self.summing.push(Vec::new());
        }
        let pred = c.predicate.map(|p| self.visit(p));
        let transform = c.transform.map(|t| self.visit(t));
        let indexed = if ranged {
            self.ranges.pop();
            self.summing.pop().unwrap_or_default()
        } else {
            Vec::new()
        };
        if plan.sum.is_some() {
            self.summing.pop();
        }
        self.scopes.truncate(self.scopes.len() - bound);
        self.multipliers.pop();

        let zero = || Val::constant(0, Shape::Scalar);
        let pred = pred.unwrap_or_else(zero);
        let transform_shape = transform.as_ref().map(|t| t.shape.clone());
        // Each appended element builds `[t]` and grows the accumulator: both are charged.
        let append_alloc = self.model.alloc(2 * table::alloc_list(1));
        let kept = if c.kind == MacroKind::Filter && self.model.counts_kept_parts() {
            self.kept_parts(c, &range.shape)
                .or_else(|| self.kept_elements(c, &plan, count_max))
        } else {
            None
        };
        // An `all` over the parts of a split whose predicate cannot fail goes on past a part
        // only where the predicate holds, so past at most as many parts as a filter with it
        // keeps, and stops at the next (version 8).
        let passed = if c.kind == MacroKind::All && self.model.counts_kept_parts() {
            // Either count bounds the loop; the one of the smaller maximum is kept (a list a
            // filter kept is as long as it could pass already).
            self.kept_parts(c, &range.shape)
                .map(|(k, _)| k.add_const(1.0))
                .filter(|k| self.parts.maximize(k) < count_max)
        } else {
            None
        };
        let (fixed, per, per_min) = match c.kind {
            MacroKind::All => (
                table::COMPREHENSION_RESULT,
                pred.max.add_const(table::ALL_PER_ELEMENT as f64),
                pred.min.saturating_add(table::ALL_PER_ELEMENT),
            ),
            MacroKind::Exists => (
                table::COMPREHENSION_RESULT,
                pred.max.add_const(table::EXISTS_PER_ELEMENT as f64),
                pred.min.saturating_add(table::EXISTS_PER_ELEMENT),
            ),
            MacroKind::ExistsOne => (
                table::EXISTS_ONE_RESULT,
                pred.max
                    .add_const(table::EXISTS_ONE_COUNT.max(table::EXISTS_ONE_SKIP) as f64),
                pred.min.saturating_add(table::EXISTS_ONE_SKIP),
            ),
            MacroKind::Map | MacroKind::TransformList => {
                let t = transform.unwrap_or_else(zero);
                let append = t.max.add_const((table::MAP_APPEND + append_alloc) as f64);
                if c.predicate.is_some() {
                    (
                        table::MAP_FILTER_FIXED,
                        pred.max
                            .add(&append.max(&Poly::constant(table::FILTER_SKIP as f64))),
                        pred.min.saturating_add(table::FILTER_SKIP),
                    )
                } else {
                    (
                        table::MAP_FILTER_FIXED,
                        append,
                        t.min.saturating_add(table::MAP_APPEND + append_alloc),
                    )
                }
            }
            // With a bound on the elements kept (version 8), every iteration is priced at
            // the predicate and a skip, and the appends past a skip at the kept elements only.
            MacroKind::Filter if kept.is_some() => (
                table::MAP_FILTER_FIXED,
                pred.max.add_const(table::FILTER_SKIP as f64),
                pred.min.saturating_add(table::FILTER_SKIP),
            ),
            MacroKind::Filter => (
                table::MAP_FILTER_FIXED,
                pred.max.add_const(
                    (table::FILTER_APPEND + append_alloc).max(table::FILTER_SKIP) as f64,
                ),
                pred.min.saturating_add(table::FILTER_SKIP),
            ),
            MacroKind::TransformMap | MacroKind::TransformMapEntry => {
                let t = transform.unwrap_or_else(zero);
                // One entry per kept element, or every entry of the map the transform builds.
                let entries = match (c.kind, &t.shape) {
                    (MacroKind::TransformMap, _) => Poly::constant(1.0),
                    (_, Shape::Map(m)) => m.len.clone(),
                    _ => Poly::constant(UNBOUNDED),
                };
                let insert = table::TRANSFORM_MAP_INSERT + self.model.alloc(table::alloc_map(1));
                let kept = t.max.add(&entries.scale(insert as f64));
                match c.predicate {
                    Some(_) => (
                        table::TRANSFORM_MAP_FIXED,
                        pred.max
                            .add(&kept.max(&Poly::constant(table::FILTER_SKIP as f64))),
                        pred.min.saturating_add(table::FILTER_SKIP),
                    ),
                    None => (table::TRANSFORM_MAP_FIXED, kept, t.min),
                }
            }
            MacroKind::SortBy => {
                let t = transform.unwrap_or_else(zero);
                let key = t.max.add_const((table::MAP_APPEND + append_alloc) as f64);
                (table::MAP_FILTER_FIXED, key, t.min)
            }
            MacroKind::OptMap | MacroKind::OptFlatMap => (0, Poly::constant(UNBOUNDED), 0),
        };
        self.body_reads_element = probe
            && plan.sum.is_some_and(|(x, _)| {
                let folded = self.parts.fold_into(&self.parts.split_entry(&per, x), x);
                folded
                    .terms()
                    .iter()
                    .any(|(mono, _)| mono.iter().any(|(v, _)| *v == x))
            });
        let mut body = if let Some(passed) = &passed {
            self.sum_counted(&per, passed, plan.sum)
        } else if indexed.is_empty() {
            self.sum(&per, &plan)
        } else {
            self.sum_indexed(&per, &plan.count, &indexed)
        };
        // A filter that can keep fewer parts than the split has: `S` skipped and `K` kept
        // parts cost `α·S + β·K` past the sizes' terms (α the predicate and a skip, β the
        // predicate and an append), within `S·max(s, 1) + K·(m + s) ≤ b + s` (every part but
        // the last has its separator, a kept one `m` bytes more, and split('') parts are code
        // points of a byte at least). A linear cost is largest at a vertex of that region:
        // every part skipped (at most the `b + 1` parts of the split) or every part kept (at
        // most `(b + s)/(m + s)`), so the larger of the two bounds the loop.
        if let Some((kept_len, _)) = &kept {
            let kept_per = pred
                .max
                .add_const((table::FILTER_APPEND + append_alloc).max(table::FILTER_SKIP) as f64);
            body = body.max(&self.sum_counted(&kept_per, kept_len, plan.sum));
        }
        // `all` and `exists` may stop after their first element unless the predicate is a
        // literal that never stops them.
        let never_stops = matches!(
            (c.kind, c.predicate.map(|p| self.ast.kind(p))),
            (MacroKind::All, Some(ExprKind::Literal(Literal::Bool(true))))
                | (
                    MacroKind::Exists,
                    Some(ExprKind::Literal(Literal::Bool(false)))
                )
        );
        let min_iterations = match c.kind {
            MacroKind::All | MacroKind::Exists if !never_stops => plan.min_count.min(1),
            _ => plan.min_count,
        };
        let shape = match c.kind {
            MacroKind::Map | MacroKind::TransformList => Shape::List(Box::new(ListShape {
                len: plan.count.clone(),
                min_len: plan.min_count,
                elem: transform_shape.clone().unwrap_or(Shape::Scalar),
                elem_var: plan.sum.map(|(x, _)| x),
                pieces: Vec::new(),
                spacing: None,
                scalar_from_source: c.kind == MacroKind::Map
                    && self.keeps_source_scalars(&plan)
                    && c.transform
                        .is_some_and(|t| super::needs::keeps_scalars(self.ast, t, &c.var)),
            })),
            MacroKind::Filter => Shape::List(Box::new(match &kept {
                // The kept parts of a split: as many as the least size leaves room for, each
                // at least that size, still apart by a separator each.
                Some((kept_len, least)) => ListShape {
                    len: kept_len.clone(),
                    min_len: 0,
                    elem: match &plan.elem {
                        Shape::Str { max, min } => Shape::Str {
                            max: max.clone(),
                            min: (*min).max(*least),
                        },
                        other => other.clone(),
                    },
                    elem_var: plan.sum.map(|(x, _)| x),
                    pieces: Vec::new(),
                    spacing: range_spacing(&range.shape),
                    scalar_from_source: self.keeps_source_scalars(&plan),
                },
                None => ListShape {
                    len: plan.count.clone(),
                    min_len: 0,
                    elem: plan.elem.clone(),
                    elem_var: plan.sum.map(|(x, _)| x),
                    pieces: Vec::new(),
                    spacing: None,
                    scalar_from_source: self.keeps_source_scalars(&plan),
                },
            })),
            MacroKind::TransformMap => super::super::libraries::transformed_map(
                plan.count.clone(),
                plan.index.clone(),
                transform_shape.clone().unwrap_or(Shape::Scalar),
            ),
            MacroKind::TransformMapEntry => match &transform_shape {
                Some(Shape::Map(m)) => super::super::libraries::transformed_map(
                    self.at_largest_of(&plan, &plan.count.mul(&m.len)),
                    m.key.clone(),
                    m.val.clone(),
                ),
                _ => Shape::Unknown,
            },
            MacroKind::SortBy => Shape::List(Box::new(ListShape {
                len: plan.count.clone(),
                min_len: 0,
                elem: plan.elem.clone(),
                elem_var: plan.sum.map(|(x, _)| x),
                pieces: Vec::new(),
                spacing: None,
                scalar_from_source: self.keeps_source_scalars(&plan),
            })),
            _ => Shape::Scalar,
        };
        // `sortBy` sorts the keys it computed: the comparisons and the sorted list; the
        // transforms into a map compare the keys they built.
        let sorting = match (c.kind, &transform_shape) {
            (MacroKind::SortBy, key) => self.sort_keys(&plan, key.as_ref()),
            (MacroKind::TransformMap, _) => {
                let per = plan
                    .index
                    .as_str()
                    .map_or_else(Poly::zero, |len| super::super::calls::key_compare(&len));
                let compares = self.sum(&per, &plan);
                super::super::calls::map_build(self, &plan.count, &compares)
            }
            (MacroKind::TransformMapEntry, Some(Shape::Map(m))) => {
                let entries = self.at_largest_of(&plan, &plan.count.mul(&m.len));
                let per = m.key.as_str().map_or_else(Poly::zero, |len| {
                    m.len.mul(&super::super::calls::key_compare(&len))
                });
                let compares = self.sum(&per, &plan);
                super::super::calls::map_build(self, &entries, &compares)
            }
            _ => Poly::zero(),
        };
        let assumption = Some(self.describe_iteration(
            &plan,
            count_max,
            needed.as_ref().map(|(_, least)| *least),
        ));
        let val = Val {
            max: range.max.add(&body).add(&sorting).add_const(fixed as f64),
            min: range
                .min
                .saturating_add(fixed)
                .saturating_add(min_iterations.saturating_mul(per_min)),
            shape,
        };
        (val, assumption)
    }

    /// `opt.optMap(x, t)` and `opt.optFlatMap(x, t)`: the transform runs at most once, on the
    /// optional's value (whose shape the optional's is).
    fn opt_map(&mut self, c: &'a Comprehension, range: &Val) -> Val {
        self.scopes.push((&c.var, range.shape.clone()));
        let t = c.transform.map(|t| self.visit(t));
        self.scopes.pop();
        let (t_max, t_shape) = t.map_or((Poly::zero(), Shape::Scalar), |t| (t.max, t.shape));
        // `optMap` wraps the transform's value in a new optional.
        let made = match c.kind {
            MacroKind::OptMap => self.model.optional_alloc(),
            _ => 0,
        };
        Val {
            max: range
                .max
                .add(&t_max)
                .add_const((table::OPT_MAP + made) as f64),
            min: range.min.saturating_add(table::OPT_MAP),
            shape: t_shape,
        }
    }

    /// `p` with the iteration's element variable at its whole part.
    fn at_largest_of(&self, plan: &Iteration, p: &Poly) -> Poly {
        match plan.sum {
            Some((x, parent)) => {
                let p = self.parts.split_entry(p, x);
                self.parts.fold_into(&p, x).substitute(x, parent)
            }
            None => p.clone(),
        }
    }

    /// Sorting the keys `sortBy` computed: `CALL + n`, then `n · ⌈log₂ n⌉` comparisons of at
    /// most the longest key, and the sorted list.
    fn sort_keys(&self, plan: &Iteration, key: Option<&Shape>) -> Poly {
        let compare =
            key.and_then(Shape::as_str)
                .map_or(Poly::constant(table::CALL as f64), |len| {
                    let t = len.scale(0.1).add_const(0.9);
                    t.max(&Poly::constant(table::CALL as f64))
                });
        let compare = self.at_largest_of(plan, &compare);
        let n = units(self.parts.maximize(&plan.count));
        let log = if n < 2 {
            0.0
        } else {
            f64::from(u64::BITS - (n - 1).leading_zeros())
        };
        let alloc = self.model.alloc(table::alloc_list(1)) as f64;
        plan.count
            .scale(1.0 + alloc)
            .add(&plan.count.mul(&compare).scale(log))
            .add_const((table::CALL + self.model.list_alloc()) as f64)
    }

    /// Bounds `Σ per(xᵢ)` over every iteration. With an element variable `x` of a part `P`
    /// and the shared size model, `Σ p(xᵢ) ≤ n·p(0) + q(P)` where `q = p − p(0)`: `q` has
    /// non-negative coefficients and no constant term in `x`, hence is superadditive in `x`, and
    /// the elements' sizes add up to at most `P`. Otherwise it is `n · p` at the largest element.
    fn sum(&self, per: &Poly, plan: &Iteration) -> Poly {
        self.sum_counted(per, &plan.count, plan.sum)
    }

    /// The deep size of a list (`Shape::deep_size`: one per element and each element's own),
    /// summed over its elements when they are distinct parts of one budget (its `elem_var`):
    /// `Σ (dᵢ + 1)` with every `dᵢ` a polynomial in the element's size is at most the count
    /// times its constant part plus the rest at the budget, as a loop's sum is (version 8).
    pub(crate) fn list_deep_size(&self, l: &ListShape) -> Poly {
        match l
            .elem_var
            .and_then(|x| Some((x, self.parts.part(x).parent?)))
        {
            Some(sum) => self.sum_counted(&l.elem.deep_size().add_const(1.0), &l.len, Some(sum)),
            None => Shape::List(Box::new(l.clone())).deep_size(),
        }
    }

    /// [`Walker::sum`] over `count` iterations, summing the element `sum` names.
    fn sum_counted(&self, per: &Poly, count: &Poly, sum: Option<(Var, Var)>) -> Poly {
        match sum {
            Some((x, parent)) => {
                let per = self.parts.split_entry(per, x);
                let per = self.parts.fold_into(&per, x);
                if self.sizes == SizeModel::Shared {
                    let (p0, q) = per.split_on(x);
                    count.mul(&p0).add(&q.substitute(x, parent))
                } else {
                    count.mul(&per.substitute(x, parent))
                }
            }
            None => count.mul(per),
        }
    }

    /// Whether a comprehension is a loop over `lists.range(n)` whose variable may name
    /// elements it sums over (version 7, the shared size model): `all`, `exists`, `exists_one`,
    /// `map`, `filter` and `transformList`, which run their body once per value of the range,
    /// directly over a call of `lists.range` (whose values `0 … n − 1` are distinct).
    fn sums_range_indices(&self, c: &Comprehension) -> bool {
        if !self.model.sums_range_indices() || self.sizes != SizeModel::Shared {
            return false;
        }
        let per_element = c.kind.runs_once_per_element();
        let ExprKind::Call {
            target,
            function,
            args,
            ..
        } = self.ast.kind(c.range)
        else {
            return false;
        };
        per_element
            && args.len() == 1
            && crate::check::namespaced(self.ast, *target, function).as_deref()
                == Some("lists.range")
    }

    /// Bounds `Σ per` over the iterations of a loop over `lists.range(n)` whose variable named
    /// the elements `indexed` (each of a list, one per list): the `n` values of the range are
    /// distinct, so at the `i`-th iteration each `yⱼ` is the `i`-th element of its list, a
    /// different element at every iteration, and `Σᵢ yᵢⱼ ≤ b_Lⱼ` (docs/cost-model.md §4). Every
    /// term of `per` in none of them is paid `count` times; every term in some is, summed
    /// over the iterations, at most the term with each `yⱼ` replaced by its list: for
    /// non-negative numbers `Σᵢ Πⱼ yᵢⱼ^eⱼ ≤ Πⱼ (Σᵢ yᵢⱼ)^eⱼ` (the right side, expanded,
    /// holds every term of the left). Parts inside an element are first replaced by it.
    fn sum_indexed(&self, per: &Poly, count: &Poly, indexed: &[Var]) -> Poly {
        let mut rest = per.clone();
        for &y in indexed {
            rest = self.parts.fold_into(&rest, y);
        }
        let mut summed = Poly::zero();
        for &y in indexed {
            let (without, with) = rest.split_on(y);
            summed = summed.add(&with);
            rest = without;
        }
        for &y in indexed {
            if let Some(list) = self.parts.part(y).parent {
                summed = summed.substitute(y, list);
            }
        }
        count.mul(&rest).add(&summed)
    }

    /// How many elements a `filter` over the parts of a split (a list with
    /// [`ListShape::spacing`]) can keep, and the least size of each (version 8): when the
    /// predicate holds only on strings of at least `m` bytes ([`least_bytes_when_true`]), `k`
    /// kept parts take `k·m` bytes of the split string and the `k − 1` separators between
    /// them at least `s` each, so `k·m + (k − 1)·s ≤ b` and `k ≤ (b + s)/(m + s)`, where the
    /// split list itself may have `b + 1` parts (docs/cost-model.md §4). `None` when that is
    /// no tighter (`m + s < 2`) or the range is not such a list.
    fn kept_parts(&self, c: &Comprehension, range: &Shape) -> Option<(Poly, u64)> {
        let Shape::List(l) = range else {
            return None;
        };
        let (string, sep) = l.spacing?;
        if c.var2.is_some() || !matches!(l.elem, Shape::Str { .. }) {
            return None;
        }
        let pred = c.predicate?;
        if c.kind == MacroKind::All && !never_fails_on_a_string(self.ast, pred, &c.var) {
            return None;
        }
        let least = least_bytes_when_true(self.ast, pred, &c.var).max(l.elem.str_min());
        if least == 0 || least.saturating_add(sep) < 2 {
            return None;
        }
        let d = least.saturating_add(sep) as f64;
        Some((Poly::var(string, 1.0 / d).add_const(sep as f64 / d), least))
    }

    /// How many times a loop that stops at its body's first error runs over the elements of a
    /// JSON part, when its body needs more than one byte of each (version 9): `map`, `filter`,
    /// `exists_one` and `sortBy` with one variable bound to the element itself. Every element
    /// but the last (on which the body may fail) takes at least `L` bytes
    /// ([`needs::requirement`]) and a comma, and the part's brackets two more, so `n` iterations
    /// need `(n − 1)·(L + 1) + 3` bytes of a part of `b`: at most `b/(L + 1) + 1`. Returns that
    /// count and `L`, when it is below the plan's.
    fn needed_bytes(&self, c: &Comprehension, plan: &Iteration) -> Option<(Poly, u64)> {
        if !self.model.counts_needed_bytes() || c.var2.is_some() {
            return None;
        }
        let body = match c.kind {
            MacroKind::Map => c.predicate.or(c.transform)?,
            MacroKind::Filter | MacroKind::ExistsOne => c.predicate?,
            MacroKind::SortBy => c.transform?,
            _ => return None,
        };
        let (_, parent) = plan.sum?;
        let least = super::needs::requirement(self.ast, body, &c.var).least_json_bytes();
        let least = if self.binds_its_element(plan) {
            least
        } else if plan.scalar_from_source && self.model.splits_scalar_elements() {
            // A value the body needs to be a string, a list or a map comes from an element
            // that is one (version 10), of two bytes at least; more is not known of it.
            least.min(2)
        } else {
            return None;
        };
        if least < 2 {
            return None;
        }
        let count = Poly::var(parent, 1.0 / (least + 1) as f64).add_const(1.0);
        (self.parts.maximize(&count) < self.parts.maximize(&plan.count)).then_some((count, least))
    }

    /// How many elements of a JSON part a `filter` can keep (version 9): a kept element meets
    /// what the predicate needs to run ([`needs::requirement`]) and is one the predicate is
    /// true on ([`least_json_bytes_when_true`]), so it takes at least the larger `K` of the two
    /// in bytes, and a comma; `k` kept elements need `k·(K + 1) + 1` bytes of a part of `b`:
    /// at most `b/(K + 1)`, and one more iteration may fail. `None` when that is no fewer than
    /// the loop's iterations.
    fn kept_elements(
        &self,
        c: &Comprehension,
        plan: &Iteration,
        count_max: f64,
    ) -> Option<(Poly, u64)> {
        if !self.model.counts_needed_bytes() || c.var2.is_some() {
            return None;
        }
        let pred = c.predicate?;
        let (_, parent) = plan.sum?;
        if !self.binds_its_element(plan) {
            return None;
        }
        let least = super::needs::requirement(self.ast, pred, &c.var)
            .least_json_bytes()
            .max(least_json_bytes_when_true(self.ast, pred, &c.var));
        if least < 2 {
            return None;
        }
        // One more for the last iteration, which may fail after a skip's cost (at most a kept
        // element's, which the vertex then pays).
        let kept = Poly::var(parent, 1.0 / (least + 1) as f64).add_const(1.0);
        (self.parts.maximize(&kept) < count_max).then_some((kept, 0))
    }

    /// Whether the values a loop's variable binds are numbers, bools or null whenever the
    /// elements of the part they come from are (version 10): the elements themselves, or a
    /// list marked so ([`ListShape::scalar_from_source`]).
    fn keeps_source_scalars(&self, plan: &Iteration) -> bool {
        if !self.model.splits_scalar_elements() {
            return false;
        }
        match (plan.sum, &plan.elem) {
            (Some((x, _)), Shape::Json(w)) if *w == x => true,
            (Some(_), _) => plan.scalar_from_source,
            (None, _) => false,
        }
    }

    /// The two passes of a loop priced apart by the kind of its elements (version 10): one with
    /// every element a number, a bool or null (as many as the plan counts, each one byte and a
    /// comma), one with every element a string, a list or a map (two bytes and a comma at
    /// least: `b/3`, summed over the part as before). For a loop whose body reads nothing
    /// but its variable, the cost is a sum over the elements of what each costs alone, and any
    /// mix of the two kinds lies between the two (docs/cost-model.md §4, "Numbers and the
    /// rest, apart"): `a.map(x, x + x)` pays a concatenation's bytes or an addition per
    /// element, not both. `None` when the rule does not apply or would count no fewer.
    fn scalar_split(&self, c: &Comprehension, plan: &Iteration) -> Option<(Iteration, Iteration)> {
        if !self.model.splits_scalar_elements()
            || c.var2.is_some()
            || !c.kind.runs_once_per_element()
            || self.extra_passes < 3
        {
            return None;
        }
        let (_, parent) = plan.sum?;
        if self.parts.part(parent).object || !self.keeps_source_scalars(plan) {
            return None;
        }
        let bodies = [c.predicate, c.transform];
        if !bodies
            .iter()
            .flatten()
            .all(|&b| super::needs::reads_only(self.ast, b, &c.var))
        {
            return None;
        }
        // Where the body needs more than a number already, version 9 counts the elements.
        if self.needed_bytes(c, plan).is_some() {
            return None;
        }
        // `n` elements of two bytes or more, with `n − 1` commas and the brackets, take
        // `3n + 1` bytes: at most `b/3` of them.
        let sized = Poly::var(parent, 1.0 / 3.0);
        if self.parts.maximize(&sized) >= self.parts.maximize(&plan.count) {
            return None;
        }
        let scalars = Iteration {
            count: plan.count.clone(),
            min_count: plan.min_count,
            elem: Shape::Scalar,
            index: Shape::Scalar,
            value: Shape::Scalar,
            sum: None,
            scalar_from_source: false,
        };
        let sized = Iteration {
            count: sized,
            min_count: plan.min_count,
            elem: plan.elem.clone(),
            index: plan.index.clone(),
            value: plan.value.clone(),
            sum: plan.sum,
            scalar_from_source: plan.scalar_from_source,
        };
        Some((scalars, sized))
    }

    /// Prices the two passes of [`Walker::scalar_split`]: the larger of the two bounds the loop,
    /// and its result is either pass's (a list as long as the longer, of the elements of both,
    /// still from the part's elements one to one). The figures kept for explanations are the
    /// larger of the passes, as for [`Walker::comprehension_passes`]. The loop priced whole
    /// (`plan`) bounds it too, and is kept when its maximum is no larger: a number may cost
    /// more as a value of any size than as the few bytes of JSON it takes (`'%s'.format([x])`
    /// of `1e308`), and a `filter` keeps no number its predicate needs a string for, which
    /// only the whole plan knows (version 9's kept elements).
    fn comprehension_split(
        &mut self,
        c: &'a Comprehension,
        range: &Val,
        plan: Iteration,
        scalars: Iteration,
        sized: Iteration,
    ) -> (Val, Option<String>) {
        self.extra_passes -= 3;
        let before = self.nodes.clone();
        self.probe_body = true;
        let whole = self.comprehension_planned(c, range, plan);
        if !self.body_reads_element {
            // What the body costs does not grow with the element: both passes would price it
            // as the whole plan does, or a number a little lower at most.
            self.extra_passes += 2;
            return whole;
        }
        let scalar_count = units(self.parts.maximize(&scalars.count));
        let sized_count = units(self.parts.maximize(&sized.count));
        let part = sized
            .sum
            .map(|(_, parent)| self.parts.part(parent).name.clone());
        let whole_nodes = std::mem::replace(&mut self.nodes, before.clone());
        let mut kept = before.clone();
        let mut passes = Vec::new();
        for plan in [scalars, sized] {
            let (val, _) = self.comprehension_planned(c, range, plan);
            for (k, node) in kept.iter_mut().zip(&self.nodes) {
                if let Some(n) = node {
                    if k.as_ref().is_none_or(|old| old.max < n.max) {
                        *k = Some(n.clone());
                    }
                }
            }
            self.nodes.clone_from(&before);
            passes.push(val);
        }
        self.nodes = kept;
        let sized = passes.pop().expect("two passes");
        let scalars = passes.pop().expect("two passes");
        let shape = match (scalars.shape, sized.shape) {
            (Shape::List(a), Shape::List(b)) => Shape::List(Box::new(ListShape {
                len: a.len.max(&b.len),
                min_len: a.min_len.min(b.min_len),
                elem: a.elem.union(b.elem),
                elem_var: b.elem_var,
                pieces: Vec::new(),
                spacing: None,
                scalar_from_source: b.scalar_from_source,
            })),
            (a, b) => a.union(b),
        };
        let assumption = format!(
            "at most {scalar_count} iterations if {} holds numbers, bools or null, {sized_count} if strings, lists or maps (two bytes and a comma each); priced at the larger",
            part.as_deref().unwrap_or("the range")
        );
        let val = Val {
            max: scalars.max.max(&sized.max),
            min: scalars.min.min(sized.min),
            shape,
        };
        // Either bound is sound for every size of the part; the smaller maximum is kept.
        if self.parts.maximize(&val.max) < self.parts.maximize(&whole.0.max) {
            (val, Some(assumption))
        } else {
            self.nodes = whole_nodes;
            whole
        }
    }

    /// Whether the one variable of a loop binds a JSON value inside the element the loop sums
    /// over (the element itself, its key, a value selected from it): then the values of
    /// different iterations lie in different elements of one part, and a value the body needs
    /// `L` bytes of takes `L` bytes of that part. A list a `map` built of another value (`a.map(x,
    /// event.attributes.b)`: every element the same `b`) has the count of `a` and an element
    /// var, but its values are in no element of `a`: the black-box attack on version 9 found
    /// such a list priced at `a`'s bytes divided by what the next loop needed of `b`.
    fn binds_its_element(&self, plan: &Iteration) -> bool {
        let (Some((x, _)), &Shape::Json(mut w)) = (plan.sum, &plan.elem) else {
            return false;
        };
        loop {
            if w == x {
                return true;
            }
            match self.parts.part(w).parent {
                Some(up) => w = up,
                None => return false,
            }
        }
    }

    fn describe_iteration(&self, plan: &Iteration, count_max: f64, needed: Option<u64>) -> String {
        let n = units(count_max);
        if let (Some(least), Some((_, parent))) = (needed, plan.sum) {
            let part = self.parts.part(parent);
            return format!(
                "at most {n} iterations: {} holds at most {} bytes and the body fails on any element of fewer than {least} (every one but the last)",
                part.name,
                units(part.cap)
            );
        }
        match plan.sum {
            Some((_, parent)) => {
                let part = self.parts.part(parent);
                let (what, per) = if part.object {
                    ("entry", 5)
                } else {
                    ("element", 2)
                };
                format!(
                    "at most {n} iterations: {} holds at most {} bytes and each {what} takes at least {per}",
                    part.name,
                    units(part.cap)
                )
            }
            None => format!("at most {n} iterations"),
        }
    }
}

/// The spacing of a range that is one list of split parts ([`ListShape::spacing`]).
fn range_spacing(range: &Shape) -> Option<(Var, u64)> {
    match range {
        Shape::List(l) => l.spacing,
        _ => None,
    }
}

/// The least size in bytes of a string on which `pred` is `true`, with `var` bound to it: the
/// length of a literal it starts or ends with, contains or equals, or one more than an integer
/// literal its size exceeds (a code point is at least one byte); the larger of the two sides of
/// `&&` (both hold when it is true, CEL's commutative `&&` absorbing an error only into
/// `false`), the smaller of the two sides of `||` and of the branches of a conditional; zero
/// for anything else. Only the predicate's own operators are read: a nested comprehension (which
/// may bind the same name) is never entered.
pub(crate) fn least_bytes_when_true(ast: &Ast, pred: NodeId, var: &str) -> u64 {
    need(ast, pred, var, false).0
}

/// The least size in bytes of compact JSON of a value on which `pred` is `true`, with `var`
/// bound to it (version 9): every form [`least_bytes_when_true`] reads but `!= ''` (which holds
/// on a number too) is true only on a string of at least `m` bytes (`""` around them), or, for a
/// size compared with a literal, on a list or map of at least `m` elements (`[0,…]`, `{"":0,…}`,
/// each longer still); zero when nothing is known.
pub(crate) fn least_json_bytes_when_true(ast: &Ast, pred: NodeId, var: &str) -> u64 {
    match need(ast, pred, var, true).0 {
        0 => 0,
        m => m.saturating_add(2),
    }
}

/// Whether `pred` cannot fail when `var` is a string: it is made of the forms
/// [`least_bytes_when_true`] reads (string literals compared with or searched in `var`, its size
/// compared with an integer literal), `&&` and `||` alone.
pub(crate) fn never_fails_on_a_string(ast: &Ast, pred: NodeId, var: &str) -> bool {
    need(ast, pred, var, false).1
}

/// [`least_bytes_when_true`] and [`never_fails_on_a_string`] at once; with `json`, for
/// [`least_json_bytes_when_true`] (`!= ''` then needs nothing).
fn need(ast: &Ast, pred: NodeId, var: &str, json: bool) -> (u64, bool) {
    use crate::syntax::BinaryOp;
    let is_var = |n: NodeId| matches!(ast.kind(n), ExprKind::Ident { name, rooted: false } if &**name == var);
    let string_lit = |n: NodeId| match ast.kind(n) {
        ExprKind::Literal(Literal::String(l)) => Some(l.len() as u64),
        _ => None,
    };
    let int_lit = |n: NodeId| match ast.kind(n) {
        // A negative bound needs nothing (`size(w) > -1` holds on `''`).
        ExprKind::Literal(Literal::Int(k)) => Some(*k),
        _ => None,
    };
    // `size(var)` or `var.size()`.
    let size_of_var = |n: NodeId| match ast.kind(n) {
        ExprKind::Call {
            target,
            function,
            args,
            ..
        } if &**function == "size" => match (target, args.as_slice()) {
            (Some(t), []) => is_var(*t),
            (None, [a]) => is_var(*a),
            _ => false,
        },
        _ => false,
    };
    let sure = |m: Option<u64>| m.map_or((0, false), |m| (m, true));
    let at_least = |k: i64| u64::try_from(k).unwrap_or(0);
    let more_than = |k: i64| u64::try_from(k.saturating_add(1)).unwrap_or(0);
    match ast.kind(pred) {
        ExprKind::Binary {
            op: BinaryOp::And,
            lhs,
            rhs,
        } => {
            let (a, x) = need(ast, *lhs, var, json);
            let (b, y) = need(ast, *rhs, var, json);
            (a.max(b), x && y)
        }
        ExprKind::Binary {
            op: BinaryOp::Or,
            lhs,
            rhs,
        } => {
            let (a, x) = need(ast, *lhs, var, json);
            let (b, y) = need(ast, *rhs, var, json);
            (a.min(b), x && y)
        }
        ExprKind::Conditional {
            then, otherwise, ..
        } => (
            need(ast, *then, var, json)
                .0
                .min(need(ast, *otherwise, var, json).0),
            false,
        ),
        ExprKind::Call {
            target: Some(t),
            function,
            args,
            ..
        } if is_var(*t)
            && matches!(&**function, "startsWith" | "endsWith" | "contains")
            && args.len() == 1 =>
        {
            sure(string_lit(args[0]))
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (l, r) = (*lhs, *rhs);
            match op {
                BinaryOp::Eq if is_var(l) => sure(string_lit(r)),
                BinaryOp::Eq if is_var(r) => sure(string_lit(l)),
                BinaryOp::Ne if !json && is_var(l) && string_lit(r) == Some(0) => (1, true),
                BinaryOp::Ne if !json && is_var(r) && string_lit(l) == Some(0) => (1, true),
                BinaryOp::Eq if size_of_var(l) => sure(int_lit(r).map(at_least)),
                BinaryOp::Eq if size_of_var(r) => sure(int_lit(l).map(at_least)),
                BinaryOp::Gt if size_of_var(l) => sure(int_lit(r).map(more_than)),
                BinaryOp::Ge if size_of_var(l) => sure(int_lit(r).map(at_least)),
                BinaryOp::Lt if size_of_var(r) => sure(int_lit(l).map(more_than)),
                BinaryOp::Le if size_of_var(r) => sure(int_lit(l).map(at_least)),
                _ => (0, false),
            }
        }
        _ => (0, false),
    }
}
