//! A deterministic simulator of edges on one store, in the manner of `TigerBeetle`'s VOPR and
//! `FoundationDB`'s simulation: from one seed (a `u64`) it draws a trace of operations, runs it
//! on N edges sharing one store and one manual clock, and checks the runtime's invariants after
//! every operation and once more when the edges are quiet.
//!
//! The trace is data ([`Op`]): registrations and their retries, deliveries, redeliveries and
//! replays of the same signed bytes, clock jumps (small, past deadlines, past the one-day
//! retention), clock ticks of one edge, crashes armed at the N-th store step of an edge (every
//! row write and commit is a step, [`ozcheck_runtime::faults`]), restarts, and database outages
//! (every store call of every edge fails until the database comes back; an edge restarted
//! meanwhile starts when it does). Operations run one
//! after another on a single-threaded executor, so a trace always runs the same way, and a
//! failing trace can be shrunk: steps are dropped while it still fails with the same violation,
//! and the shortest trace is printed with its seed.
//!
//! What a client does is part of the model: a registration or delivery that got no answer (its
//! edge crashed) is sent again when the edges are quiet, as an agent's retry and a webhook
//! sender's redelivery would be.

#![allow(dead_code, clippy::missing_panics_doc)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::faults::{Faults, Faulty, Outage, Plan};
use ozcheck_runtime::model::{FireState, WaitState};
use ozcheck_runtime::source::Delivery;
use ozcheck_runtime::store::rows::Backend;
use ozcheck_runtime::store::{MemoryStore, MemoryTx, Store, StoreResult};
use ozcheck_runtime::{JobStart, Routing, Runtime, RuntimeError};
use serde_json::{Value, json};

/// Jobs a trace may start (`j0`, `j1` start with the simulation).
pub const JOBS: u8 = 4;
/// Wait names per job; each name has one set of arguments ([`wait_args`]), so sending it again
/// is a retry.
pub const WAITS: u8 = 4;
/// Event identities; each has one body ([`delivery`]), so sending it again is a redelivery.
pub const EVENTS: u8 = 10;
/// The routine's `max_fires_per_hour`.
pub const MAX_FIRES: usize = 2;
const DAY_MS: i64 = 24 * 3600 * 1000;
const HOUR_MS: i64 = 3600 * 1000;

/// One operation of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Starts job `job` through `edge`.
    StartJob { edge: usize, job: u8 },
    /// Registers wait `wait` of job `job` through `edge` (again: a retry).
    Register { edge: usize, job: u8, wait: u8 },
    /// Delivers event `event` to `edge` (again: a redelivery or a replay).
    Deliver { edge: usize, event: u8 },
    /// Moves the clock on.
    Advance { ms: i64 },
    /// One clock tick of `edge` (`Runtime::sweep`).
    Tick { edge: usize },
    /// Arms a crash of `edge` at its `step`-th store step from now.
    Crash { edge: usize, step: u64 },
    /// Stops `edge` as a crash would and starts it again on the same store (once the
    /// database is back, when it is away).
    Restart { edge: usize },
    /// The database goes away for every edge (as a `PostgreSQL` server stopping would): every
    /// store call fails, no edge crashes.
    DatabaseDown,
    /// The database comes back.
    DatabaseUp,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Op::StartJob { edge, job } => write!(f, "edge {edge}: start job j{job}"),
            Op::Register { edge, job, wait } => {
                write!(
                    f,
                    "edge {edge}: register j{job}/w{wait} {}",
                    wait_args(wait)
                )
            }
            Op::Deliver { edge, event } => write!(f, "edge {edge}: deliver e{event}"),
            Op::Advance { ms } => write!(f, "clock +{ms} ms"),
            Op::Tick { edge } => write!(f, "edge {edge}: clock tick"),
            Op::Crash { edge, step } => write!(f, "edge {edge}: crash at store step {step}"),
            Op::Restart { edge } => write!(f, "edge {edge}: restart"),
            Op::DatabaseDown => f.write_str("the database goes away"),
            Op::DatabaseUp => f.write_str("the database comes back"),
        }
    }
}

/// The arguments of wait `w{wait}`: the same every time it is sent.
pub fn wait_args(wait: u8) -> Value {
    match wait % WAITS {
        0 => json!({"source": "ci", "subject": "s0", "timeout": "30s"}),
        1 => json!({"source": "ci", "subject": "s1", "timeout": "2m",
                    "filter": "event.attributes.n % 2 == 1"}),
        2 => json!({"source": "ci", "types": ["deploy"], "timeout": "1h"}),
        _ => json!({"source": "ci", "subject": "s2", "timeout": "10m"}),
    }
}

