//! JSON straight into values and back: a serde visitor that builds a [`Value`] while parsing
//! (no intermediate `serde_json::Value` tree), and a `Serialize` impl that writes a value as the
//! same compact JSON `serde_json` would write for the document it came from, which is how the
//! attribute bound is measured.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};

use super::map::{Key, MapValue};
use super::value::Value;

/// Deserializes one JSON document into a [`Value`]: integers become `int` when they fit, else
/// `uint`; other numbers `double`; objects maps with string keys (the last of repeated keys wins,
/// as in `serde_json`).
pub(crate) struct ValueSeed;

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Int(i))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(i64::try_from(u).map_or(Value::Uint(u), Value::Int))
    }

    fn visit_f64<E>(self, d: f64) -> Result<Value, E> {
        Ok(Value::Double(d))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::string(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(ValueSeed)? {
            items.push(item);
        }
        Ok(Value::list(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let value = map.next_value_seed(ValueSeed)?;
            entries.push((Key::String(Arc::from(&*key)), value));
        }
        Ok(Value::Map(Arc::new(MapValue::from_json_entries(entries))))
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Value {
        let mut de = serde_json::Deserializer::from_str(text);
        ValueSeed.deserialize(&mut de).expect("valid JSON")
    }

    #[test]
    fn compact_output_matches_serde_json() {
        for text in [
            r#"{"a": [1, -2, 18446744073709551615, 1.0, 2.5e-8, 1e300], "b": {"c": null, "d": true}}"#,
            r#"["\u0001\n\"\\ é \u2028", {}, [], "x"]"#,
            r#"{"z": 1, "a": 2, "z": 3}"#,
        ] {
            let ours = serde_json::to_string(&parse(text)).unwrap();
            let theirs =
                serde_json::to_string(&serde_json::from_str::<serde_json::Value>(text).unwrap())
                    .unwrap();
            assert_eq!(ours.len(), theirs.len(), "{ours} vs {theirs}");
        }
    }

    #[test]
    fn repeated_keys_keep_the_last_value() {
        let Value::Map(map) = parse(r#"{"z": 1, "a": 2, "z": 3}"#) else {
            panic!("a map")
        };
        assert_eq!(map.len(), 2);
        assert!(map.get_str("z").unwrap().cel_eq(&Value::Int(3)));
        let many = (0..20).fold(String::new(), |mut out, i| {
            use std::fmt::Write;
            let _ = write!(out, r#""k{}": {i},"#, i % 10);
            out
        });
        let Value::Map(map) = parse(&format!("{{{many}\"end\": 0}}")) else {
            panic!("a map")
        };
        assert_eq!(map.len(), 11);
        assert!(map.get_str("k3").unwrap().cel_eq(&Value::Int(13)));
    }
}
