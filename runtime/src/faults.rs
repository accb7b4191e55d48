//! Fault injection: crashes at chosen points *inside* the store's operations, for the tests and
//! conformance scenarios that prove no crash window loses an event or a fire (E15).
//!
//! [`Faulty`] wraps any store backend and counts every row write of every transaction (and
//! every commit) as one step. Armed with a [`Plan`], it fails the step it names as a crash
//! would: the transaction in flight is never committed (the backend undoes it when it is
//! dropped), and from then on every operation of that store fails, so nothing the dead runtime
//! still tries reaches the data. A new runtime opened on the same database after the crash sees
//! exactly what had been committed before it.
//!
//! Steps are named by the row call (`insert_event`, `insert_ledger`, `close_wait`,
//! `insert_fire`, `set_routed`, `commit`, …); [`Faults::trace`] lists the steps taken so far, so
//! a test can crash before each one in turn.

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::clock::Timestamp;
use crate::model::{
    AuditRecord, Event, Fire, Job, Output, StepRecord, StoredEvent, Wait, WaitState,
};
use crate::store::rows::{Backend, Closing, ReadRows, Rows};
use crate::store::{StoreError, StoreResult};

/// Where to crash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Before the step with this number, counting the steps taken since the plan was armed from
    /// zero.
    AtStep(u64),
    /// At the first step after the steps `after` have been taken in this order (other steps may
    /// come between them); when `at` is given, at the first step of that name from there.
    After {
        /// Step names to see first, in order.
        after: Vec<String>,
        /// The name of the step to crash at, or any step.
        at: Option<String>,
    },
}

#[derive(Debug, Default)]
struct State {
    plan: Option<Plan>,
    /// Steps taken since the plan was armed.
    steps: u64,
    /// How much of an `After` plan's sequence was seen.
    seen: usize,
    /// Where the store crashed, once it did.
    crashed: Option<String>,
    trace: Vec<&'static str>,
}

/// The crash switch of one store, shared by its [`Faulty`] wrapper and whoever arms it.
#[derive(Debug, Default)]
pub struct Faults {
    state: Mutex<State>,
    /// The database's availability, shared by every handle on it.
    outage: Option<Arc<Outage>>,
}

/// A database outage that every handle on one database sees at once (as edges on one
/// `PostgreSQL` server do when it stops): while it lasts, every transaction, read and row
/// write fails with an error (the transaction in flight is dropped uncommitted, as a broken
/// connection's would be), but nothing crashes: once it ends, the same handles work again.
#[derive(Debug, Default)]
pub struct Outage {
    down: std::sync::atomic::AtomicBool,
}

impl Outage {
    /// A database that is up.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The database goes away (`true`) or comes back (`false`).
    pub fn set_down(&self, down: bool) {
        self.down.store(down, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether the database is away.
    pub fn is_down(&self) -> bool {
        self.down.load(std::sync::atomic::Ordering::SeqCst)
    }
}

fn outage_error() -> StoreError {
    StoreError("the database is unavailable".to_owned())
}

impl Faults {
    /// A switch that is not armed.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A switch that is not armed, on a database whose outages `outage` says.
    pub fn with_outage(outage: Arc<Outage>) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::default(),
            outage: Some(outage),
        })
    }

    fn database_down(&self) -> bool {
        self.outage.as_ref().is_some_and(|o| o.is_down())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Arms a crash; the step count starts from zero now.
    pub fn arm(&self, plan: Plan) {
        let mut state = self.lock();
        state.plan = Some(plan);
        state.steps = 0;
        state.seen = 0;
    }

    /// Where the store crashed, if it did.
    pub fn crashed(&self) -> Option<String> {
        self.lock().crashed.clone()
    }

    /// Whether a plan is armed and has not fired yet.
    pub fn armed(&self) -> bool {
        self.lock().plan.is_some()
    }

    /// The plan armed and not fired yet, if any (a restart carries it to the new store).
    pub fn pending(&self) -> Option<Plan> {
        self.lock().plan.clone()
    }

    /// The names of the steps taken so far (since the store opened).
    pub fn trace(&self) -> Vec<&'static str> {
        self.lock().trace.clone()
    }

    /// Fails once the store has crashed, or while the database is away.
    fn alive(&self) -> StoreResult<()> {
        match &self.lock().crashed {
            Some(at) => Err(crash_error(at)),
            None if self.database_down() => Err(outage_error()),
            None => Ok(()),
        }
    }

    /// One step named `name`: it runs, or the store crashes here (or fails, without crashing,
    /// while the database is away; such a step is not counted).
    fn step(&self, name: &'static str) -> StoreResult<()> {
        let mut state = self.lock();
        if let Some(at) = &state.crashed {
            return Err(crash_error(at));
        }
        if self.database_down() {
            return Err(outage_error());
        }
        let number = state.steps;
        state.steps += 1;
        let crash = match &state.plan {
            None => false,
            Some(Plan::AtStep(n)) => number == *n,
            Some(Plan::After { after, at }) => {
                if state.seen < after.len() {
                    if after[state.seen] == name {
                        state.seen += 1;
                    }
                    false
                } else {
                    at.as_ref().is_none_or(|at| at == name)
                }
            }
        };
        if crash {
            let at = format!("step {number} ({name})");
            state.plan = None;
            state.crashed = Some(at.clone());
            return Err(crash_error(&at));
        }
        state.trace.push(name);
        Ok(())
    }
}

