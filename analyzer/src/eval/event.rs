//! Events bound once: an event is parsed from JSON a single time, checked against its source's
//! [`EventBounds`], and kept as one immutable [`Value`] that every filter evaluation shares.
//!
//! The static cost analysis is only sound for events within bounds, so an event that exceeds
//! them is refused here with the field, its size and the bound. Sizes are in bytes of the event
//! as it would be sent in compact JSON, measured while it is read (`event_json`): `text` and the
//! header fields by their UTF-8 length, `attributes` by its length as compact JSON with numbers
//! as written and strings in canonical escaping; whitespace never counts. Duplicate keys and
//! nesting deeper than [`MAX_NESTING`] are refused with that reason.
//!
//! Decision: `id`, `source` and `type` are required; `action`, `subject` and `text` default to the
//! empty string and `attributes` to an empty map when absent, because many sources have no
//! subject or body. A present field of the wrong JSON type is refused.

use std::sync::Arc;

pub use super::event_json::MAX_NESTING;
use super::event_json::{self, Member};
use super::map::{Key, MapValue};
use super::value::Value;
use crate::EventBounds;

/// The header fields of an event, in the order they are stored.
pub const HEADER_FIELDS: [&str; 5] = ["id", "source", "type", "action", "subject"];

/// Header fields that must be present.
const REQUIRED: [&str; 3] = ["id", "source", "type"];

/// An event parsed and bound once; clones share the same value.
#[derive(Clone, Debug)]
pub struct Event {
    value: Value,
}

/// Why an event was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    /// The text is not JSON.
    #[error("the event is not valid JSON: {0}")]
    Json(String),
    /// The JSON is not an object.
    #[error("the event must be a JSON object")]
    NotAnObject,
    /// A required field is absent.
    #[error("the event has no `{0}` field")]
    Missing(&'static str),
    /// A field has the wrong JSON type.
    #[error("the event field `{field}` must be {expected}")]
    WrongType {
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// A field exceeds its bound.
    #[error(
        "the event field `{field}` is over its bound: more than {} bytes",
        crate::cost::group(*.bound)
    )]
    TooLarge {
        /// The field.
        field: &'static str,
        /// The bound in bytes.
        bound: u64,
    },
    /// An object has two values for one key: ambiguous to every reader after us.
    #[error("the event has two values for the key `{key}`: each key of an object must appear once")]
    DuplicateKey {
        /// The key (at most 64 bytes of it).
        key: String,
    },
    /// Objects and arrays nest deeper than [`MAX_NESTING`].
    #[error("the event nests objects and arrays deeper than {limit} levels")]
    TooDeep {
        /// The nesting limit.
        limit: usize,
    },
    /// The event text, whitespace aside, is larger than any event within bounds could be.
    #[error(
        "the event is {size} bytes of JSON (whitespace aside), more than any event within \
         bounds ({bound})"
    )]
    TextTooLarge {
        /// The raw size.
        size: u64,
        /// The largest raw size accepted.
        bound: u64,
    },
}

impl Event {
    /// Parses an event from JSON text and checks it against `bounds`.
    pub fn from_json(text: &str, bounds: &EventBounds) -> Result<Event, EventError> {
        // JSON escapes write a byte as at most six (`\u0000`), so no event within bounds has a
        // longer text, whitespace aside; refusing earlier keeps reading work bounded too.
        let field_budget = bounds
            .text
            .saturating_add(bounds.attributes)
            .saturating_add(
                bounds
                    .header_field
                    .saturating_mul(HEADER_FIELDS.len() as u64),
            );
        let raw_bound = field_budget.saturating_mul(6).saturating_add(4096);
        // Whitespace never counts, so a text within the bound as it is needs no counting.
        let size = if text.len() as u64 <= raw_bound {
            text.len() as u64
        } else {
            event_json::significant_len(text)
        };
        if size > raw_bound {
            return Err(EventError::TextTooLarge {
                size,
                bound: raw_bound,
            });
        }
        let members = event_json::read_event_object(text)?;
        let attributes_len = members
            .iter()
            .find(|m| &*m.key == "attributes")
            .map_or(0, |m| m.compact);
        let fields = MapValue::from_distinct(
            members
                .into_iter()
                .map(|Member { key, value, .. }| (Key::String(key), value))
                .collect(),
        );
        Event::from_fields(&fields, bounds, |_| attributes_len)
    }

