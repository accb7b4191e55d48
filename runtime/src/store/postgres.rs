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
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions, PgRow};
use sqlx::{Connection, Postgres};

use super::rows::{Backend, Claims, Closing, Routed, RoutingReads};
use super::sql::{EventSql, SqlRead, SqlTx, columns, sql_rows};
use super::{StoreError, StoreResult};
use crate::clock::Timestamp;
use crate::model::{AuditRecord, Event, Job, Wait, WaitState};

/// Connections per edge.
const POOL_SIZE: u32 = 16;
/// How long a step waits for a connection before it fails (and a delivery is answered 503):
/// short, so an unavailable database is reported while the sender can still retry.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// Why opening a store failed: connecting, or bringing the schema up to date.
#[derive(Debug)]
enum OpenError {
    Connect(sqlx::Error),
    Migrate(sqlx::migrate::MigrateError),
}

impl OpenError {
    fn may_pass(&self) -> bool {
        match self {
            OpenError::Connect(e) => may_pass(e),
            OpenError::Migrate(sqlx::migrate::MigrateError::Execute(e)) => may_pass(e),
            OpenError::Migrate(_) => false,
        }
    }
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Connect(e) => e.fmt(f),
            OpenError::Migrate(e) => e.fmt(f),
        }
    }
}

impl From<OpenError> for StoreError {
    fn from(e: OpenError) -> Self {
        match e {
            OpenError::Connect(e) => e.into(),
            OpenError::Migrate(e) => e.into(),
        }
    }
}

/// Whether a failed attempt to reach the database may succeed later: the connection could not
/// be made or broke (an I/O error, no connection within the pool's timeout), or the server
/// said it cannot take one now (SQLSTATE class 08, connection exceptions; 57P01–57P03, shutting
/// down, crashed, starting up; 53300, too many connections). Anything else (authentication,
/// a missing database, a configuration error) is not mended by waiting.
pub fn may_pass(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            code.starts_with("08") || matches!(&*code, "57P01" | "57P02" | "57P03" | "53300")
        }),
        _ => false,
    }
}

/// The `PostgreSQL` store. Cheap to clone (a connection pool).
#[derive(Clone, Debug)]
pub struct PostgresStore {
    pool: PgPool,
}

