//! One wait against an MCP server started for it (what `ozcheck wait-for` runs): the server's
//! start, the MCP handshake and the tool listing count against the wait's own bound, so a server
//! that never answers ends the wait with `timeout` at `max_wait_sec` instead of hanging it.
//!
//! The call is validated first (W7), before any process starts, so the bound is known; the
//! bound starts when the call does.

use serde_json::Value;
use tokio::time::Instant;

use super::mcp::McpManager;
use super::observe::{ToolCallEvents, WaitForTool};
use super::validate::WaitFor;
use super::{StopReason, WaitError, WaitResult};

/// How long closing the server may take after the wait, before it is killed.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Starts `program args…`, connects to it and runs the `wait_for` call `call` within one bound.
pub async fn wait_on_server(
    program: &str,
    args: &[String],
    call: &Value,
    events: ToolCallEvents,
) -> Result<WaitResult, WaitError> {
    let start = Instant::now();
    let wait = WaitFor::from_json(call)?;
    let deadline = start + wait.max_wait();
    let manager = match tokio::time::timeout_at(deadline, McpManager::spawn(program, args)).await {
        Ok(connected) => connected?,
        Err(_elapsed) => return Ok(unreached(&wait)),
    };
    let result = WaitForTool::new(&manager, events)
        .call_started("cli", call, start)
        .await;
    // A server that ignores the end of its input is killed when the manager drops.
    let _ = tokio::time::timeout(CLOSE_GRACE, manager.close()).await;
    result
}

/// The result of a wait whose server never completed the handshake within the bound.
fn unreached(wait: &WaitFor) -> WaitResult {
    WaitResult {
        reason: StopReason::Timeout,
        samples: 0,
        elapsed_sec: wait.effective_max_wait_sec as f64,
        last_observation: None,
        last_is_error: false,
        effective_max_wait_sec: wait.effective_max_wait_sec,
    }
}
