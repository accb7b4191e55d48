//! The HTTP face of the reference runtime (axum): deliveries per source, the listing of waits
//! (E5), a job's waits, and the audit trail; plus the timer task that fires deadlines on the
//! system clock.

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
use crate::model::WaitState;
use crate::render::waiting_line;
use crate::source::Delivery;
use crate::store::Store;

/// The largest delivery body read, in bytes; bigger bodies get 413 before any parsing.
pub const MAX_BODY: usize = 1024 * 1024;

/// The routes of the runtime.
pub fn router<S: Store>(rt: Arc<Runtime<S>>) -> Router {
    Router::new()
        .route("/sources/{source}/deliveries", post(deliver::<S>))
        .route("/waits", get(waits::<S>))
        .route("/jobs/{job}", get(job::<S>))
        .route("/audit", get(audit::<S>))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(rt)
}

fn internal(e: impl std::fmt::Display) -> Response {
    (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response()
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
        Err(e) => internal(e),
    }
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
        if let Err(e) = rt.fire_due().await {
            rt.log(format!("timer: {e}"));
        }
        if let Err(e) = rt.purge().await {
            rt.log(format!("purge: {e}"));
        }
        let now = rt.now();
        let wake = rt.next_deadline().map_or(Duration::from_secs(1), |t| {
            now.until(t).min(Duration::from_secs(1))
        });
        tokio::time::sleep(wake.max(Duration::from_millis(5))).await;
    }
}
