//! The same `mcp.json` in the TypeScript pi 1.5.2 and in ours: the same tools declared to
//! the model (names, descriptions, schemas) and the same tool results (content, details,
//! error flag) for calls the model makes to `@modelcontextprotocol/server-everything`.
//! Needs `PI_TS15` (a wrapper running 1.5.2; `scripts/ts-compat.sh` sets it) and the npm
//! servers (`scripts/install-mcp-servers.sh`); without them it reports that it skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;

fn ts15() -> Option<PathBuf> {
    let wrapper = std::env::var_os("PI_TS15")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    if wrapper.is_none() {
        eprintln!("PI_TS15 is not set: skipped (run scripts/ts-compat.sh)");
    }
    wrapper
}

fn everything_script() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../target/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    if !path.exists() {
        eprintln!("the MCP servers are not installed: skipped (scripts/install-mcp-servers.sh)");
    }
    path.exists().then_some(path)
}

/// The calls the model makes, each answered by the server.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("mcp__everything__echo", json!({"message": "side by side"})),
        ("mcp__everything__get_sum", json!({"a": 19, "b": 23})),
        ("mcp__everything__get_tiny_image", json!({})),
        (
            "mcp__everything__get_structured_content",
            json!({"location": "New York"}),
        ),
        ("mcp__everything__get_resource_links", json!({"count": 2})),
        (
            "mcp__everything__get_annotated_message",
            json!({"messageType": "error", "includeImage": false}),
        ),
        ("list_mcp_resources", json!({"server": "everything"})),
        ("list_mcp_resource_templates", json!({})),
    ]
}

/// Runs one pi in JSON mode; returns the first request's tools and every tool result.
fn run(program: &Path, server: &MockServer, script: &Path) -> (Vec<Value>, Vec<Value>) {
    let env = Env::new(server, 128_000, json!({}));
    std::fs::write(
        env.agent.join("mcp.json"),
        json!({"mcpServers": {"everything": {
            "command": "node", "args": [script.display().to_string(), "stdio"], "exposure": "direct"
        }}})
        .to_string(),
    )
    .unwrap();
    let before = server.requests().len();
    for (name, args) in calls() {
        server.push(Script::tool_call(name, args));
    }
    server.push(Script::text("done"));
    let out = Command::new(program)
        .args(["--mode", "json", "-p", "call the tools"])
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("PI_OFFLINE", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} failed: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let tools = server.requests()[before].body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let results = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_execution_end")
        .map(|e| json!({"tool": e["toolName"], "isError": e["isError"], "result": e["result"]}))
        .collect();
    (tools, results)
}

/// A result with JSON texts (resource listings) parsed: the keys of a listed resource come
/// in the server's order in the TypeScript pi and in the MCP schema's in ours (rmcp types
/// them), which is the same JSON.
fn json_texts(result: &Value) -> Value {
    let mut result = result.clone();
    if let Some(content) = result["result"]["content"].as_array_mut() {
        for block in content {
            if let Some(parsed) = block["text"]
                .as_str()
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
            {
                block["text"] = parsed;
            }
        }
    }
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_mcp_json_gives_the_same_tools_and_results() {
    let (Some(ts), Some(script)) = (ts15(), everything_script()) else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let (their_tools, their_results) = run(&ts, &server, &script);
    let (our_tools, our_results) = run(Path::new(env!("CARGO_BIN_EXE_pi")), &server, &script);
    let names = |tools: &[Value]| -> Vec<String> {
        tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(names(&our_tools), names(&their_tools));
    // Built-in tools are described in our own words; MCP tools in the server's.
    for (ours, theirs) in our_tools.iter().zip(&their_tools) {
        let name = theirs["function"]["name"].as_str().unwrap_or_default();
        if pi_mcp::naming::is_mcp_tool(name) {
            // `strict: false` is the openai-completions provider's (as pi 0.73.1 sends it;
            // 1.5.2 leaves it out), not MCP's.
            let mut ours = ours.clone();
            if let Some(function) = ours["function"].as_object_mut() {
                function.remove("strict");
            }
            assert_eq!(&ours, theirs, "the declaration of {name}");
        }
    }
    assert_eq!(our_results.len(), calls().len());
    for (ours, theirs) in our_results.iter().zip(&their_results) {
        assert_eq!(json_texts(ours), json_texts(theirs));
    }
}
