//! Shared fixtures: a scripted MCP server wired to a real rmcp client over an in-memory pipe,
//! so paused tokio time drives both sides.

use std::collections::BTreeMap;

use ozcheck_runtime::probe::McpManager;
use ozcheck_runtime::probe::script::ToolScript;
use ozcheck_runtime::probe::server::ScriptedServer;
use rmcp::ServiceExt;

/// Starts a scripted server with `(name, YAML script)` tools and connects a manager to it.
pub async fn scripted(tools: &[(&str, &str)]) -> (McpManager, ScriptedServer) {
    let scripts: BTreeMap<String, ToolScript> = tools
        .iter()
        .map(|(name, yaml)| {
            (
                (*name).to_owned(),
                yaml_serde::from_str(yaml).expect("script"),
            )
        })
        .collect();
    let server = ScriptedServer::new(scripts);
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let serving = server.clone();
    tokio::spawn(async move {
        if let Ok(service) = serving.serve(server_end).await {
            let _ = service.waiting().await;
        }
    });
    let manager = McpManager::connect(client_end).await.expect("handshake");
    (manager, server)
}
