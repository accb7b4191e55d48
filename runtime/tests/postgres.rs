//! The `PostgreSQL` store, and edges sharing it: the store contract; several edges (each its own
//! runtime and connection pool, as separate processes would be) routing the same events at
//! once; fire limits across edges; deadlines fired once by the holder of the sweeper lease and
//! taken over when the holder stops; retention by one edge only.

use std::sync::Arc;
use std::time::Duration;

use ozcheck_runtime::clock::{Clock, ManualClock, Timestamp};
use ozcheck_runtime::model::{AuditRecord, Fire, FireState, Job, WaitState};
use ozcheck_runtime::routes::LEASE_TERM;
use ozcheck_runtime::store::{FireLimit, FireOutcome, PostgresStore, Store};
use ozcheck_runtime::{JobStart, Routing, Runtime};
use serde_json::json;
use sqlx::Connection;

mod contract;
mod fixtures;
mod pg;

use fixtures::{config, event};

/// Rounds of the routing race: two jobs and one event each.
const ROUNDS: usize = 40;

/// `n` edges on the schema at `url`, each with its own pool, on one clock.
async fn edges(url: &str, n: usize, clock: &ManualClock) -> Vec<Arc<Runtime<PostgresStore>>> {
    let mut out = Vec::new();
    for i in 0..n {
        let store = Arc::new(PostgresStore::connect(url).await.unwrap());
        let routing = Routing::Shared {
            edge: format!("edge-{i}"),
        };
        out.push(
            Runtime::start_with(store, Arc::new(clock.clone()), config(), &routing)
                .await
                .unwrap(),
        );
    }
    out
}

async fn actions(rt: &Runtime<PostgresStore>, action: &str) -> usize {
    let audit = rt.store().audit().await.unwrap();
    audit.iter().filter(|r| r.action == action).count()
}

#[tokio::test]
async fn postgres_store_contract() {
    let Some(pg) = pg::server("postgres_store_contract") else {
        return;
    };
    let store = PostgresStore::connect(&pg.fresh_url().await).await.unwrap();
    contract::store_contract(store).await;
}

/// Every text column of a key compares byte by byte (collation "C"), whatever the database's
/// collation: under any other, each comparison in those B-trees calls the C library's
/// `strcoll` (migration 0005). Checked over every index of the schema, with the collation
/// each index compares by, so that a key added later is held to it too; and a job, updated
/// once on routing's path, finds room on its page.
#[tokio::test]
async fn text_keys_compare_bytewise_and_jobs_leave_room_for_their_update() {
    let Some(pg) = pg::server("text_keys_compare_bytewise") else {
        return;
    };
    let url = pg.fresh_url().await;
    let store = PostgresStore::connect(&url).await.unwrap();
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let keys: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT c.relname::text, a.attname::text, COALESCE(k.collname::text, '') \
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         CROSS JOIN LATERAL unnest(i.indkey::int2[], i.indcollation::oid[]) AS x(attnum, coll) \
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = x.attnum \
         LEFT JOIN pg_collation k ON k.oid = x.coll \
         WHERE n.nspname = current_schema() AND a.atttypid = 'text'::regtype \
         ORDER BY 1, 2",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert!(
        keys.len() >= 10,
        "the schema's text keys were found: {keys:?}"
    );
    let other: Vec<_> = keys.iter().filter(|k| k.2 != "C").collect();
    assert!(
        other.is_empty(),
        "text keys under another collation: {other:?}"
    );
    let options: Option<Vec<String>> =
        sqlx::query_scalar("SELECT reloptions::text[] FROM pg_class WHERE oid = 'jobs'::regclass")
            .fetch_one(&mut conn)
            .await
            .unwrap();
    assert_eq!(options, Some(vec!["fillfactor=50".to_owned()]));
    store.close().await;
}

