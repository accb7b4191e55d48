//! The arguments of a wait (E1), validated from the JSON a tool call or flow step gives:
//! `source`, `types`, `subject`, `filter`, `timeout`, `since`. The timeout grammar is shared
//! with the lint so both refuse the same text with the same message.

use std::time::Duration;

use serde_json::Value;

use crate::model::{Since, WaitSpec};

/// The default timeout of a wait.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);

/// Validates the arguments of `oz.wait_for_event` (or a flow step) into a [`WaitSpec`].
pub fn parse_wait_args(args: &Value) -> Result<WaitSpec, String> {
    let Some(obj) = args.as_object() else {
        return Err("the arguments must be an object".to_owned());
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{key}` must be a string")),
        }
    };
    let source = text("source")?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| "`source` is required".to_owned())?;
    let types = match obj.get("types") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            if items.is_empty() {
                return Err("`types` is empty: leave it out to accept any type".to_owned());
            }
            let mut types = Vec::with_capacity(items.len());
            for item in items {
                match item.as_str() {
                    Some(t) if !t.is_empty() => types.push(t.to_owned()),
                    _ => return Err("`types` must be a list of event type names".to_owned()),
                }
            }
            Some(types)
        }
        Some(Value::String(t)) if !t.is_empty() => Some(vec![t.clone()]),
        Some(_) => return Err("`types` must be a list of event type names".to_owned()),
    };
    let subject = text("subject")?.filter(|s| !s.is_empty());
    let filter = text("filter")?.filter(|s| !s.trim().is_empty());
    let timeout = match text("timeout")? {
        None => DEFAULT_TIMEOUT,
        Some(t) => parse_timeout(&t)?,
    };
    let since = match text("since")?.as_deref() {
        None | Some("job") => Since::Job,
        Some("now") => Since::Now,
        Some(other) => {
            return Err(format!("`since` is `{other}`: it must be `job` or `now`"));
        }
    };
    Ok(WaitSpec {
        source,
        types,
        subject,
        filter,
        timeout,
        since,
    })
}

/// Parses a wait timeout: a whole number and one unit (`ms`, `s`, `m`, `h`, `d`), at most 7d.
///
/// This is a stand-in with the documented grammar until the shared module
/// `ozcheck_analyzer::wait_args` is merged; it is replaced by a call to it.
pub fn parse_timeout(text: &str) -> Result<Duration, String> {
    let duration = parse_duration(text).ok_or_else(|| {
        format!(
            "timeout `{text}` is not a whole number and one unit (ms, s, m, h or d); write e.g. `90m` instead of `1h30m` or `1.5h`"
        )
    })?;
    if duration.is_zero() {
        return Err(format!("timeout `{text}` is zero"));
    }
    if duration > Duration::from_secs(7 * 24 * 3600) {
        return Err(format!("timeout `{text}` is longer than 7d"));
    }
    Ok(duration)
}

/// Parses one whole number and one unit (`ms`, `s`, `m`, `h`, `d`) with no bound; the
/// conformance runner's `advance` uses it.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = text.split_at(split);
    if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let ms = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    Some(Duration::from_millis(n.checked_mul(ms)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timeouts_take_one_whole_number_and_one_unit_up_to_seven_days() {
        assert_eq!(parse_timeout("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_timeout("7d"), Ok(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse_timeout("168h"), Ok(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse_timeout("250ms"), Ok(Duration::from_millis(250)));
        for bad in [
            "1h30m", "1.5h", "8d", "90", "", "h", "1H", " 1h", "0s", "-1h", "01h",
        ] {
            assert!(parse_timeout(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn wait_args_default_and_refuse() {
        let spec = parse_wait_args(&json!({"source": "gh"})).unwrap();
        assert_eq!(spec.timeout, DEFAULT_TIMEOUT);
        assert_eq!(spec.since, Since::Job);
        assert_eq!(spec.types, None);
        assert_eq!(spec.subject, None);
        assert!(parse_wait_args(&json!({})).is_err());
        assert!(parse_wait_args(&json!({"source": "gh", "types": []})).is_err());
        assert!(parse_wait_args(&json!({"source": "gh", "since": "later"})).is_err());
        assert!(parse_wait_args(&json!({"source": "gh", "timeout": 5})).is_err());
        let spec =
            parse_wait_args(&json!({"source": "gh", "subject": "", "since": "now"})).unwrap();
        assert_eq!(spec.subject, None);
        assert_eq!(spec.since, Since::Now);
    }
}
