//! The embedded backend on `SQLite` (sqlx): one file, WAL journal, migrations embedded in the
//! binary. Every write transaction is `BEGIN IMMEDIATE`, which takes the write lock up front, so
//! write transactions run one at a time and a conditional write's condition holds until the
//! commit. Reads run on the other pooled connections beside the writer (WAL).

use std::borrow::Cow;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::Sqlite;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};

use super::StoreResult;
use super::rows::Backend;
use super::sql::{SqlRead, SqlTx, columns, sql_rows};

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
        migration(
            3,
            "routing",
            include_str!("../../migrations/0003_routing.sql"),
        ),
        migration(
            4,
            "kept_events",
            include_str!("../../migrations/0004_kept_events.sql"),
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

/// A write transaction on the `SQLite` store.
pub type SqliteTx = SqlTx<Sqlite>;

/// A read view on the `SQLite` store: one pooled connection.
pub type SqliteRead = SqlRead<Sqlite>;

impl Backend for SqliteStore {
    type Tx<'a> = SqliteTx;
    type Read<'a> = SqliteRead;

    async fn begin(&self) -> StoreResult<SqliteTx> {
        Ok(SqlTx(self.pool.begin_with("BEGIN IMMEDIATE").await?))
    }

    async fn read(&self) -> StoreResult<SqliteRead> {
        Ok(SqlRead(self.pool.acquire().await?))
    }
}

/// `sqlite_sequence` remembers the highest sequence ever given, even after a purge.
const LAST_SEQ: &str = "SELECT seq FROM sqlite_sequence WHERE name = 'events'";

columns!(SqliteRow);
sql_rows!(read: SqliteRead, last_seq: LAST_SEQ);
sql_rows!(write: SqliteTx, last_seq: LAST_SEQ, lock_fires: None);
