//! Size variables: the parts of an event whose byte sizes the estimator reasons about, and the
//! maximisation of a cost polynomial over every event within bounds.
//!
//! A *part* is a region of one event whose size in bytes is a variable: `event.text`, a header
//! field, `event.attributes`, a constant-key member below it, one element of a list or entry of
//! an object that a comprehension visits, a member reached by a key computed at run time, or the
//! value of an entry. Parts below the same `event.attributes` share its budget: disjoint parts
//! (siblings with different constant keys, and everything below them) occupy different bytes of
//! the same compact JSON text, so their sizes plus their framing add up to at most the budget.

use std::collections::HashMap;

use super::model::SizeModel;
use super::poly::{Mono, Poly, Var};
use crate::EventBounds;

/// Smallest compact-JSON element of a list: one byte (`0`), plus its comma.
const LIST_ELEMENT_BYTES: f64 = 2.0;
/// Smallest compact-JSON entry of an object: `"":0`, plus its comma.
const OBJECT_ENTRY_BYTES: f64 = 5.0;
/// Keys of one byte of compact JSON: the printable ASCII characters and DEL, less `"` and `\`.
const ONE_BYTE_KEYS: f64 = 94.0;
/// Smallest entry once keys must be two bytes long (`"ab":0` and its comma).
const DISTINCT_ENTRY_BYTES: f64 = 7.0;

/// What a part is, relative to its parent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PartKind {
    /// The root of a budget (`event.text`, a header, `event.attributes`).
    Root,
    /// The member of its parent object under a constant key.
    Key(Box<str>),
    /// The iteration variable of a comprehension over its parent: one element of a list, or
    /// the key of one entry of an object (the entry's bytes bound the key). Two elements of the
    /// same parent may be the same element.
    Element,
    /// A member of its parent reached by a key or index computed at run time
    /// (`event.attributes[event.action]`, `list[i]`): any member, possibly a different one at
    /// every evaluation, so it is never summed over.
    Member,
    /// The value of the entry its parent is (`m[k]` inside `m.exists(k, …)` when `m` is known
    /// to be an object).
    Value,
    /// The element of its parent list at a constant index (`l[0]`; cost-model version 6).
    /// Elements at two different constant indices are different elements: disjoint, each with
    /// the comma after it (or, for the last, the one before it) as its framing.
    At(i64),
    /// The key or index a loop binds for the element its parent is (cost-model version 6): the
    /// key of an entry of an object (its quoted bytes), or for a list element the index,
    /// counted as one byte. Together with the [`PartKind::Item`] of the same element it is at
    /// most the element's bytes plus one ([`Parts::split_entry`]).
    Index,
    /// The value a loop binds for the element its parent is (cost-model version 6): the value
    /// of an entry of an object, or a list's element itself.
    Item,
}

/// One region of an event whose byte size is a variable.
#[derive(Clone, Debug, PartialEq)]
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
    /// How the expression uses the value in it (for the witness builder).
    pub(crate) uses: Uses,
}

/// How an expression uses the value of a part, as far as the kind of its costliest value goes:
/// what the witness builder reads to decide whether a part should be a string, a list or an
/// object. A set of flags; it never changes a cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Uses(u8);

impl Uses {
    /// Not used by any sized operation.
    pub(crate) const NONE: Uses = Uses(0);
    /// The range of a comprehension.
    pub(crate) const ITERATED: Uses = Uses(1);
    /// An operand of a string operation (`contains`, `matches`, `startsWith`, ordering, a
    /// conversion).
    pub(crate) const STRING: Uses = Uses(2);
    /// The container of `in`.
    pub(crate) const LIST: Uses = Uses(4);
    /// An operand of `==` or `!=`, priced by its size whatever its kind.
    pub(crate) const COMPARED: Uses = Uses(8);
    /// An operand of `+` (strings, bytes or lists).
    pub(crate) const CONCATENATED: Uses = Uses(16);

