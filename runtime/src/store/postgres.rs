//! The backend on `PostgreSQL` (sqlx), shared by any number of edges: its own migrations
//! (`runtime/migrations/postgres/`), the statements of `sql.rs`, transactions under READ
//! COMMITTED. A conditional write there is a compare-and-set with one winner: a second
//! `UPDATE … WHERE state = 'open'` on a row that a concurrent transaction changed waits for it
//! and re-checks the condition on the new row, and `INSERT … ON CONFLICT DO NOTHING` waits for a
//! concurrent inserter of the same key and then skips. Fire recorders of one routine hold its
//! `fire_locks` row, so the hourly count they read stays true until they commit. No advisory
//! lock is taken outside the migrator's (which the session's end releases).

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions, PgRow};
use sqlx::{Connection, Postgres};

use super::rows::Backend;
use super::sql::{SqlRead, SqlTx, columns, sql_rows};
use super::{StoreError, StoreResult};

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
sql_rows!(read: PostgresRead, query: sqlx::query, last_seq: LAST_SEQ);
sql_rows!(write: PostgresTx, query: sqlx::query, last_seq: LAST_SEQ, lock_fires: Some(LOCK_FIRES));
