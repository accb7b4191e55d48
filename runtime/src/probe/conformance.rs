//! The probe-wait operations of the conformance adapter (`corpus/conformance/wait_for/`).
//!
//! The reference adapter hands every operation it does not own to [`ProbeSession::dispatch`].
//! A probe wait lives inside one worker, so each `wait_for` operation is a sealed simulation: it
//! runs on its own thread in a paused-clock tokio runtime, with a fresh scripted MCP server
//! (built from the tools registered so far) on an in-memory pipe to a real rmcp client. The
//! virtual clock moves only while the wait is waiting, so results are exact and a 300 s wait
//! takes milliseconds; the adapter's own clock (`advance`) is not involved. Call numbers and
//! `after_sec` in scripts count from the start of each wait.
//!
//! Operations (arguments → result):
//! - `register_probe_tool {name, script}` → `{}`: offers a scripted tool from now on.
//! - `wait_for {probe, until, poll_sec?, max_wait_sec?}` (the worker's call, verbatim) → the
//!   result of W8, or an error of kind `invalid_args` or `runtime` whose message starts with
//!   the error code, e.g. `zero-poll-sec: …`.
//! - `toolset {mcp}` → `{tools: [...]}`: the worker's tool names with or without an MCP manager.
//! - `spans {}` → `{spans: [{name, fields}]}`: the `wait_for` spans of the waits so far.
//! - `tool_result_max_length {bytes}` → `{}`: the maximum length of streamed results.
//! - `tool_call_events {}` → `{events: [...]}`: the tool-call events, as streamed over SSE.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};
use tracing_subscriber::layer::SubscriberExt;

use super::mcp::McpManager;
use super::observe::{DEFAULT_TOOL_RESULT_MAX_LENGTH, ToolCallEvent, ToolCallEvents, WaitForTool};
use super::script::ToolScript;
use super::server::ScriptedServer;
use super::spans::{RecordedSpan, SpanRecorder};
use super::tools::WorkerToolset;
use super::{WaitError, WaitResult};
use crate::conformance::adapter::OpError;

/// The operations [`ProbeSession::dispatch`] answers.
pub const PROBE_OPS: &[&str] = &[
    "register_probe_tool",
    "wait_for",
    "toolset",
    "spans",
    "tool_result_max_length",
    "tool_call_events",
];

/// The probe-wait state of one conformance session.
#[derive(Default)]
pub struct ProbeSession {
    state: Mutex<State>,
}

struct State {
    tools: BTreeMap<String, ToolScript>,
    spans: Vec<RecordedSpan>,
    events: Vec<ToolCallEvent>,
    max_result_length: usize,
    waits: u64,
}

impl Default for State {
    fn default() -> Self {
        State {
            tools: BTreeMap::new(),
            spans: Vec::new(),
            events: Vec::new(),
            max_result_length: DEFAULT_TOOL_RESULT_MAX_LENGTH,
            waits: 0,
        }
    }
}

/// One wait run in virtual time, with what it made observable.
#[derive(Debug)]
pub struct SimulatedWait {
    /// The tool result or error.
    pub result: Result<WaitResult, WaitError>,
    /// The spans closed during the wait.
    pub spans: Vec<RecordedSpan>,
    /// The tool-call events published.
    pub events: Vec<ToolCallEvent>,
}

fn op_error(kind: &'static str, message: impl Into<String>) -> OpError {
    OpError {
        kind,
        code: None,
        message: message.into(),
    }
}

impl ProbeSession {
    /// Forgets registered tools, spans and events (the `reset` operation).
    pub fn reset(&self) {
        *self.lock() = State::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `op` if it is a probe-wait operation; `None` otherwise.
    pub async fn dispatch(&self, op: &str, args: &Value) -> Option<Result<Value, OpError>> {
        let answer = match op {
            "register_probe_tool" => self.register(args),
            "wait_for" => self.wait_for(args).await,
            "toolset" => self.toolset(args).await,
            "spans" => Ok(json!({"spans": self.lock().spans})),
            "tool_result_max_length" => match args.get("bytes").and_then(Value::as_u64) {
                Some(bytes) => {
                    self.lock().max_result_length = usize::try_from(bytes).unwrap_or(usize::MAX);
                    Ok(json!({}))
                }
                None => Err(op_error(
                    "invalid_args",
                    "`bytes` (a whole number) is required",
                )),
            },
            "tool_call_events" => Ok(json!({"events": self.lock().events})),
            _ => return None,
        };
        Some(answer)
    }

    fn register(&self, args: &Value) -> Result<Value, OpError> {
        let name = args
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| op_error("invalid_args", "`name` (a non-empty string) is required"))?;
        let script = args.get("script").cloned().unwrap_or_else(|| json!([]));
        let script: ToolScript = serde_json::from_value(script)
            .map_err(|e| op_error("invalid_args", format!("script of `{name}`: {e}")))?;
        self.lock().tools.insert(name.to_owned(), script);
        Ok(json!({}))
    }

