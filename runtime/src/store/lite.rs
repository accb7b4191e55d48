//! The `SQLite` store's side of the connection: it lives on the thread that owns the
//! connection ([`super::sqlite`]) and runs the statements of `sql.rs` there directly, without a
//! round trip to another thread per statement.
//!
//! [`Lite`] is a [`Backend`] whose transactions are steps inside the batch's transaction, which
//! the thread has opened before it runs them: each step's writes are committed with the batch,
//! or taken back alone if the step fails. A step runs first without a savepoint of its own
//! (*unguarded*): a savepoint makes `SQLite` copy every page the step touches to its
//! sub-journal, which was a fifth of the writer's time. A step that is taken back without
//! having written anything needs no undo; one that wrote marks the batch *spoiled*, and the
//! thread rolls the batch back and runs its steps again, each in a savepoint (*guarded*), so
//! the result is the one savepoints give (`sqlite.rs`, `run_group`). [`query`] builds a
//! statement the way `sqlx::query` does, so the one [`sql_rows!`] implements the row contract
//! here too.

use std::borrow::Cow;
use std::future::{Ready, ready};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::Connection;
use rusqlite::types::{ToSql, Value};

use super::rows::Backend;
use super::sql::{Columns, ROUTED_COLUMN, sql_rows};
use super::{StoreError, StoreResult};

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError(e.to_string())
    }
}

/// Prepared statements kept per connection (the row contract has fewer than this).
const STATEMENT_CACHE: usize = 96;

/// A connection owned by one thread (the lock is only there because a [`Backend`] is `Sync`;
/// nobody else takes it).
#[derive(Clone)]
pub(super) struct Lite {
    conn: Arc<Mutex<Connection>>,
    /// How many groups the thread has begun (tests see which steps shared one).
    groups: Arc<AtomicU64>,
    /// Whether steps run in savepoints of their own (see the module's comment).
    guarded: Arc<AtomicBool>,
    /// Whether an unguarded step was taken back after it wrote: its group must run again.
    spoiled: Arc<AtomicBool>,
    /// How many checkpoints the thread has run for a writer (tests see that they happen).
    checkpoints: Arc<AtomicU64>,
}

impl Lite {
    pub(super) fn new(conn: Connection) -> Self {
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Self {
            conn: Arc::new(Mutex::new(conn)),
            groups: Arc::new(AtomicU64::new(0)),
            guarded: Arc::new(AtomicBool::new(true)),
            spoiled: Arc::new(AtomicBool::new(false)),
            checkpoints: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Copies the WAL into the database as far as no reader needs it (a passive checkpoint,
    /// which never waits for the writer), and counts it.
    pub(super) fn checkpoint(&self) -> StoreResult<()> {
        self.checkpoints.fetch_add(1, Ordering::Relaxed);
        self.conn()
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// How many checkpoints the thread has run.
    #[cfg(test)]
    pub(super) fn checkpoints(&self) -> u64 {
        self.checkpoints.load(Ordering::Relaxed)
    }

    /// Runs the steps that follow each in a savepoint (`true`) or without one (`false`), and
    /// clears the spoiled mark.
    pub(super) fn guard(&self, guarded: bool) {
        self.guarded.store(guarded, Ordering::Relaxed);
        self.spoiled.store(false, Ordering::Relaxed);
    }

    /// Whether steps run in savepoints of their own.
    pub(super) fn guarded(&self) -> bool {
        self.guarded.load(Ordering::Relaxed)
    }

    /// Whether an unguarded step wrote and was then taken back since [`Lite::guard`].
    pub(super) fn spoiled(&self) -> bool {
        self.spoiled.load(Ordering::Relaxed)
    }

    pub(super) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A statement that panicked left nothing half-written in Rust: SQLite undoes the rest.
        self.conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts a group begun.
    pub(super) fn next_group(&self) {
        self.groups.fetch_add(1, Ordering::Relaxed);
    }

    /// The number of the group running (or last run).
    #[cfg(test)]
    pub(super) fn group(&self) -> u64 {
        self.groups.load(Ordering::Relaxed)
    }

    /// Runs statements without parameters (migrations).
    pub(super) fn batch(&self, sql: &str) -> StoreResult<()> {
        Ok(self.conn().execute_batch(sql)?)
    }

    /// Runs one statement without parameters and without rows (transaction control), prepared
    /// once.
    pub(super) fn control(&self, sql: &'static str) -> StoreResult<()> {
        self.conn().prepare_cached(sql)?.raw_execute()?;
        Ok(())
    }

    /// Takes back a step's savepoint.
    fn undo_step(&self) -> StoreResult<()> {
        self.control("ROLLBACK TO step")?;
        self.control("RELEASE step")
    }
}

/// A step's transaction: a savepoint inside the batch's transaction, taken back if dropped
/// before [`super::rows::Rows::commit`].
pub(super) struct LiteTx<'a> {
    lite: &'a Lite,
    open: bool,
    /// Unguarded: the connection's count of changed rows when the step began (`None`: the
    /// step has its savepoint).
    unguarded_at: Option<u64>,
}

/// Reads on the thread's connection (inside the batch's transaction: they see its writes).
pub(super) struct LiteRead<'a> {
    lite: &'a Lite,
}

impl LiteTx<'_> {
    fn conn(&self) -> &Lite {
        self.lite
    }

    fn finish(mut self) -> Ready<StoreResult<()>> {
        self.open = false;
        if self.unguarded_at.is_some() {
            return ready(Ok(()));
        }
        ready(self.lite.control("RELEASE step"))
    }

    fn abort(mut self) -> Ready<StoreResult<()>> {
        self.open = false;
        ready(self.take_back())
    }

    /// Takes the step's writes back: its savepoint, or, unguarded, nothing if it wrote
    /// nothing and the whole group (run again guarded) if it did.
    fn take_back(&self) -> StoreResult<()> {
        match self.unguarded_at {
            None => self.lite.undo_step(),
            Some(at) => {
                if self.lite.conn().total_changes() != at {
                    self.lite.spoiled.store(true, Ordering::Relaxed);
                }
                Ok(())
            }
        }
    }
}

impl Drop for LiteTx<'_> {
    fn drop(&mut self) {
        if self.open {
            // A step that failed midway: its writes go, the batch's other steps stay. If even
            // this fails, the batch's commit reports the broken connection to every step.
            let _ = self.take_back();
        }
    }
}

