//! Size variables and value shapes: what the estimator knows about the size of every value.
//!
//! A *part* is a region of one event whose size in bytes is a variable: `event.text`, a header
//! field, `event.attributes`, a constant-key member below it, or one element of a list or map
//! inside it. Parts below the same `event.attributes` share its budget: disjoint parts (siblings
//! with different constant keys, and everything below them) occupy different bytes of the same
//! compact JSON text, so their sizes plus their framing add up to at most the budget. A *shape*
//! bounds a value: a string's length, a list's length and elements, or a JSON part of the event
//! whose type is only known at evaluation time.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use super::model::SizeModel;
use super::poly::{Poly, Var};
use crate::EventBounds;
use crate::check::SizeHint;
use crate::types::{ObjectType, Type};

/// The size used for "unbounded": `u64::MAX`, as cel-go does.
pub(crate) const UNBOUNDED: f64 = u64::MAX as f64;

/// Smallest compact-JSON element of a list: one byte (`0`), plus its comma.
const LIST_ELEMENT_BYTES: f64 = 2.0;
/// Smallest compact-JSON entry of an object: `"":0`, plus its comma.
const OBJECT_ENTRY_BYTES: f64 = 5.0;

/// What a part is, relative to its parent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PartKind {
    /// The root of a budget (`event.text`, a header, `event.attributes`).
    Root,
    /// The member of its parent object under a constant key.
    Key(Box<str>),
    /// One element of its parent list (or one entry of its parent object), chosen by a
    /// comprehension; two elements of the same parent may be the same element.
    Element,
}

/// One region of an event whose byte size is a variable.
#[derive(Clone, Debug)]
pub(crate) struct Part {
    /// The enclosing part.
    pub(crate) parent: Option<Var>,
    /// How it relates to its parent.
    pub(crate) kind: PartKind,
    /// Its own largest size in bytes.
    pub(crate) cap: f64,
    /// Bytes of framing that belong to it alone (`"key":`), outside its own size.
    pub(crate) overhead: f64,
    /// Whether it is known to be a JSON object (`event.attributes`).
    pub(crate) object: bool,
    /// A name for explanations.
    pub(crate) name: String,
}

/// The registry of parts met so far in one estimate.
#[derive(Debug)]
pub(crate) struct Parts {
    all: Vec<Part>,
    /// Roots and members by parent and name, so that repeated selections find their part in
    /// constant time (elements are always fresh and never looked up).
    named: HashMap<(Option<Var>, String), Var>,
    bounds: EventBounds,
    model: SizeModel,
}

impl Parts {
    pub(crate) fn new(bounds: EventBounds, model: SizeModel) -> Self {
        Self {
            all: Vec::new(),
            named: HashMap::new(),
            bounds,
            model,
        }
    }

    pub(crate) fn part(&self, v: Var) -> &Part {
        &self.all[v as usize]
    }

    pub(crate) fn bounds(&self) -> EventBounds {
        self.bounds
    }

    fn find(&self, parent: Option<Var>, name: &str) -> Option<Var> {
        self.named.get(&(parent, name.to_owned())).copied()
    }

    fn push(&mut self, part: Part) -> Var {
        let v = self.all.len() as Var;
        if part.kind != PartKind::Element {
            self.named.insert((part.parent, part.name.clone()), v);
        }
        self.all.push(part);
        v
    }

    /// The root part of one event field (`event.text`, `trigger.event.attributes`, …).
    pub(crate) fn root(&mut self, name: &str, cap: u64, object: bool) -> Var {
        if let Some(v) = self.find(None, name) {
            return v;
        }
        self.push(Part {
            parent: None,
            kind: PartKind::Root,
            cap: cap as f64,
            overhead: 0.0,
            object,
            name: name.to_owned(),
        })
    }

