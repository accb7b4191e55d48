//! The one place where the runtime uses the analyzer: the static check of a filter when a wait
//! starts or a trigger is loaded, the evaluation of a filter (or a `sender` expression) on an
//! event, and the size bounds of a source's events.
//!
//! Keeping this wiring in one module means the evaluator can change without touching the edge.

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::{EventBounds, Options, Report, Verdict, check_expression, check_filter};
use serde_json::Value;

use crate::model::Event;

/// A filter that passed the static check and may run on the edge.
#[derive(Clone, Debug)]
pub struct Filter {
    source: String,
}

/// Why an evaluation gave no boolean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The meter stopped it (cost limit or deadline): the reason, for a refused wait.
    Limit(String),
    /// The expression failed on this event (a missing attribute, a type mismatch): false.
    Error(String),
}

impl Filter {
    /// Checks `source` statically (size, syntax, types, worst-case cost over `bounds`) and
    /// returns the filter, or the reason it is refused.
    pub fn compile(source: &str, bounds: &EventBounds) -> Result<Filter, String> {
        let options = Options {
            bounds: *bounds,
            ..Options::default()
        };
        Self::from_report(source, &check_filter(source, &options))
    }

    /// Checks a trigger's `sender` expression (CEL over `event` giving a string).
    pub fn compile_sender(source: &str, bounds: &EventBounds) -> Result<Filter, String> {
        let options = Options {
            bounds: *bounds,
            ..Options::default()
        };
        Self::from_report(source, &check_expression(source, &Env::sender(), &options))
    }

    fn from_report(source: &str, report: &Report) -> Result<Filter, String> {
        if report.verdict == Verdict::Refused {
            let reason = report
                .diagnostics
                .first()
                .map_or_else(|| "the filter is refused".to_owned(), |d| d.message.clone());
            return Err(reason);
        }
        Ok(Filter {
            source: source.to_owned(),
        })
    }

    /// The filter's text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates the filter on `event` with the metered evaluator.
    pub fn matches(&self, event: &Event) -> Result<bool, Stopped> {
        match self.evaluate(event)? {
            Value::Bool(b) => Ok(b),
            other => Err(Stopped::Error(format!(
                "the filter gave {other}, not a boolean"
            ))),
        }
    }

    /// Evaluates the expression on `event` and returns its value (for `sender`).
    pub fn evaluate(&self, event: &Event) -> Result<Value, Stopped> {
        let _ = event;
        Err(Stopped::Limit(
            "the metered evaluator is not available in this build".to_owned(),
        ))
    }
}

/// Checks that `event` is within `bounds`; the static cost analysis is only sound for such
/// events, so the edge refuses bigger ones at ingestion.
pub fn check_bounds(event: &Event, bounds: &EventBounds) -> Result<(), String> {
    let headers = [
        ("id", &event.id),
        ("source", &event.source),
        ("type", &event.kind),
        ("action", &event.action),
        ("subject", &event.subject),
    ];
    for (name, value) in headers {
        if value.len() as u64 > bounds.header_field {
            return Err(format!(
                "event.{name} is {} bytes, more than the source's bound of {}",
                value.len(),
                bounds.header_field
            ));
        }
    }
    if event.text.len() as u64 > bounds.text {
        return Err(format!(
            "event.text is {} bytes, more than the source's bound of {}",
            event.text.len(),
            bounds.text
        ));
    }
    let attributes = event.attributes.to_string().len() as u64;
    if attributes > bounds.attributes {
        return Err(format!(
            "event.attributes is {attributes} bytes as compact JSON, more than the source's bound of {}",
            bounds.attributes
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event() -> Event {
        Event {
            source: "gh".into(),
            id: "d1".into(),
            kind: "push".into(),
            action: String::new(),
            subject: "octo/demo".into(),
            text: "hello".into(),
            attributes: serde_json::json!({"a": "bc"}),
        }
    }

    #[test]
    fn bounds_refuse_each_oversized_part() {
        let ok = EventBounds {
            text: 5,
            attributes: 10,
            header_field: 9,
        };
        assert_eq!(check_bounds(&event(), &ok), Ok(()));
        let text = EventBounds { text: 4, ..ok };
        assert!(
            check_bounds(&event(), &text)
                .unwrap_err()
                .contains("event.text")
        );
        let attrs = EventBounds {
            attributes: 9,
            ..ok
        };
        assert!(
            check_bounds(&event(), &attrs)
                .unwrap_err()
                .contains("attributes")
        );
        let header = EventBounds {
            header_field: 8,
            ..ok
        };
        assert!(
            check_bounds(&event(), &header)
                .unwrap_err()
                .contains("subject")
        );
    }

    #[test]
    fn an_oversized_filter_is_refused_statically() {
        let long = format!("event.text == '{}'", "a".repeat(1100));
        assert!(Filter::compile(&long, &EventBounds::DEFAULT).is_err());
    }
}
