//! The runtime's data: events, jobs, waits and their states, trigger fires and audit records.
//! These are plain values; the [`crate::store::Store`] persists them and the
//! [`crate::Runtime`] moves waits through their one state machine.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::Timestamp;

/// An event as a source's function produced it from a verified delivery. Its identity is
/// `(source, id)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// The source that delivered it.
    pub source: String,
    /// The id the sender gave it (unique within its source).
    pub id: String,
    /// The event type, e.g. `check_suite`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The action, e.g. `completed`; empty when the source has none.
    #[serde(default)]
    pub action: String,
    /// What the event is about, e.g. `octo/demo#12`; empty when it is about nothing in particular.
    #[serde(default)]
    pub subject: String,
    /// Free text (bounded by the source's `text` bound).
    #[serde(default)]
    pub text: String,
    /// Structured data (bounded by the source's `attributes` bound).
    #[serde(default = "empty_object")]
    pub attributes: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

impl Event {
    /// The event as the JSON object a CEL filter sees as `event`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "id": self.id,
            "source": self.source,
            "type": self.kind,
            "action": self.action,
            "subject": self.subject,
            "text": self.text,
            "attributes": self.attributes,
        })
    }
}

/// An event as the store keeps it: with its arrival order and time.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredEvent {
    /// Arrival sequence, unique and increasing; look-back goes in this order.
    pub seq: i64,
    /// When the edge received it.
    pub received_at: Timestamp,
    /// The event, shared: an edge hands one delivery's event from stage to stage and answers
    /// with it, and the largest events (16 KiB of text, 8 KiB of attributes) are not copied
    /// on the way.
    pub event: Arc<Event>,
}

/// Which events count for a wait (E1 `since`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Since {
    /// Events that arrived since the job started (the default).
    Job,
    /// Only events that arrive after the wait was registered.
    Now,
}

impl Since {
    /// The name used in arguments and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Since::Job => "job",
            Since::Now => "now",
        }
    }
}

/// The validated arguments of one wait.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitSpec {
    /// The event source.
    pub source: String,
    /// Event types to accept; `None` means any type.
    pub types: Option<Vec<String>>,
    /// The subject; `None` means any subject.
    pub subject: Option<String>,
    /// The CEL filter over `event`.
    pub filter: Option<String>,
    /// How long to wait.
    pub timeout: Duration,
    /// Which events count.
    pub since: Since,
}

impl WaitSpec {
    /// Whether `event` has this wait's source, subject and one of its types (the filter aside).
    pub fn admits(&self, event: &Event) -> bool {
        event.source == self.source
            && self.subject.as_ref().is_none_or(|s| *s == event.subject)
            && self.takes_type(&event.kind)
    }

    /// Whether an event of type `kind` may end the wait (its `types` unset, or naming it).
    pub fn takes_type(&self, kind: &str) -> bool {
        self.types
            .as_ref()
            .is_none_or(|ts| ts.iter().any(|t| t == kind))
    }
}

/// Where a wait is in its one state machine: `open → matched | timed_out | refused`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitState {
    /// Waiting.
    Open,
    /// Got its event.
    Matched,
    /// No event came before the deadline.
    TimedOut,
    /// Refused (its filter was stopped on a retained event, or it may not wait here).
    Refused,
}

impl WaitState {
    /// The name used in the store and in answers.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitState::Open => "open",
            WaitState::Matched => "matched",
            WaitState::TimedOut => "timed_out",
            WaitState::Refused => "refused",
        }
    }

    /// Parses a stored state name.
    pub fn parse(text: &str) -> Option<WaitState> {
        Some(match text {
            "open" => WaitState::Open,
            "matched" => WaitState::Matched,
            "timed_out" => WaitState::TimedOut,
            "refused" => WaitState::Refused,
            _ => return None,
        })
    }
}

/// A wait as the store keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct Wait {
    /// Registration order, assigned by the store; the oldest wait of a job gets an event first.
    pub seq: i64,
    /// The wait's name (unique).
    pub name: String,
    /// The job that waits.
    pub job: String,
    /// What it waits for.
    pub spec: WaitSpec,
    /// Events with an arrival sequence above this count.
    pub after_seq: i64,
    /// When it was registered.
    pub created_at: Timestamp,
    /// When it times out.
    pub deadline: Timestamp,
    /// Its state.
    pub state: WaitState,
    /// The event it got, `(source, id)`, once matched.
    pub event: Option<(String, String)>,
    /// The event it got, as it was when claimed: the wait keeps it, so its answer and its
    /// step output stay readable after the edge's one-day retention forgot the event. Shared
    /// with the routed event, not copied (an event may be 24 KiB).
    pub matched: Option<Arc<Event>>,
    /// Why it was refused.
    pub reason: Option<String>,
}

