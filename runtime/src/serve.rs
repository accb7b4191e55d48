//! The HTTP face of the reference runtime (axum): deliveries per source, jobs and their waits
//! (`POST /jobs/{job}`, `POST /jobs/{job}/waits/{wait}`, `GET /waits/{wait}`), the listing of
//! waits (E5, `GET /waits`), a job's `eventWaits`, and the audit trail; plus the timer task that
//! fires deadlines on the system clock.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

use crate::edge::Runtime;
use crate::error::RuntimeError;
use crate::jobs::JobStart;
use crate::model::WaitState;
use crate::render::waiting_line;
use crate::source::Delivery;
use crate::store::{Store, StoreError};

/// The largest delivery body read, in bytes; bigger bodies get 413 before any parsing.
pub const MAX_BODY: usize = 1024 * 1024;

/// The routes of the runtime.
pub fn router<S: Store>(rt: Arc<Runtime<S>>) -> Router {
    Router::new()
        .route("/sources/{source}/deliveries", post(deliver::<S>))
        .route("/waits", get(waits::<S>))
        .route("/waits/{wait}", get(wait::<S>))
        .route("/jobs/{job}", get(job::<S>).post(start_job::<S>))
        .route("/jobs/{job}/waits/{wait}", post(wait_for_event::<S>))
        .route("/audit", get(audit::<S>))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(rt)
}

fn internal(e: impl std::fmt::Display) -> Response {
    (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response()
}

/// The store failed (the database is unavailable, a connection broke): nothing of the request
/// was acknowledged, and the sender should send it again a little later.
fn unavailable(e: &StoreError) -> Response {
    let body = json!({"error": e.to_string(), "code": "store-unavailable"});
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response();
    response.headers_mut().insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from_static("1"),
    );
    response
}

async fn deliver<S: Store>(
    State(rt): State<Arc<Runtime<S>>>,
    Path(source): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let headers = headers
        .iter()
        .filter_map(|(name, value)| {
            Some((
                name.as_str().to_ascii_lowercase(),
                value.to_str().ok()?.to_owned(),
            ))
        })
        .collect();
    let delivery = Delivery {
        headers,
        body: body.to_vec(),
    };
    match rt.deliver(&source, &delivery).await {
        Ok(d) => {
            let status =
                StatusCode::from_u16(d.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let body = json!({"duplicate": d.duplicate, "error": d.error,
                              "event": d.event.map(|e| json!({"id": e.id, "type": e.kind}))});
            (status, axum::Json(body)).into_response()
        }
        Err(e) => unavailable(&e),
    }
}

fn refused(e: &RuntimeError) -> Response {
    if let RuntimeError::Store(e) = e {
        return unavailable(e);
    }
    let status = match e {
        RuntimeError::InvalidArgs { .. } => StatusCode::BAD_REQUEST,
        RuntimeError::Refused { .. } => StatusCode::FORBIDDEN,
        RuntimeError::NotFound { .. } => StatusCode::NOT_FOUND,
        RuntimeError::Conflict { .. } => StatusCode::CONFLICT,
        RuntimeError::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
    };
    (status, axum::Json(json!({"error": e.to_string()}))).into_response()
}

/// `POST /jobs/{job}` with an optional JSON body `{runtime, timeout, shadow, sandbox_tier,
/// has_secrets}`: starts a job.
async fn start_job<S: Store>(
    State(rt): State<Arc<Runtime<S>>>,
    Path(job): Path<String>,
    body: Bytes,
) -> Response {
    let args: serde_json::Value = if body.is_empty() {
        json!({})
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => return (StatusCode::BAD_REQUEST, format!("not JSON: {e}")).into_response(),
        }
    };
    let timeout = match args.get("timeout").and_then(|t| t.as_str()) {
        None => None,
        Some(t) => match crate::args::parse_duration(t) {
            Some(d) => Some(d),
            None => {
                return (StatusCode::BAD_REQUEST, format!("`{t}` is not a duration"))
                    .into_response();
            }
        },
    };
    let start = JobStart {
        id: job,
        runtime: args
            .get("runtime")
            .and_then(|v| v.as_str())
            .map(str::to_owned),
        timeout,
        shadow: args
            .get("shadow")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
        sandbox_tier: args
            .get("sandbox_tier")
            .and_then(serde_json::Value::as_u64)
            .map(|t| t.min(255) as u8),
        has_secrets: args
            .get("has_secrets")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
    };
    match rt.start_job(&start).await {
        Ok(job) => (StatusCode::CREATED, axum::Json(json!({"job": job.id}))).into_response(),
        Err(e) => refused(&e),
    }
}

