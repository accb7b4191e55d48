//! The in-memory backend, for unit tests and benchmarks: the rows live in maps under one lock,
//! a transaction holds the lock from begin to end and keeps an undo log, so a transaction dropped
//! or rolled back leaves nothing. Nothing survives the process.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use tokio::sync::{Mutex, MutexGuard};

use self::borrowed::Pair;
use super::StoreResult;
use super::rows::{Backend, Closing, ReadRows, Rows};
use crate::clock::Timestamp;
use crate::model::{
    AuditRecord, Event, Fire, FireState, Job, Output, StepRecord, StepState, StoredEvent, Wait,
    WaitState,
};

/// A store that lives in memory. Clone the `Arc` around it to share it between routers.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

type LedgerKey = (String, String, String);

/// The ledger, by job: which events (source, id) each job has taken. Indexed by job because a
/// registration's look-back reads one job's ledger, which a flat set could only find by a scan
/// of every job's entries (quadratic in the waits of a run).
type Ledger = HashMap<String, HashSet<(String, String)>>;

#[derive(Debug, Default)]
struct Inner {
    jobs: HashMap<String, Job>,
    ended: HashSet<String>,
    waits: BTreeMap<i64, Wait>,
    wait_names: HashMap<(String, String), i64>,
    next_wait: i64,
    /// The waits whose look-back is not marked done.
    to_look_back: BTreeSet<i64>,
    events: BTreeMap<i64, StoredEvent>,
    event_keys: HashMap<(String, String), i64>,
    next_event: i64,
    unrouted: BTreeSet<i64>,
    ledger: Ledger,
    leases: HashMap<String, (String, Timestamp)>,
    deliveries: HashMap<(String, String), (String, Timestamp)>,
    fires: Vec<Fire>,
    fire_jobs: HashSet<String>,
    audit: Vec<AuditRecord>,
    refusals: HashMap<(String, String, i64), u64>,
    flags: HashSet<String>,
    outputs: Vec<Output>,
    steps: Vec<StepRecord>,
}

/// How to take back one write.
#[derive(Debug)]
enum Undo {
    Job(String),
    OutsideStarted(String),
    Ended(String),
    Wait(i64),
    /// A wait closed: its seq and what the close replaced (an open wait's state and fields,
    /// taken out of the row, not a copy of the whole wait).
    WaitState(i64, Box<Reopen>),
    LookedBack(i64),
    Event(i64),
    Events(Vec<(StoredEvent, bool)>),
    Routed(i64),
    Ledger(LedgerKey),
    Lease(String, Option<(String, Timestamp)>),
    Delivery((String, String)),
    Deliveries(Vec<((String, String), (String, Timestamp))>),
    Fire,
    Audit,
    Refusal((String, String, i64)),
    Output,
    Applied(Vec<usize>),
    Flag(String, bool),
    Step,
    StepDecided(usize, StepRecord),
}

/// The fields a close of an open wait replaces, to put back if the transaction is undone.
#[derive(Debug)]
struct Reopen {
    state: WaitState,
    event: Option<(String, String)>,
    matched: Option<Arc<Event>>,
    reason: Option<String>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

/// A transaction (and a read view) on the memory store: the lock, and what to undo.
pub struct MemoryTx<'a> {
    rows: MutexGuard<'a, Inner>,
    undo: Vec<Undo>,
}

impl Backend for MemoryStore {
    type Tx<'a> = MemoryTx<'a>;
    type Read<'a> = MemoryTx<'a>;

    async fn begin(&self) -> StoreResult<MemoryTx<'_>> {
        Ok(MemoryTx {
            rows: self.inner.lock().await,
            undo: Vec::new(),
        })
    }

    async fn read(&self) -> StoreResult<MemoryTx<'_>> {
        self.begin().await
    }
}

impl Drop for MemoryTx<'_> {
    fn drop(&mut self) {
        while let Some(undo) = self.undo.pop() {
            self.rows.undo(undo);
        }
    }
}

