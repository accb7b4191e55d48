//! An event's JSON read strictly and measured as it would be sent: one pass over the text that
//! builds the [`Value`] and, for every value, its length as compact JSON, without a round trip
//! through another representation.
//!
//! - *Duplicate keys are refused*, in the event object and at every level below it: an object
//!   with two values for one key is read differently by different readers (the first wins in
//!   some, the last in others), so a filter could be judged on a value a later consumer never
//!   sees.
//! - *Numbers count as written*: the length of their text (`1e15` is 4 bytes; a 20,000-digit
//!   number is 20,000 bytes). Where a value has no text (an event the runtime built, see
//!   [`compact_len`]), a number counts in its canonical form, the shortest text of its value.
//! - *Strings count in their canonical compact escaping*, whatever escapes the sender used: `"`
//!   and `\` and the control characters with a short escape (`\b \t \n \f \r`) count 2 bytes,
//!   other control characters 6 (`\u001f`), everything else its UTF-8 bytes, plus the quotes.
//!   The string is kept exactly, so this is the length any compact encoder writes.
//! - *Whitespace never counts.*
//! - *Nesting* is at most [`MAX_NESTING`] levels of objects and arrays, the event object being
//!   the first; deeper text is refused with that reason before any recursion could overflow.

use std::collections::HashSet;
use std::sync::Arc;

use super::event::EventError;
use super::map::{Key, MapValue};
use super::value::Value;

/// Levels of objects and arrays an event may nest, the event object itself being level 1.
pub const MAX_NESTING: usize = 64;

/// One member of the event object: its key, its value, and the value's compact JSON length.
pub(crate) struct Member {
    pub key: Arc<str>,
    pub value: Value,
    pub compact: u64,
}

/// Reads `text` as one JSON object, member by member.
pub(crate) fn read_event_object(text: &str) -> Result<Vec<Member>, EventError> {
    let mut reader = Reader {
        text: text.as_bytes(),
        at: 0,
    };
    reader.skip_whitespace();
    if reader.peek() != Some(b'{') {
        // Anything else that is valid JSON is "not an object"; invalid text says where.
        reader.value(1)?;
        reader.end()?;
        return Err(EventError::NotAnObject);
    }
    let mut members = Vec::new();
    reader.object_members(1, |key, value, compact| {
        members.push(Member {
            key,
            value,
            compact,
        });
    })?;
    reader.end()?;
    Ok(members)
}

/// Checks that `text` is one JSON value without repeated keys and nested at most
/// [`MAX_NESTING`] levels: the reading rules of events, for a document (a delivery body) that is
/// mapped to an event rather than being one.
pub fn check_json(text: &str) -> Result<(), EventError> {
    let mut reader = Reader {
        text: text.as_bytes(),
        at: 0,
    };
    reader.value(1)?;
    reader.end()
}

/// The keys of one object so far, to refuse a repeated one: compared one by one while there are
/// few (most objects), hashed past that.
#[derive(Default)]
struct Keys {
    few: Vec<Arc<str>>,
    many: HashSet<Arc<str>>,
}

impl Keys {
    const FEW: usize = 16;

