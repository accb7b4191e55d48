//! The route handlers of [`super::router`]: each reads its request, calls the runtime and
//! answers with the JSON shapes of [`crate::views`] or an [`ApiError`].

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::{ApiError, delivery_code};
use super::{AUDIT_PAGE_MAX, Api};
use crate::jobs::JobStart;
use crate::model::Wait;
use crate::source::Delivery;
use crate::store::Store;
use crate::views;

type ApiState<S> = State<Arc<Api<S>>>;
type Answer = Result<Response, ApiError>;

/// `POST /sources/{source}/deliveries`: 202 accepted, 200 a duplicate, else the refusal.
pub async fn deliver<S: Store>(
    State(api): ApiState<S>,
    Path(source): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
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
        body: body?.to_vec(),
    };
    let d = api.rt.deliver(&source, &delivery).await?;
    let status = StatusCode::from_u16(d.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Some(message) = d.error {
        return Err(ApiError::new(status, delivery_code(d.status), message));
    }
    let event = d
        .event
        .map(|e| json!({"id": e.id, "source": e.source, "type": e.kind}));
    Ok((
        status,
        Json(json!({"duplicate": d.duplicate, "event": event})),
    )
        .into_response())
}

fn json_body(body: Result<Bytes, BytesRejection>, empty: Value) -> Result<Value, ApiError> {
    let body = body?;
    if body.is_empty() {
        return Ok(empty);
    }
    serde_json::from_slice(&body).map_err(ApiError::not_json)
}

/// The arguments of `POST /jobs/{job}`; any other key is refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartArgs {
    runtime: Option<String>,
    timeout: Option<String>,
    #[serde(default)]
    shadow: bool,
    sandbox_tier: Option<u8>,
    #[serde(default)]
    has_secrets: bool,
}

/// `POST /jobs/{job}` with an optional JSON body `{runtime, timeout, shadow, sandbox_tier,
/// has_secrets}`: starts a job (201).
pub async fn start_job<S: Store>(
    State(api): ApiState<S>,
    Path(job): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let args: StartArgs = serde_json::from_value(json_body(body, json!({}))?).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid-job-arguments",
            e.to_string(),
        )
    })?;
    let timeout = match args.timeout.as_deref() {
        None => None,
        Some(t) => Some(crate::args::parse_duration(t).ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid-timeout",
                format!("`{t}` is not a duration"),
            )
        })?),
    };
    let start = JobStart {
        id: job,
        runtime: args.runtime,
        timeout,
        shadow: args.shadow,
        sandbox_tier: args.sandbox_tier,
        has_secrets: args.has_secrets,
    };
    let job = api.rt.start_job(&start).await?;
    let body = views::job(&job, &[], &[], api.rt.now());
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// `GET /jobs/{job}`: the job, its `eventWaits` (E5), every wait's state, a flow's steps.
pub async fn job<S: Store>(State(api): ApiState<S>, Path(id): Path<String>) -> Answer {
    let job = api.rt.job(&id).await?;
    let waits = api.rt.store().waits_of_job(&id).await?;
    let steps = api.rt.store().steps_of_job(&id).await?;
    Ok(Json(views::job(&job, &waits, &steps, api.rt.now())).into_response())
}

async fn wait_view<S: Store>(api: &Api<S>, wait: &Wait) -> Answer {
    let event = api.rt.wait_event(wait).await?;
    Ok(Json(views::wait(wait, event.as_ref(), api.rt.now())).into_response())
}

