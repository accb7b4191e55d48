//! Flows started by event triggers (E7, E9): their steps run in order, each step's `when` and
//! templates evaluated over `trigger.event` and the earlier steps' outputs
//! ([`crate::template::FlowScope`]).
//!
//! A flow's progress is read from the store, never kept in memory: [`Runtime::advance_flow`]
//! walks the steps from the first, takes each finished step's output, and acts on the first
//! step that is not finished. It is idempotent, so it runs after a step's wait closes, when the
//! flow starts, when an approval is answered, and for every started flow when a runtime starts
//! (a crash between two steps loses nothing).
//!
//! - A `wait_for_event` step registers its wait, named `<job>/<step id>`; its output is the
//!   wait's (`{"matched": true, "event": …}` or `{"matched": false}`).
//! - An `approval` step is recorded as pending with its rendered `details`; the flow waits for
//!   [`Runtime::approve`], and the output is `{"approved": …}`.
//! - A step whose `when` is false is recorded as skipped (`{"matched": false}` or
//!   `{"approved": false}`).
//! - A step that cannot start (a template or `when` that fails, arguments the grammar refuses)
//!   is recorded as a refused wait with the reason and its code, and the flow goes on: it never
//!   waits on text that no event can match.
//!
//! The trigger event comes from the fire, which keeps it for as long as the flow runs, past the
//! edge's one-day retention.

use ozcheck_analyzer::check::StepKind;
use serde_json::{Value, json};

use crate::args::parse_wait_args;
use crate::config::{Flow, FlowStep};
use crate::edge::Runtime;
use crate::error::RuntimeError;
use crate::model::{
    Event, Fire, FireState, Job, Since, StepRecord, StepState, Wait, WaitSpec, WaitState,
};
use crate::store::{Store, StoreError, WaitInsert};
use crate::template::FlowScope;

/// The name of a flow step's wait: `<job>/<step id>`.
pub fn step_wait_name(job: &str, step: &str) -> String {
    format!("{job}/{step}")
}

/// What the flow does with the step it reached.
enum Next {
    /// The step waits (for an event or a person).
    Waiting,
    /// The step finished (now or before) with this output: go on.
    Done(Value),
}

impl<S: Store> Runtime<S> {
    /// Starts a flow whose trigger fired: its first steps run now.
    pub(crate) async fn start_flow(
        &self,
        job: &str,
        flow: usize,
        trigger: &Event,
    ) -> Result<(), StoreError> {
        let config = self.config();
        let Some(flow) = config.flows.get(flow) else {
            return Ok(());
        };
        self.advance_flow(job, flow, trigger).await
    }

    /// Continues every started flow that is not waiting (a crash after one step's wait closed
    /// and before the next one was registered).
    pub(crate) async fn resume_flows(&self) -> Result<(), StoreError> {
        for fire in self.store().fires().await? {
            if fire.kind != "flow" || fire.state != FireState::Started {
                continue;
            }
            self.advance_fire(&fire).await?;
        }
        Ok(())
    }

    /// After a wait closed: the flow it belongs to, if any, goes on.
    pub(crate) async fn continue_flow(&self, wait: &Wait) -> Result<(), StoreError> {
        if self.config().flows.is_empty() || !wait.name.starts_with(&format!("{}/", wait.job)) {
            return Ok(());
        }
        match self.store().fire(&wait.job).await? {
            Some(fire) => self.advance_fire(&fire).await,
            None => Ok(()),
        }
    }

    /// A person answers a pending approval step of a flow job; the flow goes on.
    pub async fn approve(&self, job: &str, step: &str, approved: bool) -> Result<(), RuntimeError> {
        crate::keys::storable("the job id", job)?;
        crate::keys::storable("the step's name", step)?;
        let output = json!({"approved": approved});
        if !self
            .store()
            .decide_step(job, step, &output, self.now())
            .await?
        {
            return Err(RuntimeError::not_found(
                "unknown-step",
                format!("the job `{job}` has no approval step `{step}` waiting for an answer"),
            ));
        }
        if let Some(fire) = self.store().fire(job).await? {
            self.advance_fire(&fire).await?;
        }
        Ok(())
    }

    async fn advance_fire(&self, fire: &Fire) -> Result<(), StoreError> {
        match self.flow_of(fire).await? {
            Some((flow, trigger)) => self.advance_flow(&fire.job, &flow, &trigger).await,
            None => Ok(()),
        }
    }

    /// The flow a fire started and its trigger event (kept with the fire; a fire recorded
    /// before fires kept their event reads it from the retained events).
    async fn flow_of(&self, fire: &Fire) -> Result<Option<(Flow, Event)>, StoreError> {
        if fire.kind != "flow" {
            return Ok(None);
        }
        let config = self.config();
        let Some(flow) = config.flows.iter().find(|f| f.name == fire.name) else {
            return Ok(None);
        };
        let trigger = match (
            &fire.event,
            fire.job.strip_prefix(&format!("event-{}-", fire.name)),
        ) {
            (Some(event), _) => Some(event.clone()),
            (None, Some(id)) => self
                .store()
                .event(&flow.trigger.event.source, id)
                .await?
                .map(|e| std::sync::Arc::unwrap_or_clone(e.event)),
            (None, None) => None,
        };
        Ok(trigger.map(|t| (flow.clone(), t)))
    }