impl LiteRead<'_> {
    fn conn(&self) -> &Lite {
        self.lite
    }
}

impl Backend for Lite {
    type Tx<'a> = LiteTx<'a>;
    type Read<'a> = LiteRead<'a>;

    async fn begin(&self) -> StoreResult<LiteTx<'_>> {
        let unguarded_at = if self.guarded() {
            self.control("SAVEPOINT step")?;
            None
        } else {
            Some(self.conn().total_changes())
        };
        Ok(LiteTx {
            lite: self,
            open: true,
            unguarded_at,
        })
    }

    async fn read(&self) -> StoreResult<LiteRead<'_>> {
        Ok(LiteRead { lite: self })
    }
}

/// A statement's text: a literal, or one built by `select_waits!`.
pub(super) struct Sql(Cow<'static, str>);

impl From<&'static str> for Sql {
    fn from(sql: &'static str) -> Self {
        Sql(Cow::Borrowed(sql))
    }
}

impl From<sqlx::AssertSqlSafe<String>> for Sql {
    fn from(sql: sqlx::AssertSqlSafe<String>) -> Self {
        Sql(Cow::Owned(sql.0))
    }
}

/// A statement with its parameters (`$1`, `$2`, … in the order bound).
pub(super) struct Query {
    sql: Sql,
    params: Vec<Value>,
    bad: Option<String>,
}

/// Starts a statement, as `sqlx::query` does.
pub(super) fn query(sql: impl Into<Sql>) -> Query {
    Query {
        sql: sql.into(),
        params: Vec::new(),
        bad: None,
    }
}

/// What a statement changed.
pub(super) struct Done(u64);

impl Done {
    pub(super) fn rows_affected(&self) -> u64 {
        self.0
    }
}

/// A row read, by column name.
pub(super) struct LiteRow {
    names: Arc<[String]>,
    values: Vec<Value>,
}

/// The names `$1` … `$16`, looked up without formatting.
const PARAMETERS: [&str; 16] = [
    "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15",
    "$16",
];

