//! The in-memory store, for unit tests and benchmarks: the same contract as `SQLite`, every step
//! under one lock, nothing survives the process.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use super::{Claim, FireLimit, FireOutcome, Store, StoreResult};
use crate::clock::Timestamp;
use crate::model::{
    AuditRecord, Event, Fire, FireState, Job, Output, StoredEvent, Wait, WaitState,
};

/// A store that lives in memory. Clone the `Arc` around it to share it between routers.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    jobs: HashMap<String, Job>,
    waits: BTreeMap<i64, Wait>,
    wait_names: HashMap<String, i64>,
    next_wait: i64,
    events: BTreeMap<i64, StoredEvent>,
    event_keys: HashMap<(String, String), i64>,
    next_event: i64,
    ledger: HashSet<(String, String, String)>,
    fires: Vec<Fire>,
    fire_jobs: HashSet<String>,
    audit: Vec<AuditRecord>,
    refusals: HashMap<(String, String, i64), u64>,
    flags: HashSet<String>,
    outputs: Vec<Output>,
    ended: HashSet<String>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave a half-made change here (every step
        // finishes its writes before it can panic), so a poisoned lock is still consistent.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Store for MemoryStore {
    async fn insert_job(&self, job: &Job) -> StoreResult<bool> {
        let mut s = self.lock();
        if s.jobs.contains_key(&job.id) {
            return Ok(false);
        }
        s.jobs.insert(job.id.clone(), job.clone());
        Ok(true)
    }

    async fn job(&self, id: &str) -> StoreResult<Option<Job>> {
        Ok(self.lock().jobs.get(id).cloned())
    }

    async fn mark_outside_started(&self, id: &str) -> StoreResult<()> {
        if let Some(job) = self.lock().jobs.get_mut(id) {
            job.outside_started = true;
        }
        Ok(())
    }

    async fn insert_wait(&self, wait: &Wait) -> StoreResult<Option<i64>> {
        let mut s = self.lock();
        if s.wait_names.contains_key(&wait.name) {
            return Ok(None);
        }
        s.next_wait += 1;
        let seq = s.next_wait;
        let mut stored = wait.clone();
        stored.seq = seq;
        s.wait_names.insert(wait.name.clone(), seq);
        s.waits.insert(seq, stored);
        Ok(Some(seq))
    }

    async fn wait(&self, name: &str) -> StoreResult<Option<Wait>> {
        let s = self.lock();
        Ok(s.wait_names.get(name).and_then(|q| s.waits.get(q)).cloned())
    }

    async fn waits_of_job(&self, job: &str) -> StoreResult<Vec<Wait>> {
        let s = self.lock();
        Ok(s.waits.values().filter(|w| w.job == job).cloned().collect())
    }

    async fn open_waits(&self) -> StoreResult<Vec<Wait>> {
        let s = self.lock();
        Ok(s.waits
            .values()
            .filter(|w| w.state == WaitState::Open)
            .cloned()
            .collect())
    }

    async fn insert_event(
        &self,
        event: &Event,
        received_at: Timestamp,
    ) -> StoreResult<Option<i64>> {
        let mut s = self.lock();
        let key = (event.source.clone(), event.id.clone());
        if s.event_keys.contains_key(&key) {
            return Ok(None);
        }
        s.next_event += 1;
        let seq = s.next_event;
        s.event_keys.insert(key, seq);
        s.events.insert(
            seq,
            StoredEvent {
                seq,
                received_at,
                event: event.clone(),
            },
        );
        Ok(Some(seq))
    }

    async fn last_seq(&self) -> StoreResult<i64> {
        Ok(self.lock().next_event)
    }

    async fn retained_events(
        &self,
        source: &str,
        after_seq: i64,
        received_since: Timestamp,
        job: &str,
    ) -> StoreResult<Vec<StoredEvent>> {
        let s = self.lock();
        Ok(s.events
            .range(after_seq + 1..)
            .map(|(_, e)| e)
            .filter(|e| e.event.source == source && e.received_at >= received_since)
            .filter(|e| {
                !s.ledger
                    .contains(&(job.to_owned(), e.event.source.clone(), e.event.id.clone()))
            })
            .cloned()
            .collect())
    }

    async fn event(&self, source: &str, id: &str) -> StoreResult<Option<StoredEvent>> {
        let s = self.lock();
        let key = (source.to_owned(), id.to_owned());
        Ok(s.event_keys
            .get(&key)
            .and_then(|q| s.events.get(q))
            .cloned())
    }

    async fn purge_events(&self, before: Timestamp) -> StoreResult<u64> {
        let mut s = self.lock();
        let old: Vec<i64> = s
            .events
            .values()
            .filter(|e| e.received_at < before)
            .map(|e| e.seq)
            .collect();
        for seq in &old {
            if let Some(e) = s.events.remove(seq) {
                s.event_keys.remove(&(e.event.source, e.event.id));
            }
        }
        Ok(old.len() as u64)
    }

    async fn claim(
        &self,
        wait_seq: i64,
        job: &str,
        event: (&str, &str),
        now: Timestamp,
    ) -> StoreResult<Claim> {
        let _ = now;
        let mut s = self.lock();
        let key = (job.to_owned(), event.0.to_owned(), event.1.to_owned());
        if s.ledger.contains(&key) {
            return Ok(Claim::JobHadEvent);
        }
        let Some(wait) = s.waits.get_mut(&wait_seq) else {
            return Ok(Claim::NotOpen);
        };
        if wait.state != WaitState::Open {
            return Ok(Claim::NotOpen);
        }
        wait.state = WaitState::Matched;
        wait.event = Some((event.0.to_owned(), event.1.to_owned()));
        s.ledger.insert(key);
        Ok(Claim::Claimed)
    }

    async fn close(
        &self,
        wait_seq: i64,
        state: WaitState,
        reason: Option<&str>,
        now: Timestamp,
    ) -> StoreResult<bool> {
        let _ = now;
        let mut s = self.lock();
        match s.waits.get_mut(&wait_seq) {
            Some(w) if w.state == WaitState::Open => {
                w.state = state;
                w.reason = reason.map(str::to_owned);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn record_fire(&self, fire: &Fire, limit: Option<FireLimit>) -> StoreResult<FireOutcome> {
        let mut s = self.lock();
        if s.fire_jobs.contains(&fire.job) {
            return Ok(FireOutcome::Duplicate);
        }
        let mut fire = fire.clone();
        if let Some(limit) = limit {
            let started = s
                .fires
                .iter()
                .filter(|f| f.kind == fire.kind && f.name == fire.name)
                .filter(|f| f.state == FireState::Started && f.at >= limit.window_start)
                .count();
            if fire.state == FireState::Started && started >= limit.max as usize {
                fire.state = FireState::Refused;
                fire.reason = Some("max_fires_per_hour".to_owned());
            }
        }
        s.fire_jobs.insert(fire.job.clone());
        let outcome = match fire.state {
            FireState::Started => FireOutcome::Started,
            FireState::Refused => FireOutcome::Refused(fire.reason.clone().unwrap_or_default()),
        };
        s.fires.push(fire);
        Ok(outcome)
    }

    async fn fires(&self) -> StoreResult<Vec<Fire>> {
        Ok(self.lock().fires.clone())
    }

    async fn append_audit(&self, record: &AuditRecord) -> StoreResult<()> {
        self.lock().audit.push(record.clone());
        Ok(())
    }

    async fn audit(&self) -> StoreResult<Vec<AuditRecord>> {
        Ok(self.lock().audit.clone())
    }

    async fn count_refusal(
        &self,
        source: &str,
        kind: &str,
        minute: i64,
    ) -> StoreResult<(u64, u64)> {
        let mut s = self.lock();
        let now = s
            .refusals
            .entry((source.to_owned(), kind.to_owned(), minute))
            .or_insert(0);
        *now += 1;
        let now = *now;
        let before = s
            .refusals
            .get(&(source.to_owned(), kind.to_owned(), minute - 1))
            .copied()
            .unwrap_or(0);
        Ok((now, before))
    }

    async fn record_output(
        &self,
        job: &str,
        name: &str,
        apply_now: bool,
        now: Timestamp,
    ) -> StoreResult<()> {
        self.lock().outputs.push(Output {
            job: job.to_owned(),
            name: name.to_owned(),
            apply_now,
            called_at: now,
            applied_at: apply_now.then_some(now),
        });
        Ok(())
    }

    async fn end_job(&self, job: &str, now: Timestamp) -> StoreResult<bool> {
        let mut s = self.lock();
        if !s.jobs.contains_key(job) || !s.ended.insert(job.to_owned()) {
            return Ok(false);
        }
        if let Some(j) = s.jobs.get_mut(job) {
            j.ended_at = Some(now);
        }
        for output in s.outputs.iter_mut().filter(|o| o.job == job) {
            output.applied_at.get_or_insert(now);
        }
        Ok(true)
    }

    async fn outputs(&self, job: &str) -> StoreResult<Vec<Output>> {
        Ok(self
            .lock()
            .outputs
            .iter()
            .filter(|o| o.job == job)
            .cloned()
            .collect())
    }

    async fn set_flag(&self, key: &str, on: bool) -> StoreResult<()> {
        let mut s = self.lock();
        if on {
            s.flags.insert(key.to_owned());
        } else {
            s.flags.remove(key);
        }
        Ok(())
    }

    async fn flag(&self, key: &str) -> StoreResult<bool> {
        Ok(self.lock().flags.contains(key))
    }
}