    async fn wait_for(&self, args: &Value) -> Result<Value, OpError> {
        let (tools, call_id, max_len) = {
            let mut state = self.lock();
            state.waits += 1;
            (
                state.tools.clone(),
                format!("call-{}", state.waits),
                state.max_result_length,
            )
        };
        let simulated = simulate_wait(tools, args.clone(), call_id, max_len)
            .await
            .map_err(|e| op_error("runtime", e))?;
        let mut state = self.lock();
        state.spans.extend(simulated.spans);
        state.events.extend(simulated.events);
        match simulated.result {
            Ok(result) => Ok(json!(result)),
            Err(error) => Err(OpError {
                code: Some(error.error_code()),
                ..op_error(error.kind(), format!("{}: {error}", error.error_code()))
            }),
        }
    }

    async fn toolset(&self, args: &Value) -> Result<Value, OpError> {
        let with_mcp = args.get("mcp").and_then(Value::as_bool).unwrap_or(true);
        if !with_mcp {
            return Ok(json!({"tools": WorkerToolset::for_worker(None).names()}));
        }
        let tools = self.lock().tools.clone();
        let names = in_virtual_time(move || async move {
            let manager = connect(tools).await?;
            let names: Vec<String> = WorkerToolset::for_worker(Some(&manager))
                .names()
                .into_iter()
                .map(str::to_owned)
                .collect();
            manager.close().await;
            Ok::<_, String>(names)
        })
        .await
        .and_then(|(names, _)| names)
        .map_err(|e| op_error("runtime", e))?;
        Ok(json!({"tools": names}))
    }
}

/// Runs one `wait_for` call against a fresh scripted server, in virtual time.
pub async fn simulate_wait(
    tools: BTreeMap<String, ToolScript>,
    call: Value,
    call_id: String,
    max_result_length: usize,
) -> Result<SimulatedWait, String> {
    let (outcome, spans) = in_virtual_time(move || async move {
        let manager = connect(tools).await?;
        let events = ToolCallEvents::new(max_result_length);
        let mut received = events.subscribe();
        let result = WaitForTool::new(&manager, events)
            .call(&call_id, &call)
            .await;
        manager.close().await;
        let mut published = Vec::new();
        while let Ok(event) = received.try_recv() {
            published.push(event);
        }
        Ok::<_, String>((result, published))
    })
    .await?;
    let (result, events) = outcome?;
    let spans = spans.into_iter().filter(|s| s.name == "wait_for").collect();
    Ok(SimulatedWait {
        result,
        spans,
        events,
    })
}

/// Serves `tools` from a scripted server on an in-memory pipe and connects a manager to it.
async fn connect(tools: BTreeMap<String, ToolScript>) -> Result<McpManager, String> {
    use rmcp::ServiceExt;
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let server = ScriptedServer::new(tools);
    tokio::spawn(async move {
        if let Ok(service) = server.serve(server_end).await {
            // The service ends when the client closes the pipe; how it ended is of no interest.
            let _ = service.waiting().await;
        }
    });
    McpManager::connect(client_end)
        .await
        .map_err(|e| e.to_string())
}

/// Runs the future made by `make` on a new thread in a paused-clock runtime, recording spans.
///
/// A thread of its own keeps the paused clock and the span recorder away from the caller's
/// runtime, which may be multi-threaded and must not have its time paused.
async fn in_virtual_time<T, F, Fut>(make: F) -> Result<(T, Vec<RecordedSpan>), String>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T>,
    T: Send + 'static,
{
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("virtual-time".to_owned())
        .spawn(move || {
            let outcome = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .start_paused(true)
                .build()
                .map_err(|e| e.to_string())
                .map(|runtime| {
                    let recorder = SpanRecorder::default();
                    let subscriber = tracing_subscriber::registry().with(recorder.clone());
                    let value =
                        tracing::subscriber::with_default(subscriber, || runtime.block_on(make()));
                    (value, recorder.spans())
                });
            // The receiver is gone only if the caller gave up; nobody is left to tell.
            let _ = sender.send(outcome);
        })
        .map_err(|e| e.to_string())?;
    receiver
        .await
        .map_err(|_| "the virtual-time thread failed".to_owned())?
}
