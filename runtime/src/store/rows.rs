//! The contract a backend implements: it stores and reads rows, each call inside a transaction
//! that is isolated from every other and either commits whole or leaves nothing. It decides
//! nothing: which writes make a claim, a fire or a purge, and in which order, is written once in
//! [`super::semantics`] on top of these calls.
//!
//! A write that other writers may race on is conditional and says whether it happened
//! (`close_wait` only moves an open wait, `insert_ledger` only adds a missing row, `insert_fire`
//! only a new job id), so the caller learns inside its transaction that it lost. A backend makes
//! those conditions hold across every writer it admits: one lock (memory), one write
//! transaction at a time (`SQLite`), row locks under READ COMMITTED (`PostgreSQL`).

use std::future::Future;
use std::sync::Arc;

use super::StoreResult;
use crate::clock::Timestamp;
use crate::model::{
    AuditRecord, Event, Fire, Job, Output, StepRecord, StoredEvent, Wait, WaitState,
};

/// A backend: it hands out transactions and read views.
pub trait Backend: Send + Sync + 'static {
    /// A write transaction: nothing it wrote is seen by others until [`Rows::commit`], and it is
    /// undone if dropped first.
    type Tx<'a>: Rows + Send
    where
        Self: 'a;
    /// A view for reads that need no transaction (each read sees what was committed when it ran).
    type Read<'a>: ReadRows + Send
    where
        Self: 'a;

    /// How many deliveries an edge hands this backend at once ([`crate::store::Store::group_size`]).
    const GROUP: usize = 1;

    /// Begins a write transaction.
    fn begin(&self) -> impl Future<Output = StoreResult<Self::Tx<'_>>> + Send;
    /// Opens a read view.
    fn read(&self) -> impl Future<Output = StoreResult<Self::Read<'_>>> + Send;

    /// Adds events with their records ([`Rows::insert_events_recorded`]) as a transaction of
    /// their own, committed when this returns. A backend whose statement for it is one
    /// statement may run it alone (`PostgreSQL`: the server commits it, one round trip instead
    /// of three).
    fn insert_events_committed(
        &self,
        events: &[&Arc<Event>],
        records: &[&AuditRecord],
        received_at: Timestamp,
    ) -> impl Future<Output = StoreResult<Vec<Option<i64>>>> + Send {
        async move {
            let mut tx = self.begin().await?;
            let seqs = tx
                .insert_events_recorded(events, records, received_at)
                .await?;
            tx.commit().await?;
            Ok(seqs)
        }
    }
}

/// What a routing transaction reads before it decides ([`Rows::lock_for_routing`]): the
/// `(seq, state)` of each candidate wait that exists, and for each ledger key whether it is
/// held.
pub type RoutingReads = (Vec<(i64, WaitState)>, Vec<bool>);

/// How a wait leaves `open`.
#[derive(Clone, Copy, Debug)]
pub struct Closing<'a> {
    /// The new state (never `open`).
    pub state: WaitState,
    /// The event it got, `(source, id)`, when matched.
    pub event: Option<(&'a str, &'a str)>,
    /// The event itself, which the wait keeps, when matched.
    pub matched: Option<&'a Arc<Event>>,
    /// Why, when refused.
    pub reason: Option<&'a str>,
    /// When.
    pub at: Timestamp,
}

/// What a routing transaction writes once it has decided every outcome
/// (`semantics::route_in`).
#[derive(Clone, Copy, Debug)]
pub struct Claims<'a> {
    /// The ledger rows `(job, event, wait_seq)`, distinct and ascending.
    pub ledgers: &'a [(&'a str, (&'a str, &'a str), i64)],
    /// The waits that got an event.
    pub closings: &'a [(i64, Closing<'a>)],
    /// Their audit records, in order.
    pub records: &'a [&'a AuditRecord],
    /// The jobs they reached (ascending, distinct): marked outside-started.
    pub reached: &'a [&'a str],
    /// The events to mark routed (ascending, distinct identities).
    pub routed: &'a [Routed<'a>],
}

