//! No crash window loses an event or a fire (E15): a delivery that reaches two waiting jobs, a
//! routine trigger and a flow trigger is cut short by a crash before each single step of its
//! ingestion and routing in turn (every row write of every transaction, and every commit), the
//! runtime restarts on the same database, the sender delivers again (it never got an answer),
//! and every open wait and trigger has the event exactly once.

use std::path::Path;
use std::sync::Arc;

use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::faults::{Faults, Faulty, Plan};
use ozcheck_runtime::model::{FireState, WaitState};
use ozcheck_runtime::source::Delivery;
use ozcheck_runtime::store::{SqliteStore, Store};
use ozcheck_runtime::{JobStart, Runtime};
use serde_json::json;

fn config() -> Arc<Config> {
    Arc::new(
        serde_json::from_value(json!({
            "sources": [{"name": "ci", "kind": "json"}],
            "routines": [{"name": "r", "triggers": [{"name": "t", "event": {"source": "ci"}}]}],
            "flows": [{"name": "f", "trigger": {"event": {"source": "ci", "types": ["opened"]}},
                       "steps": [{"id": "ci", "wait_for_event": {
                           "source": "ci", "types": ["check"],
                           "subject": "${{ trigger.event.subject }}"}}]}]
        }))
        .expect("config"),
    )
}

fn delivery() -> Delivery {
    Delivery {
        headers: Vec::new(),
        body: br#"{"id":"e1","type":"opened","subject":"s","attributes":{"n":1}}"#.to_vec(),
    }
}

/// A runtime on the database at `path` with two jobs waiting, and its crash switch.
async fn prepared(
    path: &Path,
    clock: &ManualClock,
) -> (Arc<Runtime<Faulty<SqliteStore>>>, Arc<Faults>) {
    let faults = Faults::new();
    let store = Faulty::new(SqliteStore::open(path).await.expect("open"), faults.clone());
    let rt = Runtime::start(Arc::new(store), Arc::new(clock.clone()), config())
        .await
        .expect("start");
    for job in ["j1", "j2"] {
        rt.start_job(&JobStart {
            id: job.into(),
            ..JobStart::default()
        })
        .await
        .expect("job");
    }
    rt.wait_for_event("j1", "w1", &json!({"source": "ci", "types": ["opened"]}))
        .await
        .expect("w1");
    rt.wait_for_event(
        "j2",
        "w2",
        &json!({"source": "ci", "subject": "s", "filter": "event.attributes.n == 1"}),
    )
    .await
    .expect("w2");
    (rt, faults)
}

async fn restarted(path: &Path, clock: &ManualClock) -> Arc<Runtime<SqliteStore>> {
    let store = SqliteStore::open(path).await.expect("reopen");
    Runtime::start(Arc::new(store), Arc::new(clock.clone()), config())
        .await
        .expect("restart")
}

/// How many times each place got the event, as the store shows it.
#[derive(Debug, PartialEq, Eq)]
struct Reached {
    received: usize,
    wait_matches: [usize; 2],
    fire_matches: [usize; 2],
    waits_matched: [bool; 2],
    fires_started: usize,
    flow_step_open: bool,
    unrouted: usize,
}

const NOTHING: Reached = Reached {
    received: 0,
    wait_matches: [0, 0],
    fire_matches: [0, 0],
    waits_matched: [false, false],
    fires_started: 0,
    flow_step_open: false,
    unrouted: 0,
};

const ONCE: Reached = Reached {
    received: 1,
    wait_matches: [1, 1],
    fire_matches: [1, 1],
    waits_matched: [true, true],
    fires_started: 2,
    flow_step_open: true,
    unrouted: 0,
};

