//! The store's semantics, written once for every backend: each [`Store`] step is one
//! transaction of row calls ([`super::rows`]), in an order that makes the step atomic and
//! race-free on any backend that keeps the row contract.
//!
//! - A claim adds the `(job, event)` ledger row first and then moves the wait `open → matched`;
//!   if either condition fails its writes are taken back, so a wait changes state once and a job
//!   never gets one event twice, whoever races. Its audit record and the job's outside-started
//!   mark commit with it. Routing an event claims all its candidates in one transaction and
//!   marks the event routed in it: an event is either routed whole or left for a re-route.
//! - Receiving an event retains it unrouted with its `event.received` record in one
//!   transaction; a redelivery of an event whose router died tells the caller to route it.
//! - A fire takes the routine's fire lock, then checks the job id and the hourly count, so two
//!   routers can neither both start one job nor both see the last fire left in the hour.
//! - Look-back reads a source's retained events by arrival sequence and leaves out those the
//!   job's ledger holds.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use super::rows::{Backend, Claims, Closing, ReadRows, Routed, Rows};
use super::{
    Candidate, Claim, FireLimit, FireOutcome, Received, Store, StoreError, StoreResult, ToRoute,
    WaitInsert,
};
use crate::clock::Timestamp;
use crate::model::{
    AuditRecord, Event, Fire, FireState, Job, Output, StepRecord, StoredEvent, Wait, WaitState,
};

/// The reason a fire over its hourly limit is refused with.
const OVER_LIMIT: &str = "max_fires_per_hour";

/// The reason the waits of an ended job are refused with.
pub const JOB_ENDED: &str = "the job ended";

/// Runs `step` in a transaction and commits it.
macro_rules! in_tx {
    ($backend:expr, |$tx:ident| $body:expr) => {{
        let mut $tx = $backend.begin().await?;
        let out = $body;
        $tx.commit().await?;
        Ok(out)
    }};
}

/// How often a routing transaction that lost a race on a ledger row is run again.
const ROUTE_ROUNDS: usize = 4;

impl<B: Backend> Store for B {
    fn group_size(&self) -> usize {
        B::GROUP
    }

    async fn insert_job(&self, job: &Job) -> StoreResult<bool> {
        in_tx!(self, |tx| tx.insert_job(job).await?)
    }

    async fn job(&self, id: &str) -> StoreResult<Option<Job>> {
        self.read().await?.job(id).await
    }

    async fn mark_outside_started(&self, id: &str) -> StoreResult<()> {
        in_tx!(self, |tx| tx.set_outside_started(id).await?)
    }

    async fn insert_wait(&self, wait: &Wait) -> StoreResult<WaitInsert> {
        let mut tx = self.begin().await?;
        // The job row is read, and held, in the transaction that adds the wait, and `end_job`
        // refuses the open waits in the transaction that ends the job (after it could change
        // the row), so a wait of an ended job is either refused here or refused there.
        let running = tx
            .lock_job(&wait.job)
            .await?
            .is_some_and(|j| j.ended_at.is_none());
        if !running {
            tx.rollback().await?;
            return Ok(WaitInsert::JobEnded);
        }
        let Some(seq) = tx.insert_wait(wait).await? else {
            tx.rollback().await?;
            return Ok(WaitInsert::NameTaken);
        };
        tx.commit().await?;
        Ok(WaitInsert::Inserted(seq))
    }

    async fn open_waits_on(&self, source: &str, subject: &str) -> StoreResult<Vec<Wait>> {
        self.read().await?.open_waits_on(source, subject).await
    }

    async fn open_waits_on_many(
        &self,
        keys: &[(String, String, String)],
    ) -> StoreResult<Vec<Vec<Wait>>> {
        let keys: Vec<(&str, &str, &str)> = keys
            .iter()
            .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
            .collect();
        self.read().await?.open_waits_on_many(&keys).await
    }

    async fn due_waits(&self, now: Timestamp, limit: u32) -> StoreResult<Vec<Wait>> {
        self.read().await?.due_waits(now, limit).await
    }

    async fn next_deadline(&self) -> StoreResult<Option<Timestamp>> {
        self.read().await?.next_deadline().await
    }

    async fn waits_to_look_back(&self, before: Timestamp, limit: u32) -> StoreResult<Vec<Wait>> {
        self.read().await?.waits_to_look_back(before, limit).await
    }

    async fn mark_looked_back(&self, wait_seq: i64) -> StoreResult<()> {
        in_tx!(self, |tx| tx.set_looked_back(wait_seq).await?)
    }

