//! The store's semantics, written once for every backend: each [`Store`] step is one
//! transaction of row calls ([`super::rows`]), in an order that makes the step atomic and
//! race-free on any backend that keeps the row contract.
//!
//! - A claim adds the `(job, event)` ledger row first and then moves the wait `open → matched`;
//!   if either condition fails the transaction is undone, so a wait changes state once and a job
//!   never gets one event twice, whoever races.
//! - A fire takes the routine's fire lock, then checks the job id and the hourly count, so two
//!   routers can neither both start one job nor both see the last fire left in the hour.
//! - Look-back reads a source's retained events by arrival sequence and leaves out those the
//!   job's ledger holds.

use std::collections::HashSet;

use super::rows::{Backend, Closing, ReadRows, Rows};
use super::{Claim, FireLimit, FireOutcome, Store, StoreResult};
use crate::clock::Timestamp;
use crate::model::{
    AuditRecord, Event, Fire, FireState, Job, Output, StoredEvent, Wait, WaitState,
};

/// The reason a fire over its hourly limit is refused with.
const OVER_LIMIT: &str = "max_fires_per_hour";

/// Runs `step` in a transaction and commits it.
macro_rules! in_tx {
    ($backend:expr, |$tx:ident| $body:expr) => {{
        let mut $tx = $backend.begin().await?;
        let out = $body;
        $tx.commit().await?;
        Ok(out)
    }};
}

impl<B: Backend> Store for B {
    async fn insert_job(&self, job: &Job) -> StoreResult<bool> {
        in_tx!(self, |tx| tx.insert_job(job).await?)
    }

    async fn job(&self, id: &str) -> StoreResult<Option<Job>> {
        self.read().await?.job(id).await
    }

    async fn mark_outside_started(&self, id: &str) -> StoreResult<()> {
        in_tx!(self, |tx| tx.set_outside_started(id).await?)
    }

    async fn insert_wait(&self, wait: &Wait) -> StoreResult<Option<i64>> {
        in_tx!(self, |tx| tx.insert_wait(wait).await?)
    }

    async fn wait(&self, name: &str) -> StoreResult<Option<Wait>> {
        self.read().await?.wait(name).await
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

    async fn claim(
        &self,
        wait_seq: i64,
        job: &str,
        event: (&str, &str),
        now: Timestamp,
    ) -> StoreResult<Claim> {
        let mut tx = self.begin().await?;
        if !tx.insert_ledger(job, event, wait_seq).await? {
            tx.rollback().await?;
            return Ok(Claim::JobHadEvent);
        }
        let closing = Closing {
            state: WaitState::Matched,
            event: Some(event),
            reason: None,
            at: now,
        };
        if !tx.close_wait(wait_seq, closing).await? {
            tx.rollback().await?;
            return Ok(Claim::NotOpen);
        }
        tx.commit().await?;
        Ok(Claim::Claimed)
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
            reason,
            at: now,
        };
        in_tx!(self, |tx| tx.close_wait(wait_seq, closing).await?)
    }

    async fn record_fire(&self, fire: &Fire, limit: Option<FireLimit>) -> StoreResult<FireOutcome> {
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
        tx.commit().await?;
        Ok(match fire.state {
            FireState::Started => FireOutcome::Started,
            FireState::Refused => FireOutcome::Refused(fire.reason.unwrap_or_default()),
        })
    }

    async fn fires(&self) -> StoreResult<Vec<Fire>> {
        self.read().await?.fires().await
    }

    async fn append_audit(&self, record: &AuditRecord) -> StoreResult<()> {
        in_tx!(self, |tx| tx.append_audit(record).await?)
    }

    async fn audit(&self) -> StoreResult<Vec<AuditRecord>> {
        self.read().await?.audit().await
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

    async fn end_job(&self, job: &str, now: Timestamp) -> StoreResult<bool> {
        let mut tx = self.begin().await?;
        if !tx.set_job_ended(job, now).await? {
            tx.rollback().await?;
            return Ok(false);
        }
        tx.apply_outputs(job, now).await?;
        tx.commit().await?;
        Ok(true)
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