/// The body of event `e{event}`: the same bytes every time it is sent.
pub fn delivery(event: u8) -> Delivery {
    let kind = if event % 3 == 0 { "deploy" } else { "check" };
    Delivery {
        headers: Vec::new(),
        body: json!({"id": format!("e{event}"), "type": kind,
                     "subject": format!("s{}", event % 3), "attributes": {"n": event}})
        .to_string()
        .into_bytes(),
    }
}

/// The configuration: one JSON source, and a routine fired by `deploy` events, limited per hour.
pub fn config() -> Arc<Config> {
    Arc::new(
        serde_json::from_value(json!({
            "sources": [{"name": "ci", "kind": "json"}],
            "routines": [{"name": "r", "limits": {"max_fires_per_hour": MAX_FIRES},
                          "triggers": [{"name": "t",
                                        "event": {"source": "ci", "types": ["deploy"]}}]}]
        }))
        .expect("config"),
    )
}

/// `SplitMix64`: small, fast, and the same on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// How many edges a seed runs, and its trace.
pub fn generate(seed: u64, max_edges: usize) -> (usize, Vec<Op>) {
    let mut rng = Rng::new(seed);
    let edges = 1 + rng.below(max_edges as u64) as usize;
    let len = 15 + rng.below(45) as usize;
    let mut ops = Vec::with_capacity(len);
    for _ in 0..len {
        let edge = rng.below(edges as u64) as usize;
        let op = match rng.below(100) {
            0..=5 => Op::StartJob {
                edge,
                job: 2 + rng.below(u64::from(JOBS - 2)) as u8,
            },
            6..=30 => Op::Register {
                edge,
                job: rng.below(u64::from(JOBS)) as u8,
                wait: rng.below(u64::from(WAITS)) as u8,
            },
            31..=55 => Op::Deliver {
                edge,
                event: rng.below(u64::from(EVENTS)) as u8,
            },
            56..=67 => Op::Advance {
                ms: match rng.below(8) {
                    0..=2 => 1_000,
                    3 => 6_000,
                    4 => 11_000,
                    5 => 90_000,
                    6 => HOUR_MS,
                    _ => DAY_MS + HOUR_MS,
                },
            },
            68..=75 => Op::Tick { edge },
            76..=89 => Op::Crash {
                edge,
                step: rng.below(12),
            },
            90..=95 => Op::Restart { edge },
            96..=97 => Op::DatabaseDown,
            _ => Op::DatabaseUp,
        };
        ops.push(op);
    }
    (edges, ops)
}

/// Where a simulation's store lives, opened once per edge (each edge its own handle, as a
/// separate process would have) and once more for the checker.
pub trait Place {
    /// A handle's type; the edges' handles are it behind a crash switch.
    type Store: Store;
    /// A handle on the store.
    fn open(&self) -> impl Future<Output = Self::Store>;
    /// Whether one edge alone routes through its own index (`SQLite`, memory) or through the
    /// store's (`PostgreSQL`).
    fn local_when_alone(&self) -> bool {
        true
    }
}

/// One `MemoryStore` shared by every edge's handle, each behind its own crash switch: a
/// backend of the simulator's own that hands out the shared store's transactions, so what one
/// handle commits the others read, and a handle's crash leaves the store to the others.
#[derive(Clone, Default)]
pub struct Memory(Arc<MemoryStore>);

impl Backend for Memory {
    type Tx<'a> = MemoryTx<'a>;
    type Read<'a> = MemoryTx<'a>;

    async fn begin(&self) -> StoreResult<MemoryTx<'_>> {
        self.0.begin().await
    }

    async fn read(&self) -> StoreResult<MemoryTx<'_>> {
        self.0.read().await
    }
}

impl Place for Memory {
    type Store = Memory;
    async fn open(&self) -> Memory {
        self.clone()
    }
}

/// A `SQLite` file in a temporary directory of its own.
pub struct Sqlite(tempfile::TempDir);

impl Sqlite {
    pub fn new() -> Self {
        Self(tempfile::tempdir().expect("tempdir"))
    }
}