    /// Checks an already parsed JSON object against `bounds`. Numbers have no text here, so
    /// they count in their canonical form (the shortest text of their value, never longer than
    /// any text that reads as it).
    pub fn from_value(json: &serde_json::Value, bounds: &EventBounds) -> Result<Event, EventError> {
        if json_depth_exceeds(json, MAX_NESTING) {
            return Err(EventError::TooDeep { limit: MAX_NESTING });
        }
        let Value::Map(fields) = Value::from_json(json) else {
            return Err(EventError::NotAnObject);
        };
        let measure = |attributes: &Value| {
            event_json::compact_len(attributes, bounds.attributes).unwrap_or(u64::MAX)
        };
        Event::from_fields(&fields, bounds, measure)
    }

    /// Binds the event's fields; `attributes_len` gives the compact length of `attributes`.
    fn from_fields(
        fields: &MapValue,
        bounds: &EventBounds,
        attributes_len: impl Fn(&Value) -> u64,
    ) -> Result<Event, EventError> {
        let mut entries = Vec::with_capacity(7);
        for field in HEADER_FIELDS {
            let value = string_field(fields, field, bounds.header_field)?;
            entries.push((Key::String(Arc::from(field)), value));
        }
        let text = string_field(fields, "text", bounds.text)?;
        entries.push((Key::String(Arc::from("text")), text));
        let attributes = match fields.get_str("attributes") {
            None => Value::Map(Arc::new(MapValue::default())),
            Some(object @ Value::Map(_)) => {
                if attributes_len(object) > bounds.attributes {
                    return Err(EventError::TooLarge {
                        field: "attributes",
                        bound: bounds.attributes,
                    });
                }
                object.clone()
            }
            Some(_) => {
                return Err(EventError::WrongType {
                    field: "attributes",
                    expected: "an object",
                });
            }
        };
        entries.push((Key::String(Arc::from("attributes")), attributes));
        Ok(Event {
            value: Value::Map(Arc::new(MapValue::from_distinct(entries))),
        })
    }

    /// The event as a CEL value (a map with the seven fields); cloning it is O(1).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// A header field, `text`, by name.
    pub fn field(&self, name: &str) -> Option<&str> {
        match &self.value {
            Value::Map(map) => match map.get_str(name) {
                Some(Value::String(s)) => Some(s),
                _ => None,
            },
            _ => None,
        }
    }

    /// `attributes` as a CEL map value.
    pub fn attributes(&self) -> &Value {
        match &self.value {
            Value::Map(map) => map.get_str("attributes").unwrap_or(&Value::Null),
            _ => &Value::Null,
        }
    }
}

/// A string field within its bound; absent optional fields are the empty string.
fn string_field(fields: &MapValue, field: &'static str, bound: u64) -> Result<Value, EventError> {
    match fields.get_str(field) {
        None if REQUIRED.contains(&field) => Err(EventError::Missing(field)),
        None => Ok(Value::string("")),
        Some(value @ Value::String(s)) if s.len() as u64 <= bound => Ok(value.clone()),
        Some(Value::String(_)) => Err(EventError::TooLarge { field, bound }),
        Some(_) => Err(EventError::WrongType {
            field,
            expected: "a string",
        }),
    }
}

