//! Fires of routine and flow triggers (E8–E10): for each trigger an event fires
//! ([`crate::triggers`] decides which), `allow_senders`, the kill switch and pause, the hourly
//! limit enforced atomically with the record of the fire, the `event.match` audit record, and
//! the fired job with its flow's first step.

use std::time::Duration;

use serde_json::{Value, json};

use crate::clock::Timestamp;
use crate::edge::Runtime;
use crate::filter::PreparedEvent;
use crate::model::{AuditRecord, Event, Fire, FireState, Job, StoredEvent};
use crate::store::{FireLimit, FireOutcome, Store, StoreError};
use crate::triggers::{CompiledTrigger, KILL_SWITCH, Target, paused_key};

const HOUR: Duration = Duration::from_secs(3600);

impl<S: Store> Runtime<S> {
    /// Fires every trigger the event matches.
    pub(crate) async fn fire_triggers(&self, stored: &StoredEvent) -> Result<(), StoreError> {
        let setup = self.setup();
        if !setup.triggers.watches(&stored.event.source) {
            return Ok(());
        }
        let Ok(prepared) = PreparedEvent::new(&stored.event) else {
            return Ok(());
        };
        for trigger in setup.triggers.matching(&stored.event, &prepared) {
            self.fire(trigger, stored, &prepared).await?;
        }
        Ok(())
    }

    /// Fires one trigger for a retained event: records the fire once per job id (enforcing the
    /// hourly limit atomically), audits where the event went and starts the job.
    async fn fire(
        &self,
        t: &CompiledTrigger,
        stored: &StoredEvent,
        prepared: &PreparedEvent,
    ) -> Result<(), StoreError> {
        let event = &stored.event;
        if let Err(reason) = t.sender_allowed(prepared) {
            self.log(format!(
                "trigger {} skipped event {}: {reason}",
                t.trigger, event.id
            ));
            return Ok(());
        }
        let kind = t.kind();
        let job = t.job_id(event);
        let store = self.store();
        let refusal = if store.flag(KILL_SWITCH).await? {
            Some("kill-switch")
        } else if kind == "routine" && store.flag(&paused_key(&t.name)).await? {
            Some("paused")
        } else {
            None
        };
        let record = Fire {
            job: job.clone(),
            kind: kind.to_owned(),
            name: t.name.clone(),
            trigger: t.trigger.clone(),
            state: if refusal.is_some() {
                FireState::Refused
            } else {
                FireState::Started
            },
            reason: refusal.map(str::to_owned),
            at: self.now(),
            event: Some(Event::clone(event)),
        };
        let limit = t.max_fires_per_hour.map(|max| FireLimit {
            max,
            window_start: self.hour_window(),
        });
        let mut data = json!({"source": event.source, "id": event.id, "to": kind,
                              "name": t.name, "trigger": t.trigger, "job": job});
        if kind == "flow" {
            data["charged_to"] = Value::String(format!("service:webhook/{}", t.name));
        }
        let audit = AuditRecord {
            at: self.now(),
            action: "event.match".to_owned(),
            data,
        };
        // The fire, its job (outside-started from its first step, E11) and the audit record
        // commit together: a crash leaves either all of them or none.
        let fired = Job {
            id: job.clone(),
            started_at: self.now(),
            start_seq: stored.seq,
            deadline: None,
            runtime: "pydantic-ai".into(),
            shadow: false,
            sandboxed: true,
            outside_started: true,
            ended_at: None,
        };
        let outcome = store.record_fire(&record, limit, &fired, &audit).await?;
        if let (FireOutcome::Started, Target::Flow(i)) = (outcome, t.target) {
            self.start_flow(&job, i, event).await?;
        }
        Ok(())
    }

    /// The event a fire fired on: the copy the fire keeps (a fire recorded before fires kept
    /// their event reads it from the retained events).
    pub async fn fire_event(&self, fire: &Fire) -> Result<Option<Event>, StoreError> {
        if let Some(event) = &fire.event {
            return Ok(Some(event.clone()));
        }
        let config = self.config();
        let (source, prefix) = if fire.kind == "routine" {
            let source = config
                .routines
                .iter()
                .find(|r| r.name == fire.name)
                .and_then(|r| r.triggers.iter().find(|t| t.name == fire.trigger))
                .map(|t| t.event.source.clone());
            (source, format!("rt.{}.{}.", fire.name, fire.trigger))
        } else {
            let source = config
                .flows
                .iter()
                .find(|f| f.name == fire.name)
                .map(|f| f.trigger.event.source.clone());
            (source, format!("event-{}-", fire.name))
        };
        match (source, fire.job.strip_prefix(&prefix)) {
            (Some(source), Some(id)) => Ok(self
                .store()
                .event(&source, id)
                .await?
                .map(|e| std::sync::Arc::unwrap_or_clone(e.event))),
            _ => Ok(None),
        }
    }

    /// Sliding one-hour window start for fire limits.
    fn hour_window(&self) -> Timestamp {
        self.now().minus(HOUR).plus(Duration::from_millis(1))
    }
}
