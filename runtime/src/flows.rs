//! Flows started by event triggers (E7, E9): their steps run in order, each step's `when` and
//! templates evaluated over `trigger.event` and the earlier steps' outputs
//! ([`crate::template::FlowScope`]).
//!
//! A flow's progress is read from the store, never kept in memory: [`Runtime::advance_flow`]
//! walks the steps from the first, takes each finished step's output, and acts on the first
//! step that is not finished (registers its wait, or skips it when its `when` is false). It is
//! idempotent, so it runs after a step's wait closes, when the flow starts, and for every
//! started flow when a runtime starts (a crash between two steps loses nothing).
//!
//! A step that cannot start (a template that fails, arguments the grammar refuses) is recorded
//! as a refused wait with the reason and its code, and the flow goes on: it never waits on text
//! that no event can match.

use ozcheck_analyzer::check::StepKind;
use serde_json::{Value, json};

use crate::args::parse_wait_args;
use crate::config::{Flow, FlowStep};
use crate::edge::Runtime;
use crate::error::RuntimeError;
use crate::model::{Event, FireState, Job, Since, Wait, WaitSpec, WaitState};
use crate::store::{Store, StoreError};
use crate::template::FlowScope;

/// The name of a flow step's wait: `<job>/<step id>`.
pub fn step_wait_name(job: &str, step: &str) -> String {
    format!("{job}/{step}")
}

/// What the flow does with the step it reached.
enum Next {
    /// The step's wait is open: the flow waits.
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
            if let Some((flow, trigger)) = self.flow_of(&fire.job, &fire.name).await? {
                self.advance_flow(&fire.job, &flow, &trigger).await?;
            }
        }
        Ok(())
    }

    /// After a wait closed: the flow it belongs to, if any, goes on.
    pub(crate) async fn continue_flow(&self, wait: &Wait) -> Result<(), StoreError> {
        if self.config().flows.is_empty() || !wait.name.starts_with(&format!("{}/", wait.job)) {
            return Ok(());
        }
        let Some(fire) = self
            .store()
            .fires()
            .await?
            .into_iter()
            .find(|f| f.job == wait.job && f.kind == "flow")
        else {
            return Ok(());
        };
        if let Some((flow, trigger)) = self.flow_of(&fire.job, &fire.name).await? {
            self.advance_flow(&fire.job, &flow, &trigger).await?;
        }
        Ok(())
    }

    /// The flow named `name` and the trigger event of its job `job`.
    async fn flow_of(&self, job: &str, name: &str) -> Result<Option<(Flow, Event)>, StoreError> {
        let config = self.config();
        let Some(flow) = config.flows.iter().find(|f| f.name == name) else {
            return Ok(None);
        };
        let Some(event_id) = job.strip_prefix(&format!("event-{name}-")) else {
            return Ok(None);
        };
        let trigger = self
            .store()
            .event(&flow.trigger.event.source, event_id)
            .await?;
        Ok(trigger.map(|t| (flow.clone(), t.event)))
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
        let mut scope = FlowScope::new(trigger.clone());
        for step in &flow.steps {
            match Box::pin(self.step(&job, step, &scope)).await? {
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
        scope: &FlowScope,
    ) -> Result<Next, StoreError> {
        let name = step_wait_name(&job.id, &step.id);
        if let Some(wait) = self.store().wait(&name).await? {
            return self.wait_output(&wait).await;
        }
        let Some(args) = &step.wait_for_event else {
            // Approval steps are answered by a person, not by events.
            return Ok(Next::Done(json!({"approved": false})));
        };
        match step.when.as_deref().map(|w| scope.when(w)).transpose() {
            Ok(Some(false)) => return Ok(Next::Done(json!({"matched": false}))),
            Ok(_) => {}
            Err(e) => return self.refuse_step(job, &name, args, scope, &e).await,
        }
        let spec = match render_args(args, scope).and_then(|a| parse_wait_args(&a)) {
            Ok(spec) => spec,
            Err(e) => return self.refuse_step(job, &name, args, scope, &e).await,
        };
        match self.register(job, &name, spec).await {
            Ok(_) | Err(RuntimeError::Conflict { .. }) => {}
            Err(RuntimeError::Store(e)) => return Err(e),
            Err(e) => return self.refuse_step(job, &name, args, scope, &e).await,
        }
        match self.store().wait(&name).await? {
            Some(wait) => self.wait_output(&wait).await,
            None => Ok(Next::Waiting),
        }
    }

    async fn wait_output(&self, wait: &Wait) -> Result<Next, StoreError> {
        if wait.state == WaitState::Open {
            return Ok(Next::Waiting);
        }
        let event = match &wait.event {
            Some((source, id)) => self.store().event(source, id).await?.map(|e| e.event),
            None => None,
        };
        Ok(Next::Done(crate::render::step_output(wait, event.as_ref())))
    }

    /// Records a step that cannot start as a refused wait, so `poll` shows why; the flow goes
    /// on with `{"matched": false}`.
    async fn refuse_step(
        &self,
        job: &Job,
        name: &str,
        args: &Value,
        scope: &FlowScope,
        error: &RuntimeError,
    ) -> Result<Next, StoreError> {
        let reason = format!("the step did not start ({}): {error}", error.code());
        self.log(format!("flow step {name}: {reason}"));
        let now = self.now();
        let source = args
            .get("source")
            .and_then(Value::as_str)
            .unwrap_or(&scope.trigger().source);
        let wait = Wait {
            seq: 0,
            name: name.to_owned(),
            job: job.id.clone(),
            spec: WaitSpec {
                source: source.to_owned(),
                types: None,
                subject: None,
                filter: None,
                timeout: crate::args::DEFAULT_TIMEOUT,
                since: Since::Job,
            },
            after_seq: job.start_seq,
            created_at: now,
            deadline: now,
            state: WaitState::Open,
            event: None,
            reason: None,
        };
        if let Some(seq) = self.store().insert_wait(&wait).await? {
            self.store()
                .close(seq, WaitState::Refused, Some(&reason), now)
                .await?;
        }
        Ok(Next::Done(json!({"matched": false})))
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
