//! The HTTP face of the reference runtime (axum), for integrators: deliveries per source; jobs
//! and their waits, named within their job (`POST|GET|DELETE /jobs/{job}/waits/{wait}`); the
//! open waits as JSON with job and wait ids (`GET /waits`, the E5 text with `?format=text`); a
//! job's `eventWaits`; the audit trail by pages; liveness and readiness; plus the timer task
//! that fires deadlines on the system clock. Every failure has one JSON shape
//! ([`error::ApiError`]); the routes and their statuses are listed in `docs/serve.md`.

mod error;
mod handlers;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};

pub use error::ApiError;

use crate::edge::Runtime;
use crate::store::Store;

/// The largest request body read, in bytes; bigger bodies get 413 before any parsing.
pub const MAX_BODY: usize = 1024 * 1024;

/// The most audit records one page holds (`GET /audit?limit=`), and the default.
pub const AUDIT_PAGE_MAX: u32 = 1000;

/// What the handlers share: the runtime, and whether the server is draining (shutting down:
/// readiness answers 503 so a balancer stops sending, in-flight requests finish).
pub struct Api<S: Store> {
    rt: Arc<Runtime<S>>,
    draining: AtomicBool,
}

impl<S: Store> Api<S> {
    /// The API of `rt`, ready.
    pub fn new(rt: Arc<Runtime<S>>) -> Arc<Self> {
        Arc::new(Self {
            rt,
            draining: AtomicBool::new(false),
        })
    }

    /// From now on readiness answers 503 (the server is shutting down).
    pub fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }
}

/// The routes of the runtime `rt`, never draining (tests, embedding).
pub fn router<S: Store>(rt: Arc<Runtime<S>>) -> Router {
    api_router(Api::new(rt))
}

/// The routes of the runtime over `api` (whose [`Api::drain`] the server calls at shutdown).
pub fn api_router<S: Store>(api: Arc<Api<S>>) -> Router {
    use handlers as h;
    Router::new()
        .route("/sources/{source}/deliveries", post(h::deliver::<S>))
        .route("/waits", get(h::waits::<S>))
        .route("/waits/{wait}", get(h::wait_by_name::<S>))
        .route("/jobs/{job}", get(h::job::<S>).post(h::start_job::<S>))
        .route(
            "/jobs/{job}/waits/{wait}",
            post(h::wait_for_event::<S>)
                .get(h::wait::<S>)
                .delete(h::cancel_wait::<S>),
        )
        .route("/audit", get(h::audit::<S>))
        .route("/healthz", get(h::health))
        .route("/readyz", get(h::ready::<S>))
        .fallback(error::no_route)
        .method_not_allowed_fallback(error::no_method)
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(api)
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
