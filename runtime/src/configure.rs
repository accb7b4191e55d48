//! Saving a configuration (a plugin's sources, routines and flows): the checks that refuse it,
//! each with the code the lint or the analyzer gives for the same mistake (E12: an expression
//! whose worst case costs too much is refused when the routine or plugin is saved).
//!
//! A refused configuration changes nothing; an accepted one is put in force with
//! [`crate::Runtime::reconfigure`] and its triggers fire on the next event.

use crate::args::{parse_duration, parse_wait_args};
use crate::config::Config;
use crate::error::RuntimeError;
use crate::keys::{MAX_HEADER_FIELD, MAX_NAME, too_long};
use crate::triggers::Triggers;

/// Checks `config` as a save would: every trigger's `filter` and `sender` through the
/// analyzer, every flow step's action and arguments, every source's test hooks.
pub fn check(config: &Config) -> Result<(), RuntimeError> {
    check_names(config)?;
    for source in &config.sources {
        if source.bounds.header_field > MAX_HEADER_FIELD {
            return Err(RuntimeError::invalid(
                "bound-too-large",
                format!(
                    "source `{}`: `header_field` is {} bytes; the runtime keeps header fields \
                     of at most {MAX_HEADER_FIELD} bytes (they are keys of its stores)",
                    source.name, source.bounds.header_field
                ),
            ));
        }
        if let Some(step) = &source.eval_clock_step {
            if parse_duration(step).is_none() {
                return Err(RuntimeError::invalid(
                    "invalid-timeout",
                    format!(
                        "source `{}`: `eval_clock_step` `{step}` is not a duration",
                        source.name
                    ),
                ));
            }
        }
    }
    if let Some((trigger, what, refusal)) = Triggers::compile(config).first_refused() {
        return Err(RuntimeError::refused(
            refusal.code,
            format!(
                "{} `{}`, trigger `{}`: the {what} is refused: {}",
                trigger.kind(),
                trigger.name,
                trigger.trigger,
                refusal.message
            ),
        ));
    }
    for flow in &config.flows {
        for step in &flow.steps {
            let actions =
                usize::from(step.wait_for_event.is_some()) + usize::from(step.approval.is_some());
            if actions != 1 {
                return Err(RuntimeError::invalid(
                    "step-action-count",
                    format!(
                        "flow `{}`, step `{}`: a step has exactly one of wait_for_event, \
                         approval ({actions} given)",
                        flow.name, step.id
                    ),
                ));
            }
            if let Some(args) = &step.wait_for_event {
                parse_wait_args(&with_templates_filled(args)).map_err(|e| {
                    RuntimeError::invalid(
                        e.code(),
                        format!("flow `{}`, step `{}`: {e}", flow.name, step.id),
                    )
                })?;
            }
        }
    }
    Ok(())
}

/// Names that must be unique: sources, routines and their triggers, flows and their steps.
fn check_names(config: &Config) -> Result<(), RuntimeError> {
    let duplicate = |what: &str, name: &str| {
        Err(RuntimeError::invalid(
            "duplicate-name",
            format!("two {what} are named `{name}`"),
        ))
    };
    let names = config
        .sources
        .iter()
        .map(|s| ("a source's name", &s.name))
        .chain(config.routines.iter().flat_map(|r| {
            std::iter::once(("a routine's name", &r.name))
                .chain(r.triggers.iter().map(|t| ("a trigger's name", &t.name)))
        }))
        .chain(config.flows.iter().flat_map(|f| {
            std::iter::once(("a flow's name", &f.name))
                .chain(f.steps.iter().map(|s| ("a step's id", &s.id)))
        }));
    for (what, name) in names {
        if let Some(why) = too_long(what, name, MAX_NAME) {
            return Err(RuntimeError::invalid("name-too-long", why));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for s in &config.sources {
        if !seen.insert(("source", s.name.as_str())) {
            return duplicate("sources", &s.name);
        }
    }
    for r in &config.routines {
        if !seen.insert(("routine", r.name.as_str())) {
            return duplicate("routines", &r.name);
        }
        let mut triggers = std::collections::HashSet::new();
        for t in &r.triggers {
            if !triggers.insert(t.name.as_str()) {
                return duplicate(&format!("triggers of routine `{}`", r.name), &t.name);
            }
        }
    }
    for f in &config.flows {
        if !seen.insert(("flow", f.name.as_str())) {
            return duplicate("flows", &f.name);
        }
        let mut steps = std::collections::HashSet::new();
        for s in &f.steps {
            if !steps.insert(s.id.as_str()) {
                return duplicate(&format!("steps of flow `{}`", f.name), &s.id);
            }
        }
    }
    Ok(())
}

/// A step's arguments with a templated `subject` replaced by a placeholder, so the rest of the
/// grammar can be checked before any event renders the template.
fn with_templates_filled(args: &serde_json::Value) -> serde_json::Value {
    let mut args = args.clone();
    if let Some(serde_json::Value::String(subject)) = args.get_mut("subject") {
        if subject.contains("${{") {
            "rendered".clone_into(subject);
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn config(value: serde_json::Value) -> Config {
        serde_json::from_value(value).expect("a configuration")
    }

    #[test]
    fn a_routine_whose_filter_is_refused_cannot_be_saved() {
        let nested = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
        let c = config(json!({
            "sources": [{"name": "ci", "kind": "json"}],
            "routines": [{"name": "r", "triggers": [
                {"name": "t", "event": {"source": "ci", "filter": nested}}]}]
        }));
        let e = check(&c).unwrap_err();
        assert_eq!(e.kind(), "refused");
        assert_eq!(e.code(), "cost-over-limit", "{e}");
        assert!(e.to_string().contains("routine `r`, trigger `t`"), "{e}");
    }

    #[test]
    fn flow_steps_and_names_are_checked() {
        let c = config(json!({
            "sources": [{"name": "ci", "kind": "json"}],
            "flows": [{"name": "f", "trigger": {"event": {"source": "ci"}},
                       "steps": [{"id": "a", "wait_for_event": {"source": "ci",
                                   "subject": "${{ trigger.event.subject }}", "timeout": "1h30m"}}]}]
        }));
        assert_eq!(check(&c).unwrap_err().code(), "compound-timeout");
        let c = config(json!({"sources": [{"name": "ci", "kind": "json"},
                                          {"name": "ci", "kind": "github"}]}));
        assert_eq!(check(&c).unwrap_err().code(), "duplicate-name");
        let ok = config(json!({
            "sources": [{"name": "ci", "kind": "json"}],
            "flows": [{"name": "f", "trigger": {"event": {"source": "ci"}},
                       "steps": [{"id": "a", "wait_for_event": {"source": "ci",
                                   "subject": "${{ trigger.event.subject }}"}},
                                 {"id": "b", "approval": {"details": "look"}}]}]
        }));
        assert!(check(&ok).is_ok());
    }
}
