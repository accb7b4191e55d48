//! Event triggers of routines and flows (E8, E9, E12): every trigger of the configuration with
//! its `filter` and `sender` checked once, which triggers an event fires, the deterministic job
//! ids that make a redelivery fire once, and `allow_senders` through the `sender` expression.
//!
//! This module decides; [`crate::fires`] records and starts what it decided.

use serde_json::Value;

use crate::config::{Config, EventTrigger};
use crate::filter::{ExprRole, Filter, PreparedEvent, Refusal, Stopped};
use crate::model::Event;

/// The key of the kill switch among the store's flags.
pub const KILL_SWITCH: &str = "kill-switch";

/// The flag key that pauses a routine.
pub fn paused_key(routine: &str) -> String {
    format!("paused:{routine}")
}

/// What a trigger starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The routine at this index of the configuration.
    Routine(usize),
    /// The flow at this index of the configuration.
    Flow(usize),
}

/// One trigger with its expressions checked.
#[derive(Debug)]
pub struct CompiledTrigger {
    /// What it starts.
    pub target: Target,
    /// The routine's or flow's name.
    pub name: String,
    /// The trigger's name (the flow's name for a flow).
    pub trigger: String,
    /// The routine's `limits.max_fires_per_hour`.
    pub max_fires_per_hour: Option<u32>,
    spec: EventTrigger,
    filter: Option<Filter>,
    sender: Option<Filter>,
    /// Why the trigger can never fire (its filter or sender was refused), if so.
    broken: Option<(&'static str, Refusal)>,
}

impl CompiledTrigger {
    /// `routine` or `flow`.
    pub fn kind(&self) -> &'static str {
        match self.target {
            Target::Routine(_) => "routine",
            Target::Flow(_) => "flow",
        }
    }

    /// The deterministic job id of this trigger's fire for `event`: a delivery sent again
    /// fires once.
    pub fn job_id(&self, event: &Event) -> String {
        match self.target {
            Target::Routine(_) => format!("rt.{}.{}.{}", self.name, self.trigger, event.id),
            Target::Flow(_) => format!("event-{}-{}", self.name, event.id),
        }
    }

    /// Whether `allow_senders` lets `event` fire this trigger, through the `sender`
    /// expression; the reason when it does not.
    pub fn sender_allowed(&self, event: &PreparedEvent) -> Result<(), String> {
        let Some(allowed) = &self.spec.allow_senders else {
            return Ok(());
        };
        let Some(sender) = &self.sender else {
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

    fn fires_on(&self, event: &Event, prepared: &PreparedEvent) -> bool {
        self.broken.is_none()
            && self.spec.source == event.source
            && self
                .spec
                .types
                .as_ref()
                .is_none_or(|ts| ts.contains(&event.kind))
            && self
                .filter
                .as_ref()
                .is_none_or(|f| f.matches(prepared) == Ok(true))
    }
}

/// Every trigger of the configuration, with its expressions checked once.
#[derive(Debug)]
pub struct Triggers {
    all: Vec<CompiledTrigger>,
}

fn compile_trigger(
    config: &Config,
    target: Target,
    name: &str,
    trigger: &str,
    max_fires_per_hour: Option<u32>,
    spec: &EventTrigger,
) -> CompiledTrigger {
    let source = config.source(&spec.source);
    let bounds = source.map(|s| s.bounds).unwrap_or_default();
    let hooks = source
        .map(crate::config::SourceConfig::hooks)
        .unwrap_or_default();
    let compile = |role, expr: &Option<String>| {
        let extensions = config.extensions.of(ExprRole::env_kind(role));
        expr.as_deref()
            .map(|e| Filter::compile_as(role, e, &bounds, extensions, hooks))
            .transpose()
    };
    let filter = compile(ExprRole::Filter, &spec.filter);
    let sender = compile(ExprRole::Sender, &spec.sender);
    let broken = match (&filter, &sender) {
        (Err(e), _) => Some(("filter", e.clone())),
        (_, Err(e)) => Some(("sender", e.clone())),
        _ => None,
    };
    CompiledTrigger {
        target,
        name: name.to_owned(),
        trigger: trigger.to_owned(),
        max_fires_per_hour,
        spec: spec.clone(),
        filter: filter.ok().flatten(),
        sender: sender.ok().flatten(),
        broken,
    }
}

impl Triggers {
    /// Checks every trigger's `filter` and `sender`; a refused expression disables its trigger.
    pub fn compile(config: &Config) -> Self {
        let mut all = Vec::new();
        for (i, routine) in config.routines.iter().enumerate() {
            for t in &routine.triggers {
                all.push(compile_trigger(
                    config,
                    Target::Routine(i),
                    &routine.name,
                    &t.name,
                    routine.limits.max_fires_per_hour,
                    &t.event,
                ));
            }
        }
        for (i, flow) in config.flows.iter().enumerate() {
            all.push(compile_trigger(
                config,
                Target::Flow(i),
                &flow.name,
                &flow.name,
                None,
                &flow.trigger.event,
            ));
        }
        Self { all }
    }

    /// The first trigger whose `filter` or `sender` the analyzer refuses: which trigger, which
    /// expression, and the refusal (saving such a routine or flow is refused with its code).
    pub fn first_refused(&self) -> Option<(&CompiledTrigger, &'static str, &Refusal)> {
        self.all
            .iter()
            .find_map(|t| t.broken.as_ref().map(|(what, r)| (t, *what, r)))
    }

    /// Whether any trigger listens to `source`.
    pub fn watches(&self, source: &str) -> bool {
        self.all.iter().any(|t| t.spec.source == source)
    }

    /// The triggers `event` fires: source, types and filter match (a filter that fails or is
    /// stopped is false).
    pub fn matching<'a>(
        &'a self,
        event: &'a Event,
        prepared: &'a PreparedEvent,
    ) -> impl Iterator<Item = &'a CompiledTrigger> + 'a {
        self.all.iter().filter(|t| t.fires_on(event, prepared))
    }
}