    /// The member of `parent` under the constant key `key`.
    pub(crate) fn key(&mut self, parent: Var, key: &str) -> Var {
        let name = format!("{}.{key}", self.part(parent).name);
        let kind = PartKind::Key(key.into());
        if let Some(v) = self.find(Some(parent), &name) {
            return v;
        }
        // `"key":` costs the key's bytes, two quotes and a colon; the parent's braces are two
        // more bytes that none of its members can use.
        let overhead = key.len() as f64 + 3.0;
        let cap = (self.part(parent).cap - 2.0 - overhead).max(0.0);
        self.push(Part {
            parent: Some(parent),
            kind,
            cap,
            overhead,
            object: false,
            name,
        })
    }

    /// A fresh element of `parent`, for one comprehension.
    pub(crate) fn element(&mut self, parent: Var) -> Var {
        let what = if self.part(parent).object {
            "an entry"
        } else {
            "an element"
        };
        let name = format!("{what} of {}", self.part(parent).name);
        let cap = (self.part(parent).cap - 2.0).max(0.0);
        self.push(Part {
            parent: Some(parent),
            kind: PartKind::Element,
            cap,
            overhead: 0.0,
            object: false,
            name,
        })
    }

    /// The root of the budget `v` belongs to.
    pub(crate) fn budget_root(&self, mut v: Var) -> Var {
        while let Some(p) = self.part(v).parent {
            v = p;
        }
        v
    }

    /// Whether `a` is `b` or encloses it.
    pub(crate) fn encloses(&self, a: Var, mut b: Var) -> bool {
        loop {
            if a == b {
                return true;
            }
            match self.part(b).parent {
                Some(p) => b = p,
                None => return false,
            }
        }
    }

    /// The chain from the budget root down to `v`.
    fn path(&self, v: Var) -> Vec<Var> {
        let mut path = vec![v];
        let mut at = v;
        while let Some(p) = self.part(at).parent {
            path.push(p);
            at = p;
        }
        path.reverse();
        path
    }

    /// Whether two parts certainly occupy different bytes: they branch apart at two members
    /// with different constant keys. An element may be any member, so it is disjoint from
    /// nothing at its own level.
    pub(crate) fn disjoint(&self, a: Var, b: Var) -> bool {
        let (pa, pb) = (self.path(a), self.path(b));
        if pa[0] != pb[0] {
            return false;
        }
        let common = pa.iter().zip(&pb).take_while(|(x, y)| x == y).count();
        if common == pa.len() || common == pb.len() {
            return false;
        }
        matches!(
            (&self.part(pa[common]).kind, &self.part(pb[common]).kind),
            (PartKind::Key(_), PartKind::Key(_))
        )
    }

    /// Upper bound on the number of elements (or entries) of part `v`.
    pub(crate) fn count(&self, v: Var) -> Poly {
        let per = if self.part(v).object {
            OBJECT_ENTRY_BYTES
        } else {
            LIST_ELEMENT_BYTES
        };
        Poly::var(v, 1.0 / per)
    }

    /// The greatest value of `p` over every event within bounds.
    pub(crate) fn maximize(&self, p: &Poly) -> f64 {
        let mut total = 0.0;
        for (mono, c) in p.terms() {
            total += c * self.maximize_mono(mono);
        }
        total
    }

    /// The greatest value of one monomial (coefficient 1).
    fn maximize_mono(&self, mono: &[(Var, u32)]) -> f64 {
        let mut groups: Vec<(Var, Vec<(Var, u32)>)> = Vec::new();
        for &(v, e) in mono {
            let root = self.budget_root(v);
            match groups.iter_mut().find(|(r, _)| *r == root) {
                Some((_, g)) => g.push((v, e)),
                None => groups.push((root, vec![(v, e)])),
            }
        }
        let mut value = 1.0;
        for (root, group) in &groups {
            value *= self.maximize_group(*root, group);
        }
        value
    }

