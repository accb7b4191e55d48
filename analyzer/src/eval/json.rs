//! Values written as JSON: a `Serialize` impl that streams a value without building a
//! `serde_json::Value` tree. (Events are read by `event_json`, which measures them as it reads.)

use serde::ser::{SerializeMap, SerializeSeq};

use super::map::Key;
use super::value::Value;

impl serde::Serialize for Value {
    /// Writes JSON: bytes as base64, timestamps and durations and type values as strings, map keys
    /// as strings. Values that came from JSON write back exactly as `serde_json` writes them.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Int(i) => serializer.serialize_i64(*i),
            Value::Uint(u) => serializer.serialize_u64(*u),
            Value::Double(d) => serializer.serialize_f64(*d),
            Value::String(s) => serializer.serialize_str(s),
            Value::List(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items.iter() {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Map(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (key, value) in map.entries() {
                    match key {
                        Key::String(s) => out.serialize_entry(&**s, value)?,
                        other => out.serialize_entry(&other.to_value().to_json(), value)?,
                    }
                }
                out.end()
            }
            other => other.to_json().serialize(serializer),
        }
    }
}
