//! The lists extension (`slice`, `flatten`, `distinct`, `sort`, `reverse`, `lists.range`, and
//! the sorting behind `sortBy`), the sets extension (`sets.contains`, `sets.equivalent`,
//! `sets.intersects`), and the list functions of optional types (`first`, `last`,
//! `optional.unwrap`, `unwrapOpt`).
//!
//! Every result is charged before it is built: `lists.range(n)` pays for its `n` elements
//! before allocating one (cel-go allocated first, cel-go #1281). Set relations and `distinct`
//! are priced as the membership tests (`x in list`) they are made of.

use std::cmp::Ordering;
use std::sync::Arc;

use super::interp::{Eval, Fault, Interp, error, no_overload};
use super::meter::Stop;
use super::value::{ListValue, TypeValue, Value};
use crate::cost::table;

/// Whether `sort` can order values of this type.
fn sortable(t: TypeValue) -> bool {
    matches!(
        t,
        TypeValue::Int
            | TypeValue::Uint
            | TypeValue::Double
            | TypeValue::Bool
            | TypeValue::String
            | TypeValue::Bytes
            | TypeValue::Timestamp
            | TypeValue::Duration
    )
}

/// Sorts `list` by `keys` (one per element, all of one orderable type), charging the
/// comparisons and the new list first.
pub(crate) fn sort_by_keys(interp: &mut Interp<'_>, list: &[Value], keys: &[Value]) -> Eval {
    if list.len() != keys.len() {
        return Err(error("sortBy: every element needs one key"));
    }
    let Some(first) = keys.first() else {
        return Ok(Value::list(list.to_vec()));
    };
    let kind = first.type_value();
    interp.charge(table::CALL.saturating_add(keys.len() as u64))?;
    let mut longest = 0u64;
    for key in keys {
        if !sortable(kind) || key.type_value() != kind {
            return Err(error(
                "sort: the elements must be of one type among int, uint, double, bool, string, \
                 bytes, timestamp and duration",
            ));
        }
        if matches!(key, Value::String(_) | Value::Bytes(_)) {
            longest = longest.max(key.cost_size());
        }
    }
    let n = keys.len() as u64;
    let compare = table::compare_sized(longest, longest).max(table::CALL);
    interp.pay_new_list(table::sort(n, compare), n)?;
    let mut order: Vec<usize> = (0..list.len()).collect();
    // The charge above paid for every comparison, but the comparisons may be of long strings
    // that are one shared value (a list of 50,000 references to two 2 MiB strings): each is
    // counted as work as it is made, so the deadline is read between them.
    let meter = &mut interp.meter;
    merge_sort(&mut order, |a, b| {
        meter.note_work(compare)?;
        Ok::<_, Stop>(keys[a].cel_cmp(&keys[b]).unwrap_or(Ordering::Equal))
    })?;
    Ok(Value::list(
        order.into_iter().map(|i| list[i].clone()).collect(),
    ))
}

/// Sorts `order` stably by `cmp`, which may stop the sort: a bottom-up merge sort, at most
/// `n·⌈log₂ n⌉` comparisons (what [`table::sort`] charges), each of which may fail.
fn merge_sort<E>(
    order: &mut Vec<usize>,
    mut cmp: impl FnMut(usize, usize) -> Result<Ordering, E>,
) -> Result<(), E> {
    let n = order.len();
    let mut merged = vec![0; n];
    let mut width = 1;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j, mut k) = (start, mid, start);
            while i < mid && j < end {
                // Ties keep the left run's element first: the sort is stable.
                if cmp(order[j], order[i])? == Ordering::Less {
                    merged[k] = order[j];
                    j += 1;
                } else {
                    merged[k] = order[i];
                    i += 1;
                }
                k += 1;
            }
            merged[k..k + (mid - i)].copy_from_slice(&order[i..mid]);
            k += mid - i;
            merged[k..end].copy_from_slice(&order[j..end]);
            start = end;
        }
        std::mem::swap(order, &mut merged);
        width *= 2;
    }
    Ok(())
}

