//! The edge: registers waits (with look-back), routes each event through the index to the waits
//! on its subject and on any subject, claims them through the store, and fires deadlines.
//! Jobs ([`crate::jobs`]), trigger fires ([`crate::fires`]) and flows ([`crate::flows`]) add
//! their methods to [`Runtime`] in their own modules.
//!
//! Every change of a wait goes through the store's one atomic transition, so several routers
//! (tasks, or edges sharing one database) may call [`Runtime::route`] for the same event at once:
//! a wait gets one event, and an event goes to one wait of a job.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use ozcheck_analyzer::check::EnvKind;
use serde_json::{Value, json};
use tokio::sync::{broadcast, oneshot};

use crate::clock::{Clock, DAY, Timestamp};
use crate::config::Config;
use crate::error::RuntimeError;
use crate::filter::{ExprRole, Filter, PreparedEvent, Stopped};
use crate::group::Group;
use crate::index::ArmedWait;
use crate::keys;
use crate::log::LogRing;
use crate::model::{AuditRecord, Event, Job, Since, StoredEvent, Wait, WaitSpec, WaitState};
use crate::routes::{Routes, Routing};
use crate::store::{Candidate, Claim, Received, Store, StoreError, ToRoute, WaitInsert};
use crate::triggers::Triggers;

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

/// What the runtime is configured with, swapped whole when a plugin is saved: the
/// configuration and its triggers, checked once.
#[derive(Debug)]
pub struct Setup {
    /// The configuration.
    pub config: Arc<Config>,
    /// Its triggers.
    pub triggers: Triggers,
}

impl Setup {
    /// Checks the triggers of `config`.
    pub fn new(config: Arc<Config>) -> Self {
        let triggers = Triggers::compile(&config);
        Self { config, triggers }
    }
}

/// What the first stage of a grouped delivery hands back ([`Runtime::ingest`]).
struct Receipt {
    /// The answer to the delivery once its event is routed (`None`: a duplicate).
    answer: Option<StoredEvent>,
    /// The event still to route, and where the second stage says it was.
    routing: Option<(StoredEvent, oneshot::Receiver<Result<(), StoreError>>)>,
}

/// The reference runtime on one store. Share it in an `Arc`; every method may run concurrently.
pub struct Runtime<S: Store> {
    store: Arc<S>,
    clock: Arc<dyn Clock>,
    setup: RwLock<Arc<Setup>>,
    routes: Routes,
    signals: broadcast::Sender<WaitClosed>,
    log: LogRing,
    /// Deliveries waiting to be retained together ([`Store::group_size`]).
    receiving: Arc<Group<Event, Result<Receipt, StoreError>>>,
    /// Retained events waiting to be routed together.
    routing: Arc<Group<StoredEvent, Result<(), StoreError>>>,
    /// This runtime, for the task that runs those batches.
    me: Weak<Self>,
}

impl<S: Store> Runtime<S> {
    /// Starts the only edge on `store` ([`Routing::Local`]).
    pub async fn start(
        store: Arc<S>,
        clock: Arc<dyn Clock>,
        config: Arc<Config>,
    ) -> Result<Arc<Self>, StoreError> {
        Self::start_with(store, clock, config, &Routing::Local).await
    }

