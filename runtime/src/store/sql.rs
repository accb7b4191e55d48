//! The rows of the relational backends, written once: the SQL (portable between `SQLite` and
//! `PostgreSQL`: `$n` parameters, `ON CONFLICT`, `RETURNING`), the decoding of rows into the
//! model, and [`sql_rows!`], which implements the row contract for a backend's connection type.
//! A backend supplies only its dialect's differences (how to read the last event sequence, how
//! to hold other fire recorders of a routine, and where it keeps which events are still to
//! route: [`EventSql`]), how a statement runs (sqlx for
//! `PostgreSQL`, the `SQLite` store's own connection for `SQLite`) and how a transaction begins
//! and ends.
//!
//! The inserts into tables numbered by a sequence (`waits`, `events`, `fires`) skip an existing
//! row with `WHERE NOT EXISTS` before their `ON CONFLICT`, which then only settles a race: for
//! a row `ON CONFLICT` skips, `SQLite` still advances an `AUTOINCREMENT` table's sequence, a
//! write its count of changed rows does not show, so the `SQLite` writer could not tell that a
//! step taken back after such an insert had written (`lite.rs`); and neither database uses up
//! a number on a redelivery.

use std::time::Duration;

use crate::clock::Timestamp;
use crate::model::{
    AuditRecord, Event, Fire, FireState, Job, Output, Since, StepRecord, StepState, StoredEvent,
    Wait, WaitSpec, WaitState,
};

use super::{StoreError, StoreResult};

/// A migrator of `(version, name, SQL)` steps, applied in order: both relational stores keep
/// their schema so (their own steps, one way of running them).
pub(super) fn migrator(steps: &[(i64, &'static str, &'static str)]) -> sqlx::migrate::Migrator {
    sqlx::migrate::Migrator::with_migrations(
        steps
            .iter()
            .map(|&(version, name, sql)| {
                sqlx::migrate::Migration::new(
                    version,
                    std::borrow::Cow::Borrowed(name),
                    sqlx::migrate::MigrationType::Simple,
                    sqlx::SqlSafeStr::into_sql_str(sql),
                    false,
                )
            })
            .collect(),
    )
}

