//! The tree walk: one method per node kind, operators with CEL's overflow, division and
//! heterogeneous-number rules, error absorption in `&&`/`||`, and the comprehension macros with
//! their per-element charges.

use std::cmp::Ordering;
use std::sync::Arc;

use super::bulk;
use super::map::MapValue;
use super::meter::{Meter, Stop};
use super::value::{ListValue, TypeValue, Value, brief_value};
use super::{Activation, Program};
use crate::cost::table;
use crate::syntax::{BinaryOp, ExprKind, NodeId, UnaryOp};

/// Why a sub-expression has no value: a CEL error (absorbable) or a stop (never absorbed).
#[derive(Debug)]
pub(crate) enum Fault {
    /// A CEL runtime error.
    Error(Box<str>),
    /// The meter stopped the evaluation.
    Stop(Stop),
}

impl From<Stop> for Fault {
    fn from(stop: Stop) -> Self {
        Fault::Stop(stop)
    }
}

pub(crate) type Eval = Result<Value, Fault>;

/// A CEL error value.
pub(crate) fn error(message: impl Into<Box<str>>) -> Fault {
    Fault::Error(message.into())
}

/// The error for an operator or function applied to operand types it has no overload for.
pub(crate) fn no_overload(name: &str, operands: &[&Value]) -> Fault {
    let types: Vec<&str> = operands.iter().map(|v| v.type_value().name()).collect();
    error(format!(
        "no matching overload for '{name}' applied to ({})",
        types.join(", ")
    ))
}

pub(crate) struct Interp<'p> {
    pub(crate) program: &'p Program,
    activation: &'p Activation,
    pub(crate) meter: Meter<'p>,
    /// Iteration variables in scope, innermost last.
    pub(crate) locals: Vec<(&'p str, Value)>,
}

impl<'p> Interp<'p> {
    pub(crate) fn new(program: &'p Program, activation: &'p Activation, meter: Meter<'p>) -> Self {
        Self {
            program,
            activation,
            meter,
            locals: Vec::new(),
        }
    }

    /// The allocation part of a charge, or zero when the cost model leaves allocations out.
    pub(crate) fn alloc(&self, units: u64) -> u64 {
        self.meter.model().alloc(units)
    }

    pub(crate) fn charge(&mut self, units: u64) -> Result<(), Fault> {
        self.meter.charge(units).map_err(Fault::Stop)
    }

    /// Counts `bytes` of a value about to be built against the memory cap.
    pub(crate) fn build(&mut self, bytes: u64) -> Result<(), Fault> {
        self.meter.build(bytes).map_err(Fault::Stop)
    }

    /// Counts a string or bytes value of `len` bytes about to be built against the memory cap:
    /// [`table::built_text`], its buffer and the shared copy made of it.
    pub(crate) fn build_text(&mut self, len: u64) -> Result<(), Fault> {
        self.build(table::built_text(len))
    }

    /// Pays for a string or bytes value of `len` bytes about to be built: `cpu` units and its
    /// allocation, and its bytes against the memory cap.
    pub(crate) fn pay_bytes(&mut self, cpu: u64, len: u64) -> Result<(), Fault> {
        self.charge(cpu.saturating_add(self.alloc(table::alloc_bytes(len))))?;
        self.build_text(len)
    }

    /// Pays for a new list of `len` elements about to be built (the elements themselves exist):
    /// its elements and the container itself against the memory cap.
    pub(crate) fn pay_list(&mut self, cpu: u64, len: u64) -> Result<(), Fault> {
        self.pay_append(cpu, len)?;
        self.build(table::BUILT_PER_CONTAINER)
    }

    /// Pays for a list of `len` elements a library function builds: [`Interp::pay_list`] and
    /// the container's allocation charge ([`table::ALLOC_PER_LIST`]).
    pub(crate) fn pay_new_list(&mut self, cpu: u64, len: u64) -> Result<(), Fault> {
        let container = self.meter.model().list_alloc();
        self.pay_list(cpu.saturating_add(container), len)
    }