    /// Starts an edge on `store`: a local edge re-arms every open wait and routes the events a
    /// crashed router left unrouted (it is the only router); then flows stopped between two
    /// steps go on, and the deadlines that passed while no runtime was running fire.
    ///
    /// **An edge sharing its database serves first and sweeps after**: it routes nothing left
    /// over at start. The other edges may be routing those events right now, and a backlog of
    /// thousands kept a restarted edge from listening for minutes (issue 35); the holder of the
    /// sweeper lease routes them instead, [`REROUTE_PER_SWEEP`] per pass, in the background
    /// ([`Runtime::sweep`]).
    pub async fn start_with(
        store: Arc<S>,
        clock: Arc<dyn Clock>,
        config: Arc<Config>,
        routing: &Routing,
    ) -> Result<Arc<Self>, StoreError> {
        let (signals, _) = broadcast::channel(1024);
        let rt = Arc::new_cyclic(|me| Self {
            store,
            clock,
            setup: RwLock::new(Arc::new(Setup::new(config))),
            routes: Routes::new(routing),
            signals,
            log: LogRing::default(),
            receiving: Arc::default(),
            routing: Arc::default(),
            me: me.clone(),
        });
        for line in rt.config().warnings() {
            rt.log(line);
        }
        if !rt.routes.is_shared() {
            for wait in rt.store.open_waits().await? {
                match rt.compile_filter(&wait.spec) {
                    Ok(filter) => rt.routes.arm(ArmedWait { wait, filter }),
                    Err(reason) => {
                        let now = rt.now();
                        rt.close(&wait, WaitState::Refused, Some(&reason.to_string()), now)
                            .await?;
                    }
                }
            }
        }
        if rt.routes.is_shared() {
            // A shared store: the live edges are routing and registering meanwhile, so this
            // edge serves at once and leaves what was left over to the sweeper's lease (at most
            // REROUTE_PER_SWEEP a pass). It still looks back, before the deadlines fire, for the
            // waits whose registration a crash cut short before it started: a set that only
            // shrinks, so the start does not race the live edges.
            let started = rt.now();
            rt.look_back_pending(started).await?;
        } else {
            rt.reroute(Timestamp(i64::MAX)).await?;
            // Before the deadlines fire: a wait whose registration a crash cut short gets the
            // event it would have found then, if that event came before its deadline.
            rt.look_back_pending(Timestamp(i64::MAX)).await?;
        }
        rt.resume_flows().await?;
        rt.fire_due().await?;
        Ok(rt)
    }

    /// Routes the events received before `before` that are still unrouted (their router died
    /// between retaining and routing them). Returns how many.
    ///
    /// An event that fails is logged and left for the next pass, and the pass goes on with the
    /// events after it: the oldest event comes first in every pass, so one event the store
    /// refused would otherwise hold back every later one, and the retention that runs after
    /// the pass. Failures one after another with no success between them look like the
    /// store's fault rather than the events': after [`REROUTE_FAILURES`] of them the pass ends
    /// with the last error.
    pub async fn reroute(&self, before: Timestamp) -> Result<usize, StoreError> {
        self.reroute_at_most(before, usize::MAX).await
    }

    /// [`Runtime::reroute`], ending the pass once `most` events were routed.
    async fn reroute_at_most(&self, before: Timestamp, most: usize) -> Result<usize, StoreError> {
        const BATCH: u32 = 256;
        let mut done = 0;
        let mut failed: HashSet<i64> = HashSet::new();
        let mut in_a_row = 0;
        while done < most {
            let skip = u32::try_from(failed.len()).unwrap_or(u32::MAX);
            let events = self
                .store
                .unrouted(before, BATCH.saturating_add(skip))
                .await?;
            let fresh: Vec<&StoredEvent> =
                events.iter().filter(|e| !failed.contains(&e.seq)).collect();
            if fresh.is_empty() {
                return Ok(done);
            }
            for stored in fresh {
                match self.route_and_fire(stored).await {
                    Ok(()) => {
                        done += 1;
                        in_a_row = 0;
                    }
                    Err(e) => {
                        self.log(format!(
                            "reroute: event {}/{} (#{}) left for the next pass: {e}",
                            stored.event.source, stored.event.id, stored.seq
                        ));
                        failed.insert(stored.seq);
                        in_a_row += 1;
                        if in_a_row >= REROUTE_FAILURES {
                            return Err(e);
                        }
                    }
                }
            }
        }
        Ok(done)
    }

    /// The current time on the runtime's clock.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The store.
    pub fn store(&self) -> &Arc<S> {
        &self.store
    }

    /// The configuration and triggers in force.
    pub fn setup(&self) -> Arc<Setup> {
        self.setup
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The configuration in force.
    pub fn config(&self) -> Arc<Config> {
        self.setup().config.clone()
    }

    /// Puts a new configuration in force (a plugin was saved): its triggers fire on the next
    /// event. The caller has checked it ([`crate::configure::check`]).
    pub fn reconfigure(&self, config: Arc<Config>) {
        let setup = Arc::new(Setup::new(config));
        *self
            .setup
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = setup;
    }

    /// Signals of waits that closed, from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<WaitClosed> {
        self.signals.subscribe()
    }

    /// The newest log lines (refusals beyond the first of their minute, skipped fires, …).
    pub fn log_lines(&self) -> Vec<String> {
        self.log.lines()
    }