    fn insert(&mut self, key: &Arc<str>) -> Result<(), EventError> {
        let repeated = if self.few.len() < Self::FEW {
            let repeated = self.few.iter().any(|k| **k == **key);
            self.few.push(key.clone());
            repeated
        } else {
            if self.many.is_empty() {
                self.many.extend(self.few.iter().cloned());
            }
            !self.many.insert(key.clone())
        };
        if repeated {
            return Err(EventError::DuplicateKey {
                key: super::value::brief(key),
            });
        }
        Ok(())
    }
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A JSON syntax error at the current position, with its line and column.
    fn error(&self, what: &str) -> EventError {
        let before = &self.text[..self.at.min(self.text.len())];
        let line = memchr::memchr_iter(b'\n', before).count() + 1;
        let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        EventError::Json(format!("{what} at line {line} column {column}"))
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), EventError> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    fn end(&mut self) -> Result<(), EventError> {
        self.skip_whitespace();
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error("trailing characters")),
        }
    }

    /// One value at nesting `depth` (the level it would open if a container): the value and
    /// its compact length.
    fn value(&mut self, depth: usize) -> Result<(Value, u64), EventError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                let (s, len) = self.string()?;
                Ok((Value::String(s), len))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'n') => self.word("null", Value::Null),
            Some(_) => Err(self.error("expected a value")),
            None => Err(self.error("EOF while parsing a value")),
        }
    }

    fn word(&mut self, word: &str, value: Value) -> Result<(Value, u64), EventError> {
        if self.text[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok((value, word.len() as u64))
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn too_deep(depth: usize) -> Result<(), EventError> {
        if depth > MAX_NESTING {
            return Err(EventError::TooDeep { limit: MAX_NESTING });
        }
        Ok(())
    }

    fn array(&mut self, depth: usize) -> Result<(Value, u64), EventError> {
        Self::too_deep(depth)?;
        self.at += 1;
        let mut items = Vec::new();
        let mut len: u64 = 2;
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok((Value::list(items), len));
        }
        loop {
            let (item, item_len) = self.value(depth + 1)?;
            items.push(item);
            len = len.saturating_add(item_len);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    len = len.saturating_add(1);
                }
                Some(b']') => {
                    self.at += 1;
                    return Ok((Value::list(items), len));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<(Value, u64), EventError> {
        let mut entries = Vec::new();
        let len = self.object_members(depth, |key, value, _| {
            entries.push((Key::String(key), value));
        })?;
        Ok((Value::Map(Arc::new(MapValue::from_distinct(entries))), len))
    }

    /// Reads an object at `depth`, giving each member to `member`; refuses repeated keys.
    /// Returns the object's compact length.
    fn object_members(
        &mut self,
        depth: usize,
        mut member: impl FnMut(Arc<str>, Value, u64),
    ) -> Result<u64, EventError> {
        Self::too_deep(depth)?;
        self.at += 1;
        let mut len: u64 = 2;
        let mut keys = Keys::default();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(len);
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a key (a string)"));
            }
            let (key, key_len) = self.string()?;
            keys.insert(&key)?;
            self.expect(b':', "expected `:`")?;
            let (value, value_len) = self.value(depth + 1)?;
            len = len.saturating_add(key_len + 1).saturating_add(value_len);
            member(key, value, value_len);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    len = len.saturating_add(1);
                }
                Some(b'}') => {
                    self.at += 1;
                    return Ok(len);
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    /// A string (at its opening quote): its contents and its canonical compact length. A string
    /// without escapes (nearly every one) is copied once, straight from the text.
    fn string(&mut self) -> Result<(Arc<str>, u64), EventError> {
        self.at += 1;
        let start = self.at;
        self.plain_run();
        if self.peek() == Some(b'"') {
            let run = &self.text[start..self.at];
            self.at += 1;
            // The run holds no byte that needs an escape, so its canonical length is its own.
            let text = std::str::from_utf8(run).unwrap_or_default();
            return Ok((Arc::from(text), run.len() as u64 + 2));
        }
        let mut out =
            String::from(std::str::from_utf8(&self.text[start..self.at]).unwrap_or_default());
        let mut len = out.len() as u64 + 2;
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok((Arc::from(out), len));
                }
                Some(b'\\') => {
                    self.at += 1;
                    let c = self.escape()?;
                    len += canonical_char_len(c);
                    out.push(c);
                }
                Some(_) => return Err(self.error("control character in a string")),
                None => return Err(self.error("EOF while parsing a string")),
            }
            let run_start = self.at;
            self.plain_run();
            let run = &self.text[run_start..self.at];
            // The text is UTF-8 and the run stops at an ASCII byte, so it is a whole slice of
            // characters.
            out.push_str(std::str::from_utf8(run).unwrap_or_default());
            len += run.len() as u64;
        }
    }

    /// Moves past the bytes a string holds as they are: up to a quote, a backslash, a control
    /// character or the end.
    fn plain_run(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(rest.len());
    }

    fn escape(&mut self) -> Result<char, EventError> {
        let Some(b) = self.peek() else {
            return Err(self.error("EOF while parsing a string"));
        };
        self.at += 1;
        Ok(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(),
            _ => return Err(self.error("invalid escape")),
        })
    }

    fn hex4(&mut self) -> Result<u32, EventError> {
        let digits = self.text.get(self.at..self.at + 4);
        let value = digits
            .and_then(|d| std::str::from_utf8(d).ok())
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|d| u32::from_str_radix(d, 16).ok());
        match value {
            Some(v) => {
                self.at += 4;
                Ok(v)
            }
            None => Err(self.error("invalid \\u escape")),
        }
    }

    fn unicode_escape(&mut self) -> Result<char, EventError> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !self.text[self.at..].starts_with(b"\\u") {
                    return Err(self.error("lone leading surrogate in a \\u escape"));
                }
                self.at += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.error("lone leading surrogate in a \\u escape"));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.error("lone trailing surrogate in a \\u escape")),
            other => other,
        };
        char::from_u32(code).ok_or_else(|| self.error("invalid \\u escape"))
    }

    /// A number: `int` when it is an integer that fits, else `uint`, else `double`; its length
    /// is its text's.
    fn number(&mut self) -> Result<(Value, u64), EventError> {
        let start = self.at;
        let mut integral = true;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("invalid number")),
        }
        if self.peek() == Some(b'.') {
            integral = false;
            self.at += 1;
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(self.error("invalid number"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integral = false;
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(self.error("invalid number"));
            }
            self.digits();
        }
        let lexeme = std::str::from_utf8(&self.text[start..self.at]).unwrap_or_default();
        let len = lexeme.len() as u64;
        if integral {
            if let Ok(i) = lexeme.parse::<i64>() {
                return Ok((Value::Int(i), len));
            }
            if let Ok(u) = lexeme.parse::<u64>() {
                return Ok((Value::Uint(u), len));
            }
        }
        match lexeme.parse::<f64>() {
            Ok(d) if d.is_finite() => Ok((Value::Double(d), len)),
            _ => Err(self.error("number out of range")),
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }
}

