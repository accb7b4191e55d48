//! Durability on the `SQLite` store: a runtime is stopped mid-wait (dropped, as in a crash, or
//! closed gracefully) and a new one is started on the same file; nothing is lost, deadlines that
//! passed meanwhile fire at once, and nothing is delivered twice. Also the store contract that
//! both backends share.

use std::sync::Arc;
use std::time::Duration;

use ozcheck_runtime::clock::{Clock, ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::model::{AuditRecord, Event, Fire, FireState, WaitState};
use ozcheck_runtime::store::{MemoryStore, Received, SqliteStore, Store, WaitInsert};
use ozcheck_runtime::{JobStart, Runtime};
use serde_json::json;

mod contract;

fn config() -> Arc<Config> {
    Arc::new(serde_json::from_value(json!({"sources": [{"name": "ci", "kind": "json"}]})).unwrap())
}

fn event(id: &str) -> Event {
    Event {
        source: "ci".into(),
        id: id.into(),
        kind: "t".into(),
        action: String::new(),
        subject: "s".into(),
        text: String::new(),
        attributes: json!({}),
    }
}

async fn start(path: &std::path::Path, clock: &ManualClock) -> Arc<Runtime<SqliteStore>> {
    let store = Arc::new(SqliteStore::open(path).await.unwrap());
    Runtime::start(store, Arc::new(clock.clone()), config())
        .await
        .unwrap()
}

#[tokio::test]
async fn crash_mid_wait_loses_nothing_and_delivers_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let clock = ManualClock::new(Timestamp(0));
    let rt = start(&db, &clock).await;
    rt.start_job(&JobStart {
        id: "j".into(),
        ..JobStart::default()
    })
    .await
    .unwrap();
    rt.wait_for_event("j", "w1", &json!({"source": "ci", "timeout": "1h"}))
        .await
        .unwrap();
    rt.wait_for_event("j", "w2", &json!({"source": "ci", "timeout": "2h"}))
        .await
        .unwrap();
    // A crash: the runtime and its pool go away without any shutdown step.
    drop(rt);

    let rt = start(&db, &clock).await;
    assert_eq!(rt.armed(), 2);
    assert!(rt.ingest(&event("e1")).await.unwrap().is_some());
    drop(rt);

    let rt = start(&db, &clock).await;
    assert!(
        rt.ingest(&event("e1")).await.unwrap().is_none(),
        "redelivery"
    );
    let w1 = rt.store().wait("j", "w1").await.unwrap().unwrap();
    let w2 = rt.store().wait("j", "w2").await.unwrap().unwrap();
    assert_eq!(w1.state, WaitState::Matched);
    assert_eq!(w2.state, WaitState::Open);
    assert_eq!(rt.armed(), 1);
}

#[tokio::test]
async fn deadlines_that_passed_while_down_fire_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let clock = ManualClock::new(Timestamp(0));
    let rt = start(&db, &clock).await;
    rt.start_job(&JobStart {
        id: "j".into(),
        ..JobStart::default()
    })
    .await
    .unwrap();
    rt.wait_for_event("j", "short", &json!({"source": "ci", "timeout": "10m"}))
        .await
        .unwrap();
    rt.wait_for_event("j", "long", &json!({"source": "ci", "timeout": "3h"}))
        .await
        .unwrap();
    rt.store().close().await;
    drop(rt);
    clock.advance(Duration::from_secs(3600));

    let rt = start(&db, &clock).await;
    let short = rt.store().wait("j", "short").await.unwrap().unwrap();
    assert_eq!(short.state, WaitState::TimedOut);
    assert_eq!(rt.armed(), 1);
    assert_eq!(
        rt.next_deadline().await.unwrap(),
        Some(Timestamp(3 * 3_600_000))
    );
}

/// The state a crash leaves between retaining an event and routing it: the event is retained
/// (with its `event.received` record), unrouted, and a wait that it matches is open.
async fn crash_after_receiving(db: &std::path::Path, clock: &ManualClock) {
    let rt = start(db, clock).await;
    rt.start_job(&JobStart {
        id: "j".into(),
        ..JobStart::default()
    })
    .await
    .unwrap();
    rt.wait_for_event("j", "w", &json!({"source": "ci", "timeout": "1h"}))
        .await
        .unwrap();
    let audit = AuditRecord {
        at: clock.now(),
        action: "event.received".into(),
        data: json!({"source": "ci", "id": "e1"}),
    };
    let received = rt
        .store()
        .receive(&event("e1"), clock.now(), &audit)
        .await
        .unwrap();
    assert!(matches!(received, Received::New(_)));
    drop(rt);
}

async fn audit_counts(rt: &Runtime<SqliteStore>) -> (usize, usize) {
    let audit = rt.store().audit().await.unwrap();
    let count = |action: &str| audit.iter().filter(|r| r.action == action).count();
    (count("event.received"), count("event.match"))
}

