//! The type-directed filter generator: expressions of a wanted type built from the checker's own
//! overload tables (`check::functions::catalogue`), so every overload of every function and
//! operator is generated, including the ones added after this was written. `dyn` values (the
//! attributes, `dyn(…)`, iteration variables over them) stand in for any type now and then, so
//! the evaluator meets every kind at run time where the checker saw `dyn`.
//!
//! A [`Focus`] makes one case contain one given overload or one given shape (a loop over the
//! event, a list indexed by its own elements, a computed key, equality across kinds, …), which is
//! how a run of `n` cases covers the whole catalogue deterministically.
//!
//! Extending: a new parameter or result pattern (`P`) fails to compile in [`Gen::param`] and
//! [`result_binding`] until it is handled; a new shape is a variant of [`Shape`] and an arm
//! of [`Gen::shape`].

use super::{KEYS, Rng};
use crate::check::functions::{Entry, P, catalogue};
use crate::types::Type;

/// What one generated filter must contain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    /// The `i`-th entry of the overload catalogue.
    Overload(usize),
    /// One of the shapes that break estimators.
    Shape(Shape),
    /// Nothing in particular.
    Free,
}

/// Shapes that a generator written for realistic filters never makes, each the root of a class
/// of unsound estimates found before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A comprehension over `event` itself (seven fields).
    LoopOverEvent,
    /// A comprehension over a map nested in the attributes, with an inner loop.
    LoopOverNested,
    /// A list indexed by its own elements inside a loop over it.
    IndexByElement,
    /// A member under a key computed at run time (a header, another attribute).
    ComputedKey,
    /// The value of an entry used as a key of the same map (`m[m[k]]`).
    ValueAsKey,
    /// `==` between values of different static kinds under `dyn`.
    CrossKindEquality,
    /// `in` over lists and maps, built and from the event.
    Membership,
    /// Macros nested over lists that other macros built.
    NestedOverBuilt,
    /// Conversions of event values (`string`, `bytes`, `int`, …).
    Conversion,
    /// A message literal (the checker refuses it: there are no message types).
    Message,
    /// A loop over `lists.range(n)` that indexes event lists by its variable (cost-model
    /// version 7 sums those elements over their list), and by other indices beside it.
    RangeIndex,
    /// A `filter` over the parts of a split whose predicate needs parts of a least size (cost-
    /// model version 8 counts only the parts it can keep), chained with what iterates the
    /// kept parts.
    KeptParts,
    /// A loop that stops at its body's first error (`map`, `filter`, `exists_one`, `sortBy`)
    /// over a JSON list, whose body selects fields of the element or calls a member function
    /// on it (cost-model version 9 counts only the elements the body can run on), chained with
    /// what iterates its result.
    NeededBytes,
    /// A loop over a JSON list whose body reads nothing but its variable and works on numbers
    /// and strings or lists alike (`x + x`), or a `map` that keeps numbers numbers chained
    /// with a loop over its result (cost-model version 10 prices numbers and the rest apart).
    ScalarSplit,
}

/// Every shape, in the order a run cycles through them.
pub const SHAPES: [Shape; 14] = [
    Shape::LoopOverEvent,
    Shape::LoopOverNested,
    Shape::IndexByElement,
    Shape::ComputedKey,
    Shape::ValueAsKey,
    Shape::CrossKindEquality,
    Shape::Membership,
    Shape::NestedOverBuilt,
    Shape::Conversion,
    Shape::Message,
    Shape::RangeIndex,
    Shape::KeptParts,
    Shape::NeededBytes,
    Shape::ScalarSplit,
];

/// How many times each shape comes in one cycle of foci.
const SHAPE_REPEATS: u64 = 6;

/// The focus of case `i` of a run: every overload, then every shape (several times: they are
/// where estimators break), then free cases, and around again.
pub fn focus(i: u64) -> Focus {
    let overloads = catalogue().len() as u64;
    let shapes = SHAPES.len() as u64 * SHAPE_REPEATS;
    let cycle = overloads + shapes + 16;
    match i % cycle {
        j if j < overloads => Focus::Overload(j as usize),
        j if j < overloads + shapes => {
            Focus::Shape(SHAPES[((j - overloads) % SHAPES.len() as u64) as usize])
        }
        _ => Focus::Free,
    }
}

const STRINGS: &[&str] = &[
    "''", "'a'", "'ab'", "'ñ'", "'LGTM'", "'0'", "'k'", "'labels'",
];
const PATTERNS: &[&str] = &[
    "'^fix'",
    "'a+b'",
    "'.*x.*'",
    "'[0-9]+$'",
    "'(a|ñ)*0'",
    "'^$'",
];
const HEADERS: &[&str] = &[
    "event.id",
    "event.source",
    "event.type",
    "event.action",
    "event.subject",
];

/// The generator of one filter.
pub struct Gen<'r> {
    rng: &'r mut Rng,
    entries: Vec<Entry>,
    scopes: Vec<(String, Type)>,
    next_var: u32,
    /// The arguments of the call being generated must have exactly their parameter types.
    strict: bool,
}

impl<'r> Gen<'r> {
    /// A generator drawing from `rng`.
    pub fn new(rng: &'r mut Rng) -> Self {
        Gen {
            rng,
            entries: catalogue(),
            scopes: Vec::new(),
            next_var: 0,
            strict: false,
        }
    }

