//! Observability of probe waits (W9): the span of each wait and the streamed tool-call events.
//!
//! [`WaitForTool`] is the native tool as a worker calls it. Each call opens a `wait_for` span
//! whose attributes `wait_condition`, `probe_tool`, `poll_count`, `stop_reason` and
//! `elapsed_ms` are declared when the span is created (tracing drops fields recorded later
//! that were not declared) and filled in as they become known. Any tracing subscriber sees
//! them, including an OpenTelemetry layer. Each call also publishes two tool-call events,
//! `aura.tool_call.started` and `aura.tool_call.completed`, named by the outer tool
//! `wait_for` (the probed tool is a separate field), which [`sse_router`] streams to clients as
//! Server-Sent Events with results cut to a configurable maximum length.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio::time::Instant;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::{Stream, StreamExt};
use tracing::Instrument;
use tracing::field::Empty;

use super::mcp::McpManager;
use super::poll::run_wait_from;
use super::validate::{InvalidWait, WaitFor};
use super::{WaitError, WaitResult};

/// The default maximum length, in bytes, of a result streamed to clients
/// (`TOOL_RESULT_MAX_LENGTH`).
pub const DEFAULT_TOOL_RESULT_MAX_LENGTH: usize = 4096;

/// How many events a slow SSE client may fall behind before it misses some.
const EVENT_BUFFER: usize = 256;

/// One tool-call event as streamed to clients.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallEvent {
    /// A monotonic id, also the SSE event id, so a client can tell what it missed.
    pub seq: u64,
    /// The event name: `aura.tool_call.started` or `aura.tool_call.completed`.
    pub event: &'static str,
    /// The id of the tool call, shared by its two events.
    pub call_id: String,
    /// The outer tool the worker called: always `wait_for` for probe waits.
    pub tool: &'static str,
    /// The MCP tool being polled, when the call named one.
    pub probe_tool: Option<String>,
    /// The call's arguments (started events), cut to the maximum length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    /// The tool result or error as JSON text (completed events), cut to the maximum length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Whether `arguments` or `result` was cut.
    pub truncated: bool,
    /// Whether the call ended in an error (completed events).
    pub is_error: bool,
}

/// The tool-call event stream: a broadcast channel with a sequence counter and the maximum
/// length of streamed results. Cloning shares the stream.
#[derive(Clone)]
pub struct ToolCallEvents {
    inner: Arc<EventsInner>,
}

struct EventsInner {
    sender: broadcast::Sender<ToolCallEvent>,
    next_seq: AtomicU64,
    max_result_length: usize,
}

impl ToolCallEvents {
    /// A stream whose results are cut to `max_result_length` bytes.
    pub fn new(max_result_length: usize) -> Self {
        let (sender, _) = broadcast::channel(EVENT_BUFFER);
        ToolCallEvents {
            inner: Arc::new(EventsInner {
                sender,
                next_seq: AtomicU64::new(1),
                max_result_length,
            }),
        }
    }

    /// A receiver of every event published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ToolCallEvent> {
        self.inner.sender.subscribe()
    }

    fn publish(&self, mut event: ToolCallEvent) {
        event.seq = self.inner.next_seq.fetch_add(1, Ordering::Relaxed);
        // No subscriber is not an error: events are for whoever listens now.
        let _ = self.inner.sender.send(event);
    }

    fn cut(&self, text: String) -> (String, bool) {
        truncate(text, self.inner.max_result_length)
    }

    /// The events as an SSE stream, for one client.
    pub fn sse_stream(&self) -> impl Stream<Item = Result<Event, Infallible>> + use<> {
        BroadcastStream::new(self.subscribe()).filter_map(|item| {
            // A client that lagged behind skips what it missed; the ids show the gap.
            let event = item.ok()?;
            let data = serde_json::to_string(&event).ok()?;
            let sse = Event::default()
                .event(event.event)
                .id(event.seq.to_string())
                .data(data);
            Some(Ok(sse))
        })
    }
}

impl Default for ToolCallEvents {
    fn default() -> Self {
        ToolCallEvents::new(DEFAULT_TOOL_RESULT_MAX_LENGTH)
    }
}