    /// Whether every flag of `other` is set.
    pub(crate) fn contains(self, other: Uses) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    /// Both sets of flags.
    #[must_use]
    pub(crate) fn with(self, other: Uses) -> Uses {
        Uses(self.0 | other.0)
    }
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
    /// Whether [`Parts::maximize`] bounds the linear terms of one budget together (cost-model
    /// version 5 on) rather than each at its own maximum.
    pub(crate) share_linear: bool,
}

impl Parts {
    pub(crate) fn new(bounds: EventBounds, model: SizeModel) -> Self {
        Self {
            all: Vec::new(),
            named: HashMap::new(),
            bounds,
            model,
            share_linear: false,
        }
    }

    pub(crate) fn part(&self, v: Var) -> &Part {
        &self.all[v as usize]
    }

    /// Every part, indexed by its variable.
    pub(crate) fn all(&self) -> &[Part] {
        &self.all
    }

    /// Records that the expression uses the values of these parts so.
    pub(crate) fn note(&mut self, vars: impl IntoIterator<Item = Var>, uses: Uses) {
        for v in vars {
            if let Some(part) = self.all.get_mut(v as usize) {
                part.uses = part.uses.with(uses);
            }
        }
    }

    pub(crate) fn bounds(&self) -> EventBounds {
        self.bounds
    }

    fn find(&self, parent: Option<Var>, name: &str) -> Option<Var> {
        self.named.get(&(parent, name.to_owned())).copied()
    }