    /// A filter (a bool expression) that contains `focus`, nested about `depth` levels.
    pub fn filter(&mut self, focus: Focus, depth: u32) -> String {
        let core = match focus {
            Focus::Overload(i) => {
                let entry = self.entries[i % self.entries.len()];
                let ty = self.result_type(&entry);
                // The focused call's own arguments have exactly the parameter types, so the
                // overload is selected without help from `dyn`.
                self.strict = true;
                let call = self
                    .call(&entry, &ty, depth)
                    .unwrap_or_else(|| self.expr(&Type::Bool, depth));
                self.strict = false;
                self.as_bool(call, &ty, depth)
            }
            Focus::Shape(shape) => self.shape(shape, depth),
            Focus::Free => self.expr(&Type::Bool, depth),
        };
        match self.rng.below(4) {
            0 => format!(
                "{core} && {}",
                self.expr(&Type::Bool, depth.saturating_sub(1))
            ),
            1 => format!(
                "{} || {core}",
                self.expr(&Type::Bool, depth.saturating_sub(1))
            ),
            _ => core,
        }
    }

    /// Turns an expression of type `ty` into a bool.
    fn as_bool(&mut self, expr: String, ty: &Type, depth: u32) -> String {
        if *ty == Type::Bool {
            return expr;
        }
        let other = self.expr(ty, depth.saturating_sub(1));
        let op = self.rng.pick(&["==", "!="]);
        format!("({expr}) {op} ({other})")
    }

    /// An expression of type `ty` (or of `dyn`, which the checker accepts anywhere).
    pub fn expr(&mut self, ty: &Type, depth: u32) -> String {
        if depth == 0 || self.rng.chance(25) {
            return self.leaf(ty);
        }
        match self.rng.below(12) {
            0..=4 => {
                let entry = self.pick_entry(ty);
                match entry {
                    Some(e) => self
                        .call(&e, ty, depth - 1)
                        .unwrap_or_else(|| self.leaf(ty)),
                    None => self.leaf(ty),
                }
            }
            5 => format!(
                "({}) ? ({}) : ({})",
                self.expr(&Type::Bool, depth - 1),
                self.expr(ty, depth - 1),
                self.expr(ty, depth - 1)
            ),
            6 | 7 => self.comprehension(ty, depth - 1),
            8 => self.index_of(ty, depth - 1),
            9 => self.dyn_value(depth - 1),
            _ => self.leaf(ty),
        }
    }

    /// A random entry of the catalogue whose result can be `ty`.
    fn pick_entry(&mut self, ty: &Type) -> Option<Entry> {
        let fits: Vec<Entry> = self
            .entries
            .iter()
            .copied()
            .filter(|e| result_binding(e.overload.result, ty).is_some())
            .collect();
        if fits.is_empty() {
            return None;
        }
        Some(fits[self.rng.below(fits.len() as u64) as usize])
    }

    /// A result type that `entry` can produce.
    fn result_type(&mut self, entry: &Entry) -> Type {
        match entry.overload.result {
            P::Bool => Type::Bool,
            P::Int => Type::Int,
            P::Uint => Type::Uint,
            P::Double => Type::Double,
            P::String => Type::String,
            P::Bytes => Type::Bytes,
            P::Timestamp => Type::Timestamp,
            P::Duration => Type::Duration,
            P::TypeOfA => Type::Type(None),
            P::Dyn => Type::Dyn,
            P::ListA => Type::list(self.random_type(1)),
            P::ListOrdA | P::ListInt => Type::list(Type::Int),
            P::ListListA => Type::list(Type::list(self.random_type(1))),
            P::ListDyn => Type::list(Type::Dyn),
            P::ListString => Type::list(Type::String),
            P::OptA => Type::optional(self.random_type(1)),
            P::ListOptA => Type::list(Type::optional(self.random_type(1))),
            P::MapKv => Type::map(Type::String, self.random_type(1)),
            P::A | P::K | P::V => self.random_type(1),
        }
    }