impl Interp<'_> {
    /// A lists-extension (or optional-types) member call on a list receiver.
    pub(crate) fn list_member(
        &mut self,
        function: &str,
        list: &[Value],
        args: &[Value],
    ) -> Option<Eval> {
        let n = list.len() as u64;
        Some(match (function, args) {
            ("slice", [Value::Int(start), Value::Int(end)]) => self.slice(list, *start, *end),
            ("flatten", []) => self.flatten(list, 1),
            ("flatten", [Value::Int(depth)]) => self.flatten(list, *depth),
            ("distinct", []) => self.distinct(list),
            ("sort", []) => sort_by_keys(self, list, list),
            ("reverse", []) => self
                .pay_new_list(table::CALL, n)
                .map(|()| Value::list(list.iter().rev().cloned().collect())),
            ("first" | "last", []) => {
                let end = if function == "first" {
                    list.first()
                } else {
                    list.last()
                };
                let made = Value::Optional(end.cloned().map(Arc::new));
                self.charge(table::CALL)
                    .and_then(|()| self.count_optional(&made))
                    .map(|()| made)
            }
            ("unwrapOpt", []) => self.unwrap(list),
            ("join", []) => self.join(list, ""),
            ("join", [Value::String(sep)]) => self.join(list, sep),
            _ => return None,
        })
    }

    /// The global functions of the lists, sets and optional-types extensions.
    pub(crate) fn list_global(&mut self, function: &str, args: &[Value]) -> Option<Eval> {
        Some(match (function, args) {
            ("lists.range", [Value::Int(n)]) => self.range(*n),
            ("sets.contains", [Value::List(a), Value::List(b)]) => {
                self.contains_all(a, b).map(Value::Bool)
            }
            ("sets.equivalent", [Value::List(a), Value::List(b)]) => {
                self.equivalent(a, b).map(Value::Bool)
            }
            ("sets.intersects", [Value::List(a), Value::List(b)]) => {
                self.intersects(a, b).map(Value::Bool)
            }
            ("optional.unwrap", [Value::List(list)]) => self.unwrap(list),
            _ => return None,
        })
    }

    /// `lists.range(n)`: `[0, …, n - 1]`, paid for before it is built (empty for `n ≤ 0`).
    fn range(&mut self, n: i64) -> Eval {
        let len = u64::try_from(n).unwrap_or(0);
        self.pay_new_list(table::CALL.saturating_add(table::LIST_CREATE), len)?;
        Ok(Value::list((0..n.max(0)).map(Value::Int).collect()))
    }

    fn slice(&mut self, list: &[Value], start: i64, end: i64) -> Eval {
        if start < 0 || end < 0 {
            return Err(error(format!(
                "cannot slice({start}, {end}), negative indexes not supported"
            )));
        }
        if start > end {
            return Err(error(format!(
                "cannot slice({start}, {end}), start index must be less than or equal to end index"
            )));
        }
        if end as u64 > list.len() as u64 {
            return Err(error(format!(
                "cannot slice({start}, {end}), list is length {}",
                list.len()
            )));
        }
        let len = (end - start) as u64;
        self.pay_new_list(table::CALL, len)?;
        Ok(Value::list(list[start as usize..end as usize].to_vec()))
    }

    /// `flatten([depth])`: lists inside the list, `depth` levels down (1 by default), are
    /// replaced by their elements. Every element visited is charged, then the result.
    fn flatten(&mut self, list: &[Value], depth: i64) -> Eval {
        if depth < 0 {
            return Err(error("flatten: level must be non-negative"));
        }
        self.charge(table::CALL)?;
        let len = self.flat_len(list, depth)?;
        self.pay_new_list(0, len)?;
        let mut out = Vec::with_capacity(len as usize);
        push_flat(list, depth, &mut out);
        Ok(Value::list(out))
    }

    fn flat_len(&mut self, list: &[Value], depth: i64) -> Result<u64, Fault> {
        self.charge(list.len() as u64)?;
        let mut len = 0u64;
        for item in list {
            len += match item {
                Value::List(inner) if depth > 0 => self.flat_len(inner, depth - 1)?,
                _ => 1,
            };
        }
        Ok(len)
    }

    /// `distinct()`: the first of every group of equal elements, in order; each element is
    /// tested against those kept so far, as `x in kept`.
    fn distinct(&mut self, list: &[Value]) -> Eval {
        self.pay_new_list(table::CALL, list.len() as u64)?;
        let mut kept: Vec<Value> = Vec::new();
        let mut deep = 0u64;
        for (i, item) in list.iter().enumerate() {
            self.loop_tick(i)?;
            if !self.list_contains(&kept, deep, item)? {
                deep = deep.saturating_add(item.deep_size()).saturating_add(1);
                kept.push(item.clone());
            }
        }
        Ok(Value::List(Arc::new(ListValue::with_deep(kept, deep))))
    }

    /// Whether every element of `sub` is in `list` (`sets.contains`).
    fn contains_all(&mut self, list: &ListValue, sub: &[Value]) -> Result<bool, Fault> {
        self.charge(table::CALL)?;
        for (i, item) in sub.iter().enumerate() {
            self.loop_tick(i)?;
            if !self.list_contains(list, list.deep(), item)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether each list contains the other (`sets.equivalent`).
    fn equivalent(&mut self, a: &ListValue, b: &ListValue) -> Result<bool, Fault> {
        Ok(self.contains_all(a, b)? && self.contains_all(b, a)?)
    }

    /// Whether some element of `a` is in `b` (`sets.intersects`).
    fn intersects(&mut self, a: &[Value], b: &ListValue) -> Result<bool, Fault> {
        self.charge(table::CALL)?;
        for (i, item) in a.iter().enumerate() {
            self.loop_tick(i)?;
            if self.list_contains(b, b.deep(), item)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `optional.unwrap(list)` and `list.unwrapOpt()`: the values of the optionals that have
    /// one.
    fn unwrap(&mut self, list: &[Value]) -> Eval {
        let n = list.len() as u64;
        self.pay_new_list(table::CALL.saturating_add(n), n)?;
        let mut out = Vec::with_capacity(list.len());
        for item in list {
            match item {
                Value::Optional(Some(v)) => out.push((**v).clone()),
                Value::Optional(None) => {}
                other => return Err(no_overload("optional.unwrap", &[other])),
            }
        }
        Ok(Value::list(out))
    }
}

fn push_flat(list: &[Value], depth: i64, out: &mut Vec<Value>) {
    for item in list {
        match item {
            Value::List(inner) if depth > 0 => push_flat(inner, depth - 1, out),
            other => out.push(other.clone()),
        }
    }
}