/// Migration 0007: an event's text and attributes, and the copies of whole events kept with
/// waits and fires, are compressed with lz4 (Debian's server has it), not the default pglz,
/// which made up most of the server's work per event with the largest events; and a large
/// event comes back as it went in.
#[tokio::test]
async fn large_event_columns_are_compressed_with_lz4() {
    let Some(pg) = pg::server("large_event_columns_lz4") else {
        return;
    };
    let url = pg.fresh_url().await;
    let store = PostgresStore::connect(&url).await.unwrap();
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let columns: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT c.relname::text, a.attname::text, a.attcompression::text \
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = current_schema() AND a.attnum > 0 AND NOT a.attisdropped \
         AND (c.relname, a.attname) IN (('events', 'text'), ('events', 'attributes'), \
              ('waits', 'event_data'), ('fires', 'event_data')) ORDER BY 1, 2",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let expected: Vec<(String, String, String)> = [
        ("events", "attributes"),
        ("events", "text"),
        ("fires", "event_data"),
        ("waits", "event_data"),
    ]
    .iter()
    .map(|(t, c)| (t.to_string(), c.to_string(), "l".to_owned()))
    .collect();
    assert_eq!(columns, expected);
    let mut large = event("large", "repo/a#1");
    large.text = "log line: step passed\n".repeat(16 * 1024 / 22);
    large.attributes = json!(
        (0..128)
            .map(|i| (format!("k{i:03}"), json!(format!("value {i}"))))
            .collect::<serde_json::Map<_, _>>()
    );
    let audit = AuditRecord {
        at: Timestamp(1),
        action: "event.received".into(),
        data: json!({}),
    };
    store.receive(&large, Timestamp(1), &audit).await.unwrap();
    let method: Option<String> = sqlx::query_scalar(
        "SELECT pg_column_compression(text) FROM events WHERE event_id = 'large'",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(method.as_deref(), Some("lz4"));
    let back = store.event("ci", "large").await.unwrap().expect("stored");
    assert_eq!(*back.event, large);
    store.close().await;
}