    /// A call of `entry` whose result is `ty`, in the operator's or function's own syntax.
    fn call(&mut self, entry: &Entry, ty: &Type, depth: u32) -> Option<String> {
        let mut binding = result_binding(entry.overload.result, ty)?;
        if binding.a.is_none() {
            binding.a = Some(self.random_type(1));
        }
        if binding.k.is_none() {
            binding.k = Some(self.key_type());
        }
        if binding.v.is_none() {
            binding.v = Some(self.random_type(1));
        }
        let args: Vec<String> = entry
            .overload
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| self.param(entry, i, *p, &binding, depth))
            .collect();
        Some(syntax(entry, &args))
    }

    /// An argument for parameter `p` (the `i`-th) of `entry`.
    fn param(&mut self, entry: &Entry, i: usize, p: P, b: &Binding, depth: u32) -> String {
        // Patterns of `matches` are mostly constants (an invalid constant is a check-time
        // error); the rest come from the event.
        if entry.name == "matches" && i == 1 && self.rng.chance(80) {
            return self.rng.pick(PATTERNS).to_owned();
        }
        let ty = match p {
            P::Bool => Type::Bool,
            P::Int => Type::Int,
            P::Uint => Type::Uint,
            P::Double => Type::Double,
            P::String => Type::String,
            P::Bytes => Type::Bytes,
            P::Timestamp => Type::Timestamp,
            P::Duration => Type::Duration,
            P::A | P::Dyn | P::TypeOfA => b.a.clone().unwrap_or(Type::Dyn),
            P::ListA | P::ListOrdA => Type::list(b.a.clone().unwrap_or(Type::Dyn)),
            P::ListListA => Type::list(Type::list(b.a.clone().unwrap_or(Type::Dyn))),
            P::ListDyn => Type::list(Type::Dyn),
            P::ListString => Type::list(Type::String),
            P::ListInt => Type::list(Type::Int),
            P::OptA => Type::optional(b.a.clone().unwrap_or(Type::Dyn)),
            P::ListOptA => Type::list(Type::optional(b.a.clone().unwrap_or(Type::Dyn))),
            P::MapKv => Type::map(
                b.k.clone().unwrap_or(Type::String),
                b.v.clone().unwrap_or(Type::Dyn),
            ),
            P::K => b.k.clone().unwrap_or(Type::String),
            P::V => b.v.clone().unwrap_or(Type::Dyn),
        };
        match (entry.name, &ty) {
            ("timestamp", Type::String) if self.rng.chance(70) => {
                "'2024-05-06T07:08:09Z'".to_owned()
            }
            ("duration", Type::String) if self.rng.chance(70) => {
                self.rng.pick(&["'1h'", "'-90s'", "'1.5ms'"]).to_owned()
            }
            (name, Type::String) if name.starts_with("get") && self.rng.chance(70) => self
                .rng
                .pick(&["'UTC'", "'Europe/Paris'", "'-05:00'"])
                .to_owned(),
            _ if self.strict => self.strict_expr(&ty, depth),
            _ => self.expr(&ty, depth),
        }
    }

    /// An expression of exactly type `ty`: a leaf that is not `dyn`, or a call whose result
    /// pattern is that concrete type.
    fn strict_expr(&mut self, ty: &Type, depth: u32) -> String {
        self.strict = false;
        let concrete: Vec<Entry> = self
            .entries
            .iter()
            .copied()
            .filter(|e| !matches!(e.overload.result, P::Dyn | P::A | P::K | P::V))
            .filter(|e| result_binding(e.overload.result, ty).is_some())
            .collect();
        let text = if depth > 0 && !concrete.is_empty() && self.rng.chance(40) {
            let e = concrete[self.rng.below(concrete.len() as u64) as usize];
            self.call(&e, ty, depth - 1)
        } else {
            None
        };
        let text = text.unwrap_or_else(|| self.typed_leaf(ty));
        self.strict = true;
        text
    }

    /// A leaf of exactly type `ty` (no `dyn` stand-in).
    fn typed_leaf(&mut self, ty: &Type) -> String {
        match ty {
            Type::List(elem) => match self.rng.below(2) {
                0 => format!("[{}]", self.typed_leaf(elem)),
                _ => format!("[{}, {}]", self.typed_leaf(elem), self.typed_leaf(elem)),
            },
            Type::Map(k, v) => format!("{{{}: {}}}", self.typed_leaf(k), self.typed_leaf(v)),
            Type::Dyn | Type::Param(_) | Type::Error => self.dyn_leaf(),
            _ => {
                let scopes = std::mem::take(&mut self.scopes);
                let text = self.leaf(ty);
                self.scopes = scopes;
                text
            }
        }
    }

    /// A leaf of type `ty`: a literal, an event field, or an iteration variable in scope.
    fn leaf(&mut self, ty: &Type) -> String {
        let vars: Vec<String> = self
            .scopes
            .iter()
            .filter(|(_, t)| t == ty || *t == Type::Dyn)
            .map(|(n, _)| n.clone())
            .collect();
        if !vars.is_empty() && self.rng.chance(45) {
            return vars[self.rng.below(vars.len() as u64) as usize].clone();
        }
        match ty {
            Type::Bool => match self.rng.below(3) {
                0 => format!("has(event.attributes.{})", self.rng.pick(KEYS)),
                1 => "true".to_owned(),
                _ => "false".to_owned(),
            },
            Type::Int => match self.rng.below(3) {
                0 => "size(event.text)".to_owned(),
                _ => self.rng.pick(&["0", "1", "-3", "42", "7"]).to_owned(),
            },
            Type::Uint => self
                .rng
                .pick(&["0u", "3u", "18446744073709551615u"])
                .to_owned(),
            Type::Double => self.rng.pick(&["0.5", "-1.25", "1e3", "2.0"]).to_owned(),
            Type::String => match self.rng.below(4) {
                0 => "event.text".to_owned(),
                1 => self.rng.pick(HEADERS).to_owned(),
                _ => self.rng.pick(STRINGS).to_owned(),
            },
            Type::Bytes => self.rng.pick(&["b''", "b'ab'", "b'\\xff'"]).to_owned(),
            Type::Timestamp => self
                .rng
                .pick(&["timestamp('2024-01-01T00:00:00Z')", "timestamp(0)"])
                .to_owned(),
            Type::Duration => self
                .rng
                .pick(&["duration('1h')", "duration('-90s')"])
                .to_owned(),
            Type::Null => "null".to_owned(),
            Type::Type(_) => self
                .rng
                .pick(&["int", "string", "type(1)", "list"])
                .to_owned(),
            Type::List(elem) => match self.rng.below(3) {
                0 => "[]".to_owned(),
                1 => format!("event.attributes.{}", self.rng.pick(KEYS)),
                _ => format!("[{}, {}]", self.leaf(elem), self.leaf(elem)),
            },
            Type::Map(k, v) => match self.rng.below(3) {
                0 if **k == Type::String => "event.attributes".to_owned(),
                1 => "{}".to_owned(),
                _ => format!("{{{}: {}}}", self.leaf(k), self.leaf(v)),
            },
            Type::Object(_) => "event".to_owned(),
            // The standard library makes no optionals (the catalogue leaves the extension
            // libraries out), so none is asked for; `dyn` keeps the case well-typed if one is.
            Type::Optional(_) | Type::Dyn | Type::Param(_) | Type::Error => self.dyn_leaf(),
        }
    }

    /// A leaf of type `dyn`: an attribute, a nested attribute, a computed key.
    fn dyn_leaf(&mut self) -> String {
        match self.rng.below(5) {
            0 => format!(
                "event.attributes.{}.{}",
                self.rng.pick(KEYS),
                self.rng.pick(KEYS)
            ),
            1 => format!("event.attributes[{}]", self.rng.pick(HEADERS)),
            2 => format!("dyn({})", self.rng.pick(STRINGS)),
            _ => format!("event.attributes.{}", self.rng.pick(KEYS)),
        }
    }

    /// An expression of type `dyn` built from any other type.
    fn dyn_value(&mut self, depth: u32) -> String {
        if self.rng.chance(50) {
            return self.dyn_leaf();
        }
        let ty = self.random_type(1);
        format!("dyn({})", self.expr(&ty, depth))
    }

    /// `l[i]`, `m[k]` or an attribute under a computed key, of type `ty`.
    fn index_of(&mut self, ty: &Type, depth: u32) -> String {
        match self.rng.below(3) {
            0 => format!(
                "{}[{}]",
                self.expr(&Type::list(ty.clone()), depth),
                self.expr(&Type::Int, depth)
            ),
            1 => {
                let k = self.key_type();
                format!(
                    "{}[{}]",
                    self.expr(&Type::map(k.clone(), ty.clone()), depth),
                    self.expr(&k, depth)
                )
            }
            _ => format!("event.attributes[{}]", self.expr(&Type::String, depth)),
        }
    }

    /// A comprehension of type `ty`: a quantifier for bools, `map` or `filter` for lists, else
    /// a leaf.
    fn comprehension(&mut self, ty: &Type, depth: u32) -> String {
        let (range, var_ty) = self.range(depth);
        match ty {
            // A two-variable quantifier over a JSON value of the event: the key (or index) and
            // the value of each entry, which share the entry's bytes (cost-model version 6).
            Type::Bool
                if (matches!(var_ty, Type::Dyn) || range == "event.attributes")
                    && self.rng.below(3) == 0 =>
            {
                let kind = self.rng.pick(&["all", "exists"]);
                let mut value = String::new();
                let (key, body) = self.scoped(var_ty, |g| {
                    let (v, body) = g.scoped(Type::Dyn, |g| g.expr(&Type::Bool, depth));
                    value = v;
                    body
                });
                format!("{range}.{kind}({key}, {value}, {body})")
            }
            Type::Bool => {
                let kind = self.rng.pick(&["all", "exists", "exists_one"]);
                let (var, body) = self.scoped(var_ty, |g| g.expr(&Type::Bool, depth));
                format!("{range}.{kind}({var}, {body})")
            }
            Type::List(elem) => {
                let elem = (**elem).clone();
                match self.rng.below(3) {
                    0 => {
                        let (var, body) = self.scoped(var_ty, |g| g.expr(&elem, depth));
                        format!("{range}.map({var}, {body})")
                    }
                    1 => {
                        let (var, body) = self.scoped(var_ty, |g| {
                            let p = g.expr(&Type::Bool, depth);
                            let t = g.expr(&elem, depth);
                            format!("{p}, {t}")
                        });
                        format!("{range}.map({var}, {body})")
                    }
                    _ => {
                        let (var, body) = self.scoped(var_ty, |g| g.expr(&Type::Bool, depth));
                        format!("{range}.filter({var}, {body})")
                    }
                }
            }
            _ => self.leaf(ty),
        }
    }

    /// Something to iterate and the type of its iteration variable.
    fn range(&mut self, depth: u32) -> (String, Type) {
        match self.rng.below(7) {
            0 => ("event".to_owned(), Type::String),
            1 => ("event.attributes".to_owned(), Type::String),
            2 => {
                let elem = self.random_type(0);
                (self.expr(&Type::list(elem.clone()), depth), elem)
            }
            3 => {
                let k = self.key_type();
                let v = self.random_type(0);
                (self.expr(&Type::map(k.clone(), v), depth), k)
            }
            _ => (self.dyn_leaf(), Type::Dyn),
        }
    }

    /// Runs `body` with a fresh iteration variable of type `ty` in scope.
    fn scoped(&mut self, ty: Type, body: impl FnOnce(&mut Self) -> String) -> (String, String) {
        let var = format!("v{}", self.next_var);
        self.next_var += 1;
        self.scopes.push((var.clone(), ty));
        let text = body(self);
        self.scopes.pop();
        (var, text)
    }

    /// A random type, nested at most `depth` levels.
    fn random_type(&mut self, depth: u32) -> Type {
        match self.rng.below(if depth == 0 { 11 } else { 14 }) {
            10 => Type::Null,
            0 => Type::Bool,
            1 => Type::Int,
            2 => Type::Uint,
            3 => Type::Double,
            4 | 5 => Type::String,
            6 => Type::Bytes,
            7 => Type::Timestamp,
            8 => Type::Duration,
            9 => Type::Dyn,
            11 | 12 => Type::list(self.random_type(depth - 1)),
            _ => Type::map(self.key_type(), self.random_type(depth - 1)),
        }
    }

    fn key_type(&mut self) -> Type {
        match self.rng.below(5) {
            0 => Type::Int,
            1 => Type::Bool,
            2 => Type::Uint,
            _ => Type::String,
        }
    }

    /// A filter built around one of the shapes.
    // The generated CEL's own variable names (`x`, `k`, `v`…) are mirrored by the bindings.
    #[allow(clippy::many_single_char_names)]
    fn shape(&mut self, shape: Shape, depth: u32) -> String {
        let key = self.rng.pick(KEYS);
        let d = depth.saturating_sub(1);
        match shape {
            Shape::LoopOverEvent => {
                let kind = self.rng.pick(&["exists", "all", "exists_one"]);
                let (var, body) = self.scoped(Type::String, |g| {
                    let v = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                    match g.rng.below(3) {
                        0 => format!("event[{v}] == {}", g.dyn_value(d)),
                        1 => format!("{v}.size() > 3 && {}", g.expr(&Type::Bool, d)),
                        _ => g.expr(&Type::Bool, d),
                    }
                });
                format!("event.{kind}({var}, {body})")
            }
            Shape::LoopOverNested => {
                let (x, body) = self.scoped(Type::Dyn, |g| {
                    let x = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                    let (y, inner) = g.scoped(Type::Dyn, |g| g.expr(&Type::Bool, d));
                    match g.rng.below(2) {
                        0 => format!("{x}.exists({y}, {inner})"),
                        _ => format!("event.attributes.{key}[{x}].all({y}, {inner})"),
                    }
                });
                format!("event.attributes.{key}.exists({x}, {body})")
            }
            Shape::IndexByElement => {
                let (i, body) = self.scoped(Type::Dyn, |g| {
                    let i = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                    let probe = g
                        .rng
                        .pick(&["contains('x')", "size() > 1", "startsWith('a')"]);
                    format!("event.attributes.{key}[{i}].{probe}")
                });
                format!("event.attributes.{key}.exists({i}, {body})")
            }
            Shape::ComputedKey => {
                let k = if self.rng.chance(70) {
                    self.rng.pick(HEADERS).to_owned()
                } else {
                    self.expr(&Type::String, d)
                };
                let use_ = self.rng.pick(&[
                    "event.text in ATTR",
                    "ATTR.exists(z, z == 1)",
                    "ATTR.contains('a')",
                    "size(ATTR) > 2",
                    "ATTR == event.text",
                ]);
                use_.replace("ATTR", &format!("event.attributes[{k}]"))
            }
            Shape::ValueAsKey => {
                let (k, body) = self.scoped(Type::String, |g| {
                    let k = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                    format!("event.attributes[event.attributes[{k}]].contains('x')")
                });
                format!("event.attributes.exists({k}, {body})")
            }
            Shape::CrossKindEquality => {
                // Operands of different kinds whose sizes the meter reads: strings, bytes,
                // lists and maps, from the event and built.
                let pools: [&[&str]; 4] = [
                    &[
                        "event.text",
                        "event.subject",
                        "event.text + event.text",
                        "string(event.attributes.K)",
                    ],
                    &["bytes(event.text)", "b'ab'"],
                    &[
                        "event.attributes.K.map(w, w)",
                        "event.attributes.K.filter(w, true)",
                        "[event.text, event.text]",
                        "event.attributes.K",
                    ],
                    &["event.attributes", "{'a': event.text}"],
                ];
                // Strings against lists most often: the pair a kind-by-kind price misses.
                let (i, j) = match self.rng.below(4) {
                    0 | 1 => (0, 2),
                    _ => {
                        let i = self.rng.below(4) as usize;
                        (i, (i + 1 + self.rng.below(3) as usize) % 4)
                    }
                };
                // Half the time the loop and the list share their attribute, so both are large.
                let same = self.rng.chance(50);
                let pick = |g: &mut Self, pool: &[&str]| {
                    let k = if same { key } else { g.rng.pick(KEYS) };
                    pool[g.rng.below(pool.len() as u64) as usize].replace('K', k)
                };
                let (a, b) = (pick(self, pools[i]), pick(self, pools[j]));
                let op = self.rng.pick(&["==", "!="]);
                match self.rng.below(3) {
                    // Built once, compared at every iteration.
                    0 => {
                        let (l, body) = self.scoped(Type::Dyn, |g| {
                            let l = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                            let (v, inner) = g.scoped(Type::Dyn, |_| format!("dyn({a}) {op} {l}"));
                            format!("event.attributes.{key}.exists({v}, {inner})")
                        });
                        format!("[{b}].exists({l}, {body})")
                    }
                    1 => {
                        let (v, body) =
                            self.scoped(Type::Dyn, |_| format!("dyn({a}) {op} dyn({b})"));
                        format!("event.attributes.{key}.exists({v}, {body})")
                    }
                    _ => format!("dyn({a}) {op} dyn({b})"),
                }
            }
            Shape::Membership => {
                let t = self.random_type(1);
                match self.rng.below(3) {
                    0 => format!(
                        "{} in {}",
                        self.expr(&t, d),
                        self.expr(&Type::list(t.clone()), d)
                    ),
                    1 => format!("{} in event.attributes", self.expr(&Type::String, d)),
                    _ => format!("{} in event.attributes.{key}", self.expr(&t, d)),
                }
            }
            Shape::NestedOverBuilt => {
                let built = self.comprehension(&Type::list(Type::Dyn), d);
                let (x, body) = self.scoped(Type::Dyn, |g| {
                    let inner = g.comprehension(&Type::list(Type::String), d.saturating_sub(1));
                    let (y, p) = g.scoped(Type::String, |g| g.expr(&Type::Bool, 0));
                    format!("{inner}.exists({y}, {p})")
                });
                format!("{built}.all({x}, {body})")
            }
            Shape::Conversion => {
                let f = self
                    .rng
                    .pick(&["string", "bytes", "int", "uint", "double", "bool"]);
                let x = self.dyn_value(d);
                format!("{f}({x}) == {f}({})", self.dyn_leaf())
            }
            Shape::Message => format!("Msg{{f: {}}} == Msg{{}}", self.leaf(&Type::Int)),
            Shape::KeptParts => {
                let text = match self.rng.below(4) {
                    0 => "event.subject".to_owned(),
                    1 => format!("event.attributes.{key}"),
                    _ => "event.text".to_owned(),
                };
                let sep = self
                    .rng
                    .pick(&["' '", "','", "', '", "''", "'ab'", "event.action"]);
                let limit = if self.rng.chance(15) { ", 4" } else { "" };
                let (w, pred) = self.scoped(Type::String, |g| {
                    let w = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                    let one = |g: &mut Self| match g.rng.below(10) {
                        0 => format!("{w}.startsWith('#')"),
                        1 => format!("{w}.endsWith('ab')"),
                        2 => format!("{w}.contains('é')"),
                        3 => format!("{w} == 'abc'"),
                        4 => format!("{w} != ''"),
                        5 => format!("{w}.size() > {}", g.rng.pick(&["0", "1", "3", "-1"])),
                        6 => format!("size({w}) >= 2"),
                        7 => format!("!{w}.startsWith('a')"),
                        8 => format!("{w}.matches('^a+$')"),
                        _ => g.expr(&Type::Bool, d),
                    };
                    match g.rng.below(4) {
                        0 => format!("{} && {}", one(g), one(g)),
                        1 => format!("{} || {}", one(g), one(g)),
                        _ => one(g),
                    }
                });
                let kept = format!("{text}.split({sep}{limit}).filter({w}, {pred})");
                match self.rng.below(7) {
                    6 => format!(
                        "'ab' in {kept} || {text}.split({sep}).map(t, t + t).exists(t, t in {kept})"
                    ),
                    0 => format!("{kept}.size() > 2"),
                    1 => format!("{kept}.map(t, t + t).exists(t, t == 'x')"),
                    2 => format!("{kept}.filter(t, t.size() > 5).exists(t, t.contains('x'))"),
                    3 => format!("{kept}.map(t, t.substring(1)).exists(t, t == 'x')"),
                    4 => format!("{kept}.join('-').size() > 3"),
                    _ => format!("{kept}.all(t, t.endsWith('x'))"),
                }
            }
            Shape::NeededBytes => {
                let list = format!("event.attributes.{key}");
                let (x, body) = self.scoped(Type::Dyn, |g| {
                    let x = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                    let field = g.rng.pick(KEYS);
                    let other = g.rng.pick(KEYS);
                    let one = |g: &mut Self| match g.rng.below(12) {
                        0 => format!("{x}.{field} == 1"),
                        1 => format!("{x}.{field}.{other}.size() > 0"),
                        2 => format!("{x}.size() > {}", g.rng.pick(&["0", "3", "-1"])),
                        3 => format!("{x}.startsWith('a')"),
                        4 => format!("{x} == 'ab'"),
                        5 => format!("{x}.{field} + {x}.{other} == 'x'"),
                        6 => format!("has({x}.{field})"),
                        7 => format!("{x}[0] == 0"),
                        8 => format!("'a' in {x}"),
                        9 => format!("{x}.{field}.exists({x}, {x} == 1)"),
                        10 => format!("{x} != ''"),
                        _ => g.expr(&Type::Bool, d),
                    };
                    match g.rng.below(5) {
                        0 => format!("{} && {}", one(g), one(g)),
                        1 => format!("{} || {}", one(g), one(g)),
                        2 => format!("{} ? {} : {}", one(g), one(g), one(g)),
                        _ => one(g),
                    }
                });
                let field = self.rng.pick(KEYS);
                let other = self.rng.pick(KEYS);
                let looped = match self.rng.below(7) {
                    // Every element the same value, in no element of the range.
                    6 => format!("{list}.map(u, event.attributes.{other}).filter({x}, {body})"),
                    0 => format!("{list}.map({x}, {x}.{field})"),
                    1 => format!("{list}.map({x}, {body}, {x})"),
                    2 => format!("{list}.sortBy({x}, {x}.{field})"),
                    3 => format!("{list}.map({x}, [{body}, {x}.{field}])"),
                    _ => format!("{list}.filter({x}, {body})"),
                };
                match self.rng.below(6) {
                    0 => format!("{list}.exists_one({x}, {body})"),
                    1 => format!("{looped}.size() > 2"),
                    2 => format!("{looped}.map(t, t + t).exists(t, t == 'x')"),
                    3 => format!("{looped}.filter(t, t.size() > 1).size() > 0"),
                    4 => format!("'ab' in {looped}"),
                    _ => format!("{looped}.exists(t, t == 'x')"),
                }
            }
            Shape::ScalarSplit => {
                let list = format!("event.attributes.{key}");
                let (x, body) = self.scoped(Type::Dyn, |g| {
                    let x = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                    match g.rng.below(10) {
                        0 => format!("{x} + {x}"),
                        1 => format!("{x} + 'ab'"),
                        2 => format!("{x} + [1, 2]"),
                        3 => format!("-{x}"),
                        4 => format!("{x} > 1 ? {x} : 0"),
                        5 => format!("{x} * 2"),
                        6 => format!("string({x}) + string({x})"),
                        7 => format!("[{x}, {x}]"),
                        8 => format!("{{{x}: 1}}"),
                        _ => format!("size({x})"),
                    }
                });
                let mapped = format!("{list}.map({x}, {body})");
                let (y, test) = self.scoped(Type::Dyn, |g| {
                    let y = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                    match g.rng.below(8) {
                        0 => format!("{y}.size() > 3"),
                        1 => format!("{y}.startsWith('a')"),
                        2 => format!("{y} + {y} == {y}"),
                        3 => format!("{y} == 'ab'"),
                        4 => format!("string({y}).contains('x')"),
                        5 => format!("{y}.size() > 3 || {y} == 1"),
                        6 => format!("{{{y}: 1, {y} + 'x': 2}}.size() == 2"),
                        _ => format!("'a' in {y}"),
                    }
                });
                let looped = match self.rng.below(5) {
                    0 => format!("{mapped}.filter({y}, {test})"),
                    1 => format!("{mapped}.map({y}, {y} + {y})"),
                    2 => format!("{list}.filter({y}, {test})"),
                    3 => format!("{list}.map({y}, {y} + {y}).map({y}, {y} + {y})"),
                    _ => mapped.clone(),
                };
                match self.rng.below(7) {
                    0 => format!("{list}.exists({y}, {test})"),
                    1 => format!("{list}.all({y}, {test})"),
                    2 => format!("{list}.exists_one({y}, {test})"),
                    3 => format!("{mapped}.exists({y}, {test})"),
                    4 => format!("{looped}.size() > 2"),
                    5 => format!("'ab' in {looped}"),
                    _ => format!("{looped}.exists(t, t == 'x')"),
                }
            }
            Shape::RangeIndex => {
                let other = self.rng.pick(KEYS);
                let list = format!("event.attributes.{key}");
                // A literal length, or a size computed at run time (version 7 bounds it).
                let sized = format!("size({list})");
                let n = match self.rng.below(9) {
                    7 => sized.as_str(),
                    8 => "size(event.text)",
                    _ => self.rng.pick(&["0", "1", "3", "10", "100", "1000", "4096"]),
                };
                let (i, body) = self.scoped(Type::Int, |g| {
                    let i = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                    let at = format!("{list}[{i}]");
                    match g.rng.below(9) {
                        0 => format!("{at}.contains('x')"),
                        1 => format!("{at} + 'y' == 'x'"),
                        2 => format!("event.text.contains({at})"),
                        3 => format!("{at} == event.attributes.{other}[{i}]"),
                        4 => format!("{at}.contains({list}[{i} + 1])"),
                        5 => format!("{at}.size() > 1 && {}", g.expr(&Type::Bool, d)),
                        6 => {
                            let (j, inner) = g.scoped(Type::Int, |g| {
                                let j = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                                format!("{at} == {list}[{j}]")
                            });
                            format!("lists.range({n}).exists({j}, {inner})")
                        }
                        7 => {
                            let (x, inner) = g.scoped(Type::Dyn, |g| {
                                let x = g.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
                                format!("{at} == {x}")
                            });
                            format!("{list}.exists({x}, {inner})")
                        }
                        _ => format!("dyn({at}) == {}", g.dyn_value(d)),
                    }
                });
                match self.rng.below(5) {
                    0 => format!("lists.range({n}).map({i}, {body}).exists(r, r)"),
                    1 => format!("lists.range({n}).filter({i}, {body}).size() > 0"),
                    2 => format!("lists.range({n}).exists_one({i}, {body})"),
                    3 => format!("lists.range({n}).all({i}, {body})"),
                    _ => format!("lists.range({n}).exists({i}, {body})"),
                }
            }
        }
    }
}