/// The length of `s` as a JSON string in canonical compact escaping, quotes included.
pub(crate) fn canonical_string_len(s: &str) -> u64 {
    let escapes: u64 = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0a | 0x0c | 0x0d => 1,
            0..0x20 => 5,
            _ => 0,
        })
        .sum();
    (s.len() as u64).saturating_add(escapes).saturating_add(2)
}

/// The bytes one character takes in canonical compact escaping.
fn canonical_char_len(c: char) -> u64 {
    match c {
        '"' | '\\' | '\u{8}' | '\t' | '\n' | '\u{c}' | '\r' => 2,
        '\0'..='\u{1f}' => 6,
        other => other.len_utf8() as u64,
    }
}

/// The length of a double's canonical form: the shortest text of its value, from its shortest
/// round-trip digits written either as `DIGITSeEXP` or in plain decimal, whichever is shorter.
/// No text that reads as this double is shorter.
pub(crate) fn canonical_double_len(d: f64) -> u64 {
    if !d.is_finite() {
        // Written as a string (`"NaN"`, `"Infinity"`) by `Value::to_json`.
        return canonical_string_len(&d.to_string());
    }
    let scientific = format!("{:e}", d.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let n = digits.len().max(1) as i64;
    // The value is DIGITS × 10^shift.
    let shift = exponent.parse::<i64>().unwrap_or(0) - (n - 1);
    let sign = u64::from(d.is_sign_negative());
    let exp_form = n + 1 + shift.to_string().len() as i64;
    let plain = if shift >= 0 {
        n + shift
    } else if -shift < n {
        n + 1
    } else {
        // 0.000DIGITS
        2 + (-shift - n) + n
    };
    let shortest = if shift == 0 { n } else { exp_form.min(plain) };
    sign + shortest as u64
}

/// The compact JSON length of `value` in the canonical form (numbers by their shortest text),
/// or `None` once it passes `bound`; for values that have no text of their own.
pub(crate) fn compact_len(value: &Value, bound: u64) -> Option<u64> {
    let len = match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Int(i) => i.to_string().len() as u64,
        Value::Uint(u) => u.to_string().len() as u64,
        Value::Double(d) => canonical_double_len(*d),
        Value::String(s) => canonical_string_len(s),
        Value::List(items) => {
            let mut len = 1 + items.len().max(1) as u64;
            for item in items.iter() {
                len = len.saturating_add(compact_len(item, bound)?);
                if len > bound {
                    return None;
                }
            }
            len
        }
        Value::Map(map) => {
            let mut len = 1 + map.len().max(1) as u64;
            for (key, item) in map.entries() {
                let key_len = match key {
                    Key::String(s) => canonical_string_len(s),
                    other => canonical_string_len(&other.json_name()),
                };
                len = len
                    .saturating_add(key_len + 1)
                    .saturating_add(compact_len(item, bound)?);
                if len > bound {
                    return None;
                }
            }
            len
        }
        other => serde_json::to_string(&other.to_json()).map_or(u64::MAX, |s| s.len() as u64),
    };
    (len <= bound).then_some(len)
}