impl Query {
    pub(super) fn bind<T: ToSql>(mut self, value: T) -> Self {
        match value.to_sql() {
            Ok(out) => self.params.push(match out {
                rusqlite::types::ToSqlOutput::Borrowed(v) => v.try_into().unwrap_or(Value::Null),
                rusqlite::types::ToSqlOutput::Owned(v) => v,
                _ => Value::Null,
            }),
            Err(e) => self.bad = Some(e.to_string()),
        }
        self
    }

    /// Runs the statement and hands its rows to `each`; returns how many rows it changed.
    fn run(self, lite: &Lite, mut each: impl FnMut(LiteRow)) -> StoreResult<u64> {
        if let Some(bad) = self.bad {
            return Err(StoreError(bad));
        }
        let conn = lite.conn();
        let mut statement = conn.prepare_cached(&self.sql.0)?;
        for (i, value) in self.params.iter().enumerate() {
            let name = PARAMETERS
                .get(i)
                .ok_or_else(|| StoreError("more than 16 parameters".into()))?;
            // A parameter the statement does not use is skipped, as SQLite would leave it.
            if let Some(index) = statement.parameter_index(name)? {
                statement.raw_bind_parameter(index, value)?;
            }
        }
        let names: Arc<[String]> = statement
            .column_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let width = names.len();
        let mut rows = statement.raw_query();
        while let Some(row) = rows.next()? {
            let mut values = Vec::with_capacity(width);
            for i in 0..width {
                values.push(row.get::<_, Value>(i)?);
            }
            each(LiteRow {
                names: names.clone(),
                values,
            });
        }
        drop(rows);
        Ok(conn.changes())
    }

    pub(super) fn execute(self, lite: &Lite) -> Ready<StoreResult<Done>> {
        ready(self.run(lite, |_| {}).map(Done))
    }

    pub(super) fn fetch_all(self, lite: &Lite) -> Ready<StoreResult<Vec<LiteRow>>> {
        let mut all = Vec::new();
        ready(self.run(lite, |row| all.push(row)).map(|_| all))
    }

    pub(super) fn fetch_optional(self, lite: &Lite) -> Ready<StoreResult<Option<LiteRow>>> {
        let mut first = None;
        ready(
            self.run(lite, |row| {
                first.get_or_insert(row);
            })
            .map(|_| first),
        )
    }

    pub(super) fn fetch_one(self, lite: &Lite) -> Ready<StoreResult<LiteRow>> {
        ready(match self.fetch_optional(lite).into_inner() {
            Ok(Some(row)) => Ok(row),
            Ok(None) => Err(StoreError("a statement returned no row".into())),
            Err(e) => Err(e),
        })
    }
}

impl LiteRow {
    fn value(&self, column: &str) -> StoreResult<&Value> {
        self.names
            .iter()
            .position(|n| n == column)
            .map(|i| &self.values[i])
            .ok_or_else(|| StoreError(format!("no column `{column}`")))
    }

    fn mistyped(column: &str) -> StoreError {
        StoreError(format!("corrupt row: column `{column}` has the wrong type"))
    }
}

impl Columns for LiteRow {
    fn int(&self, column: &str) -> StoreResult<i64> {
        self.opt_int(column)?.ok_or_else(|| Self::mistyped(column))
    }

    fn opt_int(&self, column: &str) -> StoreResult<Option<i64>> {
        match self.value(column)? {
            Value::Null => Ok(None),
            Value::Integer(i) => Ok(Some(*i)),
            _ => Err(Self::mistyped(column)),
        }
    }

    fn text(&self, column: &str) -> StoreResult<String> {
        self.opt_text(column)?.ok_or_else(|| Self::mistyped(column))
    }

    fn opt_text(&self, column: &str) -> StoreResult<Option<String>> {
        match self.value(column)? {
            Value::Null => Ok(None),
            Value::Text(t) => Ok(Some(t.clone())),
            _ => Err(Self::mistyped(column)),
        }
    }

    fn boolean(&self, column: &str) -> StoreResult<bool> {
        Ok(self.int(column)? != 0)
    }
}

/// `sqlite_sequence` remembers the highest sequence ever given, even after a purge.
const LAST_SEQ: &str = "SELECT seq FROM sqlite_sequence WHERE name = 'events'";

sql_rows!(read: LiteRead<'_>, query: query, last_seq: LAST_SEQ, events: ROUTED_COLUMN);
sql_rows!(
    write: LiteTx<'_>, query: query, last_seq: LAST_SEQ, events: ROUTED_COLUMN, lock_fires: None
);