    /// Pays for `len` elements appended to a list being built (its container is paid for).
    pub(crate) fn pay_append(&mut self, cpu: u64, len: u64) -> Result<(), Fault> {
        self.charge(cpu.saturating_add(self.alloc(table::alloc_list(len))))?;
        self.build(len.saturating_mul(table::BUILT_PER_ELEMENT))
    }

    /// Pays for an optional value that holds something: its value lives in a shared allocation
    /// of its own ([`table::BUILT_PER_CONTAINER`] bytes against the memory cap), so a loop that
    /// wraps values (`lists.range(600000).map(i, optional.of(optional.of(i)))`) builds memory,
    /// and its allocation charge ([`table::ALLOC_PER_OPTIONAL`]) keeps those bytes within
    /// [`table::MAX_BYTES_PER_UNIT`] of what is charged.
    pub(crate) fn count_optional(&mut self, value: &Value) -> Result<(), Fault> {
        if matches!(value, Value::Optional(Some(_))) {
            self.charge(self.meter.model().optional_alloc())?;
            self.build(table::BUILT_PER_CONTAINER)?;
        }
        Ok(())
    }

    /// What `base[key]` and `key in base` charge: [`table::key_lookup`] when `base` (or the
    /// value an optional holds) is a map, else one call.
    pub(crate) fn lookup_cost(&self, base: &Value, key: &Value) -> u64 {
        let mut base = base;
        while let Value::Optional(Some(inner)) = base {
            base = inner;
        }
        match (base, key) {
            (Value::Map(map), Value::String(s)) => table::key_lookup(
                map.len() as u64,
                self.meter.model().key_bytes(s.len() as u64),
            ),
            _ => table::CALL,
        }
    }

    /// Charges the key comparisons of building a map from `pairs` ([`table::map_build`] over
    /// the sum of its string keys' [`table::key_compare`]),
    /// before the check for repeated keys and the index make them.
    pub(crate) fn charge_map_keys(&mut self, pairs: &[(Value, Value)]) -> Result<(), Fault> {
        let model = self.meter.model();
        let compares = pairs.iter().fold(0u64, |total, (k, _)| match k {
            Value::String(s) => {
                total.saturating_add(table::key_compare(model.key_bytes(s.len() as u64)))
            }
            _ => total,
        });
        self.charge(table::map_build(pairs.len() as u64, compares))
    }

    /// Pays for a new map of `len` entries about to be built, container included.
    pub(crate) fn pay_map(&mut self, cpu: u64, len: u64) -> Result<(), Fault> {
        self.pay_insert(cpu, len)?;
        self.build(table::BUILT_PER_CONTAINER)
    }

    /// Pays for `len` entries inserted into a map being built (its container is paid for).
    pub(crate) fn pay_insert(&mut self, cpu: u64, len: u64) -> Result<(), Fault> {
        self.charge(cpu.saturating_add(self.alloc(table::alloc_map(len))))?;
        self.build(len.saturating_mul(table::BUILT_PER_ENTRY))
    }

