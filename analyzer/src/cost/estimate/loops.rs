//! Comprehensions: what a macro iterates over, how often, and the sum of its body's cost over
//! every iteration (the shared-budget rule of docs/cost-model.md §4).

use super::super::model::SizeModel;
use super::super::poly::{Poly, Var};
use super::super::size::{ListShape, Shape, UNBOUNDED};
use super::super::table;
use super::{Val, Walker, units};
use crate::syntax::{Comprehension, ExprKind, Literal, MacroKind};

/// One iteration plan: how often a comprehension runs its body and what its variable is.
struct Iteration {
    count: Poly,
    min_count: u64,
    elem: Shape,
    /// The element variable to sum over, and the part whose elements it ranges over.
    sum: Option<(Var, Var)>,
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
                    // not share one, or one loop's sum would absorb the other's variable.
                    Some((x, parent)) => {
                        let fresh = self.parts.element(parent);
                        let parts = &self.parts;
                        let elem = l
                            .elem
                            .map_vars(&mut |v| if parts.encloses(x, v) { fresh } else { v });
                        Iteration {
                            count: l.len.clone(),
                            min_count: l.min_len,
                            elem,
                            sum: Some((fresh, parent)),
                        }
                    }
                    None => Iteration {
                        count: l.len.clone(),
                        min_count: l.min_len,
                        elem: l.elem.clone(),
                        sum: None,
                    },
                },
                Shape::Map(m) => Iteration {
                    count: m.len.clone(),
                    min_count: m.min_len,
                    elem: m.key.clone(),
                    sum: None,
                },
                Shape::Json(v) => {
                    let x = self.parts.element(*v);
                    Iteration {
                        count: self.parts.count(*v),
                        min_count: 0,
                        elem: Shape::Json(x),
                        sum: Some((x, *v)),
                    }
                }
                Shape::Unknown => Iteration {
                    count: Poly::constant(UNBOUNDED),
                    min_count: 0,
                    elem: Shape::Unknown,
                    sum: None,
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
                sum: None,
            });
        }
        // Several possible ranges: bound the count by the largest, and every element by its
        // whole part (an element is never larger than the part it comes from).
        let mut merged: Option<Iteration> = None;
        for plan in plans {
            let elem = match plan.sum {
                Some((x, parent)) => plan.elem.map_vars(&mut |v| if v == x { parent } else { v }),
                None => plan.elem,
            };
            merged = Some(match merged {
                None => Iteration {
                    elem,
                    sum: None,
                    ..plan
                },
                Some(m) => Iteration {
                    count: m.count.max(&plan.count),
                    min_count: m.min_count.min(plan.min_count),
                    elem: m.elem.union(elem),
                    sum: None,
                },
            });
        }
        merged.expect("at least two plans")
    }

    pub(super) fn comprehension(&mut self, c: &'a Comprehension) -> (Val, Option<String>) {
        let range = self.visit(c.range);
        let plan = self.iteration(&range.shape);
        let count_max = self.parts.maximize(&plan.count);
        let outer = self
            .multipliers
            .last()
            .map_or_else(|| Poly::constant(1.0), |(m, _)| m.clone());
        let joint = self.parts.coarsen(outer.mul(&plan.count));
        // Maximised once here rather than for every node below.
        let joint_max = units(self.parts.maximize(&joint));
        self.multipliers.push((joint, joint_max));
        self.scopes.push((&c.var, plan.elem.clone()));
        let pred = c.predicate.map(|p| self.visit(p));
        let transform = c.transform.map(|t| self.visit(t));
        self.scopes.pop();
        self.multipliers.pop();

        let zero = || Val::constant(0, Shape::Scalar);
        let pred = pred.unwrap_or_else(zero);
        let transform_shape = transform.as_ref().map(|t| t.shape.clone());
        // Each appended element builds `[t]` and grows the accumulator: both are charged.
        let append_alloc = self.model.alloc(2 * table::alloc_list(1));
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
            MacroKind::Map => {
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
            MacroKind::Filter => (
                table::MAP_FILTER_FIXED,
                pred.max.add_const(
                    (table::FILTER_APPEND + append_alloc).max(table::FILTER_SKIP) as f64,
                ),
                pred.min.saturating_add(table::FILTER_SKIP),
            ),
            // Not priced yet: an unbounded estimate keeps the bound sound.
            MacroKind::TransformList
            | MacroKind::TransformMap
            | MacroKind::TransformMapEntry
            | MacroKind::SortBy
            | MacroKind::OptMap
            | MacroKind::OptFlatMap => (0, Poly::constant(UNBOUNDED), 0),
        };
        let body = self.sum(&per, &plan);
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
            MacroKind::Map => Shape::List(Box::new(ListShape {
                len: plan.count.clone(),
                min_len: plan.min_count,
                elem: transform_shape.unwrap_or(Shape::Scalar),
                elem_var: plan.sum.map(|(x, _)| x),
            })),
            MacroKind::Filter => Shape::List(Box::new(ListShape {
                len: plan.count.clone(),
                min_len: 0,
                elem: plan.elem.clone(),
                elem_var: plan.sum.map(|(x, _)| x),
            })),
            _ => Shape::Scalar,
        };
        let assumption = Some(self.describe_iteration(&plan, count_max));
        let val = Val {
            max: range.max.add(&body).add_const(fixed as f64),
            min: range
                .min
                .saturating_add(fixed)
                .saturating_add(min_iterations.saturating_mul(per_min)),
            shape,
        };
        (val, assumption)
    }

    /// Bounds `Σ per(xᵢ)` over every iteration. With an element variable `x` of a part `P`
    /// and the shared size model, `Σ p(xᵢ) ≤ n·p(0) + q(P)` where `q = p − p(0)`: `q` has
    /// non-negative coefficients and no constant term in `x`, hence is superadditive in `x`, and
    /// the elements' sizes add up to at most `P`. Otherwise it is `n · p` at the largest element.
    fn sum(&self, per: &Poly, plan: &Iteration) -> Poly {
        match plan.sum {
            Some((x, parent)) => {
                let per = self.parts.fold_into(per, x);
                if self.sizes == SizeModel::Shared {
                    let (p0, q) = per.split_on(x);
                    plan.count.mul(&p0).add(&q.substitute(x, parent))
                } else {
                    plan.count.mul(&per.substitute(x, parent))
                }
            }
            None => plan.count.mul(per),
        }
    }

    fn describe_iteration(&self, plan: &Iteration, count_max: f64) -> String {
        let n = units(count_max);
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
