//! Event triggers of routines and flows (E8–E10): which triggers an event fires, the
//! deterministic job ids that make a redelivery fire once, `allow_senders` through the `sender`
//! expression, `max_fires_per_hour`, pause and the kill switch, and the `${{ trigger.event… }}`
//! templates a flow step's arguments may hold.

use serde_json::{Value, json};

use crate::config::{Config, EventTrigger};
use crate::edge::Runtime;
use crate::filter::{Filter, PreparedEvent, Stopped};
use crate::model::{Event, Fire, FireState, StoredEvent};
use crate::store::{FireLimit, FireOutcome, Store, StoreError};

/// The key of the kill switch among the store's flags.
pub const KILL_SWITCH: &str = "kill-switch";

/// The flag key that pauses a routine.
pub fn paused_key(routine: &str) -> String {
    format!("paused:{routine}")
}

struct CompiledTrigger {
    target: Target,
    trigger: String,
    spec: EventTrigger,
    filter: Option<Filter>,
    sender: Option<Filter>,
    /// Why the trigger can never fire (its filter or sender was refused), if so.
    broken: Option<String>,
}

#[derive(Clone, Copy)]
enum Target {
    Routine(usize),
    Flow(usize),
}

/// Every trigger of the configuration, with its expressions checked once.
pub struct Triggers {
    all: Vec<CompiledTrigger>,
}

/// A trigger an event fires (before limits).
pub struct PendingFire<'a> {
    trigger: &'a CompiledTrigger,
}

impl Triggers {
    /// Checks every trigger's `filter` and `sender`; a refused expression disables its trigger.
    pub fn compile(config: &Config) -> Self {
        let mut all = Vec::new();
        let mut push = |target, trigger: &str, spec: &EventTrigger| {
            let bounds = config
                .source(&spec.source)
                .map(|s| s.bounds)
                .unwrap_or_default();
            let limit = config.source(&spec.source).and_then(|s| s.eval_cost_limit);
            let filter = spec
                .filter
                .as_deref()
                .map(|f| Filter::compile_with_limit(f, &bounds, limit));
            let sender = spec
                .sender
                .as_deref()
                .map(|f| Filter::compile_sender(f, &bounds));
            let broken = match (&filter, &sender) {
                (Some(Err(e)), _) => Some(format!("filter refused: {e}")),
                (_, Some(Err(e))) => Some(format!("sender refused: {e}")),
                _ => None,
            };
            all.push(CompiledTrigger {
                target,
                trigger: trigger.to_owned(),
                spec: spec.clone(),
                filter: filter.and_then(Result::ok),
                sender: sender.and_then(Result::ok),
                broken,
            });
        };
        for (i, routine) in config.routines.iter().enumerate() {
            for t in &routine.triggers {
                push(Target::Routine(i), &t.name, &t.event);
            }
        }
        for (i, flow) in config.flows.iter().enumerate() {
            push(Target::Flow(i), &flow.name, &flow.trigger.event);
        }
        Self { all }
    }

    /// Whether any trigger listens to `source`.
    pub fn watches(&self, source: &str) -> bool {
        self.all.iter().any(|t| t.spec.source == source)
    }

    /// The triggers `event` fires: source, types and filter match (a filter that fails or is
    /// stopped is false).
    pub fn matching(&self, event: &Event, prepared: &PreparedEvent) -> Vec<PendingFire<'_>> {
        self.all
            .iter()
            .filter(|t| t.broken.is_none() && t.spec.source == event.source)
            .filter(|t| {
                t.spec
                    .types
                    .as_ref()
                    .is_none_or(|ts| ts.contains(&event.kind))
            })
            .filter(|t| {
                t.filter
                    .as_ref()
                    .is_none_or(|f| f.matches(prepared) == Ok(true))
            })
            .map(|trigger| PendingFire { trigger })
            .collect()
    }
}

fn sender_allowed(t: &CompiledTrigger, event: &PreparedEvent) -> Result<(), String> {
    let Some(allowed) = &t.spec.allow_senders else {
        return Ok(());
    };
    let Some(sender) = &t.sender else {
        return Err("allow_senders without a sender expression".to_owned());
    };
    match sender.evaluate(event) {
        Ok(Value::String(s)) if allowed.contains(&s) => Ok(()),
        Ok(Value::String(s)) => Err(format!("sender `{s}` is not allowed")),
        Ok(other) => Err(format!("sender gave {other}, not a string")),
        Err(Stopped::Limit(e) | Stopped::Error(e)) => {
            Err(format!("sender could not be evaluated: {e}"))
        }
    }
}