impl Place for Sqlite {
    type Store = ozcheck_runtime::store::SqliteStore;
    async fn open(&self) -> Self::Store {
        ozcheck_runtime::store::SqliteStore::open(&self.0.path().join("sim.db"))
            .await
            .expect("open")
    }
}

/// A broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Which invariant (stable: shrinking keeps a trace that breaks the same one).
    pub kind: &'static str,
    /// What was seen.
    pub detail: String,
    /// After which operation (its index in the trace; the length of the trace for the check
    /// when the edges are quiet).
    pub at: usize,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} after step {}: {}", self.kind, self.at, self.detail)
    }
}

struct Edge<F: Store> {
    rt: Arc<Runtime<F>>,
    faults: Arc<Faults>,
}

/// What the clients know: what was acknowledged, and what is still to send again.
#[derive(Default)]
struct Clients {
    /// Events acknowledged (202 or 200), with when each was first sent.
    acked_events: BTreeSet<u8>,
    first_sent: HashMap<u8, Timestamp>,
    /// Events sent and never acknowledged.
    unacked_events: BTreeSet<u8>,
    /// Registrations answered with a wait, and its id.
    acked_waits: BTreeMap<(u8, u8), i64>,
    /// Registrations sent and never answered.
    unacked_waits: BTreeSet<(u8, u8)>,
    /// Jobs whose start was sent and never answered.
    unacked_jobs: BTreeSet<u8>,
    /// A retry of a registration answered `wait-exists`.
    refused_retries: Vec<(u8, u8)>,
}

struct Sim<'p, P: Place>
where
    Faulty<P::Store>: Store,
{
    place: &'p P,
    clock: ManualClock,
    edges: Vec<Option<Edge<Faulty<P::Store>>>>,
    shared: bool,
    checker: Arc<P::Store>,
    /// The database's availability, shared by every edge's handle (not the checker's).
    outage: Arc<Outage>,
    /// Edges restarted while the database was away: they start once it is back, as `ozcheck
    /// serve` waits for its database before it listens.
    waiting: BTreeSet<usize>,
    clients: Clients,
    /// Closed waits as first seen closed: `(state, event id)`.
    closed: HashMap<i64, (WaitState, Option<String>)>,
}

