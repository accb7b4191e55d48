//! What the runtime is configured with: event sources (kind, secret, bounds, mapping), and the
//! routines and flows whose triggers fire on events. In a platform these come from installed
//! plugins; here from a scenario's `setup` or the `serve` command's configuration file.

use ozcheck_analyzer::{EventBounds, ExtensionSettings};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::filter::EvalHooks;

/// Everything the runtime is configured with.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The virtual start time of a scenario (RFC 3339); ignored by the runtime itself.
    #[serde(default)]
    pub clock: Option<String>,
    /// Event sources.
    #[serde(default)]
    pub sources: Vec<SourceConfig>,
    /// Routines with event triggers.
    #[serde(default)]
    pub routines: Vec<Routine>,
    /// Flows with event triggers.
    #[serde(default)]
    pub flows: Vec<Flow>,
    /// The CEL extensions each environment enables, as the `[extensions]` table of
    /// `ozcheck.toml` writes them (`enabled`, `disabled`, and a table per environment), so the
    /// runtime refuses at registration what the lint refuses.
    #[serde(default)]
    pub extensions: ExtensionSettings,
}

impl Config {
    /// A source by name.
    pub fn source(&self, name: &str) -> Option<&SourceConfig> {
        self.sources.iter().find(|s| s.name == name)
    }

    /// Reads every `secret_env` from `env` (the process environment in `serve`) into `secret`.
    /// Fails, naming the source and the variable, when one is unset or when a source has both.
    pub fn resolve_secrets(&mut self, env: impl Fn(&str) -> Option<String>) -> Result<(), String> {
        for source in &mut self.sources {
            let Some(var) = &source.secret_env else {
                continue;
            };
            if source.secret.is_some() {
                return Err(format!(
                    "source `{}` has both `secret` and `secret_env`: keep one",
                    source.name
                ));
            }
            let secret = env(var).filter(|v| !v.is_empty()).ok_or_else(|| {
                format!(
                    "source `{}`: the environment variable `{var}` (its `secret_env`) is not set",
                    source.name
                )
            })?;
            source.secret = Some(secret);
        }
        Ok(())
    }

    /// What a runtime should warn about at start: GitHub sources without a secret (anyone who
    /// knows the URL can post events to them).
    pub fn warnings(&self) -> Vec<String> {
        self.sources
            .iter()
            .filter(|s| {
                s.kind == SourceKind::Github && s.secret.is_none() && s.secret_env.is_none()
            })
            .map(|s| {
                format!(
                    "source `{}` is a GitHub source without a secret: its deliveries are not \
                     verified, so anyone who knows its URL can send events to it",
                    s.name
                )
            })
            .collect()
    }
}

impl SourceConfig {
    /// A source with defaults for everything but its name and kind.
    pub fn new(name: &str, kind: SourceKind) -> Self {
        Self {
            name: name.to_owned(),
            kind,
            secret: None,
            secret_env: None,
            plugin: None,
            bounds: EventBounds::DEFAULT,
            eval_cost_limit: None,
            eval_clock_step: None,
            mapping: JsonMapping::default(),
        }
    }

    /// The evaluation hooks of this source's filters and `sender` expressions. A clock step
    /// that is not a duration is ignored here; [`crate::configure::check`] refuses it.
    pub fn hooks(&self) -> EvalHooks {
        EvalHooks {
            cost_limit: self.eval_cost_limit,
            clock_step: self
                .eval_clock_step
                .as_deref()
                .and_then(crate::args::parse_duration),
        }
    }
}

/// How a source's deliveries become events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// GitHub webhooks: `X-GitHub-Event`, `X-GitHub-Delivery`, `X-Hub-Signature-256`.
    Github,
    /// Any JSON body, mapped by JSON pointers.
    Json,
}

