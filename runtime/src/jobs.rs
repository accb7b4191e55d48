//! Jobs as waits see them (E2, E6, E10): starting one (its runtime, its own `limits.timeout`,
//! shadow runs, the sandbox an ACP session needs), the `oz.wait_for_event` tool call with the
//! checks of where a job may wait, its safe outputs, and its end.

use std::time::Duration;

use serde_json::Value;

use crate::args::parse_wait_args;
use crate::edge::Runtime;
use crate::error::RuntimeError;
use crate::model::{Event, Job, Wait, WaitState};
use crate::store::Store;

/// An ACP session's wait ends at two hours when the agent has no timeout (E6).
pub const ACP_DEFAULT_TIMEOUT: Duration = Duration::from_secs(2 * 3600);

/// The agent runtimes a job may run on.
pub const RUNTIMES: &[&str] = &["pydantic-ai", "openai-agents", "acp", "jsonl", "remote"];

/// How a job starts (the parts that matter to waits).
#[derive(Clone, Debug, Default)]
pub struct JobStart {
    /// The job id.
    pub id: String,
    /// The agent runtime (`pydantic-ai`, `openai-agents`, `acp`, `jsonl`, `remote`).
    pub runtime: Option<String>,
    /// The agent's `limits.timeout`.
    pub timeout: Option<Duration>,
    /// A shadow run.
    pub shadow: bool,
    /// The node's sandbox tier.
    pub sandbox_tier: Option<u8>,
    /// Whether the node holds the plugin's secrets.
    pub has_secrets: bool,
}

/// Whether a job on `runtime` may wait for events here, and why not (E6).
fn may_wait(job: &Job) -> Result<(), RuntimeError> {
    let refuse = |message: &str| {
        Err(RuntimeError::refused(
            "wait-tool-unsupported-runtime",
            message,
        ))
    };
    match job.runtime.as_str() {
        "jsonl" => refuse("a JSON-lines harness session cannot wait for events"),
        "remote" => refuse("a remote agent cannot wait for events"),
        "acp" if !job.sandboxed => Err(RuntimeError::refused(
            "acp-needs-sandbox",
            "an ACP session waits for events only on a node with sandbox tier 1 and without \
             its plugin's secrets",
        )),
        _ => Ok(()),
    }
}

impl<S: Store> Runtime<S> {
    /// Starts a job; its `since: job` waits count events from now on.
    pub async fn start_job(&self, start: &JobStart) -> Result<Job, RuntimeError> {
        crate::keys::check("the job id", &start.id, crate::keys::MAX_JOB_ID)?;
        let now = self.now();
        let runtime = start
            .runtime
            .clone()
            .unwrap_or_else(|| "pydantic-ai".into());
        if !RUNTIMES.contains(&runtime.as_str()) {
            return Err(RuntimeError::invalid(
                "unknown-runtime",
                format!(
                    "`{runtime}` is not an agent runtime; it is one of {}",
                    RUNTIMES.join(", ")
                ),
            ));
        }
        let timeout = match (runtime.as_str(), start.timeout) {
            ("acp", None) => Some(ACP_DEFAULT_TIMEOUT),
            (_, t) => t,
        };
        let job = Job {
            id: start.id.clone(),
            started_at: now,
            start_seq: self.store().last_seq().await?,
            deadline: timeout.map(|t| now.plus(t)),
            runtime,
            shadow: start.shadow,
            sandboxed: start.sandbox_tier == Some(1) && !start.has_secrets,
            outside_started: false,
            ended_at: None,
        };
        if !self.store().insert_job(&job).await? {
            return Err(RuntimeError::conflict(
                "job-exists",
                format!("a job `{}` exists already", job.id),
            ));
        }
        Ok(job)
    }

    /// A job by id, or `not_found`.
    pub async fn job(&self, id: &str) -> Result<Job, RuntimeError> {
        crate::keys::storable("the job id", id)?;
        self.store()
            .job(id)
            .await?
            .ok_or_else(|| RuntimeError::not_found("unknown-job", format!("no job `{id}`")))
    }

