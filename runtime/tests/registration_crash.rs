//! A registration cut short by a crash at any step still ends as one whole registration would
//! (E15: a new wait looks back, and waits survive restarts): a job waits for an event that is
//! retained already, the edge dies before each single store step of the registration in turn
//! (every row write and every commit, as the crash switch counts them), a new edge starts on
//! the same database, and then the wait has the event (or, past its deadline with nothing
//! before it, timed out), and the client's retry of the registration gets the wait as it
//! stands, on `SQLite` and on `PostgreSQL`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::faults::{Faults, Faulty, Plan};
use ozcheck_runtime::model::WaitState;
use ozcheck_runtime::source::Delivery;
use ozcheck_runtime::store::{PostgresStore, SqliteStore, Store};
use ozcheck_runtime::{JobStart, Routing, Runtime, RuntimeError};
use serde_json::{Value, json};

mod pg;

fn config() -> Arc<Config> {
    Arc::new(
        serde_json::from_value(json!({"sources": [{"name": "ci", "kind": "json"}]}))
            .expect("config"),
    )
}

fn delivery(id: &str) -> Delivery {
    Delivery {
        headers: Vec::new(),
        body: format!(r#"{{"id":"{id}","type":"check","subject":"s","attributes":{{"n":1}}}}"#)
            .into_bytes(),
    }
}

/// The registration every case makes: a filter, so the look-back evaluates it.
fn args() -> Value {
    json!({"source": "ci", "subject": "s", "filter": "event.attributes.n == 1",
           "timeout": "1h"})
}

/// Where the databases of the cases live: a `SQLite` file each, or a fresh `PostgreSQL` schema
/// each (routed through the store's index, as edges on one database are).
trait Place {
    type Store: Store;
    /// A new, empty database.
    fn fresh(&self, case: usize) -> impl Future<Output = String>;
    /// A handle on the database at `at`.
    fn open(&self, at: &str) -> impl Future<Output = Self::Store>;
    fn routing(&self) -> Routing;
}

struct Sqlite(tempfile::TempDir);

impl Place for Sqlite {
    type Store = SqliteStore;
    async fn fresh(&self, case: usize) -> String {
        self.0
            .path()
            .join(format!("case-{case}.db"))
            .to_string_lossy()
            .into_owned()
    }
    async fn open(&self, at: &str) -> SqliteStore {
        SqliteStore::open(std::path::Path::new(at))
            .await
            .expect("open")
    }
    fn routing(&self) -> Routing {
        Routing::Local
    }
}

struct Postgres(&'static pg::TestPg);

impl Place for Postgres {
    type Store = PostgresStore;
    async fn fresh(&self, _: usize) -> String {
        self.0.fresh_url().await
    }
    async fn open(&self, at: &str) -> PostgresStore {
        PostgresStore::connect(at).await.expect("connect")
    }
    fn routing(&self) -> Routing {
        Routing::Shared {
            edge: "edge-a".into(),
        }
    }
}

/// An edge on `at` behind a crash switch, with job `j1` started and, when `event`, the event
/// `e1` delivered (and routed to nobody) before the wait is registered.
async fn prepared<P: Place>(
    place: &P,
    at: &str,
    clock: &ManualClock,
    event: bool,
) -> (Arc<Runtime<Faulty<P::Store>>>, Arc<Faults>)
where
    Faulty<P::Store>: Store,
{
    let faults = Faults::new();
    let store = Faulty::new(place.open(at).await, faults.clone());
    let rt = Runtime::start_with(
        Arc::new(store),
        Arc::new(clock.clone()),
        config(),
        &place.routing(),
    )
    .await
    .expect("start");
    rt.start_job(&JobStart {
        id: "j1".into(),
        ..JobStart::default()
    })
    .await
    .expect("job");
    if event {
        let delivered = rt.deliver("ci", &delivery("e1")).await.expect("deliver");
        assert_eq!(delivered.status, 202);
    }
    (rt, faults)
}

async fn restarted<P: Place>(place: &P, at: &str, clock: &ManualClock) -> Arc<Runtime<P::Store>> {
    Runtime::start_with(
        Arc::new(place.open(at).await),
        Arc::new(clock.clone()),
        config(),
        &place.routing(),
    )
    .await
    .expect("restart")
}

/// The store steps of one registration that looks back and finds `e1`.
async fn steps_of_a_registration<P: Place>(place: &P, clock: &ManualClock) -> Vec<&'static str>
where
    Faulty<P::Store>: Store,
{
    let at = place.fresh(usize::MAX).await;
    let (rt, faults) = prepared(place, &at, clock, true).await;
    let before = faults.trace().len();
    let wait = rt.wait_for_event("j1", "w", &args()).await.expect("wait");
    assert_eq!(
        wait.state,
        WaitState::Matched,
        "an uninterrupted registration"
    );
    faults.trace()[before..].to_vec()
}

/// The wait `w` of `j1` in the store: its state and the id of the event it got.
async fn state_of<S: Store>(rt: &Runtime<S>) -> Option<(WaitState, Option<String>)> {
    let wait = rt.store().wait("j1", "w").await.expect("read")?;
    Some((wait.state, wait.event.map(|e| e.1)))
}

/// Crashes before every step of a registration in turn; after each restart the wait is
/// absent (nothing committed: the retry registers it) or has the event, and the retry's answer
/// is the wait with the event.
async fn crash_before_each_step<P: Place>(place: &P)
where
    Faulty<P::Store>: Store,
{
    let clock = ManualClock::new(Timestamp(1_000_000));
    let steps = steps_of_a_registration(place, &clock).await;
    for name in ["insert_wait", "insert_ledger", "close_wait", "commit"] {
        assert!(steps.contains(&name), "{name} is among {steps:?}");
    }
    let matched = Some((WaitState::Matched, Some("e1".to_owned())));
    for (k, name) in steps.iter().enumerate() {
        let at = place.fresh(k).await;
        let (rt, faults) = prepared(place, &at, &clock, true).await;
        faults.arm(Plan::AtStep(k as u64));
        let outcome = rt.wait_for_event("j1", "w", &args()).await;
        assert!(
            outcome.is_err(),
            "step {k} ({name}): the registration crashed"
        );
        assert_eq!(faults.crashed(), Some(format!("step {k} ({name})")));
        drop(rt);

        let rt = restarted(place, &at, &clock).await;
        let after = state_of(&*rt).await;
        assert!(
            after.is_none() || after == matched,
            "step {k} ({name}): after the restart the wait is {after:?}, beside the event e1"
        );
        let retry = rt.wait_for_event("j1", "w", &args()).await;
        let retry = retry.unwrap_or_else(|e| panic!("step {k} ({name}): the retry got {e}"));
        assert_eq!(
            (retry.state, retry.event.map(|e| e.1)),
            (WaitState::Matched, Some("e1".to_owned())),
            "step {k} ({name}): the retry's answer"
        );
        // Other arguments under the same name stay a conflict.
        let other = rt.wait_for_event("j1", "w", &json!({"source": "ci"})).await;
        assert!(
            matches!(&other, Err(RuntimeError::Conflict { code, .. }) if *code == "wait-exists"),
            "step {k}: {other:?}"
        );
    }
    eprintln!(
        "registration crash windows: {} steps, a crash before each",
        steps.len()
    );
}

/// A crash right after the wait commits, and the edge is down past the deadline: with the
/// event retained from before, the wait has it (it came before the deadline); with none, the
/// wait times out, and a retry gets it timed out.
async fn down_past_the_deadline<P: Place>(place: &P)
where
    Faulty<P::Store>: Store,
{
    for event in [true, false] {
        let clock = ManualClock::new(Timestamp(1_000_000));
        let at = place.fresh(1000 + usize::from(event)).await;
        let (rt, faults) = prepared(place, &at, &clock, event).await;
        faults.arm(Plan::After {
            after: vec!["insert_wait".into(), "commit".into()],
            at: None,
        });
        let outcome = rt.wait_for_event("j1", "w", &args()).await;
        if event {
            assert!(
                outcome.is_err(),
                "the registration crashed after its commit"
            );
        }
        drop(rt);
        clock.advance(Duration::from_secs(2 * 3600));
        let rt = restarted(place, &at, &clock).await;
        let want = if event {
            (WaitState::Matched, Some("e1".to_owned()))
        } else {
            (WaitState::TimedOut, None)
        };
        assert_eq!(state_of(&*rt).await, Some(want.clone()), "event: {event}");
        let retry = rt.wait_for_event("j1", "w", &args()).await.expect("retry");
        assert_eq!((retry.state, retry.event.map(|e| e.1)), want);
    }
}

#[tokio::test]
async fn a_crash_before_any_step_of_a_registration_leaves_no_wait_beside_its_event_sqlite() {
    let place = Sqlite(tempfile::tempdir().expect("tempdir"));
    crash_before_each_step(&place).await;
    down_past_the_deadline(&place).await;
}

#[tokio::test]
async fn a_crash_before_any_step_of_a_registration_leaves_no_wait_beside_its_event_postgres() {
    let Some(server) = pg::server("registration_crash_postgres") else {
        return;
    };
    let place = Postgres(server);
    crash_before_each_step(&place).await;
    down_past_the_deadline(&place).await;
}

/// The memory store keeps the mark too: a wait committed without its look-back is found by the
/// sweeper's read, and marked once looked back.
#[tokio::test]
async fn the_memory_store_lists_the_waits_still_to_look_back() {
    let store = Arc::new(ozcheck_runtime::store::MemoryStore::new());
    let clock = ManualClock::new(Timestamp(1_000_000));
    let rt = Runtime::start(store.clone(), Arc::new(clock.clone()), config())
        .await
        .expect("start");
    rt.start_job(&JobStart {
        id: "j1".into(),
        ..JobStart::default()
    })
    .await
    .expect("job");
    let wait = rt
        .wait_for_event("j1", "w", &json!({"source": "ci"}))
        .await
        .expect("wait");
    assert_eq!(wait.state, WaitState::Open);
    let pending = store
        .waits_to_look_back(Timestamp(i64::MAX), 10)
        .await
        .expect("read");
    assert!(pending.is_empty(), "looked back already: {pending:?}");
    // A wait committed by a registration that died before its look-back.
    let mut cut = wait.clone();
    cut.name = "cut".into();
    store.insert_wait(&cut).await.expect("insert");
    let pending = store
        .waits_to_look_back(Timestamp(i64::MAX), 10)
        .await
        .expect("read");
    assert_eq!(
        pending.iter().map(|w| w.name.as_str()).collect::<Vec<_>>(),
        ["cut"]
    );
    rt.deliver("ci", &delivery("e1")).await.expect("deliver");
    assert_eq!(
        rt.look_back_pending(Timestamp(i64::MAX))
            .await
            .expect("look"),
        1
    );
    assert!(
        store
            .waits_to_look_back(Timestamp(i64::MAX), 10)
            .await
            .expect("read")
            .is_empty()
    );
}
