//! The HTTP API as an integrator builds on it: one JSON error shape on every route, waits named
//! within their job, unknown wait arguments refused, the open waits as JSON (and the E5 text),
//! cancelling a wait, the audit trail by pages, liveness and readiness.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use ozcheck_runtime::Runtime;
use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::serve::{Api, api_router};
use ozcheck_runtime::source::sign;
use ozcheck_runtime::store::MemoryStore;
use serde_json::{Value, json};
use tower::ServiceExt;

const SECRET: &str = "s3cret";

struct Client {
    api: Arc<Api<MemoryStore>>,
}

impl Client {
    async fn new() -> Self {
        let config: Config = serde_json::from_value(json!({"sources": [
            {"name": "ci", "kind": "json"},
            {"name": "gh", "kind": "github", "secret": SECRET}
        ]}))
        .unwrap();
        let rt = Runtime::start(
            Arc::new(MemoryStore::new()),
            Arc::new(ManualClock::new(Timestamp(0))),
            Arc::new(config),
        )
        .await
        .unwrap();
        Self { api: Api::new(rt) }
    }

    async fn call(&self, method: &str, uri: &str, body: &str) -> (StatusCode, Value) {
        self.send(
            Request::builder()
                .method(method)
                .uri(uri)
                .body(Body::from(body.to_owned()))
                .unwrap(),
        )
        .await
    }

    async fn send(&self, request: Request<Body>) -> (StatusCode, Value) {
        let response = api_router(self.api.clone()).oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        (status, value)
    }
}

/// The one error shape: `{"error": {"code", "message"}}` and nothing else.
fn assert_error(answer: &(StatusCode, Value), status: StatusCode, code: &str) {
    assert_eq!(answer.0, status, "{}", answer.1);
    let error = answer.1["error"]
        .as_object()
        .unwrap_or_else(|| panic!("{}", answer.1));
    assert_eq!(error["code"], code, "{}", answer.1);
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert_eq!(answer.1.as_object().unwrap().len(), 1, "{}", answer.1);
}