    pub(crate) fn eval(&mut self, id: NodeId) -> Eval {
        let program = self.program;
        match program.ast.kind(id) {
            ExprKind::Literal(_) => {
                self.charge(table::CONST)?;
                Ok(program.consts[id as usize].clone().unwrap_or(Value::Null))
            }
            ExprKind::Ident { name, rooted } => {
                self.charge(table::SELECT)?;
                self.resolve(name, *rooted)
            }
            ExprKind::Select { operand, field, .. } => {
                self.charge(table::SELECT)?;
                if let Some(value) = self.qualified(id) {
                    return Ok(value);
                }
                let base = self.eval(*operand)?;
                select(&base, field)
            }
            ExprKind::OptSelect { operand, field, .. } => {
                self.charge(table::SELECT)?;
                let base = self.eval(*operand)?;
                let made = opt_select(&base, field)?;
                self.count_optional(&made)?;
                Ok(made)
            }
            ExprKind::Has { operand, field, .. } => {
                self.charge(table::SELECT)?;
                let base = self.eval(*operand)?;
                has(&base, field)
            }
            ExprKind::Call {
                target,
                function,
                args,
                ..
            } => self.call(id, *target, function, args),
            ExprKind::Unary { op, operand } => {
                let value = self.eval(*operand)?;
                self.charge(table::CALL)?;
                unary(*op, &value)
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, *lhs, *rhs),
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => match self.eval(*cond)? {
                Value::Bool(true) => self.eval(*then),
                Value::Bool(false) => self.eval(*otherwise),
                other => Err(no_overload("_?_:_", &[&other])),
            },
            ExprKind::Index { operand, index } | ExprKind::OptIndex { operand, index } => {
                let base = self.eval(*operand)?;
                let key = self.eval(*index)?;
                self.charge(self.lookup_cost(&base, &key))?;
                match (program.ast.kind(id), base) {
                    // Indexing an optional is optional from there on (cel-go's viral optionals).
                    (ExprKind::OptIndex { .. }, base) | (_, base @ Value::Optional(_)) => {
                        let made = opt_index(&base, &key)?;
                        self.count_optional(&made)?;
                        Ok(made)
                    }
                    (_, base) => index_value(&base, &key),
                }
            }
            ExprKind::List {
                items,
                optional_indices,
            } => {
                let n = items.len() as u64;
                self.pay_list(table::LIST_CREATE, n)?;
                let mut values = Vec::with_capacity(items.len());
                for (i, &item) in items.iter().enumerate() {
                    let value = self.eval(item)?;
                    if optional_indices.contains(&(i as u32)) {
                        values.extend(present(value)?);
                    } else {
                        values.push(value);
                    }
                }
                Ok(Value::list(values))
            }
            ExprKind::Map(entries) => {
                let n = entries.len() as u64;
                self.pay_map(table::MAP_CREATE, n)?;
                let mut pairs = Vec::with_capacity(entries.len());
                for entry in entries {
                    let key = self.eval(entry.key)?;
                    let value = self.eval(entry.value)?;
                    if entry.optional {
                        pairs.extend(present(value)?.map(|v| (key, v)));
                    } else {
                        pairs.push((key, value));
                    }
                }
                self.charge_map_keys(&pairs)?;
                MapValue::from_entries(pairs)
                    .map(|m| Value::Map(Arc::new(m)))
                    .map_err(|e| error(e.to_string()))
            }
            ExprKind::Struct { type_name, .. } => {
                self.charge(table::STRUCT_CREATE)?;
                Err(error(format!(
                    "unknown message type '{type_name}': message literals are not supported"
                )))
            }
            ExprKind::Comprehension(c) => self.comprehension(c),
        }
    }

    /// Resolves an identifier: iteration variables, then bound variables, then type names.
    fn resolve(&self, name: &str, rooted: bool) -> Eval {
        if !rooted {
            if let Some((_, value)) = self.locals.iter().rev().find(|(n, _)| *n == name) {
                return Ok(value.clone());
            }
        }
        if let Some(value) = self.activation.get(name) {
            return Ok(value.clone());
        }
        if let Some(t) = TypeValue::from_name(name) {
            return Ok(Value::Type(t));
        }
        Err(error(format!("undeclared reference to '{name}'")))
    }

