//! The comprehension macros: `all`, `exists`, `exists_one`, `map` and `filter` over one
//! variable or (`all`, `exists`, `existsOne`) two, `transformList`, `transformMap`,
//! `transformMapEntry`, `sortBy`, and the optional macros `optMap` and `optFlatMap`, each with
//! its per-element charges from the cost table.

use std::sync::Arc;

use super::interp::{Eval, Fault, Interp, error, no_overload};
use super::lists::sort_by_keys;
use super::map::MapValue;
use super::value::{ListValue, Value};
use crate::cost::table;
use crate::syntax::{Comprehension, MacroKind, NodeId};

/// Comprehension iterations between explicit deadline reads (charges read it too).
const LOOP_DEADLINE_EVERY: usize = 64;

/// What a comprehension iterates: the elements of a list or the entries of a map.
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

    /// The element of a list, or the key of a map: what a one-variable macro binds.
    fn item(&self, i: usize) -> Value {
        match self {
            Range::List(items) => items[i].clone(),
            Range::Map(map) => map.entries()[i].0.to_value(),
        }
    }

    /// The index and element of a list, or the key and value of a map: what a two-variable
    /// macro binds.
    fn entry(&self, i: usize) -> (Value, Value) {
        match self {
            Range::List(items) => (Value::Int(i as i64), items[i].clone()),
            Range::Map(map) => {
                let (key, value) = &map.entries()[i];
                (key.to_value(), value.clone())
            }
        }
    }
}

