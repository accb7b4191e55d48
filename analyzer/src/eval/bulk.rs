//! The operations whose work grows with their operands: deep equality and `in`, concatenation,
//! copies and conversions of long strings. The caller charges each one before it runs (by its
//! operands' sizes, known in O(1)); here the work is cut into chunks so that the deadline is read
//! inside one large operation, not only between operations.

use std::sync::Arc;

use super::meter::{Meter, Stop};
use super::value::Value;

/// Bytes copied, compared or scanned between two reads of the deadline (tens of microseconds).
pub(crate) const CHUNK: usize = 64 * 1024;

/// Elements, entries and scalars compared between two reads of the deadline.
const STEPS: u64 = 4096;

/// A deep comparison in progress: counts its steps and reads the deadline every [`STEPS`].
struct Walk<'m, 'a> {
    meter: &'m mut Meter<'a>,
    steps: u64,
}

impl Walk<'_, '_> {
    fn step(&mut self, n: u64) -> Result<(), Stop> {
        self.steps = self.steps.saturating_add(n);
        if self.steps >= STEPS {
            self.steps = 0;
            self.meter.check_deadline()?;
        }
        Ok(())
    }

    /// CEL equality, as [`Value::cel_eq`], reading the deadline as it goes.
    fn equal(&mut self, a: &Value, b: &Value) -> Result<bool, Stop> {
        self.step(1)?;
        match (a, b) {
            (Value::String(x), Value::String(y)) => self.bytes(x.as_bytes(), y.as_bytes()),
            (Value::Bytes(x), Value::Bytes(y)) => self.bytes(x, y),
            (Value::List(x), Value::List(y)) => {
                if x.len() != y.len() {
                    return Ok(false);
                }
                for (p, q) in x.iter().zip(y.iter()) {
                    if !self.equal(p, q)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            (Value::Map(x), Value::Map(y)) => {
                if x.len() != y.len() {
                    return Ok(false);
                }
                for (key, value) in x.entries() {
                    self.step(1)?;
                    let Some(other) = y.get(&key.to_value()) else {
                        return Ok(false);
                    };
                    if !self.equal(value, other)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            _ => Ok(a.cel_eq(b)),
        }
    }

    fn bytes(&mut self, x: &[u8], y: &[u8]) -> Result<bool, Stop> {
        if x.len() != y.len() {
            return Ok(false);
        }
        for (p, q) in x.chunks(CHUNK).zip(y.chunks(CHUNK)) {
            if p != q {
                return Ok(false);
            }
            self.step(STEPS * p.len() as u64 / CHUNK as u64)?;
        }
        Ok(true)
    }
}

/// `a == b` by CEL's rules, reading the deadline inside long comparisons.
///
/// Scalars and strings or bytes shorter than a chunk are compared at once: a walk over them would
/// take fewer than [`STEPS`] steps and so never read the deadline (the common `field == 'literal'`
/// of a filter pays no walk).
#[inline]
pub(crate) fn equal(a: &Value, b: &Value, meter: &mut Meter<'_>) -> Result<bool, Stop> {
    match (a, b) {
        (Value::String(x), Value::String(y)) if x.len().min(y.len()) < CHUNK => Ok(x == y),
        (Value::Bytes(x), Value::Bytes(y)) if x.len().min(y.len()) < CHUNK => Ok(x == y),
        (Value::String(_), Value::String(_))
        | (Value::Bytes(_), Value::Bytes(_))
        | (Value::List(_) | Value::Map(_), _)
        | (_, Value::List(_) | Value::Map(_)) => Walk { meter, steps: 0 }.equal(a, b),
        _ => Ok(a.cel_eq(b)),
    }
}

/// `x in items`, reading the deadline inside long lists and long comparisons.
pub(crate) fn contains_item(
    items: &[Value],
    x: &Value,
    meter: &mut Meter<'_>,
) -> Result<bool, Stop> {
    let mut walk = Walk { meter, steps: 0 };
    for item in items {
        if walk.equal(x, item)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether `a` and `b` hold the same bytes, reading the deadline between chunks.
pub(crate) fn same_bytes(a: &[u8], b: &[u8], meter: &mut Meter<'_>) -> Result<bool, Stop> {
    Walk { meter, steps: 0 }.bytes(a, b)
}

/// Concatenations up to this many bytes are assembled in the meter's buffer (see [`join_str`]).
const SMALL_JOIN: usize = 256;

/// `a + b` on strings, copied a chunk at a time.
pub(crate) fn join_str(a: &str, b: &str, meter: &mut Meter<'_>) -> Result<Arc<str>, Stop> {
    if a.len() + b.len() <= SMALL_JOIN {
        // One allocation, the shared one: the two parts are put side by side in the meter's
        // buffer and copied from there (a new `String` would be a second allocation).
        let scratch = &mut meter.scratch;
        scratch.clear();
        scratch.push_str(a);
        scratch.push_str(b);
        return Ok(Arc::from(scratch.as_str()));
    }
    let mut joined = String::with_capacity(a.len() + b.len());
    for part in [a, b] {
        let mut rest = part;
        while !rest.is_empty() {
            let mut end = rest.len().min(CHUNK);
            while !rest.is_char_boundary(end) {
                end += 1;
            }
            joined.push_str(&rest[..end]);
            rest = &rest[end..];
            if !rest.is_empty() {
                meter.check_deadline()?;
            }
        }
    }
    Ok(joined.into())
}

/// `a + b` on bytes (and `bytes(s)` with an empty `b`), copied a chunk at a time.
pub(crate) fn join_bytes(a: &[u8], b: &[u8], meter: &mut Meter<'_>) -> Result<Arc<[u8]>, Stop> {
    let mut joined = Vec::with_capacity(a.len() + b.len());
    for part in [a, b] {
        for (i, piece) in part.chunks(CHUNK).enumerate() {
            if i > 0 {
                meter.check_deadline()?;
            }
            joined.extend_from_slice(piece);
        }
    }
    Ok(joined.into())
}

/// `a + b` on lists, cloned a chunk of elements at a time.
pub(crate) fn join_list(
    a: &[Value],
    b: &[Value],
    meter: &mut Meter<'_>,
) -> Result<Vec<Value>, Stop> {
    let mut joined = Vec::with_capacity(a.len() + b.len());
    for part in [a, b] {
        for (i, piece) in part.chunks(CHUNK / 16).enumerate() {
            if i > 0 {
                meter.check_deadline()?;
            }
            joined.extend_from_slice(piece);
        }
    }
    Ok(joined)
}

/// `string(b)`: the bytes as a string when they are UTF-8, validated and copied a chunk at a
/// time; `None` when they are not UTF-8.
pub(crate) fn utf8(bytes: &[u8], meter: &mut Meter<'_>) -> Result<Option<Arc<str>>, Stop> {
    let mut text = String::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        let mut end = rest.len().min(CHUNK);
        let valid = loop {
            match std::str::from_utf8(&rest[..end]) {
                Ok(valid) => break valid,
                // A character cut by the chunk's end: the chunk stops before it.
                Err(e) if e.error_len().is_none() && end < rest.len() && e.valid_up_to() > 0 => {
                    end = e.valid_up_to();
                }
                Err(_) => return Ok(None),
            }
        };
        if valid.is_empty() {
            return Ok(None);
        }
        text.push_str(valid);
        rest = &rest[valid.len()..];
        if !rest.is_empty() {
            meter.check_deadline()?;
        }
    }
    Ok(Some(text.into()))
}

/// The number of code points of `s` (the bytes that do not continue a character), counted a
/// chunk at a time.
pub(crate) fn char_count(s: &str, meter: &mut Meter<'_>) -> Result<usize, Stop> {
    if s.len() <= CHUNK {
        return Ok(s.chars().count());
    }
    let mut count = 0;
    for (i, piece) in s.as_bytes().chunks(CHUNK).enumerate() {
        if i > 0 {
            meter.check_deadline()?;
        }
        count += piece.iter().filter(|&&b| (b as i8) >= -0x40).count();
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::meter::{Limits, ManualClock};
    use std::time::Duration;

    fn stepping() -> Limits {
        // A clock that passes the deadline at its second read.
        Limits::default().with_clock(Arc::new(ManualClock::stepping(Duration::from_secs(1))))
    }

    #[test]
    fn long_comparisons_read_the_deadline() {
        let limits = stepping();
        let mut meter = Meter::new(&limits);
        let long = Value::string(&"a".repeat(4 * CHUNK));
        let other = Value::string(&"a".repeat(4 * CHUNK));
        assert!(matches!(
            equal(&long, &other, &mut meter),
            Err(Stop::Deadline { .. })
        ));
        let limits = stepping();
        let mut meter = Meter::new(&limits);
        let list = Value::list(vec![Value::Int(1); 3 * STEPS as usize]);
        assert!(matches!(
            equal(&list, &list.clone(), &mut meter),
            Err(Stop::Deadline { .. })
        ));
    }

    #[test]
    fn comparisons_at_once_and_walked_agree_around_the_chunk() {
        // Lengths on both sides of the cut between comparing at once and walking, equal and
        // differing in their last byte, as strings and as bytes.
        let limits = Limits::default();
        let mut meter = Meter::new(&limits);
        for n in [CHUNK - 1, CHUNK, CHUNK + 1] {
            for m in [CHUNK - 1, CHUNK, CHUNK + 1] {
                let a = "a".repeat(n);
                for last in ['a', 'b'] {
                    let mut b = "a".repeat(m - 1);
                    b.push(last);
                    let same = a == b;
                    let (x, y) = (Value::string(&a), Value::string(&b));
                    assert_eq!(
                        equal(&x, &y, &mut meter),
                        Ok(same),
                        "strings {n} {m} {last}"
                    );
                    let (x, y) = (
                        Value::Bytes(Arc::from(a.as_bytes())),
                        Value::Bytes(Arc::from(b.as_bytes())),
                    );
                    assert_eq!(equal(&x, &y, &mut meter), Ok(same), "bytes {n} {m} {last}");
                }
            }
        }
        // Across kinds, and scalars, as CEL's equality says.
        let text = Value::string("1");
        assert_eq!(equal(&text, &Value::Int(1), &mut meter), Ok(false));
        assert_eq!(equal(&Value::Int(1), &Value::Uint(1), &mut meter), Ok(true));
        assert_eq!(
            equal(&Value::list(vec![text.clone()]), &text, &mut meter),
            Ok(false)
        );
    }

    #[test]
    fn chunked_copies_keep_their_content() {
        let limits = Limits::default();
        let mut meter = Meter::new(&limits);
        let a = "é".repeat(CHUNK);
        let b = "xé".repeat(CHUNK / 3);
        let joined = join_str(&a, &b, &mut meter).unwrap();
        assert_eq!(&*joined, format!("{a}{b}"));
        let text = utf8(joined.as_bytes(), &mut meter).unwrap().unwrap();
        assert_eq!(&*text, &*joined);
        assert_eq!(
            char_count(&joined, &mut meter).unwrap(),
            joined.chars().count()
        );
        let mut invalid = joined.as_bytes().to_vec();
        invalid.push(0xFF);
        assert_eq!(utf8(&invalid, &mut meter).unwrap(), None);
        let cut = &joined.as_bytes()[..joined.len() - 1];
        assert_eq!(utf8(cut, &mut meter).unwrap(), None);
        let bytes = join_bytes(a.as_bytes(), b.as_bytes(), &mut meter).unwrap();
        assert_eq!(&*bytes, joined.as_bytes());
        assert!(same_bytes(&bytes, joined.as_bytes(), &mut meter).unwrap());
    }

    #[test]
    fn deep_equality_agrees_with_cel_eq() {
        let limits = Limits::default();
        let mut meter = Meter::new(&limits);
        let values = [
            Value::list(vec![Value::Int(1), Value::string("a")]),
            Value::list(vec![Value::Uint(1), Value::string("a")]),
            Value::list(vec![Value::Int(1), Value::string("b")]),
            Value::list(vec![Value::Int(1)]),
            Value::Double(1.0),
            Value::Int(1),
        ];
        for a in &values {
            for b in &values {
                assert_eq!(equal(a, b, &mut meter).unwrap(), a.cel_eq(b), "{a} == {b}");
            }
        }
    }
}