impl Wait {
    /// A new open wait (the store gives it its sequence).
    pub fn open(
        job: &str,
        name: &str,
        spec: WaitSpec,
        after_seq: i64,
        created_at: Timestamp,
        deadline: Timestamp,
    ) -> Self {
        Self {
            seq: 0,
            name: name.to_owned(),
            job: job.to_owned(),
            spec,
            after_seq,
            created_at,
            deadline,
            state: WaitState::Open,
            event: None,
            matched: None,
            reason: None,
        }
    }
}

/// A job as far as waits are concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The job id.
    pub id: String,
    /// When it started.
    pub started_at: Timestamp,
    /// The last event sequence when it started; `since: job` counts events after it.
    pub start_seq: i64,
    /// The job's own deadline (`limits.timeout`), which also ends its waits.
    pub deadline: Option<Timestamp>,
    /// Which agent runtime runs it (`pydantic-ai`, `acp`, …).
    pub runtime: String,
    /// Whether this is a shadow run.
    pub shadow: bool,
    /// Whether it may run outside text (ACP: sandbox tier 1 and no plugin secrets).
    pub sandboxed: bool,
    /// Whether an outside event has reached it (E11).
    pub outside_started: bool,
    /// When it ended; an ended job neither waits nor takes events.
    pub ended_at: Option<Timestamp>,
}

/// Whether a trigger fire started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FireState {
    /// The job was started.
    Started,
    /// A limit, pause or kill switch refused the start.
    Refused,
}

/// One fire of a routine or flow trigger.
#[derive(Clone, Debug, PartialEq)]
pub struct Fire {
    /// The deterministic job id (`rt.<routine>.<trigger>.<event id>` or `event-<flow>-<event id>`).
    pub job: String,
    /// `routine` or `flow`.
    pub kind: String,
    /// The routine's or flow's name.
    pub name: String,
    /// The trigger's name (the flow's name for flows).
    pub trigger: String,
    /// Started or refused.
    pub state: FireState,
    /// Why it was refused.
    pub reason: Option<String>,
    /// When it fired.
    pub at: Timestamp,
    /// The event it fired on, kept with the fire: its trigger data, and a flow's
    /// `trigger.event`, for as long as the fire's job runs, past the one-day retention.
    pub event: Option<Event>,
}

/// One audit record: an action and its fields.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditRecord {
    /// When it was recorded.
    pub at: Timestamp,
    /// `event.delivery`, `event.refused`, `event.failed`, `event.received` or `event.match`.
    pub action: String,
    /// The action's fields.
    pub data: Value,
}

/// Where a flow step that is not a wait stands (a wait step's state is its wait's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepState {
    /// An approval step that waits for a person.
    Pending,
    /// An approval step that was answered.
    Decided,
    /// A step whose `when` was false.
    Skipped,
}

impl StepState {
    /// The name used in the store and in answers.
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::Pending => "pending",
            StepState::Decided => "decided",
            StepState::Skipped => "skipped",
        }
    }

    /// Parses a stored state name.
    pub fn parse(text: &str) -> Option<StepState> {
        Some(match text {
            "pending" => StepState::Pending,
            "decided" => StepState::Decided,
            "skipped" => StepState::Skipped,
            _ => return None,
        })
    }
}

/// A flow step that is not a wait (an approval, or a step skipped by its `when`).
#[derive(Clone, Debug, PartialEq)]
pub struct StepRecord {
    /// The flow's job.
    pub job: String,
    /// The step id.
    pub step: String,
    /// Where it stands.
    pub state: StepState,
    /// Its output for later steps (`{"approved": …}`, `{"matched": false}`); null while
    /// pending.
    pub output: Value,
    /// An approval's rendered `details`.
    pub details: Option<String>,
    /// When it was reached.
    pub at: Timestamp,
}

/// A call of a safe output by a job (E10).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// The job that called it.
    pub job: String,
    /// The output's name.
    pub name: String,
    /// Whether it is applied when called (`apply: now`) rather than when the fire ends.
    pub apply_now: bool,
    /// When the agent called it.
    pub called_at: Timestamp,
    /// When it was applied, once it was.
    pub applied_at: Option<Timestamp>,
}
