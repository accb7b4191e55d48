//! The claim algorithm under concurrency, on both stores: several routers route the same event
//! at once, many times over; every wait is claimed exactly once and no job gets one event twice.

use std::sync::Arc;

use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::model::WaitState;
use ozcheck_runtime::store::{MemoryStore, SqliteStore, Store};
use ozcheck_runtime::{JobStart, Runtime};
use serde_json::json;

mod fixtures;

use fixtures::{config, event};

const ROUTERS: usize = 8;

/// One round: two jobs with two waits each on the subject (one of them on any subject), then
/// `ROUTERS` tasks route the same retained event at once (as edges racing past the dedupe would).
async fn race_round<S: Store>(rt: &Arc<Runtime<S>>, round: usize) {
    let subject = format!("s{round}");
    for job in ["a", "b"] {
        let job_id = format!("{job}{round}");
        rt.start_job(&JobStart {
            id: job_id.clone(),
            ..JobStart::default()
        })
        .await
        .unwrap();
        rt.wait_for_event(&job_id, &format!("{job_id}-1"), &json!({"source": "ci"}))
            .await
            .unwrap();
        rt.wait_for_event(
            &job_id,
            &format!("{job_id}-2"),
            &json!({"source": "ci", "subject": subject}),
        )
        .await
        .unwrap();
    }
    let ev = event(&format!("e{round}"), &subject);
    let seq = rt
        .store()
        .insert_event(&ev, rt.now())
        .await
        .unwrap()
        .unwrap();
    let stored = rt.store().event("ci", &ev.id).await.unwrap().unwrap();
    assert_eq!(stored.seq, seq);
    let mut tasks = Vec::new();
    for _ in 0..ROUTERS {
        let rt = rt.clone();
        let stored = stored.clone();
        tasks.push(tokio::spawn(
            async move { rt.route(&stored).await.unwrap() },
        ));
    }
    let mut claimed = Vec::new();
    for task in tasks {
        claimed.extend(task.await.unwrap());
    }
    claimed.sort();
    // Exactly one wait of each job, and it is the job's oldest wait.
    assert_eq!(claimed, vec![format!("a{round}-1"), format!("b{round}-1")]);
    for job in ["a", "b"] {
        let waits = rt
            .store()
            .waits_of_job(&format!("{job}{round}"))
            .await
            .unwrap();
        let states: Vec<WaitState> = waits.iter().map(|w| w.state).collect();
        assert_eq!(states, vec![WaitState::Matched, WaitState::Open]);
    }
}

async fn new_runtime<S: Store>(store: S) -> Arc<Runtime<S>> {
    let clock = ManualClock::new(Timestamp(1_767_225_600_000));
    Runtime::start(Arc::new(store), Arc::new(clock), config())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_routers_claim_each_wait_once_memory() {
    let rt = new_runtime(MemoryStore::new()).await;
    for round in 0..1000 {
        race_round(&rt, round).await;
    }
    let matches = rt
        .store()
        .audit()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.action == "event.match")
        .count();
    assert_eq!(matches, 2000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_routers_claim_each_wait_once_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("race.db"))
        .await
        .unwrap();
    let rt = new_runtime(store).await;
    // SQLite serialises writers, so fewer rounds exercise the same interleavings.
    for round in 0..100 {
        race_round(&rt, round).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_deliveries_of_one_event_are_received_once() {
    let rt = new_runtime(MemoryStore::new()).await;
    for round in 0..1000 {
        let job = format!("j{round}");
        rt.start_job(&JobStart {
            id: job.clone(),
            ..JobStart::default()
        })
        .await
        .unwrap();
        rt.wait_for_event(&job, &format!("w{round}"), &json!({"source": "ci"}))
            .await
            .unwrap();
        let ev = event(&format!("e{round}"), "s");
        let mut tasks = Vec::new();
        for _ in 0..ROUTERS {
            let rt = rt.clone();
            let ev = ev.clone();
            tasks.push(tokio::spawn(async move { rt.ingest(&ev).await.unwrap() }));
        }
        let mut fresh = 0;
        for task in tasks {
            fresh += usize::from(task.await.unwrap().is_some());
        }
        assert_eq!(
            fresh, 1,
            "round {round}: the event was received {fresh} times"
        );
        let wait = rt
            .store()
            .wait(&job, &format!("w{round}"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(wait.event, Some(("ci".into(), ev.id.clone())));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn timeouts_and_events_race_to_one_outcome() {
    let clock = ManualClock::new(Timestamp(0));
    let rt = Runtime::start(
        Arc::new(MemoryStore::new()),
        Arc::new(clock.clone()),
        config(),
    )
    .await
    .unwrap();
    for round in 0..500 {
        let job = format!("j{round}");
        rt.start_job(&JobStart {
            id: job.clone(),
            ..JobStart::default()
        })
        .await
        .unwrap();
        let name = format!("w{round}");
        rt.wait_for_event(&job, &name, &json!({"source": "ci", "timeout": "1s"}))
            .await
            .unwrap();
        clock.advance(std::time::Duration::from_secs(1));
        let stored = {
            let ev = event(&format!("e{round}"), "s");
            rt.store().insert_event(&ev, rt.now()).await.unwrap();
            rt.store().event("ci", &ev.id).await.unwrap().unwrap()
        };
        let timer = {
            let rt = rt.clone();
            tokio::spawn(async move { rt.fire_due().await.unwrap() })
        };
        let router = {
            let rt = rt.clone();
            tokio::spawn(async move { rt.route(&stored).await.unwrap() })
        };
        let fired = timer.await.unwrap();
        let routed = router.await.unwrap();
        let wait = rt.store().wait(&job, &name).await.unwrap().unwrap();
        match wait.state {
            WaitState::TimedOut => assert!(fired == 1 && routed.is_empty()),
            WaitState::Matched => assert!(fired == 0 && routed == vec![name.clone()]),
            other => panic!("unexpected state {other:?}"),
        }
    }
}