fn crash_error(at: &str) -> StoreError {
    StoreError(format!("crashed at {at}"))
}

/// A backend whose steps can crash (see the module doc).
#[derive(Debug)]
pub struct Faulty<B> {
    inner: B,
    faults: Arc<Faults>,
}

impl<B> Faulty<B> {
    /// Wraps `inner`, crashing as `faults` says.
    pub fn new(inner: B, faults: Arc<Faults>) -> Self {
        Self { inner, faults }
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// The crash switch.
    pub fn faults(&self) -> &Arc<Faults> {
        &self.faults
    }
}

/// A transaction of a [`Faulty`] backend.
pub struct FaultyTx<T> {
    inner: T,
    faults: Arc<Faults>,
}

impl<B: Backend> Backend for Faulty<B> {
    const GROUP: usize = B::GROUP;

    type Tx<'a>
        = FaultyTx<B::Tx<'a>>
    where
        Self: 'a;
    type Read<'a>
        = B::Read<'a>
    where
        Self: 'a;

    async fn begin(&self) -> StoreResult<Self::Tx<'_>> {
        self.faults.alive()?;
        Ok(FaultyTx {
            inner: self.inner.begin().await?,
            faults: self.faults.clone(),
        })
    }

    async fn read(&self) -> StoreResult<Self::Read<'_>> {
        self.faults.alive()?;
        self.inner.read().await
    }
}

/// Delegates row calls to the wrapped transaction; a write is a step first.
macro_rules! delegate {
    (read $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        async fn $name(&mut self, $($arg: $ty),*) -> StoreResult<$ret> {
            self.inner.$name($($arg),*).await
        }
    };
    (write $name:ident as $step:literal ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        async fn $name(&mut self, $($arg: $ty),*) -> StoreResult<$ret> {
            self.faults.step($step)?;
            self.inner.$name($($arg),*).await
        }
    };
    (write $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        async fn $name(&mut self, $($arg: $ty),*) -> StoreResult<$ret> {
            self.faults.step(stringify!($name))?;
            self.inner.$name($($arg),*).await
        }
    };
}

impl<T: Rows> ReadRows for FaultyTx<T> {
    delegate!(read job(id: &str) -> Option<Job>);
    delegate!(read wait(job: &str, name: &str) -> Option<Wait>);
    delegate!(read waits_named(name: &str) -> Vec<Wait>);
    delegate!(read wait_by_seq(seq: i64) -> Option<Wait>);
    delegate!(read waits_of_job(job: &str) -> Vec<Wait>);
    delegate!(read open_waits() -> Vec<Wait>);
    delegate!(read open_waits_on(source: &str, subject: &str) -> Vec<Wait>);
    delegate!(read open_waits_on_many(keys: &[(&str, &str, &str)]) -> Vec<Vec<Wait>>);
    delegate!(read due_waits(now: Timestamp, limit: u32) -> Vec<Wait>);
    delegate!(read next_deadline() -> Option<Timestamp>);
    delegate!(read waits_to_look_back(before: Timestamp, limit: u32) -> Vec<Wait>);
    delegate!(read last_event_seq() -> i64);
    delegate!(read events_after(source: &str, after_seq: i64, since: Timestamp) -> Vec<StoredEvent>);
    delegate!(read wait_state(seq: i64) -> Option<WaitState>);
    delegate!(read in_ledger(job: &str, event: (&str, &str)) -> bool);
    delegate!(read ledger_of_job(job: &str) -> Vec<(String, String)>);
    delegate!(read event(source: &str, id: &str) -> Option<StoredEvent>);
    delegate!(read is_routed(source: &str, id: &str) -> Option<bool>);
    delegate!(read unrouted(before: Timestamp, limit: u32) -> Vec<StoredEvent>);
    delegate!(read fire_exists(job: &str) -> bool);
    delegate!(read started_fires(kind: &str, name: &str, since: Timestamp) -> u64);
    delegate!(read fires() -> Vec<Fire>);
    delegate!(read fire(job: &str) -> Option<Fire>);
    delegate!(read steps_of_job(job: &str) -> Vec<StepRecord>);
    delegate!(read audit() -> Vec<AuditRecord>);
    delegate!(read audit_page(after: i64, limit: u32) -> Vec<(i64, AuditRecord)>);
    delegate!(read refusals(source: &str, kind: &str, minute: i64) -> u64);
    delegate!(read outputs(job: &str) -> Vec<Output>);
    delegate!(read flag(key: &str) -> bool);
}

