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
use crate::syntax::{BinaryOp, Comprehension, ExprKind, MacroKind, NodeId, UnaryOp};

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

/// Comprehension iterations between explicit deadline reads (charges read it too).
const LOOP_DEADLINE_EVERY: usize = 64;

pub(crate) struct Interp<'p> {
    pub(crate) program: &'p Program,
    activation: &'p Activation,
    pub(crate) meter: Meter<'p>,
    /// Iteration variables in scope, innermost last.
    locals: Vec<(&'p str, Value)>,
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
            ExprKind::Has { operand, field, .. } => {
                self.charge(table::SELECT)?;
                match self.eval(*operand)? {
                    Value::Map(map) => Ok(Value::Bool(map.get_str(field).is_some())),
                    other => Err(error(format!(
                        "has() does not apply to a value of type {}",
                        other.type_value().name()
                    ))),
                }
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
            ExprKind::Index { operand, index } => {
                let base = self.eval(*operand)?;
                let key = self.eval(*index)?;
                self.charge(table::CALL)?;
                index_value(&base, &key)
            }
            ExprKind::List(items) => {
                let n = items.len() as u64;
                self.charge(table::LIST_CREATE.saturating_add(self.alloc(table::alloc_list(n))))?;
                self.build(n.saturating_mul(table::BUILT_PER_ELEMENT))?;
                let mut values = Vec::with_capacity(items.len());
                for &item in items {
                    values.push(self.eval(item)?);
                }
                Ok(Value::list(values))
            }
            ExprKind::Map(entries) => {
                let n = entries.len() as u64;
                self.charge(table::MAP_CREATE.saturating_add(self.alloc(table::alloc_map(n))))?;
                self.build(n.saturating_mul(table::BUILT_PER_ENTRY))?;
                let mut pairs = Vec::with_capacity(entries.len());
                for entry in entries {
                    let key = self.eval(entry.key)?;
                    let value = self.eval(entry.value)?;
                    pairs.push((key, value));
                }
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
                Value::List(items) => {
                    let (n, deep) = (items.len() as u64, b.deep_size());
                    self.charge(table::in_list(n, a.deep_size(), deep).max(table::CALL))?;
                    Ok(Value::Bool(bulk::contains_item(items, a, &mut self.meter)?))
                }
                Value::Map(map) => {
                    self.charge(table::CALL)?;
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
        self.build(len)
    }

    fn comprehension(&mut self, c: &'p Comprehension) -> Eval {
        let range = self.eval(c.range)?;
        // A map is iterated over its keys in place: collecting them first would be work that no
        // charge pays for when the loop stops early.
        let items = match &range {
            Value::List(items) => Range::List(items),
            Value::Map(map) => Range::Map(map),
            other => {
                return Err(error(format!(
                    "cannot iterate over a value of type {}",
                    other.type_value().name()
                )));
            }
        };
        match c.kind {
            MacroKind::All | MacroKind::Exists => self.quantifier(c, &items),
            MacroKind::ExistsOne => {
                self.charge(table::EXISTS_ONE_RESULT)?;
                let predicate = c
                    .predicate
                    .ok_or_else(|| error("exists_one needs a predicate"))?;
                let mut count = 0u64;
                for i in 0..items.len() {
                    self.loop_tick(i)?;
                    match self.with_local(&c.var, items.get(i), predicate)? {
                        Value::Bool(true) => {
                            self.charge(table::EXISTS_ONE_COUNT)?;
                            count += 1;
                        }
                        Value::Bool(false) => self.charge(table::EXISTS_ONE_SKIP)?,
                        other => return Err(no_overload("exists_one", &[&other])),
                    }
                }
                Ok(Value::Bool(count == 1))
            }
            MacroKind::Map | MacroKind::Filter => self.map_filter(c, &items),
        }
    }

    /// `all` and `exists`: a decisive predicate result ends the loop; an error is remembered and
    /// returned only if no decisive result comes, as in CEL's `&&`/`||` folding.
    fn quantifier(&mut self, c: &'p Comprehension, items: &Range<'_>) -> Eval {
        let exists = c.kind == MacroKind::Exists;
        let per_element = if exists {
            table::EXISTS_PER_ELEMENT
        } else {
            table::ALL_PER_ELEMENT
        };
        self.charge(table::COMPREHENSION_RESULT)?;
        let predicate = c
            .predicate
            .ok_or_else(|| error("the macro needs a predicate"))?;
        let mut first_error = None;
        for i in 0..items.len() {
            self.loop_tick(i)?;
            self.charge(per_element)?;
            match self.with_local(&c.var, items.get(i), predicate) {
                Ok(Value::Bool(b)) if b == exists => return Ok(Value::Bool(exists)),
                Ok(Value::Bool(_)) => {}
                Ok(other) => {
                    first_error.get_or_insert_with(|| no_overload(c.kind.name(), &[&other]));
                }
                Err(Fault::Stop(stop)) => return Err(Fault::Stop(stop)),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(Value::Bool(!exists)),
        }
    }

    fn map_filter(&mut self, c: &'p Comprehension, items: &Range<'_>) -> Eval {
        self.charge(table::MAP_FILTER_FIXED)?;
        let mut out = Vec::new();
        let mut deep = 0u64;
        for i in 0..items.len() {
            self.loop_tick(i)?;
            let item = items.get(i);
            let keep = match c.predicate {
                Some(predicate) => match self.with_local(&c.var, item.clone(), predicate)? {
                    Value::Bool(b) => b,
                    other => return Err(no_overload(c.kind.name(), &[&other])),
                },
                None => true,
            };
            if !keep {
                self.charge(table::FILTER_SKIP)?;
                continue;
            }
            let element = if let Some(transform) = c.transform {
                self.charge(table::MAP_APPEND.saturating_add(self.alloc(table::alloc_list(1))))?;
                self.build(table::BUILT_PER_ELEMENT)?;
                self.with_local(&c.var, item, transform)?
            } else {
                self.charge(table::FILTER_APPEND.saturating_add(self.alloc(table::alloc_list(1))))?;
                self.build(table::BUILT_PER_ELEMENT)?;
                item
            };
            deep = deep.saturating_add(element.deep_size()).saturating_add(1);
            out.push(element);
        }
        Ok(Value::List(Arc::new(ListValue::with_deep(out, deep))))
    }

    fn with_local(&mut self, var: &'p str, value: Value, body: NodeId) -> Eval {
        self.locals.push((var, value));
        let result = self.eval(body);
        self.locals.pop();
        result
    }

    fn loop_tick(&mut self, i: usize) -> Result<(), Fault> {
        if i % LOOP_DEADLINE_EVERY == LOOP_DEADLINE_EVERY - 1 {
            self.meter.check_deadline()?;
        }
        Ok(())
    }
}

/// `==` and `!=`: one traversal of the shorter of two strings; for two lists or maps one call
/// plus the smaller deep size (what the walk visits at most); anything else one call.
fn equality_cost(a: &Value, b: &Value) -> u64 {
    let container = |v: &Value| matches!(v, Value::List(_) | Value::Map(_));
    match (a, b) {
        (Value::String(_), Value::String(_)) | (Value::Bytes(_), Value::Bytes(_)) => {
            table::compare_sized(a.cost_size(), b.cost_size()).max(table::CALL)
        }
        _ if container(a) && container(b) => {
            table::CALL.saturating_add(table::equal_deep(a.deep_size(), b.deep_size()))
        }
        _ => table::CALL,
    }
}

/// What a comprehension iterates: the elements of a list or the keys of a map.
enum Range<'a> {
    List(&'a [Value]),
    Map(&'a MapValue),
}

impl Range<'_> {
    fn len(&self) -> usize {
        match self {
            Range::List(items) => items.len(),
            Range::Map(map) => map.len(),
        }
    }

    fn get(&self, i: usize) -> Value {
        match self {
            Range::List(items) => items[i].clone(),
            Range::Map(map) => map.entries()[i].0.to_value(),
        }
    }
}

/// `value.field` on a map (the event is a map too).
pub(crate) fn select(value: &Value, field: &str) -> Eval {
    match value {
        Value::Map(map) => map
            .get_str(field)
            .cloned()
            .ok_or_else(|| error(format!("no such key: {field}"))),
        other => Err(error(format!(
            "type {} does not support field selection",
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
