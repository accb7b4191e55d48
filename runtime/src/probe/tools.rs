//! The toolset of an orchestration worker (W1, W2).
//!
//! Every worker has the native tools `submit_result` and `read_artifact`; it also has
//! `wait_for` exactly when an MCP manager is present, because a probe is always an MCP tool and
//! without a manager there is nothing to probe. There is deliberately no switch to turn
//! `wait_for` off. Native tool names are reserved: they can never be probed.

use super::mcp::McpManager;

/// A tool built into the runtime rather than provided by an MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NativeTool {
    /// Hands the worker's result back to the orchestrator.
    SubmitResult,
    /// Reads an artifact of the run.
    ReadArtifact,
    /// Polls an MCP probe until a condition holds.
    WaitFor,
}

impl NativeTool {
    /// Every native tool, in the order they are offered.
    pub const ALL: [NativeTool; 3] = [
        NativeTool::SubmitResult,
        NativeTool::ReadArtifact,
        NativeTool::WaitFor,
    ];

    /// The name the worker calls the tool by.
    pub fn name(self) -> &'static str {
        match self {
            NativeTool::SubmitResult => "submit_result",
            NativeTool::ReadArtifact => "read_artifact",
            NativeTool::WaitFor => "wait_for",
        }
    }

    /// The native tool of that name, if any.
    pub fn from_name(name: &str) -> Option<NativeTool> {
        NativeTool::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// The tools one worker may call: native tools first, then the MCP server's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerToolset {
    native: Vec<NativeTool>,
    mcp: Vec<String>,
}

impl WorkerToolset {
    /// The toolset of a worker with or without an MCP manager.
    ///
    /// An MCP tool that shares a native tool's name is left out: the native tool wins, so the
    /// worker never sees two tools of one name.
    pub fn for_worker(mcp: Option<&McpManager>) -> Self {
        let native = NativeTool::ALL
            .into_iter()
            .filter(|t| *t != NativeTool::WaitFor || mcp.is_some())
            .collect();
        let mcp = mcp
            .map(|m| {
                m.tool_names()
                    .iter()
                    .filter(|name| NativeTool::from_name(name).is_none())
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        WorkerToolset { native, mcp }
    }

    /// The native tools offered.
    pub fn native(&self) -> &[NativeTool] {
        &self.native
    }

    /// Every tool name offered, native first.
    pub fn names(&self) -> Vec<&str> {
        self.native
            .iter()
            .map(|t| t.name())
            .chain(self.mcp.iter().map(String::as_str))
            .collect()
    }

    /// Whether `name` may be used as a probe: it must be an MCP tool of this worker.
    pub fn is_probeable(&self, name: &str) -> bool {
        self.mcp.iter().any(|t| t == name)
    }
}
