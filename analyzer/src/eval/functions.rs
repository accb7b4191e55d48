//! The standard functions: arithmetic, `size`, the string tests, `matches`, conversions,
//! `type`/`dyn`, and the timestamp and duration constructors and accessors. Each charges the cost
//! table's price before its work.

use std::sync::Arc;

use super::bulk;
use super::interp::{Eval, Fault, Interp, error, no_overload};
use super::time::{Duration, Timestamp};
use super::value::{Value, brief_quoted};
use crate::check::functions::is_time_accessor;
use crate::cost::table;
use crate::regex::CelRegex;

/// Bytes of a haystack `contains` scans between two reads of the deadline.
const SCAN_CHUNK: usize = bulk::CHUNK;

/// The longest string a conversion parses (`int(s)`, `double(s)`, `timestamp(s)`…): four times
/// the largest event text. A longer one can only have been built by the expression, and no
/// number, timestamp or duration needs more than a few dozen bytes.
pub(crate) const PARSE_MAX: usize = 64 * 1024;
use crate::syntax::{BinaryOp, NodeId};

/// Arithmetic on numbers, timestamps and durations (`+` on sequences is handled by the caller).
pub(crate) fn arithmetic(op: BinaryOp, a: &Value, b: &Value) -> Eval {
    let overflow = || error("integer overflow");
    let time = |r: Result<Value, super::time::TimeError>| r.map_err(|e| error(e.to_string()));
    match (op, a, b) {
        (BinaryOp::Add, Value::Int(x), Value::Int(y)) => {
            x.checked_add(*y).map(Value::Int).ok_or_else(overflow)
        }
        (BinaryOp::Sub, Value::Int(x), Value::Int(y)) => {
            x.checked_sub(*y).map(Value::Int).ok_or_else(overflow)
        }
        (BinaryOp::Mul, Value::Int(x), Value::Int(y)) => {
            x.checked_mul(*y).map(Value::Int).ok_or_else(overflow)
        }
        (BinaryOp::Div, Value::Int(_), Value::Int(0))
        | (BinaryOp::Div, Value::Uint(_), Value::Uint(0)) => Err(error("division by zero")),
        (BinaryOp::Rem, Value::Int(_), Value::Int(0))
        | (BinaryOp::Rem, Value::Uint(_), Value::Uint(0)) => Err(error("modulus by zero")),
        (BinaryOp::Div, Value::Int(x), Value::Int(y)) => {
            x.checked_div(*y).map(Value::Int).ok_or_else(overflow)
        }
        (BinaryOp::Rem, Value::Int(x), Value::Int(y)) => {
            x.checked_rem(*y).map(Value::Int).ok_or_else(overflow)
        }
        (BinaryOp::Add, Value::Uint(x), Value::Uint(y)) => {
            x.checked_add(*y).map(Value::Uint).ok_or_else(overflow)
        }
        (BinaryOp::Sub, Value::Uint(x), Value::Uint(y)) => {
            x.checked_sub(*y).map(Value::Uint).ok_or_else(overflow)
        }
        (BinaryOp::Mul, Value::Uint(x), Value::Uint(y)) => {
            x.checked_mul(*y).map(Value::Uint).ok_or_else(overflow)
        }
        (BinaryOp::Div, Value::Uint(x), Value::Uint(y)) => Ok(Value::Uint(x / y)),
        (BinaryOp::Rem, Value::Uint(x), Value::Uint(y)) => Ok(Value::Uint(x % y)),
        (BinaryOp::Add, Value::Double(x), Value::Double(y)) => Ok(Value::Double(x + y)),
        (BinaryOp::Sub, Value::Double(x), Value::Double(y)) => Ok(Value::Double(x - y)),
        (BinaryOp::Mul, Value::Double(x), Value::Double(y)) => Ok(Value::Double(x * y)),
        (BinaryOp::Div, Value::Double(x), Value::Double(y)) => Ok(Value::Double(x / y)),
        (BinaryOp::Add, Value::Timestamp(t), Value::Duration(d))
        | (BinaryOp::Add, Value::Duration(d), Value::Timestamp(t)) => {
            time(t.plus(*d).map(Value::Timestamp))
        }
        (BinaryOp::Sub, Value::Timestamp(t), Value::Duration(d)) => {
            time(t.minus(*d).map(Value::Timestamp))
        }
        (BinaryOp::Sub, Value::Timestamp(x), Value::Timestamp(y)) => {
            time(x.since(*y).map(Value::Duration))
        }
        (BinaryOp::Add, Value::Duration(x), Value::Duration(y)) => {
            time(x.checked_add(*y).map(Value::Duration))
        }
        (BinaryOp::Sub, Value::Duration(x), Value::Duration(y)) => {
            time(x.checked_sub(*y).map(Value::Duration))
        }
        _ => Err(no_overload(op.symbol(), &[a, b])),
    }
}

