//! `ozcheck-test-mcp`: the scripted MCP server over stdio, for end-to-end tests and scenarios.
//!
//! Usage: `ozcheck-test-mcp --tool NAME --script SCRIPT [--tool NAME --script SCRIPT]...`, where
//! SCRIPT is a script in JSON or YAML (see `ozcheck_runtime::probe::script`), for example
//! `--tool pods --script '[{"calls":"1..2","text":"Pending"},{"text":"Running"}]'`.

use std::collections::BTreeMap;
use std::process::ExitCode;

use ozcheck_runtime::probe::script::ToolScript;
use ozcheck_runtime::probe::server::ScriptedServer;
use rmcp::ServiceExt;

fn parse(args: &[String]) -> Result<BTreeMap<String, ToolScript>, String> {
    let mut tools = BTreeMap::new();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        if flag != "--tool" {
            return Err(format!("expected --tool, found `{flag}`"));
        }
        let name = rest.next().ok_or("--tool needs a name")?;
        if rest.next().map(String::as_str) != Some("--script") {
            return Err(format!("--tool {name} must be followed by --script"));
        }
        let text = rest.next().ok_or("--script needs a script")?;
        let script: ToolScript =
            yaml_serde::from_str(text).map_err(|e| format!("script of `{name}`: {e}"))?;
        tools.insert(name.clone(), script);
    }
    if tools.is_empty() {
        return Err("usage: ozcheck-test-mcp --tool NAME --script SCRIPT ...".to_owned());
    }
    Ok(tools)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tools = match parse(&args) {
        Ok(tools) => tools,
        Err(message) => {
            eprintln!("ozcheck-test-mcp: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("ozcheck-test-mcp: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(async {
        let service = ScriptedServer::new(tools)
            .serve(rmcp::transport::stdio())
            .await?;
        service.waiting().await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ozcheck-test-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