/// Bindings of the pattern variables of one overload.
#[derive(Clone, Debug, Default)]
struct Binding {
    a: Option<Type>,
    k: Option<Type>,
    v: Option<Type>,
}

/// How a result pattern produces `ty`, if it can: which pattern variables that binds.
fn result_binding(result: P, ty: &Type) -> Option<Binding> {
    let exact = |want: Type| (*ty == want || *ty == Type::Dyn).then(Binding::default);
    match result {
        P::Bool => exact(Type::Bool),
        P::Int => exact(Type::Int),
        P::Uint => exact(Type::Uint),
        P::Double => exact(Type::Double),
        P::String => exact(Type::String),
        P::Bytes => exact(Type::Bytes),
        P::Timestamp => exact(Type::Timestamp),
        P::Duration => exact(Type::Duration),
        // `dyn(x)` is accepted wherever any type is.
        P::Dyn => Some(Binding::default()),
        P::TypeOfA => matches!(ty, Type::Type(_) | Type::Dyn).then(Binding::default),
        P::A => Some(Binding {
            a: (*ty != Type::Dyn).then(|| ty.clone()),
            ..Binding::default()
        }),
        P::ListA => match ty {
            Type::List(e) => Some(Binding {
                a: Some((**e).clone()),
                ..Binding::default()
            }),
            Type::Dyn => Some(Binding::default()),
            _ => None,
        },
        P::ListOrdA => result_binding(P::ListA, ty),
        P::ListListA => match ty {
            Type::List(e) => match &**e {
                Type::List(inner) => Some(Binding {
                    a: Some((**inner).clone()),
                    ..Binding::default()
                }),
                _ => None,
            },
            Type::Dyn => Some(Binding::default()),
            _ => None,
        },
        P::ListDyn => matches!(ty, Type::List(_) | Type::Dyn).then(Binding::default),
        P::ListString => exact(Type::list(Type::String)),
        P::ListInt => exact(Type::list(Type::Int)),
        P::OptA => match ty {
            Type::Optional(e) => Some(Binding {
                a: Some((**e).clone()),
                ..Binding::default()
            }),
            _ => None,
        },
        P::ListOptA => match ty {
            Type::List(e) => match &**e {
                Type::Optional(inner) => Some(Binding {
                    a: Some((**inner).clone()),
                    ..Binding::default()
                }),
                _ => None,
            },
            _ => None,
        },
        P::MapKv => match ty {
            Type::Map(k, v) => Some(Binding {
                k: Some((**k).clone()),
                v: Some((**v).clone()),
                ..Binding::default()
            }),
            _ => None,
        },
        P::K => Some(Binding {
            k: Some(ty.clone()),
            ..Binding::default()
        }),
        P::V => Some(Binding {
            v: Some(ty.clone()),
            ..Binding::default()
        }),
    }
}