/// `POST /jobs/{job}/waits/{wait}` with the wait's arguments as JSON: `oz.wait_for_event`
/// (an unknown argument is refused with `unknown-key`).
pub async fn wait_for_event<S: Store>(
    State(api): ApiState<S>,
    Path((job, name)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let args = json_body(body, json!({}))?;
    let wait = api.rt.wait_for_event(&job, &name, &args).await?;
    wait_view(&api, &wait).await
}

/// `GET /jobs/{job}/waits/{wait}`: its state, the event it got and the answer (E4).
pub async fn wait<S: Store>(
    State(api): ApiState<S>,
    Path((job, name)): Path<(String, String)>,
) -> Answer {
    let wait = api.rt.wait_named(&job, &name).await?;
    wait_view(&api, &wait).await
}

/// `GET /waits/{wait}`: the wait of this name when one job has it (`ambiguous-wait` when
/// several have; name the job then).
pub async fn wait_by_name<S: Store>(State(api): ApiState<S>, Path(name): Path<String>) -> Answer {
    let wait = api.rt.find_wait(None, &name).await?;
    wait_view(&api, &wait).await
}

/// `DELETE /jobs/{job}/waits/{wait}`: cancels an open wait (refused, reason `cancelled`).
pub async fn cancel_wait<S: Store>(
    State(api): ApiState<S>,
    Path((job, name)): Path<(String, String)>,
) -> Answer {
    let wait = api.rt.cancel_wait(&job, &name).await?;
    wait_view(&api, &wait).await
}

/// `GET /waits?format=json|text`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitsQuery {
    format: Option<String>,
}

/// `GET /waits`: every open wait as JSON (`{waits: [{id, job, wait, …, description}]}`), or
/// with `?format=text` the E5 lines, one per wait.
pub async fn waits<S: Store>(
    State(api): ApiState<S>,
    headers: HeaderMap,
    query: Result<Query<WaitsQuery>, QueryRejection>,
) -> Answer {
    let Query(query) = query.map_err(|e| bad_query(&e))?;
    let now = api.rt.now();
    let open = api.rt.store().open_waits().await?;
    let wants_text = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/plain"));
    let format = query
        .format
        .as_deref()
        .or(if wants_text { Some("text") } else { None });
    match format {
        None | Some("json") => {
            let waits: Vec<Value> = open.iter().map(|w| views::event_wait(w, now)).collect();
            Ok(Json(json!({"waits": waits})).into_response())
        }
        Some("text") => {
            let mut text = String::new();
            for w in &open {
                text.push_str(&crate::render::waiting_line(&w.spec, now.until(w.deadline)));
                text.push('\n');
            }
            Ok(text.into_response())
        }
        Some(other) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid-query",
            format!("`format` is `json` or `text`, not `{other}`"),
        )),
    }
}

fn bad_query(e: &QueryRejection) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid-query", e.body_text())
}

/// `GET /audit?after=N&limit=M`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    #[serde(default)]
    after: i64,
    limit: Option<u32>,
}

/// `GET /audit?after=CURSOR&limit=N`: up to `limit` (default and most
/// [`AUDIT_PAGE_MAX`]) records after the cursor, oldest first, each with its `seq`; `next` is
/// the cursor of the next page, null on the last.
pub async fn audit<S: Store>(
    State(api): ApiState<S>,
    query: Result<Query<AuditQuery>, QueryRejection>,
) -> Answer {
    let Query(query) = query.map_err(|e| bad_query(&e))?;
    let limit = query.limit.unwrap_or(AUDIT_PAGE_MAX);
    if limit == 0 || limit > AUDIT_PAGE_MAX || query.after < 0 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid-query",
            format!("`limit` is 1 to {AUDIT_PAGE_MAX} and `after` a record number, not negative"),
        ));
    }
    // One more than asked tells whether a next page exists.
    let mut page = api.rt.store().audit_page(query.after, limit + 1).await?;
    let more = page.len() > limit as usize;
    page.truncate(limit as usize);
    let next = if more {
        page.last().map(|(seq, _)| *seq)
    } else {
        None
    };
    let records: Vec<Value> = page
        .iter()
        .map(|(seq, record)| {
            let mut v = views::audit(record);
            v["seq"] = json!(seq);
            v
        })
        .collect();
    Ok(Json(json!({"records": records, "next": next})).into_response())
}

/// `GET /healthz`: the process answers.
pub async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// `GET /readyz`: 200 when the store answers and the server is not shutting down, else 503.
pub async fn ready<S: Store>(State(api): ApiState<S>) -> Answer {
    if api.is_draining() {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting-down",
            "the server is shutting down",
        ));
    }
    api.rt.store().next_deadline().await.map_err(|e| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store-unavailable",
            e.to_string(),
        )
    })?;
    Ok(Json(json!({"status": "ready"})).into_response())
}