    async fn take_lease(
        &self,
        name: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> StoreResult<bool> {
        in_tx!(self, |tx| tx.take_lease(name, holder, now, until).await?)
    }

    async fn wait(&self, job: &str, name: &str) -> StoreResult<Option<Wait>> {
        self.read().await?.wait(job, name).await
    }

    async fn waits_named(&self, name: &str) -> StoreResult<Vec<Wait>> {
        self.read().await?.waits_named(name).await
    }

    async fn wait_by_seq(&self, seq: i64) -> StoreResult<Option<Wait>> {
        self.read().await?.wait_by_seq(seq).await
    }

    async fn waits_of_job(&self, job: &str) -> StoreResult<Vec<Wait>> {
        self.read().await?.waits_of_job(job).await
    }

    async fn open_waits(&self) -> StoreResult<Vec<Wait>> {
        self.read().await?.open_waits().await
    }

    async fn insert_event(
        &self,
        event: &Event,
        received_at: Timestamp,
    ) -> StoreResult<Option<i64>> {
        in_tx!(self, |tx| tx.insert_event(event, received_at).await?)
    }

    async fn receive(
        &self,
        event: &Event,
        received_at: Timestamp,
        audit: &AuditRecord,
    ) -> StoreResult<Received> {
        let mut received = self
            .receive_many(
                std::slice::from_ref(event),
                std::slice::from_ref(audit),
                received_at,
            )
            .await?;
        received
            .pop()
            .ok_or_else(|| StoreError("receiving gave no answer".into()))
    }

    async fn receive_many(
        &self,
        events: &[Event],
        audits: &[AuditRecord],
        received_at: Timestamp,
    ) -> StoreResult<Vec<Received>> {
        let shared: Vec<Arc<Event>> = events.iter().cloned().map(Arc::new).collect();
        self.receive_shared(&shared, audits, received_at).await
    }

    async fn receive_shared(
        &self,
        events: &[Arc<Event>],
        audits: &[AuditRecord],
        received_at: Timestamp,
    ) -> StoreResult<Vec<Received>> {
        let mut answers: Vec<Option<Received>> = vec![None; events.len()];
        // A known event can be purged between the insert that found it and the read; the next
        // insert then succeeds, so two rounds always decide.
        for _ in 0..2 {
            let open: Vec<usize> = (0..events.len())
                .filter(|&i| answers[i].is_none())
                .collect();
            if open.is_empty() {
                break;
            }
            let batch: Vec<&Arc<Event>> = open.iter().map(|&i| &events[i]).collect();
            let records: Vec<&AuditRecord> = open.iter().map(|&i| &audits[i]).collect();
            let seqs = self
                .insert_events_committed(&batch, &records, received_at)
                .await?;
            // What the known ones are now: read after the commit, as a transaction under READ
            // COMMITTED would have read them (each statement sees what was committed when it
            // began).
            let mut read = None;
            for (&i, seq) in open.iter().zip(seqs) {
                let event = &events[i];
                answers[i] = if let Some(seq) = seq {
                    Some(Received::New(StoredEvent {
                        seq,
                        received_at,
                        event: Arc::clone(event),
                    }))
                } else {
                    let view = match &mut read {
                        Some(view) => view,
                        None => read.insert(self.read().await?),
                    };
                    let stored = view.event(&event.source, &event.id).await?;
                    let routed = view.is_routed(&event.source, &event.id).await?;
                    stored
                        .zip(routed)
                        .map(|(stored, routed)| Received::Known { stored, routed })
                };
            }
        }
        answers
            .into_iter()
            .zip(events)
            .map(|(answer, event)| {
                answer.ok_or_else(|| {
                    StoreError(format!(
                        "event {}/{} is neither new nor retained",
                        event.source, event.id
                    ))
                })
            })
            .collect()
    }

    async fn mark_routed(&self, source: &str, id: &str) -> StoreResult<()> {
        in_tx!(self, |tx| tx.set_routed(source, id).await?)
    }

    async fn unrouted(&self, before: Timestamp, limit: u32) -> StoreResult<Vec<StoredEvent>> {
        self.read().await?.unrouted(before, limit).await
    }

    async fn last_seq(&self) -> StoreResult<i64> {
        self.read().await?.last_event_seq().await
    }

    async fn retained_events(
        &self,
        source: &str,
        after_seq: i64,
        received_since: Timestamp,
        job: &str,
    ) -> StoreResult<Vec<StoredEvent>> {
        let mut read = self.read().await?;
        let had: HashSet<(String, String)> = read.ledger_of_job(job).await?.into_iter().collect();
        let events = read.events_after(source, after_seq, received_since).await?;
        Ok(events
            .into_iter()
            .filter(|e| !had.contains(&(e.event.source.clone(), e.event.id.clone())))
            .collect())
    }

    async fn event(&self, source: &str, id: &str) -> StoreResult<Option<StoredEvent>> {
        self.read().await?.event(source, id).await
    }

    async fn purge_events(&self, before: Timestamp) -> StoreResult<u64> {
        in_tx!(self, |tx| tx.delete_events_before(before).await?)
    }

    async fn remember_delivery(
        &self,
        source: &str,
        identity: &str,
        event_id: &str,
        at: Timestamp,
    ) -> StoreResult<Option<(String, Timestamp)>> {
        in_tx!(self, |tx| tx
            .insert_delivery(source, identity, event_id, at)
            .await?)
    }

    async fn forget_deliveries(&self, before: Timestamp) -> StoreResult<u64> {
        in_tx!(self, |tx| tx.delete_deliveries_before(before).await?)
    }

    async fn claim(
        &self,
        candidate: &Candidate,
        event: &Event,
        now: Timestamp,
    ) -> StoreResult<Claim> {
        let one = ToRoute {
            event: Arc::new(event.clone()),
            candidates: vec![candidate.clone()],
            mark_routed: false,
            seq: None,
        };
        let outcomes = self.route_many(std::slice::from_ref(&one), now).await?;
        Ok(outcomes
            .first()
            .and_then(|o| o.first())
            .copied()
            .unwrap_or(Claim::NotOpen))
    }

    async fn route(
        &self,
        event: &Event,
        candidates: &[Candidate],
        now: Timestamp,
        mark_routed: bool,
    ) -> StoreResult<Vec<Claim>> {
        let one = ToRoute {
            event: Arc::new(event.clone()),
            candidates: candidates.to_vec(),
            mark_routed,
            seq: None,
        };
        let mut outcomes = self.route_many(std::slice::from_ref(&one), now).await?;
        Ok(outcomes.pop().unwrap_or_default())
    }

    async fn route_many(&self, batch: &[ToRoute], now: Timestamp) -> StoreResult<Vec<Vec<Claim>>> {
        for _ in 0..ROUTE_ROUNDS {
            let mut tx = self.begin().await?;
            match route_in(&mut tx, batch, now).await? {
                Some(outcomes) => {
                    tx.commit().await?;
                    return Ok(outcomes);
                }
                // Another transaction added a ledger row this one had read as missing, and
                // committed: the next round reads it.
                None => tx.rollback().await?,
            }
        }
        Err(StoreError(format!(
            "routing lost {ROUTE_ROUNDS} races in a row; the sender's retry routes it"
        )))
    }

    async fn close(
        &self,
        wait_seq: i64,
        state: WaitState,
        reason: Option<&str>,
        now: Timestamp,
    ) -> StoreResult<bool> {
        let closing = Closing {
            state,
            event: None,
            matched: None,
            reason,
            at: now,
        };
        in_tx!(self, |tx| tx.close_wait(wait_seq, closing).await?)
    }

    async fn record_fire(
        &self,
        fire: &Fire,
        limit: Option<FireLimit>,
        job: &Job,
        audit: &AuditRecord,
    ) -> StoreResult<FireOutcome> {
        let mut tx = self.begin().await?;
        tx.lock_fires(&fire.kind, &fire.name).await?;
        if tx.fire_exists(&fire.job).await? {
            tx.rollback().await?;
            return Ok(FireOutcome::Duplicate);
        }
        let mut fire = fire.clone();
        if let (Some(limit), FireState::Started) = (limit, fire.state) {
            let started = tx
                .started_fires(&fire.kind, &fire.name, limit.window_start)
                .await?;
            if started >= u64::from(limit.max) {
                fire.state = FireState::Refused;
                fire.reason = Some(OVER_LIMIT.to_owned());
            }
        }
        if !tx.insert_fire(&fire).await? {
            tx.rollback().await?;
            return Ok(FireOutcome::Duplicate);
        }
        let mut audit = audit.clone();
        match fire.state {
            FireState::Started => {
                // The job starts with its fire, outside-started from its first step (E11): a
                // crash cannot leave a fire without its job.
                tx.insert_job(job).await?;
                tx.set_outside_started(&job.id).await?;
                audit.data["outcome"] = "started".into();
            }
            FireState::Refused => {
                audit.data["outcome"] = "refused".into();
                audit.data["reason"] = fire.reason.clone().unwrap_or_default().into();
            }
        }
        tx.append_audit(&audit).await?;
        tx.commit().await?;
        Ok(match fire.state {
            FireState::Started => FireOutcome::Started,
            FireState::Refused => FireOutcome::Refused(fire.reason.unwrap_or_default()),
        })
    }

    async fn fires(&self) -> StoreResult<Vec<Fire>> {
        self.read().await?.fires().await
    }

    async fn fire(&self, job: &str) -> StoreResult<Option<Fire>> {
        self.read().await?.fire(job).await
    }

    async fn record_step(&self, step: &StepRecord) -> StoreResult<bool> {
        in_tx!(self, |tx| tx.insert_step(step).await?)
    }

    async fn decide_step(
        &self,
        job: &str,
        step: &str,
        output: &serde_json::Value,
        now: Timestamp,
    ) -> StoreResult<bool> {
        in_tx!(self, |tx| tx.decide_step(job, step, output, now).await?)
    }

    async fn steps_of_job(&self, job: &str) -> StoreResult<Vec<StepRecord>> {
        self.read().await?.steps_of_job(job).await
    }

    async fn append_audit(&self, record: &AuditRecord) -> StoreResult<()> {
        in_tx!(self, |tx| tx.append_audit(record).await?)
    }

    async fn audit(&self) -> StoreResult<Vec<AuditRecord>> {
        self.read().await?.audit().await
    }

    async fn audit_page(&self, after: i64, limit: u32) -> StoreResult<Vec<(i64, AuditRecord)>> {
        self.read().await?.audit_page(after, limit).await
    }

    async fn count_refusal(
        &self,
        source: &str,
        kind: &str,
        minute: i64,
    ) -> StoreResult<(u64, u64)> {
        in_tx!(self, |tx| {
            let now = tx.bump_refusal(source, kind, minute).await?;
            let before = tx.refusals(source, kind, minute - 1).await?;
            (now, before)
        })
    }

    async fn record_output(
        &self,
        job: &str,
        name: &str,
        apply_now: bool,
        now: Timestamp,
    ) -> StoreResult<()> {
        let output = Output {
            job: job.to_owned(),
            name: name.to_owned(),
            apply_now,
            called_at: now,
            applied_at: apply_now.then_some(now),
        };
        in_tx!(self, |tx| tx.insert_output(&output).await?)
    }

    async fn end_job(&self, job: &str, now: Timestamp) -> StoreResult<Option<Vec<Wait>>> {
        let mut tx = self.begin().await?;
        // The job's open waits are locked before its row, the order routing takes them in (a
        // claim locks its waits, then marks the job), so the two wait for each other instead
        // of deadlocking.
        let open: Vec<i64> = tx
            .waits_of_job(job)
            .await?
            .iter()
            .filter(|w| w.state == WaitState::Open)
            .map(|w| w.seq)
            .collect();
        tx.lock_waits(&open).await?;
        if !tx.set_job_ended(job, now).await? {
            tx.rollback().await?;
            return Ok(None);
        }
        tx.apply_outputs(job, now).await?;
        let mut refused = Vec::new();
        for wait in tx.waits_of_job(job).await? {
            if wait.state != WaitState::Open {
                continue;
            }
            let closing = Closing {
                state: WaitState::Refused,
                event: None,
                matched: None,
                reason: Some(JOB_ENDED),
                at: now,
            };
            if tx.close_wait(wait.seq, closing).await? {
                refused.push(wait);
            }
        }
        tx.commit().await?;
        Ok(Some(refused))
    }

    async fn outputs(&self, job: &str) -> StoreResult<Vec<Output>> {
        self.read().await?.outputs(job).await
    }

    async fn set_flag(&self, key: &str, on: bool) -> StoreResult<()> {
        in_tx!(self, |tx| tx.set_flag(key, on).await?)
    }

    async fn flag(&self, key: &str) -> StoreResult<bool> {
        self.read().await?.flag(key).await
    }
}

/// Routes `batch` inside `tx`, one event after another, each to its candidates oldest first:
/// a candidate whose job got the event from an earlier candidate, or had it already, is
/// skipped (`JobHadEvent`); one whose wait is no longer open is passed over (`NotOpen`), so a
/// later wait of its job may still get the event; any other is claimed: its wait moves to
/// `matched` keeping the event, the job's ledger gets the event, the candidate's audit record is
/// appended, and the job is marked outside-started.
///
/// The transaction first reads (and, where writers run at once, locks) the candidate waits and
/// the ledger rows it could write, decides every outcome from them, then writes. The waits stay
/// locked, so they cannot close under it; a ledger row of a job whose wait it does not hold
/// (another wait of the job, claimed by look-back or another router at once) can still appear:
/// then an insert finds it and the call returns `None`, and the caller runs it again.
async fn route_in<T: Rows>(
    tx: &mut T,
    batch: &[ToRoute],
    now: Timestamp,
) -> StoreResult<Option<Vec<Vec<Claim>>>> {
    let mut seqs: Vec<i64> = batch
        .iter()
        .flat_map(|r| r.candidates.iter().map(|c| c.wait_seq))
        .collect();
    seqs.sort_unstable();
    seqs.dedup();
    // The candidates' jobs, so that no other router gives one of them an event between the
    // ledger read and this transaction's commit (through a wait not locked here).
    let jobs: BTreeSet<&str> = batch
        .iter()
        .flat_map(|r| r.candidates.iter().map(|c| c.job.as_str()))
        .collect();
    let jobs: Vec<&str> = jobs.into_iter().collect();
    let mut keys: Vec<(&str, (&str, &str))> = Vec::new();
    let mut seen: HashSet<(&str, &str, &str)> = HashSet::new();
    for r in batch {
        let identity = (r.event.source.as_str(), r.event.id.as_str());
        for c in &r.candidates {
            if seen.insert((c.job.as_str(), identity.0, identity.1)) {
                keys.push((c.job.as_str(), identity));
            }
        }
    }
    let (states, held) = tx.lock_for_routing(&seqs, &jobs, &keys).await?;
    let mut open: HashSet<i64> = states
        .into_iter()
        .filter(|&(_, state)| state == WaitState::Open)
        .map(|(seq, _)| seq)
        .collect();
    let mut ledger: HashSet<(&str, &str, &str)> = keys
        .iter()
        .zip(held)
        .filter(|(_, held)| *held)
        .map(|((job, (source, id)), _)| (*job, *source, *id))
        .collect();

    let mut outcomes = Vec::with_capacity(batch.len());
    let mut rows: Vec<(&str, (&str, &str), i64)> = Vec::new();
    let mut closings: Vec<(i64, Closing<'_>)> = Vec::new();
    let mut records: Vec<&AuditRecord> = Vec::new();
    let mut reached: BTreeSet<&str> = BTreeSet::new();
    let mut routed: Vec<Routed<'_>> = Vec::new();
    for r in batch {
        let identity = (r.event.source.as_str(), r.event.id.as_str());
        let mut served: HashSet<&str> = HashSet::new();
        let mut claims = Vec::with_capacity(r.candidates.len());
        for c in &r.candidates {
            let job = c.job.as_str();
            let outcome = if served.contains(job) || ledger.contains(&(job, identity.0, identity.1))
            {
                served.insert(job);
                Claim::JobHadEvent
            } else if !open.remove(&c.wait_seq) {
                Claim::NotOpen
            } else {
                served.insert(job);
                ledger.insert((job, identity.0, identity.1));
                reached.insert(job);
                rows.push((job, identity, c.wait_seq));
                closings.push((
                    c.wait_seq,
                    Closing {
                        state: WaitState::Matched,
                        event: Some(identity),
                        matched: Some(&r.event),
                        reason: None,
                        at: now,
                    },
                ));
                records.push(&c.audit);
                Claim::Claimed
            };
            claims.push(outcome);
        }
        if r.mark_routed {
            routed.push((identity, r.seq));
        }
        outcomes.push(claims);
    }

    // Writes in one order for every transaction (ledger rows, waits, jobs ascending, events),
    // so two routers that reach the same rows wait for each other instead of deadlocking.
    rows.sort_unstable();
    // One mark per identity, with its sequence number if one of them has it.
    routed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    routed.dedup_by_key(|r| r.0);
    let reached: Vec<&str> = reached.into_iter().collect();
    let claims = Claims {
        ledgers: &rows,
        closings: &closings,
        records: &records,
        reached: &reached,
        routed: &routed,
    };
    if claims.ledgers.is_empty() && claims.routed.is_empty() {
        return Ok(Some(outcomes));
    }
    Ok(tx.write_claims(claims).await?.then_some(outcomes))
}