    /// Variables of one budget: pairwise-disjoint ones share what is left of the budget after
    /// their framing, and the product `Π bᵢ^eᵢ` under `Σ bᵢ ≤ B` peaks at `bᵢ = eᵢ·B/E` (AM-GM).
    /// Otherwise each variable takes its own cap, which is never smaller.
    fn maximize_group(&self, root: Var, group: &[(Var, u32)]) -> f64 {
        let independent = || {
            group
                .iter()
                .map(|&(v, e)| self.part(v).cap.powi(e as i32))
                .product::<f64>()
        };
        let shared = self.model == SizeModel::Shared
            && group.len() > 1
            && group
                .iter()
                .enumerate()
                .all(|(i, &(a, _))| group[i + 1..].iter().all(|&(b, _)| self.disjoint(a, b)));
        if !shared {
            return independent();
        }
        let framing: f64 = group.iter().map(|&(v, _)| self.part(v).overhead).sum();
        let budget = (self.part(root).cap - 2.0 - framing).max(0.0);
        let degree: f64 = group.iter().map(|&(_, e)| f64::from(e)).sum();
        let shared_max = group
            .iter()
            .map(|&(_, e)| (f64::from(e) * budget / degree).powi(e as i32))
            .product::<f64>();
        shared_max.min(independent())
    }

    /// Says which sizes the largest term of `p` peaks at, for explanations.
    pub(crate) fn describe_worst_case(&self, p: &Poly) -> String {
        let worst = p
            .terms()
            .iter()
            .filter(|(m, _)| !m.is_empty())
            .max_by(|(a, ca), (b, cb)| {
                (ca * self.maximize_mono(a)).total_cmp(&(cb * self.maximize_mono(b)))
            });
        let Some((mono, _)) = worst else {
            return "no cost depends on the event's size".to_owned();
        };
        let mut roots: Vec<Var> = mono.iter().map(|&(v, _)| self.budget_root(v)).collect();
        roots.dedup();
        let mut clauses = Vec::new();
        for root in roots {
            let group: Vec<(Var, u32)> = mono
                .iter()
                .copied()
                .filter(|&(v, _)| self.budget_root(v) == root)
                .collect();
            let names: Vec<&str> = group.iter().map(|&(v, _)| &*self.part(v).name).collect();
            let shared = self.model == SizeModel::Shared
                && group.len() > 1
                && self.maximize_group(root, &group)
                    < group
                        .iter()
                        .map(|&(v, e)| self.part(v).cap.powi(e as i32))
                        .product::<f64>();
            if shared {
                clauses.push(format!(
                    "{} share the {} bytes of {}",
                    names.join(" and "),
                    self.part(root).cap,
                    self.part(root).name
                ));
            } else {
                for &(v, _) in &group {
                    let part = self.part(v);
                    clauses.push(format!("{} at its largest ({} bytes)", part.name, part.cap));
                }
            }
        }
        clauses.join("; ")
    }

    /// Coarsens a polynomial that grew too large: every part becomes its budget root (never
    /// smaller), and if that is still too large the whole polynomial becomes its maximum.
    pub(crate) fn coarsen(&self, p: Poly) -> Poly {
        const MAX_TERMS: usize = 48;
        const MAX_DEGREE: u32 = 12;
        if p.terms().len() <= MAX_TERMS && p.degree() <= MAX_DEGREE {
            return p;
        }
        let rooted = p.map_vars(|v| self.budget_root(v));
        if rooted.terms().len() <= MAX_TERMS && rooted.degree() <= MAX_DEGREE {
            return rooted;
        }
        Poly::constant(self.maximize(&rooted))
    }

    /// Replaces every part strictly inside `x` by `x` (never smaller), so that `x` is the only
    /// variable of its subtree before a comprehension sums over it.
    pub(crate) fn fold_into(&self, p: &Poly, x: Var) -> Poly {
        p.map_vars(|v| if v != x && self.encloses(x, v) { x } else { v })
    }
}

/// A bound on a value's size.
#[derive(Clone, Debug)]
pub(crate) enum Shape {
    /// A value whose size does not matter to any cost (numbers, bools, null, timestamps, …).
    Scalar,
    /// A string or bytes value of at most `max` bytes (and at least `min`).
    Str {
        /// Upper bound in bytes.
        max: Poly,
        /// Lower bound in bytes.
        min: u64,
    },
    /// A list.
    List(Box<ListShape>),
    /// A map.
    Map(Box<MapShape>),
    /// A JSON value of the event (any type) occupying a part.
    Json(Var),
    /// A host object; `event` objects carry the path their parts are named by.
    Object(Arc<ObjectType>, Rc<str>),
    /// Nothing is known.
    Unknown,
    /// One of several shapes.
    Union(Vec<Shape>),
}

