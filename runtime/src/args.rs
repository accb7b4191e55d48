//! The arguments of a wait (E1), validated from the JSON a tool call or flow step gives:
//! `source`, `types`, `subject`, `filter`, `timeout`, `since`. The timeout grammar is shared
//! with the lint so both refuse the same text with the same message.

use std::time::Duration;

use serde_json::Value;

use ozcheck_analyzer::wait_args;

use crate::model::{Since, WaitSpec};

/// The default timeout of a wait.
pub const DEFAULT_TIMEOUT: Duration = wait_args::DEFAULT_TIMEOUT;

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
    let source = text("source")?.ok_or_else(|| "`source` is required".to_owned())?;
    wait_args::validate_source(&source).map_err(|e| e.to_string())?;
    let types = match obj.get("types") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            if items.is_empty() {
                return Err("`types` is empty: leave it out to accept any type".to_owned());
            }
            let mut types = Vec::with_capacity(items.len());
            for item in items {
                let Some(t) = item.as_str() else {
                    return Err("`types` must be a list of event type names".to_owned());
                };
                wait_args::validate_type(t).map_err(|e| e.to_string())?;
                types.push(t.to_owned());
            }
            Some(types)
        }
        Some(Value::String(t)) => {
            wait_args::validate_type(t).map_err(|e| e.to_string())?;
            Some(vec![t.clone()])
        }
        Some(_) => return Err("`types` must be a list of event type names".to_owned()),
    };
    let subject = text("subject")?;
    if let Some(subject) = &subject {
        wait_args::validate_subject(subject).map_err(|e| e.to_string())?;
    }
    let filter = text("filter")?.filter(|s| !s.trim().is_empty());
    let timeout = match text("timeout")? {
        None => DEFAULT_TIMEOUT,
        Some(t) => parse_timeout(&t)?,
    };
    let since = match text("since")? {
        None => Since::Job,
        Some(s) => match wait_args::Since::parse(&s).map_err(|e| e.to_string())? {
            wait_args::Since::Job => Since::Job,
            wait_args::Since::Now => Since::Now,
        },
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

/// Parses a wait timeout with the grammar and messages shared with the lint: a whole number
/// and one unit (`ms`, `s`, `m`, `h`, `d`), more than zero, at most 7d.
pub fn parse_timeout(text: &str) -> Result<Duration, String> {
    wait_args::parse_timeout(text).map_err(|e| e.to_string())
}

/// Parses a duration in the same grammar without the 7-day bound (a job's `limits.timeout`, the
/// conformance runner's `advance`).
pub fn parse_duration(text: &str) -> Option<Duration> {
    wait_args::parse_duration(text).ok()
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
            "1h30m", "1.5h", "8d", "90", "", "h", "1H", " 1h", "0s", "-1h",
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
        assert!(parse_wait_args(&json!({"source": "gh", "subject": ""})).is_err());
        let spec = parse_wait_args(&json!({"source": "gh", "since": "now"})).unwrap();
        assert_eq!(spec.since, Since::Now);
    }
}