impl Interp<'_> {
    /// Evaluates a call: the receiver and arguments first (strictly, left to right), then the
    /// function. A namespaced function (`optional.of(x)`) has no receiver; `or` and `orValue`
    /// on an optional evaluate their argument only when it is needed.
    pub(crate) fn call(
        &mut self,
        id: NodeId,
        target: Option<NodeId>,
        function: &str,
        args: &[NodeId],
    ) -> Eval {
        let program = self.program;
        let (target, function) = match &program.namespaced[id as usize] {
            Some(qualified) => (None, &**qualified),
            None => (target, function),
        };
        let receiver = match target {
            Some(t) => Some(self.eval(t)?),
            None => None,
        };
        if let (Some(Value::Optional(inner)), "or" | "orValue", [arg]) = (&receiver, function, args)
        {
            return self.optional_or(function, inner.clone(), *arg);
        }
        // Every function takes at most three arguments besides its receiver; a fixed buffer
        // keeps calls free of heap allocation.
        let mut buffer = [Value::Null, Value::Null, Value::Null];
        if args.len() > buffer.len() {
            return Err(error(format!(
                "no matching overload for '{function}' with {} arguments",
                args.len()
            )));
        }
        for (slot, &arg) in buffer.iter_mut().zip(args) {
            *slot = self.eval(arg)?;
        }
        let args = &buffer[..args.len()];
        match receiver {
            Some(recv) => self.member(id, function, &recv, args),
            None => self.global_call(id, function, args),
        }
    }

    /// Global calls: the standard one-argument functions, global `matches`, and the global
    /// functions of the extensions.
    fn global_call(&mut self, id: NodeId, function: &str, args: &[Value]) -> Eval {
        if let Some(result) = self
            .optional_global(function, args)
            .or_else(|| self.list_global(function, args))
        {
            return result;
        }
        match args {
            [Value::String(s)] if function == "strings.quote" => self.quote(s),
            [x] => self.global(function, x),
            [s, pattern] if function == "matches" => self.matches(id, s, pattern),
            rest => Err(no_overload(function, &rest.iter().collect::<Vec<_>>())),
        }
    }

    /// Receiver-style calls: `s.contains(t)`, `t.getHours()`, `l.size()`, and the member
    /// functions of the extensions.
    fn member(&mut self, id: NodeId, function: &str, recv: &Value, args: &[Value]) -> Eval {
        if let Some(result) = self.standard_member(id, function, recv, args) {
            return result;
        }
        let extension = match recv {
            Value::String(s) => match (function, args) {
                ("format", [Value::List(items)]) => Some(self.format(s, items)),
                _ => self.string_member(function, s, args),
            },
            Value::List(items) => self.list_member(function, items, args),
            Value::Optional(inner) => self.optional_member(function, inner.as_ref(), args),
            _ => None,
        };
        extension.unwrap_or_else(|| {
            let mut operands = vec![recv];
            operands.extend(args);
            Err(no_overload(function, &operands))
        })
    }

    /// `s.startsWith(p)` (`prefix`) or `s.endsWith(p)`, comparing in chunks.
    fn affix(&mut self, s: &str, p: &str, prefix: bool) -> Eval {
        self.charge(table::starts_ends_with(p.len() as u64).max(table::CALL))?;
        let Some(at) = s.len().checked_sub(p.len()) else {
            return Ok(Value::Bool(false));
        };
        let part = if prefix {
            &s.as_bytes()[..p.len()]
        } else {
            &s.as_bytes()[at..]
        };
        Ok(Value::Bool(bulk::same_bytes(
            part,
            p.as_bytes(),
            &mut self.meter,
        )?))
    }

    /// The standard library's member functions.
    fn standard_member(
        &mut self,
        id: NodeId,
        function: &str,
        recv: &Value,
        args: &[Value],
    ) -> Option<Eval> {
        Some(match (function, recv, args) {
            ("contains", Value::String(s), [Value::String(t)]) => self
                .charge(table::contains(s.len() as u64, t.len() as u64).max(table::CALL))
                .and_then(|()| self.scan_contains(s, t).map(Value::Bool)),
            ("startsWith", Value::String(s), [Value::String(p)]) => self.affix(s, p, true),
            ("endsWith", Value::String(s), [Value::String(p)]) => self.affix(s, p, false),
            ("matches", _, [pattern]) => self.matches(id, recv, pattern),
            ("size", _, []) => self.global("size", recv),
            (accessor, Value::Timestamp(t), []) if is_time_accessor(accessor) => self
                .charge(table::CALL)
                .and_then(|()| timestamp_accessor(accessor, *t, None)),
            (accessor, Value::Timestamp(t), [Value::String(zone)])
                if is_time_accessor(accessor) =>
            {
                self.charge(table::CALL)
                    .and_then(|()| timestamp_accessor(accessor, *t, Some(zone)))
            }
            (accessor, Value::Duration(d), []) if is_time_accessor(accessor) => self
                .charge(table::CALL)
                .and_then(|()| duration_accessor(accessor, *d)),
            _ => return None,
        })
    }

    /// One-argument global functions: `size`, conversions, `type`, `dyn`.
    fn global(&mut self, function: &str, x: &Value) -> Eval {
        // The most frequent call first; charged as the general path below charges it.
        if let ("size", Value::String(s)) = (function, x) {
            self.charge(table::read_sized(s.len() as u64).max(table::CALL))?;
            return Ok(Value::Int(bulk::char_count(s, &mut self.meter)? as i64));
        }
        match function {
            "string" => return self.convert_to_string(x),
            "bytes" => {
                return match x {
                    Value::Bytes(_) => self.charge(table::CALL).map(|()| x.clone()),
                    Value::String(s) => {
                        self.charge_conversion(s.len() as u64)?;
                        Ok(Value::Bytes(bulk::join_bytes(
                            s.as_bytes(),
                            &[],
                            &mut self.meter,
                        )?))
                    }
                    _ => Err(no_overload(function, &[x])),
                };
            }
            _ => {}
        }
        // Counting code points and parsing read the whole string.
        match x {
            Value::String(s) if table::reads_string(function) => {
                self.charge(table::read_sized(s.len() as u64).max(table::CALL))?;
                if function == "double" {
                    let parse = self.meter.model().parse_double(s.len() as u64);
                    self.charge(parse)?;
                }
                if function == "size" {
                    return Ok(Value::Int(bulk::char_count(s, &mut self.meter)? as i64));
                }
                if s.len() > PARSE_MAX {
                    return Err(error(format!(
                        "cannot convert a string of {} bytes to {function}: at most {PARSE_MAX} are parsed",
                        s.len()
                    )));
                }
            }
            _ => self.charge(table::CALL)?,
        }
        match (function, x) {
            ("size", Value::Bytes(b)) => Ok(Value::Int(b.len() as i64)),
            ("size", Value::List(l)) => Ok(Value::Int(l.len() as i64)),
            ("size", Value::Map(m)) => Ok(Value::Int(m.len() as i64)),
            ("type", _) => Ok(Value::Type(x.type_value())),
            ("dyn", _)
            | ("bool", Value::Bool(_))
            | ("timestamp", Value::Timestamp(_))
            | ("duration", Value::Duration(_)) => Ok(x.clone()),
            ("int", _) => to_int(x),
            ("uint", _) => to_uint(x),
            ("double", _) => to_double(x),
            ("bool", Value::String(s)) => match &**s {
                "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(Value::Bool(true)),
                "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(Value::Bool(false)),
                _ => Err(error(format!("cannot convert {} to bool", brief_quoted(s)))),
            },
            ("timestamp", Value::String(s)) => Timestamp::parse(s)
                .map(Value::Timestamp)
                .map_err(|e| error(e.to_string())),
            ("timestamp", Value::Int(secs)) => Timestamp::new(*secs, 0)
                .map(Value::Timestamp)
                .map_err(|e| error(e.to_string())),
            ("duration", Value::String(s)) => Duration::parse(s)
                .map(Value::Duration)
                .map_err(|e| error(e.to_string())),
            _ => Err(no_overload(function, &[x])),
        }
    }

    /// `string(x)`: the result is built, so its length is charged as allocation.
    fn convert_to_string(&mut self, x: &Value) -> Eval {
        let text: Arc<str> = match x {
            Value::String(_) => {
                self.charge(table::CALL)?;
                return Ok(x.clone());
            }
            Value::Bytes(b) => {
                self.charge_conversion(b.len() as u64)?;
                return bulk::utf8(b, &mut self.meter)?
                    .map(Value::String)
                    .ok_or_else(|| error("invalid UTF-8 in bytes to string conversion"));
            }
            Value::Int(i) => i.to_string().into(),
            Value::Uint(u) => u.to_string().into(),
            Value::Double(d) => format_double(*d).into(),
            Value::Bool(b) => b.to_string().into(),
            Value::Timestamp(t) => t.to_rfc3339().into(),
            Value::Duration(d) => d.to_string().into(),
            Value::Type(t) => t.name().into(),
            _ => return Err(no_overload("string", &[x])),
        };
        // These results are at most a few dozen bytes, so charging right after formatting cannot
        // overshoot the limit by more than that.
        self.charge(table::CALL.saturating_add(self.alloc(table::alloc_bytes(text.len() as u64))))?;
        self.build_text(text.len() as u64)?;
        Ok(Value::String(text))
    }

    /// `s.matches(re)`: a constant pattern was compiled with the program; any other is compiled
    /// here, charged the price of the largest compilation the limits allow. The search is charged
    /// by the compiled size, and reads the deadline between chunks of `s`.
    fn matches(&mut self, id: NodeId, s: &Value, pattern: &Value) -> Eval {
        let (Value::String(s), Value::String(p)) = (s, pattern) else {
            return Err(no_overload("matches", &[s, pattern]));
        };
        let program = self.program;
        let compiled;
        let re = if let Some(re) = &program.regexes[id as usize] {
            re.as_ref()
        } else {
            self.charge(table::REGEX_COMPILE)?;
            compiled = CelRegex::new(p).map_err(|e| error(e.message()))?;
            &compiled
        };
        self.charge(table::matches(s.len() as u64, re.size()).max(table::CALL))?;
        let meter = &mut self.meter;
        re.is_match(s, || meter.check_deadline())
            .map(Value::Bool)
            .map_err(Fault::Stop)
    }

    /// `string(b)` and `bytes(s)`: one traversal, and the copy's bytes.
    fn charge_conversion(&mut self, n: u64) -> Result<(), Fault> {
        self.charge(
            table::convert_sized(n)
                .max(table::CALL)
                .saturating_add(self.alloc(table::alloc_bytes(n))),
        )?;
        self.build_text(n)
    }

    /// `s.contains(t)`, reading the deadline between windows of a long haystack.
    fn scan_contains(&mut self, s: &str, t: &str) -> Result<bool, Fault> {
        // A needle longer than the haystack is not in it: answered before the searcher is built,
        // which reads the whole needle (`''.contains(event.text)` is charged one call).
        if t.len() > s.len() {
            return Ok(false);
        }
        if s.len() <= SCAN_CHUNK || t.is_empty() {
            return Ok(memchr::memmem::find(s.as_bytes(), t.as_bytes()).is_some());
        }
        let bytes = s.as_bytes();
        let needle = t.as_bytes();
        let finder = memchr::memmem::Finder::new(needle);
        let mut start = 0;
        while start < bytes.len() {
            // Windows overlap by the needle's length so a match across a boundary is found.
            let end = (start + SCAN_CHUNK + needle.len()).min(bytes.len());
            if finder.find(&bytes[start..end]).is_some() {
                return Ok(true);
            }
            start += SCAN_CHUNK;
            self.meter.check_deadline()?;
        }
        Ok(false)
    }
}