/// `POST /jobs/{job}/waits/{wait}` with the wait's arguments as JSON: `oz.wait_for_event`.
async fn wait_for_event<S: Store>(
    State(rt): State<Arc<Runtime<S>>>,
    Path((job, wait)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    let args: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("not JSON: {e}")).into_response(),
    };
    match rt.wait_for_event(&job, &wait, &args).await {
        Ok(w) => axum::Json(json!({"wait": w.name, "state": w.state.as_str()})).into_response(),
        Err(e) => refused(&e),
    }
}

/// `GET /waits/{wait}`: its state and, once closed, the answer the agent reads (E4).
async fn wait<S: Store>(State(rt): State<Arc<Runtime<S>>>, Path(name): Path<String>) -> Response {
    let wait = match rt.store().waits_named(&name).await.map(|mut w| w.pop()) {
        Ok(Some(w)) => w,
        Ok(None) => return (StatusCode::NOT_FOUND, "no such wait").into_response(),
        Err(e) => return internal(e),
    };
    let event = match &wait.event {
        Some((source, id)) => match rt.store().event(source, id).await {
            Ok(e) => e.map(|e| e.event),
            Err(e) => return internal(e),
        },
        None => None,
    };
    let answer = crate::render::wait_answer(&wait, event.as_ref());
    axum::Json(json!({"wait": wait.name, "state": wait.state.as_str(), "answer": answer}))
        .into_response()
}

async fn waits<S: Store>(State(rt): State<Arc<Runtime<S>>>) -> Response {
    match rt.waiting_lines().await {
        Ok(lines) => {
            let mut text = lines.join("\n");
            text.push('\n');
            text.into_response()
        }
        Err(e) => internal(e),
    }
}

async fn job<S: Store>(State(rt): State<Arc<Runtime<S>>>, Path(job): Path<String>) -> Response {
    let now = rt.now();
    match rt.store().waits_of_job(&job).await {
        Ok(waits) => {
            let open: Vec<_> = waits
                .iter()
                .filter(|w| w.state == WaitState::Open)
                .map(|w| {
                    json!({"wait": w.name, "source": w.spec.source, "types": w.spec.types,
                           "subject": w.spec.subject, "filter": w.spec.filter,
                           "deadline": w.deadline.to_rfc3339(),
                           "description": waiting_line(&w.spec, now.until(w.deadline))})
                })
                .collect();
            axum::Json(json!({"job": job, "eventWaits": open})).into_response()
        }
        Err(e) => internal(e),
    }
}

async fn audit<S: Store>(State(rt): State<Arc<Runtime<S>>>) -> Response {
    match rt.store().audit().await {
        Ok(records) => {
            let records: Vec<_> = records
                .into_iter()
                .map(|r| json!({"at": r.at.to_rfc3339(), "action": r.action, "data": r.data}))
                .collect();
            axum::Json(json!({"records": records})).into_response()
        }
        Err(e) => internal(e),
    }
}

/// Fires deadlines as the system clock reaches them and purges expired events, until the task
/// is dropped. Waits registered meanwhile are picked up at the next wake-up (at most a second).
pub async fn timer_loop<S: Store>(rt: Arc<Runtime<S>>) {
    loop {
        if let Err(e) = rt.sweep().await {
            rt.log(format!("sweep: {e}"));
        }
        let now = rt.now();
        let next = rt.next_deadline().await.ok().flatten();
        let wake = next.map_or(Duration::from_secs(1), |t| {
            now.until(t).min(Duration::from_secs(1))
        });
        tokio::time::sleep(wake.max(Duration::from_millis(5))).await;
    }
}
