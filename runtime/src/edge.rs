//! The edge: registers waits (with look-back), routes each event through the index to the waits
//! on its subject and on any subject, claims them through the store, fires deadlines, and
//! fires routine and flow triggers.
//!
//! Every change of a wait goes through the store's one atomic transition, so several routers
//! (tasks, or edges sharing one database) may call [`Runtime::route`] for the same event at once:
//! a wait gets one event, and an event goes to one wait of a job.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::args::parse_wait_args;
use crate::clock::{Clock, DAY, Timestamp};
use crate::config::Config;
use crate::filter::{Filter, PreparedEvent, Stopped};
use crate::index::ArmedWait;
use crate::model::{AuditRecord, Event, Job, Since, StoredEvent, Wait, WaitSpec, WaitState};
use crate::routes::{Routes, Routing};
use crate::store::{Candidate, Claim, Received, Store, StoreError};
use crate::triggers::Triggers;

/// Why a call was refused.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The arguments break the documented grammar.
    #[error("{0}")]
    InvalidArgs(String),
    /// Well-formed, but a rule refuses it.
    #[error("{0}")]
    Refused(String),
    /// An unknown job, wait or source.
    #[error("{0}")]
    NotFound(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A wait left the `open` state; sent to whoever subscribed (the job's workflow).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitClosed {
    /// The wait's name.
    pub wait: String,
    /// The job.
    pub job: String,
    /// Its new state.
    pub state: WaitState,
}

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

/// The reference runtime on one store. Share it in an `Arc`; every method may run concurrently.
pub struct Runtime<S: Store> {
    store: Arc<S>,
    clock: Arc<dyn Clock>,
    config: Arc<Config>,
    triggers: Triggers,
    routes: Routes,
    signals: broadcast::Sender<WaitClosed>,
    log: Mutex<Vec<String>>,
}

/// An ACP session's wait ends at two hours when the agent has no timeout (E6).
const ACP_DEFAULT_TIMEOUT: Duration = Duration::from_secs(2 * 3600);
const HOUR: Duration = Duration::from_secs(3600);

impl<S: Store> Runtime<S> {
    /// Starts the only edge on `store` ([`Routing::Local`]).
    pub async fn start(
        store: Arc<S>,
        clock: Arc<dyn Clock>,
        config: Arc<Config>,
    ) -> Result<Arc<Self>, StoreError> {
        Self::start_with(store, clock, config, &Routing::Local).await
    }

    /// Starts an edge on `store`: a local edge re-arms every open wait; then the events a
    /// crashed router left unrouted are routed, flows stopped between two steps go on, and the
    /// deadlines that passed while no runtime was running fire.
    pub async fn start_with(
        store: Arc<S>,
        clock: Arc<dyn Clock>,
        config: Arc<Config>,
        routing: &Routing,
    ) -> Result<Arc<Self>, StoreError> {
        let (signals, _) = broadcast::channel(1024);
        let triggers = Triggers::compile(&config);
        let rt = Arc::new(Self {
            store,
            clock,
            config,
            triggers,
            routes: Routes::new(routing),
            signals,
            log: Mutex::new(Vec::new()),
        });
        if !rt.routes.is_shared() {
            for wait in rt.store.open_waits().await? {
                match rt.compile_filter(&wait.spec) {
                    Ok(filter) => rt.routes.arm(ArmedWait { wait, filter }),
                    Err(reason) => {
                        let now = rt.now();
                        rt.close(&wait, WaitState::Refused, Some(&reason), now)
                            .await?;
                    }
                }
            }
        }
        rt.reroute(Timestamp(i64::MAX)).await?;
        rt.resume_flows().await?;
        rt.fire_due().await?;
        Ok(rt)
    }

    /// Routes the events received before `before` that are still unrouted (their router died
    /// between retaining and routing them). Returns how many.
    pub async fn reroute(&self, before: Timestamp) -> Result<usize, StoreError> {
        const BATCH: u32 = 256;
        let mut done = 0;
        loop {
            let events = self.store.unrouted(before, BATCH).await?;
            if events.is_empty() {
                return Ok(done);
            }
            for stored in &events {
                self.route_and_fire(stored).await?;
            }
            done += events.len();
        }
    }

    /// Continues flows that stopped between two steps (a crash after one step's wait closed and
    /// before the next one was registered): each started flow job without an open wait goes on
    /// after its last registered step.
    async fn resume_flows(&self) -> Result<(), StoreError> {
        for fire in self.store.fires().await? {
            if fire.kind != "flow" || fire.state != crate::model::FireState::Started {
                continue;
            }
            let Some(flow) = self.config.flows.iter().position(|f| f.name == fire.name) else {
                continue;
            };
            let prefix = format!("event-{}-", fire.name);
            let Some(event_id) = fire.job.strip_prefix(&prefix) else {
                continue;
            };
            let source = &self.config.flows[flow].trigger.event.source;
            let Some(trigger) = self.store.event(source, event_id).await? else {
                continue;
            };
            let waits = self.store.waits_of_job(&fire.job).await?;
            if waits.iter().any(|w| w.state == WaitState::Open) {
                continue;
            }
            let steps = &self.config.flows[flow].steps;
            let done = waits
                .iter()
                .filter_map(|w| {
                    let id = w.name.strip_prefix(&format!("{}/", fire.job))?;
                    steps.iter().position(|s| s.id == id)
                })
                .max();
            let next = done.map_or(0, |i| i + 1);
            if next < steps.len() {
                self.run_flow(&fire.job, flow, next, &trigger.event).await?;
            }
        }
        Ok(())
    }

    /// The current time on the runtime's clock.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The store.
    pub fn store(&self) -> &Arc<S> {
        &self.store
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Signals of waits that closed, from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<WaitClosed> {
        self.signals.subscribe()
    }

    /// Log lines (refusals beyond the first of their minute).
    pub fn log_lines(&self) -> Vec<String> {
        lock(&self.log).clone()
    }

    pub(crate) fn log(&self, line: String) {
        lock(&self.log).push(line);
    }

    /// How many waits are armed in the edge's index (for an edge sharing its database: how
    /// many it has cached).
    pub fn armed(&self) -> usize {
        self.routes.armed()
    }

    /// The earliest deadline of an open wait.
    pub async fn next_deadline(&self) -> Result<Option<Timestamp>, StoreError> {
        self.routes.next_deadline(&*self.store).await
    }

    /// Whether this edge shares its database with other edges.
    pub fn is_shared(&self) -> bool {
        self.routes.is_shared()
    }

    pub(crate) async fn audit(&self, action: &str, data: Value) -> Result<(), StoreError> {
        let record = AuditRecord {
            at: self.now(),
            action: action.to_owned(),
            data,
        };
        self.store.append_audit(&record).await
    }

    fn compile_filter(&self, spec: &WaitSpec) -> Result<Option<Filter>, String> {
        let source = self.config.source(&spec.source);
        let bounds = source.map(|s| s.bounds).unwrap_or_default();
        let limit = source.and_then(|s| s.eval_cost_limit);
        spec.filter
            .as_deref()
            .map(|f| Filter::compile_with_limit(f, &bounds, limit))
            .transpose()
    }

    /// Starts a job; its `since: job` waits count events from now on.
    pub async fn start_job(&self, start: &JobStart) -> Result<Job, RuntimeError> {
        let now = self.now();
        let runtime = start
            .runtime
            .clone()
            .unwrap_or_else(|| "pydantic-ai".into());
        let timeout = match (runtime.as_str(), start.timeout) {
            ("acp", None) => Some(ACP_DEFAULT_TIMEOUT),
            (_, t) => t,
        };
        let job = Job {
            id: start.id.clone(),
            started_at: now,
            start_seq: self.store.last_seq().await?,
            deadline: timeout.map(|t| now.plus(t)),
            runtime,
            shadow: start.shadow,
            sandboxed: start.sandbox_tier == Some(1) && !start.has_secrets,
            outside_started: false,
        };
        if !self.store.insert_job(&job).await? {
            return Err(RuntimeError::InvalidArgs(format!(
                "a job `{}` exists already",
                job.id
            )));
        }
        Ok(job)
    }

    /// `oz.wait_for_event`: validates the arguments, registers the wait, looks back through the
    /// retained events and arms it. Returns the wait as it stands afterwards.
    pub async fn wait_for_event(
        &self,
        job: &str,
        name: &str,
        args: &Value,
    ) -> Result<Wait, RuntimeError> {
        let spec = parse_wait_args(args).map_err(RuntimeError::InvalidArgs)?;
        let job = self
            .store
            .job(job)
            .await?
            .ok_or_else(|| RuntimeError::NotFound(format!("no job `{job}`")))?;
        match job.runtime.as_str() {
            "jsonl" => {
                return Err(RuntimeError::Refused(
                    "a JSON-lines harness session cannot wait for events".into(),
                ));
            }
            "remote" => {
                return Err(RuntimeError::Refused(
                    "a remote agent cannot wait for events".into(),
                ));
            }
            "acp" if !job.sandboxed => {
                return Err(RuntimeError::Refused(
                    "an ACP session waits for events only on a node with sandbox tier 1 and without its plugin's secrets".into(),
                ));
            }
            _ => {}
        }
        self.register(&job, name, spec).await
    }

    /// Registers a validated wait for `job` (also used by flow steps).
    pub(crate) async fn register(
        &self,
        job: &Job,
        name: &str,
        spec: WaitSpec,
    ) -> Result<Wait, RuntimeError> {
        if self.config.source(&spec.source).is_none() {
            return Err(RuntimeError::NotFound(format!(
                "no event source `{}`",
                spec.source
            )));
        }
        let filter = self
            .compile_filter(&spec)
            .map_err(|reason| RuntimeError::Refused(format!("the filter is refused: {reason}")))?;
        let now = self.now();
        let mut deadline = now.plus(spec.timeout);
        if let Some(job_deadline) = job.deadline {
            deadline = deadline.min(job_deadline);
        }
        let after_seq = match spec.since {
            Since::Job => job.start_seq,
            Since::Now => self.store.last_seq().await?,
        };
        let mut wait = Wait {
            seq: 0,
            name: name.to_owned(),
            job: job.id.clone(),
            spec,
            after_seq,
            created_at: now,
            deadline,
            state: WaitState::Open,
            event: None,
            reason: None,
        };
        wait.seq =
            self.store.insert_wait(&wait).await?.ok_or_else(|| {
                RuntimeError::InvalidArgs(format!("a wait `{name}` exists already"))
            })?;
        if job.shadow {
            self.close(
                &wait,
                WaitState::Refused,
                Some("shadow run: no event is waited for"),
                now,
            )
            .await?;
            return self.wait_named(name).await;
        }
        // Armed before the look-back, so an event that arrives meanwhile is routed to it; the
        // store's transition decides which of the two claims wins.
        self.routes.arm(ArmedWait {
            wait: wait.clone(),
            filter: filter.clone(),
        });
        self.look_back(&wait, filter.as_ref()).await?;
        self.fire_due().await?;
        self.wait_named(name).await
    }

    async fn wait_named(&self, name: &str) -> Result<Wait, RuntimeError> {
        self.store
            .wait(name)
            .await?
            .ok_or_else(|| RuntimeError::NotFound(format!("no wait `{name}`")))
    }

    async fn look_back(&self, wait: &Wait, filter: Option<&Filter>) -> Result<(), StoreError> {
        let now = self.now();
        let events = self
            .store
            .retained_events(&wait.spec.source, wait.after_seq, now.minus(DAY), &wait.job)
            .await?;
        for stored in events {
            if !wait.spec.admits(&stored.event) {
                continue;
            }
            let verdict = match filter {
                None => Ok(true),
                Some(f) => PreparedEvent::new(&stored.event)
                    .map_err(Stopped::Error)
                    .and_then(|e| f.matches(&e)),
            };
            match verdict {
                Ok(true) => match self.claim(wait, &stored).await? {
                    Claim::Claimed | Claim::NotOpen => return Ok(()),
                    Claim::JobHadEvent => {}
                },
                Ok(false) | Err(Stopped::Error(_)) => {}
                Err(Stopped::Limit(reason)) => {
                    let reason = format!(
                        "the filter was stopped on event {}: {reason}",
                        stored.event.id
                    );
                    self.close(wait, WaitState::Refused, Some(&reason), now)
                        .await?;
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The claim of `wait` on `stored`, with its `event.match` record.
    fn candidate(&self, wait: &Wait, stored: &StoredEvent) -> Candidate {
        let event = &stored.event;
        Candidate {
            wait_seq: wait.seq,
            job: wait.job.clone(),
            audit: AuditRecord {
                at: self.now(),
                action: "event.match".to_owned(),
                data: json!({"source": event.source, "id": event.id, "to": "wait",
                             "wait": wait.name, "job": wait.job, "outcome": "matched"}),
            },
        }
    }

    async fn claim(&self, wait: &Wait, stored: &StoredEvent) -> Result<Claim, StoreError> {
        let event = &stored.event;
        let candidate = self.candidate(wait, stored);
        let outcome = self
            .store
            .claim(&candidate, (&event.source, &event.id), self.now())
            .await?;
        self.claimed(wait, outcome).await?;
        Ok(outcome)
    }

    /// What follows a claim's outcome on this edge.
    async fn claimed(&self, wait: &Wait, outcome: Claim) -> Result<(), StoreError> {
        match outcome {
            Claim::Claimed => {
                self.routes.disarm(wait.seq);
                self.closed(wait, WaitState::Matched).await
            }
            Claim::NotOpen => {
                self.routes.disarm(wait.seq);
                Ok(())
            }
            Claim::JobHadEvent => Ok(()),
        }
    }

    async fn close(
        &self,
        wait: &Wait,
        state: WaitState,
        reason: Option<&str>,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        self.routes.disarm(wait.seq);
        let moved = self.store.close(wait.seq, state, reason, now).await?;
        if moved {
            self.closed(wait, state).await?;
        }
        Ok(moved)
    }

    async fn closed(&self, wait: &Wait, state: WaitState) -> Result<(), StoreError> {
        // Nobody listening is fine: the state is in the store.
        let _ = self.signals.send(WaitClosed {
            wait: wait.name.clone(),
            job: wait.job.clone(),
            state,
        });
        if self.config.flows.is_empty() {
            return Ok(());
        }
        Box::pin(self.continue_flow(wait)).await
    }

    /// Times out every open wait whose deadline is at or before now, earliest first. Returns
    /// how many timed out.
    pub async fn fire_due(&self) -> Result<usize, StoreError> {
        let mut fired = 0;
        loop {
            let now = self.now();
            let due = self.routes.due(&*self.store, now).await?;
            if due.is_empty() {
                return Ok(fired);
            }
            for wait in due {
                if self.close(&wait, WaitState::TimedOut, None, now).await? {
                    fired += 1;
                }
            }
        }
    }

    /// Takes an event that a source's function produced: retains it (once per identity) with
    /// its `event.received` record, routes it to waits and triggers, and marks it routed.
    /// Returns `None` for a duplicate; a duplicate whose first router died before it finished is
    /// routed now.
    pub async fn ingest(&self, event: &Event) -> Result<Option<StoredEvent>, StoreError> {
        let now = self.now();
        let audit = AuditRecord {
            at: now,
            action: "event.received".to_owned(),
            data: json!({"source": event.source, "id": event.id, "type": event.kind,
                         "action": event.action, "subject": event.subject}),
        };
        match self.store.receive(event, now, &audit).await? {
            Received::New(stored) => {
                self.route_and_fire(&stored).await?;
                Ok(Some(stored))
            }
            Received::Known {
                stored,
                routed: false,
            } => {
                self.route_and_fire(&stored).await?;
                Ok(None)
            }
            Received::Known { routed: true, .. } => Ok(None),
        }
    }

    /// Routes a retained event to its waits and fires its triggers, then marks it routed (in
    /// the claims' transaction when no trigger watches its source).
    async fn route_and_fire(&self, stored: &StoredEvent) -> Result<(), StoreError> {
        let event = &stored.event;
        let triggers = self.triggers.watches(&event.source);
        self.route_marking(stored, !triggers).await?;
        if triggers {
            self.fire_triggers(stored).await?;
            self.store.mark_routed(&event.source, &event.id).await?;
        }
        Ok(())
    }

    /// Routes a retained event to the open waits it matches: the waits on its subject and on
    /// any subject of its source, oldest first, at most one per job. Returns the waits it got.
    pub async fn route(&self, stored: &StoredEvent) -> Result<Vec<String>, StoreError> {
        self.route_marking(stored, false).await
    }

    async fn route_marking(
        &self,
        stored: &StoredEvent,
        mark_routed: bool,
    ) -> Result<Vec<String>, StoreError> {
        let event = &stored.event;
        let compile = |spec: &WaitSpec| self.compile_filter(spec);
        let found = self
            .routes
            .candidates(&*self.store, &event.source, &event.subject, &compile)
            .await?;
        for (wait, reason) in &found.broken {
            self.close(wait, WaitState::Refused, Some(reason), self.now())
                .await?;
        }
        // Converted once, and only when some candidate has a filter.
        let mut prepared: Option<Result<PreparedEvent, String>> = None;
        let mut armed = Vec::new();
        for candidate in &found.armed {
            let wait = &candidate.wait;
            if wait.after_seq >= stored.seq || !wait.spec.admits(event) {
                continue;
            }
            // On an event routed after the wait was registered, a stopped filter is false.
            if let Some(filter) = &candidate.filter {
                let Ok(prepared) = prepared.get_or_insert_with(|| PreparedEvent::new(event)) else {
                    continue;
                };
                if filter.matches(prepared) != Ok(true) {
                    continue;
                }
            }
            armed.push(candidate.clone());
        }
        if armed.is_empty() && !mark_routed {
            return Ok(Vec::new());
        }
        let candidates: Vec<Candidate> = armed
            .iter()
            .map(|a| self.candidate(&a.wait, stored))
            .collect();
        let outcomes = self
            .store
            .route(
                (&event.source, &event.id),
                &candidates,
                self.now(),
                mark_routed,
            )
            .await?;
        let mut matched = Vec::new();
        for (candidate, outcome) in armed.iter().zip(outcomes) {
            if outcome == Claim::Claimed {
                matched.push(candidate.wait.name.clone());
            }
            self.claimed(&candidate.wait, outcome).await?;
        }
        Ok(matched)
    }

    async fn fire_triggers(&self, stored: &StoredEvent) -> Result<(), StoreError> {
        if !self.triggers.watches(&stored.event.source) {
            return Ok(());
        }
        let Ok(prepared) = PreparedEvent::new(&stored.event) else {
            return Ok(());
        };
        let fires = self.triggers.matching(&stored.event, &prepared);
        for fire in fires {
            crate::triggers::fire(self, fire, stored, &prepared).await?;
        }
        Ok(())
    }

    /// Starts the job of a fire (used by triggers).
    pub(crate) async fn start_fired_job(
        &self,
        id: &str,
        stored: &StoredEvent,
    ) -> Result<(), StoreError> {
        let job = Job {
            id: id.to_owned(),
            started_at: self.now(),
            start_seq: stored.seq,
            deadline: None,
            runtime: "pydantic-ai".into(),
            shadow: false,
            sandboxed: true,
            outside_started: true,
        };
        self.store.insert_job(&job).await?;
        self.store.mark_outside_started(id).await
    }

    /// Runs a flow's steps from `index` on: registers each `wait_for_event` step's wait and stops
    /// at the first that stays open.
    pub(crate) async fn run_flow(
        &self,
        job_id: &str,
        flow: usize,
        index: usize,
        trigger: &Event,
    ) -> Result<(), StoreError> {
        let Some(job) = self.store.job(job_id).await? else {
            return Ok(());
        };
        let steps = &self.config.flows[flow].steps;
        for step in steps.iter().skip(index) {
            let Some(args) = &step.wait_for_event else {
                continue;
            };
            let name = format!("{job_id}/{}", step.id);
            let args = crate::triggers::expand_templates(args, trigger);
            let result = match parse_wait_args(&args) {
                Ok(spec) => self.register(&job, &name, spec).await,
                Err(reason) => Err(RuntimeError::InvalidArgs(reason)),
            };
            match result {
                Ok(wait) if wait.state == WaitState::Open => return Ok(()),
                // A closed wait continued the flow already (through `closed`).
                Ok(_) => return Ok(()),
                Err(RuntimeError::Store(e)) => return Err(e),
                Err(other) => {
                    self.log(format!("flow step {name} did not start: {other}"));
                }
            }
        }
        Ok(())
    }

    async fn continue_flow(&self, wait: &Wait) -> Result<(), StoreError> {
        let Some((flow, step, trigger)) = self.flow_step_of(wait).await? else {
            return Ok(());
        };
        self.run_flow(&wait.job, flow, step + 1, &trigger).await
    }

    async fn flow_step_of(&self, wait: &Wait) -> Result<Option<(usize, usize, Event)>, StoreError> {
        let Some(step_id) = wait.name.strip_prefix(&format!("{}/", wait.job)) else {
            return Ok(None);
        };
        for (i, flow) in self.config.flows.iter().enumerate() {
            let Some(event_id) = wait.job.strip_prefix(&format!("event-{}-", flow.name)) else {
                continue;
            };
            let Some(step) = flow.steps.iter().position(|s| s.id == step_id) else {
                continue;
            };
            let Some(trigger) = self
                .store
                .event(&flow.trigger.event.source, event_id)
                .await?
            else {
                continue;
            };
            return Ok(Some((i, step, trigger.event)));
        }
        Ok(None)
    }

    /// A job calls one of its safe outputs (E10): applied now for `apply: now`, otherwise
    /// queued until the job ends.
    pub async fn call_output(
        &self,
        job: &str,
        name: &str,
        apply_now: bool,
    ) -> Result<(), RuntimeError> {
        if self.store.job(job).await?.is_none() {
            return Err(RuntimeError::NotFound(format!("no job `{job}`")));
        }
        self.store
            .record_output(job, name, apply_now, self.now())
            .await?;
        Ok(())
    }

    /// A job ends: its queued outputs are applied, and a wait still open is refused (nobody is
    /// left to read its answer).
    pub async fn end_job(&self, job: &str) -> Result<(), RuntimeError> {
        let now = self.now();
        if !self.store.end_job(job, now).await? {
            return Err(RuntimeError::NotFound(format!("no running job `{job}`")));
        }
        for wait in self.store.waits_of_job(job).await? {
            if wait.state == WaitState::Open {
                self.close(&wait, WaitState::Refused, Some("the job ended"), now)
                    .await?;
            }
        }
        Ok(())
    }

    /// The E5 lines for every open wait.
    pub async fn waiting_lines(&self) -> Result<Vec<String>, StoreError> {
        let now = self.now();
        Ok(self
            .store
            .open_waits()
            .await?
            .iter()
            .map(|w| crate::render::waiting_line(&w.spec, now.until(w.deadline)))
            .collect())
    }

    /// Sliding one-hour window start for fire limits.
    pub(crate) fn hour_window(&self) -> Timestamp {
        self.now().minus(HOUR).plus(Duration::from_millis(1))
    }

    /// Forgets events older than the one-day retention (on a shared database, only the edge
    /// holding the sweeper lease does; the others return 0).
    pub async fn purge(&self) -> Result<u64, StoreError> {
        let now = self.now();
        if !self.routes.holds_sweeper(&*self.store, now).await? {
            return Ok(0);
        }
        self.store.purge_events(now.minus(DAY)).await
    }

    /// The periodic work of an edge: fire due deadlines, and, on the edge that holds the
    /// sweeper lease, route events left unrouted for [`REROUTE_AFTER`] (their router died) and
    /// forget expired events.
    pub async fn sweep(&self) -> Result<(), StoreError> {
        self.fire_due().await?;
        let now = self.now();
        if self.routes.holds_sweeper(&*self.store, now).await? {
            self.reroute(now.minus(REROUTE_AFTER)).await?;
            self.store.purge_events(now.minus(DAY)).await?;
        }
        Ok(())
    }
}

/// How long an unrouted event is left to the edge that is routing it before the sweeper
/// routes it (routing twice is harmless, but wasted work).
pub const REROUTE_AFTER: Duration = Duration::from_secs(5);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded values are left consistent before any call that could panic.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
