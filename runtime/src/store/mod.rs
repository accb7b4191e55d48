//! Durable state behind one small trait: jobs, waits, retained events, the per-job event ledger,
//! trigger fires, audit records and switches.
//!
//! Every race is decided inside the store by one atomic transition per wait
//! ([`Store::claim`], [`Store::close`]): the wait must still be `open`, and for a claim the
//! `(job, event)` ledger row must not exist yet. Whoever changes the row wins; everyone else
//! learns that they lost.
//!
//! The semantics of every step are written once ([`semantics`]) over the row contract of
//! [`rows`]; a backend only stores and reads rows inside transactions: [`MemoryStore`] under one
//! lock with an undo log, [`SqliteStore`] on a writer thread that commits the steps queued for
//! it together (`BEGIN IMMEDIATE`; a savepoint per step only when one must be taken back after
//! it wrote; one edge), [`PostgresStore`] under READ COMMITTED (any number of edges); both
//! relational backends run the one set of SQL statements in `sql.rs`, and `PostgreSQL` its own
//! set-wise statements for the calls on many rows. [`StoreLocation`] is what `--db` names.

mod lite;
mod location;
mod memory;
mod postgres;
pub mod rows;
mod semantics;
mod sql;
mod sqlite;

use std::future::Future;

pub use location::{BadLocation, StoreLocation};
pub use memory::{MemoryStore, MemoryTx};
pub use postgres::{PostgresRead, PostgresStore, PostgresTx};
pub use sqlite::{MAX_BATCH, SqliteStore};

use crate::clock::Timestamp;
use crate::model::{
    AuditRecord, Event, Fire, Job, Output, StepRecord, StoredEvent, Wait, WaitState,
};

/// A store failure (I/O, a corrupt row).
#[derive(Debug, thiserror::Error)]
#[error("store: {0}")]
pub struct StoreError(pub String);

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError(e.to_string())
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        StoreError(e.to_string())
    }
}

/// The result of a store call.
pub type StoreResult<T> = Result<T, StoreError>;

/// How an attempt to give an event to a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The wait got the event.
    Claimed,
    /// Another wait of the same job already got this event (E14): no wait of the job may.
    JobHadEvent,
    /// The wait was no longer open (another router, the timer or a refusal won).
    NotOpen,
}

/// A wait an event may go to, with what its claim records.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The wait's sequence.
    pub wait_seq: i64,
    /// Its job.
    pub job: String,
    /// The `event.match` record written when the claim succeeds.
    pub audit: AuditRecord,
}

/// One event to route in [`Store::route_many`]: its candidates, oldest first, and whether
/// the transaction marks it routed.
#[derive(Clone, Debug, PartialEq)]
pub struct ToRoute {
    /// The event (shared with the edge that routes it).
    pub event: std::sync::Arc<Event>,
    /// The waits it may go to, oldest registration first.
    pub candidates: Vec<Candidate>,
    /// Whether to mark the event routed with its claims.
    pub mark_routed: bool,
    /// The event's sequence number, when the router has it (as retained); `None` leaves the
    /// store to find the event by its identity.
    pub seq: Option<i64>,
}

/// How receiving an event ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Received {
    /// The event is new: retained and audited now.
    New(StoredEvent),
    /// The event was known (a redelivery).
    Known {
        /// The event as retained.
        stored: StoredEvent,
        /// Whether its routing finished.
        routed: bool,
    },
}

/// How registering a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitInsert {
    /// Registered, with this sequence.
    Inserted(i64),
    /// The job has a wait of this name already.
    NameTaken,
    /// The job has ended (or does not exist): it waits for nothing.
    JobEnded,
}

/// How recording a trigger fire ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FireOutcome {
    /// A job with this id was started now.
    Started,
    /// A fire with this job id exists already (a redelivery): nothing happens.
    Duplicate,
    /// The start was refused and recorded as such.
    Refused(String),
}

