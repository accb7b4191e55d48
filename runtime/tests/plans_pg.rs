//! Routing on `PostgreSQL` reads rows in proportion to its batch, whatever the planner believes
//! about the tables. The statements join arrays of keys to the tables; when the statistics said
//! that few waits were open (taken before a burst of registrations, and not yet taken again),
//! the planner answered the join by reading every open wait, twice per batch, and the events
//! by a sequential scan; a ledger grown since its statistics were taken was read whole by a
//! semi-join of the keys. The statements now reach the rows through their keys only.
//!
//! The rows read are the tables' `seq_tup_read + idx_tup_fetch` in `pg_stat_user_tables`,
//! which a server process adds to when it exits: the edges are closed, and their processes
//! gone, before each count.

use std::sync::Arc;
use std::time::Duration;

use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::model::{Event, WaitState};
use ozcheck_runtime::store::{PostgresStore, Store};
use ozcheck_runtime::{JobStart, Routing, Runtime};
use serde_json::json;
use sqlx::{AssertSqlSafe, Connection, PgConnection};
use tokio::task::JoinSet;

mod pg;

type Rt = Arc<Runtime<PostgresStore>>;

/// Events routed, each matching the one wait of its job.
const ROUTED: usize = 200;
/// Rows of each large table (jobs, waits, events) beside those of the routed events.
const FILLER: usize = 20_000;
/// Rows a routed event may read on the waits, events and ledger tables together (its
/// candidates, the locks, the closing, the event's own row, its jobs' ledger rows), with room
/// to spare: routing reads 4, and the check of the matches below 1 more.
const ROWS_PER_EVENT: i64 = 25;

async fn edge(url: &str, clock: &ManualClock) -> Rt {
    let config: Arc<Config> = Arc::new(
        serde_json::from_value(json!({"sources": [{"name": "ci", "kind": "json"}]})).unwrap(),
    );
    let store = Arc::new(PostgresStore::connect(url).await.unwrap());
    let routing = Routing::Shared {
        edge: "plans".into(),
    };
    Runtime::start_with(store, Arc::new(clock.clone()), config, &routing)
        .await
        .unwrap()
}

/// Closes the edge and waits until the server processes of `app` are gone (their counts are
/// then in the statistics).
async fn close(rt: Rt, admin: &mut PgConnection, app: &str) {
    rt.store().close().await;
    drop(rt);
    gone(admin, app).await;
}

/// Waits until the server processes of `app` are gone.
async fn gone(admin: &mut PgConnection, app: &str) {
    for _ in 0..200 {
        let left: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1")
                .bind(app)
                .fetch_one(&mut *admin)
                .await
                .unwrap();
        if left == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server processes of {app} did not exit");
}

/// Rows read so far on the waits, events and ledger tables, as the statistics count them (sequential
/// scans and index fetches). The planner may read a smaller table whole when its statistics,
/// true here, say that is cheaper: the events still to route, or the jobs when a batch locks
/// many of them.
async fn rows_read(admin: &mut PgConnection) -> Vec<(String, i64, i64)> {
    sqlx::query("SELECT pg_stat_clear_snapshot()")
        .execute(&mut *admin)
        .await
        .unwrap();
    sqlx::query_as(
        "SELECT relname::text, COALESCE(seq_tup_read, 0), COALESCE(idx_tup_fetch, 0) \
         FROM pg_stat_user_tables WHERE schemaname = current_schema() \
         AND relname IN ('waits', 'events', 'job_events') ORDER BY relname",
    )
    .fetch_all(&mut *admin)
    .await
    .unwrap()
}

fn event(n: usize) -> Event {
    Event {
        source: "ci".into(),
        id: format!("e{n}"),
        kind: "t".into(),
        action: String::new(),
        subject: format!("s{n}"),
        text: String::new(),
        attributes: json!({}),
    }
}

/// The plans the store's connections make by default: each statement planned once per
/// connection (`plan_cache_mode = force_generic_plan`), without the arrays' sizes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routing_reads_rows_in_proportion_to_its_batch_even_when_the_statistics_are_stale() {
    let Some(pg) = pg::server("routing_reads_rows_in_proportion_to_its_batch") else {
        return;
    };
    routing_reads_rows_in_proportion(pg, "", "force_generic_plan").await;
}

/// The plans a deployment gets when it sets the mode itself (here the server's default): one
/// per execution, made for the arrays' sizes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routing_reads_rows_in_proportion_to_its_batch_with_plans_made_per_execution() {
    let Some(pg) = pg::server("routing_reads_rows_in_proportion_with_custom_plans") else {
        return;
    };
    routing_reads_rows_in_proportion(pg, "&options=-c%20plan_cache_mode%3Dauto", "auto").await;
}