/// A bound on a list.
#[derive(Clone, Debug)]
pub(crate) struct ListShape {
    /// Upper bound on the length.
    pub(crate) len: Poly,
    /// Lower bound on the length.
    pub(crate) min_len: u64,
    /// Bound on every element.
    pub(crate) elem: Shape,
    /// When the elements come one-to-one from distinct elements of a part, the variable that
    /// stands for "this element" in `elem`: a comprehension over the list may then sum over it.
    pub(crate) elem_var: Option<Var>,
}

/// A bound on a map.
#[derive(Clone, Debug)]
pub(crate) struct MapShape {
    /// Upper bound on the number of entries.
    pub(crate) len: Poly,
    /// Lower bound on the number of entries.
    pub(crate) min_len: u64,
    /// Bound on every key.
    pub(crate) key: Shape,
    /// Bound on every value.
    pub(crate) val: Shape,
}

/// Unions wider than this become [`Shape::Unknown`], which keeps shapes small.
const MAX_UNION: usize = 8;

impl Shape {
    /// A string of exactly known length.
    pub(crate) fn str_const(len: u64) -> Shape {
        Shape::Str {
            max: Poly::constant(len as f64),
            min: len,
        }
    }

    /// The shape of a declared type with its size hint (general environments).
    pub(crate) fn of_type(ty: &Type, hint: Option<&SizeHint>, path: &str) -> Shape {
        let max = || Poly::constant(hint.and_then(|h| h.max).map_or(UNBOUNDED, |m| m as f64));
        match ty {
            Type::Bool
            | Type::Int
            | Type::Uint
            | Type::Double
            | Type::Null
            | Type::Timestamp
            | Type::Duration
            | Type::Type(_) => Shape::Scalar,
            Type::String | Type::Bytes => Shape::Str { max: max(), min: 0 },
            Type::List(elem) => Shape::List(Box::new(ListShape {
                len: max(),
                min_len: 0,
                elem: Shape::of_type(elem, hint.and_then(|h| h.items.as_deref()), path),
                elem_var: None,
            })),
            Type::Map(key, val) => Shape::Map(Box::new(MapShape {
                len: max(),
                min_len: 0,
                key: Shape::of_type(key, hint.and_then(|h| h.keys.as_deref()), path),
                val: Shape::of_type(val, hint.and_then(|h| h.items.as_deref()), path),
            })),
            Type::Object(obj) => Shape::Object(obj.clone(), path.into()),
            Type::Dyn | Type::Param(_) | Type::Error | Type::Optional(_) => Shape::Unknown,
        }
    }

    /// The union of two shapes.
    pub(crate) fn union(self, other: Shape) -> Shape {
        match (self, other) {
            (Shape::Scalar, Shape::Scalar) => Shape::Scalar,
            (Shape::Unknown, _) | (_, Shape::Unknown) => Shape::Unknown,
            (Shape::Str { max: a, min: m }, Shape::Str { max: b, min: n }) => Shape::Str {
                max: a.max(&b),
                min: m.min(n),
            },
            (Shape::List(a), Shape::List(b)) => Shape::List(Box::new(ListShape {
                len: a.len.max(&b.len),
                min_len: a.min_len.min(b.min_len),
                elem: a.elem.union(b.elem),
                elem_var: if a.elem_var == b.elem_var {
                    a.elem_var
                } else {
                    None
                },
            })),
            (Shape::Map(a), Shape::Map(b)) => Shape::Map(Box::new(MapShape {
                len: a.len.max(&b.len),
                min_len: a.min_len.min(b.min_len),
                key: a.key.union(b.key),
                val: a.val.union(b.val),
            })),
            (Shape::Json(a), Shape::Json(b)) if a == b => Shape::Json(a),
            (a, b) => {
                let mut all = Vec::new();
                for s in [a, b] {
                    match s {
                        Shape::Union(v) => all.extend(v),
                        s => all.push(s),
                    }
                }
                if all.len() > MAX_UNION {
                    Shape::Unknown
                } else {
                    Shape::Union(all)
                }
            }
        }
    }

