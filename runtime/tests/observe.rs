//! The worker toolset (W1) and what a wait makes observable (W9): span attributes and the
//! streamed tool-call events.

mod common;

use ozcheck_runtime::probe::observe::{ToolCallEvents, sse_router};
use ozcheck_runtime::probe::spans::SpanRecorder;
use ozcheck_runtime::probe::{NativeTool, WaitForTool, WorkerToolset};
use serde_json::{Value, json};
use tokio_stream::StreamExt;
use tower::ServiceExt;
use tracing_subscriber::layer::SubscriberExt;

#[tokio::test(start_paused = true)]
async fn wait_for_is_offered_exactly_when_an_mcp_manager_is_present() {
    let without = WorkerToolset::for_worker(None);
    assert_eq!(without.names(), ["submit_result", "read_artifact"]);

    let (manager, _) =
        common::scripted(&[("pods", "- {text: a}"), ("wait_for", "- {text: b}")]).await;
    let with = WorkerToolset::for_worker(Some(&manager));
    assert_eq!(with.native(), NativeTool::ALL);
    // The server's own `wait_for` is shadowed by the native tool, and cannot be probed.
    assert_eq!(
        with.names(),
        ["submit_result", "read_artifact", "wait_for", "pods"]
    );
    assert!(with.is_probeable("pods"));
    assert!(!with.is_probeable("wait_for"));
}

fn span_fields(recorder: &SpanRecorder) -> Vec<Value> {
    recorder
        .spans()
        .into_iter()
        .filter(|s| s.name == "wait_for")
        .map(|s| Value::Object(s.fields))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn each_wait_records_its_span_attributes() {
    let recorder = SpanRecorder::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(recorder.clone()));
    let (manager, _) =
        common::scripted(&[("pods", "- {calls: 1..3, text: Pending}\n- {text: Running}")]).await;
    let tool = WaitForTool::new(&manager, ToolCallEvents::default());

    let matched = json!({"probe": {"tool": "pods"}, "until": {"matches": "Running"},
                         "poll_sec": 2, "max_wait_sec": 30});
    tool.call("c1", &matched).await.expect("matched");
    let timeout = json!({"probe": {"tool": "pods"}, "until": {"quiet_for_sec": 25},
                         "poll_sec": 10, "max_wait_sec": 25});
    tool.call("c2", &timeout).await.expect("timeout");
    let invalid = json!({"probe": {"tool": "pods"}, "until": {}});
    tool.call("c3", &invalid).await.expect_err("invalid");

    assert_eq!(
        span_fields(&recorder),
        [
            json!({"wait_condition": "matches", "probe_tool": "pods", "poll_count": 4,
                   "stop_reason": "matched", "elapsed_ms": 6000}),
            json!({"wait_condition": "quiet_for_sec", "probe_tool": "pods", "poll_count": 3,
                   "stop_reason": "timeout", "elapsed_ms": 25000}),
            json!({"probe_tool": "pods", "poll_count": 0, "stop_reason": "invalid",
                   "elapsed_ms": 0}),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_wait_records_the_samples_before_the_failure() {
    let recorder = SpanRecorder::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(recorder.clone()));
    let (manager, _) =
        common::scripted(&[("logs", "- {calls: 1, text: ok}\n- {bytes: 300000}")]).await;
    let tool = WaitForTool::new(&manager, ToolCallEvents::default());
    let call = json!({"probe": {"tool": "logs"}, "until": {"matches": "done"},
                      "poll_sec": 1, "max_wait_sec": 9});
    tool.call("c", &call).await.expect_err("too large");
    let fields = span_fields(&recorder);
    assert_eq!(fields[0]["poll_count"], 1);
    assert_eq!(fields[0]["stop_reason"], "error");
    assert_eq!(fields[0]["elapsed_ms"], 1000);
}

/// Reads SSE frames from a response body until `count` events have arrived.
async fn read_events(body: axum::body::Body, count: usize) -> Vec<(String, Value)> {
    let mut stream = body.into_data_stream();
    let mut text = String::new();
    let mut events = Vec::new();
    while events.len() < count {
        let chunk = stream.next().await.expect("stream open").expect("chunk");
        text.push_str(std::str::from_utf8(&chunk).expect("utf-8"));
        while let Some(end) = text.find("\n\n") {
            let frame: String = text.drain(..end + 2).collect();
            let field = |name: &str| {
                frame
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(str::to_owned)
            };
            if let (Some(name), Some(data)) = (field("event: "), field("data: ")) {
                events.push((name, serde_json::from_str(&data).expect("json data")));
            }
        }
    }
    events
}

#[tokio::test(start_paused = true)]
async fn tool_call_events_stream_as_sse_under_the_outer_tool_name_truncated() {
    let events = ToolCallEvents::new(64);
    let response = sse_router(events.clone())
        .oneshot(
            axum::http::Request::get("/events")
                .body(axum::body::Body::empty())
                .expect("request"),
        )
        .await
        .expect("response");
    assert_eq!(response.headers()["content-type"], "text/event-stream");

    let (manager, _) =
        common::scripted(&[("kubectl_get", "- {text: 'phase: Running, ready: 3/3'}")]).await;
    let tool = WaitForTool::new(&manager, events);
    let call = json!({"probe": {"tool": "kubectl_get", "args": {"kind": "deployment", "name": "web"}},
                      "until": {"matches": "ready: 3/3"}, "poll_sec": 5, "max_wait_sec": 60});
    tool.call("call-7", &call).await.expect("matched");

    let received = read_events(response.into_body(), 2).await;
    let names: Vec<&str> = received.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["aura.tool_call.started", "aura.tool_call.completed"]
    );
    for (_, event) in &received {
        assert_eq!(event["tool"], "wait_for");
        assert_eq!(event["probe_tool"], "kubectl_get");
        assert_eq!(event["call_id"], "call-7");
    }
    let completed = &received[1].1;
    let result = completed["result"].as_str().expect("a result");
    assert!(result.len() <= 64, "{result}");
    assert!(result.starts_with(r#"{"reason":"matched""#), "{result}");
    assert_eq!(completed["truncated"], true);
    assert_eq!(completed["seq"], 2);
}

#[test]
fn truncation_respects_character_boundaries() {
    use ozcheck_runtime::probe::observe::truncate;
    assert_eq!(truncate("héllo".to_owned(), 2), ("h".to_owned(), true));
    assert_eq!(truncate("héllo".to_owned(), 3), ("hé".to_owned(), true));
    assert_eq!(truncate("hello".to_owned(), 5), ("hello".to_owned(), false));
}
