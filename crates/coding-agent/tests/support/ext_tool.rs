//! Calls an extension's tool from a scripted model and collects what the model was told:
//! for comparing argument validation and coercion between ours and pi 1.6.0.
#![allow(dead_code)]

use std::path::PathBuf;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};

use super::rpc::Env;
use super::ts16::{program_with_host, run};

/// Runs one print prompt with the extension `source` loaded; the model calls `tool` once
/// per entry of `calls`. Returns the text of each tool result the model got back.
pub async fn tool_results(
    wrapper: &Option<PathBuf>,
    source: &str,
    tool: &str,
    calls: &[Value],
) -> Vec<String> {
    let server = MockServer::start().await.unwrap();
    for args in calls {
        server.push(Script::tool_call(tool, args.clone()));
    }
    server.push(Script::text("Done."));
    let env = Env::new(&server, 128_000, json!({}));
    let extension = env.work.join("tool-extension.ts");
    std::fs::write(&extension, source).unwrap();
    let extension = extension.display().to_string();
    let output = tokio::task::block_in_place(|| {
        run(
            &env,
            program_with_host(wrapper),
            &["-e", &extension, "-p", "Call the tool."],
        )
    });
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    let last = &requests.last().unwrap().body;
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect()
}
