//! The span attributes of W9 exported through OpenTelemetry (feature `otel`).
#![cfg(feature = "otel")]

mod common;

use std::sync::{Arc, Mutex};

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use ozcheck_runtime::probe::WaitForTool;
use ozcheck_runtime::probe::observe::ToolCallEvents;
use ozcheck_runtime::probe::otel::{self, opentelemetry_sdk};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// Keeps exported spans in memory.
#[derive(Debug, Clone, Default)]
struct Collected(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collected {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.lock().expect("not poisoned").extend(batch);
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn wait_spans_are_exported_with_their_attributes() {
    let exported = Collected::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exported.clone())
        .build();
    let subscriber = tracing_subscriber::registry().with(otel::layer(&provider));
    let _guard = tracing::subscriber::set_default(subscriber);

    let (manager, _) =
        common::scripted(&[("kubectl_get", "- {calls: 1, text: '0/3'}\n- {text: '3/3'}")]).await;
    let tool = WaitForTool::new(&manager, ToolCallEvents::default());
    let call = json!({"probe": {"tool": "kubectl_get"}, "until": {"matches": "3/3"},
                      "poll_sec": 5, "max_wait_sec": 60});
    tool.call("c", &call).await.expect("matched");
    provider.force_flush().expect("flushed");

    let spans = exported.0.lock().expect("not poisoned").clone();
    let span = spans
        .iter()
        .find(|s| s.name == "wait_for")
        .expect("a wait_for span");
    let attr = |key: &str| {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.to_string())
    };
    assert_eq!(attr("wait_condition").as_deref(), Some("matches"));
    assert_eq!(attr("probe_tool").as_deref(), Some("kubectl_get"));
    assert_eq!(attr("poll_count").as_deref(), Some("2"));
    assert_eq!(attr("stop_reason").as_deref(), Some("matched"));
    assert_eq!(attr("elapsed_ms").as_deref(), Some("5000"));
}
