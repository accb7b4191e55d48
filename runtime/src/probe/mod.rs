//! Probe waits: the native `wait_for` tool of orchestration workers (W1–W9).
//!
//! A worker hands `wait_for` a probe (an MCP tool plus its arguments) and one stop condition;
//! the runtime re-runs the probe every `poll_sec` seconds until the condition holds or the
//! time bound elapses. The pieces are split by concern: [`validate`] turns the worker's raw JSON
//! into a [`WaitFor`] or a precise [`InvalidWait`]; [`poll`] runs the schedule against any
//! [`Probe`] with a deadline that the probe cannot extend; [`mcp`] is the real probe, an rmcp
//! client to an MCP server; [`tools`] decides which native tools a worker gets; [`observe`]
//! carries the span attributes and the streamed tool-call events; [`script`] and [`server`] are
//! the scripted MCP server used by tests and conformance scenarios; [`conformance`] runs the
//! `wait_for` scenario files.
//!
//! The semantics the product document leaves open are decided in `docs/probe-waits.md`.

pub mod conformance;
pub mod mcp;
pub mod observe;
pub mod oneshot;
#[cfg(feature = "otel")]
pub mod otel;
pub mod poll;
pub mod script;
pub mod server;
pub mod spans;
pub mod tools;
pub mod validate;

use std::time::Duration;

use serde::Serialize;

pub use mcp::{McpError, McpManager};
pub use observe::{ToolCallEvent, ToolCallEvents, WaitForTool};
pub use oneshot::wait_on_server;
pub use poll::{Observation, Probe, run_wait, run_wait_from};
pub use tools::{NativeTool, WorkerToolset};
pub use validate::{InvalidWait, Pattern, Until, WaitFor};

/// The ceiling on `max_wait_sec`: larger requests are clamped to it (W5).
pub const MAX_WAIT_CEILING_SEC: u64 = 300;

/// The largest probe output accepted, in bytes of UTF-8 text (W6). Exactly this many bytes
/// passes; one byte more fails the wait.
pub const MAX_OUTPUT_BYTES: usize = 256 * 1024;

/// The `poll_sec` used when the worker gives none.
pub const DEFAULT_POLL_SEC: u64 = 5;

/// The `max_wait_sec` used when the worker gives none: the ceiling, so that an omitted bound
/// never waits longer than an explicit one could.
pub const DEFAULT_MAX_WAIT_SEC: u64 = MAX_WAIT_CEILING_SEC;

/// Why a wait stopped normally (W8). A timeout is a result, not an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A `matches` or `not_matches` predicate held.
    Matched,
    /// The `quiet_for_sec` window held.
    Settled,
    /// The time bound elapsed without the condition holding.
    Timeout,
}

impl StopReason {
    /// The name used in results, spans and events.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Matched => "matched",
            StopReason::Settled => "settled",
            StopReason::Timeout => "timeout",
        }
    }
}

/// The structured result of a wait (W8), returned to the worker as the tool result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaitResult {
    /// Why the wait stopped.
    pub reason: StopReason,
    /// How many probe outputs were observed (the span's `poll_count`).
    pub samples: u64,
    /// Seconds from the start of the wait to its end, with millisecond resolution.
    pub elapsed_sec: f64,
    /// The last probe output observed, also on timeout; `null` when no probe call completed.
    pub last_observation: Option<String>,
    /// Whether the tool flagged that last output as an error (`isError`): such an output is
    /// shown, but it never satisfied the condition.
    pub last_is_error: bool,
    /// The bound that was enforced, after clamping to [`MAX_WAIT_CEILING_SEC`].
    pub effective_max_wait_sec: u64,
}

impl WaitResult {
    /// Seconds with millisecond resolution, the unit of `elapsed_sec`.
    pub(crate) fn seconds(elapsed: Duration) -> f64 {
        elapsed.as_millis() as f64 / 1000.0
    }
}

/// A failure of a probe while the wait runs (W6 and broken probes): the wait ends with an error.
#[derive(Debug, Clone, PartialEq, thiserror::Error, miette::Diagnostic)]
pub enum ProbeFailure {
    /// The probe returned more text than [`MAX_OUTPUT_BYTES`].
    #[error("probe output of {bytes} bytes exceeds the limit of {limit} bytes")]
    #[diagnostic(
        code(wait_for::probe_output_too_large),
        help("make the probe return less, e.g. select one field or filter the listing")
    )]
    OutputTooLarge {
        /// The size of the rejected output.
        bytes: usize,
        /// The limit in force.
        limit: usize,
    },
    /// The MCP server answered the call with a protocol error (unknown tool, bad arguments).
    #[error("the probe call failed: {message}")]
    #[diagnostic(code(wait_for::probe_call_failed))]
    CallFailed {
        /// The server's or the SDK's message.
        message: String,
    },
    /// The connection to the MCP server is gone.
    #[error("the MCP server connection failed: {message}")]
    #[diagnostic(code(wait_for::probe_transport))]
    Transport {
        /// What went wrong.
        message: String,
    },
}

impl ProbeFailure {
    /// The stable machine-readable code of the failure.
    pub fn error_code(&self) -> &'static str {
        match self {
            ProbeFailure::OutputTooLarge { .. } => "probe-output-too-large",
            ProbeFailure::CallFailed { .. } => "probe-call-failed",
            ProbeFailure::Transport { .. } => "probe-transport",
        }
    }
}

/// Why a `wait_for` call produced no [`WaitResult`].
#[derive(Debug, Clone, PartialEq, thiserror::Error, miette::Diagnostic)]
pub enum WaitError {
    /// The call was rejected before any probe ran (W2, W7).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Invalid(#[from] InvalidWait),
    /// A probe failed while the wait ran (W6).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Runtime(#[from] ProbeFailure),
    /// The MCP server could not be started or did not complete the handshake.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Server(#[from] McpError),
}

impl WaitError {
    /// The error kind of the conformance protocol: `invalid_args` or `runtime`.
    pub fn kind(&self) -> &'static str {
        match self {
            WaitError::Invalid(_) => "invalid_args",
            WaitError::Runtime(_) | WaitError::Server(_) => "runtime",
        }
    }

    /// The stable machine-readable code of the error.
    pub fn error_code(&self) -> &'static str {
        match self {
            WaitError::Invalid(e) => e.error_code(),
            WaitError::Runtime(e) => e.error_code(),
            WaitError::Server(e) => e.error_code(),
        }
    }

    /// The error as the JSON object a worker or a script receives.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"kind": self.kind(), "code": self.error_code(), "message": self.to_string()})
    }
}