/// A write transaction on a relational backend (its driver's `DB`).
pub struct SqlTx<DB: sqlx::Database>(pub(super) sqlx::Transaction<'static, DB>);

/// A read view on a relational backend: one pooled connection.
pub struct SqlRead<DB: sqlx::Database>(pub(super) sqlx::pool::PoolConnection<DB>);

impl<DB: sqlx::Database> SqlTx<DB> {
    pub(super) fn conn(&mut self) -> &mut DB::Connection {
        &mut self.0
    }

    pub(super) async fn finish(self) -> StoreResult<()> {
        Ok(self.0.commit().await?)
    }

    pub(super) async fn abort(self) -> StoreResult<()> {
        Ok(self.0.rollback().await?)
    }
}

impl<DB: sqlx::Database> SqlRead<DB> {
    pub(super) fn conn(&mut self) -> &mut DB::Connection {
        &mut self.0
    }
}

/// A decoded row's columns by name: the few types the schema uses.
pub(super) trait Columns {
    fn int(&self, column: &str) -> StoreResult<i64>;
    fn opt_int(&self, column: &str) -> StoreResult<Option<i64>>;
    fn text(&self, column: &str) -> StoreResult<String>;
    fn opt_text(&self, column: &str) -> StoreResult<Option<String>>;
    fn boolean(&self, column: &str) -> StoreResult<bool>;
}

/// Implements [`Columns`] for a driver's row type.
macro_rules! columns {
    ($row:ty) => {
        impl $crate::store::sql::Columns for $row {
            fn int(&self, column: &str) -> $crate::store::StoreResult<i64> {
                Ok(sqlx::Row::try_get(self, column)?)
            }
            fn opt_int(&self, column: &str) -> $crate::store::StoreResult<Option<i64>> {
                Ok(sqlx::Row::try_get(self, column)?)
            }
            fn text(&self, column: &str) -> $crate::store::StoreResult<String> {
                Ok(sqlx::Row::try_get(self, column)?)
            }
            fn opt_text(&self, column: &str) -> $crate::store::StoreResult<Option<String>> {
                Ok(sqlx::Row::try_get(self, column)?)
            }
            fn boolean(&self, column: &str) -> $crate::store::StoreResult<bool> {
                Ok(sqlx::Row::try_get(self, column)?)
            }
        }
    };
}
pub(super) use columns;

fn bad_row(what: &str) -> StoreError {
    StoreError(format!("corrupt row: {what}"))
}

pub(super) fn job_from_row(row: &impl Columns) -> StoreResult<Job> {
    Ok(Job {
        id: row.text("id")?,
        started_at: Timestamp(row.int("started_at")?),
        start_seq: row.int("start_seq")?,
        deadline: row.opt_int("deadline")?.map(Timestamp),
        runtime: row.text("runtime")?,
        shadow: row.boolean("shadow")?,
        sandboxed: row.boolean("sandboxed")?,
        outside_started: row.boolean("outside_started")?,
        ended_at: row.opt_int("ended_at")?.map(Timestamp),
    })
}

pub(super) fn wait_from_row(row: &impl Columns) -> StoreResult<Wait> {
    let types = match row.opt_text("types")? {
        Some(t) => Some(serde_json::from_str(&t).map_err(|_| bad_row("waits.types"))?),
        None => None,
    };
    let since = match row.text("since")?.as_str() {
        "job" => Since::Job,
        "now" => Since::Now,
        _ => return Err(bad_row("waits.since")),
    };
    let state = wait_state_from_row(row)?;
    let event = row.opt_text("event_source")?.zip(row.opt_text("event_id")?);
    let matched = event_data(row, "waits.event_data")?.map(std::sync::Arc::new);
    Ok(Wait {
        seq: row.int("seq")?,
        name: row.text("name")?,
        job: row.text("job_id")?,
        spec: WaitSpec {
            source: row.text("source")?,
            types,
            subject: row.opt_text("subject")?,
            filter: row.opt_text("filter")?,
            timeout: Duration::from_millis(u64::try_from(row.int("timeout_ms")?).unwrap_or(0)),
            since,
        },
        after_seq: row.int("after_seq")?,
        created_at: Timestamp(row.int("created_at")?),
        deadline: Timestamp(row.int("deadline")?),
        state,
        event,
        matched,
        reason: row.opt_text("reason")?,
    })
}

/// A wait's state column.
pub(super) fn wait_state_from_row(row: &impl Columns) -> StoreResult<WaitState> {
    WaitState::parse(&row.text("state")?).ok_or_else(|| bad_row("waits.state"))
}

/// An event kept with a wait or a fire (`event_data`, JSON), if any.
fn event_data(row: &impl Columns, what: &str) -> StoreResult<Option<Event>> {
    row.opt_text("event_data")?
        .map(|json| serde_json::from_str(&json).map_err(|_| bad_row(what)))
        .transpose()
}

/// An event as `event_data` keeps it.
pub(super) fn event_data_column(event: Option<&Event>) -> Option<String> {
    event.map(|e| serde_json::to_string(e).unwrap_or_default())
}

pub(super) fn step_from_row(row: &impl Columns) -> StoreResult<StepRecord> {
    let state = StepState::parse(&row.text("state")?).ok_or_else(|| bad_row("flow_steps.state"))?;
    let output = match row.opt_text("output")? {
        Some(json) => serde_json::from_str(&json).map_err(|_| bad_row("flow_steps.output"))?,
        None => serde_json::Value::Null,
    };
    Ok(StepRecord {
        job: row.text("job_id")?,
        step: row.text("step_id")?,
        state,
        output,
        details: row.opt_text("details")?,
        at: Timestamp(row.int("at")?),
    })
}

pub(super) fn event_from_row(row: &impl Columns) -> StoreResult<StoredEvent> {
    let attributes = row.text("attributes")?;
    Ok(StoredEvent {
        seq: row.int("seq")?,
        received_at: Timestamp(row.int("received_at")?),
        event: std::sync::Arc::new(Event {
            source: row.text("source")?,
            id: row.text("event_id")?,
            kind: row.text("type")?,
            action: row.text("action")?,
            subject: row.text("subject")?,
            text: row.text("text")?,
            attributes: serde_json::from_str(&attributes)
                .map_err(|_| bad_row("events.attributes"))?,
        }),
    })
}

pub(super) fn fire_from_row(row: &impl Columns) -> StoreResult<Fire> {
    let state = match row.text("state")?.as_str() {
        "started" => FireState::Started,
        "refused" => FireState::Refused,
        _ => return Err(bad_row("fires.state")),
    };
    Ok(Fire {
        job: row.text("job_id")?,
        kind: row.text("kind")?,
        name: row.text("name")?,
        trigger: row.text("trigger")?,
        state,
        reason: row.opt_text("reason")?,
        at: Timestamp(row.int("at")?),
        event: event_data(row, "fires.event_data")?,
    })
}

pub(super) fn audit_from_row(row: &impl Columns) -> StoreResult<AuditRecord> {
    Ok(AuditRecord {
        at: Timestamp(row.int("at")?),
        action: row.text("action")?,
        data: serde_json::from_str(&row.text("data")?).map_err(|_| bad_row("audit.data"))?,
    })
}

pub(super) fn output_from_row(row: &impl Columns) -> StoreResult<Output> {
    Ok(Output {
        job: row.text("job_id")?,
        name: row.text("name")?,
        apply_now: row.boolean("apply_now")?,
        called_at: Timestamp(row.int("called_at")?),
        applied_at: row.opt_int("applied_at")?.map(Timestamp),
    })
}

pub(super) fn fire_state(state: FireState) -> &'static str {
    match state {
        FireState::Started => "started",
        FireState::Refused => "refused",
    }
}

