//! Runtime values of the evaluator: cheap to clone (every aggregate sits behind an `Arc`), with
//! CEL's heterogeneous numeric equality and ordering, and a JSON mapping in both directions.
//!
//! Events are bound once and shared by every evaluation, so a `Value` never owns a deep copy of
//! anything it did not build itself.
//!
//! Every value knows its *deep size* in O(1): one per scalar, one per byte of a string or bytes
//! value, and for a list or map the sum over its elements (entries) plus one each, computed once
//! when it is built. Shared structure counts every time it is reachable, because a comparison
//! walks it every time: `[l, l]` is twice as deep as `l`. The meter prices deep equality and
//! `in` by it before the walk.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use super::map::{Key, MapValue};
use super::time::{Duration, Timestamp};

/// A CEL value.
#[derive(Clone, Debug)]
pub enum Value {
    /// `null`.
    Null,
    /// `bool`.
    Bool(bool),
    /// `int`.
    Int(i64),
    /// `uint`.
    Uint(u64),
    /// `double`.
    Double(f64),
    /// `string`.
    String(Arc<str>),
    /// `bytes`.
    Bytes(Arc<[u8]>),
    /// `list(dyn)`.
    List(Arc<ListValue>),
    /// `map(dyn, dyn)`.
    Map(Arc<MapValue>),
    /// `google.protobuf.Timestamp`.
    Timestamp(Timestamp),
    /// `google.protobuf.Duration`.
    Duration(Duration),
    /// A type value, such as the result of `type(x)` or the identifier `int`.
    Type(TypeValue),
    /// `optional_type`: a value, or none (the `optional` extension).
    Optional(Option<Arc<Value>>),
}

/// The elements of a list value, with their deep size.
#[derive(Clone, Debug, Default)]
pub struct ListValue {
    items: Vec<Value>,
    deep: u64,
}

impl ListValue {
    /// A list of `items`.
    pub fn new(items: Vec<Value>) -> Self {
        let deep = items.iter().fold(0u64, |deep, item| {
            deep.saturating_add(item.deep_size()).saturating_add(1)
        });
        Self { items, deep }
    }

    /// A list of `items` whose deep size the caller already knows (the sum of two lists', or
    /// counted while the items were made), so building it is not a second pass.
    pub(crate) fn with_deep(items: Vec<Value>, deep: u64) -> Self {
        Self { items, deep }
    }

    /// The elements.
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// The deep size of the elements together (see [`Value::deep_size`]).
    pub(crate) fn deep(&self) -> u64 {
        self.deep
    }
}

impl std::ops::Deref for ListValue {
    type Target = [Value];

    fn deref(&self) -> &[Value] {
        &self.items
    }
}

impl FromIterator<Value> for ListValue {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Self {
        Self::new(iter.into_iter().collect())
    }
}

/// The type values CEL can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeValue {
    /// `null_type`.
    Null,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `list`.
    List,
    /// `map`.
    Map,
    /// `type`.
    Type,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// `google.protobuf.Duration`.
    Duration,
    /// `optional_type`.
    Optional,
}

impl TypeValue {
    /// The name CEL's `type()` gives this type.
    pub fn name(self) -> &'static str {
        match self {
            TypeValue::Null => "null_type",
            TypeValue::Bool => "bool",
            TypeValue::Int => "int",
            TypeValue::Uint => "uint",
            TypeValue::Double => "double",
            TypeValue::String => "string",
            TypeValue::Bytes => "bytes",
            TypeValue::List => "list",
            TypeValue::Map => "map",
            TypeValue::Type => "type",
            TypeValue::Timestamp => "google.protobuf.Timestamp",
            TypeValue::Duration => "google.protobuf.Duration",
            TypeValue::Optional => "optional_type",
        }
    }

    /// The type value a (possibly qualified) identifier names, if any.
    pub fn from_name(name: &str) -> Option<TypeValue> {
        Some(match name {
            "null_type" => TypeValue::Null,
            "bool" => TypeValue::Bool,
            "int" => TypeValue::Int,
            "uint" => TypeValue::Uint,
            "double" => TypeValue::Double,
            "string" => TypeValue::String,
            "bytes" => TypeValue::Bytes,
            "list" => TypeValue::List,
            "map" => TypeValue::Map,
            "type" => TypeValue::Type,
            "google.protobuf.Timestamp" => TypeValue::Timestamp,
            "google.protobuf.Duration" => TypeValue::Duration,
            "optional_type" => TypeValue::Optional,
            _ => return None,
        })
    }
}

/// Bytes of a value an error message quotes.
const BRIEF: usize = 64;