async fn reached<S: Store>(rt: &Runtime<S>) -> Reached {
    let store = rt.store();
    let audit = store.audit().await.expect("audit");
    let count = |pred: &dyn Fn(&serde_json::Value) -> bool, action: &str| {
        audit
            .iter()
            .filter(|r| r.action == action && r.data["id"] == "e1" && pred(&r.data))
            .count()
    };
    let waited = |job: &'static str| move |d: &serde_json::Value| d["job"] == job;
    let fired = |to: &'static str| move |d: &serde_json::Value| d["to"] == to;
    let matched = async |job: &str, name: &str| {
        store.wait(job, name).await.expect("read").is_some_and(|w| {
            w.state == WaitState::Matched && w.matched.as_ref().is_some_and(|e| e.id == "e1")
        })
    };
    let fires = store.fires().await.expect("fires");
    let mut started = 0;
    for fire in &fires {
        let job = store.job(&fire.job).await.expect("job");
        // A fire is never recorded without its job, and its job is outside-started.
        assert!(
            job.is_some_and(|j| j.outside_started),
            "fire {} has no outside-started job",
            fire.job
        );
        started += usize::from(fire.state == FireState::Started);
    }
    let step = store
        .wait("event-f-e1", "event-f-e1/ci")
        .await
        .expect("read");
    Reached {
        received: count(&|_| true, "event.received"),
        wait_matches: [
            count(&waited("j1"), "event.match"),
            count(&waited("j2"), "event.match"),
        ],
        fire_matches: [
            count(&fired("routine"), "event.match"),
            count(&fired("flow"), "event.match"),
        ],
        waits_matched: [matched("j1", "w1").await, matched("j2", "w2").await],
        fires_started: started,
        flow_step_open: step
            .is_some_and(|w| w.state == WaitState::Open && w.spec.subject.as_deref() == Some("s")),
        unrouted: store
            .unrouted(Timestamp(i64::MAX), 10)
            .await
            .expect("unrouted")
            .len(),
    }
}

/// The steps a delivery takes, as the crash switch counts them.
async fn steps_of_a_delivery(dir: &Path, clock: &ManualClock) -> Vec<&'static str> {
    let db = dir.join("count.db");
    let (rt, faults) = prepared(&db, clock).await;
    let before = faults.trace().len();
    let delivered = rt.deliver("ci", &delivery()).await.expect("deliver");
    assert_eq!(delivered.status, 202);
    assert_eq!(reached(&*rt).await, ONCE, "an uninterrupted delivery");
    faults.trace()[before..].to_vec()
}

#[tokio::test]
async fn a_crash_before_any_step_of_ingestion_and_routing_loses_nothing_and_doubles_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = ManualClock::new(Timestamp(0));
    let steps = steps_of_a_delivery(dir.path(), &clock).await;
    // The delivery's own audit record, the event with its record, the claims, both fires with
    // their jobs and records, the flow's first step, the routed mark: each a step to crash at.
    for name in [
        "insert_event",
        "insert_ledger",
        "close_wait",
        "insert_fire",
        "insert_job",
        "insert_wait",
        "set_routed",
        "commit",
    ] {
        assert!(
            steps.contains(&name),
            "{name} is among the steps: {steps:?}"
        );
    }
    let commits = steps.iter().filter(|s| **s == "commit").count();
    for (k, name) in steps.iter().enumerate() {
        let db = dir.path().join(format!("crash-{k}.db"));
        let (rt, faults) = prepared(&db, &clock).await;
        faults.arm(Plan::AtStep(k as u64));
        let outcome = rt.deliver("ci", &delivery()).await;
        assert!(outcome.is_err(), "step {k} ({name}): the delivery crashed");
        assert_eq!(
            faults.crashed(),
            Some(format!("step {k} ({name})")),
            "the crash came where it was armed"
        );
        drop(rt);

        // After the restart the event is either wholly absent (it was never committed: the
        // sender's retry brings it) or wholly routed (the restart routed what was left).
        let rt = restarted(&db, &clock).await;
        let after_restart = reached(&*rt).await;
        assert!(
            after_restart == NOTHING || after_restart == ONCE,
            "step {k} ({name}): after the restart {after_restart:?}"
        );
        let again = rt.deliver("ci", &delivery()).await.expect("redeliver");
        assert!(matches!(again.status, 200 | 202), "step {k}: {again:?}");
        assert_eq!(
            reached(&*rt).await,
            ONCE,
            "step {k} ({name}): after the redelivery"
        );
        // A second restart changes nothing: everything is done exactly once.
        drop(rt);
        let rt = restarted(&db, &clock).await;
        assert_eq!(reached(&*rt).await, ONCE, "step {k} ({name}): at rest");
    }
    eprintln!(
        "crash windows: {} steps of one delivery ({commits} transactions), a crash before each",
        steps.len()
    );
}