impl<P: Place> Sim<'_, P>
where
    Faulty<P::Store>: Store,
{
    async fn start_edge(&self, i: usize) -> Edge<Faulty<P::Store>> {
        let faults = Faults::with_outage(self.outage.clone());
        let store = Arc::new(Faulty::new(self.place.open().await, faults.clone()));
        let routing = if self.shared {
            Routing::Shared {
                edge: format!("edge-{i}"),
            }
        } else {
            Routing::Local
        };
        let rt = Runtime::start_with(store, Arc::new(self.clock.clone()), config(), &routing)
            .await
            .expect("an edge starts on a store that did not crash");
        Edge { rt, faults }
    }

    /// The live edge `i`, or `None` when it crashed (operations on it wait for its restart).
    /// The runtime of live edge `i`.
    fn runtime(&self, i: usize) -> Option<Arc<Runtime<Faulty<P::Store>>>> {
        self.live(i).map(|e| e.rt.clone())
    }

    fn live(&self, i: usize) -> Option<&Edge<Faulty<P::Store>>> {
        self.edges[i]
            .as_ref()
            .filter(|e| e.faults.crashed().is_none())
    }

    async fn restart(&mut self, i: usize) {
        // A crash: the runtime and its handle go without any shutdown step.
        self.edges[i] = None;
        if self.outage.is_down() {
            self.waiting.insert(i);
        } else {
            self.waiting.remove(&i);
            self.edges[i] = Some(self.start_edge(i).await);
        }
    }

    /// The database comes back, and the edges that waited for it start.
    async fn database_up(&mut self) {
        self.outage.set_down(false);
        for i in std::mem::take(&mut self.waiting) {
            self.restart(i).await;
        }
    }

    /// Runs one operation as the clients would.
    async fn run(&mut self, op: Op) {
        match op {
            Op::StartJob { edge, job } => self.start_job(edge, job).await,
            Op::Register { edge, job, wait } => self.register(edge, job, wait).await,
            Op::Deliver { edge, event } => self.deliver(edge, event).await,
            Op::Advance { ms } => self
                .clock
                .advance(Duration::from_millis(u64::try_from(ms).unwrap_or(0))),
            Op::Tick { edge } => {
                if let Some(e) = self.live(edge) {
                    // A failed tick is the next tick's work.
                    let _ = e.rt.sweep().await;
                }
            }
            Op::Crash { edge, step } => {
                if let Some(e) = self.live(edge) {
                    e.faults.arm(Plan::AtStep(step));
                }
            }
            Op::Restart { edge } => self.restart(edge).await,
            Op::DatabaseDown => self.outage.set_down(true),
            Op::DatabaseUp => self.database_up().await,
        }
    }

    async fn start_job(&mut self, edge: usize, job: u8) {
        let Some(rt) = self.runtime(edge) else { return };
        let start = JobStart {
            id: format!("j{job}"),
            ..JobStart::default()
        };
        match rt.start_job(&start).await {
            Ok(_) | Err(RuntimeError::Conflict { .. }) => {
                self.clients.unacked_jobs.remove(&job);
            }
            Err(_) => {
                self.clients.unacked_jobs.insert(job);
            }
        }
    }

    async fn register(&mut self, edge: usize, job: u8, wait: u8) {
        let Some(rt) = self.runtime(edge) else { return };
        let name = format!("w{wait}");
        match rt
            .wait_for_event(&format!("j{job}"), &name, &wait_args(wait))
            .await
        {
            Ok(w) => {
                self.clients.unacked_waits.remove(&(job, wait));
                self.clients.acked_waits.insert((job, wait), w.seq);
            }
            Err(RuntimeError::Conflict { .. }) => {
                // The same arguments again: only a retry of a registration that committed.
                if self.clients.unacked_waits.remove(&(job, wait)) {
                    self.clients.refused_retries.push((job, wait));
                }
            }
            // The job never started (or ended): the agent hears so and waits for nothing.
            Err(RuntimeError::NotFound { .. } | RuntimeError::Refused { .. }) => {
                self.clients.unacked_waits.remove(&(job, wait));
            }
            Err(_) => {
                if !self.clients.acked_waits.contains_key(&(job, wait)) {
                    self.clients.unacked_waits.insert((job, wait));
                }
            }
        }
    }

    async fn deliver(&mut self, edge: usize, event: u8) {
        let Some(rt) = self.runtime(edge) else { return };
        let now = self.clock.now_ts();
        self.clients.first_sent.entry(event).or_insert(now);
        match rt.deliver("ci", &delivery(event)).await {
            Ok(d) if matches!(d.status, 200 | 202) => {
                self.clients.unacked_events.remove(&event);
                self.clients.acked_events.insert(event);
            }
            _ => {
                self.clients.unacked_events.insert(event);
            }
        }
    }

    /// Stops every crash, restarts the edges that crashed, sends again what got no answer,
    /// and lets the clock tick past the re-routing delay and a lease term on every edge.
    async fn quiesce(&mut self) {
        self.database_up().await;
        for i in 0..self.edges.len() {
            match &self.edges[i] {
                Some(e) if e.faults.crashed().is_none() => e.faults.arm(Plan::AtStep(u64::MAX)),
                _ => self.restart(i).await,
            }
        }
        for job in std::mem::take(&mut self.clients.unacked_jobs) {
            self.start_job(0, job).await;
        }
        for event in self.clients.unacked_events.clone() {
            self.deliver(0, event).await;
        }
        for (job, wait) in self.clients.unacked_waits.clone() {
            self.register(0, job, wait).await;
        }
        for _ in 0..2 {
            self.clock.advance(Duration::from_secs(11));
            for i in 0..self.edges.len() {
                if let Some(e) = self.live(i) {
                    e.rt.sweep().await.expect("a quiet edge ticks");
                }
            }
        }
    }

    /// The invariants that hold after every operation.
    async fn check(&mut self, at: usize) -> Result<(), Violation> {
        let fail = |kind, detail: String| Violation { kind, detail, at };
        let checker = self.checker.clone();
        let store = &*checker;
        let now = self.clock.now_ts();
        // Nothing acknowledged is lost: an acknowledged event is retained until it is past
        // retention; an acknowledged wait is kept.
        for &event in &self.clients.acked_events {
            let first = self.clients.first_sent[&event];
            let kept = store
                .event("ci", &format!("e{event}"))
                .await
                .expect("read")
                .is_some();
            if !kept && first.0 >= now.0 - DAY_MS {
                return Err(fail(
                    "acknowledged-event-lost",
                    format!("e{event} was acknowledged and is gone"),
                ));
            }
        }
        for (&(job, wait), &seq) in &self.clients.acked_waits {
            let kept = store.wait_by_seq(seq).await.expect("read");
            if kept.is_none_or(|w| w.name != format!("w{wait}") || w.job != format!("j{job}")) {
                return Err(fail(
                    "acknowledged-wait-lost",
                    format!("j{job}/w{wait} (#{seq})"),
                ));
            }
        }
        // One event per wait, one wait per event per job, a fire at most once per event.
        let audit = store.audit().await.expect("audit");
        let mut per_wait: HashMap<(String, String), usize> = HashMap::new();
        let mut per_job_event: HashMap<(String, String), usize> = HashMap::new();
        let mut per_fire: HashMap<String, usize> = HashMap::new();
        for record in audit.iter().filter(|r| r.action == "event.match") {
            let d = &record.data;
            let text = |k: &str| d[k].as_str().unwrap_or_default().to_owned();
            if d["to"] == "wait" {
                *per_wait.entry((text("job"), text("wait"))).or_default() += 1;
                *per_job_event.entry((text("job"), text("id"))).or_default() += 1;
            } else if d["outcome"] == "started" {
                *per_fire.entry(text("id")).or_default() += 1;
            }
        }
        if let Some((k, n)) = per_wait.iter().find(|(_, n)| **n > 1) {
            return Err(fail(
                "two-events-one-wait",
                format!("{k:?} matched {n} times"),
            ));
        }
        if let Some((k, n)) = per_job_event.iter().find(|(_, n)| **n > 1) {
            return Err(fail("one-event-two-waits", format!("{k:?}: {n} waits")));
        }
        if let Some((k, n)) = per_fire.iter().find(|(_, n)| **n > 1) {
            return Err(fail("fired-twice", format!("event {k} started {n} fires")));
        }
        // The hourly limit holds in every hour.
        let mut started: Vec<i64> = store
            .fires()
            .await
            .expect("fires")
            .iter()
            .filter(|f| f.state == FireState::Started)
            .map(|f| f.at.0)
            .collect();
        started.sort_unstable();
        for (i, &t) in started.iter().enumerate() {
            let within = started[i..]
                .iter()
                .take_while(|&&u| u < t + HOUR_MS)
                .count();
            if within > MAX_FIRES {
                return Err(fail(
                    "fire-limit-broken",
                    format!("{within} fires started within the hour from {t}"),
                ));
            }
        }
        // A wait changes state once.
        for job in 0..JOBS {
            for w in store.waits_of_job(&format!("j{job}")).await.expect("waits") {
                if w.state == WaitState::Open {
                    if self.closed.contains_key(&w.seq) {
                        return Err(fail("wait-reopened", format!("#{}", w.seq)));
                    }
                    continue;
                }
                let now_seen = (w.state, w.event.clone().map(|e| e.1));
                let first = self.closed.entry(w.seq).or_insert_with(|| now_seen.clone());
                if *first != now_seen {
                    return Err(fail(
                        "wait-changed-twice",
                        format!("#{}: {first:?} then {now_seen:?}", w.seq),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The invariants of quiet edges: no wait open beside a retained event it matches and its
    /// job has not got, every event routed, and every retry answered.
    async fn check_quiet(&mut self, at: usize) -> Result<(), Violation> {
        self.check(at).await?;
        let fail = |kind, detail: String| Violation { kind, detail, at };
        let checker = self.checker.clone();
        let store = &*checker;
        let now = self.clock.now_ts();
        for wait in store.open_waits().await.expect("open waits") {
            let events = store
                .retained_events(
                    &wait.spec.source,
                    wait.after_seq,
                    Timestamp(now.0 - DAY_MS),
                    &wait.job,
                )
                .await
                .expect("events");
            let matching = events.iter().find(|e| {
                // The one filter of `wait_args` (`n % 2 == 1`), evaluated here by hand.
                let odd = e.event.attributes["n"].as_u64().unwrap_or(0) % 2 == 1;
                e.received_at < wait.deadline
                    && wait.spec.admits(&e.event)
                    && (wait.spec.filter.is_none() || odd)
            });
            if let Some(e) = matching {
                return Err(fail(
                    "wait-open-beside-event",
                    format!(
                        "{}/{} (#{}) is open beside e{} (#{}), which its job has not got",
                        wait.job,
                        wait.name,
                        wait.seq,
                        e.event.id.trim_start_matches('e'),
                        e.seq
                    ),
                ));
            }
        }
        let unrouted = store
            .unrouted(Timestamp(i64::MAX), 10)
            .await
            .expect("unrouted");
        if let Some(e) = unrouted.first() {
            return Err(fail(
                "event-left-unrouted",
                format!("{} (#{}) is not routed", e.event.id, e.seq),
            ));
        }
        if let Some((job, wait)) = self.clients.refused_retries.first() {
            return Err(fail(
                "retry-refused",
                format!("the retry of j{job}/w{wait} was answered wait-exists"),
            ));
        }
        Ok(())
    }
}

trait NowTs {
    fn now_ts(&self) -> Timestamp;
}

impl NowTs for ManualClock {
    fn now_ts(&self) -> Timestamp {
        ozcheck_runtime::clock::Clock::now(self)
    }
}

/// Runs `ops` on `edges` edges of a fresh store at `place`; the first violation, if any.
pub async fn run<P: Place>(place: &P, edges: usize, ops: &[Op]) -> Result<(), Violation>
where
    Faulty<P::Store>: Store,
{
    let clock = ManualClock::new(Timestamp(1_767_225_600_000));
    let mut sim = Sim {
        place,
        clock,
        edges: (0..edges).map(|_| None).collect(),
        shared: edges > 1 || !place.local_when_alone(),
        checker: Arc::new(place.open().await),
        outage: Outage::new(),
        waiting: BTreeSet::new(),
        clients: Clients::default(),
        closed: HashMap::new(),
    };
    for i in 0..edges {
        sim.edges[i] = Some(sim.start_edge(i).await);
    }
    for job in 0..2 {
        sim.start_job(0, job).await;
    }
    for (i, op) in ops.iter().enumerate() {
        sim.run(*op).await;
        sim.check(i).await?;
    }
    sim.quiesce().await;
    sim.check_quiet(ops.len()).await
}

/// What a failing seed comes to.
#[derive(Debug)]
pub struct Failure {
    pub seed: u64,
    pub edges: usize,
    pub violation: Violation,
    /// The shortest trace found that breaks the same invariant.
    pub trace: Vec<Op>,
    pub original_len: usize,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "seed {} ({} edges): {} (trace shrunk from {} to {} steps)",
            self.seed,
            self.edges,
            self.violation,
            self.original_len,
            self.trace.len()
        )?;
        writeln!(f, "  start: edge 0 starts jobs j0 and j1")?;
        for (i, op) in self.trace.iter().enumerate() {
            writeln!(f, "  {i:>3}. {op}")?;
        }
        write!(
            f,
            "  then: the database is up, every crashed edge restarts, clients send again what \
             got no answer, the clock ticks 2 x 11 s on every edge"
        )
    }
}

/// Runs seed `seed`; on a violation, shrinks its trace (drops steps while the same invariant
/// still breaks) and returns the shortest.
pub async fn check_seed<P: Place>(
    place_for: &impl Fn() -> P,
    seed: u64,
    max_edges: usize,
) -> Result<(), Failure>
where
    Faulty<P::Store>: Store,
{
    let (edges, ops) = generate(seed, max_edges);
    let Err(violation) = run(&place_for(), edges, &ops).await else {
        return Ok(());
    };
    let (trace, violation) = shrink(place_for, edges, ops.clone(), violation).await;
    Err(Failure {
        seed,
        edges,
        violation,
        trace,
        original_len: ops.len(),
    })
}

async fn shrink<P: Place>(
    place_for: &impl Fn() -> P,
    edges: usize,
    mut trace: Vec<Op>,
    mut violation: Violation,
) -> (Vec<Op>, Violation)
where
    Faulty<P::Store>: Store,
{
    let kind = violation.kind;
    // Steps after the one that broke the invariant play no part (the check when quiet breaks
    // after all of them).
    trace.truncate((violation.at + 1).min(trace.len()));
    let mut chunk = trace.len().div_ceil(2).max(1);
    loop {
        let mut progress = false;
        let mut start = 0;
        while start < trace.len() {
            let mut shorter = trace.clone();
            shorter.drain(start..(start + chunk).min(trace.len()));
            match run(&place_for(), edges, &shorter).await {
                Err(v) if v.kind == kind => {
                    trace = shorter;
                    violation = v;
                    progress = true;
                }
                _ => start += chunk,
            }
        }
        if chunk == 1 && !progress {
            return (trace, violation);
        }
        if !progress {
            chunk = chunk.div_ceil(2);
        }
    }
}
