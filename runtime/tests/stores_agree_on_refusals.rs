//! One input, one answer, on every store (issue 35, item 5): a key or text the stores cannot
//! all keep (a NUL character, which `PostgreSQL` refuses in text) is refused at the door with a
//! 400 and a stable code, never a `503 store-unavailable` on one store and a success on another.
//! Every refusal runs through the HTTP API on memory, `SQLite` and `PostgreSQL`, and the three
//! lists of answers must be equal and as expected.

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::serve::router;
use ozcheck_runtime::store::{MemoryStore, PostgresStore, SqliteStore, Store};
use ozcheck_runtime::{Routing, Runtime};
use serde_json::{Value, json};
use tower::ServiceExt;

mod pg;

/// A request: its method, its path (percent-encoded) and its JSON body.
type Call = (&'static str, &'static str, Value);

/// What a store answered to one call: the call's path, the status and the error code.
type Answer = (&'static str, u16, String);

fn config() -> Arc<Config> {
    Arc::new(serde_json::from_value(json!({"sources": [{"name": "ci", "kind": "json"}]})).unwrap())
}

/// The calls, each with the status and code every store must give: the job `j` and its wait
/// `ok` exist when the refusals run.
fn calls() -> Vec<(Call, u16, &'static str)> {
    let wait = |extra: Value| {
        let mut args = json!({"source": "ci", "subject": "s"});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        args
    };
    vec![
        (("POST", "/jobs/j", json!({})), 201, ""),
        (("POST", "/jobs/j/waits/ok", wait(json!({}))), 200, ""),
        (("POST", "/jobs/a%00b", json!({})), 400, "invalid-key"),
        (("GET", "/jobs/a%00b", Value::Null), 400, "invalid-key"),
        (
            ("POST", "/jobs/a%00b/waits/w", wait(json!({}))),
            400,
            "invalid-key",
        ),
        (
            ("POST", "/jobs/j/waits/w%00", wait(json!({}))),
            400,
            "invalid-key",
        ),
        (
            (
                "POST",
                "/jobs/j/waits/w",
                wait(json!({"subject": "s\u{0}"})),
            ),
            400,
            "invalid-key",
        ),
        (
            (
                "POST",
                "/jobs/j/waits/w",
                wait(json!({"source": "c\u{0}i"})),
            ),
            400,
            "invalid-key",
        ),
        (
            (
                "POST",
                "/jobs/j/waits/w",
                wait(json!({"types": ["t\u{0}"]})),
            ),
            400,
            "invalid-key",
        ),
        (
            (
                "POST",
                "/jobs/j/waits/w",
                wait(json!({"filter": "event.text == '\u{0}'"})),
            ),
            400,
            "invalid-text",
        ),
        (
            ("GET", "/jobs/j/waits/w%00", Value::Null),
            400,
            "invalid-key",
        ),
        (
            ("DELETE", "/jobs/j/waits/o%00k", Value::Null),
            400,
            "invalid-key",
        ),
        (("GET", "/waits/w%00", Value::Null), 400, "invalid-key"),
        // An event's fields are read from the delivery: one with a NUL is unreadable (422).
        (
            (
                "POST",
                "/sources/ci/deliveries",
                json!({"id": "e1", "type": "t", "subject": "s\u{0}"}),
            ),
            422,
            "unreadable-delivery",
        ),
        (
            (
                "POST",
                "/sources/ci/deliveries",
                json!({"id": "e\u{0}", "type": "t"}),
            ),
            422,
            "unreadable-delivery",
        ),
        // After every refusal the store is whole: the wait is open and takes an event.
        (("GET", "/jobs/j/waits/ok", Value::Null), 200, ""),
        (
            (
                "POST",
                "/sources/ci/deliveries",
                json!({"id": "e2", "type": "t", "subject": "s"}),
            ),
            202,
            "",
        ),
    ]
}

/// The answers of an edge on `store`, routing as `ozcheck serve` would on it.
async fn answers<S: Store>(store: S, routing: &Routing) -> Vec<Answer> {
    let clock = ManualClock::new(Timestamp(1_000_000));
    let rt = Runtime::start_with(Arc::new(store), Arc::new(clock), config(), routing)
        .await
        .unwrap();
    let mut out = Vec::new();
    for ((method, path, body), _, _) in calls() {
        let body = if body.is_null() {
            Body::empty()
        } else {
            Body::from(body.to_string())
        };
        let request = Request::builder()
            .method(method)
            .uri(path)
            .body(body)
            .unwrap();
        let response = router(rt.clone()).oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let code = body["error"]["code"].as_str().unwrap_or("").to_owned();
        out.push((path, status, code));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_is_one_status_and_one_code_on_memory_sqlite_and_postgres() {
    let expected: Vec<Answer> = calls()
        .into_iter()
        .map(|((_, path, _), status, code)| (path, status, code.to_owned()))
        .collect();
    let memory = answers(MemoryStore::new(), &Routing::Local).await;
    assert_eq!(memory, expected, "memory");
    let lite = answers(SqliteStore::in_memory().await.unwrap(), &Routing::Local).await;
    assert_eq!(lite, expected, "SQLite");
    let test = "every_refusal_is_one_status_and_one_code_on_memory_sqlite_and_postgres";
    let Some(server) = pg::server(test) else {
        return;
    };
    let store = PostgresStore::connect(&server.fresh_url().await)
        .await
        .unwrap();
    let postgres = answers(store, &Routing::Shared { edge: "a".into() }).await;
    assert_eq!(postgres, expected, "PostgreSQL");
}