    fn push(&mut self, part: Part) -> Var {
        let v = self.all.len() as Var;
        if !matches!(part.kind, PartKind::Element | PartKind::Member) {
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
            uses: Uses::NONE,
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
            uses: Uses::NONE,
        })
    }

    /// A fresh element of `parent`, for one comprehension.
    pub(crate) fn element(&mut self, parent: Var) -> Var {
        let what = if self.part(parent).object {
            "an entry"
        } else {
            "an element"
        };
        self.child(parent, PartKind::Element, what)
    }

    /// A fresh member of `parent` under a key or index computed at run time.
    pub(crate) fn member(&mut self, parent: Var) -> Var {
        self.child(parent, PartKind::Member, "a member")
    }

    fn child(&mut self, parent: Var, kind: PartKind, what: &str) -> Var {
        let name = format!("{what} of {}", self.part(parent).name);
        let cap = (self.part(parent).cap - 2.0).max(0.0);
        self.push(Part {
            parent: Some(parent),
            kind,
            cap,
            overhead: 0.0,
            object: false,
            name,
            uses: Uses::NONE,
        })
    }

    /// The value of the entry `entry` (an element of an object).
    pub(crate) fn entry_value(&mut self, entry: Var) -> Var {
        let name = format!("the value of {}", self.part(entry).name);
        if let Some(v) = self.find(Some(entry), &name) {
            return v;
        }
        // `"key":` takes at least three bytes of the entry.
        let cap = (self.part(entry).cap - 3.0).max(0.0);
        self.push(Part {
            parent: Some(entry),
            kind: PartKind::Value,
            cap,
            overhead: 0.0,
            object: false,
            name,
            uses: Uses::NONE,
        })
    }

    /// The element of the list `parent` at the constant index `i` ([`PartKind::At`]).
    pub(crate) fn at(&mut self, parent: Var, i: i64) -> Var {
        let name = format!("{}[{i}]", self.part(parent).name);
        if let Some(v) = self.find(Some(parent), &name) {
            return v;
        }
        // A list of `b` bytes holds `[`, `]` and its elements, `k` of them separated by at
        // least `k − 1` commas: `Σ (bᵢ + 1) ≤ b − 1` over any `k` of them.
        let cap = (self.part(parent).cap - 2.0).max(0.0);
        self.push(Part {
            parent: Some(parent),
            kind: PartKind::At(i),
            cap,
            overhead: 1.0,
            object: false,
            name,
            uses: Uses::NONE,
        })
    }

    /// The key or index a loop binds for the element `x` ([`PartKind::Index`]).
    pub(crate) fn entry_index(&mut self, x: Var) -> Var {
        self.entry_side(x, PartKind::Index, "the key or index of")
    }

    /// The value a loop binds for the element `x` ([`PartKind::Item`]).
    pub(crate) fn entry_item(&mut self, x: Var) -> Var {
        self.entry_side(x, PartKind::Item, "the value or element of")
    }

    fn entry_side(&mut self, x: Var, kind: PartKind, what: &str) -> Var {
        let name = format!("{what} {}", self.part(x).name);
        if let Some(v) = self.find(Some(x), &name) {
            return v;
        }
        // Each alone is never more than the element (a key's quoted bytes and a value are
        // inside the entry's; an index is one byte of a list's element of one or more).
        let cap = self.part(x).cap;
        self.push(Part {
            parent: Some(x),
            kind,
            cap,
            overhead: 0.0,
            object: false,
            name,
            uses: Uses::NONE,
        })
    }

    /// Whether `v` is the key a loop binds for an entry of a part known to be an object (then a
    /// string, its quoted bytes at most `v`).
    pub(crate) fn is_object_key(&self, v: Var) -> bool {
        let part = self.part(v);
        part.kind == PartKind::Index
            && part
                .parent
                .and_then(|x| self.part(x).parent)
                .is_some_and(|o| self.part(o).object)
    }

    /// Bounds the terms of `p` in the key (or index) `k` and the value `v` of the element `x`
    /// (their [`PartKind::Index`] and [`PartKind::Item`] parts, and every part inside them) by
    /// terms in `x`, before a loop sums over `x` (cost-model version 6). The key's quoted bytes,
    /// a colon and the value are the entry's bytes, and a list's index counts one byte beside
    /// an element of `x` bytes, so `k + v ≤ x + 1`. Hence, per monomial `r · kᵃ · vᵇ` (`r` the
    /// other factors, `d = a + b`): `kᵃ·vᵇ ≤ aᵃ·bᵇ/dᵈ · (x + 1)ᵈ` (AM-GM, the product peaks at
    /// `k = a(x + 1)/d`), when `a` and `b` are both positive; one side alone is at most `x`
    /// (`kᵈ ≤ xᵈ`); and the terms of degree one with the same `r` together:
    /// `c·k + c'·v ≤ min((c + c')·x, max(c, c')·(x + 1))`, the one of the two smaller over a loop. The result has non-negative coefficients, so the
    /// comprehension rule applies to it as to any polynomial in `x`.
    pub(crate) fn split_entry(&self, p: &Poly, x: Var) -> Poly {
        let side = |mut v: Var| -> Option<bool> {
            loop {
                let part = self.part(v);
                match part.parent {
                    Some(parent) if parent == x => {
                        return match part.kind {
                            PartKind::Index => Some(true),
                            PartKind::Item => Some(false),
                            _ => None,
                        };
                    }
                    Some(parent) => v = parent,
                    None => return None,
                }
            }
        };
        let mut out = Poly::zero();
        // Per other factor `r`, the coefficients of `r·k` and `r·v`.
        let mut linear: Vec<(Mono, f64, f64)> = Vec::new();
        let mut touched = false;
        for (mono, c) in p.terms() {
            let (mut key_deg, mut value_deg) = (0u32, 0u32);
            let mut rest = Poly::constant(1.0);
            for &(v, e) in mono {
                match side(v) {
                    Some(true) => key_deg += e,
                    Some(false) => value_deg += e,
                    None => {
                        for _ in 0..e {
                            rest = rest.mul(&Poly::var(v, 1.0));
                        }
                    }
                }
            }
            let degree = key_deg + value_deg;
            if degree == 0 {
                out = out.add(&Poly::constant(*c).mul(&rest));
                continue;
            }
            touched = true;
            if key_deg == 0 || value_deg == 0 {
                // One side alone is at most the element: `kᵈ ≤ xᵈ`, `vᵈ ≤ xᵈ`.
                let mut term = rest.scale(*c);
                for _ in 0..degree {
                    term = term.mul(&Poly::var(x, 1.0));
                }
                if degree == 1 {
                    let rest_mono = rest.terms()[0].0.clone();
                    let (on_key, on_value) = if key_deg == 1 { (*c, 0.0) } else { (0.0, *c) };
                    match linear.iter_mut().find(|(m, _, _)| *m == rest_mono) {
                        Some((_, ck, cv)) => {
                            *ck += on_key;
                            *cv += on_value;
                        }
                        None => linear.push((rest_mono, on_key, on_value)),
                    }
                } else {
                    out = out.add(&term);
                }
                continue;
            }
            let (fa, fb, fd) = (f64::from(key_deg), f64::from(value_deg), f64::from(degree));
            let share = fa.powf(fa) * fb.powf(fb) / fd.powf(fd);
            let mut term = rest.scale(c * share);
            for _ in 0..degree {
                term = term.mul(&Poly::var(x, 1.0).add_const(1.0));
            }
            out = out.add(&term);
        }
        if !touched {
            return p.clone();
        }
        // `c·k + c'·v` is at most `(c + c')·x` (each side alone) and at most `max(c, c')·(x + 1)`
        // (both together); the second is the smaller in a loop when the least of the two
        // coefficients, over every element, outweighs the largest once per element.
        let (cap, most) = match self.part(x).parent {
            Some(parent) => (self.part(x).cap, self.maximize(&self.count(parent))),
            None => (self.part(x).cap, 1.0),
        };
        for (mono, ck, cv) in linear {
            let mut rest = Poly::constant(1.0);
            for (v, e) in mono {
                for _ in 0..e {
                    rest = rest.mul(&Poly::var(v, 1.0));
                }
            }
            let (hi, lo) = (ck.max(cv), ck.min(cv));
            let together = hi * (cap + most) < (hi + lo) * cap;
            let bound = if together {
                Poly::var(x, hi).add_const(hi)
            } else {
                Poly::var(x, hi + lo)
            };
            out = out.add(&rest.mul(&bound));
        }
        out
    }

    /// The part that stands to `to` as `v` stands to `from` (`v` is `from` or inside it): the
    /// same chain of keys, values and members below another element. Fresh parts stay fresh.
    pub(crate) fn rebase(&mut self, v: Var, from: Var, to: Var) -> Var {
        let path = self.path(v);
        let Some(start) = path.iter().position(|&p| p == from) else {
            return v;
        };
        let mut at = to;
        for &step in &path[start + 1..] {
            at = match self.part(step).kind.clone() {
                PartKind::Key(k) => self.key(at, &k),
                PartKind::Value => self.entry_value(at),
                PartKind::Element => self.element(at),
                PartKind::At(i) => self.at(at, i),
                PartKind::Index => self.entry_index(at),
                PartKind::Item => self.entry_item(at),
                PartKind::Member | PartKind::Root => self.member(at),
            };
        }
        at
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
        match (&self.part(pa[common]).kind, &self.part(pb[common]).kind) {
            (PartKind::Key(_), PartKind::Key(_)) => true,
            (PartKind::At(i), PartKind::At(j)) => i != j,
            _ => false,
        }
    }

    /// Upper bound on the number of elements (or entries) of part `v`.
    ///
    /// A list of `b` bytes has at most `(b − 1)/2` elements. An object's entries have distinct
    /// keys: at most one is empty and at most [`ONE_BYTE_KEYS`] are one byte long, so `n`
    /// entries take at least `5n + (n − 1)` bytes for `n ≤ 95` and `5n + 2n − 96 + 1` beyond;
    /// both give `n ≤ (b + 95)/7`, which beats `b/5` once `b > 237`. Either is a bound for
    /// every size, so the one smaller at the part's cap is used.
    pub(crate) fn count(&self, v: Var) -> Poly {
        let part = self.part(v);
        if !part.object {
            return Poly::var(v, 1.0 / LIST_ELEMENT_BYTES);
        }
        let distinct = (ONE_BYTE_KEYS + 1.0) / DISTINCT_ENTRY_BYTES;
        if part.cap / DISTINCT_ENTRY_BYTES + distinct < part.cap / OBJECT_ENTRY_BYTES {
            Poly::var(v, 1.0 / DISTINCT_ENTRY_BYTES).add_const(distinct)
        } else {
            Poly::var(v, 1.0 / OBJECT_ENTRY_BYTES)
        }
    }

    /// The greatest value of `p` over every event within bounds.
    ///
    /// Every monomial is maximised on its own (the maximum of a sum is at most the sum of the
    /// maxima), except that, from cost-model version 5 on, the terms of degree one are bounded
    /// together per budget ([`Parts::maximize_linear`]).
    pub(crate) fn maximize(&self, p: &Poly) -> f64 {
        let mut total = 0.0;
        let mut linear = Vec::new();
        for (mono, c) in p.terms() {
            match mono.as_slice() {
                [(v, 1)] if self.share_linear && self.model == SizeModel::Shared => {
                    linear.push((*v, *c));
                }
                _ => total += c * self.maximize_mono(mono),
            }
        }
        total + self.maximize_linear(&linear)
    }

    /// The greatest value of `Σ cᵢ·bᵢ` (every `cᵢ ≥ 0`). The variables are put in clusters of
    /// one budget whose members are pairwise disjoint, so a cluster's sizes add up to at most
    /// what is left of the budget after the framing of the one member that must be present for
    /// the sum to be above zero (the least framing: an absent member frees its own), and each
    /// `bᵢ` is at most its cap. Over that polytope the
    /// linear sum peaks where the budget goes to the largest coefficients first, each variable
    /// up to its cap (the fractional knapsack, exact for a linear objective); the sum of the
    /// clusters' peaks bounds the whole. Without this, `a + b + … + t` of twenty members priced
    /// every member at the whole budget, twenty times what one event can hold.
    fn maximize_linear(&self, terms: &[(Var, f64)]) -> f64 {
        let mut clusters: Vec<(Var, Vec<(Var, f64)>)> = Vec::new();
        for &(v, c) in terms {
            let root = self.budget_root(v);
            let home = clusters.iter_mut().find(|(r, members)| {
                *r == root && members.iter().all(|&(m, _)| self.disjoint(m, v))
            });
            match home {
                Some((_, members)) => members.push((v, c)),
                None => clusters.push((root, vec![(v, c)])),
            }
        }
        clusters
            .iter_mut()
            .map(|(root, members)| {
                let each: f64 = members.iter().map(|&(v, c)| c * self.part(v).cap).sum();
                if members.len() == 1 {
                    return each;
                }
                // A member may be absent (size 0, and no framing either), which leaves its
                // framing to the others: only the least framing of one present member is
                // certain. (A product, in `maximize_group`, is zero unless every member is
                // present, so there every framing counts.)
                let framing = members
                    .iter()
                    .map(|&(v, _)| self.part(v).overhead)
                    .fold(f64::INFINITY, f64::min);
                let mut budget = (self.part(*root).cap - 2.0 - framing).max(0.0);
                members.sort_by(|a, b| b.1.total_cmp(&a.1));
                let mut shared = 0.0;
                for &(v, c) in members.iter() {
                    let take = self.part(v).cap.min(budget);
                    shared += c * take;
                    budget -= take;
                    if budget <= 0.0 {
                        break;
                    }
                }
                shared.min(each)
            })
            .sum()
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

    /// The term of `p` with the largest maximum (its monomial), if any term has a variable.
    pub(crate) fn dominant_term(&self, p: &Poly) -> Option<Mono> {
        p.terms()
            .iter()
            .filter(|(m, _)| !m.is_empty())
            .max_by(|(a, ca), (b, cb)| {
                (ca * self.maximize_mono(a)).total_cmp(&(cb * self.maximize_mono(b)))
            })
            .map(|(m, _)| m.clone())
    }

    /// Says which sizes the largest term of `p` peaks at, for explanations.
    pub(crate) fn describe_worst_case(&self, p: &Poly) -> String {
        let Some(mono) = self.dominant_term(p) else {
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