/// A wait's `types` as stored (a JSON array, or NULL for any type).
pub(super) fn types_column(wait: &Wait) -> Option<String> {
    wait.spec
        .types
        .as_ref()
        .map(|t| serde_json::Value::from(t.clone()).to_string())
}

pub(super) fn timeout_ms(wait: &Wait) -> i64 {
    i64::try_from(wait.spec.timeout.as_millis()).unwrap_or(i64::MAX)
}

/// The columns of a wait row, in `SELECT`s.
/// The statements on retained events that differ between the backends: where the mark of an
/// event still to route is kept. `SQLite` keeps it in the events table (`routed`, with a
/// partial index on the unrouted); `PostgreSQL` keeps the unrouted events in a table of their
/// own, so marking an event routed deletes a narrow row instead of writing a new version of the
/// event and its index entries (migration 0003 there).
pub(crate) struct EventSql {
    /// Adds an event unrouted: binds source, id, type, action, subject, text, attributes and
    /// the time received; returns `seq`, or no row for a known identity.
    pub insert: &'static str,
    /// Whether an event is routed: binds source and id; returns `routed` for a retained event.
    pub is_routed: &'static str,
    /// The unrouted events received before `$1`, at most `$2`, by sequence.
    pub unrouted: &'static str,
    /// Marks an event routed: binds source and id.
    pub set_routed: &'static str,
    /// Forgets the events received before `$1`; counts the events forgotten.
    pub purge: &'static str,
}

/// The events' statements of a backend that keeps the routed mark in the events table.
pub(crate) const ROUTED_COLUMN: EventSql = EventSql {
    insert: "INSERT INTO events (source, event_id, type, action, subject, text, \
             attributes, received_at, routed) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, FALSE \
             WHERE NOT EXISTS (SELECT 1 FROM events WHERE source = $1 AND event_id = $2) \
             ON CONFLICT (source, event_id) DO NOTHING RETURNING seq",
    is_routed: "SELECT routed FROM events WHERE source = $1 AND event_id = $2",
    unrouted: "SELECT * FROM events WHERE NOT routed AND received_at < $1 ORDER BY seq LIMIT $2",
    set_routed: "UPDATE events SET routed = TRUE WHERE source = $1 AND event_id = $2 \
                 AND NOT routed",
    purge: "DELETE FROM events WHERE received_at < $1",
};

pub(super) const WAIT_COLUMNS: &str = "seq, name, job_id, source, subject, types, filter, \
     timeout_ms, since, after_seq, created_at, deadline, state, event_source, event_id, reason, \
     event_data";

/// `SELECT` of waits with a condition.
macro_rules! select_waits {
    ($condition:literal) => {
        sqlx::AssertSqlSafe(format!(
            "SELECT {} FROM waits {}",
            $crate::store::sql::WAIT_COLUMNS,
            $condition
        ))
    };
}
pub(super) use select_waits;

