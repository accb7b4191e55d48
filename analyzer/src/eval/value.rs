//! Runtime values of the evaluator: cheap to clone (every aggregate sits behind an `Arc`), with
//! CEL's heterogeneous numeric equality and ordering, and a JSON mapping in both directions.
//!
//! Events are bound once and shared by every evaluation, so a `Value` never owns a deep copy of
//! anything it did not build itself.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

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
    List(Arc<[Value]>),
    /// `map(dyn, dyn)`.
    Map(Arc<MapValue>),
    /// `google.protobuf.Timestamp`.
    Timestamp(Timestamp),
    /// `google.protobuf.Duration`.
    Duration(Duration),
    /// A type value, such as the result of `type(x)` or the identifier `int`.
    Type(TypeValue),
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
            _ => return None,
        })
    }
}

/// A map key: CEL allows bool, int, uint and string keys.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// A bool key.
    Bool(bool),
    /// An int key.
    Int(i64),
    /// A uint key.
    Uint(u64),
    /// A string key.
    String(Arc<str>),
}

impl Key {
    /// The key as a value.
    pub fn to_value(&self) -> Value {
        match self {
            Key::Bool(b) => Value::Bool(*b),
            Key::Int(i) => Value::Int(*i),
            Key::Uint(u) => Value::Uint(*u),
            Key::String(s) => Value::String(s.clone()),
        }
    }

    /// The key a value makes, when it may be one (doubles never are, as in the CEL spec).
    pub fn from_value(value: &Value) -> Option<Key> {
        match value {
            Value::Bool(b) => Some(Key::Bool(*b)),
            Value::Int(i) => Some(Key::Int(*i)),
            Value::Uint(u) => Some(Key::Uint(*u)),
            Value::String(s) => Some(Key::String(s.clone())),
            _ => None,
        }
    }

    /// The key written as a JSON object key.
    fn json_name(&self) -> String {
        match self {
            Key::Bool(b) => b.to_string(),
            Key::Int(i) => i.to_string(),
            Key::Uint(u) => u.to_string(),
            Key::String(s) => s.to_string(),
        }
    }
}

/// Maps at or below this many entries are searched linearly: faster than hashing for the small
/// maps filters usually see.
const LINEAR_LOOKUP: usize = 8;

/// An immutable map that keeps its insertion order (for iteration and JSON output) and looks keys
/// up in O(1) once it has more than a few entries.
#[derive(Clone, Debug, Default)]
pub struct MapValue {
    entries: Vec<(Key, Value)>,
    index: Option<HashMap<Key, u32>>,
}

/// Why a map could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapError {
    /// A key that is not bool, int, uint or string.
    InvalidKey(String),
    /// The same key twice (numerically equal int and uint keys count as the same).
    RepeatedKey(String),
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapError::InvalidKey(k) => write!(f, "unsupported key type for map: {k}"),
            MapError::RepeatedKey(k) => write!(f, "repeated key in map literal: {k}"),
        }
    }
}

impl MapValue {
    /// Builds a map from entries, refusing invalid and repeated keys.
    pub fn from_entries(pairs: Vec<(Value, Value)>) -> Result<MapValue, MapError> {
        let mut map = MapValue {
            entries: Vec::with_capacity(pairs.len()),
            index: None,
        };
        for (k, v) in pairs {
            let Some(key) = Key::from_value(&k) else {
                return Err(MapError::InvalidKey(k.type_value().name().to_owned()));
            };
            if map.get(&k).is_some() {
                return Err(MapError::RepeatedKey(format!("{k}")));
            }
            map.push(key, v);
        }
        Ok(map)
    }

    /// Builds a map from string keys known to be distinct (JSON objects: `serde_json` keeps the
    /// last of repeated keys, so they are distinct by construction).
    pub(crate) fn from_distinct(entries: Vec<(Key, Value)>) -> MapValue {
        let mut map = MapValue {
            entries: Vec::with_capacity(entries.len()),
            index: None,
        };
        for (k, v) in entries {
            map.push(k, v);
        }
        map
    }

