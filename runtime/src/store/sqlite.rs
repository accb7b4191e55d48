//! The embedded backend on `SQLite`: one file, WAL journal, migrations embedded in the binary.
//!
//! Each store has two threads, each owning one connection ([`super::lite`]): the writer runs
//! every step that writes, the reader every step that only reads (WAL lets it read beside the
//! writer). A step is sent to its thread whole and run there, statement after statement, with
//! no round trip per statement.
//!
//! The writer commits in groups: it takes the steps queued for it (at most [`MAX_BATCH`]), opens
//! one `BEGIN IMMEDIATE` transaction, runs each step in a savepoint of its own (a step that fails
//! takes back only its writes), commits, and only then answers every step of the group. So
//! acknowledged still means committed, and one commit serves as many steps as arrived while
//! the previous group ran. The write lock is held for the group, so a conditional write's
//! condition holds until its commit, against this store's steps and any other connection's.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::pin::pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, mpsc};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use rusqlite::Connection;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use tokio::sync::oneshot;

use super::lite::Lite;
#[cfg(test)]
use super::rows;
use super::{
    Candidate, Claim, FireLimit, FireOutcome, Received, Store, StoreError, StoreResult, ToRoute,
    WaitInsert,
};
use crate::clock::Timestamp;
use crate::faults::{Faults, Faulty};
use crate::model::{
    AuditRecord, Event, Fire, Job, Output, StepRecord, StoredEvent, Wait, WaitState,
};

/// Most steps committed by one transaction: a bound on how long the write lock is held and on
/// how many answers wait for one commit.
pub const MAX_BATCH: usize = 256;

/// Each connection's page cache, in KiB (negative: `cache_size` takes kibibytes so).
const CACHE_KIB: i64 = -32_768;

/// Pages in the WAL after a commit from which the writer asks the reader's thread to copy them
/// into the database (`SQLite`'s own default for the writer's automatic checkpoint).
const CHECKPOINT_PAGES: i32 = 1000;

thread_local! {
    /// The pages in the WAL after the last commit on this thread's connection (set by the
    /// writer's WAL hook, read after the commit).
    static WAL_PAGES: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

/// The writer's WAL hook: notes the WAL's size, and checkpoints nothing itself.
#[allow(clippy::unnecessary_wraps)] // the hook's type
fn note_wal_pages(_: &rusqlite::hooks::Wal, pages: std::ffi::c_int) -> rusqlite::Result<()> {
    WAL_PAGES.with(|p| p.set(pages));
    Ok(())
}

/// How long a transaction waits for another connection's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The schema's migrations, in order.
const MIGRATIONS: [(i64, &str, &str); 7] = [
    (1, "waits", include_str!("../../migrations/0001_waits.sql")),
    (
        2,
        "outputs",
        include_str!("../../migrations/0002_outputs.sql"),
    ),
    (
        3,
        "routing",
        include_str!("../../migrations/0003_routing.sql"),
    ),
    (
        4,
        "kept_events",
        include_str!("../../migrations/0004_kept_events.sql"),
    ),
    (
        5,
        "events_by_source",
        include_str!("../../migrations/0005_events_by_source.sql"),
    ),
    (
        6,
        "looked_back",
        include_str!("../../migrations/0006_looked_back.sql"),
    ),
    (
        7,
        "deliveries",
        include_str!("../../migrations/0007_deliveries.sql"),
    ),
];

fn migrator() -> Migrator {
    super::sql::migrator(&MIGRATIONS)
}

/// The `SQLite` store. Cheap to clone (two queues); its threads stop when the last clone is
/// dropped or [`SqliteStore::close`] is called.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    writer: Lane,
    reader: Lane,
}

/// A thread's queue.
#[derive(Clone, Debug)]
struct Lane(mpsc::Sender<Message>);

/// A step queued for a thread, with its caller's answer.
trait Queued: Send {
    /// Runs the step and keeps its result (a group run again runs it again: the result of the
    /// last run is the one answered).
    fn run(&mut self, lite: &Lite);
    /// Whether the step runs behind a crash switch (tests): such a step always runs guarded,
    /// so a crash is never run twice.
    fn faulty(&self) -> bool;
    /// Makes the step's result an error (its writes went with its group's transaction),
    /// unless it is one already.
    fn lost(&mut self, why: &str);
    /// Answers with the step's result, or with the group's commit failure if there was one.
    fn answer(self: Box<Self>, failed: Option<&StoreError>);
    /// Answers without running (the group's transaction could not begin).
    fn fail(self: Box<Self>, error: &StoreError);
}

/// A step and where its result goes. The step goes back with the result, so the copies of its
/// arguments are freed on the caller's thread, where they were allocated: freed on the store's
/// thread, they took a tenth of its time (and the allocator's locks both threads then take).
struct Call<T, F> {
    step: F,
    faults: Option<Arc<Faults>>,
    answer: oneshot::Sender<(StoreResult<T>, F)>,
    out: Option<StoreResult<T>>,
}