impl Inner {
    fn undo(&mut self, undo: Undo) {
        match undo {
            Undo::Job(id) => {
                self.jobs.remove(&id);
            }
            Undo::OutsideStarted(id) => {
                if let Some(job) = self.jobs.get_mut(&id) {
                    job.outside_started = false;
                }
            }
            Undo::Ended(id) => {
                self.ended.remove(&id);
                if let Some(job) = self.jobs.get_mut(&id) {
                    job.ended_at = None;
                }
            }
            Undo::Wait(seq) => {
                self.to_look_back.remove(&seq);
                if let Some(wait) = self.waits.remove(&seq) {
                    self.wait_names.remove(&(wait.job, wait.name));
                }
            }
            Undo::WaitState(seq, before) => {
                if let Some(wait) = self.waits.get_mut(&seq) {
                    let Reopen {
                        state,
                        event,
                        matched,
                        reason,
                    } = *before;
                    wait.state = state;
                    wait.event = event;
                    wait.matched = matched;
                    wait.reason = reason;
                }
            }
            Undo::LookedBack(seq) => {
                self.to_look_back.insert(seq);
            }
            Undo::Event(seq) => {
                self.unrouted.remove(&seq);
                if let Some(e) = self.events.remove(&seq) {
                    self.event_keys
                        .remove(&(e.event.source.as_str(), e.event.id.as_str()) as &dyn Pair);
                }
            }
            Undo::Events(events) => {
                for (e, unrouted) in events {
                    if unrouted {
                        self.unrouted.insert(e.seq);
                    }
                    self.event_keys
                        .insert((e.event.source.clone(), e.event.id.clone()), e.seq);
                    self.events.insert(e.seq, e);
                }
            }
            Undo::Routed(seq) => {
                self.unrouted.insert(seq);
            }
            Undo::Ledger((job, source, id)) => {
                if let Some(taken) = self.ledger.get_mut(&job) {
                    taken.remove(&(source.as_str(), id.as_str()) as &dyn Pair);
                    if taken.is_empty() {
                        self.ledger.remove(&job);
                    }
                }
            }
            Undo::Delivery(key) => {
                self.deliveries.remove(&key);
            }
            Undo::Deliveries(forgotten) => self.deliveries.extend(forgotten),
            Undo::Lease(name, before) => match before {
                Some(lease) => {
                    self.leases.insert(name, lease);
                }
                None => {
                    self.leases.remove(&name);
                }
            },
            Undo::Fire => {
                if let Some(fire) = self.fires.pop() {
                    self.fire_jobs.remove(&fire.job);
                }
            }
            Undo::Audit => {
                self.audit.pop();
            }
            Undo::Refusal(key) => {
                if let Some(count) = self.refusals.get_mut(&key) {
                    *count -= 1;
                }
            }
            Undo::Output => {
                self.outputs.pop();
            }
            Undo::Applied(indices) => {
                for i in indices {
                    self.outputs[i].applied_at = None;
                }
            }
            Undo::Flag(key, was) => {
                if was {
                    self.flags.insert(key);
                } else {
                    self.flags.remove(&key);
                }
            }
            Undo::Step => {
                self.steps.pop();
            }
            Undo::StepDecided(i, before) => {
                self.steps[i] = before;
            }
        }
    }
}