/// Fires one trigger for a retained event: records the fire once per job id (enforcing the
/// hourly limit atomically), audits where the event went and starts the job.
pub async fn fire<S: Store>(
    rt: &Runtime<S>,
    pending: PendingFire<'_>,
    stored: &StoredEvent,
    prepared: &PreparedEvent,
) -> Result<(), StoreError> {
    let t = pending.trigger;
    let event = &stored.event;
    if let Err(reason) = sender_allowed(t, prepared) {
        rt.log(format!(
            "trigger {} skipped event {}: {reason}",
            t.trigger, event.id
        ));
        return Ok(());
    }
    let config = rt.config();
    let (kind, name, job, limit) = match t.target {
        Target::Routine(i) => {
            let r = &config.routines[i];
            let job = format!("rt.{}.{}.{}", r.name, t.trigger, event.id);
            ("routine", r.name.clone(), job, r.limits.max_fires_per_hour)
        }
        Target::Flow(i) => {
            let f = &config.flows[i];
            (
                "flow",
                f.name.clone(),
                format!("event-{}-{}", f.name, event.id),
                None,
            )
        }
    };
    let store = rt.store();
    let refusal = if store.flag(KILL_SWITCH).await? {
        Some("kill-switch")
    } else if kind == "routine" && store.flag(&paused_key(&name)).await? {
        Some("paused")
    } else {
        None
    };
    let record = Fire {
        job: job.clone(),
        kind: kind.to_owned(),
        name: name.clone(),
        trigger: t.trigger.clone(),
        state: if refusal.is_some() {
            FireState::Refused
        } else {
            FireState::Started
        },
        reason: refusal.map(str::to_owned),
        at: rt.now(),
    };
    let limit = limit.map(|max| FireLimit {
        max,
        window_start: rt.hour_window(),
    });
    let mut audit = json!({"source": event.source, "id": event.id, "to": kind,
                           "name": name, "trigger": t.trigger, "job": job});
    if kind == "flow" {
        audit["charged_to"] = Value::String(format!("service:webhook/{name}"));
    }
    match store.record_fire(&record, limit).await? {
        FireOutcome::Duplicate => return Ok(()),
        FireOutcome::Refused(reason) => {
            audit["outcome"] = "refused".into();
            audit["reason"] = reason.into();
            rt.audit("event.match", audit).await?;
        }
        FireOutcome::Started => {
            audit["outcome"] = "started".into();
            rt.audit("event.match", audit).await?;
            rt.start_fired_job(&job, stored).await?;
            if let Target::Flow(i) = t.target {
                rt.run_flow(&job, i, 0, event).await?;
            }
        }
    }
    Ok(())
}

/// Replaces `${{ trigger.event.FIELD }}` and `${{ trigger.event.attributes.KEY }}` in the
/// string values of `args` with the trigger event's values. Other expressions are left as
/// written (and then fail validation where they matter).
pub fn expand_templates(args: &Value, trigger: &Event) -> Value {
    match args {
        Value::String(s) => Value::String(expand(s, trigger)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| expand_templates(v, trigger)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), expand_templates(v, trigger)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn expand(text: &str, trigger: &Event) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        out.push_str(&rest[..start]);
        let expr = rest[start + 3..start + len].trim();
        match lookup(expr, trigger) {
            Some(v) => out.push_str(&v),
            None => out.push_str(&rest[start..start + len + 2]),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

fn lookup(path: &str, trigger: &Event) -> Option<String> {
    let field = path.strip_prefix("trigger.event.")?;
    let value = match field {
        "id" => Value::String(trigger.id.clone()),
        "source" => Value::String(trigger.source.clone()),
        "type" => Value::String(trigger.kind.clone()),
        "action" => Value::String(trigger.action.clone()),
        "subject" => Value::String(trigger.subject.clone()),
        "text" => Value::String(trigger.text.clone()),
        _ => trigger
            .attributes
            .get(field.strip_prefix("attributes.")?)?
            .clone(),
    };
    Some(match value {
        Value::String(s) => s,
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_take_trigger_event_fields() {
        let event = Event {
            source: "gh".into(),
            id: "d1".into(),
            kind: "pull_request".into(),
            action: "opened".into(),
            subject: "octo/demo#12".into(),
            text: String::new(),
            attributes: json!({"number": 12}),
        };
        let args = json!({"subject": "${{ trigger.event.subject }}", "x": "n=${{trigger.event.attributes.number}} ${{ steps.a }}"});
        let out = expand_templates(&args, &event);
        assert_eq!(out["subject"], "octo/demo#12");
        assert_eq!(out["x"], "n=12 ${{ steps.a }}");
    }
}
