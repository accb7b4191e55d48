//! The scripted MCP server: real MCP over any transport, with tool output taken from scripts.
//!
//! Tests and conformance scenarios need probes that answer exactly as told: slowly, never,
//! with an error flag, with no text, or with more than the 256 KiB limit. [`ScriptedServer`]
//! offers one tool per [`ToolScript`] and counts each tool's calls. It serves over stdio in the
//! `ozcheck-test-mcp` binary and over an in-memory duplex pipe in tests, where tokio's paused
//! clock drives `delay_ms`, `after_sec` and `hang` in virtual time.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ContentBlock, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::time::Instant;

use super::script::ToolScript;

/// A one-pixel transparent PNG, the content of scripted image blocks.
const PIXEL_PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// An MCP server whose tools answer from scripts.
#[derive(Clone)]
pub struct ScriptedServer {
    tools: Arc<BTreeMap<String, ToolScript>>,
    calls: Arc<Mutex<BTreeMap<String, u64>>>,
    cancelled: Arc<AtomicU64>,
    started: Instant,
}

impl ScriptedServer {
    /// A server offering one tool per entry; its clock starts now.
    pub fn new(tools: BTreeMap<String, ToolScript>) -> Self {
        ScriptedServer {
            tools: Arc::new(tools),
            calls: Arc::new(Mutex::new(BTreeMap::new())),
            cancelled: Arc::new(AtomicU64::new(0)),
            started: Instant::now(),
        }
    }

    /// How many times `tool` has been called so far.
    pub fn calls(&self, tool: &str) -> u64 {
        self.calls
            .lock()
            .map_or(0, |calls| calls.get(tool).copied().unwrap_or(0))
    }

    /// How many `notifications/cancelled` the server has received.
    pub fn cancellations(&self) -> u64 {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// Counts a call and returns its 1-based number.
    fn count(&self, tool: &str) -> u64 {
        let mut calls = self
            .calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = calls.entry(tool.to_owned()).or_insert(0);
        *n += 1;
        *n
    }

    async fn answer(&self, request: CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let name = request.name.as_ref();
        let Some(script) = self.tools.get(name) else {
            return Err(ErrorData::invalid_params(format!("no tool `{name}`"), None));
        };
        let call = self.count(name);
        let elapsed = (Instant::now() - self.started).as_secs_f64();
        let reply = script.reply(call, elapsed);
        if reply.delay_ms > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(reply.delay_ms)).await;
        }
        if reply.hang {
            std::future::pending::<()>().await;
        }
        let mut content = Vec::new();
        if let Some(text) = reply.text {
            content.push(ContentBlock::text(text));
        }
        if reply.image {
            content.push(ContentBlock::image(PIXEL_PNG_BASE64, "image/png"));
        }
        let mut result = if reply.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        result.structured_content = reply.structured;
        Ok(result)
    }
}

impl ServerHandler for ScriptedServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("ozcheck-test-mcp", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema: serde_json::Map<String, serde_json::Value> =
            serde_json::from_value(serde_json::json!({"type": "object"}))
                .expect("a literal JSON object");
        let schema = Arc::new(schema);
        let tools = self
            .tools
            .keys()
            .map(|name| Tool::new(name.clone(), "A scripted probe tool", schema.clone()))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn on_cancelled(
        &self,
        _notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        self.cancelled.fetch_add(1, Ordering::Relaxed);
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.answer(request).await.map(CallToolResponse::from)
    }
}
