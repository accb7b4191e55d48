//! Value shapes: what the estimator knows about the size of every value. A shape bounds a
//! value: a string's length, a list's length and elements, a map's, a JSON part of the event
//! whose type is only known at evaluation time, or a host object.

use std::rc::Rc;
use std::sync::Arc;

use super::parts::Parts;
use super::poly::{Poly, Var};
use crate::check::SizeHint;
use crate::types::{ObjectType, Type};

/// The size used for "unbounded": `u64::MAX`, as cel-go does.
pub(crate) const UNBOUNDED: f64 = u64::MAX as f64;

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
    /// When the list is a concatenation (cost-model version 5 on): the shapes of the lists it
    /// joins, so that a loop over it may sum over each piece's own part
    /// (`estimate/loops.rs`). Empty otherwise.
    pub(crate) pieces: Vec<Shape>,
    /// When the elements are the parts of one string part split at a separator (cost-model
    /// version 8 on): that part's variable and the separator's least length in bytes. Any two
    /// elements of such a list, and of any list a `filter` keeps from it, are then apart by at
    /// least one separator within the string, so `k` elements of at least `m` bytes each need
    /// `k·m + (k − 1)·s` of its bytes (`estimate/loops.rs`, a filter's kept elements).
    pub(crate) spacing: Option<(Var, u64)>,
    /// Whether an element is a number, a bool or null whenever the element of the part it
    /// comes from (`elem_var`) is one (cost-model version 10): a list a `map` built with a
    /// transform that keeps numbers numbers (`a.map(x, x + x)`, `needs::keeps_scalars`), or
    /// elements a `filter` or `sortBy` kept of such a list or of a part. A loop over it whose
    /// body fails on a number then runs past elements from elements of two bytes or more only.
    pub(crate) scalar_from_source: bool,
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
                pieces: Vec::new(),
                spacing: None,
                scalar_from_source: false,
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
                pieces: Vec::new(),
                spacing: if a.spacing == b.spacing {
                    a.spacing
                } else {
                    None
                },
                scalar_from_source: a.scalar_from_source && b.scalar_from_source,
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

    /// The event parts the value may occupy or whose sizes bound it: what a use of the value
    /// says about those parts (see [`Parts::note`]).
    pub(crate) fn part_vars(&self) -> Vec<Var> {
        let mut vars = Vec::new();
        for alt in self.alternatives() {
            match alt {
                Shape::Json(v) => vars.push(*v),
                Shape::Str { max, .. } => vars.extend(max.vars()),
                _ => {}
            }
        }
        vars
    }

    /// How many shapes this one is made of (itself, its elements, keys, values, alternatives
    /// and pieces, recursively), counted up to `cap`. A shape built by repeating another (the
    /// pieces of `x + x` hold `x` twice) may double at every step of a chain; what keeps more
    /// detail than this stops keeping it (`calls.rs`, the pieces of a concatenation).
    pub(crate) fn nodes(&self, cap: usize) -> usize {
        fn count(s: &Shape, left: &mut usize) {
            if *left == 0 {
                return;
            }
            *left -= 1;
            match s {
                Shape::List(l) => {
                    count(&l.elem, left);
                    for p in &l.pieces {
                        count(p, left);
                    }
                }
                Shape::Map(m) => {
                    count(&m.key, left);
                    count(&m.val, left);
                }
                Shape::Union(v) => {
                    for a in v {
                        count(a, left);
                    }
                }
                _ => {}
            }
        }
        let mut left = cap;
        count(self, &mut left);
        cap - left
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

    /// Whether a bound inside the shape (a string's bytes, a list's or a map's length) has more
    /// than `terms` terms or a degree above `degree`.
    pub(crate) fn has_large_bound(&self, terms: usize, degree: u32) -> bool {
        let large = |p: &Poly| p.terms().len() > terms || p.degree() > degree;
        match self {
            Shape::Str { max, .. } => large(max),
            Shape::List(l) => {
                large(&l.len)
                    || l.elem.has_large_bound(terms, degree)
                    || l.pieces.iter().any(|p| p.has_large_bound(terms, degree))
            }
            Shape::Map(m) => {
                large(&m.len)
                    || m.key.has_large_bound(terms, degree)
                    || m.val.has_large_bound(terms, degree)
            }
            Shape::Union(v) => v.iter().any(|a| a.has_large_bound(terms, degree)),
            _ => false,
        }
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
                pieces: l.pieces.iter().map(|p| p.map_vars(f)).collect(),
                spacing: l.spacing.map(|(v, s)| (f(v), s)),
                scalar_from_source: l.scalar_from_source,
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
