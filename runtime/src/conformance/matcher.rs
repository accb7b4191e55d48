//! Partial matching of an expected value (from a scenario) against an actual answer: only the
//! keys written are compared, lists element by element, and a few operators:
//!
//! - `$any` / `$absent` (strings): present and not null / missing or null;
//! - `{$contains: X}`: a string holds the substring `X`, or a list holds an element matching `X`;
//! - `{$len: N}` (optionally `unit: chars | bytes`): a list, mapping or string has `N` elements,
//!   keys, characters (default) or UTF-8 bytes;
//! - `{$not: X}`: the value does not match `X` (a missing key matches `{$not: …}` unless `X`
//!   itself matches a missing value, as `$absent` does);
//! - `{$count: N, of: X}`: a list has exactly `N` elements matching `X`; `{$one: X}` is
//!   `{$count: 1, of: X}`.
//!
//! A mapping whose keys start with `$` but is none of these is an error in the scenario, never a
//! silent key comparison.

use serde_json::{Map, Value};

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

fn ok_or_mismatch(
    ok: bool,
    path: &str,
    expected: &Value,
    actual: Option<&Value>,
) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(mismatch(path, expected, actual))
    }
}

fn check_at(expected: &Value, actual: Option<&Value>, path: &str) -> Result<(), String> {
    let present = actual.filter(|v| !v.is_null());
    match expected {
        Value::String(s) if s == "$any" => {
            ok_or_mismatch(present.is_some(), path, expected, actual)
        }
        Value::String(s) if s == "$absent" => {
            ok_or_mismatch(present.is_none(), path, expected, actual)
        }
        Value::Object(map) if map.keys().any(|k| k.starts_with('$')) => {
            check_operator(map, expected, actual, path)
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
        Value::Number(n) => {
            let same = matches!(present, Some(Value::Number(m)) if n.as_f64() == m.as_f64());
            ok_or_mismatch(same, path, expected, actual)
        }
        Value::Null => ok_or_mismatch(present.is_none(), path, expected, actual),
        scalar => ok_or_mismatch(actual == Some(scalar), path, expected, actual),
    }
}

/// The keys each operator may have; the first is the operator itself.
const OPERATORS: &[&[&str]] = &[
    &["$contains"],
    &["$len", "unit"],
    &["$not"],
    &["$count", "of"],
    &["$one"],
];

fn check_operator(
    map: &Map<String, Value>,
    expected: &Value,
    actual: Option<&Value>,
    path: &str,
) -> Result<(), String> {
    let Some(keys) = OPERATORS.iter().find(|keys| map.contains_key(keys[0])) else {
        return Err(format!(
            "{path}: unknown operator in {expected} (the operators are $any, $absent, \
             $contains, $len, $not, $count, $one)"
        ));
    };
    if let Some(extra) = map.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(format!(
            "{path}: `{extra}` does not belong to `{}` in {expected}",
            keys[0]
        ));
    }
    let present = actual.filter(|v| !v.is_null());
    match keys[0] {
        "$contains" => {
            let needle = &map["$contains"];
            let ok = match (present, needle) {
                (Some(Value::String(hay)), Value::String(n)) => hay.contains(n.as_str()),
                (Some(Value::Array(items)), n) => items
                    .iter()
                    .any(|item| check_at(n, Some(item), path).is_ok()),
                _ => false,
            };
            ok_or_mismatch(ok, path, expected, actual)
        }
        "$len" => {
            let bytes = match map.get("unit").map(Value::as_str) {
                None | Some(Some("chars")) => false,
                Some(Some("bytes")) => true,
                Some(_) => return Err(format!("{path}: `unit` is `chars` or `bytes`")),
            };
            let len = match present {
                Some(Value::Array(a)) => Some(a.len()),
                Some(Value::String(s)) if bytes => Some(s.len()),
                Some(Value::String(s)) => Some(s.chars().count()),
                Some(Value::Object(o)) => Some(o.len()),
                _ => None,
            };
            let want = map["$len"].as_u64();
            ok_or_mismatch(
                len.is_some_and(|n| Some(n as u64) == want),
                path,
                expected,
                actual,
            )
        }
        "$not" => ok_or_mismatch(
            check_at(&map["$not"], actual, path).is_err(),
            path,
            expected,
            actual,
        ),
        _ => {
            let (want, of) = if let Some(of) = map.get("$one") {
                (1, of)
            } else {
                let of = map
                    .get("of")
                    .ok_or_else(|| format!("{path}: `$count` needs `of`"))?;
                let want = map["$count"]
                    .as_u64()
                    .ok_or_else(|| format!("{path}: `$count` is a whole number"))?;
                (want, of)
            };
            let Some(Value::Array(items)) = present else {
                return Err(mismatch(path, expected, actual));
            };
            let n = items
                .iter()
                .filter(|item| check_at(of, Some(item), path).is_ok())
                .count() as u64;
            if n == want {
                Ok(())
            } else {
                Err(format!(
                    "{path}: expected {want} elements matching {of}, found {n}: {}",
                    show(actual)
                ))
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

    #[test]
    fn negation() {
        let actual = json!({"text": "An event arrived", "list": [1, 2]});
        assert!(check(&json!({"text": {"$not": {"$contains": "</x>"}}}), &actual).is_ok());
        assert!(check(&json!({"text": {"$not": {"$contains": "event"}}}), &actual).is_err());
        // A missing key is not equal to anything, but it is absent.
        assert!(check(&json!({"other": {"$not": "x"}}), &actual).is_ok());
        assert!(check(&json!({"other": {"$not": "$absent"}}), &actual).is_err());
        assert!(check(&json!({"list": {"$not": {"$contains": 3}}}), &actual).is_ok());
        assert!(check(&json!({"list": {"$not": {"$len": 2}}}), &actual).is_err());
    }

    #[test]
    fn counting() {
        let fires = json!({"fires": [{"job": "a", "state": "started"},
                                     {"job": "b", "state": "refused"},
                                     {"job": "c", "state": "started"}]});
        let started = json!({"state": "started"});
        assert!(check(&json!({"fires": {"$count": 2, "of": started}}), &fires).is_ok());
        assert!(check(&json!({"fires": {"$count": 1, "of": started}}), &fires).is_err());
        assert!(check(&json!({"fires": {"$one": {"job": "b"}}}), &fires).is_ok());
        assert!(check(&json!({"fires": {"$one": {"state": "started"}}}), &fires).is_err());
        assert!(check(&json!({"fires": {"$count": 0, "of": {"job": "z"}}}), &fires).is_ok());
        let err = check(&json!({"fires": {"$count": 3, "of": started}}), &fires).unwrap_err();
        assert!(err.contains("found 2"), "{err}");
        assert!(check(&json!({"fires": {"$count": 1}}), &fires).is_err());
        assert!(check(&json!({"nothing": {"$one": 1}}), &fires).is_err());
    }

    #[test]
    fn lengths_in_characters_or_bytes() {
        let actual = json!({"s": "héllo"});
        assert!(check(&json!({"s": {"$len": 5}}), &actual).is_ok());
        assert!(check(&json!({"s": {"$len": 5, "unit": "chars"}}), &actual).is_ok());
        assert!(check(&json!({"s": {"$len": 6, "unit": "bytes"}}), &actual).is_ok());
        assert!(check(&json!({"s": {"$len": 5, "unit": "bytes"}}), &actual).is_err());
        assert!(check(&json!({"s": {"$len": 5, "unit": "words"}}), &actual).is_err());
    }

    #[test]
    fn unknown_operators_are_scenario_errors() {
        let actual = json!({"s": "x"});
        let err = check(&json!({"s": {"$contans": "x"}}), &actual).unwrap_err();
        assert!(err.contains("unknown operator"), "{err}");
        let err = check(&json!({"s": {"$len": 1, "of": 2}}), &actual).unwrap_err();
        assert!(err.contains("does not belong"), "{err}");
    }
}
