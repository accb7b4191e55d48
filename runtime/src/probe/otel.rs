//! OpenTelemetry export of wait spans (feature `otel`).
//!
//! The `wait_for` span and its attributes are ordinary tracing data; [`layer`] turns them into
//! OpenTelemetry spans through the embedding service's tracer provider, whatever exporter that
//! provider was built with (OTLP in production, an in-memory one in tests). The OpenTelemetry
//! crates are re-exported so that callers use the versions this layer was built against.

pub use opentelemetry;
pub use opentelemetry_sdk;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing::Subscriber;
use tracing_opentelemetry::OpenTelemetryLayer;
use tracing_subscriber::registry::LookupSpan;

/// The instrumentation scope name of the runtime's spans.
pub const SCOPE: &str = "ozcheck-runtime";

/// A tracing layer exporting spans, with their recorded fields as attributes, via `provider`.
pub fn layer<S>(provider: &SdkTracerProvider) -> OpenTelemetryLayer<S, SdkTracer>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    tracing_opentelemetry::layer().with_tracer(provider.tracer(SCOPE))
}
