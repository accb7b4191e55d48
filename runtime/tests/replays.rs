//! A delivery is one event however often it is sent (issue 35, items 3 and 4): GitHub signs the
//! body and not `X-GitHub-Delivery`, so the same signed bytes under 20 new delivery ids are one
//! event and one fire, each replay `200 duplicate` and audited as `event.duplicate`; GitHub's
//! own redelivery (same id, same body) is a duplicate too; and a redelivery after the body's
//! one-day retention is a duplicate that routes nothing, until the identity itself is forgotten
//! past the longest wait. Each runs on memory, `SQLite` and `PostgreSQL`.

use std::sync::Arc;
use std::time::Duration;

use ozcheck_runtime::clock::{DAY, ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::edge::DELIVERIES_KEPT;
use ozcheck_runtime::model::WaitState;
use ozcheck_runtime::source::{Delivery, sign};
use ozcheck_runtime::store::{MemoryStore, PostgresStore, SqliteStore, Store};
use ozcheck_runtime::{JobStart, Routing, Runtime};
use serde_json::json;

mod pg;

const SECRET: &str = "s3cret";

fn config() -> Arc<Config> {
    Arc::new(
        serde_json::from_value(json!({
            "sources": [{"name": "gh", "kind": "github", "secret": SECRET}],
            "routines": [{"name": "ci", "triggers": [
                {"name": "failed", "event": {"source": "gh", "types": ["check_suite"]}}]}]
        }))
        .unwrap(),
    )
}

/// The signed body of one failed CI run.
fn body() -> Vec<u8> {
    json!({"action": "completed", "repository": {"full_name": "octo/demo"},
           "check_suite": {"conclusion": "failure", "pull_requests": [{"number": 12}]}})
    .to_string()
    .into_bytes()
}

fn delivery(id: &str) -> Delivery {
    let body = body();
    Delivery {
        headers: vec![
            ("x-github-event".into(), "check_suite".into()),
            ("x-github-delivery".into(), id.into()),
            ("x-hub-signature-256".into(), sign(SECRET, &body)),
        ],
        body,
    }
}

async fn edge<S: Store>(store: S, routing: &Routing) -> (Arc<Runtime<S>>, ManualClock) {
    let clock = ManualClock::new(Timestamp(1_000_000));
    let rt = Runtime::start_with(Arc::new(store), Arc::new(clock.clone()), config(), routing)
        .await
        .unwrap();
    (rt, clock)
}

async fn wait_on_pr<S: Store>(rt: &Runtime<S>, job: &str) {
    rt.start_job(&JobStart {
        id: job.into(),
        ..JobStart::default()
    })
    .await
    .unwrap();
    let args = json!({"source": "gh", "types": ["check_suite"], "subject": "octo/demo#12",
                      "timeout": "7d"});
    rt.wait_for_event(job, "ci", &args).await.unwrap();
}

async fn records<S: Store>(rt: &Runtime<S>, action: &str) -> usize {
    let audit = rt.store().audit().await.unwrap();
    audit.iter().filter(|r| r.action == action).count()
}

/// The same signed body under 20 new delivery ids, and GitHub's own redelivery: one event, one
/// fire, one wait matched; every replay answered `200 duplicate` and audited.
async fn replays<S: Store>(store: S, routing: &Routing) {
    let (rt, _) = edge(store, routing).await;
    wait_on_pr(&rt, "j1").await;
    let first = rt.deliver("gh", &delivery("d0")).await.unwrap();
    assert_eq!((first.status, first.duplicate), (202, false));
    for n in 1..=20 {
        let again = rt
            .deliver("gh", &delivery(&format!("replay-{n}")))
            .await
            .unwrap();
        assert_eq!((again.status, again.duplicate), (200, true), "replay {n}");
        assert_eq!(
            again.event.unwrap().id,
            "d0",
            "replay {n} names the first event"
        );
    }
    let redelivered = rt.deliver("gh", &delivery("d0")).await.unwrap();
    assert_eq!((redelivered.status, redelivered.duplicate), (200, true));
    assert_eq!(rt.store().fires().await.unwrap().len(), 1);
    assert_eq!(records(&rt, "event.received").await, 1);
    assert_eq!(records(&rt, "event.duplicate").await, 20);
    let wait = rt.wait_named("j1", "ci").await.unwrap();
    assert_eq!(wait.state, WaitState::Matched);
    assert_eq!(wait.event.map(|(_, id)| id).as_deref(), Some("d0"));
}

/// A redelivery after the body's retention reaches no job that started after the event first
/// arrived (E3), under its own id or another; past [`DELIVERIES_KEPT`] it is forgotten.
async fn late_redeliveries<S: Store>(store: S, routing: &Routing) {
    let (rt, clock) = edge(store, routing).await;
    assert_eq!(rt.deliver("gh", &delivery("d0")).await.unwrap().status, 202);
    clock.advance(DAY * 2);
    assert_eq!(rt.purge().await.unwrap(), 1, "the body is purged");
    wait_on_pr(&rt, "j2").await;
    for id in ["d0", "d1"] {
        let late = rt.deliver("gh", &delivery(id)).await.unwrap();
        assert_eq!((late.status, late.duplicate), (200, true), "{id}");
    }
    assert_eq!(
        rt.wait_named("j2", "ci").await.unwrap().state,
        WaitState::Open
    );
    assert_eq!(rt.store().fires().await.unwrap().len(), 1);
    assert_eq!(records(&rt, "event.duplicate").await, 2);
    // Kept as long as promised, and no longer.
    clock.set(
        Timestamp(1_000_000)
            .plus(DELIVERIES_KEPT)
            .minus(Duration::from_secs(1)),
    );
    rt.purge().await.unwrap();
    assert!(rt.deliver("gh", &delivery("d0")).await.unwrap().duplicate);
    clock.advance(Duration::from_secs(2));
    rt.purge().await.unwrap();
    assert_eq!(rt.deliver("gh", &delivery("d0")).await.unwrap().status, 202);
}

async fn postgres(test: &str) -> Option<PostgresStore> {
    let server = pg::server(test)?;
    Some(
        PostgresStore::connect(&server.fresh_url().await)
            .await
            .unwrap(),
    )
}

fn shared() -> Routing {
    Routing::Shared { edge: "a".into() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_signed_body_under_twenty_delivery_ids_is_one_event_and_one_fire() {
    replays(MemoryStore::new(), &Routing::Local).await;
    replays(SqliteStore::in_memory().await.unwrap(), &Routing::Local).await;
    if let Some(store) = postgres("one_signed_body_under_twenty_delivery_ids").await {
        replays(store, &shared()).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redelivery_after_retention_is_a_duplicate_that_routes_nothing() {
    late_redeliveries(MemoryStore::new(), &Routing::Local).await;
    late_redeliveries(SqliteStore::in_memory().await.unwrap(), &Routing::Local).await;
    if let Some(store) = postgres("a_redelivery_after_retention_is_a_duplicate").await {
        late_redeliveries(store, &shared()).await;
    }
}