impl<T, F> Queued for Call<T, F>
where
    T: Send + 'static,
    F: FnMut(Db<'_>) -> StoreResult<T> + Send,
{
    fn run(&mut self, lite: &Lite) {
        let db = Db::new(lite, self.faults.clone());
        let step = &mut self.step;
        self.out = Some(
            catch_unwind(AssertUnwindSafe(|| step(db)))
                .unwrap_or_else(|_| Err(StoreError("a store step panicked".into()))),
        );
    }

    fn faulty(&self) -> bool {
        self.faults.is_some()
    }

    fn lost(&mut self, why: &str) {
        if !matches!(self.out, Some(Err(_))) {
            self.out = Some(Err(StoreError(why.to_owned())));
        }
    }

    fn answer(self: Box<Self>, failed: Option<&StoreError>) {
        let out = match (failed, self.out) {
            (Some(e), _) => Err(StoreError(e.0.clone())),
            (None, Some(out)) => out,
            (None, None) => Err(StoreError("a store step did not run".into())),
        };
        let _ = self.answer.send((out, self.step));
    }

    fn fail(self: Box<Self>, error: &StoreError) {
        let _ = self
            .answer
            .send((Err(StoreError(error.0.clone())), self.step));
    }
}

enum Message {
    Step(Box<dyn Queued>),
    /// Copy the WAL into the database (to the reader's thread, from the writer's), then mark
    /// the checkpoint done.
    Checkpoint(Arc<AtomicU8>),
    Stop(oneshot::Sender<()>),
}

/// Where a writer sends its checkpoints: the reader's queue, and the checkpoint's state there
/// ([`IDLE`], [`ASKED`] or [`DONE`]).
#[derive(Clone, Debug)]
struct Checkpointer {
    lane: Lane,
    state: Arc<AtomicU8>,
}

/// No checkpoint asked for.
const IDLE: u8 = 0;
/// A checkpoint is queued on, or running on, the reader's thread.
const ASKED: u8 = 1;
/// The reader's thread has copied the WAL as far as it went when it began.
const DONE: u8 = 2;

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path` and brings its schema up to date.
    pub async fn open(path: &Path) -> StoreResult<Self> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT);
        // The migrations run through sqlx, whose table of applied migrations files made by
        // earlier versions already have.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await?;
        migrator().run(&pool).await?;
        pool.close().await;
        let connect = |path: &Path| -> StoreResult<Lite> {
            let conn = Connection::open(path)?;
            conn.busy_timeout(BUSY_TIMEOUT)?;
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            // The default 2 MiB page cache holds little of 100,000 waits and their indexes;
            // every miss is a read from the operating system.
            conn.pragma_update(None, "cache_size", CACHE_KIB)?;
            Ok(Lite::new(conn))
        };
        // The writer's commits leave most of the WAL to the reader's thread to copy into the
        // database (a passive checkpoint, which never holds up the writer): copied by the
        // writer at every thousand pages, as SQLite does by default, it took a twelfth of the
        // writer's time under load, while the reader's thread is idle when events arrive. The
        // writer then copies what was committed meanwhile (little), so that its next
        // transaction starts the WAL over: SQLite restarts a WAL only when a writer begins
        // with every frame copied, which a checkpoint running beside a busy writer never sees.
        let reader = Lane::spawn("oz-sqlite-read", connect(path)?, "BEGIN", None)?;
        let writing = connect(path)?;
        writing.conn().wal_hook(Some(note_wal_pages));
        let checkpointer = Checkpointer {
            lane: reader.clone(),
            state: Arc::new(AtomicU8::new(IDLE)),
        };
        let writer = Lane::spawn(
            "oz-sqlite-write",
            writing,
            "BEGIN IMMEDIATE",
            Some(checkpointer),
        )?;
        Ok(Self { writer, reader })
    }

    /// A private in-memory database: one connection, whose thread runs reads and writes.
    // Async like `open`, which callers use it in place of.
    #[allow(clippy::unused_async)]
    pub async fn in_memory() -> StoreResult<Self> {
        let lite = Lite::new(Connection::open_in_memory()?);
        for (_, _, sql) in MIGRATIONS {
            lite.batch(sql)?;
        }
        let lane = Lane::spawn("oz-sqlite-mem", lite, "BEGIN IMMEDIATE", None)?;
        Ok(Self {
            writer: lane.clone(),
            reader: lane,
        })
    }

    /// Stops the store's threads once the steps queued before this call are answered (a
    /// graceful stop); later steps fail.
    pub async fn close(&self) {
        for lane in [&self.writer, &self.reader] {
            let (tx, rx) = oneshot::channel();
            if lane.0.send(Message::Stop(tx)).is_ok() {
                let _ = rx.await;
            }
        }
    }

    fn threads(&self) -> Threads<'_> {
        Threads {
            store: self,
            faults: None,
        }
    }
}

impl Faulty<SqliteStore> {
    fn threads(&self) -> Threads<'_> {
        Threads {
            store: self.inner(),
            faults: Some(self.faults()),
        }
    }
}

/// A store's threads, and the crash switch its steps run behind, if any.
struct Threads<'a> {
    store: &'a SqliteStore,
    faults: Option<&'a Arc<Faults>>,
}

impl Threads<'_> {
    async fn write<T: Send + 'static>(
        &self,
        step: impl FnMut(Db<'_>) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        self.store.writer.run(self.faults.cloned(), step).await
    }

    async fn read<T: Send + 'static>(
        &self,
        step: impl FnMut(Db<'_>) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        self.store.reader.run(self.faults.cloned(), step).await
    }
}

/// The backend a step runs on, on its thread: the connection, or the connection behind a
/// crash switch.
enum Db<'a> {
    Plain(&'a Lite),
    Faulty(Faulty<Lite>),
}

impl<'a> Db<'a> {
    fn new(lite: &'a Lite, faults: Option<Arc<Faults>>) -> Self {
        match faults {
            None => Db::Plain(lite),
            Some(faults) => Db::Faulty(Faulty::new(lite.clone(), faults)),
        }
    }
}

/// Runs `$call` (a step of the semantics on backend `$b`) to its end on whichever backend `$db`
/// is.
macro_rules! on {
    ($db:expr, |$b:ident| $call:expr) => {
        match $db {
            Db::Plain($b) => now($call),
            Db::Faulty(ref $b) => now($call),
        }
    };
}

impl Lane {
    /// `name` is the thread's name, at most 15 bytes: Linux keeps no more, and profilers and
    /// `route_bench`'s CPU per thread tell the writer from the reader by it.
    fn spawn(
        name: &str,
        lite: Lite,
        begin: &'static str,
        checkpointer: Option<Checkpointer>,
    ) -> StoreResult<Self> {
        debug_assert!(name.len() <= 15, "thread name {name} is cut by the kernel");
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let stopped = serve(&lite, &rx, begin, checkpointer.as_ref());
                // The connection closes before a stop is answered, so the file is left whole
                // (the last connection out checkpoints the WAL and removes it).
                drop(lite);
                if let Some(done) = stopped {
                    let _ = done.send(());
                }
            })
            .map_err(|e| StoreError(format!("cannot start the store's thread: {e}")))?;
        Ok(Lane(tx))
    }

    async fn run<T: Send + 'static>(
        &self,
        faults: Option<Arc<Faults>>,
        step: impl FnMut(Db<'_>) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let (out, step) = self
            .queue(faults, step)?
            .await
            .map_err(|_| StoreError("the store's thread stopped".into()))?;
        drop(step);
        out
    }

    /// Queues a step; its result (and the step) arrive on the receiver once its group is
    /// committed.
    fn queue<T, F>(
        &self,
        faults: Option<Arc<Faults>>,
        step: F,
    ) -> StoreResult<oneshot::Receiver<(StoreResult<T>, F)>>
    where
        T: Send + 'static,
        F: FnMut(Db<'_>) -> StoreResult<T> + Send + 'static,
    {
        let (answer, rx) = oneshot::channel();
        let step = Box::new(Call {
            step,
            faults,
            answer,
            out: None,
        });
        self.0
            .send(Message::Step(step))
            .map_err(|_| StoreError("the store is closed".into()))?;
        Ok(rx)
    }
}

/// A thread's loop: takes what is queued (up to [`MAX_BATCH`] steps), runs it in one
/// transaction opened with `begin`, commits, answers; with a `checkpointer`, asks it to copy
/// the WAL once a commit leaves [`CHECKPOINT_PAGES`] or more there. Ends when every queue handle
/// is dropped, or at a stop message once the steps before it are answered (returning the
/// stop's answer).
fn serve(
    lite: &Lite,
    queue: &mpsc::Receiver<Message>,
    begin: &'static str,
    checkpointer: Option<&Checkpointer>,
) -> Option<oneshot::Sender<()>> {
    let mut stop = None;
    while stop.is_none() {
        let Ok(first) = queue.recv() else {
            return None;
        };
        let mut steps = Vec::new();
        let mut checkpoint = None;
        let mut next = Some(first);
        while let Some(message) = next.take() {
            match message {
                Message::Step(step) => steps.push(step),
                Message::Checkpoint(asked) => {
                    checkpoint = Some(asked);
                    break;
                }
                Message::Stop(done) => {
                    stop = Some(done);
                    break;
                }
            }
            if steps.len() < MAX_BATCH {
                next = queue.try_recv().ok();
            }
        }
        run_group(lite, steps, begin);
        if let Some(state) = checkpoint {
            // A failure leaves the WAL for the next one (or for the last connection's close).
            let _ = lite.checkpoint();
            state.store(DONE, Ordering::Release);
        }
        if let Some(to) = checkpointer {
            keep_wal_short(lite, to);
        }
    }
    stop
}

/// After a writer's group: once the WAL holds [`CHECKPOINT_PAGES`], asks the reader's thread to
/// copy it; once that is done, copies the rest itself, so the next transaction restarts it.
fn keep_wal_short(lite: &Lite, to: &Checkpointer) {
    if WAL_PAGES.with(std::cell::Cell::get) < CHECKPOINT_PAGES {
        // A WAL this short after the reader's checkpoint was restarted by a commit since: the
        // next thousand pages go to the reader again.
        let _ = to
            .state
            .compare_exchange(DONE, IDLE, Ordering::AcqRel, Ordering::Acquire);
        return;
    }
    match to.state.load(Ordering::Acquire) {
        IDLE => {
            to.state.store(ASKED, Ordering::Release);
            if to
                .lane
                .0
                .send(Message::Checkpoint(to.state.clone()))
                .is_err()
            {
                // The reader has stopped: the writer copies the WAL itself.
                to.state.store(DONE, Ordering::Release);
            }
        }
        DONE => {
            let _ = lite.checkpoint();
            WAL_PAGES.with(|p| p.set(0));
            to.state.store(IDLE, Ordering::Release);
        }
        _ => {}
    }
}

/// Runs `steps` in one transaction and answers each after the commit. The steps run
/// unguarded (no savepoint each, see `lite.rs`) until one is taken back after it wrote; then the
/// transaction is rolled back and the group runs again from its first step, every step in a
/// savepoint of its own, which is what the first run would have left with savepoints. Steps
/// are deterministic in the database's state, so the second run answers for both. A step
/// after which `SQLite` has ended the transaction itself (an I/O error, a full disk, an
/// interrupt, an `OR ROLLBACK` conflict) is answered with that error, and the group runs again
/// without it: otherwise the steps after it would run outside any transaction, each
/// committing by itself, and then be answered with the failed `COMMIT`.
fn run_group(lite: &Lite, mut steps: Vec<Box<dyn Queued>>, begin: &'static str) {
    if steps.is_empty() {
        return;
    }
    if let Err(e) = lite.control(begin) {
        for step in steps {
            step.fail(&e);
        }
        return;
    }
    lite.next_group();
    lite.guard(false);
    // Steps whose statement made SQLite end the whole transaction: answered with their error,
    // left out when the group runs again.
    let mut dropped = vec![false; steps.len()];
    let mut i = 0;
    while i < steps.len() {
        if dropped[i] {
            i += 1;
            continue;
        }
        let step = &mut steps[i];
        if !lite.guarded() && step.faulty() {
            lite.guard(true);
        }
        step.run(lite);
        let ended = lite.conn().is_autocommit();
        if ended {
            // An I/O error, a full disk, an interrupt or an `OR ROLLBACK` conflict rolls back
            // the whole transaction, and a statement after it would commit by itself: this
            // step is answered with the error, and the others run again in a new transaction.
            step.lost("SQLite rolled back the transaction of this step's group");
            dropped[i] = true;
        }
        if ended || (!lite.guarded() && lite.spoiled()) {
            // Back to the group's start, then every step so far again, guarded.
            let _ = lite.control("ROLLBACK");
            if let Err(e) = lite.control(begin) {
                answer_all(steps, &dropped, Some(&e));
                return;
            }
            lite.guard(true);
            i = 0;
            continue;
        }
        i += 1;
    }
    lite.guard(true);
    let failed = lite.control("COMMIT").err();
    if failed.is_some() {
        let _ = lite.control("ROLLBACK");
    }
    answer_all(steps, &dropped, failed.as_ref());
}

/// Answers a group's steps: with `failed` if the group's transaction failed, except the
/// dropped ones, whose answer is their own error whatever became of the group.
fn answer_all(steps: Vec<Box<dyn Queued>>, dropped: &[bool], failed: Option<&StoreError>) {
    for (step, &dropped) in steps.into_iter().zip(dropped) {
        step.answer(if dropped { None } else { failed });
    }
}

/// Runs a step's future to its end on the store's thread: every statement there completes
/// before its call returns, so the future never waits.
fn now<T>(step: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
    match pin!(step).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => Err(StoreError("a store step waited on its own thread".into())),
    }
}

/// Implements [`Store`] for a handle on the store's threads: every step runs the store's
/// semantics (`semantics.rs`, over [`Lite`], behind the crash switch if the handle has one) on
/// one of the threads, with its own copies of the arguments: writes on the writer, in its group
/// transactions; reads on the reader.
macro_rules! threaded_store {
    ($ty:ty) => {
        impl Store for $ty {
            async fn insert_job(&self, job: &Job) -> StoreResult<bool> {
                let job = job.clone();
                self.threads()
                    .write(move |db| on!(db, |b| Store::insert_job(b, &job)))
                    .await
            }

            async fn job(&self, id: &str) -> StoreResult<Option<Job>> {
                let id = id.to_owned();
                self.threads()
                    .read(move |db| on!(db, |b| Store::job(b, &id)))
                    .await
            }

            async fn mark_outside_started(&self, id: &str) -> StoreResult<()> {
                let id = id.to_owned();
                self.threads()
                    .write(move |db| on!(db, |b| Store::mark_outside_started(b, &id)))
                    .await
            }

            async fn insert_wait(&self, wait: &Wait) -> StoreResult<WaitInsert> {
                let wait = wait.clone();
                self.threads()
                    .write(move |db| on!(db, |b| Store::insert_wait(b, &wait)))
                    .await
            }

            async fn wait(&self, job: &str, name: &str) -> StoreResult<Option<Wait>> {
                let (job, name) = (job.to_owned(), name.to_owned());
                self.threads()
                    .read(move |db| on!(db, |b| Store::wait(b, &job, &name)))
                    .await
            }

            async fn waits_named(&self, name: &str) -> StoreResult<Vec<Wait>> {
                let name = name.to_owned();
                self.threads()
                    .read(move |db| on!(db, |b| Store::waits_named(b, &name)))
                    .await
            }

            async fn wait_by_seq(&self, seq: i64) -> StoreResult<Option<Wait>> {
                self.threads()
                    .read(move |db| on!(db, |b| Store::wait_by_seq(b, seq)))
                    .await
            }

            async fn waits_of_job(&self, job: &str) -> StoreResult<Vec<Wait>> {
                let job = job.to_owned();
                self.threads()
                    .read(move |db| on!(db, |b| Store::waits_of_job(b, &job)))
                    .await
            }

            async fn open_waits(&self) -> StoreResult<Vec<Wait>> {
                self.threads()
                    .read(move |db| on!(db, |b| Store::open_waits(b)))
                    .await
            }

            async fn open_waits_on(&self, source: &str, subject: &str) -> StoreResult<Vec<Wait>> {
                let (source, subject) = (source.to_owned(), subject.to_owned());
                self.threads()
                    .read(move |db| on!(db, |b| Store::open_waits_on(b, &source, &subject)))
                    .await
            }

            async fn open_waits_on_many(
                &self,
                keys: &[(String, String, String)],
            ) -> StoreResult<Vec<Vec<Wait>>> {
                let keys = keys.to_vec();
                self.threads()
                    .read(move |db| on!(db, |b| Store::open_waits_on_many(b, &keys)))
                    .await
            }

            async fn due_waits(&self, at: Timestamp, limit: u32) -> StoreResult<Vec<Wait>> {
                self.threads()
                    .read(move |db| on!(db, |b| Store::due_waits(b, at, limit)))
                    .await
            }

            async fn next_deadline(&self) -> StoreResult<Option<Timestamp>> {
                self.threads()
                    .read(move |db| on!(db, |b| Store::next_deadline(b)))
                    .await
            }

            async fn waits_to_look_back(
                &self,
                before: Timestamp,
                limit: u32,
            ) -> StoreResult<Vec<Wait>> {
                self.threads()
                    .read(move |db| on!(db, |b| Store::waits_to_look_back(b, before, limit)))
                    .await
            }

            async fn mark_looked_back(&self, wait_seq: i64) -> StoreResult<()> {
                self.threads()
                    .write(move |db| on!(db, |b| Store::mark_looked_back(b, wait_seq)))
                    .await
            }

            async fn take_lease(
                &self,
                name: &str,
                holder: &str,
                at: Timestamp,
                until: Timestamp,
            ) -> StoreResult<bool> {
                let (name, holder) = (name.to_owned(), holder.to_owned());
                self.threads()
                    .write(move |db| on!(db, |b| Store::take_lease(b, &name, &holder, at, until)))
                    .await
            }

            async fn insert_event(
                &self,
                event: &Event,
                received_at: Timestamp,
            ) -> StoreResult<Option<i64>> {
                let event = event.clone();
                self.threads()
                    .write(move |db| on!(db, |b| Store::insert_event(b, &event, received_at)))
                    .await
            }

            async fn receive(
                &self,
                event: &Event,
                received_at: Timestamp,
                audit: &AuditRecord,
            ) -> StoreResult<Received> {
                let (event, audit) = (event.clone(), audit.clone());
                self.threads()
                    .write(move |db| on!(db, |b| Store::receive(b, &event, received_at, &audit)))
                    .await
            }

            async fn receive_many(
                &self,
                events: &[Event],
                audits: &[AuditRecord],
                received_at: Timestamp,
            ) -> StoreResult<Vec<Received>> {
                let (events, audits) = (events.to_vec(), audits.to_vec());
                self.threads()
                    .write(move |db| {
                        on!(db, |b| Store::receive_many(
                            b,
                            &events,
                            &audits,
                            received_at
                        ))
                    })
                    .await
            }

            async fn receive_shared(
                &self,
                events: &[Arc<Event>],
                audits: &[AuditRecord],
                received_at: Timestamp,
            ) -> StoreResult<Vec<Received>> {
                let (events, audits) = (events.to_vec(), audits.to_vec());
                self.threads()
                    .write(move |db| {
                        on!(db, |b| Store::receive_shared(
                            b,
                            &events,
                            &audits,
                            received_at
                        ))
                    })
                    .await
            }

            async fn mark_routed(&self, source: &str, id: &str) -> StoreResult<()> {
                let (source, id) = (source.to_owned(), id.to_owned());
                self.threads()
                    .write(move |db| on!(db, |b| Store::mark_routed(b, &source, &id)))
                    .await
            }

            async fn unrouted(
                &self,
                before: Timestamp,
                limit: u32,
            ) -> StoreResult<Vec<StoredEvent>> {
                self.threads()
                    .read(move |db| on!(db, |b| Store::unrouted(b, before, limit)))
                    .await
            }

            async fn last_seq(&self) -> StoreResult<i64> {
                self.threads()
                    .read(move |db| on!(db, |b| Store::last_seq(b)))
                    .await
            }

            async fn retained_events(
                &self,
                source: &str,
                after_seq: i64,
                received_since: Timestamp,
                job: &str,
            ) -> StoreResult<Vec<StoredEvent>> {
                let (source, job) = (source.to_owned(), job.to_owned());
                self.threads()
                    .read(move |db| {
                        on!(db, |b| Store::retained_events(
                            b,
                            &source,
                            after_seq,
                            received_since,
                            &job,
                        ))
                    })
                    .await
            }

            async fn event(&self, source: &str, id: &str) -> StoreResult<Option<StoredEvent>> {
                let (source, id) = (source.to_owned(), id.to_owned());
                self.threads()
                    .read(move |db| on!(db, |b| Store::event(b, &source, &id)))
                    .await
            }

            async fn remember_delivery(
                &self,
                source: &str,
                identity: &str,
                event_id: &str,
                at: Timestamp,
            ) -> StoreResult<Option<(String, Timestamp)>> {
                let (source, identity, event_id) =
                    (source.to_owned(), identity.to_owned(), event_id.to_owned());
                self.threads()
                    .write(move |db| {
                        on!(db, |b| Store::remember_delivery(
                            b, &source, &identity, &event_id, at
                        ))
                    })
                    .await
            }

            async fn forget_deliveries(&self, before: Timestamp) -> StoreResult<u64> {
                self.threads()
                    .write(move |db| on!(db, |b| Store::forget_deliveries(b, before)))
                    .await
            }

            async fn purge_events(&self, before: Timestamp) -> StoreResult<u64> {
                self.threads()
                    .write(move |db| on!(db, |b| Store::purge_events(b, before)))
                    .await
            }

            async fn claim(
                &self,
                candidate: &Candidate,
                event: &Event,
                at: Timestamp,
            ) -> StoreResult<Claim> {
                let (candidate, event) = (candidate.clone(), event.clone());
                self.threads()
                    .write(move |db| on!(db, |b| Store::claim(b, &candidate, &event, at)))
                    .await
            }

            async fn route(
                &self,
                event: &Event,
                candidates: &[Candidate],
                at: Timestamp,
                mark_routed: bool,
            ) -> StoreResult<Vec<Claim>> {
                let (event, candidates) = (event.clone(), candidates.to_vec());
                self.threads()
                    .write(move |db| {
                        on!(db, |b| Store::route(
                            b,
                            &event,
                            &candidates,
                            at,
                            mark_routed
                        ))
                    })
                    .await
            }

            async fn route_many(
                &self,
                batch: &[ToRoute],
                at: Timestamp,
            ) -> StoreResult<Vec<Vec<Claim>>> {
                let batch = batch.to_vec();
                self.threads()
                    .write(move |db| on!(db, |b| Store::route_many(b, &batch, at)))
                    .await
            }

            async fn close(
                &self,
                wait_seq: i64,
                state: WaitState,
                reason: Option<&str>,
                at: Timestamp,
            ) -> StoreResult<bool> {
                let reason = reason.map(str::to_owned);
                self.threads()
                    .write(move |db| {
                        on!(db, |b| Store::close(
                            b,
                            wait_seq,
                            state,
                            reason.as_deref(),
                            at
                        ))
                    })
                    .await
            }

            async fn record_fire(
                &self,
                fire: &Fire,
                limit: Option<FireLimit>,
                job: &Job,
                audit: &AuditRecord,
            ) -> StoreResult<FireOutcome> {
                let (fire, job, audit) = (fire.clone(), job.clone(), audit.clone());
                self.threads()
                    .write(move |db| on!(db, |b| Store::record_fire(b, &fire, limit, &job, &audit)))
                    .await
            }

            async fn fires(&self) -> StoreResult<Vec<Fire>> {
                self.threads()
                    .read(move |db| on!(db, |b| Store::fires(b)))
                    .await
            }

            async fn fire(&self, job: &str) -> StoreResult<Option<Fire>> {
                let job = job.to_owned();
                self.threads()
                    .read(move |db| on!(db, |b| Store::fire(b, &job)))
                    .await
            }

            async fn record_step(&self, step: &StepRecord) -> StoreResult<bool> {
                let step = step.clone();
                self.threads()
                    .write(move |db| on!(db, |b| Store::record_step(b, &step)))
                    .await
            }

            async fn decide_step(
                &self,
                job: &str,
                step: &str,
                output: &serde_json::Value,
                at: Timestamp,
            ) -> StoreResult<bool> {
                let (job, step, output) = (job.to_owned(), step.to_owned(), output.clone());
                self.threads()
                    .write(move |db| on!(db, |b| Store::decide_step(b, &job, &step, &output, at)))
                    .await
            }

            async fn steps_of_job(&self, job: &str) -> StoreResult<Vec<StepRecord>> {
                let job = job.to_owned();
                self.threads()
                    .read(move |db| on!(db, |b| Store::steps_of_job(b, &job)))
                    .await
            }

            async fn append_audit(&self, record: &AuditRecord) -> StoreResult<()> {
                let record = record.clone();
                self.threads()
                    .write(move |db| on!(db, |b| Store::append_audit(b, &record)))
                    .await
            }

            async fn audit(&self) -> StoreResult<Vec<AuditRecord>> {
                self.threads()
                    .read(move |db| on!(db, |b| Store::audit(b)))
                    .await
            }

            async fn audit_page(
                &self,
                after: i64,
                limit: u32,
            ) -> StoreResult<Vec<(i64, AuditRecord)>> {
                self.threads()
                    .read(move |db| on!(db, |b| Store::audit_page(b, after, limit)))
                    .await
            }

            async fn count_refusal(
                &self,
                source: &str,
                kind: &str,
                minute: i64,
            ) -> StoreResult<(u64, u64)> {
                let (source, kind) = (source.to_owned(), kind.to_owned());
                self.threads()
                    .write(move |db| on!(db, |b| Store::count_refusal(b, &source, &kind, minute)))
                    .await
            }

            async fn record_output(
                &self,
                job: &str,
                name: &str,
                apply_now: bool,
                at: Timestamp,
            ) -> StoreResult<()> {
                let (job, name) = (job.to_owned(), name.to_owned());
                self.threads()
                    .write(move |db| {
                        on!(db, |b| Store::record_output(b, &job, &name, apply_now, at))
                    })
                    .await
            }

            async fn end_job(&self, job: &str, at: Timestamp) -> StoreResult<Option<Vec<Wait>>> {
                let job = job.to_owned();
                self.threads()
                    .write(move |db| on!(db, |b| Store::end_job(b, &job, at)))
                    .await
            }

            async fn outputs(&self, job: &str) -> StoreResult<Vec<Output>> {
                let job = job.to_owned();
                self.threads()
                    .read(move |db| on!(db, |b| Store::outputs(b, &job)))
                    .await
            }

            async fn set_flag(&self, key: &str, on: bool) -> StoreResult<()> {
                let key = key.to_owned();
                self.threads()
                    .write(move |db| on!(db, |b| Store::set_flag(b, &key, on)))
                    .await
            }

            async fn flag(&self, key: &str) -> StoreResult<bool> {
                let key = key.to_owned();
                self.threads()
                    .read(move |db| on!(db, |b| Store::flag(b, &key)))
                    .await
            }
        }
    };
}

threaded_store!(SqliteStore);
threaded_store!(Faulty<SqliteStore>);

#[cfg(test)]
mod tests {
    use std::sync::mpsc as std_mpsc;

    use crate::faults::Faults;

    use super::*;

    fn job(id: &str) -> Job {
        Job {
            id: id.to_owned(),
            started_at: Timestamp(0),
            start_seq: 0,
            deadline: None,
            runtime: "test".to_owned(),
            shadow: false,
            sandboxed: false,
            outside_started: false,
            ended_at: None,
        }
    }

    fn lite<'a>(db: &'a Db<'_>) -> &'a Lite {
        match db {
            Db::Plain(lite) => lite,
            Db::Faulty(faulty) => faulty.inner(),
        }
    }

    /// Holds the writer in a step of its own until the returned sender is dropped, so the steps
    /// queued meanwhile form the next group.
    async fn hold_writer(store: &SqliteStore) -> std_mpsc::Sender<()> {
        let (release, held) = std_mpsc::channel::<()>();
        let (started, running) = oneshot::channel();
        let mut started = Some(started);
        let _ = store.writer.queue(None, move |_| {
            if let Some(started) = started.take() {
                let _ = started.send(());
            }
            let _ = held.recv();
            Ok(())
        });
        running.await.expect("the holding step runs");
        release
    }

    /// The group a step ran in, after inserting job `id` in its transaction; with `fail`, the
    /// step fails after the insert instead, before its commit, as a broken row would.
    fn insert_in_group(
        store: &SqliteStore,
        id: &str,
        fail: bool,
    ) -> impl Future<Output = Result<StoreResult<u64>, oneshot::error::RecvError>> + use<> {
        let job = job(id);
        let rx = store
            .writer
            .queue(None, move |db| {
                let group = lite(&db).group();
                if fail {
                    on!(db, |b| async {
                        let mut tx = rows::Backend::begin(b).await?;
                        rows::Rows::insert_job(&mut tx, &job).await?;
                        Err::<(), _>(StoreError("this step fails".into()))
                    })?;
                } else {
                    on!(db, |b| Store::insert_job(b, &job))?;
                }
                Ok(group)
            })
            .expect("queued");
        async move { rx.await.map(|(out, _)| out) }
    }

    #[tokio::test]
    async fn a_failing_step_takes_back_only_its_own_writes_in_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("g.db")).await.unwrap();
        let release = hold_writer(&store).await;
        let a = insert_in_group(&store, "a", false);
        let b = insert_in_group(&store, "b", true);
        let c = insert_in_group(&store, "c", false);
        drop(release);
        let group = a.await.unwrap().unwrap();
        assert!(b.await.unwrap().is_err(), "the failing step hears of it");
        assert_eq!(c.await.unwrap().unwrap(), group, "one group");
        assert!(store.job("a").await.unwrap().is_some());
        assert!(store.job("c").await.unwrap().is_some());
        assert!(
            store.job("b").await.unwrap().is_none(),
            "its write went with it"
        );
    }

    /// Like [`insert_in_group`], counting the step's runs in `runs`; with `how`, the step
    /// is taken back after its insert (`Spoil::Fail`), panics after it (`Spoil::Panic`), or
    /// takes back a step that wrote nothing (`Spoil::Empty`: an insert of a job that exists).
    fn counted_in_group(
        store: &SqliteStore,
        id: &str,
        how: Option<Spoil>,
        runs: &Arc<std::sync::atomic::AtomicUsize>,
    ) -> impl Future<Output = Result<StoreResult<u64>, oneshot::error::RecvError>> + use<> {
        let job = job(id);
        let runs = runs.clone();
        let rx = store
            .writer
            .queue(None, move |db| {
                runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let group = lite(&db).group();
                on!(db, |b| async {
                    let mut tx = rows::Backend::begin(b).await?;
                    let inserted = rows::Rows::insert_job(&mut tx, &job).await?;
                    match how {
                        None => rows::Rows::commit(tx).await?,
                        Some(Spoil::Fail) => {
                            return Err(StoreError("this step fails".into()));
                        }
                        Some(Spoil::Panic) => panic!("this step panics"),
                        Some(Spoil::Empty) => {
                            assert!(!inserted, "the job was there before");
                            rows::Rows::rollback(tx).await?;
                        }
                    }
                    Ok(())
                })?;
                Ok(group)
            })
            .expect("queued");
        async move { rx.await.map(|(out, _)| out) }
    }

    #[derive(Clone, Copy)]
    enum Spoil {
        Fail,
        Panic,
        Empty,
    }

    #[tokio::test]
    async fn a_step_taken_back_after_writing_runs_its_group_again_guarded() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        for how in [Spoil::Fail, Spoil::Panic] {
            let dir = tempfile::tempdir().unwrap();
            let store = SqliteStore::open(&dir.path().join("r.db")).await.unwrap();
            let runs: Vec<Arc<AtomicUsize>> = (0..3).map(|_| Arc::default()).collect();
            let release = hold_writer(&store).await;
            let a = counted_in_group(&store, "a", None, &runs[0]);
            let b = counted_in_group(&store, "b", Some(how), &runs[1]);
            let c = counted_in_group(&store, "c", None, &runs[2]);
            drop(release);
            let group = a.await.unwrap().unwrap();
            assert!(b.await.unwrap().is_err(), "the failing step hears of it");
            assert_eq!(c.await.unwrap().unwrap(), group, "one group, counted once");
            let counts: Vec<usize> = runs.iter().map(|r| r.load(Ordering::Relaxed)).collect();
            // a and b ran unguarded, b spoiled the group; then a, b, c ran in savepoints.
            assert_eq!(counts, [2, 2, 1]);
            assert!(store.job("a").await.unwrap().is_some());
            assert!(store.job("c").await.unwrap().is_some());
            assert!(store.job("b").await.unwrap().is_none(), "b's write went");
            // The next group starts unguarded again.
            let d = Arc::default();
            let _ = counted_in_group(&store, "d", None, &d)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(d.load(Ordering::Relaxed), 1);
        }
    }

    #[tokio::test]
    async fn a_step_taken_back_without_writing_spoils_nothing() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("e.db")).await.unwrap();
        assert!(store.insert_job(&job("b")).await.unwrap());
        let runs: Vec<Arc<AtomicUsize>> = (0..3).map(|_| Arc::default()).collect();
        let release = hold_writer(&store).await;
        let a = counted_in_group(&store, "a", None, &runs[0]);
        let b = counted_in_group(&store, "b", Some(Spoil::Empty), &runs[1]);
        let c = counted_in_group(&store, "c", None, &runs[2]);
        drop(release);
        let group = a.await.unwrap().unwrap();
        assert_eq!(b.await.unwrap().unwrap(), group);
        assert_eq!(c.await.unwrap().unwrap(), group);
        let counts: Vec<usize> = runs.iter().map(|r| r.load(Ordering::Relaxed)).collect();
        assert_eq!(counts, [1, 1, 1], "no step ran twice");
        for id in ["a", "b", "c"] {
            assert!(store.job(id).await.unwrap().is_some());
        }
    }

    #[tokio::test]
    async fn the_reader_thread_checkpoints_what_the_writer_commits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let store = SqliteStore::open(&path).await.unwrap();
        let checkpoints = || {
            let rx = store
                .reader
                .queue(None, |db| Ok(lite(&db).checkpoints()))
                .expect("queued");
            async move { rx.await.expect("answered").0.expect("read") }
        };
        assert_eq!(checkpoints().await, 0);
        // About 4 KiB a row: well over CHECKPOINT_PAGES pages, one commit after another.
        let text = "x".repeat(4000);
        for i in 0..3 * CHECKPOINT_PAGES {
            let mut record = AuditRecord {
                at: Timestamp(0),
                action: "test".into(),
                data: serde_json::json!({ "i": i }),
            };
            record.data["text"] = text.clone().into();
            store.append_audit(&record).await.unwrap();
        }
        // The checkpoint is asked for after a commit and runs on the reader's thread; a read
        // queued after it is answered after it.
        let mut seen = checkpoints().await;
        for _ in 0..100 {
            if seen > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            seen = checkpoints().await;
        }
        assert!(seen >= 1, "no checkpoint ran on the reader's thread");
        // A checkpoint still running when the writes stopped (a loaded machine) is copied on
        // by the writer at its next commit, and the WAL restarts at the one after: as a live
        // edge goes on committing, the test commits twice more, once the reader's thread is
        // done (a read queued after its checkpoint is answered after it).
        checkpoints().await;
        for i in 0..2 {
            let record = AuditRecord {
                at: Timestamp(0),
                action: "test".into(),
                data: serde_json::json!({ "more": i }),
            };
            store.append_audit(&record).await.unwrap();
        }
        // The WAL started over: it holds far fewer frames than the about 12,000 written.
        let other = Connection::open(&path).unwrap();
        let log: i64 = other
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get(1))
            .unwrap();
        assert!(
            log < i64::from(2 * CHECKPOINT_PAGES),
            "the WAL was not restarted: {log} frames"
        );
    }

    fn event(id: &str) -> Event {
        Event {
            source: "ci".into(),
            id: id.into(),
            kind: "t".into(),
            action: String::new(),
            subject: "s".into(),
            text: String::new(),
            attributes: serde_json::json!({}),
        }
    }

    /// Receives `a`, `a` again (a redelivery: its step is taken back without a changed row),
    /// then `b`; registers wait `one`, `one` again (taken: taken back too), then `two`. Returns
    /// the numbers given: `a`, the last one after the redelivery, `b`, `one`, `two`.
    async fn numbers_given<S: Store>(store: &S) -> [i64; 5] {
        let received = AuditRecord {
            at: Timestamp(0),
            action: "event.received".into(),
            data: serde_json::json!({}),
        };
        let new = |r: Received| match r {
            Received::New(stored) => stored.seq,
            Received::Known { .. } => panic!("a new event"),
        };
        let a = new(store
            .receive(&event("a"), Timestamp(1), &received)
            .await
            .unwrap());
        let again = store
            .receive(&event("a"), Timestamp(1), &received)
            .await
            .unwrap();
        assert!(matches!(again, Received::Known { .. }));
        let last = store.last_seq().await.unwrap();
        let b = new(store
            .receive(&event("b"), Timestamp(1), &received)
            .await
            .unwrap());
        assert!(store.insert_job(&job("j")).await.unwrap());
        let spec = crate::model::WaitSpec {
            source: "ci".into(),
            types: None,
            subject: None,
            filter: None,
            timeout: Duration::from_secs(60),
            since: crate::model::Since::Now,
        };
        let wait = |name: &str| Wait::open("j", name, spec.clone(), 0, Timestamp(0), Timestamp(9));
        let inserted = |w: WaitInsert| match w {
            WaitInsert::Inserted(seq) => seq,
            other => panic!("inserted, not {other:?}"),
        };
        let one = inserted(store.insert_wait(&wait("one")).await.unwrap());
        let taken = store.insert_wait(&wait("one")).await.unwrap();
        assert!(matches!(taken, WaitInsert::NameTaken));
        let two = inserted(store.insert_wait(&wait("two")).await.unwrap());
        [a, last, b, one, two]
    }

    #[tokio::test]
    async fn a_redelivery_or_a_taken_name_uses_up_no_number() {
        let dir = tempfile::tempdir().unwrap();
        let plain = SqliteStore::open(&dir.path().join("p.db")).await.unwrap();
        // Behind an unarmed crash switch every step runs in its savepoint.
        let guarded = Faulty::new(
            SqliteStore::open(&dir.path().join("g.db")).await.unwrap(),
            Faults::new(),
        );
        let unguarded = numbers_given(&plain).await;
        assert_eq!(unguarded, numbers_given(&guarded).await);
        assert_eq!(unguarded, [1, 1, 2, 1, 2], "no number skipped");
    }

    #[tokio::test]
    async fn a_statement_that_ends_the_transaction_costs_only_its_own_step() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("x.db")).await.unwrap();
        assert!(store.insert_job(&job("x")).await.unwrap());
        let release = hold_writer(&store).await;
        let a = insert_in_group(&store, "a", false);
        // `OR ROLLBACK` on a taken id: SQLite ends the whole transaction (as an I/O error, a
        // full disk or an interrupt would), with no row changed.
        let b = store
            .writer
            .queue(None, move |db| {
                let lite = lite(&db).clone();
                on!(db, |b| async {
                    let _tx = rows::Backend::begin(b).await?;
                    lite.conn().execute(
                        "INSERT OR ROLLBACK INTO jobs (id, started_at, start_seq, runtime, \
                         shadow, sandboxed) VALUES ('x', 0, 0, 't', 0, 0)",
                        [],
                    )?;
                    Ok(())
                })
            })
            .expect("queued");
        let c = insert_in_group(&store, "c", false);
        drop(release);
        let group = a.await.unwrap().expect("a is committed");
        assert!(b.await.unwrap().0.is_err(), "b hears of its error");
        assert_eq!(c.await.unwrap().expect("c is committed"), group);
        assert!(store.job("a").await.unwrap().is_some());
        assert!(store.job("c").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn after_the_wal_restarts_the_reader_copies_the_next_pages_too() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("w.db")).await.unwrap();
        let checkpoints = |lane: &Lane| {
            let rx = lane
                .queue(None, |db| Ok(lite(&db).checkpoints()))
                .expect("queued");
            async move { rx.await.expect("answered").0.expect("read") }
        };
        let text = "x".repeat(4000);
        let write = |i: usize| {
            let record = AuditRecord {
                at: Timestamp(0),
                action: "test".into(),
                data: serde_json::json!({ "i": i, "text": text }),
            };
            let store = store.clone();
            async move { store.append_audit(&record).await.unwrap() }
        };
        let mut i = 0;
        while checkpoints(&store.reader).await == 0 {
            i += 1;
            write(i).await;
            assert!(i < 10_000, "no checkpoint on the reader");
        }
        // A read queued on the reader after the checkpoint it was asked for is answered after
        // it, so `first` writes brought the WAL to the thousand pages.
        let first = i;
        // Paced writes: the reader's checkpoint is over before the next commit, which starts
        // the WAL over. The next thousand pages take about as many writes again, and it is the
        // reader that is asked to copy them, not the writer a thousand pages later still.
        tokio::time::sleep(Duration::from_millis(200)).await;
        loop {
            i += 1;
            write(i).await;
            if checkpoints(&store.reader).await >= 2 {
                break;
            }
            assert!(
                i - first <= first * 3 / 2,
                "no checkpoint asked of the reader in {} writes after the first {first}",
                i - first
            );
        }
    }

    #[tokio::test]
    async fn a_group_holds_at_most_max_batch_steps() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("m.db")).await.unwrap();
        let release = hold_writer(&store).await;
        let queued: Vec<_> = (0..MAX_BATCH + 10)
            .map(|i| insert_in_group(&store, &format!("j{i}"), false))
            .collect();
        drop(release);
        let mut groups = Vec::new();
        for rx in queued {
            groups.push(rx.await.unwrap().unwrap());
        }
        let first = groups[0];
        assert!(groups[..MAX_BATCH].iter().all(|&g| g == first));
        assert!(groups[MAX_BATCH..].iter().all(|&g| g == first + 1));
        assert_eq!(store.audit().await.unwrap().len(), 0);
        for i in [0, MAX_BATCH - 1, MAX_BATCH + 9] {
            assert!(store.job(&format!("j{i}")).await.unwrap().is_some());
        }
    }

    #[tokio::test]
    async fn an_acknowledged_step_is_committed_for_every_other_connection() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ack.db");
        let store = SqliteStore::open(&path).await.unwrap();
        let mut running = tokio::task::JoinSet::new();
        for i in 0..200 {
            let store = store.clone();
            running.spawn(async move { store.insert_job(&job(&format!("j{i}"))).await });
        }
        let mut acknowledged = 0;
        while let Some(done) = running.join_next().await {
            assert!(done.unwrap().unwrap());
            acknowledged += 1;
        }
        // Another connection, while the store is still open: whatever was answered is there.
        let other = Connection::open(&path).unwrap();
        let count: i64 = other
            .query_row("SELECT count(*) FROM jobs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(count, acknowledged);
        drop(other);
        store.close().await;
        assert!(
            !path.with_extension("db-wal").exists(),
            "closed, the store's connections are gone and the WAL is checkpointed"
        );
        assert!(
            store.job("j0").await.is_err(),
            "a closed store refuses steps"
        );
        let reopened = SqliteStore::open(&path).await.unwrap();
        assert!(reopened.job("j199").await.unwrap().is_some());
    }
}
