//! Fires of routine and flow triggers (E8–E10): for each trigger an event fires
//! ([`crate::triggers`] decides which), `allow_senders`, the kill switch and pause, the hourly
//! limit enforced atomically with the record of the fire, the `event.match` audit record, and
//! the fired job with its flow's first step.

use std::time::Duration;

use serde_json::{Value, json};

use crate::clock::Timestamp;
use crate::edge::Runtime;
use crate::filter::PreparedEvent;
use crate::model::{Fire, FireState, Job, StoredEvent};
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
        };
        let limit = t.max_fires_per_hour.map(|max| FireLimit {
            max,
            window_start: self.hour_window(),
        });
        let mut audit = json!({"source": event.source, "id": event.id, "to": kind,
                               "name": t.name, "trigger": t.trigger, "job": job});
        if kind == "flow" {
            audit["charged_to"] = Value::String(format!("service:webhook/{}", t.name));
        }
        match store.record_fire(&record, limit).await? {
            FireOutcome::Duplicate => return Ok(()),
            FireOutcome::Refused(reason) => {
                audit["outcome"] = "refused".into();
                audit["reason"] = reason.into();
                self.audit("event.match", audit).await?;
            }
            FireOutcome::Started => {
                audit["outcome"] = "started".into();
                self.audit("event.match", audit).await?;
                self.start_fired_job(&job, stored).await?;
                if let Target::Flow(i) = t.target {
                    self.start_flow(&job, i, &event.clone()).await?;
                }
            }
        }
        Ok(())
    }

    /// Starts the job of a fire: outside-started from its first step (E11).
    async fn start_fired_job(&self, id: &str, stored: &StoredEvent) -> Result<(), StoreError> {
        let job = Job {
            id: id.to_owned(),
            started_at: self.now(),
            start_seq: stored.seq,
            deadline: None,
            runtime: "pydantic-ai".into(),
            shadow: false,
            sandboxed: true,
            outside_started: true,
            ended_at: None,
        };
        self.store().insert_job(&job).await?;
        self.store().mark_outside_started(id).await
    }

    /// Sliding one-hour window start for fire limits.
    fn hour_window(&self) -> Timestamp {
        self.now().minus(HOUR).plus(Duration::from_millis(1))
    }
}