    /// The alternatives of a union, or the shape itself.
    pub(crate) fn alternatives(&self) -> &[Shape] {
        match self {
            Shape::Union(v) => v,
            s => std::slice::from_ref(s),
        }
    }

    /// Upper bound on the byte length if the value may be a string or bytes.
    pub(crate) fn as_str(&self) -> Option<Poly> {
        let mut out: Option<Poly> = None;
        for alt in self.alternatives() {
            let len = match alt {
                Shape::Str { max, .. } => max.clone(),
                // A JSON string of b bytes decodes to at most b − 2 bytes (quotes; escapes only
                // lengthen the JSON); b is the simpler, sound bound.
                Shape::Json(v) => Poly::var(*v, 1.0),
                Shape::Unknown => Poly::constant(UNBOUNDED),
                _ => continue,
            };
            out = Some(out.map_or(len.clone(), |o| o.max(&len)));
        }
        out
    }

    /// Lower bound on the byte length when the value is certainly a string.
    pub(crate) fn str_min(&self) -> u64 {
        match self {
            Shape::Str { min, .. } => *min,
            _ => 0,
        }
    }

    /// Whether the value may be a scalar.
    pub(crate) fn may_be_scalar(&self) -> bool {
        self.alternatives()
            .iter()
            .any(|s| matches!(s, Shape::Scalar | Shape::Json(_) | Shape::Unknown))
    }

    /// Upper bound on the length and a bound on every element, if the value may be a list
    /// (for indexing and `in`, not for iteration: the element is the whole part).
    pub(crate) fn as_list(&self, parts: &Parts) -> Option<(Poly, Shape)> {
        let mut out: Option<(Poly, Shape)> = None;
        for alt in self.alternatives() {
            let (len, elem) = match alt {
                Shape::List(l) => (l.len.clone(), l.elem.clone()),
                Shape::Json(v) if !parts.part(*v).object => (parts.count(*v), Shape::Json(*v)),
                Shape::Unknown => (Poly::constant(UNBOUNDED), Shape::Unknown),
                _ => continue,
            };
            out = Some(match out {
                None => (len, elem),
                Some((l, e)) => (l.max(&len), e.union(elem)),
            });
        }
        out
    }

    /// A bound on the work of walking the whole value once: one unit per byte of a string,
    /// per JSON byte of an event part, and per element or entry of a container (recursively).
    pub(crate) fn deep_size(&self) -> Poly {
        let mut out = Poly::zero();
        for alt in self.alternatives() {
            let size = match alt {
                Shape::Scalar => Poly::constant(1.0),
                // Host objects (whole events) are not compared in practice; comparing them is
                // not bounded by anything the estimator tracks.
                Shape::Object(..) => Poly::constant(UNBOUNDED),
                Shape::Str { max, .. } => max.clone(),
                Shape::Json(v) => Poly::var(*v, 1.0),
                Shape::List(l) => l.len.mul(&l.elem.deep_size().add_const(1.0)),
                Shape::Map(m) => m
                    .len
                    .mul(&m.key.deep_size().add(&m.val.deep_size()).add_const(1.0)),
                Shape::Unknown | Shape::Union(_) => Poly::constant(UNBOUNDED),
            };
            out = out.max(&size);
        }
        out
    }