impl<'p> Interp<'p> {
    pub(crate) fn comprehension(&mut self, c: &'p Comprehension) -> Eval {
        let range = self.eval(c.range)?;
        if matches!(c.kind, MacroKind::OptMap | MacroKind::OptFlatMap) {
            return self.opt_map(c, &range);
        }
        // A map is iterated over in place: collecting its entries first would be work that no
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
            MacroKind::ExistsOne => self.exists_one(c, &items),
            MacroKind::Map | MacroKind::Filter | MacroKind::TransformList => {
                self.collect_list(c, &items)
            }
            MacroKind::TransformMap | MacroKind::TransformMapEntry => self.collect_map(c, &items),
            MacroKind::SortBy => self.sort_by(c, &items),
            MacroKind::OptMap | MacroKind::OptFlatMap => unreachable!("handled above"),
        }
    }

    /// Evaluates `body` with the comprehension's variables bound to entry `i`.
    fn bound(&mut self, c: &'p Comprehension, items: &Range<'_>, i: usize, body: NodeId) -> Eval {
        let pushed = if let Some((second, _)) = &c.var2 {
            let (first, value) = items.entry(i);
            self.locals.push((&c.var, first));
            self.locals.push((second, value));
            2
        } else {
            self.locals.push((&c.var, items.item(i)));
            1
        };
        let result = self.eval(body);
        self.locals.truncate(self.locals.len() - pushed);
        result
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
            match self.bound(c, items, i, predicate) {
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

    /// `exists_one`: every element is tested (no short circuit), an error ends the loop.
    fn exists_one(&mut self, c: &'p Comprehension, items: &Range<'_>) -> Eval {
        self.charge(table::EXISTS_ONE_RESULT)?;
        let predicate = c
            .predicate
            .ok_or_else(|| error("exists_one needs a predicate"))?;
        let mut count = 0u64;
        for i in 0..items.len() {
            self.loop_tick(i)?;
            match self.bound(c, items, i, predicate)? {
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

    /// Whether the filtering predicate (if any) keeps entry `i`; a dropped entry is charged.
    fn keeps(&mut self, c: &'p Comprehension, items: &Range<'_>, i: usize) -> Result<bool, Fault> {
        let Some(predicate) = c.predicate else {
            return Ok(true);
        };
        match self.bound(c, items, i, predicate)? {
            Value::Bool(true) => Ok(true),
            Value::Bool(false) => {
                self.charge(table::FILTER_SKIP)?;
                Ok(false)
            }
            other => Err(no_overload(c.kind.name(), &[&other])),
        }
    }

    /// `map`, `filter` and `transformList`: a list of the kept entries, transformed.
    fn collect_list(&mut self, c: &'p Comprehension, items: &Range<'_>) -> Eval {
        self.charge(table::MAP_FILTER_FIXED)?;
        self.build(table::BUILT_PER_CONTAINER)?;
        // The memory cap counts every buffer the list is given, before it is given: a list grown
        // by doubling holds its old and its new buffer at each growth, up to three times its
        // elements. A `map` is allocated once at its length; a `filter` grows as it keeps
        // elements. The cost charges the elements kept, as the estimate prices them.
        let mut out = Vec::new();
        if c.predicate.is_none() {
            self.build((items.len() as u64).saturating_mul(table::BUILT_PER_ELEMENT))?;
            out.reserve_exact(items.len());
        }
        let mut deep = 0u64;
        // What appending one element costs, the same for every element.
        let append = if c.transform.is_some() {
            table::MAP_APPEND
        } else {
            table::FILTER_APPEND
        }
        .saturating_add(self.alloc(table::alloc_list(1)));
        for i in 0..items.len() {
            self.loop_tick(i)?;
            if !self.keeps(c, items, i)? {
                continue;
            }
            if out.len() == out.capacity() {
                let grown = (out.capacity() * 2).max(4);
                self.build((grown as u64).saturating_mul(table::BUILT_PER_ELEMENT))?;
                out.reserve_exact(grown - out.len());
            }
            self.charge(append)?;
            let element = if let Some(transform) = c.transform {
                self.bound(c, items, i, transform)?
            } else {
                items.item(i)
            };
            deep = deep.saturating_add(element.deep_size()).saturating_add(1);
            out.push(element);
        }
        Ok(Value::List(Arc::new(ListValue::with_deep(out, deep))))
    }

    /// `transformMap` (the same keys, transformed values) and `transformMapEntry` (the entries
    /// of the one-entry maps the transform builds; a repeated key is an error).
    fn collect_map(&mut self, c: &'p Comprehension, items: &Range<'_>) -> Eval {
        self.charge(table::TRANSFORM_MAP_FIXED)?;
        self.build(table::BUILT_PER_CONTAINER)?;
        let transform = c
            .transform
            .ok_or_else(|| error("the macro needs a transform"))?;
        let mut pairs = Vec::new();
        for i in 0..items.len() {
            self.loop_tick(i)?;
            if !self.keeps(c, items, i)? {
                continue;
            }
            let value = self.bound(c, items, i, transform)?;
            if c.kind == MacroKind::TransformMap {
                self.pay_insert(table::TRANSFORM_MAP_INSERT, 1)?;
                pairs.push((items.entry(i).0, value));
                continue;
            }
            let Value::Map(entry) = value else {
                return Err(no_overload("transformMapEntry", &[&value]));
            };
            let n = entry.len() as u64;
            self.pay_insert(table::TRANSFORM_MAP_INSERT.saturating_mul(n), n)?;
            pairs.extend(
                entry
                    .entries()
                    .iter()
                    .map(|(k, v)| (k.to_value(), v.clone())),
            );
        }
        self.charge_map_keys(&pairs)?;
        MapValue::from_entries(pairs)
            .map(|m| Value::Map(Arc::new(m)))
            .map_err(|e| error(format!("transformMapEntry: {e}")))
    }

    /// `sortBy`: the key of every element, then the elements in the order of their keys.
    fn sort_by(&mut self, c: &'p Comprehension, items: &Range<'_>) -> Eval {
        let (Range::List(list), Some(key)) = (items, c.transform) else {
            return Err(error("sortBy needs a list and a key expression"));
        };
        self.charge(table::MAP_FILTER_FIXED)?;
        let mut keys = Vec::with_capacity(list.len());
        for i in 0..list.len() {
            self.loop_tick(i)?;
            self.pay_append(table::MAP_APPEND, 1)?;
            keys.push(self.bound(c, items, i, key)?);
        }
        sort_by_keys(self, list, &keys)
    }

    /// `optMap` and `optFlatMap`: the transform of the optional's value, if it has one.
    fn opt_map(&mut self, c: &'p Comprehension, range: &Value) -> Eval {
        let Value::Optional(inner) = range else {
            return Err(no_overload(c.kind.name(), &[range]));
        };
        self.charge(table::OPT_MAP)?;
        let (Some(value), Some(transform)) = (inner, c.transform) else {
            return Ok(Value::Optional(None));
        };
        self.locals.push((&c.var, (**value).clone()));
        let result = self.eval(transform);
        self.locals.pop();
        let result = result?;
        match c.kind {
            MacroKind::OptMap => {
                let made = Value::optional_of(result);
                self.count_optional(&made)?;
                Ok(made)
            }
            _ => match result {
                optional @ Value::Optional(_) => Ok(optional),
                other => Err(no_overload("optFlatMap", &[&other])),
            },
        }
    }

    pub(crate) fn loop_tick(&mut self, i: usize) -> Result<(), Fault> {
        if i % LOOP_DEADLINE_EVERY == LOOP_DEADLINE_EVERY - 1 {
            self.meter.check_deadline()?;
        }
        Ok(())
    }
}