#[tokio::test]
async fn every_failure_has_one_json_shape() {
    let c = Client::new().await;
    assert_error(
        &c.call("GET", "/nowhere", "").await,
        StatusCode::NOT_FOUND,
        "unknown-route",
    );
    assert_error(
        &c.call("PUT", "/waits", "").await,
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
    );
    assert_error(
        &c.call("GET", "/jobs/nobody", "").await,
        StatusCode::NOT_FOUND,
        "unknown-job",
    );
    assert_error(
        &c.call("POST", "/jobs/j1", "{not json").await,
        StatusCode::BAD_REQUEST,
        "not-json",
    );
    assert_error(
        &c.call("POST", "/jobs/j1", r#"{"timeout": "1h", "shadwo": true}"#)
            .await,
        StatusCode::BAD_REQUEST,
        "invalid-job-arguments",
    );
    assert_eq!(c.call("POST", "/jobs/j1", "").await.0, StatusCode::CREATED);
    assert_error(
        &c.call("POST", "/jobs/j1", "").await,
        StatusCode::CONFLICT,
        "job-exists",
    );
    // A typo in a wait's arguments is refused, not ignored.
    let typo = c
        .call(
            "POST",
            "/jobs/j1/waits/w",
            r#"{"source": "ci", "timout": "10m"}"#,
        )
        .await;
    assert_error(&typo, StatusCode::BAD_REQUEST, "unknown-key");
    assert!(
        typo.1["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timeout"),
        "{}",
        typo.1
    );
    assert_error(
        &c.call(
            "POST",
            "/jobs/j1/waits/w",
            r#"{"source": "ci", "timeout": "1h30m"}"#,
        )
        .await,
        StatusCode::BAD_REQUEST,
        "compound-timeout",
    );
    assert_error(
        &c.call("GET", "/jobs/j1/waits/w", "").await,
        StatusCode::NOT_FOUND,
        "unknown-wait",
    );
    assert_error(
        &c.call("POST", "/sources/gh/deliveries", r#"{"action": "opened"}"#)
            .await,
        StatusCode::UNAUTHORIZED,
        "bad-signature",
    );
    assert_error(
        &c.call("POST", "/sources/nope/deliveries", "{}").await,
        StatusCode::NOT_FOUND,
        "unknown-source",
    );
    assert_error(
        &c.call("POST", "/sources/ci/deliveries", "[1, 2").await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "unreadable-delivery",
    );
    let big = " ".repeat(ozcheck_runtime::serve::MAX_BODY + 1);
    assert_error(
        &c.call("POST", "/jobs/j1/waits/w", &big).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "body-too-large",
    );
    assert_error(
        &c.call("GET", "/audit?limit=0", "").await,
        StatusCode::BAD_REQUEST,
        "invalid-query",
    );
    assert_error(
        &c.call("GET", "/audit?limit=x", "").await,
        StatusCode::BAD_REQUEST,
        "invalid-query",
    );
    assert_error(
        &c.call("GET", "/waits?format=xml", "").await,
        StatusCode::BAD_REQUEST,
        "invalid-query",
    );
}

#[tokio::test]
async fn waits_are_named_within_their_job_and_listed_as_json_or_text() {
    let c = Client::new().await;
    for job in ["j1", "j2"] {
        assert_eq!(
            c.call("POST", &format!("/jobs/{job}"), "").await.0,
            StatusCode::CREATED
        );
        let (status, wait) = c
            .call(
                "POST",
                &format!("/jobs/{job}/waits/ci"),
                &format!(r#"{{"source": "ci", "subject": "{job}", "timeout": "2h"}}"#),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{wait}");
        assert_eq!(
            (wait["job"].as_str(), wait["state"].as_str()),
            (Some(job), Some("open"))
        );
    }
    assert_error(
        &c.call("POST", "/jobs/j1/waits/ci", r#"{"source": "ci"}"#)
            .await,
        StatusCode::CONFLICT,
        "wait-exists",
    );
    let (_, listed) = c.call("GET", "/waits", "").await;
    let waits = listed["waits"].as_array().unwrap();
    assert_eq!(waits.len(), 2, "{listed}");
    assert_eq!(waits[0]["job"], "j1");
    assert_eq!(waits[1]["job"], "j2");
    assert_eq!(waits[0]["wait"], "ci");
    assert!(waits[0]["id"].as_i64().is_some() && waits[0]["id"] != waits[1]["id"]);
    assert_eq!(
        waits[0]["description"],
        "Waiting: an event: ci any type on j1, for 2h0m0s more"
    );
    let (_, text) = c.call("GET", "/waits?format=text", "").await;
    assert_eq!(
        text,
        "Waiting: an event: ci any type on j1, for 2h0m0s more\n\
         Waiting: an event: ci any type on j2, for 2h0m0s more\n"
    );
    let accept_text = Request::get("/waits")
        .header("accept", "text/plain")
        .body(Body::empty())
        .unwrap();
    assert_eq!(c.send(accept_text).await.1, text);
    // The same name in two jobs: the short route names the jobs, the job's route answers.
    let ambiguous = c.call("GET", "/waits/ci", "").await;
    assert_error(&ambiguous, StatusCode::BAD_REQUEST, "ambiguous-wait");
    let delivered = c
        .call(
            "POST",
            "/sources/ci/deliveries",
            r#"{"id": "e1", "type": "t", "subject": "j2"}"#,
        )
        .await;
    assert_eq!(delivered.0, StatusCode::ACCEPTED, "{}", delivered.1);
    assert_eq!(delivered.1["event"]["id"], "e1");
    let (_, w1) = c.call("GET", "/jobs/j1/waits/ci", "").await;
    let (_, w2) = c.call("GET", "/jobs/j2/waits/ci", "").await;
    assert_eq!(w1["state"], "open");
    assert_eq!(w2["state"], "matched");
    assert!(
        w2["answer"]
            .as_str()
            .unwrap()
            .starts_with("An event arrived: ci t")
    );
    let (_, job) = c.call("GET", "/jobs/j2", "").await;
    assert_eq!(job["eventWaits"], json!([]));
    assert_eq!(job["waits"][0]["state"], "matched");
    let redelivered = c
        .call(
            "POST",
            "/sources/ci/deliveries",
            r#"{"id": "e1", "type": "t", "subject": "j2"}"#,
        )
        .await;
    assert_eq!(
        (redelivered.0, &redelivered.1["duplicate"]),
        (StatusCode::OK, &json!(true))
    );
}

#[tokio::test]
async fn delete_cancels_an_open_wait_once() {
    let c = Client::new().await;
    c.call("POST", "/jobs/j1", "").await;
    c.call("POST", "/jobs/j1/waits/w", r#"{"source": "ci"}"#)
        .await;
    let (status, cancelled) = c.call("DELETE", "/jobs/j1/waits/w", "").await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["state"], "refused");
    assert_eq!(cancelled["reason"], "cancelled");
    assert_error(
        &c.call("DELETE", "/jobs/j1/waits/w", "").await,
        StatusCode::CONFLICT,
        "wait-closed",
    );
    assert_error(
        &c.call("DELETE", "/jobs/j1/waits/nope", "").await,
        StatusCode::NOT_FOUND,
        "unknown-wait",
    );
    // A cancelled wait takes no event.
    c.call(
        "POST",
        "/sources/ci/deliveries",
        r#"{"id": "e1", "type": "t", "subject": "s"}"#,
    )
    .await;
    let (_, after) = c.call("GET", "/jobs/j1/waits/w", "").await;
    assert_eq!(
        (after["state"].as_str(), &after["event"]),
        (Some("refused"), &Value::Null)
    );
    let (_, listed) = c.call("GET", "/waits", "").await;
    assert_eq!(listed["waits"], json!([]));
}

#[tokio::test]
async fn the_audit_trail_comes_in_pages() {
    let c = Client::new().await;
    for i in 0..7 {
        let body = format!(r#"{{"id": "e{i}", "type": "t", "subject": "s"}}"#);
        assert_eq!(
            c.call("POST", "/sources/ci/deliveries", &body).await.0,
            StatusCode::ACCEPTED
        );
    }
    let (_, all) = c.call("GET", "/audit", "").await;
    let total = all["records"].as_array().unwrap().len();
    assert!(total >= 14, "a delivery and a receipt per event: {total}");
    assert_eq!(all["next"], Value::Null);
    let mut seen = Vec::new();
    let mut after = 0;
    loop {
        let (status, page) = c
            .call("GET", &format!("/audit?after={after}&limit=3"), "")
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let records = page["records"].as_array().unwrap();
        assert!(records.len() <= 3);
        seen.extend(records.iter().cloned());
        match page["next"].as_i64() {
            Some(next) => {
                assert_eq!(records.len(), 3);
                assert_eq!(records.last().unwrap()["seq"], next);
                after = next;
            }
            None => break,
        }
    }
    assert_eq!(
        seen,
        *all["records"].as_array().unwrap(),
        "the pages are the whole trail once"
    );
}

#[tokio::test]
async fn health_and_readiness() {
    let c = Client::new().await;
    assert_eq!(
        c.call("GET", "/healthz", "").await,
        (StatusCode::OK, json!({"status": "ok"}))
    );
    assert_eq!(
        c.call("GET", "/readyz", "").await,
        (StatusCode::OK, json!({"status": "ready"}))
    );
    c.api.drain();
    assert_error(
        &c.call("GET", "/readyz", "").await,
        StatusCode::SERVICE_UNAVAILABLE,
        "shutting-down",
    );
    assert_eq!(c.call("GET", "/healthz", "").await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_signed_github_delivery_over_http() {
    let c = Client::new().await;
    let body = json!({"action": "opened", "pull_request": {"number": 1},
                      "repository": {"full_name": "o/r"}})
    .to_string();
    let request = Request::post("/sources/gh/deliveries")
        .header("x-github-event", "pull_request")
        .header("x-github-delivery", "d1")
        .header("x-hub-signature-256", sign(SECRET, body.as_bytes()))
        .body(Body::from(body.clone()))
        .unwrap();
    let (status, answer) = c.send(request).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    assert_eq!(
        answer["event"],
        json!({"id": "d1", "source": "gh", "type": "pull_request"})
    );
    // The signed body replayed under another type (E11).
    let request = Request::post("/sources/gh/deliveries")
        .header("x-github-event", "check_suite")
        .header("x-github-delivery", "d2")
        .header("x-hub-signature-256", sign(SECRET, body.as_bytes()))
        .body(Body::from(body))
        .unwrap();
    assert_error(
        &c.send(request).await,
        StatusCode::BAD_REQUEST,
        "unbound-event-type",
    );
}
