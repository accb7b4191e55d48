//! End to end over a real child process: the scripted MCP server binary on stdio, a real rmcp
//! client, real time (one poll interval, about a second).

use ozcheck_runtime::probe::observe::ToolCallEvents;
use ozcheck_runtime::probe::{McpManager, StopReason, WaitForTool};
use serde_json::json;

const SERVER: &str = env!("CARGO_BIN_EXE_ozcheck-test-mcp");

fn args(tool: &str, script: &str) -> Vec<String> {
    ["--tool", tool, "--script", script]
        .map(str::to_owned)
        .to_vec()
}

#[tokio::test]
async fn waits_on_a_tool_of_a_child_process_server() {
    let script = r#"[{"calls": 1, "text": "Pending"}, {"text": "Running"}]"#;
    let manager = McpManager::spawn(SERVER, &args("pods", script))
        .await
        .expect("spawned");
    assert_eq!(manager.tool_names(), ["pods"]);
    let tool = WaitForTool::new(&manager, ToolCallEvents::default());
    let call = json!({"probe": {"tool": "pods", "args": {"namespace": "web"}},
                      "until": {"matches": "Running"}, "poll_sec": 1, "max_wait_sec": 20});
    let result = tool.call("e2e", &call).await.expect("a result");
    assert_eq!(result.reason, StopReason::Matched);
    assert_eq!(result.samples, 2);
    assert_eq!(result.last_observation.as_deref(), Some("Running"));
    manager.close().await;
}

#[tokio::test]
async fn a_server_that_cannot_start_is_a_clear_error() {
    let Err(error) = McpManager::spawn(SERVER, &["--bogus".to_owned()]).await else {
        panic!("a server that exits at once cannot complete the handshake");
    };
    assert!(error.to_string().contains("handshake"), "{error}");
    let Err(error) = McpManager::spawn("ozcheck-no-such-server-program", &[]).await else {
        panic!("a missing program cannot be spawned");
    };
    assert!(error.to_string().contains("cannot start"), "{error}");
}
