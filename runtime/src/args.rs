//! The arguments of a wait (E1), validated from the JSON a tool call or flow step gives:
//! `source`, `types`, `subject`, `filter`, `timeout`, `since`. The timeout grammar is shared
//! with the lint so both refuse the same text with the same message.

use std::time::Duration;

use serde_json::Value;

use ozcheck_analyzer::check::suggest::closest;
use ozcheck_analyzer::wait_args;

use crate::error::RuntimeError;
use crate::model::{Since, WaitSpec};

/// The default timeout of a wait.
pub const DEFAULT_TIMEOUT: Duration = wait_args::DEFAULT_TIMEOUT;

/// The arguments a wait takes; any other key is refused (`unknown-key`, as the lint says).
pub const WAIT_ARGS: &[&str] = &["source", "types", "subject", "filter", "timeout", "since"];

fn arg_error(e: &wait_args::WaitArgError) -> RuntimeError {
    RuntimeError::invalid(e.code(), e.to_string())
}

/// Validates the arguments of `oz.wait_for_event` (or a flow step) into a [`WaitSpec`]. Errors
/// carry the lint's code for the same mistake.
pub fn parse_wait_args(args: &Value) -> Result<WaitSpec, RuntimeError> {
    let Some(obj) = args.as_object() else {
        return Err(RuntimeError::invalid(
            "wrong-type",
            "the arguments must be an object",
        ));
    };
    if let Some(key) = obj.keys().find(|k| !WAIT_ARGS.contains(&k.as_str())) {
        let hint = closest(key, WAIT_ARGS.iter().copied())
            .map_or_else(String::new, |s| format!(" (did you mean `{s}`?)"));
        return Err(RuntimeError::invalid(
            "unknown-key",
            format!(
                "unknown argument `{key}`{hint}; a wait takes {}",
                WAIT_ARGS.join(", ")
            ),
        ));
    }
    let text = |key: &str| -> Result<Option<String>, RuntimeError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(RuntimeError::invalid(
                "wrong-type",
                format!("`{key}` must be a string"),
            )),
        }
    };
    let source = text("source")?
        .ok_or_else(|| RuntimeError::invalid("missing-key", "`source` is required"))?;
    wait_args::validate_source(&source).map_err(|e| arg_error(&e))?;
    let types = parse_types(obj.get("types"))?;
    let subject = text("subject")?;
    if let Some(subject) = &subject {
        wait_args::validate_subject(subject).map_err(|e| arg_error(&e))?;
    }
    let filter = text("filter")?.filter(|s| !s.trim().is_empty());
    let timeout = match text("timeout")? {
        None => DEFAULT_TIMEOUT,
        Some(t) => wait_args::parse_timeout(&t).map_err(|e| arg_error(&e))?,
    };
    let since = match text("since")? {
        None => Since::Job,
        Some(s) => match wait_args::Since::parse(&s).map_err(|e| arg_error(&e))? {
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

fn parse_types(value: Option<&Value>) -> Result<Option<Vec<String>>, RuntimeError> {
    let not_names =
        || RuntimeError::invalid("wrong-type", "`types` must be a list of event type names");
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => {
            if items.is_empty() {
                return Err(RuntimeError::invalid(
                    "empty-wait-argument",
                    "`types` is empty: leave it out to accept any type",
                ));
            }
            let mut types = Vec::with_capacity(items.len());
            for item in items {
                let t = item.as_str().ok_or_else(not_names)?;
                wait_args::validate_type(t).map_err(|e| arg_error(&e))?;
                types.push(t.to_owned());
            }
            Ok(Some(types))
        }
        Some(Value::String(t)) => {
            wait_args::validate_type(t).map_err(|e| arg_error(&e))?;
            Ok(Some(vec![t.clone()]))
        }
        Some(_) => Err(not_names()),
    }
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
        let typo = parse_wait_args(&json!({"source": "gh", "timout": "5m"})).unwrap_err();
        assert_eq!(typo.code(), "unknown-key");
        assert!(
            typo.to_string().contains("did you mean `timeout`"),
            "{typo}"
        );
        let compound = parse_wait_args(&json!({"source": "gh", "timeout": "1h30m"})).unwrap_err();
        assert_eq!(compound.code(), "compound-timeout");
        let spec = parse_wait_args(&json!({"source": "gh", "since": "now"})).unwrap();
        assert_eq!(spec.since, Since::Now);
    }
}