/// The source text of a call of `entry` with these arguments (the receiver first for member
/// overloads).
fn syntax(entry: &Entry, args: &[String]) -> String {
    match (entry.name, args) {
        ("[]", [x, i]) => format!("({x})[{i}]"),
        ("!", [x]) => format!("!({x})"),
        ("-_", [x]) => format!("-({x})"),
        (op, [x, y]) if entry.operator => format!("({x}) {op} ({y})"),
        (name, [recv, rest @ ..]) if entry.overload.member => {
            format!("({recv}).{name}({})", rest.join(", "))
        }
        (name, _) => format!("{name}({})", args.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Env;
    use crate::{Options, check_filter, compile};

    /// The shape for version 9's rule mostly makes filters that compile, and many of them are
    /// ones the rule tightens (a figure below version 8's), so the random soundness test
    /// meters the rule rather than filters it never applies to.
    #[test]
    fn needed_bytes_filters_compile_and_meet_the_rule() {
        let v8 = Options {
            model: crate::cost::CostModel::FULL
                .with_version(8)
                .expect("carried"),
            ..Options::default()
        };
        let (mut compiled, mut tightened) = (0, 0);
        for seed in 0..300 {
            let mut rng = Rng::new(seed);
            let source = Gen::new(&mut rng).filter(Focus::Shape(Shape::NeededBytes), 2);
            if compile(&source, &Env::filter(), &Options::default()).is_err() {
                continue;
            }
            compiled += 1;
            let now = check_filter(&source, &Options::default())
                .cost
                .map(|c| c.max);
            let before = check_filter(&source, &v8).cost.map(|c| c.max);
            if now < before {
                tightened += 1;
            }
        }
        assert!(compiled >= 240, "{compiled} of 300 compiled");
        assert!(tightened >= 150, "{tightened} of {compiled} tightened");
    }

    /// The shape for version 10's rule: most of its filters compile, and many are ones the
    /// rule tightens (below version 9's figure).
    #[test]
    fn scalar_split_filters_compile_and_meet_the_rule() {
        let v9 = Options {
            model: crate::cost::CostModel::FULL
                .with_version(9)
                .expect("carried"),
            ..Options::default()
        };
        let (mut compiled, mut tightened) = (0, 0);
        for seed in 0..300 {
            let mut rng = Rng::new(seed);
            let source = Gen::new(&mut rng).filter(Focus::Shape(Shape::ScalarSplit), 2);
            if compile(&source, &Env::filter(), &Options::default()).is_err() {
                continue;
            }
            compiled += 1;
            let now = check_filter(&source, &Options::default())
                .cost
                .map(|c| c.max);
            let before = check_filter(&source, &v9).cost.map(|c| c.max);
            assert!(
                now <= before,
                "{source}: {now:?} above version 9's {before:?}"
            );
            if now < before {
                tightened += 1;
            }
        }
        assert!(compiled >= 150, "{compiled} of 300 compiled");
        assert!(tightened >= 60, "{tightened} of {compiled} tightened");
    }
}