/// An axum router serving the events at `GET /events` as Server-Sent Events.
pub fn sse_router(events: ToolCallEvents) -> Router {
    Router::new()
        .route("/events", get(stream_events))
        .with_state(events)
}

async fn stream_events(
    State(events): State<ToolCallEvents>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    Sse::new(events.sse_stream()).keep_alive(KeepAlive::default())
}

/// Cuts `text` to at most `max` bytes on a character boundary; says whether it cut.
pub fn truncate(mut text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    (text, true)
}

/// The native `wait_for` tool of a worker with an MCP manager.
pub struct WaitForTool<'m> {
    mcp: &'m McpManager,
    events: ToolCallEvents,
}

impl<'m> WaitForTool<'m> {
    /// The tool over `mcp`, publishing to `events`.
    pub fn new(mcp: &'m McpManager, events: ToolCallEvents) -> Self {
        WaitForTool { mcp, events }
    }

    /// Runs one call of `wait_for` with the worker's raw arguments, inside its span, and
    /// publishes its events.
    pub async fn call(&self, call_id: &str, arguments: &Value) -> Result<WaitResult, WaitError> {
        self.call_started(call_id, arguments, Instant::now()).await
    }

    /// Like [`WaitForTool::call`] for a call whose bound started at `start` (before its MCP
    /// server was reached).
    pub async fn call_started(
        &self,
        call_id: &str,
        arguments: &Value,
        start: Instant,
    ) -> Result<WaitResult, WaitError> {
        let probe_tool = arguments
            .pointer("/probe/tool")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let span = tracing::info_span!(
            "wait_for",
            wait_condition = Empty,
            probe_tool = Empty,
            poll_count = Empty,
            stop_reason = Empty,
            elapsed_ms = Empty,
        );
        if let Some(tool) = &probe_tool {
            span.record("probe_tool", tool.as_str());
        }
        let (args_text, cut) = self.events.cut(arguments.to_string());
        self.events.publish(ToolCallEvent {
            seq: 0,
            event: "aura.tool_call.started",
            call_id: call_id.to_owned(),
            tool: "wait_for",
            probe_tool: probe_tool.clone(),
            arguments: Some(args_text),
            result: None,
            truncated: cut,
            is_error: false,
        });

        let outcome = self
            .run(arguments, &span, start)
            .instrument(span.clone())
            .await;

        let result_text = match &outcome {
            Ok(result) => serde_json::to_string(result).unwrap_or_default(),
            Err(error) => error.to_json().to_string(),
        };
        let (result_text, cut) = self.events.cut(result_text);
        self.events.publish(ToolCallEvent {
            seq: 0,
            event: "aura.tool_call.completed",
            call_id: call_id.to_owned(),
            tool: "wait_for",
            probe_tool,
            arguments: None,
            result: Some(result_text),
            truncated: cut,
            is_error: outcome.is_err(),
        });
        outcome
    }

    async fn run(
        &self,
        arguments: &Value,
        span: &tracing::Span,
        start: Instant,
    ) -> Result<WaitResult, WaitError> {
        let wait = match self.validated(arguments) {
            Ok(wait) => wait,
            Err(invalid) => {
                span.record("poll_count", 0_u64);
                span.record("stop_reason", "invalid");
                span.record("elapsed_ms", 0_u64);
                return Err(invalid.into());
            }
        };
        span.record("wait_condition", wait.until.name());
        let mut probe = self.mcp;
        let outcome = run_wait_from(&wait, &mut probe, start).await;
        span.record("poll_count", outcome.samples);
        span.record("elapsed_ms", outcome.elapsed_ms);
        match &outcome.result {
            Ok(result) => span.record("stop_reason", result.reason.as_str()),
            Err(_) => span.record("stop_reason", "error"),
        };
        outcome.result.map_err(WaitError::from)
    }

    /// Validates the call, then checks that the probe is a tool of this MCP server (W2).
    fn validated(&self, arguments: &Value) -> Result<WaitFor, InvalidWait> {
        let wait = WaitFor::from_json(arguments)?;
        if !self.mcp.has_tool(&wait.probe_tool) {
            return Err(InvalidWait::UnknownProbeTool {
                tool: wait.probe_tool,
                available: self.mcp.tool_names().to_vec(),
            });
        }
        Ok(wait)
    }
}