    /// Renames variables inside the shape.
    pub(crate) fn map_vars(&self, f: &mut impl FnMut(Var) -> Var) -> Shape {
        match self {
            Shape::Str { max, min } => Shape::Str {
                max: max.map_vars(&mut *f),
                min: *min,
            },
            Shape::List(l) => Shape::List(Box::new(ListShape {
                len: l.len.map_vars(&mut *f),
                min_len: l.min_len,
                elem: l.elem.map_vars(f),
                elem_var: l.elem_var.map(&mut *f),
            })),
            Shape::Map(m) => Shape::Map(Box::new(MapShape {
                len: m.len.map_vars(&mut *f),
                min_len: m.min_len,
                key: m.key.map_vars(f),
                val: m.val.map_vars(f),
            })),
            Shape::Json(v) => Shape::Json(f(*v)),
            Shape::Union(v) => Shape::Union(v.iter().map(|s| s.map_vars(f)).collect()),
            s => s.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts() -> (Parts, Var, Var, Var) {
        let mut parts = Parts::new(EventBounds::DEFAULT, SizeModel::Shared);
        let attrs = parts.root("event.attributes", 8192, true);
        let a = parts.key(attrs, "a");
        let b = parts.key(attrs, "b");
        (parts, attrs, a, b)
    }

    #[test]
    fn members_under_different_keys_are_disjoint() {
        let (mut parts, attrs, a, b) = parts();
        assert!(parts.disjoint(a, b));
        assert!(!parts.disjoint(attrs, a), "a part overlaps its parent");
        let first = parts.element(a);
        let second = parts.element(a);
        assert!(
            !parts.disjoint(first, second),
            "two elements may be the same"
        );
        assert!(parts.disjoint(first, b));
        let member = parts.key(a, "k");
        assert!(!parts.disjoint(first, member), "an element may be under k");
    }

    #[test]
    fn disjoint_parts_share_their_budget() {
        let (parts, _, a, b) = parts();
        // a·b with |a| + 4 + |b| + 4 ≤ 8190 peaks at |a| = |b| = 4091.
        let product = Poly::var(a, 1.0).mul(&Poly::var(b, 1.0));
        assert!((parts.maximize(&product) - 4091.0 * 4091.0).abs() < 1e-3);
        // One part alone takes everything but the framing.
        assert!((parts.maximize(&Poly::var(a, 1.0)) - 8186.0).abs() < 1e-9);
        // Overlapping parts get their own caps.
        let overlap = Poly::var(a, 1.0).mul(&Poly::var(a, 1.0));
        assert!((parts.maximize(&overlap) - 8186.0 * 8186.0).abs() < 1e-3);
    }

    #[test]
    fn independent_sizes_ignore_the_shared_budget() {
        let mut parts = Parts::new(EventBounds::DEFAULT, SizeModel::Independent);
        let attrs = parts.root("event.attributes", 8192, true);
        let (a, b) = (parts.key(attrs, "a"), parts.key(attrs, "b"));
        let product = Poly::var(a, 1.0).mul(&Poly::var(b, 1.0));
        assert!((parts.maximize(&product) - 8186.0 * 8186.0).abs() < 1e-3);
    }

    #[test]
    fn coarsening_bounds_size_and_never_lowers_the_maximum() {
        let (mut parts, _, a, _) = parts();
        let keys: Vec<Var> = (0..5).map(|i| parts.key(a, &format!("k{i}"))).collect();
        let sum = keys
            .iter()
            .fold(Poly::constant(1.0), |acc, &k| acc.add(&Poly::var(k, 1.0)));
        // Many terms: (1 + k0 + … + k4)⁶ has 462.
        let wide = (0..6).fold(Poly::constant(1.0), |acc, _| acc.mul(&sum));
        assert!(wide.terms().len() > 48);
        let coarse = parts.coarsen(wide.clone());
        assert!(coarse.terms().len() <= 48);
        assert!(parts.maximize(&coarse) >= parts.maximize(&wide) * (1.0 - 1e-12));
        // High degree: k0¹⁴.
        let high = (0..14).fold(Poly::constant(1.0), |acc, _| {
            acc.mul(&Poly::var(keys[0], 1.0))
        });
        let coarse = parts.coarsen(high.clone());
        assert!(coarse.degree() <= 12);
        assert!(parts.maximize(&coarse) >= parts.maximize(&high) * (1.0 - 1e-12));
    }
}