    /// A select chain resolved as one dotted name (`a.b.c` bound as a variable, or a qualified
    /// type name such as `google.protobuf.Timestamp`), unless an iteration variable shadows it.
    fn qualified(&self, id: NodeId) -> Option<Value> {
        let (name, root) = self.program.qualified[id as usize].as_ref()?;
        // The common case, `event.text` with no dotted variable bound and no type name spelled,
        // needs none of the lookups below.
        if !self.activation.has_dotted() && !name.starts_with("google.protobuf.") {
            return None;
        }
        let ExprKind::Ident {
            name: root_name,
            rooted,
        } = self.program.ast.kind(*root)
        else {
            return None;
        };
        if !*rooted && self.locals.iter().any(|(n, _)| *n == &**root_name) {
            return None;
        }
        if self.activation.has_dotted() {
            if let Some(value) = self.activation.get(name) {
                return Some(value.clone());
            }
        }
        if self.activation.get(root_name).is_none() {
            return TypeValue::from_name(name).map(Value::Type);
        }
        None
    }

    fn binary(&mut self, op: BinaryOp, lhs: NodeId, rhs: NodeId) -> Eval {
        match op {
            BinaryOp::And => self.logic(lhs, rhs, false),
            BinaryOp::Or => self.logic(lhs, rhs, true),
            _ => {
                let a = self.eval(lhs)?;
                let b = self.eval(rhs)?;
                self.strict_binary(op, &a, &b)
            }
        }
    }

    /// `&&` (decisive = false) and `||` (decisive = true): the decisive value on either side wins
    /// over an error on the other; otherwise the first error is the result.
    fn logic(&mut self, lhs: NodeId, rhs: NodeId, decisive: bool) -> Eval {
        let name = if decisive { "_||_" } else { "_&&_" };
        let left = match self.eval(lhs) {
            Ok(Value::Bool(b)) if b == decisive => return Ok(Value::Bool(b)),
            Ok(Value::Bool(b)) => Ok(b),
            Ok(other) => Err(no_overload(name, &[&other])),
            Err(Fault::Stop(stop)) => return Err(Fault::Stop(stop)),
            Err(e) => Err(e),
        };
        let right = match self.eval(rhs) {
            Ok(Value::Bool(b)) if b == decisive => return Ok(Value::Bool(b)),
            Ok(Value::Bool(b)) => Ok(b),
            Ok(other) => Err(no_overload(name, &[&other])),
            Err(Fault::Stop(stop)) => return Err(Fault::Stop(stop)),
            Err(e) => Err(e),
        };
        match (left, right) {
            (Ok(_), Ok(_)) => Ok(Value::Bool(!decisive)),
            (Err(e), _) | (_, Err(e)) => Err(e),
        }
    }