/// A per-hour fire limit to enforce atomically with the fire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FireLimit {
    /// Most started fires of the routine within the window.
    pub max: u32,
    /// Fires at or after this instant count.
    pub window_start: Timestamp,
}

/// The runtime's durable state. Every method is one atomic step.
pub trait Store: Send + Sync + 'static {
    /// How many deliveries an edge gives the store at once ([`Store::receive_many`],
    /// [`Store::route_many`]): more than one where a statement's round trip costs much more
    /// than a row (`PostgreSQL`); one where the store groups transactions itself (`SQLite`) or
    /// has no round trips (memory).
    fn group_size(&self) -> usize {
        1
    }

    /// Records a new job; `false` if a job with this id exists.
    fn insert_job(&self, job: &Job) -> impl Future<Output = StoreResult<bool>> + Send;
    /// A job by id.
    fn job(&self, id: &str) -> impl Future<Output = StoreResult<Option<Job>>> + Send;
    /// Marks a job as started by outside text (E11).
    fn mark_outside_started(&self, id: &str) -> impl Future<Output = StoreResult<()>> + Send;

    /// Records a new open wait of a running job (names are unique within their job) and
    /// returns its registration sequence, in one step with the check that the job runs.
    fn insert_wait(&self, wait: &Wait) -> impl Future<Output = StoreResult<WaitInsert>> + Send;
    /// A job's wait by name.
    fn wait(&self, job: &str, name: &str)
    -> impl Future<Output = StoreResult<Option<Wait>>> + Send;
    /// The waits of every job that have this name.
    fn waits_named(&self, name: &str) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// A wait by its registration sequence (its id in the API).
    fn wait_by_seq(&self, seq: i64) -> impl Future<Output = StoreResult<Option<Wait>>> + Send;
    /// A job's waits in registration order.
    fn waits_of_job(&self, job: &str) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// Every open wait in registration order (to re-arm after a restart).
    fn open_waits(&self) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// The open waits of `source` on `subject` or on any subject, in registration order: the
    /// index that edges sharing one database route through.
    fn open_waits_on(
        &self,
        source: &str,
        subject: &str,
    ) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// The candidates of events: for each `(source, subject, type)` of `keys`, in their order,
    /// the waits [`Store::open_waits_on`] gives for the source and subject that take events of
    /// that type (their `types` unset or naming it), read at once where the backend can.
    fn open_waits_on_many(
        &self,
        keys: &[(String, String, String)],
    ) -> impl Future<Output = StoreResult<Vec<Vec<Wait>>>> + Send;
    /// Up to `limit` open waits whose deadline is at or before `now`, earliest first.
    fn due_waits(
        &self,
        now: Timestamp,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// The earliest deadline of an open wait.
    fn next_deadline(&self) -> impl Future<Output = StoreResult<Option<Timestamp>>> + Send;
    /// Up to `limit` open waits registered at or before `before` whose look-back was never
    /// marked done ([`Store::mark_looked_back`]), in registration order: the waits whose
    /// registering edge died between committing them and looking back.
    fn waits_to_look_back(
        &self,
        before: Timestamp,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<Wait>>> + Send;
    /// Marks a wait's look-back done, so no restart runs it again.
    fn mark_looked_back(&self, wait_seq: i64) -> impl Future<Output = StoreResult<()>> + Send;
    /// Takes or renews the lease `name` for `holder` until `until`; `false` while another holder
    /// has it unexpired at `now`.
    fn take_lease(
        &self,
        name: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> impl Future<Output = StoreResult<bool>> + Send;

    /// Retains an event and returns its arrival sequence; `None` if `(source, id)` is known.
    fn insert_event(
        &self,
        event: &Event,
        received_at: Timestamp,
    ) -> impl Future<Output = StoreResult<Option<i64>>> + Send;
    /// Retains an event, unrouted, with its `event.received` audit record in the same
    /// transaction; a known `(source, id)` is answered with the stored event and whether it was
    /// routed (a delivery whose router died before it finished leaves it unrouted).
    fn receive(
        &self,
        event: &Event,
        received_at: Timestamp,
        audit: &AuditRecord,
    ) -> impl Future<Output = StoreResult<Received>> + Send;
    /// [`Store::receive`] for several events (distinct identities) in one transaction, with
    /// one audit record each (`audits[i]` for `events[i]`); one answer per event, in order.
    fn receive_many(
        &self,
        events: &[Event],
        audits: &[AuditRecord],
        received_at: Timestamp,
    ) -> impl Future<Output = StoreResult<Vec<Received>>> + Send;
    /// [`Store::receive_many`] for events the caller holds shared: the answers' stored events
    /// share them instead of copying them (an event may be 24 KiB, and the edge routes the copy
    /// it answers with). The default copies, for a store that keeps its own copy anyway.
    fn receive_shared(
        &self,
        events: &[std::sync::Arc<Event>],
        audits: &[AuditRecord],
        received_at: Timestamp,
    ) -> impl Future<Output = StoreResult<Vec<Received>>> + Send {
        async move {
            let owned: Vec<Event> = events.iter().map(|e| Event::clone(e)).collect();
            self.receive_many(&owned, audits, received_at).await
        }
    }
    /// Marks an event as routed (its waits claimed and its triggers fired).
    fn mark_routed(&self, source: &str, id: &str) -> impl Future<Output = StoreResult<()>> + Send;
    /// Up to `limit` retained events received before `before` that are not routed, oldest first.
    fn unrouted(
        &self,
        before: Timestamp,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<StoredEvent>>> + Send;
    /// The sequence of the newest event (0 when there is none).
    fn last_seq(&self) -> impl Future<Output = StoreResult<i64>> + Send;
    /// Events of `source` with a sequence above `after_seq` received at or after
    /// `received_since`, oldest first, that `job` has not got yet.
    fn retained_events(
        &self,
        source: &str,
        after_seq: i64,
        received_since: Timestamp,
        job: &str,
    ) -> impl Future<Output = StoreResult<Vec<StoredEvent>>> + Send;
    /// A retained event by identity.
    fn event(
        &self,
        source: &str,
        id: &str,
    ) -> impl Future<Output = StoreResult<Option<StoredEvent>>> + Send;
    /// Forgets events received before `before`; returns how many.
    fn purge_events(&self, before: Timestamp) -> impl Future<Output = StoreResult<u64>> + Send;
    /// Remembers that a delivery of `source` whose identity is `identity` arrived at `at` as
    /// the event `event_id`, unless one with that identity is remembered already: `None` when
    /// it is the first, else the first one's event id and arrival. Kept after the event's body
    /// is purged, until [`Store::forget_deliveries`].
    fn remember_delivery(
        &self,
        source: &str,
        identity: &str,
        event_id: &str,
        at: Timestamp,
    ) -> impl Future<Output = StoreResult<Option<(String, Timestamp)>>> + Send;
    /// Forgets the deliveries that first arrived before `before`; returns how many.
    fn forget_deliveries(&self, before: Timestamp)
    -> impl Future<Output = StoreResult<u64>> + Send;

    /// Gives `event` to the open candidate wait (which keeps a copy of it), in one transaction
    /// with the job's ledger row, the job's outside-started mark and the candidate's audit
    /// record.
    fn claim(
        &self,
        candidate: &Candidate,
        event: &Event,
        now: Timestamp,
    ) -> impl Future<Output = StoreResult<Claim>> + Send;
    /// Routes `event` to its candidate waits (oldest registration first) in one transaction: each
    /// is claimed as by [`Store::claim`], except that once a job got the event (or had it) its
    /// later candidates are skipped (`JobHadEvent`). With `mark_routed`, the event is marked
    /// routed in the same transaction. Returns one outcome per candidate.
    fn route(
        &self,
        event: &Event,
        candidates: &[Candidate],
        now: Timestamp,
        mark_routed: bool,
    ) -> impl Future<Output = StoreResult<Vec<Claim>>> + Send;
    /// [`Store::route`] for several events (distinct identities) in one transaction, in their
    /// order, as if one after another; one list of outcomes per event.
    fn route_many(
        &self,
        batch: &[ToRoute],
        now: Timestamp,
    ) -> impl Future<Output = StoreResult<Vec<Vec<Claim>>>> + Send;
    /// Closes an open wait as timed out or refused; `false` if it was no longer open.
    fn close(
        &self,
        wait_seq: i64,
        state: WaitState,
        reason: Option<&str>,
        now: Timestamp,
    ) -> impl Future<Output = StoreResult<bool>> + Send;

    /// Records a fire once per job id, enforcing `limit` in the same step; a fire that starts
    /// inserts `job` in that step too, and `audit` (the `event.match` record, completed with
    /// `outcome` and `reason`) commits with it: a fire is never recorded without its job.
    fn record_fire(
        &self,
        fire: &Fire,
        limit: Option<FireLimit>,
        job: &Job,
        audit: &AuditRecord,
    ) -> impl Future<Output = StoreResult<FireOutcome>> + Send;
    /// Every fire, oldest first.
    fn fires(&self) -> impl Future<Output = StoreResult<Vec<Fire>>> + Send;
    /// The fire of a job.
    fn fire(&self, job: &str) -> impl Future<Output = StoreResult<Option<Fire>>> + Send;

    /// Records a flow step that is not a wait; `false` if the step has a record already.
    fn record_step(&self, step: &StepRecord) -> impl Future<Output = StoreResult<bool>> + Send;
    /// Answers a pending approval step; `false` if it is not pending.
    fn decide_step(
        &self,
        job: &str,
        step: &str,
        output: &serde_json::Value,
        now: Timestamp,
    ) -> impl Future<Output = StoreResult<bool>> + Send;
    /// A flow job's step records.
    fn steps_of_job(&self, job: &str) -> impl Future<Output = StoreResult<Vec<StepRecord>>> + Send;

    /// Appends an audit record.
    fn append_audit(&self, record: &AuditRecord) -> impl Future<Output = StoreResult<()>> + Send;
    /// Every audit record, oldest first.
    fn audit(&self) -> impl Future<Output = StoreResult<Vec<AuditRecord>>> + Send;
    /// Up to `limit` audit records after the record numbered `after` (0: from the first),
    /// oldest first, each with its number (the cursor of the next page).
    fn audit_page(
        &self,
        after: i64,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<(i64, AuditRecord)>>> + Send;
    /// Counts one refusal of `kind` for `source` in `minute`; returns the count in that minute
    /// (including this one) and the count in the minute before.
    fn count_refusal(
        &self,
        source: &str,
        kind: &str,
        minute: i64,
    ) -> impl Future<Output = StoreResult<(u64, u64)>> + Send;

    /// Records a call of a safe output; `apply_now` outputs are applied at once, the others
    /// when the job ends (E10).
    fn record_output(
        &self,
        job: &str,
        name: &str,
        apply_now: bool,
        now: Timestamp,
    ) -> impl Future<Output = StoreResult<()>> + Send;
    /// Ends a job, applies its queued outputs and refuses its open waits (`the job ended`) in
    /// the same step, so no event reaches it after; returns the waits it refused, or `None` if
    /// the job had ended already or does not exist.
    fn end_job(
        &self,
        job: &str,
        now: Timestamp,
    ) -> impl Future<Output = StoreResult<Option<Vec<Wait>>>> + Send;
    /// A job's output calls, oldest first.
    fn outputs(&self, job: &str) -> impl Future<Output = StoreResult<Vec<Output>>> + Send;

    /// Sets a named switch (a paused routine, the kill switch).
    fn set_flag(&self, key: &str, on: bool) -> impl Future<Output = StoreResult<()>> + Send;
    /// Reads a named switch (off when never set).
    fn flag(&self, key: &str) -> impl Future<Output = StoreResult<bool>> + Send;
}