    fn push(&mut self, key: Key, value: Value) {
        let position = self.entries.len() as u32;
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), position);
        } else if self.entries.len() == LINEAR_LOOKUP {
            let mut index: HashMap<Key, u32> = self
                .entries
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i as u32))
                .collect();
            index.insert(key.clone(), position);
            self.index = Some(index);
        }
        self.entries.push((key, value));
    }

    fn get_key(&self, key: &Key) -> Option<&Value> {
        match &self.index {
            Some(index) => index.get(key).map(|&i| &self.entries[i as usize].1),
            None => self
                .entries
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, value)| value),
        }
    }

    /// Looks a key up with CEL's heterogeneous numeric rules: `m[1]`, `m[1u]` and `m[1.0]` find
    /// the same entry whichever of int or uint it was written with.
    pub fn get(&self, key: &Value) -> Option<&Value> {
        match key {
            Value::Bool(b) => self.get_key(&Key::Bool(*b)),
            Value::String(s) => self.get_str(s),
            Value::Int(i) => self.get_key(&Key::Int(*i)).or_else(|| {
                u64::try_from(*i)
                    .ok()
                    .and_then(|u| self.get_key(&Key::Uint(u)))
            }),
            Value::Uint(u) => self.get_key(&Key::Uint(*u)).or_else(|| {
                i64::try_from(*u)
                    .ok()
                    .and_then(|i| self.get_key(&Key::Int(i)))
            }),
            Value::Double(d) => {
                if d.fract() != 0.0 || !d.is_finite() {
                    return None;
                }
                // The range checks keep the casts exact: only doubles that are whole numbers
                // inside the integer range can equal an integer key.
                let as_int = (*d >= -9.223_372_036_854_776e18 && *d < 9.223_372_036_854_776e18)
                    .then(|| self.get_key(&Key::Int(*d as i64)))
                    .flatten();
                as_int.or_else(|| {
                    (*d >= 0.0 && *d < 1.844_674_407_370_955_2e19)
                        .then(|| self.get_key(&Key::Uint(*d as u64)))
                        .flatten()
                })
            }
            _ => None,
        }
    }

    /// Looks up a string key.
    pub fn get_str(&self, key: &str) -> Option<&Value> {
        match &self.index {
            Some(index) => index
                .get(&Key::String(Arc::from(key)))
                .map(|&i| &self.entries[i as usize].1),
            None => self.entries.iter().find_map(|(k, value)| match k {
                Key::String(s) if &**s == key => Some(value),
                _ => None,
            }),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries in insertion order.
    pub fn entries(&self) -> &[(Key, Value)] {
        &self.entries
    }
}

impl Value {
    /// A string value.
    pub fn string(s: &str) -> Value {
        Value::String(Arc::from(s))
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
        }
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
                Value::List(items.iter().map(Value::from_json).collect())
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
    fn map_lookup_crosses_numeric_key_types() {
        let map =
            MapValue::from_entries(vec![(Value::Uint(3), Value::Bool(true))]).expect("valid map");
        assert!(map.get(&Value::Int(3)).is_some());
        assert!(map.get(&Value::Double(3.0)).is_some());
        assert!(map.get(&Value::Double(3.5)).is_none());
        let repeated = MapValue::from_entries(vec![
            (Value::Int(0), Value::Int(1)),
            (Value::Uint(0), Value::Int(2)),
        ]);
        assert!(matches!(repeated, Err(MapError::RepeatedKey(_))));
    }

    #[test]
    fn large_maps_are_indexed() {
        let pairs = (0..20)
            .map(|i| (Value::Int(i), Value::Int(i * 2)))
            .collect();
        let map = MapValue::from_entries(pairs).expect("valid map");
        assert!(map.index.is_some());
        assert!(map.get(&Value::Uint(19)).unwrap().cel_eq(&Value::Int(38)));
    }

    #[test]
    fn json_round_trips() {
        let json: serde_json::Value =
            serde_json::from_str(r#"{"a":[1,2.5,"x",null,true],"b":{"c":18446744073709551615}}"#)
                .unwrap();
        assert_eq!(Value::from_json(&json).to_json(), json);
    }
}
