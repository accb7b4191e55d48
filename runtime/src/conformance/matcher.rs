//! Partial matching of an expected value (from a scenario) against an actual answer: only the
//! keys written are compared, lists element by element, and a few operators (`$any`,
//! `$absent`, `{$contains: …}`, `{$len: N}`).

use serde_json::Value;

/// Checks `actual` against `expected`; the error names the path of the first mismatch.
pub fn check(expected: &Value, actual: &Value) -> Result<(), String> {
    check_at(expected, Some(actual), "result")
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "nothing".to_owned(),
        Some(v) => {
            let text = v.to_string();
            if text.len() > 300 {
                let mut end = 300;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                format!("{}…", &text[..end])
            } else {
                text
            }
        }
    }
}

fn mismatch(path: &str, expected: &Value, actual: Option<&Value>) -> String {
    format!("{path}: expected {expected}, got {}", show(actual))
}

fn check_at(expected: &Value, actual: Option<&Value>, path: &str) -> Result<(), String> {
    let present = actual.filter(|v| !v.is_null());
    match expected {
        Value::String(s) if s == "$any" => present
            .map(|_| ())
            .ok_or_else(|| mismatch(path, expected, actual)),
        Value::String(s) if s == "$absent" => match present {
            None => Ok(()),
            Some(_) => Err(mismatch(path, expected, actual)),
        },
        Value::Object(map) if map.len() == 1 && map.contains_key("$contains") => {
            let needle = &map["$contains"];
            let ok = match (present, needle) {
                (Some(Value::String(hay)), Value::String(n)) => hay.contains(n.as_str()),
                (Some(Value::Array(items)), n) => items
                    .iter()
                    .any(|item| check_at(n, Some(item), path).is_ok()),
                _ => false,
            };
            if ok {
                Ok(())
            } else {
                Err(mismatch(path, expected, actual))
            }
        }
        Value::Object(map) if map.len() == 1 && map.contains_key("$len") => {
            let len = match present {
                Some(Value::Array(a)) => Some(a.len()),
                Some(Value::String(s)) => Some(s.chars().count()),
                Some(Value::Object(o)) => Some(o.len()),
                _ => None,
            };
            if len.is_some_and(|n| Some(n as u64) == map["$len"].as_u64()) {
                Ok(())
            } else {
                Err(mismatch(path, expected, actual))
            }
        }
        Value::Object(map) => {
            let Some(Value::Object(actual_map)) = present else {
                return Err(mismatch(path, expected, actual));
            };
            for (key, want) in map {
                check_at(want, actual_map.get(key), &format!("{path}.{key}"))?;
            }
            Ok(())
        }
        Value::Array(items) => {
            let Some(Value::Array(actual_items)) = present else {
                return Err(mismatch(path, expected, actual));
            };
            if items.len() != actual_items.len() {
                return Err(format!(
                    "{path}: expected {} elements, got {}: {}",
                    items.len(),
                    actual_items.len(),
                    show(actual)
                ));
            }
            for (i, (want, got)) in items.iter().zip(actual_items).enumerate() {
                check_at(want, Some(got), &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        Value::Number(n) => match present {
            Some(Value::Number(m)) if n.as_f64() == m.as_f64() => Ok(()),
            _ => Err(mismatch(path, expected, actual)),
        },
        Value::Null => match present {
            None => Ok(()),
            Some(_) => Err(mismatch(path, expected, actual)),
        },
        scalar => {
            if actual == Some(scalar) {
                Ok(())
            } else {
                Err(mismatch(path, expected, actual))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn partial_objects_and_operators() {
        let actual =
            json!({"state": "matched", "event": {"id": "d1", "tags": ["a", "b"]}, "n": 1.0});
        assert!(check(&json!({"state": "matched"}), &actual).is_ok());
        assert!(
            check(
                &json!({"event": {"id": "$any"}, "reason": "$absent"}),
                &actual
            )
            .is_ok()
        );
        assert!(check(&json!({"n": 1}), &actual).is_ok());
        assert!(check(&json!({"event": {"tags": {"$contains": "b"}}}), &actual).is_ok());
        assert!(check(&json!({"event": {"tags": {"$len": 2}}}), &actual).is_ok());
        let err = check(&json!({"event": {"id": "d2"}}), &actual).unwrap_err();
        assert!(err.starts_with("result.event.id: expected \"d2\""), "{err}");
        assert!(check(&json!({"state": "$absent"}), &actual).is_err());
        assert!(check(&json!({"reason": "$any"}), &actual).is_err());
        assert!(check(&json!({"event": {"tags": ["a"]}}), &actual).is_err());
        assert!(check(&json!({"event": {"tags": {"$contains": "c"}}}), &actual).is_err());
        assert!(check(&json!({"n": "1"}), &actual).is_err());
    }
}