fn to_int(x: &Value) -> Eval {
    let range = || error("integer overflow in conversion to int");
    match x {
        Value::Int(_) => Ok(x.clone()),
        Value::Uint(u) => i64::try_from(*u).map(Value::Int).map_err(|_| range()),
        // Doubles outside (-2^63, 2^63) cannot be represented, and neither can NaN.
        Value::Double(d)
            if d.is_finite() && *d > -9.223_372_036_854_776e18 && *d < 9.223_372_036_854_776e18 =>
        {
            Ok(Value::Int(d.trunc() as i64))
        }
        Value::Double(_) => Err(range()),
        Value::String(s) => s
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| error(format!("cannot convert {} to int", brief_quoted(s)))),
        Value::Timestamp(t) => Ok(Value::Int(t.seconds())),
        _ => Err(no_overload("int", &[x])),
    }
}

fn to_uint(x: &Value) -> Eval {
    let range = || error("integer overflow in conversion to uint");
    match x {
        Value::Uint(_) => Ok(x.clone()),
        Value::Int(i) => u64::try_from(*i).map(Value::Uint).map_err(|_| range()),
        Value::Double(d) if d.is_finite() && *d > -1.0 && *d < 1.844_674_407_370_955_2e19 => {
            Ok(Value::Uint(d.trunc() as u64))
        }
        Value::Double(_) => Err(range()),
        Value::String(s) => s
            .parse::<u64>()
            .map(Value::Uint)
            .map_err(|_| error(format!("cannot convert {} to uint", brief_quoted(s)))),
        _ => Err(no_overload("uint", &[x])),
    }
}

