//! The one error shape of the HTTP API: every route answers a failure with a status and
//! `{"error": {"code": "kebab-case", "message": "…"}}`, whatever refused it (the runtime, the
//! store, a body that is not JSON, a route or method that does not exist, a body too large).

use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::RuntimeError;
use crate::store::StoreError;

/// A failed request: the status and the body's code and message.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable kebab-case code.
    pub code: &'static str,
    /// What went wrong, for a person.
    pub message: String,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    /// A body that is not the JSON the route takes.
    pub fn not_json(e: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "not-json",
            format!("the body is not JSON: {e}"),
        )
    }
}

impl From<RuntimeError> for ApiError {
    fn from(e: RuntimeError) -> Self {
        let status = match &e {
            RuntimeError::InvalidArgs { .. } => StatusCode::BAD_REQUEST,
            RuntimeError::Refused { .. } => StatusCode::FORBIDDEN,
            RuntimeError::NotFound { .. } => StatusCode::NOT_FOUND,
            RuntimeError::Conflict { .. } => StatusCode::CONFLICT,
            RuntimeError::Store(store) => return Self::unavailable(store),
        };
        Self::new(status, e.code(), e.to_string())
    }
}

impl ApiError {
    /// The store failed (the database is unavailable, a connection broke): nothing of the
    /// request was acknowledged, and the sender should send it again a little later (503 with
    /// `Retry-After`).
    fn unavailable(e: &StoreError) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store-unavailable",
            e.to_string(),
        )
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        Self::unavailable(&e)
    }
}

impl From<BytesRejection> for ApiError {
    fn from(e: BytesRejection) -> Self {
        let code = if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            "body-too-large"
        } else {
            "unreadable-body"
        };
        Self::new(e.status(), code, e.body_text())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        let mut response = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static("1"),
            );
        }
        response
    }
}

/// The code of a delivery's refusal, by its status (docs/serve.md lists them).
pub fn delivery_code(status: u16) -> &'static str {
    match status {
        400 => "unbound-event-type",
        401 => "bad-signature",
        404 => "unknown-source",
        413 => "event-too-large",
        422 => "unreadable-delivery",
        _ => "delivery-failed",
    }
}

/// Unknown routes.
pub async fn no_route() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "unknown-route", "no such route")
}

/// Known routes called with a method they do not take.
pub async fn no_method() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        "this route does not take that method",
    )
}