/// The bytes of `text` that are not whitespace between tokens (whitespace inside strings is
/// part of them and counts).
pub(crate) fn significant_len(text: &str) -> u64 {
    let mut count: u64 = 0;
    let (mut in_string, mut escaped) = (false, false);
    for &b in text.as_bytes() {
        if in_string {
            count += 1;
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            count += 1;
            in_string = b == b'"';
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_doubles_are_their_shortest_text() {
        for (d, text) in [
            (1e15, "1e15"),
            (0.5, "0.5"),
            (123.45, "123.45"),
            (-0.0, "-0"),
            (1.5e-7, "15e-8"),
            (100.0, "1e2"),
            (1e300, "1e300"),
            (5.0, "5"),
            (-2.5e20, "-25e19"),
        ] {
            assert_eq!(canonical_double_len(d), text.len() as u64, "{d}");
            // The text reads back as the value.
            assert_eq!(text.parse::<f64>().unwrap().to_bits(), d.to_bits());
        }
    }

    #[test]
    fn values_without_text_are_measured_canonically() {
        let json = serde_json::json!({"a": [1e15, -3, "\u{1}\"x", true, null, {"k": 0.5}]});
        let value = Value::from_json(&json);
        // {"a":[1e15,-3,"\u0001\"x",true,null,{"k":0.5}]}
        let expected = r#"{"a":[1e15,-3,"\u0001\"x",true,null,{"k":0.5}]}"#.len() as u64;
        assert_eq!(compact_len(&value, u64::MAX), Some(expected));
        assert_eq!(compact_len(&value, expected - 1), None);
    }

    #[test]
    fn documents_are_checked_by_the_event_rules() {
        assert!(check_json(r#"[{"a":1},{"a":2}]"#).is_ok());
        assert!(matches!(
            check_json(r#"{"a":{"b":1,"b":2}}"#),
            Err(EventError::DuplicateKey { .. })
        ));
        let deep = format!(
            "{}{}",
            "[".repeat(MAX_NESTING + 1),
            "]".repeat(MAX_NESTING + 1)
        );
        assert_eq!(
            check_json(&deep).unwrap_err(),
            EventError::TooDeep { limit: MAX_NESTING }
        );
    }
}