    /// Logs a line (to `tracing`, and to the bounded ring the API reads).
    pub(crate) fn log(&self, line: String) {
        self.log.push(line);
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

    /// Takes a wait out of the edge's index (it closed in the store).
    pub(crate) fn disarm(&self, seq: i64) {
        self.routes.disarm(seq);
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

    fn compile_filter(&self, spec: &WaitSpec) -> Result<Option<Filter>, crate::filter::Refusal> {
        let config = self.config();
        let source = config.source(&spec.source);
        let bounds = source.map(|s| s.bounds).unwrap_or_default();
        let hooks = source
            .map(crate::config::SourceConfig::hooks)
            .unwrap_or_default();
        let extensions = config.extensions.of(EnvKind::Filter);
        spec.filter
            .as_deref()
            .map(|f| Filter::compile_as(ExprRole::Filter, f, &bounds, extensions, hooks))
            .transpose()
    }

    /// Runs the look-back of the open waits registered before `before` whose look-back was
    /// never marked done: their registering edge died between committing the wait and looking
    /// back (a restart runs it for every such wait; the sweeper for those older than
    /// [`REROUTE_AFTER`], which a live edge may still be looking back for). Running it twice is
    /// harmless: the claim decides. Returns how many it ran.
    pub async fn look_back_pending(&self, before: Timestamp) -> Result<usize, StoreError> {
        const BATCH: u32 = 256;
        let mut done: HashSet<i64> = HashSet::new();
        loop {
            let waits = self.store.waits_to_look_back(before, BATCH).await?;
            let fresh: Vec<Wait> = waits
                .into_iter()
                .filter(|w| !done.contains(&w.seq))
                .collect();
            if fresh.is_empty() {
                return Ok(done.len());
            }
            for wait in fresh {
                done.insert(wait.seq);
                let job = self.store.job(&wait.job).await?;
                match self.compile_filter(&wait.spec) {
                    Ok(filter) => self.settle(job.as_ref(), &wait, filter).await?,
                    Err(reason) => {
                        let now = self.now();
                        self.close(&wait, WaitState::Refused, Some(&reason.to_string()), now)
                            .await?;
                    }
                }
            }
        }
    }

    /// What registering does once the open wait is committed, written once for the first try,
    /// a retry, a restart and the sweeper (each may run it again: every step is idempotent or
    /// decided by the store's one transition): a shadow job's wait is refused; a wait whose
    /// deadline had passed when it was registered times out; any other is armed, looks back
    /// through the retained events (E15) and is marked looked back, so no restart looks again.
    async fn settle(
        &self,
        job: Option<&Job>,
        wait: &Wait,
        filter: Option<Filter>,
    ) -> Result<(), StoreError> {
        if job.is_none_or(|j| j.shadow) {
            let reason = "shadow run: no event is waited for";
            self.close(wait, WaitState::Refused, Some(reason), wait.created_at)
                .await?;
            return Ok(());
        }
        if wait.deadline <= wait.created_at {
            // The job's own time was up: nothing is looked back at, nothing is taken.
            self.close(wait, WaitState::TimedOut, None, wait.created_at)
                .await?;
            return Ok(());
        }
        // Armed before the look-back, so an event that arrives meanwhile is routed to it; the
        // store's transition decides which of the two claims wins.
        self.routes.arm(ArmedWait {
            wait: wait.clone(),
            filter: filter.clone(),
        });
        self.look_back(wait, filter.as_ref()).await?;
        self.store.mark_looked_back(wait.seq).await
    }

    /// Registers a validated wait for `job` (tool calls and flow steps alike): refused for an
    /// ended job; timed out at once when the job's own deadline has passed (E2); otherwise
    /// armed, then the retained events are looked back through (E15).
    ///
    /// A second registration of a wait the job has (a client's retry after an answer it never
    /// got) with the same arguments gets the wait as it stands, after finishing what the first
    /// try may have left undone; other arguments under the same name are `wait-exists`.
    pub(crate) async fn register(
        &self,
        job: &Job,
        name: &str,
        spec: WaitSpec,
    ) -> Result<Wait, RuntimeError> {
        if job.ended_at.is_some() {
            return Err(RuntimeError::refused(
                "job-ended",
                format!("the job `{}` has ended: it cannot wait", job.id),
            ));
        }
        keys::storable("the wait's `source`", &spec.source)?;
        if self.config().source(&spec.source).is_none() {
            return Err(RuntimeError::not_found(
                "unknown-source",
                format!("no event source `{}`", spec.source),
            ));
        }
        keys::check("the wait's name", name, keys::MAX_WAIT_NAME)?;
        check_spec_keys(&spec)?;
        let filter = self.compile_filter(&spec).map_err(|r| {
            RuntimeError::refused(r.code, format!("the filter is refused: {}", r.message))
        })?;
        let now = self.now();
        let mut deadline = now.plus(spec.timeout);
        if let Some(job_deadline) = job.deadline {
            deadline = deadline.min(job_deadline);
        }
        let after_seq = match spec.since {
            Since::Job => job.start_seq,
            Since::Now => self.store.last_seq().await?,
        };
        let mut wait = Wait::open(&job.id, name, spec, after_seq, now, deadline);
        wait.seq = match self.store.insert_wait(&wait).await? {
            WaitInsert::Inserted(seq) => seq,
            WaitInsert::NameTaken => {
                return self.registered_again(job, name, &wait.spec, filter).await;
            }
            WaitInsert::JobEnded => {
                return Err(RuntimeError::refused(
                    "job-ended",
                    format!("the job `{}` has ended: it cannot wait", job.id),
                ));
            }
        };
        self.settle(Some(job), &wait, filter).await?;
        self.fire_due().await?;
        self.wait_named(&job.id, name).await
    }

    /// A registration whose name the job has already: the same arguments are a retry, answered
    /// with the wait as it stands once its registration is finished (its first try may have
    /// died after committing it); other arguments are `wait-exists`.
    async fn registered_again(
        &self,
        job: &Job,
        name: &str,
        spec: &WaitSpec,
        filter: Option<Filter>,
    ) -> Result<Wait, RuntimeError> {
        let existing = self.wait_named(&job.id, name).await?;
        if existing.spec != *spec {
            return Err(RuntimeError::conflict(
                "wait-exists",
                format!(
                    "the job `{}` has a wait `{name}` already, with other arguments",
                    job.id
                ),
            ));
        }
        if existing.state == WaitState::Open {
            self.settle(Some(job), &existing, filter).await?;
            self.fire_due().await?;
        }
        self.wait_named(&job.id, name).await
    }

    /// A job's wait by name, or `not_found`.
    pub async fn wait_named(&self, job: &str, name: &str) -> Result<Wait, RuntimeError> {
        keys::storable("the job id", job)?;
        keys::storable("the wait's name", name)?;
        self.store.wait(job, name).await?.ok_or_else(|| {
            RuntimeError::not_found(
                "unknown-wait",
                format!("the job `{job}` has no wait `{name}`"),
            )
        })
    }

    async fn look_back(&self, wait: &Wait, filter: Option<&Filter>) -> Result<(), StoreError> {
        let now = self.now();
        let events = self
            .store
            .retained_events(&wait.spec.source, wait.after_seq, now.minus(DAY), &wait.job)
            .await?;
        for stored in events {
            // An event that came at or after the deadline finds the wait timed out (a look-back
            // run late, after a crash, must not give it one).
            if stored.received_at >= wait.deadline || !wait.spec.admits(&stored.event) {
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
        let outcome = self.store.claim(&candidate, event, self.now()).await?;
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

    /// Closes an open wait as timed out or refused, disarms it and tells its job; `false` if
    /// it was not open any more.
    pub(crate) async fn close(
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

    /// A wait left `open` (in the store already): its job hears of it, its flow goes on.
    pub(crate) async fn closed(&self, wait: &Wait, state: WaitState) -> Result<(), StoreError> {
        // Nobody listening is fine: the state is in the store. With nobody subscribed (an edge
        // routing for the API alone), the signal's names are not copied only to be dropped.
        if self.signals.receiver_count() > 0 {
            let _ = self.signals.send(WaitClosed {
                wait: wait.name.clone(),
                job: wait.job.clone(),
                state,
            });
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
    ///
    /// On a store that takes deliveries in groups, deliveries go through two stages, each a
    /// [`Group`] on a task of its own: the events that arrive while a group is being retained
    /// are retained together in the next transaction, and the events retained wait likewise to
    /// be routed together in one more. The two stages overlap: while one group is routed, the
    /// next is retained. A delivery is answered once its event is routed.
    ///
    /// An event whose identity is longer than the runtime keeps (`keys`) is refused with an
    /// error before it joins a group, so it fails only its own delivery.
    pub async fn ingest(&self, event: &Event) -> Result<Option<StoredEvent>, StoreError> {
        if let Some(why) = keys::event_refusal(event) {
            return Err(StoreError(why));
        }
        let max = self.store.group_size();
        if let (true, Some(me)) = (max > 1, self.me.upgrade()) {
            let receipt = self
                .receiving
                .run(event.clone(), max, move |events: Vec<Event>| {
                    let me = me.clone();
                    async move { me.receive_stage(events, max).await }
                })
                .await;
            match receipt {
                Some(Ok(Receipt {
                    answer,
                    routing: None,
                })) => return Ok(answer),
                Some(Ok(Receipt {
                    answer,
                    routing: Some((stored, routed)),
                })) => {
                    return match routed.await {
                        Ok(result) => result.map(|()| answer),
                        // Its routing batch ended unanswered: routed alone.
                        Err(_) => self.route_received(vec![stored]).await.map(|()| answer),
                    };
                }
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        let mut answers = self.ingest_all(std::slice::from_ref(event)).await?;
        Ok(answers.pop().flatten())
    }

    /// The first stage of a grouped [`Runtime::ingest`]: retains `events` in one transaction
    /// and queues those to route for the second stage. One receipt per event, in order.
    async fn receive_stage(
        self: &Arc<Self>,
        events: Vec<Event>,
        max: usize,
    ) -> Vec<Result<Receipt, StoreError>> {
        let n = events.len();
        let received = match self.receive_all(events).await {
            Ok(received) => received,
            Err(e) => return (0..n).map(|_| Err(StoreError(e.0.clone()))).collect(),
        };
        // Queued in sequence order: a routing batch may take only the first of them (the
        // queue holds earlier ones too), and the rest must not overtake them.
        let mut order: Vec<usize> = (0..received.len())
            .filter(|&i| received[i].1.is_some())
            .collect();
        order.sort_by_key(|&i| received[i].1.as_ref().map(|stored| stored.seq));
        let to_route: Vec<StoredEvent> = order
            .iter()
            .filter_map(|&i| received[i].1.clone())
            .collect();
        let me = Arc::clone(self);
        let routed = self
            .routing
            .submit(to_route, max, move |stored: Vec<StoredEvent>| {
                let me = me.clone();
                async move {
                    let n = stored.len();
                    match me.route_received(stored).await {
                        Ok(()) => (0..n).map(|_| Ok(())).collect(),
                        Err(e) => (0..n).map(|_| Err(StoreError(e.0.clone()))).collect(),
                    }
                }
            });
        // Each event to route has its receiver, back in the callers' order.
        let mut routed_of: Vec<Option<oneshot::Receiver<_>>> =
            received.iter().map(|_| None).collect();
        for (i, rx) in order.into_iter().zip(routed) {
            routed_of[i] = Some(rx);
        }
        received
            .into_iter()
            .zip(routed_of)
            .map(|((answer, route), rx)| {
                Ok(Receipt {
                    answer,
                    routing: route.zip(rx),
                })
            })
            .collect()
    }

    /// [`Runtime::ingest`] for several events at once, in one store transaction to retain them
    /// and one more to route them; one answer per event, in order.
    async fn ingest_all(&self, events: &[Event]) -> Result<Vec<Option<StoredEvent>>, StoreError> {
        let received = self.receive_all(events.to_vec()).await?;
        self.route_received(received.iter().filter_map(|r| r.1.clone()).collect())
            .await?;
        Ok(received.into_iter().map(|r| r.0).collect())
    }

    /// Retains `events` with their `event.received` records in one store transaction. For each
    /// event, in order: the answer to its delivery (`None`: a duplicate), and the event to route
    /// if it is not routed yet. An identity given twice is one event: the second is answered
    /// as a duplicate.
    async fn receive_all(
        &self,
        events: Vec<Event>,
    ) -> Result<Vec<(Option<StoredEvent>, Option<StoredEvent>)>, StoreError> {
        let now = self.now();
        // For each event, the distinct event it is, and whether it came first.
        let mut place: Vec<(usize, bool)> = Vec::with_capacity(events.len());
        // One event (a delivery alone) is its own first: no map to build.
        if events.len() == 1 {
            place.push((0, true));
        } else {
            let mut firsts = 0;
            let mut first: HashMap<(&str, &str), usize> = HashMap::new();
            for event in &events {
                let key = (event.source.as_str(), event.id.as_str());
                if let Some(&i) = first.get(&key) {
                    place.push((i, false));
                } else {
                    first.insert(key, firsts);
                    place.push((firsts, true));
                    firsts += 1;
                }
            }
        }
        // Taken, not copied: an event may be 24 KiB. Shared from here on: the stored events
        // answered and routed are these.
        let distinct: Vec<Arc<Event>> = events
            .into_iter()
            .zip(&place)
            .filter_map(|(event, &(_, first))| first.then(|| Arc::new(event)))
            .collect();
        let audits: Vec<AuditRecord> = distinct
            .iter()
            .map(|event| AuditRecord {
                at: now,
                action: "event.received".to_owned(),
                data: json!({"source": event.source, "id": event.id, "type": event.kind,
                             "action": event.action, "subject": event.subject}),
            })
            .collect();
        let received: Vec<(Option<StoredEvent>, Option<StoredEvent>)> = self
            .store
            .receive_shared(&distinct, &audits, now)
            .await?
            .into_iter()
            .map(|received| match received {
                Received::New(stored) => (Some(stored.clone()), Some(stored)),
                Received::Known {
                    stored,
                    routed: false,
                } => (None, Some(stored)),
                Received::Known { routed: true, .. } => (None, None),
            })
            .collect();
        // A second delivery in the batch is a duplicate, answered once the event is routed.
        Ok(place
            .into_iter()
            .map(|(i, first)| {
                let (answer, route) = received[i].clone();
                (answer.filter(|_| first), route)
            })
            .collect())
    }

    /// Routes retained events and marks them routed, in sequence order (an event given twice
    /// is routed once): runs of events no trigger watches in one transaction, the others each
    /// with their fires.
    async fn route_received(&self, mut to_route: Vec<StoredEvent>) -> Result<(), StoreError> {
        to_route.sort_by_key(|stored| stored.seq);
        to_route.dedup_by_key(|stored| stored.seq);
        let mut plain = Vec::new();
        let setup = self.setup();
        for stored in to_route {
            if setup.triggers.watches(&stored.event.source) {
                self.route_marking(&std::mem::take(&mut plain), true)
                    .await?;
                self.route_and_fire(&stored).await?;
            } else {
                plain.push(stored);
            }
        }
        self.route_marking(&plain, true).await?;
        Ok(())
    }

    /// Routes a retained event to its waits and fires its triggers, then marks it routed (in
    /// the claims' transaction when no trigger watches its source).
    async fn route_and_fire(&self, stored: &StoredEvent) -> Result<(), StoreError> {
        let event = &stored.event;
        let triggers = self.setup().triggers.watches(&event.source);
        self.route_marking(std::slice::from_ref(stored), !triggers)
            .await?;
        if triggers {
            self.fire_triggers(stored).await?;
            self.store.mark_routed(&event.source, &event.id).await?;
        }
        Ok(())
    }

    /// Routes a retained event to the open waits it matches: the waits on its subject and on
    /// any subject of its source, oldest first, at most one per job. Returns the waits it got.
    pub async fn route(&self, stored: &StoredEvent) -> Result<Vec<String>, StoreError> {
        let mut matched = self
            .route_marking(std::slice::from_ref(stored), false)
            .await?;
        Ok(matched.pop().unwrap_or_default())
    }

    /// Routes retained events (distinct identities) in one store transaction, one after
    /// another, and with `mark_routed` marks them routed in it. Returns the waits each got.
    async fn route_marking(
        &self,
        events: &[StoredEvent],
        mark_routed: bool,
    ) -> Result<Vec<Vec<String>>, StoreError> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let compile = |spec: &WaitSpec| self.compile_filter(spec).map_err(|r| r.to_string());
        let found = self
            .routes
            .candidates_many(&*self.store, events, &compile)
            .await?;
        let mut batch = Vec::with_capacity(events.len());
        let mut armed_of = Vec::with_capacity(events.len());
        for (stored, found) in events.iter().zip(found) {
            let event = &stored.event;
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
                    let Ok(prepared) = prepared.get_or_insert_with(|| PreparedEvent::new(event))
                    else {
                        continue;
                    };
                    if filter.matches(prepared) != Ok(true) {
                        continue;
                    }
                }
                armed.push(candidate.clone());
            }
            if armed.is_empty() && !mark_routed {
                armed_of.push(None);
                continue;
            }
            batch.push(ToRoute {
                event: event.clone(),
                candidates: armed
                    .iter()
                    .map(|a| self.candidate(&a.wait, stored))
                    .collect(),
                mark_routed,
                seq: Some(stored.seq),
            });
            armed_of.push(Some(armed));
        }
        let mut outcomes = if batch.is_empty() {
            Vec::new()
        } else {
            self.store.route_many(&batch, self.now()).await?
        }
        .into_iter();
        let mut out = Vec::with_capacity(events.len());
        for armed in armed_of {
            let mut matched = Vec::new();
            if let Some(armed) = armed {
                let claims = outcomes.next().unwrap_or_default();
                for (candidate, outcome) in armed.iter().zip(claims) {
                    if outcome == Claim::Claimed {
                        matched.push(candidate.wait.name.clone());
                    }
                    self.claimed(&candidate.wait, outcome).await?;
                }
            }
            out.push(matched);
        }
        Ok(out)
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

    /// Forgets events older than the one-day retention (on a shared database, only the edge
    /// holding the sweeper lease does; the others return 0).
    pub async fn purge(&self) -> Result<u64, StoreError> {
        let now = self.now();
        if !self.routes.holds_sweeper(&*self.store, now).await? {
            return Ok(0);
        }
        let purged = self.store.purge_events(now.minus(DAY)).await?;
        self.store
            .forget_deliveries(now.minus(DELIVERIES_KEPT))
            .await?;
        Ok(purged)
    }

    /// The periodic work of an edge: fire due deadlines, and, on the edge that holds the
    /// sweeper lease, route events left unrouted for [`REROUTE_AFTER`] (their router died), at
    /// most about [`REROUTE_PER_SWEEP`] of them, and forget expired events and deliveries.
    ///
    /// The bound keeps a pass well inside the lease's term, so that the holder renews it before
    /// another edge could take it and route the same events (harmless, every claim is
    /// conditional, but wasted), and keeps the deadlines of the next pass on time.
    pub async fn sweep(&self) -> Result<(), StoreError> {
        self.fire_due().await?;
        let now = self.now();
        if self.routes.holds_sweeper(&*self.store, now).await? {
            // Retention runs even when re-routing failed: it is what finally removes an event
            // that cannot be routed.
            let rerouted = self
                .reroute_at_most(now.minus(REROUTE_AFTER), REROUTE_PER_SWEEP)
                .await;
            let looked = self.look_back_pending(now.minus(REROUTE_AFTER)).await;
            self.store.purge_events(now.minus(DAY)).await?;
            self.store
                .forget_deliveries(now.minus(DELIVERIES_KEPT))
                .await?;
            rerouted?;
            looked?;
        }
        Ok(())
    }
}

/// The keys and text of a wait's arguments that every store must keep alike: its subject
/// within [`keys::MAX_FIELD`], and no NUL in its subject, types or filter.
fn check_spec_keys(spec: &WaitSpec) -> Result<(), RuntimeError> {
    if let Some(subject) = &spec.subject {
        keys::check("the wait's `subject`", subject, keys::MAX_FIELD)?;
    }
    for kind in spec.types.iter().flatten() {
        keys::storable("a type of the wait's `types`", kind)?;
    }
    if let Some(filter) = &spec.filter {
        keys::storable_text("the wait's `filter`", filter)?;
    }
    Ok(())
}

/// About how many left-over events one pass of [`Runtime::sweep`] routes (it ends after the
/// batch in which it reaches this many); the rest wait for the next pass, a second later.
pub const REROUTE_PER_SWEEP: usize = 1024;

/// How long the edge remembers a delivery's identity after it first arrived: the longest a
/// wait may last (7 days) and the one-day retention of the events it may look back at, so a
/// redelivery of an event any open wait could still have seen is a duplicate.
pub const DELIVERIES_KEPT: Duration =
    Duration::from_secs(ozcheck_analyzer::wait_args::MAX_TIMEOUT.as_secs() + DAY.as_secs());

/// Failures one after another, with no event routed between them, that end a pass of
/// [`Runtime::reroute`].
pub const REROUTE_FAILURES: usize = 8;

/// How long an unrouted event is left to the edge that is routing it before the sweeper
/// routes it (routing twice is harmless, but wasted work).
pub const REROUTE_AFTER: Duration = Duration::from_secs(5);