    fn strict_binary(&mut self, op: BinaryOp, a: &Value, b: &Value) -> Eval {
        match op {
            BinaryOp::Eq | BinaryOp::Ne => {
                self.charge(equality_cost(a, b))?;
                let eq = bulk::equal(a, b, &mut self.meter)?;
                Ok(Value::Bool(if op == BinaryOp::Eq { eq } else { !eq }))
            }
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                if !a.orderable_with(b) {
                    return Err(no_overload(op.symbol(), &[a, b]));
                }
                let cost = match (a, b) {
                    (Value::String(_) | Value::Bytes(_), _) => {
                        table::compare_sized(a.cost_size(), b.cost_size()).max(table::CALL)
                    }
                    _ => table::CALL,
                };
                self.charge(cost)?;
                let holds = a.cel_cmp(b).is_some_and(|ord| match op {
                    BinaryOp::Lt => ord == Ordering::Less,
                    BinaryOp::Le => ord != Ordering::Greater,
                    BinaryOp::Gt => ord == Ordering::Greater,
                    _ => ord != Ordering::Less,
                });
                Ok(Value::Bool(holds))
            }
            BinaryOp::In => match b {
                Value::List(items) => self.list_contains(items, items.deep(), a).map(Value::Bool),
                Value::Map(map) => {
                    self.charge(self.lookup_cost(b, a))?;
                    Ok(Value::Bool(map.get(a).is_some()))
                }
                _ => Err(no_overload("@in", &[a, b])),
            },
            BinaryOp::Add => self.add(a, b),
            _ => {
                self.charge(table::CALL)?;
                super::functions::arithmetic(op, a, b)
            }
        }
    }

    /// `value in items`, charged as the operator `in` is (the `sets` functions and `distinct`
    /// are priced as membership tests through this too).
    /// `items` have the deep size `deep` together.
    pub(crate) fn list_contains(
        &mut self,
        items: &[Value],
        deep: u64,
        value: &Value,
    ) -> Result<bool, Fault> {
        let n = items.len() as u64;
        self.charge(table::in_list(n, value.deep_size(), deep).max(table::CALL))?;
        Ok(bulk::contains_item(items, value, &mut self.meter)?)
    }

    /// `+`: numbers, and concatenation of strings, bytes and lists (charged by the size built).
    fn add(&mut self, lhs: &Value, rhs: &Value) -> Eval {
        match (lhs, rhs) {
            (Value::String(left), Value::String(right)) => {
                let (n, m) = (left.len() as u64, right.len() as u64);
                self.charge_concat(n, m)?;
                Ok(Value::String(bulk::join_str(left, right, &mut self.meter)?))
            }
            (Value::Bytes(left), Value::Bytes(right)) => {
                let (n, m) = (left.len() as u64, right.len() as u64);
                self.charge_concat(n, m)?;
                Ok(Value::Bytes(bulk::join_bytes(
                    left,
                    right,
                    &mut self.meter,
                )?))
            }
            (Value::List(left), Value::List(right)) => {
                let n = (left.len() + right.len()) as u64;
                self.charge(table::CALL.saturating_add(self.alloc(table::alloc_list(n))))?;
                self.build(n.saturating_mul(table::BUILT_PER_ELEMENT))?;
                let joined = bulk::join_list(left, right, &mut self.meter)?;
                let deep = lhs.deep_size().saturating_add(rhs.deep_size());
                Ok(Value::List(Arc::new(ListValue::with_deep(joined, deep))))
            }
            _ => {
                self.charge(table::CALL)?;
                super::functions::arithmetic(BinaryOp::Add, lhs, rhs)
            }
        }
    }
    /// The charge and the memory of concatenating `n` and `m` bytes.
    fn charge_concat(&mut self, n: u64, m: u64) -> Result<(), Fault> {
        let len = n.saturating_add(m);
        self.charge(table::concat(n, m).saturating_add(self.alloc(table::alloc_bytes(len))))?;
        self.build_text(len)
    }
}

/// `==` and `!=`: one traversal of the shorter of two strings; for two lists or maps one call
/// plus the smaller deep size (what the walk visits at most); anything else one call.
fn equality_cost(a: &Value, b: &Value) -> u64 {
    let container = |v: &Value| matches!(v, Value::List(_) | Value::Map(_));
    match (a, b) {
        // Two optionals with values compare as their values.
        (Value::Optional(Some(x)), Value::Optional(Some(y))) => equality_cost(x, y),
        (Value::String(_), Value::String(_)) | (Value::Bytes(_), Value::Bytes(_)) => {
            table::compare_sized(a.cost_size(), b.cost_size()).max(table::CALL)
        }
        _ if container(a) && container(b) => {
            table::CALL.saturating_add(table::equal_deep(a.deep_size(), b.deep_size()))
        }
        _ => table::CALL,
    }
}

/// `value.field` on a map (the event is a map too); on an optional, `value.?field`.
pub(crate) fn select(value: &Value, field: &str) -> Eval {
    match value {
        Value::Map(map) => map
            .get_str(field)
            .cloned()
            .ok_or_else(|| error(format!("no such key: {field}"))),
        Value::Optional(_) => opt_select(value, field),
        other => Err(error(format!(
            "type {} does not support field selection",
            other.type_value().name()
        ))),
    }
}

/// `value.?field`: an optional of the field of a map, none when the key is absent; through an
/// optional, the same on its value (none stays none).
fn opt_select(value: &Value, field: &str) -> Eval {
    match value {
        Value::Map(map) => Ok(Value::Optional(map.get_str(field).cloned().map(Arc::new))),
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => opt_select(inner, field),
        other => Err(error(format!(
            "type {} does not support field selection",
            other.type_value().name()
        ))),
    }
}

