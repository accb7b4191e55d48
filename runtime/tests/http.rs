//! Ingestion over HTTP as a sender sees it: signed deliveries are taken, forged or missing
//! signatures are refused and audited, unreadable ones get 422, oversized ones 413, and no
//! request body makes the server panic. Also the waits listing (E5).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use ozcheck_runtime::JobStart;
use ozcheck_runtime::Runtime;
use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::serve::router;
use ozcheck_runtime::source::sign;
use ozcheck_runtime::store::{MemoryStore, Store};
use serde_json::json;
use tower::ServiceExt;

const SECRET: &str = "It's a Secret to Everybody";

async fn runtime() -> Arc<Runtime<MemoryStore>> {
    let config: Config = serde_json::from_value(json!({"sources": [
        {"name": "gh", "kind": "github", "secret": SECRET, "bounds": {"text": 64}}
    ]}))
    .unwrap();
    Runtime::start(
        Arc::new(MemoryStore::new()),
        Arc::new(ManualClock::new(Timestamp(0))),
        Arc::new(config),
    )
    .await
    .unwrap()
}

async fn post(rt: &Arc<Runtime<MemoryStore>>, headers: &[(&str, &str)], body: &[u8]) -> StatusCode {
    let mut request = Request::post("/sources/gh/deliveries");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = router(rt.clone())
        .oneshot(request.body(Body::from(body.to_vec())).unwrap())
        .await
        .unwrap();
    response.status()
}

fn pr(title: &str) -> Vec<u8> {
    json!({"action": "opened", "pull_request": {"number": 12, "title": title},
           "repository": {"full_name": "octo/demo"}, "sender": {"login": "ada"}})
    .to_string()
    .into_bytes()
}

fn signed<'a>(base: &[(&'a str, &'a str)], sig: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut h = base.to_vec();
    h.push(("X-Hub-Signature-256", sig));
    h
}

#[tokio::test]
async fn signed_deliveries_are_taken_and_forgeries_refused() {
    let rt = runtime().await;
    let body = pr("Fix");
    let good = sign(SECRET, &body);
    let forged = sign("guess", &body);
    let base = [
        ("X-GitHub-Event", "pull_request"),
        ("X-GitHub-Delivery", "d1"),
    ];
    assert_eq!(
        post(&rt, &signed(&base, &forged), &body).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        post(&rt, &signed(&base, "sha256=nothex"), &body).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(post(&rt, &base, &body).await, StatusCode::UNAUTHORIZED);
    assert_eq!(
        post(&rt, &signed(&base, &good), &body).await,
        StatusCode::ACCEPTED
    );
    assert_eq!(
        post(&rt, &signed(&base, &good), &body).await,
        StatusCode::OK
    );
    let actions: Vec<String> = rt
        .store()
        .audit()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.action)
        .collect();
    assert_eq!(
        actions,
        [
            "event.refused",
            "event.delivery",
            "event.received",
            "event.delivery"
        ]
    );
}

#[tokio::test]
async fn unreadable_and_oversized_deliveries() {
    let rt = runtime().await;
    let signed = |body: &[u8]| sign(SECRET, body);
    let body = b"not json".to_vec();
    let sig = signed(&body);
    let headers = [
        ("X-GitHub-Event", "push"),
        ("X-GitHub-Delivery", "d2"),
        ("X-Hub-Signature-256", sig.as_str()),
    ];
    assert_eq!(
        post(&rt, &headers, &body).await,
        StatusCode::UNPROCESSABLE_ENTITY
    );
    let big = pr(&"x".repeat(65));
    let sig = signed(&big);
    let headers = [
        ("X-GitHub-Event", "pull_request"),
        ("X-GitHub-Delivery", "d3"),
        ("X-Hub-Signature-256", sig.as_str()),
    ];
    assert_eq!(
        post(&rt, &headers, &big).await,
        StatusCode::PAYLOAD_TOO_LARGE
    );
}

