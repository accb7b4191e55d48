//! Edges for the tests that run several runtimes on one `PostgreSQL` database: a fresh schema,
//! an edge whose connections carry a name (so that a test can terminate them and no other's),
//! jobs, and deliveries whose answers are bounded in time.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::model::{Event, StoredEvent};
use ozcheck_runtime::store::PostgresStore;
use ozcheck_runtime::{JobStart, Routing, Runtime};
use sqlx::Connection;
use tokio::task::JoinHandle;

pub type Rt = Arc<Runtime<PostgresStore>>;

/// A delivery's answer: new (`Some`), a duplicate (`None`), or the store's error.
pub type Answer = Result<Option<StoredEvent>, String>;

/// A fresh schema on the test server and the clock of the edges on it; `None` without a server
/// (the test is skipped, and `pg::server` says so).
pub async fn schema(test: &str) -> Option<(String, ManualClock)> {
    let pg = crate::pg::server(test)?;
    Some((pg.fresh_url().await, ManualClock::new(Timestamp(1_000_000))))
}

/// An edge named `name` sharing the database at `url`, its connections named `app`.
pub async fn edge_named(
    url: &str,
    name: &str,
    app: &str,
    clock: &ManualClock,
    config: Arc<Config>,
) -> Rt {
    let url = format!("{url}&application_name={app}");
    let store = Arc::new(PostgresStore::connect(&url).await.unwrap());
    let routing = Routing::Shared {
        edge: name.to_owned(),
    };
    Runtime::start_with(store, Arc::new(clock.clone()), config, &routing)
        .await
        .unwrap()
}

/// Starts the job `id` with the default settings.
pub async fn job(rt: &Rt, id: &str) {
    rt.start_job(&JobStart {
        id: id.into(),
        ..JobStart::default()
    })
    .await
    .unwrap();
}

/// `rt.ingest(ev)` on a task of its own.
pub fn spawn_ingest(rt: &Rt, ev: Event) -> JoinHandle<Answer> {
    let rt = rt.clone();
    tokio::spawn(async move { rt.ingest(&ev).await.map_err(|e| e.0) })
}

/// A delivery's answer, or a failure if it panicked or took longer than `hang`.
pub async fn answer(task: JoinHandle<Answer>, what: &str, hang: Duration) -> Answer {
    match tokio::time::timeout(hang, task).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => panic!("{what}: the delivery panicked: {e}"),
        Err(elapsed) => panic!("{what}: the delivery hung ({elapsed} after {hang:?})"),
    }
}

/// A connection of its own to the database at `url`.
pub async fn connect(url: &str) -> sqlx::PgConnection {
    sqlx::PgConnection::connect(url).await.unwrap()
}