/// Implements [`super::rows::ReadRows`] and [`super::rows::Rows`] for `$ty`: a driver's
/// [`SqlRead`], or for writes its [`SqlTx`] (or the `SQLite` store's own connection types).
/// `$query` builds a statement as `sqlx::query` does (`.bind(…)`, then `.execute`, `.fetch_one`,
/// `.fetch_optional` or `.fetch_all` on `self.conn()`). `$last_seq` reads the highest event
/// sequence ever given (one column `seq`, or no row); `$lock_fires` is the statement that holds
/// other fire recorders of a routine (`$1` kind, `$2` name), or `None` when transactions are
/// serial already.
macro_rules! sql_rows {
    (
        read: $ty:ty, query: $query:path, last_seq: $last_seq:expr, events: $events:expr
        $(, sets: { $($sets:tt)* })?
    ) => {
        impl $crate::store::rows::ReadRows for $ty {
            $($($sets)*)?

            async fn job(&mut self, id: &str) -> $crate::store::StoreResult<Option<$crate::model::Job>> {
                let row = $query("SELECT * FROM jobs WHERE id = $1")
                    .bind(id)
                    .fetch_optional(self.conn())
                    .await?;
                row.as_ref().map($crate::store::sql::job_from_row).transpose()
            }

            async fn wait(&mut self, job: &str, name: &str) -> $crate::store::StoreResult<Option<$crate::model::Wait>> {
                let row = $query($crate::store::sql::select_waits!("WHERE job_id = $1 AND name = $2"))
                    .bind(job)
                    .bind(name)
                    .fetch_optional(self.conn())
                    .await?;
                row.as_ref().map($crate::store::sql::wait_from_row).transpose()
            }

            async fn waits_named(&mut self, name: &str) -> $crate::store::StoreResult<Vec<$crate::model::Wait>> {
                let rows = $query($crate::store::sql::select_waits!("WHERE name = $1 ORDER BY seq"))
                    .bind(name)
                    .fetch_all(self.conn())
                    .await?;
                rows.iter().map($crate::store::sql::wait_from_row).collect()
            }

            async fn wait_by_seq(&mut self, seq: i64) -> $crate::store::StoreResult<Option<$crate::model::Wait>> {
                let row = $query($crate::store::sql::select_waits!("WHERE seq = $1"))
                    .bind(seq)
                    .fetch_optional(self.conn())
                    .await?;
                row.as_ref().map($crate::store::sql::wait_from_row).transpose()
            }

            async fn waits_of_job(&mut self, job: &str) -> $crate::store::StoreResult<Vec<$crate::model::Wait>> {
                let rows = $query($crate::store::sql::select_waits!("WHERE job_id = $1 ORDER BY seq"))
                    .bind(job)
                    .fetch_all(self.conn())
                    .await?;
                rows.iter().map($crate::store::sql::wait_from_row).collect()
            }

            async fn open_waits(&mut self) -> $crate::store::StoreResult<Vec<$crate::model::Wait>> {
                let rows = $query($crate::store::sql::select_waits!("WHERE state = 'open' ORDER BY seq"))
                    .fetch_all(self.conn())
                    .await?;
                rows.iter().map($crate::store::sql::wait_from_row).collect()
            }

            async fn open_waits_on(
                &mut self,
                source: &str,
                subject: &str,
            ) -> $crate::store::StoreResult<Vec<$crate::model::Wait>> {
                let rows = $query($crate::store::sql::select_waits!(
                    "WHERE state = 'open' AND source = $1 AND (subject = $2 OR subject IS NULL) \
                     ORDER BY seq"
                ))
                .bind(source)
                .bind(subject)
                .fetch_all(self.conn())
                .await?;
                rows.iter().map($crate::store::sql::wait_from_row).collect()
            }

            async fn due_waits(
                &mut self,
                now: $crate::clock::Timestamp,
                limit: u32,
            ) -> $crate::store::StoreResult<Vec<$crate::model::Wait>> {
                let rows = $query($crate::store::sql::select_waits!(
                    "WHERE state = 'open' AND deadline <= $1 ORDER BY deadline, seq LIMIT $2"
                ))
                .bind(now.0)
                .bind(i64::from(limit))
                .fetch_all(self.conn())
                .await?;
                rows.iter().map($crate::store::sql::wait_from_row).collect()
            }

            async fn next_deadline(
                &mut self,
            ) -> $crate::store::StoreResult<Option<$crate::clock::Timestamp>> {
                let row = $query(
                    "SELECT deadline FROM waits WHERE state = 'open' ORDER BY deadline LIMIT 1",
                )
                .fetch_optional(self.conn())
                .await?;
                let deadline = row
                    .as_ref()
                    .map(|r| $crate::store::sql::Columns::int(r, "deadline"))
                    .transpose()?;
                Ok(deadline.map($crate::clock::Timestamp))
            }

            async fn waits_to_look_back(
                &mut self,
                before: $crate::clock::Timestamp,
                limit: u32,
            ) -> $crate::store::StoreResult<Vec<$crate::model::Wait>> {
                // `waits_to_look_back` holds the unmarked rows only (a partial index), and a
                // close marks its row, so this reads the few waits of a crash window.
                let rows = $query($crate::store::sql::select_waits!(
                    "WHERE NOT looked_back AND state = 'open' AND created_at <= $1 \
                     ORDER BY seq LIMIT $2"
                ))
                .bind(before.0)
                .bind(i64::from(limit))
                .fetch_all(self.conn())
                .await?;
                rows.iter().map($crate::store::sql::wait_from_row).collect()
            }

            async fn last_event_seq(&mut self) -> $crate::store::StoreResult<i64> {
                let row = $query($last_seq).fetch_optional(self.conn()).await?;
                Ok(row.as_ref().map(|r| $crate::store::sql::Columns::int(r, "seq")).transpose()?.unwrap_or(0))
            }

            async fn events_after(
                &mut self,
                source: &str,
                after_seq: i64,
                since: $crate::clock::Timestamp,
            ) -> $crate::store::StoreResult<Vec<$crate::model::StoredEvent>> {
                let rows = $query(
                    "SELECT * FROM events WHERE source = $1 AND seq > $2 AND received_at >= $3 \
                     ORDER BY seq",
                )
                .bind(source)
                .bind(after_seq)
                .bind(since.0)
                .fetch_all(self.conn())
                .await?;
                rows.iter().map($crate::store::sql::event_from_row).collect()
            }

            async fn wait_state(&mut self, seq: i64) -> $crate::store::StoreResult<Option<$crate::model::WaitState>> {
                let row = $query("SELECT state FROM waits WHERE seq = $1")
                    .bind(seq)
                    .fetch_optional(self.conn())
                    .await?;
                row.as_ref().map($crate::store::sql::wait_state_from_row).transpose()
            }

            async fn in_ledger(&mut self, job: &str, event: (&str, &str)) -> $crate::store::StoreResult<bool> {
                let row = $query(
                    "SELECT 1 AS one FROM job_events WHERE job_id = $1 AND event_source = $2 \
                     AND event_id = $3",
                )
                .bind(job)
                .bind(event.0)
                .bind(event.1)
                .fetch_optional(self.conn())
                .await?;
                Ok(row.is_some())
            }

            async fn ledger_of_job(&mut self, job: &str) -> $crate::store::StoreResult<Vec<(String, String)>> {
                let rows =
                    $query("SELECT event_source, event_id FROM job_events WHERE job_id = $1")
                        .bind(job)
                        .fetch_all(self.conn())
                        .await?;
                rows.iter()
                    .map(|r| {
                        Ok((
                            $crate::store::sql::Columns::text(r, "event_source")?,
                            $crate::store::sql::Columns::text(r, "event_id")?,
                        ))
                    })
                    .collect()
            }

            async fn event(&mut self, source: &str, id: &str) -> $crate::store::StoreResult<Option<$crate::model::StoredEvent>> {
                let row = $query("SELECT * FROM events WHERE source = $1 AND event_id = $2")
                    .bind(source)
                    .bind(id)
                    .fetch_optional(self.conn())
                    .await?;
                row.as_ref().map($crate::store::sql::event_from_row).transpose()
            }

            async fn is_routed(
                &mut self,
                source: &str,
                id: &str,
            ) -> $crate::store::StoreResult<Option<bool>> {
                let row =
                    $query($events.is_routed)
                        .bind(source)
                        .bind(id)
                        .fetch_optional(self.conn())
                        .await?;
                row.as_ref()
                    .map(|r| $crate::store::sql::Columns::boolean(r, "routed"))
                    .transpose()
            }

            async fn unrouted(
                &mut self,
                before: $crate::clock::Timestamp,
                limit: u32,
            ) -> $crate::store::StoreResult<Vec<$crate::model::StoredEvent>> {
                let rows = $query($events.unrouted)
                .bind(before.0)
                .bind(i64::from(limit))
                .fetch_all(self.conn())
                .await?;
                rows.iter().map($crate::store::sql::event_from_row).collect()
            }

            async fn fire_exists(&mut self, job: &str) -> $crate::store::StoreResult<bool> {
                let row = $query("SELECT job_id FROM fires WHERE job_id = $1")
                    .bind(job)
                    .fetch_optional(self.conn())
                    .await?;
                Ok(row.is_some())
            }

            async fn started_fires(
                &mut self,
                kind: &str,
                name: &str,
                since: $crate::clock::Timestamp,
            ) -> $crate::store::StoreResult<u64> {
                let row = $query(
                    "SELECT COUNT(*) AS n FROM fires WHERE kind = $1 AND name = $2 \
                     AND state = 'started' AND at >= $3",
                )
                .bind(kind)
                .bind(name)
                .bind(since.0)
                .fetch_one(self.conn())
                .await?;
                Ok($crate::store::sql::Columns::int(&row, "n")? as u64)
            }

            async fn fires(&mut self) -> $crate::store::StoreResult<Vec<$crate::model::Fire>> {
                let rows = $query("SELECT * FROM fires ORDER BY seq")
                    .fetch_all(self.conn())
                    .await?;
                rows.iter().map($crate::store::sql::fire_from_row).collect()
            }

            async fn fire(&mut self, job: &str) -> $crate::store::StoreResult<Option<$crate::model::Fire>> {
                let row = $query("SELECT * FROM fires WHERE job_id = $1")
                    .bind(job)
                    .fetch_optional(self.conn())
                    .await?;
                row.as_ref().map($crate::store::sql::fire_from_row).transpose()
            }

            async fn steps_of_job(&mut self, job: &str) -> $crate::store::StoreResult<Vec<$crate::model::StepRecord>> {
                let rows = $query("SELECT * FROM flow_steps WHERE job_id = $1 ORDER BY seq")
                    .bind(job)
                    .fetch_all(self.conn())
                    .await?;
                rows.iter().map($crate::store::sql::step_from_row).collect()
            }

            async fn audit_page(
                &mut self,
                after: i64,
                limit: u32,
            ) -> $crate::store::StoreResult<Vec<(i64, $crate::model::AuditRecord)>> {
                let rows = $query(
                    "SELECT seq, at, action, data FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2",
                )
                .bind(after)
                .bind(i64::from(limit))
                .fetch_all(self.conn())
                .await?;
                rows.iter()
                    .map(|r| Ok(($crate::store::sql::Columns::int(r, "seq")?, $crate::store::sql::audit_from_row(r)?)))
                    .collect()
            }

            async fn audit(&mut self) -> $crate::store::StoreResult<Vec<$crate::model::AuditRecord>> {
                let rows = $query("SELECT at, action, data FROM audit ORDER BY seq")
                    .fetch_all(self.conn())
                    .await?;
                rows.iter().map($crate::store::sql::audit_from_row).collect()
            }

            async fn refusals(&mut self, source: &str, kind: &str, minute: i64) -> $crate::store::StoreResult<u64> {
                let row = $query(
                    "SELECT count FROM refusals WHERE source = $1 AND kind = $2 AND minute = $3",
                )
                .bind(source)
                .bind(kind)
                .bind(minute)
                .fetch_optional(self.conn())
                .await?;
                let count = row.as_ref().map(|r| $crate::store::sql::Columns::int(r, "count")).transpose()?;
                Ok(count.unwrap_or(0) as u64)
            }

            async fn outputs(&mut self, job: &str) -> $crate::store::StoreResult<Vec<$crate::model::Output>> {
                let rows = $query("SELECT * FROM outputs WHERE job_id = $1 ORDER BY seq")
                    .bind(job)
                    .fetch_all(self.conn())
                    .await?;
                rows.iter().map($crate::store::sql::output_from_row).collect()
            }

            async fn flag(&mut self, key: &str) -> $crate::store::StoreResult<bool> {
                let row = $query("SELECT key FROM flags WHERE key = $1")
                    .bind(key)
                    .fetch_optional(self.conn())
                    .await?;
                Ok(row.is_some())
            }
        }
    };
    (
        write: $ty:ty, query: $query:path, last_seq: $last_seq:expr, events: $events:expr,
        lock_fires: $lock_fires:expr $(, read_sets: { $($read_sets:tt)* }, sets: { $($sets:tt)* })?
    ) => {
        $crate::store::sql::sql_rows!(
            read: $ty, query: $query, last_seq: $last_seq, events: $events
            $(, sets: { $($read_sets)* })?
        );

        impl $crate::store::rows::Rows for $ty {
            $($($sets)*)?

            async fn insert_job(&mut self, job: &$crate::model::Job) -> $crate::store::StoreResult<bool> {
                let done = $query(
                    "INSERT INTO jobs (id, started_at, start_seq, deadline, runtime, shadow, \
                     sandboxed) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING",
                )
                .bind(&job.id)
                .bind(job.started_at.0)
                .bind(job.start_seq)
                .bind(job.deadline.map(|d| d.0))
                .bind(&job.runtime)
                .bind(job.shadow)
                .bind(job.sandboxed)
                .execute(self.conn())
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn set_outside_started(&mut self, id: &str) -> $crate::store::StoreResult<()> {
                $query(
                    "UPDATE jobs SET outside_started = TRUE WHERE id = $1 AND NOT outside_started",
                )
                .bind(id)
                .execute(self.conn())
                .await?;
                Ok(())
            }

            async fn set_job_ended(&mut self, id: &str, at: $crate::clock::Timestamp) -> $crate::store::StoreResult<bool> {
                let done =
                    $query("UPDATE jobs SET ended_at = $1 WHERE id = $2 AND ended_at IS NULL")
                        .bind(at.0)
                        .bind(id)
                        .execute(self.conn())
                        .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn insert_wait(&mut self, wait: &$crate::model::Wait) -> $crate::store::StoreResult<Option<i64>> {
                let row = $query(
                    "INSERT INTO waits (name, job_id, source, subject, types, filter, timeout_ms, \
                     since, after_seq, created_at, deadline) \
                     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 \
                     WHERE NOT EXISTS (SELECT 1 FROM waits WHERE job_id = $2 AND name = $1) \
                     ON CONFLICT (job_id, name) DO NOTHING RETURNING seq",
                )
                .bind(&wait.name)
                .bind(&wait.job)
                .bind(&wait.spec.source)
                .bind(&wait.spec.subject)
                .bind($crate::store::sql::types_column(wait))
                .bind(&wait.spec.filter)
                .bind($crate::store::sql::timeout_ms(wait))
                .bind(wait.spec.since.as_str())
                .bind(wait.after_seq)
                .bind(wait.created_at.0)
                .bind(wait.deadline.0)
                .fetch_optional(self.conn())
                .await?;
                row.as_ref().map(|r| $crate::store::sql::Columns::int(r, "seq")).transpose()
            }

            async fn close_wait(&mut self, seq: i64, closing: $crate::store::rows::Closing<'_>) -> $crate::store::StoreResult<bool> {
                let done = $query(
                    "UPDATE waits SET state = $1, event_source = $2, event_id = $3, reason = $4, \
                     closed_at = $5, event_data = $6, looked_back = TRUE \
                     WHERE seq = $7 AND state = 'open'",
                )
                .bind(closing.state.as_str())
                .bind(closing.event.map(|e| e.0))
                .bind(closing.event.map(|e| e.1))
                .bind(closing.reason)
                .bind(closing.at.0)
                .bind($crate::store::sql::event_data_column(closing.matched.map(|e| &**e)))
                .bind(seq)
                .execute(self.conn())
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn set_looked_back(&mut self, seq: i64) -> $crate::store::StoreResult<()> {
                $query("UPDATE waits SET looked_back = TRUE WHERE seq = $1 AND NOT looked_back")
                    .bind(seq)
                    .execute(self.conn())
                    .await?;
                Ok(())
            }

            async fn insert_event(
                &mut self,
                event: &$crate::model::Event,
                received_at: $crate::clock::Timestamp,
            ) -> $crate::store::StoreResult<Option<i64>> {
                let row = $query($events.insert)
                .bind(&event.source)
                .bind(&event.id)
                .bind(&event.kind)
                .bind(&event.action)
                .bind(&event.subject)
                .bind(&event.text)
                .bind(event.attributes.to_string())
                .bind(received_at.0)
                .fetch_optional(self.conn())
                .await?;
                row.as_ref().map(|r| $crate::store::sql::Columns::int(r, "seq")).transpose()
            }

            async fn delete_events_before(&mut self, before: $crate::clock::Timestamp) -> $crate::store::StoreResult<u64> {
                let done = $query($events.purge)
                    .bind(before.0)
                    .execute(self.conn())
                    .await?;
                Ok(done.rows_affected())
            }

            async fn insert_ledger(
                &mut self,
                job: &str,
                event: (&str, &str),
                wait_seq: i64,
            ) -> $crate::store::StoreResult<bool> {
                let done = $query(
                    "INSERT INTO job_events (job_id, event_source, event_id, wait_seq) \
                     VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                )
                .bind(job)
                .bind(event.0)
                .bind(event.1)
                .bind(wait_seq)
                .execute(self.conn())
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn set_routed(&mut self, source: &str, id: &str) -> $crate::store::StoreResult<()> {
                $query($events.set_routed)
                .bind(source)
                .bind(id)
                .execute(self.conn())
                .await?;
                Ok(())
            }

            async fn insert_delivery(
                &mut self,
                source: &str,
                identity: &str,
                event_id: &str,
                at: $crate::clock::Timestamp,
            ) -> $crate::store::StoreResult<Option<(String, $crate::clock::Timestamp)>> {
                let added = $query(
                    "INSERT INTO deliveries (source, identity, event_id, first_at) \
                     VALUES ($1, $2, $3, $4) ON CONFLICT (source, identity) DO NOTHING",
                )
                .bind(source)
                .bind(identity)
                .bind(event_id)
                .bind(at.0)
                .execute(self.conn())
                .await?
                .rows_affected();
                if added == 1 {
                    return Ok(None);
                }
                // A second statement: under READ COMMITTED it sees the row of a concurrent
                // first delivery that the insert waited for.
                let row = $query(
                    "SELECT event_id, first_at FROM deliveries WHERE source = $1 AND identity = $2",
                )
                .bind(source)
                .bind(identity)
                .fetch_optional(self.conn())
                .await?;
                match row {
                    Some(row) => Ok(Some((
                        $crate::store::sql::Columns::text(&row, "event_id")?,
                        $crate::clock::Timestamp($crate::store::sql::Columns::int(&row, "first_at")?),
                    ))),
                    None => Err($crate::store::StoreError(format!(
                        "the delivery {source}/{identity} is neither new nor remembered"
                    ))),
                }
            }

            async fn delete_deliveries_before(
                &mut self,
                before: $crate::clock::Timestamp,
            ) -> $crate::store::StoreResult<u64> {
                Ok($query("DELETE FROM deliveries WHERE first_at < $1")
                    .bind(before.0)
                    .execute(self.conn())
                    .await?
                    .rows_affected())
            }

            async fn take_lease(
                &mut self,
                name: &str,
                holder: &str,
                now: $crate::clock::Timestamp,
                until: $crate::clock::Timestamp,
            ) -> $crate::store::StoreResult<bool> {
                let row = $query(
                    "INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, \
                     expires_at = excluded.expires_at \
                     WHERE leases.holder = excluded.holder OR leases.expires_at <= $4 \
                     RETURNING holder",
                )
                .bind(name)
                .bind(holder)
                .bind(until.0)
                .bind(now.0)
                .fetch_optional(self.conn())
                .await?;
                Ok(row.is_some())
            }

            async fn lock_fires(&mut self, kind: &str, name: &str) -> $crate::store::StoreResult<()> {
                let statement: Option<&'static str> = $lock_fires;
                if let Some(statement) = statement {
                    $query(statement)
                        .bind(kind)
                        .bind(name)
                        .execute(self.conn())
                        .await?;
                }
                Ok(())
            }

            async fn insert_fire(&mut self, fire: &$crate::model::Fire) -> $crate::store::StoreResult<bool> {
                let done = $query(
                    "INSERT INTO fires (job_id, kind, name, trigger, state, reason, at, event_data) \
                     SELECT $1, $2, $3, $4, $5, $6, $7, $8 \
                     WHERE NOT EXISTS (SELECT 1 FROM fires WHERE job_id = $1) \
                     ON CONFLICT (job_id) DO NOTHING",
                )
                .bind(&fire.job)
                .bind(&fire.kind)
                .bind(&fire.name)
                .bind(&fire.trigger)
                .bind($crate::store::sql::fire_state(fire.state))
                .bind(&fire.reason)
                .bind(fire.at.0)
                .bind($crate::store::sql::event_data_column(fire.event.as_ref()))
                .execute(self.conn())
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn insert_step(&mut self, step: &$crate::model::StepRecord) -> $crate::store::StoreResult<bool> {
                let done = $query(
                    "INSERT INTO flow_steps (job_id, step_id, state, output, details, at) \
                     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id, step_id) DO NOTHING",
                )
                .bind(&step.job)
                .bind(&step.step)
                .bind(step.state.as_str())
                .bind((!step.output.is_null()).then(|| step.output.to_string()))
                .bind(&step.details)
                .bind(step.at.0)
                .execute(self.conn())
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn decide_step(
                &mut self,
                job: &str,
                step: &str,
                output: &serde_json::Value,
                at: $crate::clock::Timestamp,
            ) -> $crate::store::StoreResult<bool> {
                let done = $query(
                    "UPDATE flow_steps SET state = 'decided', output = $1, decided_at = $2 \
                     WHERE job_id = $3 AND step_id = $4 AND state = 'pending'",
                )
                .bind(output.to_string())
                .bind(at.0)
                .bind(job)
                .bind(step)
                .execute(self.conn())
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn append_audit(&mut self, record: &$crate::model::AuditRecord) -> $crate::store::StoreResult<()> {
                $query("INSERT INTO audit (at, action, data) VALUES ($1, $2, $3)")
                    .bind(record.at.0)
                    .bind(&record.action)
                    .bind(record.data.to_string())
                    .execute(self.conn())
                    .await?;
                Ok(())
            }

            async fn bump_refusal(&mut self, source: &str, kind: &str, minute: i64) -> $crate::store::StoreResult<u64> {
                let row = $query(
                    "INSERT INTO refusals (source, kind, minute, count) VALUES ($1, $2, $3, 1) \
                     ON CONFLICT (source, kind, minute) DO UPDATE SET count = refusals.count + 1 \
                     RETURNING count",
                )
                .bind(source)
                .bind(kind)
                .bind(minute)
                .fetch_one(self.conn())
                .await?;
                Ok($crate::store::sql::Columns::int(&row, "count")? as u64)
            }

            async fn insert_output(&mut self, output: &$crate::model::Output) -> $crate::store::StoreResult<()> {
                $query(
                    "INSERT INTO outputs (job_id, name, apply_now, called_at, applied_at) \
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(&output.job)
                .bind(&output.name)
                .bind(output.apply_now)
                .bind(output.called_at.0)
                .bind(output.applied_at.map(|t| t.0))
                .execute(self.conn())
                .await?;
                Ok(())
            }

            async fn apply_outputs(&mut self, job: &str, at: $crate::clock::Timestamp) -> $crate::store::StoreResult<()> {
                $query(
                    "UPDATE outputs SET applied_at = $1 WHERE job_id = $2 AND applied_at IS NULL",
                )
                .bind(at.0)
                .bind(job)
                .execute(self.conn())
                .await?;
                Ok(())
            }

            async fn set_flag(&mut self, key: &str, on: bool) -> $crate::store::StoreResult<()> {
                let statement = if on {
                    "INSERT INTO flags (key) VALUES ($1) ON CONFLICT DO NOTHING"
                } else {
                    "DELETE FROM flags WHERE key = $1"
                };
                $query(statement).bind(key).execute(self.conn()).await?;
                Ok(())
            }

            async fn commit(self) -> $crate::store::StoreResult<()> {
                self.finish().await
            }

            async fn rollback(self) -> $crate::store::StoreResult<()> {
                self.abort().await
            }
        }
    };
}
pub(super) use sql_rows;
