//! The MCP manager: a real MCP client (rmcp, the official Rust SDK) whose tools are probes.
//!
//! A worker's MCP manager is a live connection to an MCP server, usually a child process over
//! stdio. It lists the server's tools once at connection time, so `wait_for` can reject a probe
//! that the server does not offer before calling anything.
//!
//! What a tool result means as a probe output is decided here (see `docs/probe-waits.md`): the
//! output is the result's text blocks joined by `\n`; when there is no text block but
//! `structuredContent` is present, the output is that value as compact JSON; other blocks
//! (images, audio, resources) are ignored. A result with `isError: true` is still an
//! observation, because "not found yet" is often exactly what a probe reports before the thing
//! waited for exists. A JSON-RPC error or a broken connection fails the wait.

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::{IntoTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value};

use super::ProbeFailure;
use super::poll::{Observation, Probe};

/// Why an MCP server could not be reached.
#[derive(Debug, Clone, PartialEq, thiserror::Error, miette::Diagnostic)]
pub enum McpError {
    /// The server process could not be started.
    #[error("cannot start the MCP server `{command}`: {message}")]
    #[diagnostic(code(wait_for::mcp_spawn))]
    Spawn {
        /// The program.
        command: String,
        /// The operating system's message.
        message: String,
    },
    /// The MCP handshake or the tool listing failed.
    #[error("the MCP server did not complete the handshake: {message}")]
    #[diagnostic(code(wait_for::mcp_handshake))]
    Handshake {
        /// The SDK's message.
        message: String,
    },
}

impl McpError {
    /// The stable machine-readable code of the error.
    pub fn error_code(&self) -> &'static str {
        match self {
            McpError::Spawn { .. } => "mcp-spawn",
            McpError::Handshake { .. } => "mcp-handshake",
        }
    }
}

/// A live connection to one MCP server, with the names of its tools.
pub struct McpManager {
    client: RunningService<RoleClient, ()>,
    tools: Vec<String>,
}

impl McpManager {
    /// Starts `program` with `args` as a child process and connects to it over stdio. The child
    /// is killed when the manager is dropped.
    pub async fn spawn(program: &str, args: &[String]) -> Result<Self, McpError> {
        let mut command = tokio::process::Command::new(program);
        // Killed with its manager, even when the manager is dropped mid-handshake.
        command.args(args).kill_on_drop(true);
        let transport = TokioChildProcess::new(command).map_err(|e| McpError::Spawn {
            command: program.to_owned(),
            message: e.to_string(),
        })?;
        Self::connect(transport).await
    }

    /// Connects over any rmcp transport (a child process, or an in-memory pipe in tests).
    pub async fn connect<T, E, A>(transport: T) -> Result<Self, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let client = ().serve(transport).await.map_err(|e| McpError::Handshake {
            message: e.to_string(),
        })?;
        let tools = client
            .list_all_tools()
            .await
            .map_err(|e| McpError::Handshake {
                message: e.to_string(),
            })?
            .into_iter()
            .map(|tool| tool.name.into_owned())
            .collect();
        Ok(McpManager { client, tools })
    }

    /// The names of the tools the server offers.
    pub fn tool_names(&self) -> &[String] {
        &self.tools
    }

    /// Whether the server offers `tool`.
    pub fn has_tool(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t == tool)
    }

    /// Closes the connection (and ends a child process).
    pub async fn close(self) {
        // A server that is already gone cannot be closed more; there is nothing to report.
        let _ = self.client.cancel().await;
    }
}

impl Probe for &McpManager {
    async fn call(
        &mut self,
        tool: &str,
        args: &Map<String, Value>,
    ) -> Result<Observation, ProbeFailure> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args.clone());
        // rmcp sends `notifications/cancelled` when this future is dropped, which is how the
        // deadline cancels a hung call.
        let result = self.client.call_tool(params).await.map_err(failure)?;
        Ok(observation(&result))
    }
}

/// The probe output of a tool result, as documented at the top of this module.
pub fn observation(result: &CallToolResult) -> Observation {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .map(|t| t.text.as_str())
        .collect();
    let text = match (&texts[..], &result.structured_content) {
        ([], Some(structured)) => structured.to_string(),
        _ => texts.join("\n"),
    };
    Observation {
        text,
        is_error: result.is_error.unwrap_or(false),
    }
}

fn failure(error: ServiceError) -> ProbeFailure {
    match error {
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => ProbeFailure::Transport {
            message: error.to_string(),
        },
        ServiceError::McpError(data) => ProbeFailure::CallFailed {
            message: data.message.into_owned(),
        },
        other => ProbeFailure::CallFailed {
            message: other.to_string(),
        },
    }
}