/// Whether a JSON value nests objects and arrays deeper than `limit` levels (itself level 1).
fn json_depth_exceeds(json: &serde_json::Value, limit: usize) -> bool {
    let children: Box<dyn Iterator<Item = &serde_json::Value>> = match json {
        serde_json::Value::Array(items) => Box::new(items.iter()),
        serde_json::Value::Object(fields) => Box::new(fields.values()),
        _ => return false,
    };
    limit == 0
        || children
            .into_iter()
            .any(|c| json_depth_exceeds(c, limit - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(json: &str) -> Result<Event, EventError> {
        Event::from_json(json, &EventBounds::DEFAULT)
    }

    #[test]
    fn binds_fields_and_defaults() {
        let e = event(r#"{"id":"1","source":"s","type":"t","attributes":{"n":3}}"#).unwrap();
        assert_eq!(e.field("subject"), Some(""));
        assert_eq!(e.field("type"), Some("t"));
        assert!(matches!(e.attributes(), Value::Map(m) if m.len() == 1));
    }

    #[test]
    fn refuses_missing_and_ill_typed_fields() {
        assert_eq!(
            event(r#"{"id":"1","type":"t"}"#).unwrap_err(),
            EventError::Missing("source")
        );
        assert!(matches!(
            event(r#"{"id":"1","source":"s","type":"t","text":3}"#),
            Err(EventError::WrongType { field: "text", .. })
        ));
        assert!(matches!(
            event(r#"{"id":"1","source":"s","type":"t","attributes":[]}"#),
            Err(EventError::WrongType {
                field: "attributes",
                ..
            })
        ));
        assert_eq!(event("[1]").unwrap_err(), EventError::NotAnObject);
        assert!(matches!(event("{"), Err(EventError::Json(_))));
    }

    fn nested(levels: usize) -> String {
        format!(
            r#"{{"id":"1","source":"s","type":"t","attributes":{{"a":{}1{}}}}}"#,
            "[".repeat(levels),
            "]".repeat(levels)
        )
    }

    #[test]
    fn nesting_past_the_limit_is_refused_with_that_reason() {
        // The event object is level 1 and `attributes` level 2.
        assert!(event(&nested(MAX_NESTING - 2)).is_ok());
        let too_deep = EventError::TooDeep { limit: MAX_NESTING };
        assert_eq!(event(&nested(MAX_NESTING - 1)).unwrap_err(), too_deep);
        let refusal = event(&nested(5000)).unwrap_err();
        assert_eq!(refusal, too_deep);
        assert_eq!(
            refusal.to_string(),
            "the event nests objects and arrays deeper than 64 levels"
        );
        // Built events are held to the same limit.
        let json: serde_json::Value = serde_json::from_str(&nested(MAX_NESTING - 1)).unwrap();
        assert_eq!(
            Event::from_value(&json, &EventBounds::DEFAULT).unwrap_err(),
            too_deep
        );
    }

    #[test]
    fn duplicate_keys_are_refused_at_every_level() {
        // Last-wins reading would measure `{"a":1}` and let 20 KB through the 8 KiB bound.
        let big = "x".repeat(20_000);
        let attributes =
            format!(r#"{{"id":"1","source":"s","type":"t","attributes":{{"a":"{big}","a":1}}}}"#);
        assert_eq!(
            event(&attributes).unwrap_err(),
            EventError::DuplicateKey { key: "a".into() }
        );
        let top = r#"{"id":"1","source":"s","type":"t","text":"x","text":"y"}"#;
        assert_eq!(
            event(top).unwrap_err().to_string(),
            "the event has two values for the key `text`: each key of an object must appear once"
        );
        let deep = r#"{"id":"1","source":"s","type":"t","attributes":{"a":[{"k":1,"k":2}]}}"#;
        assert!(matches!(event(deep), Err(EventError::DuplicateKey { .. })));
        // Keys are compared after unescaping.
        let escaped = r#"{"id":"1","source":"s","type":"t","attributes":{"k":1,"\u006b":2}}"#;
        assert!(matches!(
            event(escaped),
            Err(EventError::DuplicateKey { .. })
        ));
    }

    #[test]
    fn numbers_count_as_written() {
        let bounds = EventBounds {
            attributes: 10,
            ..EventBounds::DEFAULT
        };
        // `{"a":1e15}` is 10 bytes as written; a round trip would write 1000000000000000.0.
        let fits = r#"{"id":"1","source":"s","type":"t","attributes":{"a":1e15}}"#;
        let e = Event::from_json(fits, &bounds).unwrap();
        let Value::Map(attributes) = e.attributes() else {
            panic!("a map")
        };
        assert!(
            attributes
                .get_str("a")
                .unwrap()
                .cel_eq(&Value::Double(1e15))
        );
        let over = r#"{"id":"1","source":"s","type":"t","attributes":{"a":1.0e15}}"#;
        assert!(matches!(
            Event::from_json(over, &bounds),
            Err(EventError::TooLarge {
                field: "attributes",
                ..
            })
        ));
        // A 20,000-digit number is 20,000 bytes, over the default 8 KiB.
        let long = format!(
            r#"{{"id":"1","source":"s","type":"t","attributes":{{"a":1.{}}}}}"#,
            "1".repeat(20_000)
        );
        assert!(matches!(
            event(&long),
            Err(EventError::TooLarge {
                field: "attributes",
                ..
            })
        ));
        // Integers keep their exact value and type.
        let ints = r#"{"id":"1","source":"s","type":"t","attributes":{"i":-9223372036854775808,"u":18446744073709551615,"d":18446744073709551616}}"#;
        let e = event(ints).unwrap();
        let Value::Map(attributes) = e.attributes() else {
            panic!("a map")
        };
        assert!(matches!(
            attributes.get_str("i"),
            Some(Value::Int(i64::MIN))
        ));
        assert!(matches!(
            attributes.get_str("u"),
            Some(Value::Uint(u64::MAX))
        ));
        assert!(matches!(attributes.get_str("d"), Some(Value::Double(_))));
    }

    #[test]
    fn strings_count_in_canonical_escaping() {
        let bounds = EventBounds {
            attributes: 9,
            ..EventBounds::DEFAULT
        };
        // `\u0062` is the one byte `b`: `{"a":"b"}` is 9 bytes however it was escaped.
        let fits = r#"{"id":"1","source":"s","type":"t","attributes":{"a":"\u0062"}}"#;
        assert!(Event::from_json(fits, &bounds).is_ok());
        // A quote is written `\"`: `{"a":"\""}` is 10 bytes.
        let over = r#"{"id":"1","source":"s","type":"t","attributes":{"a":"\""}}"#;
        assert!(Event::from_json(over, &bounds).is_err());
    }

    #[test]
    fn escaped_strings_measure_as_a_compact_encoder_writes_them() {
        // Runs without escapes, escapes of every kind between and around them, surrogate pairs.
        for raw in [
            r"plain",
            r"\u0001",
            r#"a\nb\tc\\d\/e\"f"#,
            r"\b\f\r\u001fx\u007f",
            r"caf\u00e9 \ud83d\ude00 end",
            r"\u00e9\u00e9",
            "d\u{e9}j\u{e0} \\\\ vu",
        ] {
            let text =
                format!(r#"{{"id":"1","source":"s","type":"t","attributes":{{"a":"{raw}"}}}}"#);
            let decoded: serde_json::Value = serde_json::from_str(&text).unwrap();
            let compact = serde_json::to_string(&decoded["attributes"]).unwrap().len() as u64;
            let at = |attributes| EventBounds {
                attributes,
                ..EventBounds::DEFAULT
            };
            assert!(Event::from_json(&text, &at(compact - 1)).is_err(), "{raw}");
            let e = Event::from_json(&text, &at(compact)).unwrap();
            let Value::Map(attributes) = e.attributes() else {
                panic!("a map")
            };
            let Some(Value::String(read)) = attributes.get_str("a") else {
                panic!("a string")
            };
            assert_eq!(
                &**read,
                decoded["attributes"]["a"].as_str().unwrap(),
                "{raw}"
            );
        }
    }

    #[test]
    fn repeated_keys_are_found_in_large_objects_too() {
        // Past sixteen keys the reader hashes them: the repeat may come at any position.
        for (n, repeat) in [(17, 16), (40, 0), (40, 39), (300, 150)] {
            let mut members: Vec<String> = (0..n).map(|i| format!(r#""k{i}":{i}"#)).collect();
            members.push(format!(r#""k{repeat}":0"#));
            let object = |members: &[String]| {
                format!(
                    r#"{{"id":"1","source":"s","type":"t","attributes":{{{}}}}}"#,
                    members.join(",")
                )
            };
            assert_eq!(
                event(&object(&members)).unwrap_err(),
                EventError::DuplicateKey {
                    key: format!("k{repeat}")
                },
                "{n} keys"
            );
            members.pop();
            assert!(event(&object(&members)).is_ok(), "{n} keys");
        }
    }

    #[test]
    fn whitespace_never_counts() {
        let bounds = EventBounds {
            text: 4,
            attributes: 9,
            header_field: 3,
        };
        // Three MiB of whitespace around an event of a few bytes: accepted.
        let spaces = " \n\t".repeat(1 << 20);
        let pretty = format!(
            "{{{spaces}\"id\"{spaces}:\"1\",\"source\":\"s\",\"type\":\"t\",\
             \"attributes\":{{ \"a\" :{spaces}\"b\" }}{spaces}}}"
        );
        assert!(Event::from_json(&pretty, &bounds).is_ok());
    }

    #[test]
    fn invalid_json_says_where() {
        for (text, words) in [
            ("{", "expected a key"),
            (r#"{"id":"1",}"#, "expected a key"),
            (r#"{"a":01}"#, "expected `,` or `}`"),
            (r#"{"a":1e400}"#, "number out of range"),
            ("{\"a\":\"\u{1}\"}", "control character"),
            (r#"{"a":"\ud800"}"#, "surrogate"),
            (r#"{"a":tru}"#, "expected a value"),
            (r#"{"a":1} x"#, "trailing characters"),
        ] {
            let Err(EventError::Json(message)) = event(text) else {
                panic!("{text}: not a JSON error")
            };
            assert!(message.contains(words), "{text}: {message}");
            assert!(message.contains("line 1 column"), "{text}: {message}");
        }
    }

    #[test]
    fn attribute_bound_is_compact_json_bytes() {
        let bounds = EventBounds {
            attributes: 9,
            ..EventBounds::DEFAULT
        };
        // `{"a":"b"}` is exactly 9 bytes compact, whatever whitespace the input had.
        let fits = r#"{"id":"1","source":"s","type":"t","attributes":{ "a" : "b" }}"#;
        assert!(Event::from_json(fits, &bounds).is_ok());
        let over = r#"{"id":"1","source":"s","type":"t","attributes":{"a":"bc"}}"#;
        assert_eq!(
            Event::from_json(over, &bounds).unwrap_err(),
            EventError::TooLarge {
                field: "attributes",
                bound: 9
            }
        );
    }

    #[test]
    fn text_and_header_bounds_are_utf8_bytes() {
        let bounds = EventBounds {
            text: 4,
            header_field: 3,
            ..EventBounds::DEFAULT
        };
        // "éé" is 4 bytes of UTF-8: it fits; "ééé" does not.
        let fits = r#"{"id":"1","source":"s","type":"t","text":"éé"}"#;
        assert!(Event::from_json(fits, &bounds).is_ok());
        let over = r#"{"id":"1","source":"s","type":"t","text":"ééé"}"#;
        assert!(matches!(
            Event::from_json(over, &bounds),
            Err(EventError::TooLarge { field: "text", .. })
        ));
        let header = r#"{"id":"1234","source":"s","type":"t"}"#;
        assert!(matches!(
            Event::from_json(header, &bounds),
            Err(EventError::TooLarge { field: "id", .. })
        ));
        let huge = format!(
            r#"{{"id":"1","source":"s","type":"t","x":"{}"}}"#,
            " ".repeat(1 << 20)
        );
        assert!(matches!(
            Event::from_json(&huge, &EventBounds::DEFAULT),
            Err(EventError::TextTooLarge { .. })
        ));
    }
}