/// `text` cut to at most 64 bytes (at a character boundary) with an ellipsis, so that an error
/// about a 16 KiB string does not carry the whole string.
pub(crate) fn brief(text: &str) -> String {
    match cut(text) {
        Some(head) => format!("{head}…"),
        None => text.to_owned(),
    }
}

/// `text` quoted as a CEL string of at most about 64 bytes (then an ellipsis), escaped as it is
/// written, so quoting a string of megabytes costs no more than quoting its first 64 bytes.
///
/// Written out rather than with `{:?}`: the standard library's escaping looks every character up
/// in Unicode's printable tables, which took 0.5–2 µs a character outside ASCII (an error about
/// 15 emoji cost 31 µs on a loaded machine), and a filter can raise an error on every step of an
/// accepted loop (`int(s) == 1 || …`, a parse error absorbed by `||`): an error message has to
/// cost about as much as the unit its call is charged, whatever the characters.
pub(crate) fn brief_quoted(text: &str) -> String {
    let mut out = String::with_capacity(BRIEF + 16);
    out.push('"');
    let head = cut(text).unwrap_or(text);
    let mut cut = head.len() < text.len();
    if head
        .bytes()
        .all(|b| matches!(b, b' '..=b'~') && b != b'"' && b != b'\\')
    {
        // Plain ASCII, the usual case: nothing to escape, one copy.
        out.push_str(head);
    } else {
        cut = false;
        for c in text.chars() {
            if out.len() > BRIEF {
                cut = true;
                break;
            }
            push_escaped(&mut out, c);
        }
    }
    out.push('"');
    if cut {
        out.push('…');
    }
    out
}

/// One character of a quoted string: quotes, backslashes and the common controls as their
/// escapes, other control characters and the invisible format characters that could disguise
/// a message on a terminal (bidirectional overrides, zero-width characters, the byte-order mark)
/// as `\u{…}`, everything else as it is.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\0' => out.push_str("\\0"),
        c if c.is_control()
            || matches!(
                c,
                '\u{ad}'
                    | '\u{61c}'
                    | '\u{200b}'..='\u{200f}'
                    | '\u{202a}'..='\u{202e}'
                    | '\u{2060}'..='\u{2064}'
                    | '\u{2066}'..='\u{2069}'
                    | '\u{feff}'
            ) =>
        {
            // As `{:x}` writes it, without the formatting machinery.
            out.push_str("\\u{");
            let code = u32::from(c);
            let digits = (32 - code.leading_zeros()).div_ceil(4).max(1);
            for shift in (0..digits).rev() {
                let digit = (code >> (shift * 4)) & 0xf;
                out.push(char::from_digit(digit, 16).unwrap_or('0'));
            }
            out.push('}');
        }
        c => out.push(c),
    }
}

/// A value as an error message shows it: strings cut and quoted, other keys in full.
pub(crate) fn brief_value(value: &Value) -> String {
    match value {
        Value::String(s) => brief_quoted(s),
        other => brief(&other.to_string()),
    }
}

fn cut(text: &str) -> Option<&str> {
    if text.len() <= BRIEF {
        return None;
    }
    let mut end = BRIEF;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(&text[..end])
}

impl Value {
    /// A string value.
    pub fn string(s: &str) -> Value {
        Value::String(Arc::from(s))
    }