async fn routing_reads_rows_in_proportion(pg: &pg::TestPg, options: &str, mode: &str) {
    let url = format!("{}{options}", pg.fresh_url().await);
    let app = format!("ozcheck_plans_{}_{mode}", std::process::id());
    let edge_url = format!("{url}&application_name={app}");
    // The statistics are read here; the rows are written through a connection of its own,
    // closed before the first count, whose scans are then counted already (a server process
    // sends its counts at intervals while it lives).
    let mut admin = PgConnection::connect(&url).await.unwrap();
    let setup_app = format!("{app}_setup");
    let mut setup = PgConnection::connect(&format!("{url}&application_name={setup_app}"))
        .await
        .unwrap();
    let clock = ManualClock::new(Timestamp(1_000_000));

    // The waits, one job each, on subjects of their own.
    let rt = edge(&edge_url, &clock).await;
    assert_eq!(
        rt.store().setting("plan_cache_mode").await.unwrap(),
        mode,
        "the store's connections plan in the mode expected"
    );
    let mut running = JoinSet::new();
    for n in 0..ROUTED {
        if running.len() >= 32 {
            running.join_next().await.unwrap().unwrap();
        }
        let rt = rt.clone();
        running.spawn(async move {
            let job = format!("j{n}");
            rt.start_job(&JobStart {
                id: job.clone(),
                ..JobStart::default()
            })
            .await
            .unwrap();
            let args = json!({"source": "ci", "subject": format!("s{n}"), "timeout": "7d"});
            rt.wait_for_event(&job, "w", &args).await.unwrap();
        });
    }
    while let Some(done) = running.join_next().await {
        done.unwrap();
    }
    // Many more rows beside them, as a day of work leaves: waits (open, on subjects and jobs of
    // their own, looked back as every registered wait is: an unmarked one would be looked back
    // by the next start) and events, copied from the rows the runtime wrote.
    sqlx::raw_sql(AssertSqlSafe(format!(
        "INSERT INTO jobs (id, started_at, start_seq, deadline, runtime, shadow, sandboxed) \
           SELECT 'f' || g, started_at, start_seq, deadline, runtime, shadow, sandboxed \
           FROM jobs, generate_series(1, {FILLER}) AS g WHERE id = 'j0'; \
         INSERT INTO waits (name, job_id, source, subject, types, filter, timeout_ms, since, \
           after_seq, created_at, deadline, looked_back) \
           SELECT name, 'f' || g, source, 'f' || g, types, filter, timeout_ms, since, \
           after_seq, created_at, deadline, looked_back \
           FROM waits, generate_series(1, {FILLER}) AS g WHERE job_id = 'j0'; \
         INSERT INTO events (source, event_id, type, action, subject, text, attributes, \
           received_at) \
           SELECT 'ci', 'f' || g, 't', '', 'f' || g, '', '{{}}', 0 \
           FROM generate_series(1, {FILLER}) AS g"
    )))
    .execute(&mut setup)
    .await
    .unwrap();
    close(rt, &mut admin, &app).await;

    // Statistics that say no wait is open: taken while every wait was closed, and not taken
    // again (autovacuum off) after they opened.
    sqlx::raw_sql(
        "ALTER TABLE jobs SET (autovacuum_enabled = false); \
         ALTER TABLE waits SET (autovacuum_enabled = false); \
         ALTER TABLE events SET (autovacuum_enabled = false); \
         ALTER TABLE unrouted SET (autovacuum_enabled = false); \
         ALTER TABLE job_events SET (autovacuum_enabled = false); \
         ALTER TABLE audit SET (autovacuum_enabled = false); \
         UPDATE waits SET state = 'timed_out'; \
         ANALYZE jobs, waits, events, unrouted, job_events, audit; \
         UPDATE waits SET state = 'open'",
    )
    .execute(&mut setup)
    .await
    .unwrap();
    // And a ledger that grew after its statistics were taken (when it was empty).
    sqlx::raw_sql(AssertSqlSafe(format!(
        "INSERT INTO job_events (job_id, event_source, event_id, wait_seq) \
           SELECT 'f' || g, 'ci', 'f' || g, g FROM generate_series(1, {FILLER}) AS g"
    )))
    .execute(&mut setup)
    .await
    .unwrap();
    setup.close().await.unwrap();
    gone(&mut admin, &setup_app).await;

    let before = rows_read(&mut admin).await;
    let jobs_before = jobs_updated(&mut admin).await;
    let rt = edge(&edge_url, &clock).await;
    let mut running = JoinSet::new();
    for n in 0..ROUTED {
        let rt = rt.clone();
        running.spawn(async move { rt.ingest(&event(n)).await.unwrap() });
    }
    while let Some(done) = running.join_next().await {
        assert!(done.unwrap().is_some(), "each event is new");
    }
    for n in 0..ROUTED {
        let waits = rt.store().waits_of_job(&format!("j{n}")).await.unwrap();
        assert_eq!(waits.len(), 1);
        assert_eq!(waits[0].state, WaitState::Matched, "j{n}'s wait got e{n}");
    }
    close(rt, &mut admin, &app).await;
    let after = rows_read(&mut admin).await;
    let jobs_after = jobs_updated(&mut admin).await;
    let mut read = 0;
    for ((table, seq0, idx0), (_, seq1, idx1)) in before.iter().zip(&after) {
        eprintln!(
            "{table}: {} rows by sequential scans, {} by index",
            seq1 - seq0,
            idx1 - idx0
        );
        read += seq1 - seq0 + idx1 - idx0;
    }

    let limit = ROWS_PER_EVENT * ROUTED as i64;
    eprintln!("{ROUTED} events among {FILLER} open waits read {read} rows (limit {limit})");
    assert!(
        read <= limit,
        "routing {ROUTED} events read {read} rows of the tables (more than {limit}): a \
         statement scanned a table instead of reaching the rows by their keys"
    );

    // Each job was marked outside-started once, its new version on its own page (the jobs
    // were started together, so their pages got every update of the batch).
    let updated = jobs_after.0 - jobs_before.0;
    let in_place = jobs_after.1 - jobs_before.1;
    eprintln!("jobs: {updated} updates, {in_place} of them heap-only");
    assert_eq!(updated, ROUTED as i64, "each job reached was marked once");
    assert_eq!(
        in_place, updated,
        "a job's update found no room on its page and wrote its key index again"
    );
}

