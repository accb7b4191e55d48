//! Reaching into values: identifiers, field selections, qualified names and indexing, and the
//! shape each gives — which part of the event a value occupies, when it is one.

use std::rc::Rc;

use super::super::parts::PartKind;
use super::super::poly::{Poly, Var};
use super::super::shape::Shape;
use super::{Walker, units};
use crate::syntax::ExprKind;
use crate::syntax::NodeId;

/// The fields of an event object, in the order of [`crate::eval::HEADER_FIELDS`], then `text`
/// and `attributes`: what iterating or indexing a whole event can reach.
pub(super) const EVENT_FIELDS: [&str; 7] = [
    "id",
    "source",
    "type",
    "action",
    "subject",
    "text",
    "attributes",
];

impl Walker<'_> {
    /// An identifier: the innermost iteration variable of that name, else a declared
    /// variable, else a type name used as a value.
    pub(super) fn resolve(&mut self, name: &str, rooted: bool) -> Shape {
        if !rooted {
            if let Some((_, shape)) = self.scopes.iter().rev().find(|(n, _)| *n == name) {
                return shape.clone();
            }
        }
        match self.env.var(name) {
            Some(decl) => Shape::of_type(&decl.ty, Some(&decl.size), name),
            None => Shape::Scalar,
        }
    }

    /// A select chain that names a declared variable with a dotted name (`self.val1`), unless
    /// its first identifier is an iteration variable in scope.
    pub(super) fn qualified(&self, id: NodeId) -> Option<Shape> {
        let mut names = Vec::new();
        let mut at = id;
        loop {
            match self.ast.kind(at) {
                ExprKind::Select { operand, field, .. } => {
                    names.push(&**field);
                    at = *operand;
                }
                ExprKind::Ident { name, rooted } => {
                    if !rooted && self.scopes.iter().any(|(n, _)| n == &&**name) {
                        return None;
                    }
                    names.push(&**name);
                    break;
                }
                _ => return None,
            }
        }
        names.reverse();
        let dotted = names.join(".");
        let decl = self.env.var(&dotted)?;
        Some(Shape::of_type(&decl.ty, Some(&decl.size), &dotted))
    }

    /// The shape of `operand.field`.
    pub(super) fn select(&mut self, operand: &Shape, field: &str) -> Shape {
        let mut out: Option<Shape> = None;
        for alt in operand.alternatives() {
            let s = match alt {
                Shape::Object(obj, path) if &*obj.name == "event" => self.event_field(path, field),
                Shape::Object(obj, path) => match obj.field(field) {
                    Some(f) => Shape::of_type(&f.ty, None, &format!("{path}.{field}")),
                    None => Shape::Scalar,
                },
                Shape::Map(m) => m.val.clone(),
                Shape::Json(v) => Shape::Json(self.parts.key(*v, field)),
                Shape::Unknown => Shape::Unknown,
                _ => Shape::Scalar,
            };
            out = Some(out.map_or(s.clone(), |o| o.union(s)));
        }
        out.unwrap_or(Shape::Scalar)
    }

    /// A field of an event object: its text, its attributes, or a header.
    fn event_field(&mut self, path: &str, field: &str) -> Shape {
        let bounds = self.parts.bounds();
        let name = format!("{path}.{field}");
        match field {
            "text" => Shape::Str {
                max: Poly::var(self.parts.root(&name, bounds.text, false), 1.0),
                min: 0,
            },
            "attributes" => Shape::Json(self.parts.root(&name, bounds.attributes, true)),
            "id" | "source" | "type" | "action" | "subject" => Shape::Str {
                max: Poly::var(self.parts.root(&name, bounds.header_field, false), 1.0),
                min: 0,
            },
            _ => Shape::Scalar,
        }
    }

    /// Any field of an event object, for a key computed at run time.
    pub(super) fn any_event_field(&mut self, path: &Rc<str>) -> Shape {
        let mut out = Shape::Scalar;
        for (i, field) in EVENT_FIELDS.iter().enumerate() {
            let s = self.event_field(path, field);
            out = if i == 0 { s } else { out.union(s) };
        }
        out
    }

    /// The shape of `operand[index]`; `key` is the index when it is a string literal.
    ///
    /// A JSON part indexed by a constant key is that member. Indexed by the iteration variable
    /// of a loop over the very same part, known to be an object, it is the value of the entry
    /// the loop is at (the entry's bytes bound it, so the loop may sum over it). Any other
    /// index — a value computed at run time, an element of a list used as an index into that
    /// list, the value of an entry used as a key — may name any member, a different one each
    /// time: a fresh member part that no loop sums over.
    ///
    /// From version 6 a list indexed by a non-negative int literal `at` gives the element at that
    /// index, a part disjoint from the elements at other literal indices. From version 7 a list
    /// indexed by the bare variable of a loop over `lists.range(n)` (`ranged`, that loop's frame
    /// in [`Walker::summing`]) gives an element that loop sums over ([`Walker::range_element`]).
    pub(super) fn index(
        &mut self,
        operand: &Shape,
        index: &Shape,
        key: Option<&str>,
        at: Option<i64>,
        ranged: Option<usize>,
    ) -> Shape {
        let mut out: Option<Shape> = None;
        for alt in operand.alternatives() {
            let s = match alt {
                Shape::List(l) => l.elem.clone(),
                Shape::Map(m) => m.val.clone(),
                Shape::Json(v) => match (key, at, ranged.filter(|&f| self.fixed_during(*v, f))) {
                    (Some(k), _, _) => Shape::Json(self.parts.key(*v, k)),
                    (None, Some(i), _) if !self.parts.part(*v).object => {
                        Shape::Json(self.parts.at(*v, i))
                    }
                    (None, None, Some(frame)) => Shape::Json(self.range_element(frame, *v)),
                    (None, _, _) => match self.entry_key(index, *v) {
                        Some(value) => Shape::Json(value),
                        None => Shape::Json(self.parts.member(*v)),
                    },
                },
                Shape::Object(obj, path) => match key {
                    Some(k) => self.select(alt, k),
                    None if &*obj.name == "event" => self.any_event_field(path),
                    None => Shape::Unknown,
                },
                Shape::Unknown => Shape::Unknown,
                _ => Shape::Scalar,
            };
            out = Some(out.map_or(s.clone(), |o| o.union(s)));
        }
        out.unwrap_or(Shape::Scalar)
    }

    /// The loop over `lists.range(n)` whose variable the index node `index` is, bare (an
    /// identifier that names it, not shadowed by an inner variable), as its frame in
    /// [`Walker::summing`] (version 7).
    pub(super) fn range_loop_of(&self, index: NodeId) -> Option<usize> {
        let ExprKind::Ident {
            name,
            rooted: false,
        } = self.ast.kind(index)
        else {
            return None;
        };
        let at = self.scopes.iter().rposition(|(n, _)| *n == &**name)?;
        self.ranges
            .iter()
            .rev()
            .find(|r| r.scopes.contains(&at))
            .map(|r| r.frame)
    }

    /// Whether the list part `list` is one list during every iteration of the loop of frame
    /// `frame`, so that the loop's distinct indices name different elements of it: a list not
    /// known to be an object, whose chain up to its budget's root holds no member reached by
    /// a key computed at run time (which may be another member at every iteration) and no
    /// element but those of loops around that loop (fixed while it runs).
    fn fixed_during(&self, list: Var, frame: usize) -> bool {
        if self.parts.part(list).object {
            return false;
        }
        let mut at = Some(list);
        while let Some(v) = at {
            let part = self.parts.part(v);
            match part.kind {
                PartKind::Member => return false,
                PartKind::Element if !self.summing[..frame].iter().any(|xs| xs.contains(&v)) => {
                    return false;
                }
                _ => {}
            }
            at = part.parent;
        }
        true
    }

    /// The element of `list` that the variable of the loop of frame `frame` names: one part per
    /// list and loop, whatever expression of the body reads it (at one iteration they all read
    /// the same element), which the loop sums over (`loops.rs`, `sum_indexed`).
    fn range_element(&mut self, frame: usize, list: Var) -> Var {
        if let Some(&y) = self.summing[frame]
            .iter()
            .find(|&&y| self.parts.part(y).parent == Some(list))
        {
            return y;
        }
        let y = self.parts.element(list);
        self.summing[frame].push(y);
        y
    }

    /// The entry an index names when the index is the key of an entry of `object`: the
    /// iteration variable of a comprehension over `object`, which is known to be an object.
    /// Gives the value's part: the entry's value (before version 6), or the value part the
    /// loop's second variable binds, which shares the entry's bytes with the key (version 6).
    fn entry_key(&mut self, index: &Shape, object: Var) -> Option<Var> {
        let Shape::Json(x) = index else {
            return None;
        };
        if !self.parts.part(object).object {
            return None;
        }
        let part = self.parts.part(*x);
        match part.kind {
            PartKind::Element if part.parent == Some(object) => Some(self.parts.entry_value(*x)),
            PartKind::Index => {
                let entry = part.parent?;
                let e = self.parts.part(entry);
                (e.parent == Some(object) && e.kind == PartKind::Element)
                    .then(|| self.parts.entry_item(entry))
            }
            _ => None,
        }
    }

    /// Names the part a value occupies, when it is one part of an event.
    pub(super) fn describe_shape(&self, shape: &Shape) -> Option<String> {
        let v = match shape {
            Shape::Json(v) => *v,
            Shape::Str { max, .. } => match max.vars().as_slice() {
                [v] => *v,
                _ => return None,
            },
            _ => return None,
        };
        let part = self.parts.part(v);
        Some(format!("{} ≤ {} bytes", part.name, units(part.cap)))
    }
}