    /// A list value.
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(ListValue::new(items)))
    }

    /// The deep size (see the module documentation), in O(1).
    pub fn deep_size(&self) -> u64 {
        match self {
            Value::String(s) => s.len() as u64,
            Value::Bytes(b) => b.len() as u64,
            Value::List(l) => l.deep,
            Value::Map(m) => m.deep_size(),
            // An optional's value, as the estimator sizes it.
            Value::Optional(Some(v)) => v.deep_size(),
            _ => 1,
        }
    }

    /// The type of this value.
    pub fn type_value(&self) -> TypeValue {
        match self {
            Value::Null => TypeValue::Null,
            Value::Bool(_) => TypeValue::Bool,
            Value::Int(_) => TypeValue::Int,
            Value::Uint(_) => TypeValue::Uint,
            Value::Double(_) => TypeValue::Double,
            Value::String(_) => TypeValue::String,
            Value::Bytes(_) => TypeValue::Bytes,
            Value::List(_) => TypeValue::List,
            Value::Map(_) => TypeValue::Map,
            Value::Timestamp(_) => TypeValue::Timestamp,
            Value::Duration(_) => TypeValue::Duration,
            Value::Type(_) => TypeValue::Type,
            Value::Optional(_) => TypeValue::Optional,
        }
    }

    /// An optional holding `value`.
    pub fn optional_of(value: Value) -> Value {
        Value::Optional(Some(Arc::new(value)))
    }

    /// The size the cost table uses: bytes of a string or bytes value, elements of a list,
    /// entries of a map, 1 for anything else.
    pub fn cost_size(&self) -> u64 {
        match self {
            Value::String(s) => s.len() as u64,
            Value::Bytes(b) => b.len() as u64,
            Value::List(l) => l.len() as u64,
            Value::Map(m) => m.len() as u64,
            _ => 1,
        }
    }

    /// CEL equality (`==`): numbers compare by value across int, uint and double; values of
    /// different types are unequal; lists and maps compare element by element. Returns `None`
    /// only when a nested comparison is undefined, which CEL's heterogeneous equality never is.
    pub fn cel_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::Timestamp(a), Value::Timestamp(b)) => a == b,
            (Value::Duration(a), Value::Duration(b)) => a == b,
            (Value::Type(a), Value::Type(b)) => a == b,
            (Value::Optional(a), Value::Optional(b)) => match (a, b) {
                (None, None) => true,
                (Some(x), Some(y)) => x.cel_eq(y),
                _ => false,
            },
            (Value::List(a), Value::List(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.cel_eq(y))
            }
            (Value::Map(a), Value::Map(b)) => {
                a.len() == b.len()
                    && a.entries()
                        .iter()
                        .all(|(k, v)| b.get(&k.to_value()).is_some_and(|other| v.cel_eq(other)))
            }
            _ => numeric_cmp(self, other) == Some(Ordering::Equal),
        }
    }

    /// CEL ordering (`<` and friends); `None` when the two values cannot be ordered (different
    /// non-numeric types, NaN, or a type without an order).
    pub fn cel_cmp(&self, other: &Value) -> Option<Ordering> {
        match (self, other) {
            (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
            (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
            (Value::Bytes(a), Value::Bytes(b)) => Some(a.cmp(b)),
            (Value::Timestamp(a), Value::Timestamp(b)) => Some(a.cmp(b)),
            (Value::Duration(a), Value::Duration(b)) => Some(a.cmp(b)),
            _ => numeric_cmp(self, other),
        }
    }

    /// Whether two values may be ordered at all (same kind, or both numbers).
    pub fn orderable_with(&self, other: &Value) -> bool {
        let numeric = |v: &Value| matches!(v, Value::Int(_) | Value::Uint(_) | Value::Double(_));
        (numeric(self) && numeric(other))
            || matches!(
                (self, other),
                (Value::Bool(_), Value::Bool(_))
                    | (Value::String(_), Value::String(_))
                    | (Value::Bytes(_), Value::Bytes(_))
                    | (Value::Timestamp(_), Value::Timestamp(_))
                    | (Value::Duration(_), Value::Duration(_))
            )
    }
}

/// Compares two numbers of any of CEL's three numeric types: int with uint exactly, and a double
/// with an integer by converting the integer to double, as the CEL spec's conformance tests
/// require (`dyn(9223372036854775807) >= 9223372036854775808.0` holds).
fn numeric_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Uint(x), Value::Uint(y)) => Some(x.cmp(y)),
        (Value::Double(x), Value::Double(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Uint(y)) => Some(i128::from(*x).cmp(&i128::from(*y))),
        (Value::Uint(x), Value::Int(y)) => Some(i128::from(*x).cmp(&i128::from(*y))),
        (Value::Int(x), Value::Double(y)) => (*x as f64).partial_cmp(y),
        (Value::Uint(x), Value::Double(y)) => (*x as f64).partial_cmp(y),
        (Value::Double(x), Value::Int(y)) => x.partial_cmp(&(*y as f64)),
        (Value::Double(x), Value::Uint(y)) => x.partial_cmp(&(*y as f64)),
        _ => None,
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Uint(u) => write!(f, "{u}u"),
            Value::Double(d) => write!(f, "{d:?}"),
            Value::String(s) => write!(f, "{s:?}"),
            Value::Bytes(b) => write!(f, "b{:?}", String::from_utf8_lossy(b)),
            Value::List(l) => {
                f.write_str("[")?;
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Map(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.entries().iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {v}", k.to_value())?;
                }
                f.write_str("}")
            }
            Value::Timestamp(t) => write!(f, "timestamp({:?})", t.to_rfc3339()),
            Value::Duration(d) => write!(f, "duration({:?})", d.to_string()),
            Value::Type(t) => f.write_str(t.name()),
            Value::Optional(None) => f.write_str("optional.none()"),
            Value::Optional(Some(v)) => write!(f, "optional.of({v})"),
        }
    }
}