impl ReadRows for MemoryTx<'_> {
    async fn job(&mut self, id: &str) -> StoreResult<Option<Job>> {
        Ok(self.rows.jobs.get(id).cloned())
    }

    async fn wait(&mut self, job: &str, name: &str) -> StoreResult<Option<Wait>> {
        let s = &self.rows;
        let key = (job.to_owned(), name.to_owned());
        Ok(s.wait_names.get(&key).and_then(|q| s.waits.get(q)).cloned())
    }

    async fn waits_named(&mut self, name: &str) -> StoreResult<Vec<Wait>> {
        Ok(self
            .rows
            .waits
            .values()
            .filter(|w| w.name == name)
            .cloned()
            .collect())
    }

    async fn wait_by_seq(&mut self, seq: i64) -> StoreResult<Option<Wait>> {
        Ok(self.rows.waits.get(&seq).cloned())
    }

    async fn waits_of_job(&mut self, job: &str) -> StoreResult<Vec<Wait>> {
        Ok(self
            .rows
            .waits
            .values()
            .filter(|w| w.job == job)
            .cloned()
            .collect())
    }

    async fn open_waits(&mut self) -> StoreResult<Vec<Wait>> {
        Ok(self
            .rows
            .waits
            .values()
            .filter(|w| w.state == WaitState::Open)
            .cloned()
            .collect())
    }

    async fn open_waits_on(&mut self, source: &str, subject: &str) -> StoreResult<Vec<Wait>> {
        Ok(self
            .rows
            .waits
            .values()
            .filter(|w| w.state == WaitState::Open && w.spec.source == source)
            .filter(|w| w.spec.subject.as_deref().is_none_or(|s| s == subject))
            .cloned()
            .collect())
    }

    async fn due_waits(&mut self, now: Timestamp, limit: u32) -> StoreResult<Vec<Wait>> {
        let mut due: Vec<Wait> = self
            .rows
            .waits
            .values()
            .filter(|w| w.state == WaitState::Open && w.deadline <= now)
            .cloned()
            .collect();
        due.sort_by_key(|w| (w.deadline, w.seq));
        due.truncate(limit as usize);
        Ok(due)
    }

    async fn next_deadline(&mut self) -> StoreResult<Option<Timestamp>> {
        Ok(self
            .rows
            .waits
            .values()
            .filter(|w| w.state == WaitState::Open)
            .map(|w| w.deadline)
            .min())
    }

    async fn waits_to_look_back(
        &mut self,
        before: Timestamp,
        limit: u32,
    ) -> StoreResult<Vec<Wait>> {
        let rows = &*self.rows;
        Ok(rows
            .to_look_back
            .iter()
            .filter_map(|seq| rows.waits.get(seq))
            .filter(|w| w.state == WaitState::Open && w.created_at <= before)
            .take(limit as usize)
            .cloned()
            .collect())
    }

    async fn last_event_seq(&mut self) -> StoreResult<i64> {
        Ok(self.rows.next_event)
    }

    async fn events_after(
        &mut self,
        source: &str,
        after_seq: i64,
        since: Timestamp,
    ) -> StoreResult<Vec<StoredEvent>> {
        Ok(self
            .rows
            .events
            .range(after_seq + 1..)
            .map(|(_, e)| e)
            .filter(|e| e.event.source == source && e.received_at >= since)
            .cloned()
            .collect())
    }

    async fn wait_state(&mut self, seq: i64) -> StoreResult<Option<WaitState>> {
        Ok(self.rows.waits.get(&seq).map(|w| w.state))
    }

    async fn in_ledger(&mut self, job: &str, event: (&str, &str)) -> StoreResult<bool> {
        Ok(self
            .rows
            .ledger
            .get(job)
            .is_some_and(|taken| taken.contains(&(event.0, event.1) as &dyn Pair)))
    }

    async fn ledger_of_job(&mut self, job: &str) -> StoreResult<Vec<(String, String)>> {
        Ok(self
            .rows
            .ledger
            .get(job)
            .map(|taken| taken.iter().cloned().collect())
            .unwrap_or_default())
    }

    async fn event(&mut self, source: &str, id: &str) -> StoreResult<Option<StoredEvent>> {
        let s = &self.rows;
        Ok(s.event_keys
            .get(&(source, id) as &dyn Pair)
            .and_then(|q| s.events.get(q))
            .cloned())
    }

    async fn is_routed(&mut self, source: &str, id: &str) -> StoreResult<Option<bool>> {
        Ok(self
            .rows
            .event_keys
            .get(&(source, id) as &dyn Pair)
            .map(|seq| !self.rows.unrouted.contains(seq)))
    }

    async fn unrouted(&mut self, before: Timestamp, limit: u32) -> StoreResult<Vec<StoredEvent>> {
        let s = &self.rows;
        Ok(s.unrouted
            .iter()
            .filter_map(|seq| s.events.get(seq))
            .filter(|e| e.received_at < before)
            .take(limit as usize)
            .cloned()
            .collect())
    }

    async fn fire_exists(&mut self, job: &str) -> StoreResult<bool> {
        Ok(self.rows.fire_jobs.contains(job))
    }

    async fn started_fires(
        &mut self,
        kind: &str,
        name: &str,
        since: Timestamp,
    ) -> StoreResult<u64> {
        Ok(self
            .rows
            .fires
            .iter()
            .filter(|f| f.kind == kind && f.name == name)
            .filter(|f| f.state == FireState::Started && f.at >= since)
            .count() as u64)
    }

    async fn fires(&mut self) -> StoreResult<Vec<Fire>> {
        Ok(self.rows.fires.clone())
    }

    async fn fire(&mut self, job: &str) -> StoreResult<Option<Fire>> {
        Ok(self.rows.fires.iter().find(|f| f.job == job).cloned())
    }

    async fn steps_of_job(&mut self, job: &str) -> StoreResult<Vec<StepRecord>> {
        Ok(self
            .rows
            .steps
            .iter()
            .filter(|s| s.job == job)
            .cloned()
            .collect())
    }

    async fn audit(&mut self) -> StoreResult<Vec<AuditRecord>> {
        Ok(self.rows.audit.clone())
    }

    async fn audit_page(&mut self, after: i64, limit: u32) -> StoreResult<Vec<(i64, AuditRecord)>> {
        // Records are numbered from 1 in the order they were appended.
        let skip = usize::try_from(after.max(0)).unwrap_or(usize::MAX);
        Ok(self
            .rows
            .audit
            .iter()
            .enumerate()
            .skip(skip)
            .take(limit as usize)
            .map(|(i, r)| (i as i64 + 1, r.clone()))
            .collect())
    }

    async fn refusals(&mut self, source: &str, kind: &str, minute: i64) -> StoreResult<u64> {
        let key = (source.to_owned(), kind.to_owned(), minute);
        Ok(self.rows.refusals.get(&key).copied().unwrap_or(0))
    }

    async fn outputs(&mut self, job: &str) -> StoreResult<Vec<Output>> {
        Ok(self
            .rows
            .outputs
            .iter()
            .filter(|o| o.job == job)
            .cloned()
            .collect())
    }

    async fn flag(&mut self, key: &str) -> StoreResult<bool> {
        Ok(self.rows.flags.contains(key))
    }
}

