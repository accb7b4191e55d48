//! The source function of generic JSON deliveries: every event field read from the body at a
//! JSON pointer of the source's mapping. The whole event comes from the signed body.

use serde_json::{Map, Value};

use crate::config::JsonMapping;
use crate::model::Event;

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Maps a JSON body to its event, or says which field is missing or of the wrong type.
pub fn map(source: &str, mapping: &JsonMapping, body: &Value) -> Result<Event, String> {
    let id = body
        .pointer(&mapping.id)
        .and_then(scalar_text)
        .ok_or_else(|| format!("no event id at {}", mapping.id))?;
    let kind = body
        .pointer(&mapping.kind)
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("no event type at {}", mapping.kind))?;
    let optional = |pointer: &str, name: &str| -> Result<String, String> {
        match body.pointer(pointer) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("the {name} at {pointer} is not a string")),
        }
    };
    let attributes = match body.pointer(&mapping.attributes) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => {
            return Err(format!(
                "the attributes at {} are not an object",
                mapping.attributes
            ));
        }
    };
    Ok(Event {
        source: source.to_owned(),
        id,
        kind: kind.to_owned(),
        action: optional(&mapping.action, "action")?,
        subject: optional(&mapping.subject, "subject")?,
        text: optional(&mapping.text, "text")?,
        attributes,
    })
}