/// One event source.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourceConfig {
    /// Its name, as waits and triggers refer to it.
    pub name: String,
    /// How deliveries are read.
    pub kind: SourceKind,
    /// The HMAC-SHA256 secret; without one, deliveries are not signed (and not verified).
    #[serde(default)]
    pub secret: Option<String>,
    /// The name of an environment variable that holds the secret, so a configuration file need
    /// not: read by [`Config::resolve_secrets`] when the runtime starts.
    #[serde(default)]
    pub secret_env: Option<String>,
    /// The plugin that declares it (for audit records); default the source's name.
    #[serde(default)]
    pub plugin: Option<String>,
    /// The largest event it may give.
    #[serde(default)]
    pub bounds: EventBounds,
    /// The cost limit of one filter or `sender` evaluation on this source's events, when it
    /// must differ from the static limit (a test hook: it makes the meter's stop reachable).
    #[serde(default)]
    pub eval_cost_limit: Option<u64>,
    /// How far the evaluation clock moves at each read, for filters and `sender` alike (a
    /// test hook: it makes the 250 ms deadline reachable without real time passing). A
    /// duration such as `100ms`.
    #[serde(default)]
    pub eval_clock_step: Option<String>,
    /// For `json` sources: where each event field is in the body.
    #[serde(default)]
    pub mapping: JsonMapping,
}

/// JSON pointers (RFC 6901) into a delivery's body, one per event field.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct JsonMapping {
    /// The event id (string or number), required.
    pub id: String,
    /// The event type, required.
    #[serde(rename = "type")]
    pub kind: String,
    /// The action.
    pub action: String,
    /// The subject.
    pub subject: String,
    /// The text.
    pub text: String,
    /// The attributes (an object).
    pub attributes: String,
}

impl Default for JsonMapping {
    fn default() -> Self {
        Self {
            id: "/id".into(),
            kind: "/type".into(),
            action: "/action".into(),
            subject: "/subject".into(),
            text: "/text".into(),
            attributes: "/attributes".into(),
        }
    }
}

/// A routine with event triggers.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Routine {
    /// Its name.
    pub name: String,
    /// Its event triggers.
    #[serde(default)]
    pub triggers: Vec<RoutineTrigger>,
    /// Its limits.
    #[serde(default)]
    pub limits: Limits,
}

/// A routine's limits.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Most fires in any hour.
    #[serde(default)]
    pub max_fires_per_hour: Option<u32>,
}

/// One named trigger of a routine.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoutineTrigger {
    /// The trigger's name.
    pub name: String,
    /// What it fires on.
    pub event: EventTrigger,
}

/// An event trigger: which events fire it.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventTrigger {
    /// The source.
    pub source: String,
    /// The types; absent means any.
    #[serde(default)]
    pub types: Option<Vec<String>>,
    /// A CEL filter over `event`.
    #[serde(default)]
    pub filter: Option<String>,
    /// A CEL expression over `event` giving the sender's name.
    #[serde(default)]
    pub sender: Option<String>,
    /// The senders allowed to fire it (checked through `sender`).
    #[serde(default)]
    pub allow_senders: Option<Vec<String>>,
}

/// A flow with an event trigger.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// Its name.
    pub name: String,
    /// Its trigger.
    pub trigger: FlowTrigger,
    /// Its steps; the reference runtime runs `wait_for_event` steps in order.
    #[serde(default)]
    pub steps: Vec<FlowStep>,
}

/// A flow's trigger.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowTrigger {
    /// The event it fires on.
    pub event: EventTrigger,
}

/// One flow step: a `wait_for_event` or an `approval`, maybe guarded by `when`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowStep {
    /// The step id.
    pub id: String,
    /// CEL over `trigger` and the earlier steps' outputs; the step is skipped when false.
    #[serde(default)]
    pub when: Option<String>,
    /// A `wait_for_event` step's arguments.
    #[serde(default)]
    pub wait_for_event: Option<Value>,
    /// An `approval` step.
    #[serde(default)]
    pub approval: Option<Approval>,
}

/// An approval step: a person is asked, with `details` rendered from the templates in it.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// The text shown, which may hold `${{ … }}`.
    #[serde(default)]
    pub details: String,
}