#[tokio::test]
async fn arbitrary_bodies_never_panic_the_server() {
    let rt = runtime().await;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..300 {
        // A small xorshift generator: deterministic, no dependency.
        let len = (round * 7) % 300;
        let body: Vec<u8> = (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed & 0xff) as u8
            })
            .collect();
        let sig = sign(SECRET, &body);
        let headers = [
            ("X-GitHub-Event", "push"),
            ("X-GitHub-Delivery", "dx"),
            ("X-Hub-Signature-256", sig.as_str()),
        ];
        let status = post(&rt, &headers, &body).await;
        assert!(
            [
                StatusCode::UNPROCESSABLE_ENTITY,
                StatusCode::ACCEPTED,
                StatusCode::OK
            ]
            .contains(&status),
            "{status}"
        );
    }
}

#[tokio::test]
async fn the_waits_listing_uses_the_e5_wording() {
    let rt = runtime().await;
    rt.start_job(&JobStart {
        id: "j".into(),
        ..JobStart::default()
    })
    .await
    .unwrap();
    rt.wait_for_event(
        "j",
        "w",
        &json!({"source": "gh", "types": ["check_suite"], "subject": "octo/demo#12", "timeout": "2h"}),
    )
    .await
    .unwrap();
    let response = router(rt.clone())
        .oneshot(
            Request::get("/waits?format=text")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let body = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&body),
        "Waiting: an event: gh check_suite on octo/demo#12, for 2h0m0s more\n"
    );
}

#[tokio::test]
async fn a_job_waits_over_http_and_reads_the_answer() {
    let rt = runtime().await;
    let call = |method: &str, uri: &str, body: &str| {
        Request::builder()
            .method(method)
            .uri(uri)
            .body(Body::from(body.to_owned()))
            .unwrap()
    };
    let app = router(rt.clone());
    let r = app
        .clone()
        .oneshot(call("POST", "/jobs/j1", ""))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = app
        .clone()
        .oneshot(call(
            "POST",
            "/jobs/j1/waits/w1",
            r#"{"source": "gh", "timeout": "1h30m"}"#,
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = app
        .clone()
        .oneshot(call(
            "POST",
            "/jobs/j1/waits/w1",
            r#"{"source": "gh", "types": ["pull_request"]}"#,
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let body = pr("Fix <it>");
    let sig = sign(SECRET, &body);
    let headers = [
        ("X-GitHub-Event", "pull_request"),
        ("X-GitHub-Delivery", "d9"),
        ("X-Hub-Signature-256", sig.as_str()),
    ];
    assert_eq!(post(&rt, &headers, &body).await, StatusCode::ACCEPTED);
    let r = app.oneshot(call("GET", "/waits/w1", "")).await.unwrap();
    let body = axum::body::to_bytes(r.into_body(), 1 << 16).await.unwrap();
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["state"], "matched");
    let answer = v["answer"].as_str().unwrap();
    assert!(answer.contains("\\u003cit>"), "{answer}");
    assert!(answer.starts_with("An event arrived: gh pull_request opened (event d9)."));
}

#[tokio::test]
async fn bodies_over_the_http_limit_are_refused_before_parsing() {
    let rt = runtime().await;
    let body = vec![b' '; ozcheck_runtime::serve::MAX_BODY + 1];
    let sig = sign(SECRET, &body);
    let headers = [
        ("X-GitHub-Event", "push"),
        ("X-GitHub-Delivery", "big"),
        ("X-Hub-Signature-256", sig.as_str()),
    ];
    assert_eq!(
        post(&rt, &headers, &body).await,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    let body = vec![b' '; ozcheck_runtime::serve::MAX_BODY];
    let sig = sign(SECRET, &body);
    let headers = [
        ("X-GitHub-Event", "push"),
        ("X-GitHub-Delivery", "big"),
        ("X-Hub-Signature-256", sig.as_str()),
    ];
    // At the limit the body is read, and found not to be JSON.
    assert_eq!(
        post(&rt, &headers, &body).await,
        StatusCode::UNPROCESSABLE_ENTITY
    );
}