/// Migration 0003 moves the events still to route from a column of `events` to a table of
/// their own: an event left unrouted before the upgrade is still routed by the sweeper after
/// it, one routed before is not, and routing and retention keep the new table exact.
#[tokio::test]
async fn the_upgrade_to_the_unrouted_table_keeps_the_events_still_to_route() {
    let Some(pg) = pg::server("the_upgrade_to_the_unrouted_table") else {
        return;
    };
    let url = pg.fresh_url().await;
    PostgresStore::migrate_to(&url, 2).await.unwrap();
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query(
        "INSERT INTO events (source, event_id, type, action, subject, text, attributes, \
         received_at, routed) VALUES ('ci', 'done', 't', '', 's', '', '{}', 10, TRUE), \
         ('ci', 'left', 't', '', 's', '', '{}', 20, FALSE)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let store = PostgresStore::connect(&url).await.unwrap();
    let unrouted = |store: PostgresStore| async move {
        let events = store.unrouted(Timestamp(i64::MAX), 10).await.unwrap();
        events
            .iter()
            .map(|e| e.event.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(unrouted(store.clone()).await, ["left"]);
    // Received before a day ago: the sweeper's own bound leaves it out.
    assert!(store.unrouted(Timestamp(20), 10).await.unwrap().is_empty());

    // A new event is unrouted until it is routed; a redelivery is known and says so.
    let audit = AuditRecord {
        at: Timestamp(30),
        action: "event.received".into(),
        data: json!({}),
    };
    let fresh = event("fresh", "s");
    store.receive(&fresh, Timestamp(30), &audit).await.unwrap();
    assert_eq!(unrouted(store.clone()).await, ["left", "fresh"]);
    let again = store.receive(&fresh, Timestamp(31), &audit).await.unwrap();
    assert!(matches!(
        again,
        ozcheck_runtime::store::Received::Known { routed: false, .. }
    ));
    store.route(&fresh, &[], Timestamp(32), true).await.unwrap();
    let again = store.receive(&fresh, Timestamp(33), &audit).await.unwrap();
    assert!(matches!(
        again,
        ozcheck_runtime::store::Received::Known { routed: true, .. }
    ));
    store.mark_routed("ci", "left").await.unwrap();
    assert!(unrouted(store.clone()).await.is_empty());

    // Retention forgets an event and its mark together.
    let late = event("late", "s");
    store.receive(&late, Timestamp(40), &audit).await.unwrap();
    assert_eq!(store.purge_events(Timestamp(50)).await.unwrap(), 4);
    assert!(unrouted(store.clone()).await.is_empty());
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM unrouted")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn edges_route_the_same_events_at_once_and_each_wait_is_claimed_once() {
    let Some(pg) = pg::server("edges_route_the_same_events_at_once") else {
        return;
    };
    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let edges = edges(&url, 4, &clock).await;
    for round in 0..ROUNDS {
        // Two jobs, two waits each (one on any subject), registered through different edges.
        for (k, job) in ["a", "b"].iter().enumerate() {
            let job = format!("{job}{round}");
            let via = &edges[(round + k) % edges.len()];
            via.start_job(&JobStart {
                id: job.clone(),
                ..JobStart::default()
            })
            .await
            .unwrap();
            via.wait_for_event(&job, &format!("{job}-1"), &json!({"source": "ci"}))
                .await
                .unwrap();
            let other = &edges[(round + k + 1) % edges.len()];
            other
                .wait_for_event(
                    &job,
                    &format!("{job}-2"),
                    &json!({"source": "ci", "subject": format!("s{round}")}),
                )
                .await
                .unwrap();
        }
    }
    // Every event is delivered to every edge at once, eight events at a time.
    let mut new = 0;
    for group in (0..ROUNDS).collect::<Vec<_>>().chunks(8) {
        let mut tasks = Vec::new();
        for round in group {
            for edge in &edges {
                let edge = edge.clone();
                let ev = event(&format!("e{round}"), &format!("s{round}"));
                tasks.push(tokio::spawn(async move {
                    edge.ingest(&ev).await.unwrap().is_some()
                }));
            }
        }
        for task in tasks {
            new += usize::from(task.await.unwrap());
        }
    }
    assert_eq!(new, ROUNDS, "each event is new to exactly one edge");
    // Each job got distinct events, at most one per wait; the subject wait got its round's
    // event unless the any-subject wait of its job took that event first.
    let store = edges[0].store();
    let mut matched = 0;
    for round in 0..ROUNDS {
        for job in ["a", "b"] {
            let waits = store.waits_of_job(&format!("{job}{round}")).await.unwrap();
            let [any, on_subject] = waits.as_slice() else {
                panic!("two waits");
            };
            let own = Some(("ci".to_owned(), format!("e{round}")));
            assert_eq!(
                any.state,
                WaitState::Matched,
                "{job}{round}: every event came later"
            );
            match on_subject.state {
                WaitState::Matched => {
                    assert_eq!(on_subject.event, own);
                    assert_ne!(any.event, own, "{job}{round}: one event twice");
                    matched += 2;
                }
                WaitState::Open => {
                    assert_eq!(any.event, own);
                    matched += 1;
                }
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(actions(&edges[0], "event.received").await, ROUNDS);
    assert_eq!(actions(&edges[0], "event.match").await, matched);
    assert!(
        store
            .unrouted(Timestamp(i64::MAX), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_wait_registered_through_one_edge_gets_an_event_delivered_to_another_or_looks_back() {
    let Some(pg) = pg::server("a_wait_registered_through_one_edge") else {
        return;
    };
    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let edges = edges(&url, 2, &clock).await;
    for job in ["j", "k"] {
        edges[0]
            .start_job(&JobStart {
                id: job.into(),
                ..JobStart::default()
            })
            .await
            .unwrap();
    }
    edges[0]
        .wait_for_event("j", "w", &json!({"source": "ci", "subject": "x"}))
        .await
        .unwrap();
    edges[1].ingest(&event("e1", "x")).await.unwrap().unwrap();
    assert_eq!(
        edges[0]
            .store()
            .wait("j", "w")
            .await
            .unwrap()
            .unwrap()
            .state,
        WaitState::Matched
    );
    // Look-back through edge 1 sees what edge 0 received.
    edges[0].ingest(&event("e2", "y")).await.unwrap().unwrap();
    let k = edges[1]
        .wait_for_event(
            "k",
            "v",
            &json!({"source": "ci", "subject": "y", "since": "job"}),
        )
        .await
        .unwrap();
    assert_eq!(k.state, WaitState::Matched);
    assert_eq!(k.event, Some(("ci".into(), "e2".into())));
    // A redelivery to the other edge is a duplicate.
    assert!(edges[1].ingest(&event("e2", "y")).await.unwrap().is_none());
    assert_eq!(actions(&edges[0], "event.received").await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_hourly_fire_limit_holds_across_edges() {
    let Some(pg) = pg::server("the_hourly_fire_limit_holds_across_edges") else {
        return;
    };
    let url = pg.fresh_url().await;
    let mut stores = Vec::new();
    for _ in 0..4 {
        stores.push(Arc::new(PostgresStore::connect(&url).await.unwrap()));
    }
    let limit = Some(FireLimit {
        max: 3,
        window_start: Timestamp(0),
    });
    let mut tasks = Vec::new();
    for i in 0..24 {
        let store = stores[i % stores.len()].clone();
        tasks.push(tokio::spawn(async move {
            let fire = Fire {
                job: format!("rt.r.t.e{}", i / 2),
                kind: "routine".into(),
                name: "r".into(),
                trigger: "t".into(),
                state: FireState::Started,
                reason: None,
                at: Timestamp(10),
                event: None,
            };
            let job = Job {
                started_at: Timestamp(10),
                ..contract::job(&fire.job)
            };
            let audit = AuditRecord {
                at: Timestamp(10),
                action: "event.match".into(),
                data: json!({"job": fire.job}),
            };
            store.record_fire(&fire, limit, &job, &audit).await.unwrap()
        }));
    }
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    let count = |o: &FireOutcome| outcomes.iter().filter(|x| *x == o).count();
    assert_eq!(count(&FireOutcome::Started), 3);
    assert_eq!(count(&FireOutcome::Refused("max_fires_per_hour".into())), 9);
    assert_eq!(
        count(&FireOutcome::Duplicate),
        12,
        "every job id fires once"
    );
    assert_eq!(stores[0].fires().await.unwrap().len(), 12);
    let started = futures_sum((0..12).map(|i| {
        let store = stores[i % stores.len()].clone();
        tokio::spawn(async move {
            let job = store.job(&format!("rt.r.t.e{i}")).await.unwrap();
            usize::from(job.is_some())
        })
    }))
    .await;
    assert_eq!(
        started, 3,
        "a started fire's job, and only its, is inserted with it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deadlines_fire_once_and_another_edge_takes_over_a_dead_holders_lease() {
    let Some(pg) = pg::server("deadlines_fire_once") else {
        return;
    };
    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let mut edges = edges(&url, 3, &clock).await;
    edges[0]
        .start_job(&JobStart {
            id: "j".into(),
            ..JobStart::default()
        })
        .await
        .unwrap();
    for i in 0..30 {
        let via = &edges[i % edges.len()];
        via.wait_for_event(
            "j",
            &format!("w{i}"),
            &json!({"source": "ci", "timeout": format!("{}s", 60 + i)}),
        )
        .await
        .unwrap();
    }
    // Half of the deadlines pass; every edge sweeps at once; one holds the lease and fires.
    clock.advance(Duration::from_secs(75));
    let fired: usize = futures_sum(edges.iter().map(|e| {
        let e = e.clone();
        tokio::spawn(async move { e.fire_due().await.unwrap() })
    }))
    .await;
    assert_eq!(fired, 16, "the deadlines 60 s to 75 s");
    // Exactly one edge holds the sweeper lease: only its holder can renew it.
    let mut held = Vec::new();
    for (i, e) in edges.iter().enumerate() {
        let until = clock.now().plus(LEASE_TERM);
        if e.store()
            .take_lease("sweeper", &format!("edge-{i}"), clock.now(), until)
            .await
            .unwrap()
        {
            held.push(i);
        }
    }
    assert_eq!(held.len(), 1, "one holder: {held:?}");
    let holder = held[0];
    // The holder dies; until its lease expires nobody fires, then another edge does.
    let dead = edges.remove(holder);
    drop(dead);
    clock.advance(Duration::from_secs(5));
    let fired: usize = futures_sum(edges.iter().map(|e| {
        let e = e.clone();
        tokio::spawn(async move { e.fire_due().await.unwrap() })
    }))
    .await;
    assert_eq!(fired, 0, "the dead holder's lease has not expired");
    clock.advance(LEASE_TERM);
    let fired: usize = futures_sum(edges.iter().map(|e| {
        let e = e.clone();
        tokio::spawn(async move { e.fire_due().await.unwrap() })
    }))
    .await;
    assert_eq!(fired, 14);
    let waits = edges[0].store().waits_of_job("j").await.unwrap();
    assert!(waits.iter().all(|w| w.state == WaitState::TimedOut));
}

async fn futures_sum(tasks: impl Iterator<Item = tokio::task::JoinHandle<usize>>) -> usize {
    let mut total = 0;
    for task in tasks {
        total += task.await.unwrap();
    }
    total
}

/// A routing transaction reads a job's ledger before it writes, and only the candidate waits
/// are locked: another wait of the job can be claimed with the same event meanwhile (by
/// look-back, or an edge routing a redelivery). The ledger row that claim commits makes the
/// router's insert find it; the router then routes again and skips the job, so the job still
/// gets the event once and the router's wait stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ledger_row_committed_while_routing_makes_the_router_route_again() {
    let Some(pg) = pg::server("a_ledger_row_committed_while_routing") else {
        return;
    };
    let url = pg.fresh_url().await;
    let store = Arc::new(PostgresStore::connect(&url).await.unwrap());
    let job = contract::job("lj");
    assert!(store.insert_job(&job).await.unwrap());
    let wait = contract::wait("lw", "lj", None, 1_000_000);
    let ozcheck_runtime::store::WaitInsert::Inserted(seq) = store.insert_wait(&wait).await.unwrap()
    else {
        panic!("the wait was not inserted");
    };
    let ev = event("le", "s");
    store
        .insert_event(&ev, Timestamp(1))
        .await
        .unwrap()
        .unwrap();

    // Another writer adds the job's ledger row for the event and holds it uncommitted.
    let mut other = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(
        "BEGIN; INSERT INTO job_events (job_id, event_source, event_id, wait_seq) \
         VALUES ('lj', 'ci', 'le', 0)",
    )
    .execute(&mut other)
    .await
    .unwrap();
    let routing = {
        let (store, ev) = (store.clone(), ev.clone());
        tokio::spawn(async move {
            let candidate = ozcheck_runtime::store::Candidate {
                wait_seq: seq,
                job: "lj".into(),
                audit: AuditRecord {
                    at: Timestamp(2),
                    action: "event.match".into(),
                    data: json!({}),
                },
            };
            store
                .route(&ev, &[candidate], Timestamp(2), true)
                .await
                .unwrap()
        })
    };
    // The router has read no ledger row and waits on the uncommitted one.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!routing.is_finished());
    sqlx::raw_sql("COMMIT").execute(&mut other).await.unwrap();
    let outcome = routing.await.unwrap();
    assert_eq!(outcome, [ozcheck_runtime::store::Claim::JobHadEvent]);
    assert_eq!(
        store.wait("lj", "lw").await.unwrap().unwrap().state,
        WaitState::Open
    );
    assert_eq!(
        store
            .audit()
            .await
            .unwrap()
            .iter()
            .filter(|r| r.action == "event.match")
            .count(),
        0
    );
}

/// A wait registered while its job is being ended on another edge: the registration reads the
/// job as running, and the job ends before the wait is committed. The registration holds the
/// job's row until it commits, so ending the job waits for it and then refuses the new wait;
/// no wait of an ended job stays open. (Under READ COMMITTED a plain read did not hold the row:
/// the job ended without seeing the wait, which then stayed open.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_registered_while_its_job_ends_is_refused() {
    let Some(pg) = pg::server("a_wait_registered_while_its_job_ends") else {
        return;
    };
    let url = pg.fresh_url().await;
    let store = Arc::new(PostgresStore::connect(&url).await.unwrap());
    let job = contract::job("ej");
    assert!(store.insert_job(&job).await.unwrap());
    let wait = contract::wait("ew", "ej", None, 1_000_000);
    // Another writer holds the wait's name uncommitted, so the registration stops after it
    // read the job, at its insert.
    let mut other = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(
        "BEGIN; INSERT INTO waits (name, job_id, source, timeout_ms, since, after_seq, \
         created_at, deadline) VALUES ('ew', 'ej', 'ci', 1, 'job', 0, 0, 1)",
    )
    .execute(&mut other)
    .await
    .unwrap();
    let registering = {
        let (store, wait) = (store.clone(), wait.clone());
        tokio::spawn(async move { store.insert_wait(&wait).await.unwrap() })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ending = {
        let store = store.clone();
        tokio::spawn(async move { store.end_job("ej", Timestamp(5)).await.unwrap() })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!registering.is_finished());
    sqlx::raw_sql("ROLLBACK").execute(&mut other).await.unwrap();
    let inserted = registering.await.unwrap();
    let refused = ending.await.unwrap().expect("the job was running");
    let stored = store.wait("ej", "ew").await.unwrap();
    match inserted {
        ozcheck_runtime::store::WaitInsert::Inserted(seq) => {
            let stored = stored.expect("the inserted wait");
            assert_eq!(
                (
                    stored.state,
                    refused.iter().map(|w| w.seq).collect::<Vec<_>>()
                ),
                (WaitState::Refused, vec![seq]),
                "the job ended and its new wait stayed open"
            );
        }
        other => {
            assert_eq!(other, ozcheck_runtime::store::WaitInsert::JobEnded);
            assert!(stored.is_none());
        }
    }
}