/// The schema's migrations, in order.
const MIGRATIONS: [(i64, &str, &str); 9] = [
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
    (
        3,
        "unrouted",
        include_str!("../../migrations/postgres/0003_unrouted.sql"),
    ),
    (
        4,
        "open_state_statistics",
        include_str!("../../migrations/postgres/0004_open_state_statistics.sql"),
    ),
    (
        5,
        "bytewise_keys",
        include_str!("../../migrations/postgres/0005_bytewise_keys.sql"),
    ),
    (
        6,
        "events_by_source",
        include_str!("../../migrations/postgres/0006_events_by_source.sql"),
    ),
    (
        7,
        "event_compression",
        include_str!("../../migrations/postgres/0007_event_compression.sql"),
    ),
    (
        8,
        "looked_back",
        include_str!("../../migrations/postgres/0008_looked_back.sql"),
    ),
    (
        9,
        "deliveries",
        include_str!("../../migrations/postgres/0009_deliveries.sql"),
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
    ///
    /// Each connection plans a statement once and keeps the plan (`plan_cache_mode =
    /// force_generic_plan`) unless the mode was chosen for it elsewhere (the server's
    /// configuration, the role or database, or the URL's `options`). The runtime's statements
    /// take arrays, and by default the server plans every execution anew for the arrays'
    /// sizes: 22 µs per event in `route_bench`, an eighth of the server's time, for the same
    /// plans. Every statement on the routing path is written so that its plan does not depend
    /// on estimates (`tests/plans_pg.rs` checks the rows they read in both modes). The setting
    /// is made by a statement once each connection is open, not by a startup parameter, which
    /// connection poolers may refuse.
    pub async fn connect_with(options: PgConnectOptions) -> StoreResult<Self> {
        Ok(Self::open(options).await?)
    }

    /// Connects as [`PostgresStore::connect`] does, but waits for a database that is not
    /// there yet: while the attempt fails for a reason that may pass ([`may_pass`]: the server
    /// is unreachable, starting, shutting down or out of connection slots), it calls
    /// `waiting` with the error and the delay, sleeps, and tries again, the delay doubling from
    /// a quarter of a second to five seconds. A reason no retry mends (a malformed URL, a
    /// refused password, a database that does not exist, a failed migration) ends it at once.
    /// An edge restarted during a database outage thus comes up when the database does,
    /// rather than exiting (the caller stops waiting on its own signal by dropping the
    /// future).
    pub async fn connect_patiently(
        url: &str,
        mut waiting: impl FnMut(&str, Duration),
    ) -> StoreResult<Self> {
        let options = PgConnectOptions::from_str(url)?;
        let mut delay = Duration::from_millis(250);
        loop {
            match Self::open(options.clone()).await {
                Ok(store) => return Ok(store),
                Err(e) if e.may_pass() => {
                    waiting(&e.to_string(), delay);
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(5));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    async fn open(options: PgConnectOptions) -> Result<Self, OpenError> {
        let pool = PgPoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            // A broken connection fails its statement and is dropped; pinging before every use
            // would double the round trips.
            .test_before_acquire(false)
            .after_connect(|conn, _| {
                Box::pin(async move {
                    sqlx::query(
                        "SELECT set_config('plan_cache_mode', 'force_generic_plan', false) \
                         FROM pg_settings WHERE name = 'plan_cache_mode' AND source = 'default'",
                    )
                    .execute(conn)
                    .await?;
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(OpenError::Connect)?;
        migrator().run(&pool).await.map_err(OpenError::Migrate)?;
        Ok(Self { pool })
    }

    /// The value of a server setting on one of the store's connections (for tests of what the
    /// store sets when it connects).
    #[doc(hidden)]
    pub async fn setting(&self, name: &str) -> StoreResult<String> {
        Ok(sqlx::query_scalar("SELECT current_setting($1)")
            .bind(name)
            .fetch_one(&self.pool)
            .await?)
    }

    /// Brings the schema at `url` up to migration `version` and no further: for tests of an
    /// upgrade from an older schema ([`PostgresStore::connect`] brings it the rest of the way).
    #[doc(hidden)]
    pub async fn migrate_to(url: &str, version: i64) -> StoreResult<()> {
        let steps: Vec<(i64, &'static str, &'static str)> = MIGRATIONS
            .iter()
            .copied()
            .filter(|step| step.0 <= version)
            .collect();
        let mut conn = PgConnection::connect(url).await?;
        super::sql::migrator(&steps).run(&mut conn).await?;
        conn.close().await?;
        Ok(())
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
    /// Most deliveries an edge retains, and routes, in one transaction. A group holds what
    /// arrived while the last one was in the store, so it only grows this large when senders
    /// keep many deliveries in flight; then larger groups cost the server less per event
    /// (decision 0010, "Ninth pass"). It bounds a transaction's size and how long its locks
    /// are held.
    const GROUP: usize = 512;

    type Tx<'a> = PostgresTx;
    type Read<'a> = PostgresRead;

    async fn begin(&self) -> StoreResult<PostgresTx> {
        Ok(SqlTx(self.pool.begin().await?))
    }

    async fn read(&self) -> StoreResult<PostgresRead> {
        Ok(SqlRead(self.pool.acquire().await?))
    }

    /// One statement outside a transaction block: the server runs it as a transaction of its
    /// own and commits it (the WAL flushed) before it answers. `BEGIN` and `COMMIT` would be
    /// two more round trips.
    async fn insert_events_committed(
        &self,
        events: &[&Arc<Event>],
        records: &[&AuditRecord],
        received_at: Timestamp,
    ) -> StoreResult<Vec<Option<i64>>> {
        let mut conn = self.pool.acquire().await?;
        sets::insert_events(&mut conn, events, records, received_at).await
    }
}

/// The events' sequence remembers the highest value it gave, even after a purge (and also
/// values of inserts that were rolled back: gaps are allowed).
const LAST_SEQ: &str = "SELECT last_value AS seq FROM events_seq_seq WHERE is_called";

/// Takes the routine's lock row (creating it), held until the transaction ends.
const LOCK_FIRES: &str = "INSERT INTO fire_locks (kind, name) VALUES ($1, $2) \
     ON CONFLICT (kind, name) DO UPDATE SET taken = fire_locks.taken + 1";

/// The events' statements on this schema: the events still to route are the rows of
/// `unrouted` (migration 0003).
const EVENTS: EventSql = EventSql {
    insert: "WITH e AS (INSERT INTO events (source, event_id, type, action, subject, text, \
             attributes, received_at) SELECT $1, $2, $3, $4, $5, $6, $7, $8 \
             WHERE NOT EXISTS (SELECT 1 FROM events WHERE source = $1 AND event_id = $2) \
             ON CONFLICT (source, event_id) DO NOTHING RETURNING seq, source, received_at) \
             INSERT INTO unrouted (seq, source, received_at) SELECT seq, source, received_at \
             FROM e \
             RETURNING seq",
    is_routed: "SELECT NOT EXISTS (SELECT 1 FROM unrouted u WHERE u.seq = e.seq) AS routed \
                FROM events e WHERE e.source = $1 AND e.event_id = $2",
    unrouted: "SELECT e.* FROM unrouted u JOIN events e ON e.source = u.source AND e.seq = u.seq \
               WHERE u.received_at < $1 ORDER BY u.seq LIMIT $2",
    set_routed: "DELETE FROM unrouted \
                 WHERE seq = (SELECT seq FROM events WHERE source = $1 AND event_id = $2)",
    // The `unrouted` rows are deleted in the order of their places in the table (a TID scan
    // sorts them), as routing deletes them, so the two wait for each other instead of
    // deadlocking.
    purge: "WITH u AS (DELETE FROM unrouted WHERE ctid = ANY(ARRAY(SELECT ctid FROM unrouted \
            WHERE received_at < $1))) \
            DELETE FROM events WHERE received_at < $1",
};

columns!(PgRow);
sql_rows!(read: PostgresRead, query: sqlx::query, last_seq: LAST_SEQ, events: EVENTS, sets: {
    async fn open_waits_on_many(
        &mut self,
        keys: &[(&str, &str, &str)],
    ) -> StoreResult<Vec<Vec<Wait>>> {
        sets::open_waits_on_many(self.conn(), keys).await
    }
});
sql_rows!(
    write: PostgresTx, query: sqlx::query, last_seq: LAST_SEQ, events: EVENTS,
    lock_fires: Some(LOCK_FIRES),
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
        async fn lock_for_routing(
            &mut self,
            seqs: &[i64],
            jobs: &[&str],
            keys: &[(&str, (&str, &str))],
        ) -> StoreResult<RoutingReads> {
            sets::lock_for_routing(self.conn(), seqs, jobs, keys).await
        }
        async fn write_claims(&mut self, claims: Claims<'_>) -> StoreResult<bool> {
            let (added, closed) = sets::write_claims(self.conn(), claims).await?;
            if added != claims.ledgers.len() as u64 {
                return Ok(false);
            }
            if closed != claims.closings.len() as u64 {
                return Err(StoreError("a locked open wait was not open".into()));
            }
            Ok(true)
        }
        async fn insert_ledgers(&mut self, rows: &[(&str, (&str, &str), i64)]) -> StoreResult<u64> {
            let claims = Claims { ledgers: rows, ..sets::NO_CLAIMS };
            Ok(sets::write_claims(self.conn(), claims).await?.0)
        }
        async fn close_waits(&mut self, closings: &[(i64, Closing<'_>)]) -> StoreResult<u64> {
            let claims = Claims { closings, ..sets::NO_CLAIMS };
            Ok(sets::write_claims(self.conn(), claims).await?.1)
        }
        async fn append_audits(&mut self, records: &[&AuditRecord]) -> StoreResult<()> {
            let claims = Claims { records, ..sets::NO_CLAIMS };
            sets::write_claims(self.conn(), claims).await.map(drop)
        }
        async fn set_outside_started_all(&mut self, reached: &[&str]) -> StoreResult<()> {
            let claims = Claims { reached, ..sets::NO_CLAIMS };
            sets::write_claims(self.conn(), claims).await.map(drop)
        }
        async fn set_routed_all(&mut self, keys: &[(&str, &str)]) -> StoreResult<()> {
            let routed: Vec<Routed<'_>> = keys.iter().map(|&k| (k, None)).collect();
            let claims = Claims { routed: &routed, ..sets::NO_CLAIMS };
            sets::write_claims(self.conn(), claims).await.map(drop)
        }
        async fn insert_events_recorded(
            &mut self,
            events: &[&Arc<Event>],
            records: &[&AuditRecord],
            received_at: Timestamp,
        ) -> StoreResult<Vec<Option<i64>>> {
            sets::insert_events(self.conn(), events, records, received_at).await
        }
        async fn insert_events(
            &mut self,
            events: &[&Arc<Event>],
            received_at: Timestamp,
        ) -> StoreResult<Vec<Option<i64>>> {
            sets::insert_events(self.conn(), events, &[], received_at).await
        }
    }
);

/// The row calls on many rows as one statement each: arrays bound as parameters and opened
/// with `unnest`. Rows that other transactions may lock too are taken in one order (waits and
/// events by sequence, jobs by id, new keys sorted), so two edges' batches wait for each other
/// instead of deadlocking.
mod sets {
    use std::collections::{HashMap, HashSet};
    use std::sync::{Arc, LazyLock};

    use sqlx::postgres::PgConnection;
    use sqlx::{AssertSqlSafe, Row};

    use crate::clock::Timestamp;
    use crate::model::{AuditRecord, Event, Job, Wait, WaitState};
    use crate::store::rows::{Claims, RoutingReads};
    use crate::store::sql::{
        WAIT_COLUMNS, event_data_column, job_from_row, wait_from_row, wait_state_from_row,
    };
    use crate::store::{StoreError, StoreResult};

    /// The candidates of events by `(source, subject, type)`, the keys distinct: for each key,
    /// the open waits on its subject whose `types` is NULL (any type) or holds the key's type
    /// as JSON text (`$3`, written by the serializer that wrote the column), and the open waits
    /// on any subject of the keys' sources that take one of the types. That is every wait that
    /// takes a type, and rarely one that does not, which the caller's exact check drops. The
    /// column is not parsed as `jsonb`: a type it cannot hold (`\u0000`) would fail the
    /// statement, and with it every event of the source. `OFFSET 0` keeps the lookup by
    /// subject a subquery run once per key: pulled up into a join, the planner could answer it
    /// by reading every open wait and hashing (`tests/plans_pg.rs`). A wait that takes several
    /// of the keys' types comes back once for each; the caller keeps one.
    static OPEN_WAITS_ON: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT w.* FROM unnest($1::text[], $2::text[], $3::text[]) AS k(ks, kj, kt) \
             CROSS JOIN LATERAL (SELECT {WAIT_COLUMNS} FROM waits \
             WHERE state = 'open' AND source = k.ks AND subject = k.kj \
             AND (types IS NULL OR strpos(types, k.kt) > 0) OFFSET 0) AS w \
             UNION ALL \
             SELECT {WAIT_COLUMNS} FROM waits \
             WHERE state = 'open' AND subject IS NULL AND source = ANY($1) \
             AND (types IS NULL OR EXISTS (SELECT 1 FROM unnest($3::text[]) AS t(kt) \
             WHERE strpos(types, t.kt) > 0))"
        )
    });

    pub(super) async fn open_waits_on_many(
        conn: &mut PgConnection,
        keys: &[(&str, &str, &str)],
    ) -> StoreResult<Vec<Vec<Wait>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        // A type as the serializer writes it inside the `types` column's array.
        let kinds = keys
            .iter()
            .map(|k| serde_json::to_string(k.2))
            .collect::<Result<Vec<String>, _>>()
            .map_err(|e| StoreError(format!("a type as JSON: {e}")))?;
        let mut distinct: HashSet<(&str, &str, &str)> = HashSet::with_capacity(keys.len());
        let (mut sources, mut subjects, mut types) = (Vec::new(), Vec::new(), Vec::new());
        for (key, kind) in keys.iter().zip(&kinds) {
            if distinct.insert((key.0, key.1, kind)) {
                sources.push(key.0);
                subjects.push(key.1);
                types.push(kind.as_str());
            }
        }
        let rows = sqlx::query(AssertSqlSafe(OPEN_WAITS_ON.as_str()))
            .bind(&sources)
            .bind(&subjects)
            .bind(&types)
            .fetch_all(conn)
            .await?;
        let mut decoded: Vec<Wait> = Vec::with_capacity(rows.len());
        let mut seen: HashSet<i64> = HashSet::with_capacity(rows.len());
        for row in &rows {
            let wait = wait_from_row(row)?;
            if seen.insert(wait.seq) {
                decoded.push(wait);
            }
        }
        let mut on: HashMap<(&str, &str), Vec<&Wait>> = HashMap::new();
        let mut any: HashMap<&str, Vec<&Wait>> = HashMap::new();
        for wait in &decoded {
            let source = wait.spec.source.as_str();
            match &wait.spec.subject {
                Some(subject) => on.entry((source, subject)).or_default().push(wait),
                None => any.entry(source).or_default().push(wait),
            }
        }
        Ok(keys
            .iter()
            .map(|&(source, subject, kind)| {
                let mut waits: Vec<Wait> = on
                    .get(&(source, subject))
                    .into_iter()
                    .chain(any.get(source))
                    .flatten()
                    .filter(|w| w.spec.takes_type(kind))
                    .map(|w| (*w).clone())
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

    /// The reads of a routing transaction in two statements: the waits locked in sequence
    /// order and then the jobs in id order, in one (the jobs' part has a one-time condition on
    /// the waits' part, so it starts only once they are locked: every other transaction takes
    /// them in that order; its count is selected so that it runs at all); then the ledger keys
    /// held, each a lookup of its own (`LIMIT 1`: as a semi-join, the planner hashed the keys
    /// and read the whole ledger). The ledger is read
    /// by a statement of its own so that it sees every ledger row committed by a router that
    /// held one of the locks: read with the locking statement's snapshot, from before the
    /// waits, those rows made the claims' insert lose its race, and under two edges routing
    /// the same events every round of a batch lost one
    /// (`look_back_registrations_racing_with_batches_keep_the_ledger`).
    pub(super) async fn lock_for_routing(
        conn: &mut PgConnection,
        seqs: &[i64],
        jobs: &[&str],
        keys: &[(&str, (&str, &str))],
    ) -> StoreResult<RoutingReads> {
        let row = sqlx::query(
            "WITH w AS (SELECT seq, state FROM waits WHERE seq = ANY($1) ORDER BY seq FOR UPDATE), \
             j AS (SELECT id FROM jobs WHERE id = ANY($2) AND (SELECT count(*) FROM w) >= 0 \
               ORDER BY id FOR NO KEY UPDATE) \
             SELECT ARRAY(SELECT seq FROM w ORDER BY seq) AS seqs, \
             ARRAY(SELECT state FROM w ORDER BY seq) AS states, \
             (SELECT count(*) FROM j) AS jobs",
        )
        .bind(seqs)
        .bind(jobs)
        .fetch_one(&mut *conn)
        .await?;
        let locked: Vec<i64> = row.try_get("seqs")?;
        let states: Vec<String> = row.try_get("states")?;
        if locked.len() != states.len() {
            return Err(StoreError(
                "the waits locked and their states differ in number".into(),
            ));
        }
        let states = locked
            .into_iter()
            .zip(states)
            .map(|(seq, state)| {
                WaitState::parse(&state)
                    .map(|state| (seq, state))
                    .ok_or_else(|| StoreError(format!("wait {seq} has the state {state:?}")))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let held = ledger_holds(conn, keys).await?;
        Ok((states, held))
    }

    /// No writes: the base of a [`Claims`] with one kind of row.
    pub(super) const NO_CLAIMS: Claims<'static> = Claims {
        ledgers: &[],
        closings: &[],
        records: &[],
        reached: &[],
        routed: &[],
    };

    /// Every write of a routing transaction in one statement (one round trip): the ledger rows,
    /// the waits closed, the audit records, the jobs reached and the events routed, each kind
    /// of row a data-modifying `WITH` part over arrays (an empty array writes nothing). The
    /// waits and jobs are locked by the caller already; the events' `unrouted` rows are locked
    /// here in sequence order, the order retention deletes them in. Returns how many ledger
    /// rows were added and how many waits were closed.
    ///
    /// The waits are reached by their places in the table (`ctid`), each found by its sequence
    /// number in a lookup of its own: joined to the batch as a whole, a plan made for a batch
    /// of 200 hashed it and read every wait (`tests/plans_pg.rs`, plans made per execution).
    /// A place found stays the wait's: the caller holds the waits locked or, if not, a wait
    /// updated meanwhile was closed by someone else and is skipped, as the check that it is
    /// open would skip it. That check compares with `(SELECT 'open')`, a value the planner
    /// does not see: with `state = 'open'` written out, every partial index on open waits
    /// qualified too, and the planner read a whole one when stale statistics said it was
    /// nearly empty.
    ///
    /// An event routed is found by the sequence number its router has; only one routed
    /// without it (`Store::route`) is looked up by identity, one key at a time (`OFFSET 0`
    /// keeps each lookup a subquery of its own: joined as a whole, the planner hashed the keys
    /// and read the whole events table whenever it believed that cheaper than the lookups).
    /// The `unrouted` rows are then deleted by their places in the table (`ctid`), which a TID
    /// scan visits in order: every statement that deletes them does so, retention included, so
    /// two of them wait for each other instead of deadlocking (deleted in the batch's order,
    /// they deadlocked with retention: `tests/stores_agree_pg.rs`). A row deleted meanwhile by
    /// another router is skipped; rows of `unrouted` are never updated.
    pub(super) async fn write_claims(
        conn: &mut PgConnection,
        claims: Claims<'_>,
    ) -> StoreResult<(u64, u64)> {
        let Claims {
            ledgers,
            closings,
            records,
            reached,
            routed,
        } = claims;
        let l_jobs: Vec<&str> = ledgers.iter().map(|r| r.0).collect();
        let l_sources: Vec<&str> = ledgers.iter().map(|r| r.1.0).collect();
        let l_ids: Vec<&str> = ledgers.iter().map(|r| r.1.1).collect();
        let l_waits: Vec<i64> = ledgers.iter().map(|r| r.2).collect();
        let c_seqs: Vec<i64> = closings.iter().map(|c| c.0).collect();
        let c_states: Vec<&str> = closings.iter().map(|c| c.1.state.as_str()).collect();
        let c_sources: Vec<Option<&str>> =
            closings.iter().map(|c| c.1.event.map(|e| e.0)).collect();
        let c_ids: Vec<Option<&str>> = closings.iter().map(|c| c.1.event.map(|e| e.1)).collect();
        let c_reasons: Vec<Option<&str>> = closings.iter().map(|c| c.1.reason).collect();
        let c_at: Vec<i64> = closings.iter().map(|c| c.1.at.0).collect();
        let c_data: Vec<Option<String>> = closings
            .iter()
            .map(|c| event_data_column(c.1.matched.map(|e| &**e)))
            .collect();
        let (a_at, a_actions, a_data) = audit_columns(records);
        let r_seqs: Vec<i64> = routed.iter().filter_map(|r| r.1).collect();
        let (r_sources, r_ids): (Vec<&str>, Vec<&str>) =
            routed.iter().filter(|r| r.1.is_none()).map(|r| r.0).unzip();
        let row = sqlx::query(
            "WITH l AS (INSERT INTO job_events (job_id, event_source, event_id, wait_seq) \
               SELECT j, s, e, w FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) \
               WITH ORDINALITY AS k(j, s, e, w, n) ORDER BY n ON CONFLICT DO NOTHING \
               RETURNING 1), \
             c AS (UPDATE waits SET state = c.st, event_source = c.es, event_id = c.ei, \
               reason = c.why, closed_at = c.at, event_data = c.data, looked_back = TRUE \
               FROM (SELECT c.*, w.place FROM unnest($5::bigint[], $6::text[], $7::text[], \
               $8::text[], $9::text[], $10::bigint[], $11::text[]) \
               AS c(seq, st, es, ei, why, at, data) CROSS JOIN LATERAL \
               (SELECT ctid AS place FROM waits WHERE seq = c.seq OFFSET 0) AS w) AS c \
               WHERE waits.ctid = c.place AND waits.state = (SELECT 'open') RETURNING 1), \
             a AS (INSERT INTO audit (at, action, data) SELECT a, b, c \
               FROM unnest($12::bigint[], $13::text[], $14::text[]) \
               WITH ORDINALITY AS k(a, b, c, n) ORDER BY n RETURNING 1), \
             o AS (UPDATE jobs SET outside_started = TRUE \
               WHERE id = ANY($15::text[]) AND NOT outside_started RETURNING 1), \
             r AS (DELETE FROM unrouted WHERE ctid = ANY(ARRAY(SELECT ctid FROM unrouted \
               WHERE seq = ANY($16::bigint[] || ARRAY(SELECT e.seq \
               FROM unnest($17::text[], $18::text[]) AS k(s, i) CROSS JOIN LATERAL \
               (SELECT seq FROM events WHERE source = k.s AND event_id = k.i OFFSET 0) AS e)))) \
               RETURNING 1) \
             SELECT (SELECT count(*) FROM l) AS added, (SELECT count(*) FROM c) AS closed, \
             (SELECT count(*) FROM a) + (SELECT count(*) FROM o) + (SELECT count(*) FROM r) \
             AS rest",
        )
        .bind(&l_jobs)
        .bind(&l_sources)
        .bind(&l_ids)
        .bind(&l_waits)
        .bind(&c_seqs)
        .bind(&c_states)
        .bind(&c_sources)
        .bind(&c_ids)
        .bind(&c_reasons)
        .bind(&c_at)
        .bind(&c_data)
        .bind(&a_at)
        .bind(&a_actions)
        .bind(&a_data)
        .bind(reached)
        .bind(&r_seqs)
        .bind(&r_sources)
        .bind(&r_ids)
        .fetch_one(conn)
        .await?;
        let count = |name: &str| -> StoreResult<u64> {
            let n: i64 = row.try_get(name)?;
            u64::try_from(n).map_err(|_| StoreError(format!("a negative count of {name}")))
        };
        Ok((count("added")?, count("closed")?))
    }

    /// Audit records as the three columns of the `audit` table.
    fn audit_columns<'a>(records: &[&'a AuditRecord]) -> (Vec<i64>, Vec<&'a str>, Vec<String>) {
        (
            records.iter().map(|r| r.at.0).collect(),
            records.iter().map(|r| r.action.as_str()).collect(),
            records.iter().map(|r| r.data.to_string()).collect(),
        )
    }

    /// Adds events (identities not retained yet) and, for each one added, its record of
    /// `records` (one per event, or none at all), in the events' order: one statement.
    pub(super) async fn insert_events(
        conn: &mut PgConnection,
        events: &[&Arc<Event>],
        records: &[&AuditRecord],
        received_at: Timestamp,
    ) -> StoreResult<Vec<Option<i64>>> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let column = |f: fn(&Event) -> &str| -> Vec<&str> { events.iter().map(|e| f(e)).collect() };
        let attributes: Vec<String> = events.iter().map(|e| e.attributes.to_string()).collect();
        let (a_at, a_actions, a_data) = audit_columns(records);
        // Inserted in identity order: two edges given the same events wait for each other on
        // the first they share instead of each holding one the other needs. The records join
        // the events added by position.
        let rows = sqlx::query(
            "WITH e AS (INSERT INTO events (source, event_id, type, action, subject, text, \
               attributes, received_at) \
               SELECT s, e, t, a, j, x, y, $8 FROM unnest($1::text[], $2::text[], \
               $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) \
               AS k(s, e, t, a, j, x, y) ORDER BY s, e \
               ON CONFLICT (source, event_id) DO NOTHING RETURNING source, event_id, seq), \
             u AS (INSERT INTO unrouted (seq, source, received_at) SELECT seq, source, $8 FROM e), \
             r AS (INSERT INTO audit (at, action, data) SELECT r.a, r.b, r.c \
               FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(s, e, n) \
               JOIN unnest($9::bigint[], $10::text[], $11::text[]) WITH ORDINALITY \
               AS r(a, b, c, n) ON r.n = k.n \
               JOIN e ON e.source = k.s AND e.event_id = k.e ORDER BY k.n) \
             SELECT source, event_id, seq FROM e",
        )
        .bind(column(|e| &e.source))
        .bind(column(|e| &e.id))
        .bind(column(|e| &e.kind))
        .bind(column(|e| &e.action))
        .bind(column(|e| &e.subject))
        .bind(column(|e| &e.text))
        .bind(&attributes)
        .bind(received_at.0)
        .bind(&a_at)
        .bind(&a_actions)
        .bind(&a_data)
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