/// Updates of the jobs table so far, and how many of them were heap-only (the new version on
/// the old one's page, no index written).
async fn jobs_updated(admin: &mut PgConnection) -> (i64, i64) {
    sqlx::query("SELECT pg_stat_clear_snapshot()")
        .execute(&mut *admin)
        .await
        .unwrap();
    sqlx::query_as(
        "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables \
         WHERE schemaname = current_schema() AND relname = 'jobs'",
    )
    .fetch_one(&mut *admin)
    .await
    .unwrap()
}

/// Blocks of the events table and its indexes read so far (from the buffer cache or not).
async fn events_blocks(admin: &mut PgConnection) -> i64 {
    sqlx::query("SELECT pg_stat_clear_snapshot()")
        .execute(&mut *admin)
        .await
        .unwrap();
    sqlx::query_scalar(
        "SELECT (COALESCE(heap_blks_hit, 0) + COALESCE(heap_blks_read, 0) \
         + COALESCE(idx_blks_hit, 0) + COALESCE(idx_blks_read, 0))::bigint \
         FROM pg_statio_user_tables WHERE schemaname = current_schema() AND relname = 'events'",
    )
    .fetch_one(&mut *admin)
    .await
    .unwrap()
}

/// The sweeper's read of the events left unrouted reaches each through its source and
/// sequence number (the events table has no index on the number alone, migration 0006): it
/// reads the blocks of the events it returns, not a day of events or of an index on them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweeper_reads_the_events_left_unrouted_not_the_table() {
    const LEFT: i64 = 5;
    let Some(pg) = pg::server("the_sweeper_reads_the_events_left_unrouted") else {
        return;
    };
    let url = pg.fresh_url().await;
    let app = format!("ozcheck_sweeper_{}", std::process::id());
    let mut admin = PgConnection::connect(&url).await.unwrap();
    // A store first, so that the tables exist; the rows are then written by a connection of
    // its own, closed before the first count.
    PostgresStore::connect(&url).await.unwrap().close().await;
    let setup_app = format!("{app}_setup");
    let mut setup = PgConnection::connect(&format!("{url}&application_name={setup_app}"))
        .await
        .unwrap();
    sqlx::raw_sql(AssertSqlSafe(format!(
        "INSERT INTO events (source, event_id, type, action, subject, text, attributes, \
           received_at) SELECT 'ci', 'e' || g, 't', '', 's' || g, '', '{{}}', g \
           FROM generate_series(1, {FILLER}) AS g; \
         INSERT INTO unrouted (seq, source, received_at) \
           SELECT seq, source, received_at FROM events WHERE received_at % 4000 = 0; \
         ANALYZE events; ANALYZE unrouted;"
    )))
    .execute(&mut setup)
    .await
    .unwrap();
    setup.close().await.unwrap();
    gone(&mut admin, &setup_app).await;
    let before = events_blocks(&mut admin).await;

    let store = PostgresStore::connect(&format!("{url}&application_name={app}"))
        .await
        .unwrap();
    let left = store.unrouted(Timestamp(i64::MAX), 100).await.unwrap();
    let ids: Vec<&str> = left.iter().map(|e| e.event.id.as_str()).collect();
    assert_eq!(ids, ["e4000", "e8000", "e12000", "e16000", "e20000"]);
    store.close().await;
    gone(&mut admin, &app).await;
    let read = events_blocks(&mut admin).await - before;

    // A lookup is the index's root, inner and leaf blocks and the row's block.
    let limit = 5 * LEFT;
    eprintln!("the sweeper read {read} blocks of the events and their indexes for {LEFT} events");
    assert!(
        read <= limit,
        "the sweeper read {read} blocks of the events table and its indexes for {LEFT} events \
         (more than {limit}): it scanned the table or a whole index"
    );
}