fn to_double(x: &Value) -> Eval {
    match x {
        Value::Double(_) => Ok(x.clone()),
        Value::Int(i) => Ok(Value::Double(*i as f64)),
        Value::Uint(u) => Ok(Value::Double(*u as f64)),
        Value::String(s) => parse_double(s)
            .map(Value::Double)
            .ok_or_else(|| error(format!("cannot convert {} to double", brief_quoted(s)))),
        _ => Err(no_overload("double", &[x])),
    }
}

/// Parses a double as Go's `strconv.ParseFloat` does for the usual spellings.
fn parse_double(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "Inf" | "+Inf" | "Infinity" | "+Infinity" | "inf" | "+inf" => Some(f64::INFINITY),
        "-Inf" | "-Infinity" | "-inf" => Some(f64::NEG_INFINITY),
        _ if s
            .chars()
            .any(|c| c.is_ascii_alphabetic() && c != 'e' && c != 'E') =>
        {
            None
        }
        _ => s.parse().ok(),
    }
}

/// Formats a double the way cel-go's `string(double)` does: the shortest round-trip digits, in
/// exponent form when the exponent is below -4 or at least 21.
pub(crate) fn format_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_owned();
    }
    if d.is_infinite() {
        return if d > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{d:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..21).contains(&exp) {
        format!("{d}")
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

fn timestamp_accessor(name: &str, t: Timestamp, zone: Option<&str>) -> Eval {
    let fields = t.fields(zone).map_err(|e| error(e.to_string()))?;
    let v = match name {
        "getFullYear" => fields.year,
        "getMonth" => fields.month - 1,
        "getDate" => fields.day,
        "getDayOfMonth" => fields.day - 1,
        "getDayOfWeek" => fields.day_of_week,
        "getDayOfYear" => fields.day_of_year,
        "getHours" => fields.hours,
        "getMinutes" => fields.minutes,
        "getSeconds" => fields.seconds,
        "getMilliseconds" => fields.millis,
        _ => return Err(no_overload(name, &[&Value::Timestamp(t)])),
    };
    Ok(Value::Int(v))
}

/// The duration accessors, as the CEL spec defines them: `getHours`, `getMinutes` and
/// `getSeconds` convert the whole duration (truncating toward zero), while `getMilliseconds`
/// is the milliseconds *portion* (`duration('1.234s').getMilliseconds() == 234`), signed like
/// the duration.
fn duration_accessor(name: &str, d: Duration) -> Eval {
    let nanos = d.nanos();
    let v = match name {
        "getHours" => nanos / 3_600_000_000_000,
        "getMinutes" => nanos / 60_000_000_000,
        "getSeconds" => nanos / 1_000_000_000,
        "getMilliseconds" => nanos % 1_000_000_000 / 1_000_000,
        _ => return Err(no_overload(name, &[&Value::Duration(d)])),
    };
    Ok(Value::Int(v))
}
