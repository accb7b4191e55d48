//! The embedded store on `SQLite` (sqlx): one file, WAL journal, migrations embedded in the
//! binary. Writes that decide a race run in `BEGIN IMMEDIATE` transactions, which take the write
//! lock up front so two routers never both read `open` and both write.

use std::borrow::Cow;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::Row;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};

use super::{Claim, FireLimit, FireOutcome, Store, StoreError, StoreResult};
use crate::clock::Timestamp;
use crate::model::{
    AuditRecord, Event, Fire, FireState, Job, Output, Since, StoredEvent, Wait, WaitSpec, WaitState,
};

/// The `SQLite` store. Cheap to clone (a connection pool).
#[derive(Clone, Debug)]
pub struct SqliteStore {
    pool: SqlitePool,
}

fn migrator() -> Migrator {
    let migration = |version, name, sql: &'static str| {
        Migration::new(
            version,
            Cow::Borrowed(name),
            MigrationType::Simple,
            sqlx::SqlSafeStr::into_sql_str(sql),
            false,
        )
    };
    Migrator::with_migrations(vec![
        migration(1, "waits", include_str!("../../migrations/0001_waits.sql")),
        migration(
            2,
            "outputs",
            include_str!("../../migrations/0002_outputs.sql"),
        ),
    ])
}

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path` and brings its schema up to date.
    pub async fn open(path: &Path) -> StoreResult<Self> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10));
        Self::with_options(options, 4).await
    }

    /// A private in-memory database (one connection, so every query sees the same data).
    pub async fn in_memory() -> StoreResult<Self> {
        let options = SqliteConnectOptions::from_str("sqlite::memory:")?;
        Self::with_options(options, 1).await
    }

    async fn with_options(options: SqliteConnectOptions, max: u32) -> StoreResult<Self> {
        let pool = SqlitePoolOptions::new()
            .max_connections(max)
            .connect_with(options)
            .await?;
        migrator().run(&pool).await?;
        Ok(Self { pool })
    }

    /// Closes every connection (a graceful stop).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

fn bad_row(what: &str) -> StoreError {
    StoreError(format!("corrupt row: {what}"))
}

fn job_from_row(row: &SqliteRow) -> StoreResult<Job> {
    Ok(Job {
        id: row.try_get("id")?,
        started_at: Timestamp(row.try_get("started_at")?),
        start_seq: row.try_get("start_seq")?,
        deadline: row.try_get::<Option<i64>, _>("deadline")?.map(Timestamp),
        runtime: row.try_get("runtime")?,
        shadow: row.try_get("shadow")?,
        sandboxed: row.try_get("sandboxed")?,
        outside_started: row.try_get("outside_started")?,
        ended_at: row.try_get::<Option<i64>, _>("ended_at")?.map(Timestamp),
    })
}

fn wait_from_row(row: &SqliteRow) -> StoreResult<Wait> {
    let types: Option<String> = row.try_get("types")?;
    let types = match types {
        Some(t) => Some(serde_json::from_str(&t).map_err(|_| bad_row("waits.types"))?),
        None => None,
    };
    let since = match row.try_get::<String, _>("since")?.as_str() {
        "job" => Since::Job,
        "now" => Since::Now,
        _ => return Err(bad_row("waits.since")),
    };
    let state = WaitState::parse(&row.try_get::<String, _>("state")?)
        .ok_or_else(|| bad_row("waits.state"))?;
    let event_source: Option<String> = row.try_get("event_source")?;
    let event_id: Option<String> = row.try_get("event_id")?;
    Ok(Wait {
        seq: row.try_get("seq")?,
        name: row.try_get("name")?,
        job: row.try_get("job_id")?,
        spec: WaitSpec {
            source: row.try_get("source")?,
            types,
            subject: row.try_get("subject")?,
            filter: row.try_get("filter")?,
            timeout: Duration::from_millis(
                u64::try_from(row.try_get::<i64, _>("timeout_ms")?).unwrap_or(0),
            ),
            since,
        },
        after_seq: row.try_get("after_seq")?,
        created_at: Timestamp(row.try_get("created_at")?),
        deadline: Timestamp(row.try_get("deadline")?),
        state,
        event: event_source.zip(event_id),
        reason: row.try_get("reason")?,
    })
}

fn event_from_row(row: &SqliteRow) -> StoreResult<StoredEvent> {
    let attributes: String = row.try_get("attributes")?;
    Ok(StoredEvent {
        seq: row.try_get("seq")?,
        received_at: Timestamp(row.try_get("received_at")?),
        event: Event {
            source: row.try_get("source")?,
            id: row.try_get("event_id")?,
            kind: row.try_get("type")?,
            action: row.try_get("action")?,
            subject: row.try_get("subject")?,
            text: row.try_get("text")?,
            attributes: serde_json::from_str(&attributes)
                .map_err(|_| bad_row("events.attributes"))?,
        },
    })
}

fn fire_from_row(row: &SqliteRow) -> StoreResult<Fire> {
    let state = match row.try_get::<String, _>("state")?.as_str() {
        "started" => FireState::Started,
        "refused" => FireState::Refused,
        _ => return Err(bad_row("fires.state")),
    };
    Ok(Fire {
        job: row.try_get("job_id")?,
        kind: row.try_get("kind")?,
        name: row.try_get("name")?,
        trigger: row.try_get("trigger")?,
        state,
        reason: row.try_get("reason")?,
        at: Timestamp(row.try_get("at")?),
    })
}

const WAIT_COLUMNS: &str = "seq, name, job_id, source, subject, types, filter, timeout_ms, since, \
     after_seq, created_at, deadline, state, event_source, event_id, reason";

impl Store for SqliteStore {
    async fn insert_job(&self, job: &Job) -> StoreResult<bool> {
        let done = sqlx::query(
            "INSERT INTO jobs (id, started_at, start_seq, deadline, runtime, shadow, sandboxed) \
             VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&job.id)
        .bind(job.started_at.0)
        .bind(job.start_seq)
        .bind(job.deadline.map(|d| d.0))
        .bind(&job.runtime)
        .bind(job.shadow)
        .bind(job.sandboxed)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn job(&self, id: &str) -> StoreResult<Option<Job>> {
        let row = sqlx::query("SELECT * FROM jobs WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(job_from_row).transpose()
    }

    async fn mark_outside_started(&self, id: &str) -> StoreResult<()> {
        sqlx::query("UPDATE jobs SET outside_started = 1 WHERE id = ?")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn insert_wait(&self, wait: &Wait) -> StoreResult<Option<i64>> {
        let types = wait
            .spec
            .types
            .as_ref()
            .map(|t| serde_json::to_string(t).unwrap_or_default());
        let timeout_ms = i64::try_from(wait.spec.timeout.as_millis()).unwrap_or(i64::MAX);
        let row = sqlx::query(
            "INSERT INTO waits (name, job_id, source, subject, types, filter, timeout_ms, since, \
             after_seq, created_at, deadline) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (name) DO NOTHING RETURNING seq",
        )
        .bind(&wait.name)
        .bind(&wait.job)
        .bind(&wait.spec.source)
        .bind(&wait.spec.subject)
        .bind(types)
        .bind(&wait.spec.filter)
        .bind(timeout_ms)
        .bind(wait.spec.since.as_str())
        .bind(wait.after_seq)
        .bind(wait.created_at.0)
        .bind(wait.deadline.0)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.try_get("seq")).transpose()?)
    }

    async fn wait(&self, name: &str) -> StoreResult<Option<Wait>> {
        let sql = sqlx::AssertSqlSafe(format!("SELECT {WAIT_COLUMNS} FROM waits WHERE name = ?"));
        let row = sqlx::query(sql)
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(wait_from_row).transpose()
    }

    async fn waits_of_job(&self, job: &str) -> StoreResult<Vec<Wait>> {
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT {WAIT_COLUMNS} FROM waits WHERE job_id = ? ORDER BY seq"
        ));
        let rows = sqlx::query(sql).bind(job).fetch_all(&self.pool).await?;
        rows.iter().map(wait_from_row).collect()
    }

    async fn open_waits(&self) -> StoreResult<Vec<Wait>> {
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT {WAIT_COLUMNS} FROM waits WHERE state = 'open' ORDER BY seq"
        ));
        let rows = sqlx::query(sql).fetch_all(&self.pool).await?;
        rows.iter().map(wait_from_row).collect()
    }

    async fn insert_event(
        &self,
        event: &Event,
        received_at: Timestamp,
    ) -> StoreResult<Option<i64>> {
        let row = sqlx::query(
            "INSERT INTO events (source, event_id, type, action, subject, text, attributes, \
             received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (source, event_id) DO NOTHING RETURNING seq",
        )
        .bind(&event.source)
        .bind(&event.id)
        .bind(&event.kind)
        .bind(&event.action)
        .bind(&event.subject)
        .bind(&event.text)
        .bind(event.attributes.to_string())
        .bind(received_at.0)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.try_get("seq")).transpose()?)
    }

    async fn last_seq(&self) -> StoreResult<i64> {
        // sqlite_sequence remembers the highest sequence ever given, even after a purge.
        let row = sqlx::query("SELECT seq FROM sqlite_sequence WHERE name = 'events'")
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.try_get("seq")).transpose()?.unwrap_or(0))
    }

    async fn retained_events(
        &self,
        source: &str,
        after_seq: i64,
        received_since: Timestamp,
        job: &str,
    ) -> StoreResult<Vec<StoredEvent>> {
        let rows = sqlx::query(
            "SELECT * FROM events e WHERE e.source = ? AND e.seq > ? AND e.received_at >= ? \
             AND NOT EXISTS (SELECT 1 FROM job_events j WHERE j.job_id = ? \
                             AND j.event_source = e.source AND j.event_id = e.event_id) \
             ORDER BY e.seq",
        )
        .bind(source)
        .bind(after_seq)
        .bind(received_since.0)
        .bind(job)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(event_from_row).collect()
    }

    async fn event(&self, source: &str, id: &str) -> StoreResult<Option<StoredEvent>> {
        let row = sqlx::query("SELECT * FROM events WHERE source = ? AND event_id = ?")
            .bind(source)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(event_from_row).transpose()
    }

    async fn purge_events(&self, before: Timestamp) -> StoreResult<u64> {
        let done = sqlx::query("DELETE FROM events WHERE received_at < ?")
            .bind(before.0)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    async fn claim(
        &self,
        wait_seq: i64,
        job: &str,
        event: (&str, &str),
        now: Timestamp,
    ) -> StoreResult<Claim> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let ledger = sqlx::query(
            "INSERT INTO job_events (job_id, event_source, event_id, wait_seq) VALUES (?, ?, ?, ?) \
             ON CONFLICT DO NOTHING",
        )
        .bind(job)
        .bind(event.0)
        .bind(event.1)
        .bind(wait_seq)
        .execute(&mut *tx)
        .await?;
        if ledger.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(Claim::JobHadEvent);
        }
        let moved = sqlx::query(
            "UPDATE waits SET state = 'matched', event_source = ?, event_id = ?, closed_at = ? \
             WHERE seq = ? AND state = 'open'",
        )
        .bind(event.0)
        .bind(event.1)
        .bind(now.0)
        .bind(wait_seq)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() == 0 {
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
        let moved = sqlx::query(
            "UPDATE waits SET state = ?, reason = ?, closed_at = ? WHERE seq = ? AND state = 'open'",
        )
        .bind(state.as_str())
        .bind(reason)
        .bind(now.0)
        .bind(wait_seq)
        .execute(&self.pool)
        .await?;
        Ok(moved.rows_affected() == 1)
    }

    async fn record_fire(&self, fire: &Fire, limit: Option<FireLimit>) -> StoreResult<FireOutcome> {
        // One immediate transaction serialises the rate check per database, so two routers
        // cannot both see one fire left in the hour.
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let exists = sqlx::query("SELECT 1 FROM fires WHERE job_id = ?")
            .bind(&fire.job)
            .fetch_optional(&mut *tx)
            .await?;
        if exists.is_some() {
            tx.rollback().await?;
            return Ok(FireOutcome::Duplicate);
        }
        let mut state = fire.state;
        let mut reason = fire.reason.clone();
        if let (Some(limit), FireState::Started) = (limit, state) {
            let row = sqlx::query(
                "SELECT COUNT(*) AS n FROM fires WHERE kind = ? AND name = ? \
                 AND state = 'started' AND at >= ?",
            )
            .bind(&fire.kind)
            .bind(&fire.name)
            .bind(limit.window_start.0)
            .fetch_one(&mut *tx)
            .await?;
            let started: i64 = row.try_get("n")?;
            if started >= i64::from(limit.max) {
                state = FireState::Refused;
                reason = Some("max_fires_per_hour".to_owned());
            }
        }
        sqlx::query(
            "INSERT INTO fires (job_id, kind, name, trigger, state, reason, at) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&fire.job)
        .bind(&fire.kind)
        .bind(&fire.name)
        .bind(&fire.trigger)
        .bind(match state {
            FireState::Started => "started",
            FireState::Refused => "refused",
        })
        .bind(&reason)
        .bind(fire.at.0)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(match state {
            FireState::Started => FireOutcome::Started,
            FireState::Refused => FireOutcome::Refused(reason.unwrap_or_default()),
        })
    }

    async fn fires(&self) -> StoreResult<Vec<Fire>> {
        let rows = sqlx::query("SELECT * FROM fires ORDER BY seq")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(fire_from_row).collect()
    }

    async fn append_audit(&self, record: &AuditRecord) -> StoreResult<()> {
        sqlx::query("INSERT INTO audit (at, action, data) VALUES (?, ?, ?)")
            .bind(record.at.0)
            .bind(&record.action)
            .bind(record.data.to_string())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn audit(&self) -> StoreResult<Vec<AuditRecord>> {
        let rows = sqlx::query("SELECT at, action, data FROM audit ORDER BY seq")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| {
                let data: String = r.try_get("data")?;
                Ok(AuditRecord {
                    at: Timestamp(r.try_get("at")?),
                    action: r.try_get("action")?,
                    data: serde_json::from_str(&data).map_err(|_| bad_row("audit.data"))?,
                })
            })
            .collect()
    }

    async fn count_refusal(
        &self,
        source: &str,
        kind: &str,
        minute: i64,
    ) -> StoreResult<(u64, u64)> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let row = sqlx::query(
            "INSERT INTO refusals (source, kind, minute, count) VALUES (?, ?, ?, 1) \
             ON CONFLICT (source, kind, minute) DO UPDATE SET count = count + 1 RETURNING count",
        )
        .bind(source)
        .bind(kind)
        .bind(minute)
        .fetch_one(&mut *tx)
        .await?;
        let now: i64 = row.try_get("count")?;
        let before =
            sqlx::query("SELECT count FROM refusals WHERE source = ? AND kind = ? AND minute = ?")
                .bind(source)
                .bind(kind)
                .bind(minute - 1)
                .fetch_optional(&mut *tx)
                .await?;
        let before: i64 = before.map(|r| r.try_get("count")).transpose()?.unwrap_or(0);
        tx.commit().await?;
        Ok((now as u64, before as u64))
    }

    async fn record_output(
        &self,
        job: &str,
        name: &str,
        apply_now: bool,
        now: Timestamp,
    ) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO outputs (job_id, name, apply_now, called_at, applied_at) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(job)
        .bind(name)
        .bind(apply_now)
        .bind(now.0)
        .bind(apply_now.then_some(now.0))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn end_job(&self, job: &str, now: Timestamp) -> StoreResult<bool> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let ended = sqlx::query("UPDATE jobs SET ended_at = ? WHERE id = ? AND ended_at IS NULL")
            .bind(now.0)
            .bind(job)
            .execute(&mut *tx)
            .await?;
        if ended.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        sqlx::query("UPDATE outputs SET applied_at = ? WHERE job_id = ? AND applied_at IS NULL")
            .bind(now.0)
            .bind(job)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn outputs(&self, job: &str) -> StoreResult<Vec<Output>> {
        let rows = sqlx::query("SELECT * FROM outputs WHERE job_id = ? ORDER BY seq")
            .bind(job)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(Output {
                    job: r.try_get("job_id")?,
                    name: r.try_get("name")?,
                    apply_now: r.try_get("apply_now")?,
                    called_at: Timestamp(r.try_get("called_at")?),
                    applied_at: r.try_get::<Option<i64>, _>("applied_at")?.map(Timestamp),
                })
            })
            .collect()
    }

    async fn set_flag(&self, key: &str, on: bool) -> StoreResult<()> {
        let sql = if on {
            "INSERT INTO flags (key) VALUES (?) ON CONFLICT DO NOTHING"
        } else {
            "DELETE FROM flags WHERE key = ?"
        };
        sqlx::query(sql).bind(key).execute(&self.pool).await?;
        Ok(())
    }

    async fn flag(&self, key: &str) -> StoreResult<bool> {
        let row = sqlx::query("SELECT 1 FROM flags WHERE key = ?")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }
}
