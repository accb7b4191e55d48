//! The backend on `PostgreSQL` (sqlx), shared by any number of edges: its own migrations
//! (`runtime/migrations/postgres/`), the statements of `sql.rs`, transactions under READ
//! COMMITTED. A conditional write there is a compare-and-set with one winner: a second
//! `UPDATE … WHERE state = 'open'` on a row that a concurrent transaction changed waits for it
//! and re-checks the condition on the new row, and `INSERT … ON CONFLICT DO NOTHING` waits for a
//! concurrent inserter of the same key and then skips. Fire recorders of one routine hold its
//! `fire_locks` row, so the hourly count they read stays true until they commit. Reads that a
//! decision rests on hold their rows: routing locks its candidate waits (`FOR UPDATE`) and then
//! their jobs (`FOR NO KEY UPDATE`), and registering a wait its job (`FOR SHARE`). No advisory
//! lock is taken outside the migrator's (which the session's end releases).

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions, PgRow};
use sqlx::{Connection, Postgres};

use super::rows::{Backend, Closing};
use super::sql::{SqlRead, SqlTx, columns, sql_rows};
use super::{StoreError, StoreResult};
use crate::clock::Timestamp;
use crate::model::{AuditRecord, Event, Job, Wait, WaitState};

/// Connections per edge.
const POOL_SIZE: u32 = 16;
/// How long a step waits for a connection before it fails (and a delivery is answered 503):
/// short, so an unavailable database is reported while the sender can still retry.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// The `PostgreSQL` store. Cheap to clone (a connection pool).
#[derive(Clone, Debug)]
pub struct PostgresStore {
    pool: PgPool,
}

/// The schema's migrations, in order.
const MIGRATIONS: [(i64, &str, &str); 2] = [
    (
        1,
        "schema",
        include_str!("../../migrations/postgres/0001_schema.sql"),
    ),
    (
        2,
        "kept_events",
        include_str!("../../migrations/postgres/0002_kept_events.sql"),
    ),
];

