//! Events bound once: an event is parsed from JSON a single time, checked against its source's
//! [`EventBounds`], and kept as one immutable [`Value`] that every filter evaluation shares.
//!
//! The static cost analysis is only sound for events within bounds, so an event that exceeds
//! them is refused here with the field, its size and the bound. Sizes are in bytes: `text` and the
//! header fields by their UTF-8 length, `attributes` by its length as compact JSON, measured with
//! a counting writer that stops as soon as the bound is passed (no string is built).
//!
//! Decision: `id`, `source` and `type` are required; `action`, `subject` and `text` default to the
//! empty string and `attributes` to an empty map when absent, because many sources have no
//! subject or body. A present field of the wrong JSON type is refused.

use std::io;
use std::sync::Arc;

use super::value::{Key, MapValue, Value};
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
    #[error("the event field `{field}` is over its bound: more than {bound} bytes")]
    TooLarge {
        /// The field.
        field: &'static str,
        /// The bound in bytes.
        bound: u64,
    },
    /// The raw event text is larger than any event within bounds could be.
    #[error("the event is {size} bytes of JSON, more than any event within bounds ({bound})")]
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
        // longer text than this; refusing earlier keeps parsing work bounded too.
        let field_budget = bounds
            .text
            .saturating_add(bounds.attributes)
            .saturating_add(
                bounds
                    .header_field
                    .saturating_mul(HEADER_FIELDS.len() as u64),
            );
        let raw_bound = field_budget.saturating_mul(6).saturating_add(4096);
        if text.len() as u64 > raw_bound {
            return Err(EventError::TextTooLarge {
                size: text.len() as u64,
                bound: raw_bound,
            });
        }
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| EventError::Json(e.to_string()))?;
        Event::from_value(&json, bounds)
    }

    /// Checks an already parsed JSON object against `bounds`.
    pub fn from_value(json: &serde_json::Value, bounds: &EventBounds) -> Result<Event, EventError> {
        let serde_json::Value::Object(fields) = json else {
            return Err(EventError::NotAnObject);
        };
        let mut entries = Vec::with_capacity(7);
        for field in HEADER_FIELDS {
            let value = match fields.get(field) {
                None if REQUIRED.contains(&field) => return Err(EventError::Missing(field)),
                None => "",
                Some(serde_json::Value::String(s)) => s.as_str(),
                Some(_) => {
                    return Err(EventError::WrongType {
                        field,
                        expected: "a string",
                    });
                }
            };
            if value.len() as u64 > bounds.header_field {
                return Err(EventError::TooLarge {
                    field,
                    bound: bounds.header_field,
                });
            }
            entries.push((Key::String(Arc::from(field)), Value::string(value)));
        }
        let text = match fields.get("text") {
            None => "",
            Some(serde_json::Value::String(s)) => s.as_str(),
            Some(_) => {
                return Err(EventError::WrongType {
                    field: "text",
                    expected: "a string",
                });
            }
        };
        if text.len() as u64 > bounds.text {
            return Err(EventError::TooLarge {
                field: "text",
                bound: bounds.text,
            });
        }
        entries.push((Key::String(Arc::from("text")), Value::string(text)));
        let attributes = match fields.get("attributes") {
            None => Value::Map(Arc::new(MapValue::default())),
            Some(object @ serde_json::Value::Object(_)) => {
                if compact_len_exceeds(object, bounds.attributes) {
                    return Err(EventError::TooLarge {
                        field: "attributes",
                        bound: bounds.attributes,
                    });
                }
                Value::from_json(object)
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

/// A writer that only counts bytes and fails once the count passes a bound, so measuring a huge
/// value stops early.
struct CountingWriter {
    count: u64,
    bound: u64,
}

impl io::Write for CountingWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.count = self.count.saturating_add(buf.len() as u64);
        if self.count > self.bound {
            return Err(io::Error::other("over bound"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Whether `value` written as compact JSON is longer than `bound` bytes.
fn compact_len_exceeds(value: &serde_json::Value, bound: u64) -> bool {
    let mut writer = CountingWriter { count: 0, bound };
    serde_json::to_writer(&mut writer, value).is_err()
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