/// An event to mark routed: its identity `(source, id)`, and its sequence number when the
/// router has it (a backend may then find the event's mark without its identity).
pub type Routed<'a> = ((&'a str, &'a str), Option<i64>);

/// Reads of rows.
pub trait ReadRows: Send {
    /// A job by id.
    fn job(&mut self, id: &str) -> impl Future<Output = StoreResult<Option<Job>>> + Send;
    /// A job's wait by name.
    fn wait(
        &mut self,
        job: &str,
        name: &str,
    ) -> impl Future<Output = StoreResult<Option<Wait>>> + Send;
    /// Every job's waits of this name, by registration sequence.
    fn waits_named(&mut self, name: &str) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// A wait by registration sequence.
    fn wait_by_seq(&mut self, seq: i64) -> impl Future<Output = StoreResult<Option<Wait>>> + Send;
    /// A job's waits by registration sequence.
    fn waits_of_job(&mut self, job: &str) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// Every open wait by registration sequence.
    fn open_waits(&mut self) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// The open waits of `source` on `subject` or on no subject, by registration sequence.
    fn open_waits_on(
        &mut self,
        source: &str,
        subject: &str,
    ) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// For each `(source, subject, type)` of `keys`, in their order, the open waits
    /// [`ReadRows::open_waits_on`] gives for the source and subject whose `types` are unset or
    /// name the type. A backend with round trips reads them at once.
    fn open_waits_on_many(
        &mut self,
        keys: &[(&str, &str, &str)],
    ) -> impl Future<Output = StoreResult<Vec<Vec<Wait>>>> + Send {
        async move {
            let mut out = Vec::with_capacity(keys.len());
            for (source, subject, kind) in keys {
                let mut waits = self.open_waits_on(source, subject).await?;
                waits.retain(|w| w.spec.takes_type(kind));
                out.push(waits);
            }
            Ok(out)
        }
    }
    /// Up to `limit` open waits with a deadline at or before `now`, by deadline then sequence.
    fn due_waits(
        &mut self,
        now: Timestamp,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// The earliest deadline of an open wait.
    fn next_deadline(&mut self) -> impl Future<Output = StoreResult<Option<Timestamp>>> + Send;
    /// Up to `limit` open waits registered at or before `before` whose look-back has not been
    /// marked done ([`Rows::set_looked_back`]), by registration sequence.
    fn waits_to_look_back(
        &mut self,
        before: Timestamp,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// The highest event sequence ever given (0 when none), even if that event was purged.
    fn last_event_seq(&mut self) -> impl Future<Output = StoreResult<i64>> + Send;
    /// Events of `source` with a sequence above `after_seq`, received at or after `since`, by
    /// sequence.
    fn events_after(
        &mut self,
        source: &str,
        after_seq: i64,
        since: Timestamp,
    ) -> impl Future<Output = StoreResult<Vec<StoredEvent>>> + Send;
    /// The state of wait `seq`; `None` if there is no such wait.
    fn wait_state(
        &mut self,
        seq: i64,
    ) -> impl Future<Output = StoreResult<Option<WaitState>>> + Send;
    /// Whether `job`'s ledger holds `event`.
    fn in_ledger(
        &mut self,
        job: &str,
        event: (&str, &str),
    ) -> impl Future<Output = StoreResult<bool>> + Send;
    /// The `(source, id)` of every event in `job`'s ledger.
    fn ledger_of_job(
        &mut self,
        job: &str,
    ) -> impl Future<Output = StoreResult<Vec<(String, String)>>> + Send;
    /// A retained event by identity.
    fn event(
        &mut self,
        source: &str,
        id: &str,
    ) -> impl Future<Output = StoreResult<Option<StoredEvent>>> + Send;
    /// Whether a retained event is marked routed; `None` if it is not retained.
    fn is_routed(
        &mut self,
        source: &str,
        id: &str,
    ) -> impl Future<Output = StoreResult<Option<bool>>> + Send;
    /// Up to `limit` unrouted events received before `before`, by sequence.
    fn unrouted(
        &mut self,
        before: Timestamp,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<StoredEvent>>> + Send;
    /// Whether a fire with this job id exists.
    fn fire_exists(&mut self, job: &str) -> impl Future<Output = StoreResult<bool>> + Send;
    /// How many fires of `kind`/`name` started at or after `since`.
    fn started_fires(
        &mut self,
        kind: &str,
        name: &str,
        since: Timestamp,
    ) -> impl Future<Output = StoreResult<u64>> + Send;
    /// Every fire, oldest first.
    fn fires(&mut self) -> impl Future<Output = StoreResult<Vec<Fire>>> + Send;
    /// The fire of a job.
    fn fire(&mut self, job: &str) -> impl Future<Output = StoreResult<Option<Fire>>> + Send;
    /// A flow job's step records, in the order they were reached.
    fn steps_of_job(
        &mut self,
        job: &str,
    ) -> impl Future<Output = StoreResult<Vec<StepRecord>>> + Send;
    /// Every audit record, oldest first.
    fn audit(&mut self) -> impl Future<Output = StoreResult<Vec<AuditRecord>>> + Send;
    /// Up to `limit` audit records numbered above `after`, with their numbers.
    fn audit_page(
        &mut self,
        after: i64,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<(i64, AuditRecord)>>> + Send;
    /// The refusal count of `source`/`kind` in `minute` (0 when none).
    fn refusals(
        &mut self,
        source: &str,
        kind: &str,
        minute: i64,
    ) -> impl Future<Output = StoreResult<u64>> + Send;
    /// A job's output calls, oldest first.
    fn outputs(&mut self, job: &str) -> impl Future<Output = StoreResult<Vec<Output>>> + Send;
    /// Whether a switch is on.
    fn flag(&mut self, key: &str) -> impl Future<Output = StoreResult<bool>> + Send;
}

/// Writes of rows, inside a transaction (which also reads, seeing its own writes).
pub trait Rows: ReadRows {
    /// Adds a job; `false` if the id exists.
    fn insert_job(&mut self, job: &Job) -> impl Future<Output = StoreResult<bool>> + Send;
    /// Marks a job as reached by outside text.
    fn set_outside_started(&mut self, id: &str) -> impl Future<Output = StoreResult<()>> + Send;
    /// Ends a running job; `false` if it ended already or does not exist.
    fn set_job_ended(
        &mut self,
        id: &str,
        at: Timestamp,
    ) -> impl Future<Output = StoreResult<bool>> + Send;
    /// Adds an open wait and returns its new sequence; `None` if its job has a wait of that
    /// name.
    fn insert_wait(&mut self, wait: &Wait)
    -> impl Future<Output = StoreResult<Option<i64>>> + Send;
    /// Moves wait `seq` out of `open`; `false` if it was not open.
    fn close_wait(
        &mut self,
        seq: i64,
        closing: Closing<'_>,
    ) -> impl Future<Output = StoreResult<bool>> + Send;
    /// Marks wait `seq`'s look-back done: a restart need not run it again. A wait is added
    /// unmarked ([`Rows::insert_wait`]); closing it needs no mark (a closed wait looks back at
    /// nothing).
    fn set_looked_back(&mut self, seq: i64) -> impl Future<Output = StoreResult<()>> + Send;
    /// Adds an event, not yet routed, and returns its new sequence; `None` if `(source, id)` is
    /// known.
    fn insert_event(
        &mut self,
        event: &Event,
        received_at: Timestamp,
    ) -> impl Future<Output = StoreResult<Option<i64>>> + Send;
    /// Deletes the events received before `before`; returns how many.
    fn delete_events_before(
        &mut self,
        before: Timestamp,
    ) -> impl Future<Output = StoreResult<u64>> + Send;
    /// Remembers the delivery `(source, identity)` as the event `event_id` first arriving at
    /// `at`: `None` when it was not remembered, else the remembered event id and arrival
    /// (read after the insert found it, so a concurrent first delivery's row is seen once it
    /// commits).
    fn insert_delivery(
        &mut self,
        source: &str,
        identity: &str,
        event_id: &str,
        at: Timestamp,
    ) -> impl Future<Output = StoreResult<Option<(String, Timestamp)>>> + Send;
    /// Forgets the deliveries first arriving before `before`; returns how many.
    fn delete_deliveries_before(
        &mut self,
        before: Timestamp,
    ) -> impl Future<Output = StoreResult<u64>> + Send;
    /// Adds `(job, event)` to the ledger, naming the wait that got it; `false` if present.
    fn insert_ledger(
        &mut self,
        job: &str,
        event: (&str, &str),
        wait_seq: i64,
    ) -> impl Future<Output = StoreResult<bool>> + Send;
    /// Marks a retained event as routed.
    fn set_routed(
        &mut self,
        source: &str,
        id: &str,
    ) -> impl Future<Output = StoreResult<()>> + Send;
    /// Gives lease `name` to `holder` until `until` if it is free, expired at `now`, or held by
    /// `holder` already; `false` otherwise.
    fn take_lease(
        &mut self,
        name: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> impl Future<Output = StoreResult<bool>> + Send;
    /// Holds every other transaction that takes the same `kind`/`name` until this one ends, so
    /// a count of fires read after it stays true until the commit.
    fn lock_fires(
        &mut self,
        kind: &str,
        name: &str,
    ) -> impl Future<Output = StoreResult<()>> + Send;
    /// Adds a fire (with the event it keeps); `false` if its job id exists.
    fn insert_fire(&mut self, fire: &Fire) -> impl Future<Output = StoreResult<bool>> + Send;
    /// Adds a step record; `false` if the step has one.
    fn insert_step(&mut self, step: &StepRecord) -> impl Future<Output = StoreResult<bool>> + Send;
    /// Moves a pending step to decided with `output`; `false` if it was not pending.
    fn decide_step(
        &mut self,
        job: &str,
        step: &str,
        output: &serde_json::Value,
        at: Timestamp,
    ) -> impl Future<Output = StoreResult<bool>> + Send;
    /// Appends an audit record.
    fn append_audit(
        &mut self,
        record: &AuditRecord,
    ) -> impl Future<Output = StoreResult<()>> + Send;
    /// Adds one to the refusal count of `source`/`kind` in `minute` and returns the new count.
    fn bump_refusal(
        &mut self,
        source: &str,
        kind: &str,
        minute: i64,
    ) -> impl Future<Output = StoreResult<u64>> + Send;
    /// Appends an output call.
    fn insert_output(&mut self, output: &Output) -> impl Future<Output = StoreResult<()>> + Send;
    /// Marks a job's unapplied outputs as applied at `at`.
    fn apply_outputs(
        &mut self,
        job: &str,
        at: Timestamp,
    ) -> impl Future<Output = StoreResult<()>> + Send;
    /// Turns a switch on or off.
    fn set_flag(&mut self, key: &str, on: bool) -> impl Future<Output = StoreResult<()>> + Send;

    // Calls on many rows at once. Each does what a loop of its one-row call would, which is
    // what it does unless the backend has a set-wise statement for it (`PostgreSQL`, where a
    // round trip costs more than a row).

    /// A job by id, its row held until the transaction ends where writers run at once
    /// (`PostgreSQL`: shared, so that ending the job waits for this transaction); elsewhere a
    /// transaction excludes every other writer already.
    fn lock_job(&mut self, id: &str) -> impl Future<Output = StoreResult<Option<Job>>> + Send {
        self.job(id)
    }
    /// The states of the waits `seqs` (ascending, distinct), as `(seq, state)` for each that
    /// exists. Where writers run at once (`PostgreSQL`), the rows stay locked until the
    /// transaction ends, so the states read stay true until then; elsewhere a transaction
    /// excludes every other writer already.
    fn lock_waits(
        &mut self,
        seqs: &[i64],
    ) -> impl Future<Output = StoreResult<Vec<(i64, WaitState)>>> + Send {
        async move {
            let mut out = Vec::with_capacity(seqs.len());
            for &seq in seqs {
                if let Some(state) = self.wait_state(seq).await? {
                    out.push((seq, state));
                }
            }
            Ok(out)
        }
    }
    /// Holds the rows of jobs `ids` (ascending, distinct) until the transaction ends, where
    /// writers run at once (`PostgreSQL`), so that the ledger rows read for them stay true:
    /// every router of a job's event holds the job first. Elsewhere a transaction excludes
    /// every other writer already, and this does nothing.
    fn lock_jobs(&mut self, ids: &[&str]) -> impl Future<Output = StoreResult<()>> + Send {
        let _ = ids;
        async { Ok(()) }
    }
    /// For each `(job, event)` of `keys`, whether the job's ledger holds the event.
    fn ledger_holds(
        &mut self,
        keys: &[(&str, (&str, &str))],
    ) -> impl Future<Output = StoreResult<Vec<bool>>> + Send {
        async move {
            let mut out = Vec::with_capacity(keys.len());
            for (job, event) in keys {
                out.push(self.in_ledger(job, *event).await?);
            }
            Ok(out)
        }
    }
    /// What a routing transaction reads before it decides, in this order: the states of the
    /// waits `seqs` ([`Rows::lock_waits`]), the jobs `jobs` held ([`Rows::lock_jobs`]), and
    /// for each `(job, event)` of `keys` whether the job's ledger holds the event
    /// ([`Rows::ledger_holds`]). A backend may take the two kinds of locks at once
    /// (`PostgreSQL`: one statement) as long as it takes them in this order; the ledger must be
    /// read once they are held, by a read that sees what was committed before they were
    /// granted (a ledger row it misses makes [`Rows::write_claims`] lose the race, and the
    /// caller run the transaction again).
    fn lock_for_routing(
        &mut self,
        seqs: &[i64],
        jobs: &[&str],
        keys: &[(&str, (&str, &str))],
    ) -> impl Future<Output = StoreResult<RoutingReads>> + Send {
        async move {
            let states = self.lock_waits(seqs).await?;
            self.lock_jobs(jobs).await?;
            let held = self.ledger_holds(keys).await?;
            Ok((states, held))
        }
    }
    /// Adds ledger rows `(job, event, wait_seq)` (distinct); returns how many were missing and
    /// were added.
    fn insert_ledgers(
        &mut self,
        rows: &[(&str, (&str, &str), i64)],
    ) -> impl Future<Output = StoreResult<u64>> + Send {
        async move {
            let mut added = 0;
            for (job, event, wait_seq) in rows {
                added += u64::from(self.insert_ledger(job, *event, *wait_seq).await?);
            }
            Ok(added)
        }
    }
    /// Moves each wait of `closings` (distinct) out of `open`; returns how many were open.
    fn close_waits(
        &mut self,
        closings: &[(i64, Closing<'_>)],
    ) -> impl Future<Output = StoreResult<u64>> + Send {
        async move {
            let mut closed = 0;
            for (seq, closing) in closings {
                closed += u64::from(self.close_wait(*seq, *closing).await?);
            }
            Ok(closed)
        }
    }
    /// Appends audit records, in order.
    fn append_audits(
        &mut self,
        records: &[&AuditRecord],
    ) -> impl Future<Output = StoreResult<()>> + Send {
        async move {
            for record in records {
                self.append_audit(record).await?;
            }
            Ok(())
        }
    }
    /// Marks jobs (ascending, distinct) as reached by outside text.
    fn set_outside_started_all(
        &mut self,
        ids: &[&str],
    ) -> impl Future<Output = StoreResult<()>> + Send {
        async move {
            for id in ids {
                self.set_outside_started(id).await?;
            }
            Ok(())
        }
    }
    /// Marks retained events `(source, id)` (distinct) as routed.
    fn set_routed_all(
        &mut self,
        keys: &[(&str, &str)],
    ) -> impl Future<Output = StoreResult<()>> + Send {
        async move {
            for (source, id) in keys {
                self.set_routed(source, id).await?;
            }
            Ok(())
        }
    }
    /// Writes what a routing transaction decided, in this order: the ledger rows; then, if
    /// every one of them was missing and was added, the waits closed, the audit records, the
    /// jobs marked outside-started and the events marked routed. Returns `false` when a ledger
    /// row was there already (another transaction committed it since it was read); the caller
    /// then rolls back, so a backend may have written the rest too. The waits are locked by the
    /// caller: one of them not open breaks the row contract and is an error.
    fn write_claims(
        &mut self,
        claims: Claims<'_>,
    ) -> impl Future<Output = StoreResult<bool>> + Send {
        async move {
            // Only what there is to write is written (a crash point names the call it crashes
            // in).
            if !claims.ledgers.is_empty()
                && self.insert_ledgers(claims.ledgers).await? != claims.ledgers.len() as u64
            {
                return Ok(false);
            }
            if !claims.closings.is_empty() {
                if self.close_waits(claims.closings).await? != claims.closings.len() as u64 {
                    return Err(super::StoreError("a locked open wait was not open".into()));
                }
                self.append_audits(claims.records).await?;
                self.set_outside_started_all(claims.reached).await?;
            }
            if !claims.routed.is_empty() {
                let keys: Vec<(&str, &str)> = claims.routed.iter().map(|r| r.0).collect();
                self.set_routed_all(&keys).await?;
            }
            Ok(true)
        }
    }
    /// Adds events (distinct identities) as [`Rows::insert_events`] does and, for each one
    /// added, appends its record of `records` (one per event), in the events' order.
    fn insert_events_recorded(
        &mut self,
        events: &[&Arc<Event>],
        records: &[&AuditRecord],
        received_at: Timestamp,
    ) -> impl Future<Output = StoreResult<Vec<Option<i64>>>> + Send {
        async move {
            let seqs = self.insert_events(events, received_at).await?;
            let added: Vec<&AuditRecord> = records
                .iter()
                .zip(&seqs)
                .filter(|(_, seq)| seq.is_some())
                .map(|(r, _)| *r)
                .collect();
            if !added.is_empty() {
                self.append_audits(&added).await?;
            }
            Ok(seqs)
        }
    }
    /// Adds events (distinct identities) as [`Rows::insert_shared`] does, each with its new
    /// sequence or `None` if it was known.
    fn insert_events(
        &mut self,
        events: &[&Arc<Event>],
        received_at: Timestamp,
    ) -> impl Future<Output = StoreResult<Vec<Option<i64>>>> + Send {
        async move {
            let mut out = Vec::with_capacity(events.len());
            for event in events {
                out.push(self.insert_shared(event, received_at).await?);
            }
            Ok(out)
        }
    }
    /// [`Rows::insert_event`] for an event the caller holds shared: a backend that keeps
    /// events as values (memory) keeps this one instead of a copy.
    fn insert_shared(
        &mut self,
        event: &Arc<Event>,
        received_at: Timestamp,
    ) -> impl Future<Output = StoreResult<Option<i64>>> + Send {
        self.insert_event(event, received_at)
    }

    /// Makes every write of the transaction durable and visible.
    fn commit(self) -> impl Future<Output = StoreResult<()>> + Send;
    /// Undoes every write of the transaction.
    fn rollback(self) -> impl Future<Output = StoreResult<()>> + Send;
}