fn migrator() -> Migrator {
    super::sql::migrator(&MIGRATIONS)
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`, with
    /// libpq's `options=-c search_path=SCHEMA` to use a schema) and brings its schema up to
    /// date; several edges may do so at once.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        Self::connect_with(PgConnectOptions::from_str(url)?).await
    }

    /// Connects with parsed options.
    pub async fn connect_with(options: PgConnectOptions) -> StoreResult<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            // A broken connection fails its statement and is dropped; pinging before every use
            // would double the round trips.
            .test_before_acquire(false)
            .connect_with(options)
            .await?;
        migrator().run(&pool).await?;
        Ok(Self { pool })
    }

    /// Connects to the schema `schema` of the database at `url`.
    pub async fn connect_in_schema(url: &str, schema: &str) -> StoreResult<Self> {
        check_schema_name(schema)?;
        let options = PgConnectOptions::from_str(url)?.options([("search_path", schema)]);
        Self::connect_with(options).await
    }

    /// Creates a new, empty schema in the database at `url` and returns its name (for test
    /// sessions that each want a fresh store on one server).
    pub async fn create_schema(url: &str) -> StoreResult<String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "ozcheck_{}_{nanos}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut conn = PgConnection::connect(url).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {name}")))
            .execute(&mut conn)
            .await?;
        conn.close().await?;
        Ok(name)
    }

    /// Deletes every row of a schema made by [`PostgresStore::create_schema`], keeping its
    /// migrations: a fresh store without the cost of creating one. (Sequences go on where they
    /// were; only their order matters.)
    pub async fn empty_schema(url: &str, schema: &str) -> StoreResult<()> {
        check_schema_name(schema)?;
        let mut conn = PgConnection::connect(url).await?;
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = $1 \
             AND tablename <> '_sqlx_migrations' ORDER BY tablename",
        )
        .bind(schema)
        .fetch_all(&mut conn)
        .await?;
        let mut deletes = String::new();
        for table in &tables {
            deletes.push_str("DELETE FROM ");
            deletes.push_str(schema);
            deletes.push_str(".\"");
            deletes.push_str(&table.replace('"', "\"\""));
            deletes.push_str("\";");
        }
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("BEGIN;{deletes}COMMIT;")))
            .execute(&mut conn)
            .await?;
        conn.close().await?;
        Ok(())
    }

    /// Drops a schema made by [`PostgresStore::create_schema`] with everything in it.
    pub async fn drop_schema(url: &str, schema: &str) -> StoreResult<()> {
        check_schema_name(schema)?;
        let mut conn = PgConnection::connect(url).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE"
        )))
        .execute(&mut conn)
        .await?;
        conn.close().await?;
        Ok(())
    }

    /// Closes every connection (a graceful stop).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Schema names are made here or given by tests: lower-case letters, digits and `_` only, so
/// they can be written into a statement as they are.
fn check_schema_name(schema: &str) -> StoreResult<()> {
    let ok = !schema.is_empty()
        && schema.len() <= 63
        && schema
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !schema.as_bytes()[0].is_ascii_digit();
    if ok {
        Ok(())
    } else {
        Err(StoreError(format!("`{schema}` is not a schema name")))
    }
}

/// A write transaction on the `PostgreSQL` store.
pub type PostgresTx = SqlTx<Postgres>;

/// A read view on the `PostgreSQL` store: one pooled connection.
pub type PostgresRead = SqlRead<Postgres>;

impl Backend for PostgresStore {
    /// Most deliveries an edge routes in one transaction. The gain flattens out well below it
    /// (BENCHMARKS.md); it bounds a transaction's size and how long its locks are held.
    const GROUP: usize = 128;

    type Tx<'a> = PostgresTx;
    type Read<'a> = PostgresRead;

    async fn begin(&self) -> StoreResult<PostgresTx> {
        Ok(SqlTx(self.pool.begin().await?))
    }

    async fn read(&self) -> StoreResult<PostgresRead> {
        Ok(SqlRead(self.pool.acquire().await?))
    }
}

/// The events' sequence remembers the highest value it gave, even after a purge (and also
/// values of inserts that were rolled back: gaps are allowed).
const LAST_SEQ: &str = "SELECT last_value AS seq FROM events_seq_seq WHERE is_called";

/// Takes the routine's lock row (creating it), held until the transaction ends.
const LOCK_FIRES: &str = "INSERT INTO fire_locks (kind, name) VALUES ($1, $2) \
     ON CONFLICT (kind, name) DO UPDATE SET taken = fire_locks.taken + 1";

columns!(PgRow);
sql_rows!(read: PostgresRead, query: sqlx::query, last_seq: LAST_SEQ, sets: {
    async fn open_waits_on_many(&mut self, keys: &[(&str, &str)]) -> StoreResult<Vec<Vec<Wait>>> {
        sets::open_waits_on_many(self.conn(), keys).await
    }
});
sql_rows!(
    write: PostgresTx, query: sqlx::query, last_seq: LAST_SEQ, lock_fires: Some(LOCK_FIRES),
    read_sets: {},
    sets: {
        async fn lock_job(&mut self, id: &str) -> StoreResult<Option<Job>> {
            sets::lock_job(self.conn(), id).await
        }
        async fn lock_jobs(&mut self, ids: &[&str]) -> StoreResult<()> {
            sets::lock_jobs(self.conn(), ids).await
        }
        async fn lock_waits(&mut self, seqs: &[i64]) -> StoreResult<Vec<(i64, WaitState)>> {
            sets::lock_waits(self.conn(), seqs).await
        }
        async fn ledger_holds(&mut self, keys: &[(&str, (&str, &str))]) -> StoreResult<Vec<bool>> {
            sets::ledger_holds(self.conn(), keys).await
        }
        async fn insert_ledgers(&mut self, rows: &[(&str, (&str, &str), i64)]) -> StoreResult<u64> {
            sets::insert_ledgers(self.conn(), rows).await
        }
        async fn close_waits(&mut self, closings: &[(i64, Closing<'_>)]) -> StoreResult<u64> {
            sets::close_waits(self.conn(), closings).await
        }
        async fn append_audits(&mut self, records: &[&AuditRecord]) -> StoreResult<()> {
            sets::append_audits(self.conn(), records).await
        }
        async fn set_outside_started_all(&mut self, ids: &[&str]) -> StoreResult<()> {
            sets::set_outside_started_all(self.conn(), ids).await
        }
        async fn set_routed_all(&mut self, keys: &[(&str, &str)]) -> StoreResult<()> {
            sets::set_routed_all(self.conn(), keys).await
        }
        async fn insert_events(
            &mut self,
            events: &[&Event],
            received_at: Timestamp,
        ) -> StoreResult<Vec<Option<i64>>> {
            sets::insert_events(self.conn(), events, received_at).await
        }
    }
);

/// The row calls on many rows as one statement each: arrays bound as parameters and opened
/// with `unnest`. Rows that other transactions may lock too are taken in one order (waits and
/// events by sequence, jobs by id, new keys sorted), so two edges' batches wait for each other
/// instead of deadlocking.
mod sets {
    use std::collections::HashMap;
    use std::sync::LazyLock;

    use sqlx::postgres::PgConnection;
    use sqlx::{AssertSqlSafe, Row};

    use crate::clock::Timestamp;
    use crate::model::{AuditRecord, Event, Job, Wait, WaitState};
    use crate::store::rows::Closing;
    use crate::store::sql::{
        WAIT_COLUMNS, event_data_column, job_from_row, wait_from_row, wait_state_from_row,
    };
    use crate::store::{StoreError, StoreResult};

    static OPEN_WAITS_ON: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT w.* FROM (SELECT DISTINCT ks, kj FROM unnest($1::text[], $2::text[]) \
             AS u(ks, kj)) AS k CROSS JOIN LATERAL (SELECT {WAIT_COLUMNS} FROM waits \
             WHERE state = 'open' AND source = k.ks AND subject = k.kj) AS w \
             UNION ALL \
             SELECT {WAIT_COLUMNS} FROM waits \
             WHERE state = 'open' AND subject IS NULL AND source = ANY($1)"
        )
    });

    pub(super) async fn open_waits_on_many(
        conn: &mut PgConnection,
        keys: &[(&str, &str)],
    ) -> StoreResult<Vec<Vec<Wait>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let sources: Vec<&str> = keys.iter().map(|k| k.0).collect();
        let subjects: Vec<&str> = keys.iter().map(|k| k.1).collect();
        let rows = sqlx::query(AssertSqlSafe(OPEN_WAITS_ON.as_str()))
            .bind(&sources)
            .bind(&subjects)
            .fetch_all(conn)
            .await?;
        let mut on: HashMap<(String, String), Vec<Wait>> = HashMap::new();
        let mut any: HashMap<String, Vec<Wait>> = HashMap::new();
        for row in &rows {
            let wait = wait_from_row(row)?;
            match &wait.spec.subject {
                Some(subject) => on
                    .entry((wait.spec.source.clone(), subject.clone()))
                    .or_default()
                    .push(wait),
                None => any.entry(wait.spec.source.clone()).or_default().push(wait),
            }
        }
        Ok(keys
            .iter()
            .map(|&(source, subject)| {
                let mut waits: Vec<Wait> = on
                    .get(&(source.to_owned(), subject.to_owned()))
                    .into_iter()
                    .chain(any.get(source))
                    .flatten()
                    .cloned()
                    .collect();
                waits.sort_by_key(|w| w.seq);
                waits
            })
            .collect())
    }

    pub(super) async fn lock_job(conn: &mut PgConnection, id: &str) -> StoreResult<Option<Job>> {
        let row = sqlx::query("SELECT * FROM jobs WHERE id = $1 FOR SHARE")
            .bind(id)
            .fetch_optional(conn)
            .await?;
        row.as_ref().map(job_from_row).transpose()
    }

    pub(super) async fn lock_jobs(conn: &mut PgConnection, ids: &[&str]) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        sqlx::query("SELECT id FROM jobs WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE")
            .bind(ids)
            .execute(conn)
            .await?;
        Ok(())
    }

    pub(super) async fn lock_waits(
        conn: &mut PgConnection,
        seqs: &[i64],
    ) -> StoreResult<Vec<(i64, WaitState)>> {
        if seqs.is_empty() {
            return Ok(Vec::new());
        }
        let rows =
            sqlx::query("SELECT seq, state FROM waits WHERE seq = ANY($1) ORDER BY seq FOR UPDATE")
                .bind(seqs)
                .fetch_all(conn)
                .await?;
        rows.iter()
            .map(|row| Ok((row.try_get::<i64, _>("seq")?, wait_state_from_row(row)?)))
            .collect()
    }

    pub(super) async fn ledger_holds(
        conn: &mut PgConnection,
        keys: &[(&str, (&str, &str))],
    ) -> StoreResult<Vec<bool>> {
        let mut held = vec![false; keys.len()];
        if keys.is_empty() {
            return Ok(held);
        }
        let jobs: Vec<&str> = keys.iter().map(|k| k.0).collect();
        let sources: Vec<&str> = keys.iter().map(|k| k.1.0).collect();
        let ids: Vec<&str> = keys.iter().map(|k| k.1.1).collect();
        let rows = sqlx::query(
            "SELECT k.n FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY \
             AS k(j, s, e, n) CROSS JOIN LATERAL (SELECT 1 FROM job_events \
             WHERE job_id = k.j AND event_source = k.s AND event_id = k.e LIMIT 1) AS l",
        )
        .bind(&jobs)
        .bind(&sources)
        .bind(&ids)
        .fetch_all(conn)
        .await?;
        for row in &rows {
            let n: i64 = row.try_get("n")?;
            let slot = usize::try_from(n - 1)
                .ok()
                .and_then(|i| held.get_mut(i))
                .ok_or_else(|| StoreError(format!("the ledger answered for key {n}")))?;
            *slot = true;
        }
        Ok(held)
    }

    pub(super) async fn insert_ledgers(
        conn: &mut PgConnection,
        rows: &[(&str, (&str, &str), i64)],
    ) -> StoreResult<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        let jobs: Vec<&str> = rows.iter().map(|r| r.0).collect();
        let sources: Vec<&str> = rows.iter().map(|r| r.1.0).collect();
        let ids: Vec<&str> = rows.iter().map(|r| r.1.1).collect();
        let waits: Vec<i64> = rows.iter().map(|r| r.2).collect();
        let done = sqlx::query(
            "INSERT INTO job_events (job_id, event_source, event_id, wait_seq) \
             SELECT j, s, e, w FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) \
             WITH ORDINALITY AS k(j, s, e, w, n) ORDER BY n ON CONFLICT DO NOTHING",
        )
        .bind(&jobs)
        .bind(&sources)
        .bind(&ids)
        .bind(&waits)
        .execute(conn)
        .await?;
        Ok(done.rows_affected())
    }

    pub(super) async fn close_waits(
        conn: &mut PgConnection,
        closings: &[(i64, Closing<'_>)],
    ) -> StoreResult<u64> {
        if closings.is_empty() {
            return Ok(0);
        }
        let seqs: Vec<i64> = closings.iter().map(|c| c.0).collect();
        let states: Vec<&str> = closings.iter().map(|c| c.1.state.as_str()).collect();
        let sources: Vec<Option<&str>> = closings.iter().map(|c| c.1.event.map(|e| e.0)).collect();
        let ids: Vec<Option<&str>> = closings.iter().map(|c| c.1.event.map(|e| e.1)).collect();
        let reasons: Vec<Option<&str>> = closings.iter().map(|c| c.1.reason).collect();
        let at: Vec<i64> = closings.iter().map(|c| c.1.at.0).collect();
        let data: Vec<Option<String>> = closings
            .iter()
            .map(|c| event_data_column(c.1.matched))
            .collect();
        let done = sqlx::query(
            "UPDATE waits SET state = c.st, event_source = c.es, event_id = c.ei, \
             reason = c.why, closed_at = c.at, event_data = c.data \
             FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], \
             $6::bigint[], $7::text[]) AS c(seq, st, es, ei, why, at, data) \
             WHERE waits.seq = c.seq AND waits.state = 'open'",
        )
        .bind(&seqs)
        .bind(&states)
        .bind(&sources)
        .bind(&ids)
        .bind(&reasons)
        .bind(&at)
        .bind(&data)
        .execute(conn)
        .await?;
        Ok(done.rows_affected())
    }

    pub(super) async fn append_audits(
        conn: &mut PgConnection,
        records: &[&AuditRecord],
    ) -> StoreResult<()> {
        if records.is_empty() {
            return Ok(());
        }
        let at: Vec<i64> = records.iter().map(|r| r.at.0).collect();
        let actions: Vec<&str> = records.iter().map(|r| r.action.as_str()).collect();
        let data: Vec<String> = records.iter().map(|r| r.data.to_string()).collect();
        sqlx::query(
            "INSERT INTO audit (at, action, data) SELECT a, b, c \
             FROM unnest($1::bigint[], $2::text[], $3::text[]) WITH ORDINALITY AS k(a, b, c, n) \
             ORDER BY n",
        )
        .bind(&at)
        .bind(&actions)
        .bind(&data)
        .execute(conn)
        .await?;
        Ok(())
    }

    pub(super) async fn set_outside_started_all(
        conn: &mut PgConnection,
        ids: &[&str],
    ) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "UPDATE jobs SET outside_started = TRUE WHERE id IN (SELECT id FROM jobs \
             WHERE id = ANY($1) AND NOT outside_started ORDER BY id FOR UPDATE)",
        )
        .bind(ids)
        .execute(conn)
        .await?;
        Ok(())
    }

    pub(super) async fn set_routed_all(
        conn: &mut PgConnection,
        keys: &[(&str, &str)],
    ) -> StoreResult<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let sources: Vec<&str> = keys.iter().map(|k| k.0).collect();
        let ids: Vec<&str> = keys.iter().map(|k| k.1).collect();
        sqlx::query(
            "UPDATE events SET routed = TRUE WHERE seq IN (SELECT e.seq \
             FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(s, i, n) \
             CROSS JOIN LATERAL (SELECT seq FROM events WHERE source = k.s AND event_id = k.i \
             AND NOT routed FOR UPDATE) AS e) AND NOT routed",
        )
        .bind(&sources)
        .bind(&ids)
        .execute(conn)
        .await?;
        Ok(())
    }

    pub(super) async fn insert_events(
        conn: &mut PgConnection,
        events: &[&Event],
        received_at: Timestamp,
    ) -> StoreResult<Vec<Option<i64>>> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let column = |f: fn(&Event) -> &str| -> Vec<&str> { events.iter().map(|e| f(e)).collect() };
        let attributes: Vec<String> = events.iter().map(|e| e.attributes.to_string()).collect();
        // Inserted in identity order: two edges given the same events wait for each other on
        // the first they share instead of each holding one the other needs.
        let rows = sqlx::query(
            "INSERT INTO events (source, event_id, type, action, subject, text, attributes, \
             received_at, routed) \
             SELECT s, e, t, a, j, x, y, $8, FALSE FROM unnest($1::text[], $2::text[], \
             $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS k(s, e, t, a, j, x, y) \
             ORDER BY s, e \
             ON CONFLICT (source, event_id) DO NOTHING RETURNING source, event_id, seq",
        )
        .bind(column(|e| &e.source))
        .bind(column(|e| &e.id))
        .bind(column(|e| &e.kind))
        .bind(column(|e| &e.action))
        .bind(column(|e| &e.subject))
        .bind(column(|e| &e.text))
        .bind(&attributes)
        .bind(received_at.0)
        .fetch_all(conn)
        .await?;
        let mut seqs: HashMap<(String, String), i64> = HashMap::with_capacity(rows.len());
        for row in &rows {
            seqs.insert(
                (row.try_get("source")?, row.try_get("event_id")?),
                row.try_get("seq")?,
            );
        }
        Ok(events
            .iter()
            .map(|e| seqs.get(&(e.source.clone(), e.id.clone())).copied())
            .collect())
    }
}