impl Rows for MemoryTx<'_> {
    async fn insert_job(&mut self, job: &Job) -> StoreResult<bool> {
        if self.rows.jobs.contains_key(&job.id) {
            return Ok(false);
        }
        self.rows.jobs.insert(job.id.clone(), job.clone());
        self.undo.push(Undo::Job(job.id.clone()));
        Ok(true)
    }

    async fn set_outside_started(&mut self, id: &str) -> StoreResult<()> {
        if let Some(job) = self.rows.jobs.get_mut(id) {
            if !job.outside_started {
                job.outside_started = true;
                self.undo.push(Undo::OutsideStarted(id.to_owned()));
            }
        }
        Ok(())
    }

    async fn set_job_ended(&mut self, id: &str, at: Timestamp) -> StoreResult<bool> {
        if !self.rows.jobs.contains_key(id) || !self.rows.ended.insert(id.to_owned()) {
            return Ok(false);
        }
        if let Some(job) = self.rows.jobs.get_mut(id) {
            job.ended_at = Some(at);
        }
        self.undo.push(Undo::Ended(id.to_owned()));
        Ok(true)
    }

    async fn insert_wait(&mut self, wait: &Wait) -> StoreResult<Option<i64>> {
        let s = &mut *self.rows;
        let key = (wait.job.clone(), wait.name.clone());
        if s.wait_names.contains_key(&key) {
            return Ok(None);
        }
        s.next_wait += 1;
        let seq = s.next_wait;
        let mut stored = wait.clone();
        stored.seq = seq;
        s.wait_names.insert(key, seq);
        s.waits.insert(seq, stored);
        s.to_look_back.insert(seq);
        self.undo.push(Undo::Wait(seq));
        Ok(Some(seq))
    }

    async fn set_looked_back(&mut self, seq: i64) -> StoreResult<()> {
        if self.rows.to_look_back.remove(&seq) {
            self.undo.push(Undo::LookedBack(seq));
        }
        Ok(())
    }

    async fn close_wait(&mut self, seq: i64, closing: Closing<'_>) -> StoreResult<bool> {
        let Some(wait) = self.rows.waits.get_mut(&seq) else {
            return Ok(false);
        };
        if wait.state != WaitState::Open {
            return Ok(false);
        }
        let before = Box::new(Reopen {
            state: std::mem::replace(&mut wait.state, closing.state),
            event: std::mem::replace(
                &mut wait.event,
                closing.event.map(|(s, i)| (s.to_owned(), i.to_owned())),
            ),
            matched: std::mem::replace(&mut wait.matched, closing.matched.cloned()),
            reason: std::mem::replace(&mut wait.reason, closing.reason.map(str::to_owned)),
        });
        self.undo.push(Undo::WaitState(seq, before));
        // A closed wait looks back at nothing (the relational stores mark it in the close).
        if self.rows.to_look_back.remove(&seq) {
            self.undo.push(Undo::LookedBack(seq));
        }
        Ok(true)
    }

    async fn insert_event(
        &mut self,
        event: &Event,
        received_at: Timestamp,
    ) -> StoreResult<Option<i64>> {
        self.insert_shared(&Arc::new(event.clone()), received_at)
            .await
    }

    async fn insert_shared(
        &mut self,
        event: &Arc<Event>,
        received_at: Timestamp,
    ) -> StoreResult<Option<i64>> {
        let s = &mut *self.rows;
        if s.event_keys
            .contains_key(&(event.source.as_str(), event.id.as_str()) as &dyn Pair)
        {
            return Ok(None);
        }
        s.next_event += 1;
        let seq = s.next_event;
        s.event_keys
            .insert((event.source.clone(), event.id.clone()), seq);
        let stored = StoredEvent {
            seq,
            received_at,
            event: Arc::clone(event),
        };
        s.events.insert(seq, stored);
        s.unrouted.insert(seq);
        self.undo.push(Undo::Event(seq));
        Ok(Some(seq))
    }

    async fn delete_events_before(&mut self, before: Timestamp) -> StoreResult<u64> {
        let s = &mut *self.rows;
        let old: Vec<i64> = s
            .events
            .values()
            .filter(|e| e.received_at < before)
            .map(|e| e.seq)
            .collect();
        let mut removed = Vec::with_capacity(old.len());
        for seq in &old {
            if let Some(e) = s.events.remove(seq) {
                s.event_keys
                    .remove(&(e.event.source.as_str(), e.event.id.as_str()) as &dyn Pair);
                removed.push((e, s.unrouted.remove(seq)));
            }
        }
        let n = removed.len() as u64;
        self.undo.push(Undo::Events(removed));
        Ok(n)
    }

    async fn insert_ledger(
        &mut self,
        job: &str,
        event: (&str, &str),
        wait_seq: i64,
    ) -> StoreResult<bool> {
        let _ = wait_seq;
        let taken = self.rows.ledger.entry(job.to_owned()).or_default();
        if taken.contains(&(event.0, event.1) as &dyn Pair) {
            return Ok(false);
        }
        taken.insert((event.0.to_owned(), event.1.to_owned()));
        let key = (job.to_owned(), event.0.to_owned(), event.1.to_owned());
        self.undo.push(Undo::Ledger(key));
        Ok(true)
    }

    async fn set_routed(&mut self, source: &str, id: &str) -> StoreResult<()> {
        if let Some(&seq) = self.rows.event_keys.get(&(source, id) as &dyn Pair) {
            if self.rows.unrouted.remove(&seq) {
                self.undo.push(Undo::Routed(seq));
            }
        }
        Ok(())
    }

    async fn insert_delivery(
        &mut self,
        source: &str,
        identity: &str,
        event_id: &str,
        at: Timestamp,
    ) -> StoreResult<Option<(String, Timestamp)>> {
        let key = (source.to_owned(), identity.to_owned());
        if let Some(first) = self.rows.deliveries.get(&key) {
            return Ok(Some(first.clone()));
        }
        self.rows
            .deliveries
            .insert(key.clone(), (event_id.to_owned(), at));
        self.undo.push(Undo::Delivery(key));
        Ok(None)
    }

    async fn delete_deliveries_before(&mut self, before: Timestamp) -> StoreResult<u64> {
        let old: Vec<(String, String)> = self
            .rows
            .deliveries
            .iter()
            .filter(|(_, (_, at))| *at < before)
            .map(|(key, _)| key.clone())
            .collect();
        let forgotten: Vec<_> = old
            .into_iter()
            .filter_map(|key| self.rows.deliveries.remove_entry(&key))
            .collect();
        let n = forgotten.len() as u64;
        self.undo.push(Undo::Deliveries(forgotten));
        Ok(n)
    }

    async fn take_lease(
        &mut self,
        name: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> StoreResult<bool> {
        let before = self.rows.leases.get(name).cloned();
        if let Some((other, expires)) = &before {
            if other != holder && *expires > now {
                return Ok(false);
            }
        }
        self.rows
            .leases
            .insert(name.to_owned(), (holder.to_owned(), until));
        self.undo.push(Undo::Lease(name.to_owned(), before));
        Ok(true)
    }

    async fn lock_fires(&mut self, kind: &str, name: &str) -> StoreResult<()> {
        // The transaction holds the one lock already.
        let _ = (kind, name);
        Ok(())
    }

    async fn insert_fire(&mut self, fire: &Fire) -> StoreResult<bool> {
        if !self.rows.fire_jobs.insert(fire.job.clone()) {
            return Ok(false);
        }
        self.rows.fires.push(fire.clone());
        self.undo.push(Undo::Fire);
        Ok(true)
    }

    async fn insert_step(&mut self, step: &StepRecord) -> StoreResult<bool> {
        let s = &mut *self.rows;
        if s.steps
            .iter()
            .any(|r| r.job == step.job && r.step == step.step)
        {
            return Ok(false);
        }
        s.steps.push(step.clone());
        self.undo.push(Undo::Step);
        Ok(true)
    }

    async fn decide_step(
        &mut self,
        job: &str,
        step: &str,
        output: &serde_json::Value,
        at: Timestamp,
    ) -> StoreResult<bool> {
        let _ = at;
        let s = &mut *self.rows;
        let Some(i) = s
            .steps
            .iter()
            .position(|r| r.job == job && r.step == step && r.state == StepState::Pending)
        else {
            return Ok(false);
        };
        let before = s.steps[i].clone();
        s.steps[i].state = StepState::Decided;
        s.steps[i].output = output.clone();
        self.undo.push(Undo::StepDecided(i, before));
        Ok(true)
    }

    async fn append_audit(&mut self, record: &AuditRecord) -> StoreResult<()> {
        self.rows.audit.push(record.clone());
        self.undo.push(Undo::Audit);
        Ok(())
    }

    async fn bump_refusal(&mut self, source: &str, kind: &str, minute: i64) -> StoreResult<u64> {
        let key = (source.to_owned(), kind.to_owned(), minute);
        let count = self.rows.refusals.entry(key.clone()).or_insert(0);
        *count += 1;
        let count = *count;
        self.undo.push(Undo::Refusal(key));
        Ok(count)
    }

    async fn insert_output(&mut self, output: &Output) -> StoreResult<()> {
        self.rows.outputs.push(output.clone());
        self.undo.push(Undo::Output);
        Ok(())
    }

    async fn apply_outputs(&mut self, job: &str, at: Timestamp) -> StoreResult<()> {
        let mut applied = Vec::new();
        for (i, output) in self.rows.outputs.iter_mut().enumerate() {
            if output.job == job && output.applied_at.is_none() {
                output.applied_at = Some(at);
                applied.push(i);
            }
        }
        self.undo.push(Undo::Applied(applied));
        Ok(())
    }

    async fn set_flag(&mut self, key: &str, on: bool) -> StoreResult<()> {
        let was = if on {
            !self.rows.flags.insert(key.to_owned())
        } else {
            self.rows.flags.remove(key)
        };
        self.undo.push(Undo::Flag(key.to_owned(), was));
        Ok(())
    }

    async fn commit(mut self) -> StoreResult<()> {
        self.undo.clear();
        Ok(())
    }

    async fn rollback(self) -> StoreResult<()> {
        // Dropping undoes.
        Ok(())
    }
}