impl<T: Rows> Rows for FaultyTx<T> {
    delegate!(write insert_job(job: &Job) -> bool);
    delegate!(write set_outside_started(id: &str) -> ());
    delegate!(write set_job_ended(id: &str, at: Timestamp) -> bool);
    delegate!(write insert_wait(wait: &Wait) -> Option<i64>);
    delegate!(write close_wait(seq: i64, closing: Closing<'_>) -> bool);
    delegate!(write set_looked_back(seq: i64) -> ());
    delegate!(write insert_event(event: &Event, received_at: Timestamp) -> Option<i64>);
    delegate!(write delete_events_before(before: Timestamp) -> u64);
    delegate!(write insert_delivery(source: &str, identity: &str, event_id: &str, at: Timestamp) -> Option<(String, Timestamp)>);
    delegate!(write delete_deliveries_before(before: Timestamp) -> u64);
    delegate!(write insert_ledger(job: &str, event: (&str, &str), wait_seq: i64) -> bool);
    delegate!(write set_routed(source: &str, id: &str) -> ());
    delegate!(write take_lease(name: &str, holder: &str, now: Timestamp, until: Timestamp) -> bool);
    delegate!(write lock_fires(kind: &str, name: &str) -> ());
    delegate!(write insert_fire(fire: &Fire) -> bool);
    delegate!(write insert_step(step: &StepRecord) -> bool);
    delegate!(write decide_step(job: &str, step: &str, output: &Value, at: Timestamp) -> bool);
    delegate!(write append_audit(record: &AuditRecord) -> ());
    delegate!(write bump_refusal(source: &str, kind: &str, minute: i64) -> u64);
    delegate!(write insert_output(output: &Output) -> ());
    delegate!(write apply_outputs(job: &str, at: Timestamp) -> ());
    delegate!(write set_flag(key: &str, on: bool) -> ());
    // The calls on many rows go to the backend's own (which may lock, as on PostgreSQL), never
    // to the trait's loops over the wrapper's one-row calls; each is one step, named as its
    // one-row call (the crash points name those).
    delegate!(read lock_job(id: &str) -> Option<Job>);
    delegate!(read lock_waits(seqs: &[i64]) -> Vec<(i64, WaitState)>);
    delegate!(read lock_jobs(ids: &[&str]) -> ());
    delegate!(read ledger_holds(keys: &[(&str, (&str, &str))]) -> Vec<bool>);
    delegate!(write insert_ledgers as "insert_ledger" (rows: &[(&str, (&str, &str), i64)]) -> u64);
    delegate!(write close_waits as "close_wait" (closings: &[(i64, Closing<'_>)]) -> u64);
    delegate!(write append_audits as "append_audit" (records: &[&AuditRecord]) -> ());
    delegate!(write set_outside_started_all as "set_outside_started" (ids: &[&str]) -> ());
    delegate!(write set_routed_all as "set_routed" (keys: &[(&str, &str)]) -> ());
    delegate!(write insert_events as "insert_event" (events: &[&Arc<Event>], received_at: Timestamp) -> Vec<Option<i64>>);
    delegate!(write insert_shared as "insert_event" (event: &Arc<Event>, received_at: Timestamp) -> Option<i64>);

    async fn commit(self) -> StoreResult<()> {
        // A crash at the commit drops the transaction uncommitted.
        self.faults.step("commit")?;
        self.inner.commit().await
    }

    async fn rollback(self) -> StoreResult<()> {
        self.inner.rollback().await
    }
}