    /// Walks the flow's steps and acts on the first unfinished one (see the module doc).
    pub(crate) async fn advance_flow(
        &self,
        job_id: &str,
        flow: &Flow,
        trigger: &Event,
    ) -> Result<(), StoreError> {
        let Some(job) = self.store().job(job_id).await? else {
            return Ok(());
        };
        let records = self.store().steps_of_job(job_id).await?;
        let mut scope =
            FlowScope::new(trigger.clone()).with_extensions(self.config().extensions.clone());
        for step in &flow.steps {
            let record = records.iter().find(|r| r.step == step.id);
            match Box::pin(self.step(&job, step, record, &scope)).await? {
                Next::Waiting => return Ok(()),
                Next::Done(output) => scope.push_step(&step.id, step_kind(step), output),
            }
        }
        Ok(())
    }

    async fn step(
        &self,
        job: &Job,
        step: &FlowStep,
        record: Option<&StepRecord>,
        scope: &FlowScope,
    ) -> Result<Next, StoreError> {
        let name = step_wait_name(&job.id, &step.id);
        if let Some(wait) = self.store().wait(&job.id, &name).await? {
            return Ok(wait_output(&wait));
        }
        if let Some(record) = record {
            return Ok(record_output(record));
        }
        match step.when.as_deref().map(|w| scope.when(w)).transpose() {
            Ok(Some(false)) => {
                let output = match step.approval {
                    Some(_) => json!({"approved": false}),
                    None => json!({"matched": false}),
                };
                return self
                    .record(job, step, StepState::Skipped, output, None)
                    .await;
            }
            Ok(_) => {}
            Err(e) => return self.refuse_step(job, &name, step, scope, &e).await,
        }
        if let Some(approval) = &step.approval {
            return match scope.render(&approval.details) {
                Ok(details) => {
                    self.record(job, step, StepState::Pending, Value::Null, Some(details))
                        .await
                }
                Err(e) => self.refuse_step(job, &name, step, scope, &e).await,
            };
        }
        let Some(args) = &step.wait_for_event else {
            // A step with no action the reference runtime knows does nothing.
            return Ok(Next::Done(json!({})));
        };
        let spec = match render_args(args, scope).and_then(|a| parse_wait_args(&a)) {
            Ok(spec) => spec,
            Err(e) => return self.refuse_step(job, &name, step, scope, &e).await,
        };
        match self.register(job, &name, spec).await {
            Ok(_) | Err(RuntimeError::Conflict { .. }) => {}
            Err(RuntimeError::Store(e)) => return Err(e),
            Err(e) => return self.refuse_step(job, &name, step, scope, &e).await,
        }
        match self.store().wait(&job.id, &name).await? {
            Some(wait) => Ok(wait_output(&wait)),
            None => Ok(Next::Waiting),
        }
    }

    /// Records a step that is not a wait; what the store holds afterwards decides (a router
    /// that raced this one may have recorded it first).
    async fn record(
        &self,
        job: &Job,
        step: &FlowStep,
        state: StepState,
        output: Value,
        details: Option<String>,
    ) -> Result<Next, StoreError> {
        let record = StepRecord {
            job: job.id.clone(),
            step: step.id.clone(),
            state,
            output,
            details,
            at: self.now(),
        };
        if self.store().record_step(&record).await? {
            return Ok(record_output(&record));
        }
        let stored = self.store().steps_of_job(&job.id).await?;
        Ok(stored
            .iter()
            .find(|r| r.step == step.id)
            .map_or(Next::Waiting, record_output))
    }

    /// Records a step that cannot start as a refused wait, so `poll` shows why; the flow goes
    /// on with `{"matched": false}`.
    async fn refuse_step(
        &self,
        job: &Job,
        name: &str,
        step: &FlowStep,
        scope: &FlowScope,
        error: &RuntimeError,
    ) -> Result<Next, StoreError> {
        let reason = format!("the step did not start ({}): {error}", error.code());
        self.log(format!("flow step {name}: {reason}"));
        let now = self.now();
        let source = step
            .wait_for_event
            .as_ref()
            .and_then(|a| a.get("source"))
            .and_then(Value::as_str)
            .unwrap_or(&scope.trigger().source);
        let spec = WaitSpec {
            source: source.to_owned(),
            types: None,
            subject: None,
            filter: None,
            timeout: crate::args::DEFAULT_TIMEOUT,
            since: Since::Job,
        };
        let wait = Wait::open(&job.id, name, spec, job.start_seq, now, now);
        if let WaitInsert::Inserted(seq) = self.store().insert_wait(&wait).await? {
            self.store()
                .close(seq, WaitState::Refused, Some(&reason), now)
                .await?;
        }
        Ok(Next::Done(json!({"matched": false})))
    }
}

/// A wait step's output once its wait closed.
fn wait_output(wait: &Wait) -> Next {
    if wait.state == WaitState::Open {
        return Next::Waiting;
    }
    Next::Done(crate::render::step_output(wait, wait.matched.as_deref()))
}

fn record_output(record: &StepRecord) -> Next {
    match record.state {
        StepState::Pending => Next::Waiting,
        StepState::Decided | StepState::Skipped => Next::Done(record.output.clone()),
    }
}

fn step_kind(step: &FlowStep) -> StepKind {
    if step.wait_for_event.is_some() {
        StepKind::WaitForEvent
    } else if step.approval.is_some() {
        StepKind::Approval
    } else {
        StepKind::Other
    }
}

/// The step's arguments with the templates of `subject` rendered (the one templated argument;
/// a `filter` is CEL over `event` alone and is never rendered).
fn render_args(args: &Value, scope: &FlowScope) -> Result<Value, RuntimeError> {
    let mut args = args.clone();
    if let Some(Value::String(subject)) = args.get_mut("subject") {
        *subject = scope.render(subject)?;
    }
    Ok(args)
}