mod borrowed {
    //! Lookups of the memory store's `(source, id)` keys by borrowed strings: a probe of a
    //! job's ledger or of an event's identity on the routing path would otherwise copy each
    //! string of the key first, only to drop the copies after one lookup.
    //!
    //! `Hash` of a tuple hashes its fields in order, and `str` hashes as `String` does, so the
    //! borrowed form hashes and compares exactly as the owned key; the map is std's, with its
    //! keyed hasher (the keys are senders' strings).

    use std::borrow::Borrow;
    use std::hash::{Hash, Hasher};

    /// A `(source, id)` key, owned or borrowed.
    pub(super) trait Pair {
        /// The strings of the key, in order.
        fn parts(&self) -> (&str, &str);
    }

    impl Pair for (String, String) {
        fn parts(&self) -> (&str, &str) {
            (&self.0, &self.1)
        }
    }

    impl Pair for (&str, &str) {
        fn parts(&self) -> (&str, &str) {
            (self.0, self.1)
        }
    }

    impl Hash for dyn Pair + '_ {
        fn hash<H: Hasher>(&self, state: &mut H) {
            let (a, b) = self.parts();
            a.hash(state);
            b.hash(state);
        }
    }

    impl PartialEq for dyn Pair + '_ {
        fn eq(&self, other: &Self) -> bool {
            self.parts() == other.parts()
        }
    }

    impl Eq for dyn Pair + '_ {}

    impl<'a> Borrow<dyn Pair + 'a> for (String, String) {
        fn borrow(&self) -> &(dyn Pair + 'a) {
            self
        }
    }

    #[cfg(test)]
    mod tests {
        use std::collections::{HashMap, HashSet};

        use super::Pair;

        #[test]
        fn borrowed_keys_find_what_owned_keys_hold() {
            let mut pairs = HashMap::new();
            pairs.insert(("ci".to_owned(), "e1".to_owned()), 1);
            pairs.insert(("ci".to_owned(), "e12".to_owned()), 2);
            // The field boundary counts: ("ci", "e12") is not ("ci e", "12").
            assert_eq!(pairs.get(&("ci", "e12") as &dyn Pair), Some(&2));
            assert_eq!(pairs.get(&("ci", "e1") as &dyn Pair), Some(&1));
            assert_eq!(pairs.get(&("cie", "12") as &dyn Pair), None);
            assert_eq!(pairs.get(&("ci", "e") as &dyn Pair), None);
            let mut taken = HashSet::new();
            taken.insert(("ci".to_owned(), "e1".to_owned()));
            assert!(taken.contains(&("ci", "e1") as &dyn Pair));
            assert!(!taken.contains(&("ci", "e2") as &dyn Pair));
            assert!(!taken.contains(&("c", "ie1") as &dyn Pair));
        }
    }
}