    /// A wait by name: within `job` when it is given; otherwise the one wait of that name
    /// (`invalid_args` when several jobs have a wait of that name).
    pub async fn find_wait(&self, job: Option<&str>, name: &str) -> Result<Wait, RuntimeError> {
        if let Some(job) = job {
            return self.wait_named(job, name).await;
        }
        crate::keys::storable("the wait's name", name)?;
        let mut found = self.store().waits_named(name).await?;
        match found.len() {
            0 => Err(RuntimeError::not_found(
                "unknown-wait",
                format!("no wait `{name}`"),
            )),
            1 => Ok(found.remove(0)),
            _ => Err(RuntimeError::invalid(
                "ambiguous-wait",
                format!(
                    "the wait name `{name}` is used by the jobs {}: name the job too",
                    found
                        .iter()
                        .map(|w| format!("`{}`", w.job))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }

    /// The event a matched wait got: the copy the wait keeps (a wait matched before waits kept
    /// their event reads it from the retained events).
    pub async fn wait_event(&self, wait: &Wait) -> Result<Option<Event>, RuntimeError> {
        if let Some(event) = &wait.matched {
            return Ok(Some(Event::clone(event)));
        }
        Ok(match &wait.event {
            Some((source, id)) => self
                .store()
                .event(source, id)
                .await?
                .map(|e| std::sync::Arc::unwrap_or_clone(e.event)),
            None => None,
        })
    }

    /// `oz.wait_for_event`: validates the arguments, registers the wait, looks back through the
    /// retained events and arms it. Returns the wait as it stands afterwards.
    pub async fn wait_for_event(
        &self,
        job: &str,
        name: &str,
        args: &Value,
    ) -> Result<Wait, RuntimeError> {
        let spec = parse_wait_args(args)?;
        let job = self.job(job).await?;
        may_wait(&job)?;
        self.register(&job, name, spec).await
    }

    /// A job calls one of its safe outputs (E10): applied now for `apply: now`, otherwise
    /// queued until the job ends. An ended job has no outputs left to call.
    pub async fn call_output(
        &self,
        job: &str,
        name: &str,
        apply_now: bool,
    ) -> Result<(), RuntimeError> {
        let job = self.job(job).await?;
        crate::keys::storable("the output's name", name)?;
        if job.ended_at.is_some() {
            return Err(RuntimeError::refused(
                "job-ended",
                format!("the job `{}` has ended", job.id),
            ));
        }
        self.store()
            .record_output(&job.id, name, apply_now, self.now())
            .await?;
        Ok(())
    }

    /// Cancels a job's open wait (the API's `DELETE`): it closes `refused` with the reason
    /// `cancelled`, through the same single transition as every close, so it takes no event
    /// after. `wait-closed` when it was closed already (or closed meanwhile).
    pub async fn cancel_wait(&self, job: &str, name: &str) -> Result<Wait, RuntimeError> {
        let wait = self.wait_named(job, name).await?;
        let closed = || {
            RuntimeError::conflict(
                "wait-closed",
                format!("the wait `{name}` of the job `{job}` is not open"),
            )
        };
        if wait.state != WaitState::Open {
            return Err(closed());
        }
        if !self
            .close(&wait, WaitState::Refused, Some("cancelled"), self.now())
            .await?
        {
            return Err(closed());
        }
        self.wait_named(job, name).await
    }

    /// A job ends: its queued outputs are applied, and a wait still open is refused (nobody is
    /// left to read its answer), in one step of the store, so no event reaches it after.
    pub async fn end_job(&self, job: &str) -> Result<(), RuntimeError> {
        crate::keys::storable("the job id", job)?;
        let now = self.now();
        let Some(refused) = self.store().end_job(job, now).await? else {
            return Err(RuntimeError::not_found(
                "unknown-job",
                format!("no running job `{job}`"),
            ));
        };
        for wait in refused {
            self.disarm(wait.seq);
            self.closed(&wait, WaitState::Refused).await?;
        }
        Ok(())
    }
}