#[tokio::test]
async fn an_event_left_unrouted_by_a_crash_is_routed_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let clock = ManualClock::new(Timestamp(0));
    crash_after_receiving(&db, &clock).await;
    let rt = start(&db, &clock).await;
    let w = rt.store().wait("j", "w").await.unwrap().unwrap();
    assert_eq!(w.state, WaitState::Matched);
    assert!(
        rt.store()
            .unrouted(Timestamp(i64::MAX), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(audit_counts(&rt).await, (1, 1));
    // Routed once: a second start routes nothing again.
    drop(rt);
    let rt = start(&db, &clock).await;
    assert_eq!(audit_counts(&rt).await, (1, 1));
}

#[tokio::test]
async fn a_redelivery_routes_an_event_its_first_router_left_unrouted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let clock = ManualClock::new(Timestamp(0));
    let rt = start(&db, &clock).await;
    rt.start_job(&JobStart {
        id: "j".into(),
        ..JobStart::default()
    })
    .await
    .unwrap();
    rt.wait_for_event("j", "w", &json!({"source": "ci", "timeout": "1h"}))
        .await
        .unwrap();
    // Another router retained the event and died before routing it; this edge keeps running,
    // and the sender, who got no answer, delivers the event again to it.
    let audit = AuditRecord {
        at: clock.now(),
        action: "event.received".into(),
        data: json!({"source": "ci", "id": "e1"}),
    };
    let other = SqliteStore::open(&db).await.unwrap();
    other
        .receive(&event("e1"), clock.now(), &audit)
        .await
        .unwrap();
    drop(other);
    assert_eq!(
        rt.store().wait("j", "w").await.unwrap().unwrap().state,
        WaitState::Open
    );
    assert!(
        rt.ingest(&event("e1")).await.unwrap().is_none(),
        "a duplicate"
    );
    let w = rt.store().wait("j", "w").await.unwrap().unwrap();
    assert_eq!(w.state, WaitState::Matched);
    assert_eq!(audit_counts(&rt).await, (1, 1));
    assert!(rt.ingest(&event("e1")).await.unwrap().is_none());
    assert_eq!(audit_counts(&rt).await, (1, 1));
}

#[tokio::test]
async fn memory_store_contract() {
    contract::store_contract(MemoryStore::new()).await;
}

#[tokio::test]
async fn sqlite_store_contract() {
    contract::store_contract(SqliteStore::in_memory().await.unwrap()).await;
}

#[tokio::test]
async fn sqlite_file_store_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("c.db")).await.unwrap();
    contract::store_contract(store).await;
}

#[tokio::test]
async fn a_flow_stopped_between_two_steps_goes_on_at_start() {
    use ozcheck_runtime::model::{Job, Since, Wait, WaitSpec};

    let config: Config = serde_json::from_value(json!({
        "sources": [{"name": "ci", "kind": "json"}],
        "flows": [{"name": "watch", "trigger": {"event": {"source": "ci", "types": ["opened"]}},
                   "steps": [
                       {"id": "first", "wait_for_event": {"source": "ci", "types": ["a"]}},
                       {"id": "second", "wait_for_event": {"source": "ci", "types": ["b"],
                                                           "subject": "${{ trigger.event.subject }}"}}]}]
    }))
    .unwrap();
    // The state a crash leaves right after the first step's wait timed out.
    let store = MemoryStore::new();
    let now = Timestamp(0);
    let mut trigger = event("o1");
    trigger.kind = "opened".into();
    let seq = store.insert_event(&trigger, now).await.unwrap().unwrap();
    let fire = Fire {
        job: "event-watch-o1".into(),
        kind: "flow".into(),
        name: "watch".into(),
        trigger: "watch".into(),
        state: FireState::Started,
        reason: None,
        at: now,
        event: Some(trigger.clone()),
    };
    let job = Job {
        id: fire.job.clone(),
        started_at: now,
        start_seq: seq,
        deadline: None,
        runtime: "pydantic-ai".into(),
        shadow: false,
        sandboxed: true,
        outside_started: true,
        ended_at: None,
    };
    let audit = AuditRecord {
        at: now,
        action: "event.match".into(),
        data: json!({}),
    };
    store.record_fire(&fire, None, &job, &audit).await.unwrap();
    let first = Wait {
        seq: 0,
        name: "event-watch-o1/first".into(),
        job: job.id.clone(),
        spec: WaitSpec {
            source: "ci".into(),
            types: Some(vec!["a".into()]),
            subject: None,
            filter: None,
            timeout: Duration::from_secs(60),
            since: Since::Job,
        },
        after_seq: seq,
        created_at: now,
        deadline: Timestamp(60_000),
        state: WaitState::Open,
        event: None,
        matched: None,
        reason: None,
    };
    let WaitInsert::Inserted(first_seq) = store.insert_wait(&first).await.unwrap() else {
        panic!("the first step's wait is registered");
    };
    store
        .close(first_seq, WaitState::TimedOut, None, Timestamp(60_000))
        .await
        .unwrap();

    let clock = ManualClock::new(Timestamp(60_000));
    let rt = Runtime::start(Arc::new(store), Arc::new(clock), Arc::new(config))
        .await
        .unwrap();
    let second = rt
        .store()
        .wait("event-watch-o1", "event-watch-o1/second")
        .await
        .unwrap()
        .expect("the second step was registered at start");
    assert_eq!(second.state, WaitState::Open);
    assert_eq!(second.spec.subject.as_deref(), Some("s"));
    assert_eq!(rt.armed(), 1);
}