/// `has(value.field)`: whether a map has the key; an empty optional has no fields.
fn has(value: &Value, field: &str) -> Eval {
    match value {
        Value::Map(map) => Ok(Value::Bool(map.get_str(field).is_some())),
        Value::Optional(None) => Ok(Value::Bool(false)),
        Value::Optional(Some(inner)) => has(inner, field),
        other => Err(error(format!(
            "has() does not apply to a value of type {}",
            other.type_value().name()
        ))),
    }
}

/// `value[?key]`: an optional of the element or entry, none when the index is out of range or
/// the key absent; through an optional, the same on its value.
fn opt_index(base: &Value, key: &Value) -> Eval {
    match base {
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => opt_index(inner, key),
        Value::List(_) | Value::Map(_) => match index_value(base, key) {
            Ok(v) => Ok(Value::optional_of(v)),
            Err(Fault::Error(_)) if absent(base, key) => Ok(Value::Optional(None)),
            Err(e) => Err(e),
        },
        _ => Err(no_overload("_[?_]", &[base, key])),
    }
}

/// Whether `base[key]` failed because the index or key is not there (rather than because the
/// key has the wrong type).
fn absent(base: &Value, key: &Value) -> bool {
    match base {
        Value::List(_) => matches!(key, Value::Int(_) | Value::Uint(_) | Value::Double(_)),
        Value::Map(_) => matches!(
            key,
            Value::Bool(_) | Value::Int(_) | Value::Uint(_) | Value::Double(_) | Value::String(_)
        ),
        _ => false,
    }
}

/// The value of an optional element or entry (`[?x]`, `{?k: v}`), if it has one.
fn present(value: Value) -> Result<Option<Value>, Fault> {
    match value {
        Value::Optional(inner) => Ok(inner.map(|v| (*v).clone())),
        other => Err(error(format!(
            "an optional element or entry must be an optional, not {}",
            other.type_value().name()
        ))),
    }
}

fn unary(op: UnaryOp, value: &Value) -> Eval {
    match (op, value) {
        (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
        (UnaryOp::Neg, Value::Int(i)) => i
            .checked_neg()
            .map(Value::Int)
            .ok_or_else(|| error("integer overflow")),
        (UnaryOp::Neg, Value::Double(d)) => Ok(Value::Double(-d)),
        (UnaryOp::Neg, Value::Duration(d)) => d
            .checked_neg()
            .map(Value::Duration)
            .map_err(|e| error(e.to_string())),
        _ => Err(no_overload(op.symbol(), &[value])),
    }
}

/// `list[i]` and `map[k]`, with CEL's numeric index and key rules.
fn index_value(base: &Value, key: &Value) -> Eval {
    match base {
        Value::List(items) => {
            let i = match key {
                Value::Int(i) => *i,
                Value::Uint(u) => i64::try_from(*u).unwrap_or(i64::MAX),
                Value::Double(d) if d.fract() == 0.0 && d.abs() < 9.2e18 => *d as i64,
                _ => return Err(no_overload("_[_]", &[base, key])),
            };
            usize::try_from(i)
                .ok()
                .and_then(|i| items.get(i))
                .cloned()
                .ok_or_else(|| error(format!("index out of range: {i}")))
        }
        Value::Map(map) => {
            if !matches!(
                key,
                Value::Bool(_)
                    | Value::Int(_)
                    | Value::Uint(_)
                    | Value::Double(_)
                    | Value::String(_)
            ) {
                return Err(no_overload("_[_]", &[base, key]));
            }
            map.get(key)
                .cloned()
                .ok_or_else(|| error(format!("no such key: {}", brief_value(key))))
        }
        _ => Err(no_overload("_[_]", &[base, key])),
    }
}