impl Value {
    /// Converts JSON into a value: objects become maps with string keys, integers that fit
    /// become `int` (else `uint`, else `double`), other numbers `double`.
    pub fn from_json(json: &serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::Int(i)
                } else if let Some(u) = n.as_u64() {
                    Value::Uint(u)
                } else {
                    Value::Double(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            serde_json::Value::String(s) => Value::string(s),
            serde_json::Value::Array(items) => {
                Value::list(items.iter().map(Value::from_json).collect())
            }
            serde_json::Value::Object(fields) => Value::Map(Arc::new(MapValue::from_distinct(
                fields
                    .iter()
                    .map(|(k, v)| (Key::String(Arc::from(k.as_str())), Value::from_json(v)))
                    .collect(),
            ))),
        }
    }

    /// Converts a value to JSON: bytes as standard base64, timestamps as RFC 3339, durations as
    /// seconds with an `s` suffix, type values as their names, non-finite doubles as strings,
    /// map keys as strings.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Uint(u) => serde_json::Value::from(*u),
            Value::Double(d) => serde_json::Number::from_f64(*d).map_or_else(
                || serde_json::Value::String(format!("{d}")),
                serde_json::Value::Number,
            ),
            Value::String(s) => serde_json::Value::String(s.to_string()),
            Value::Bytes(b) => serde_json::Value::String(super::base64::encode(b)),
            Value::List(l) => serde_json::Value::Array(l.iter().map(Value::to_json).collect()),
            Value::Map(m) => serde_json::Value::Object(
                m.entries()
                    .iter()
                    .map(|(k, v)| (k.json_name(), v.to_json()))
                    .collect(),
            ),
            Value::Timestamp(t) => serde_json::Value::String(t.to_rfc3339()),
            Value::Duration(d) => serde_json::Value::String(d.to_string()),
            Value::Type(t) => serde_json::Value::String(t.name().to_owned()),
            // JSON has no optionals: a value stands for itself, none for null.
            Value::Optional(None) => serde_json::Value::Null,
            Value::Optional(Some(v)) => v.to_json(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heterogeneous_numbers_compare_exactly() {
        assert!(Value::Int(1).cel_eq(&Value::Uint(1)));
        assert!(Value::Int(1).cel_eq(&Value::Double(1.0)));
        // The integer converts to double, as in the CEL spec: i64::MAX rounds up to 2^63.
        assert!(Value::Int(i64::MAX).cel_eq(&Value::Double(9.223_372_036_854_776e18)));
        assert_eq!(
            Value::Uint(u64::MAX).cel_cmp(&Value::Int(-1)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            Value::Int(2).cel_cmp(&Value::Double(2.5)),
            Some(Ordering::Less)
        );
        assert_eq!(Value::Double(f64::NAN).cel_cmp(&Value::Int(1)), None);
        assert!(!Value::Int(1).cel_eq(&Value::string("1")));
    }

    #[test]
    fn json_round_trips() {
        let json: serde_json::Value =
            serde_json::from_str(r#"{"a":[1,2.5,"x",null,true],"b":{"c":18446744073709551615}}"#)
                .unwrap();
        assert_eq!(Value::from_json(&json).to_json(), json);
    }
    #[test]
    fn quoting_escapes_as_debug_does_and_stays_brief() {
        // The characters an error may quote, beside what `{:?}` writes for them.
        for text in [
            "plain",
            "",
            "a\"b\\c\n\r\t\0",
            "\u{1}\u{1f}\u{7f}\u{85}\u{9f}",
            "\u{ad}\u{61c}\u{200b}\u{200f}\u{202a}",
            "\u{202e}\u{2060}\u{2066}\u{2069}\u{feff}",
            "é😀ü漢字",
        ] {
            assert_eq!(brief_quoted(text), format!("{text:?}"), "{text:?}");
        }
        // Cut after about 64 bytes of output, whatever the characters, with an ellipsis.
        for text in [
            "a".repeat(1000),
            "é".repeat(1000),
            "\u{1f389}".repeat(1000),
            "\u{1}".repeat(1000),
            "\"".repeat(1000),
        ] {
            let quoted = brief_quoted(&text);
            assert!(quoted.ends_with("\"…"), "{quoted}");
            assert!(
                quoted.len() <= BRIEF + 16,
                "{} bytes: {quoted}",
                quoted.len()
            );
        }
        assert_eq!(
            brief_quoted(&"a".repeat(64)),
            format!("\"{}\"", "a".repeat(64))
        );
    }
}
