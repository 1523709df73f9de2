//! A blocked extension `tool_call` may set `terminate` (pi 1.6.0): when every result of the
//! batch terminates, the run ends without asking the model again; a batch with one
//! non-terminating result, or `terminate` on a call that is not blocked, goes on as before.
//! One RPC session through ours and through 1.6.0 (`PI_TS16`); how many requests the model
//! got after each prompt and the tool results it saw must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{Item, MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ts16, ts16_pi};

/// Blocks `bash` commands naming `terminate` (terminating) or `block` (not terminating);
/// answers `terminate` without blocking for `run-anyway`.
const EXTENSION: &str = r#"
export default function (pi) {
  pi.on("tool_call", (event) => {
    const command = String(event.input.command ?? "");
    if (command.includes("terminate")) return { block: true, reason: "stopped: " + command, terminate: true };
    if (command.includes("block")) return { block: true, reason: "blocked: " + command };
    if (command.includes("run-anyway")) return { terminate: true };
    return undefined;
  });
}
"#;

fn bash(command: &str) -> Item {
    Item::tool_call("bash", json!({"command": command}))
}

/// The model's request count after each prompt, and the tool results of its last request.
async fn session(program: Command, host: Option<PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::new(vec![bash("echo terminate one")]));
    server.push(Script::new(vec![
        bash("echo terminate two"),
        bash("echo block two"),
    ]));
    server.push(Script::text("after the blocked batch"));
    server.push(Script::new(vec![bash("echo run-anyway")]));
    server.push(Script::text("after run-anyway"));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("terminate-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let mut program = program;
    if let Some(host) = host {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let counts = {
        let server = server.clone();
        tokio::task::spawn_blocking(move || {
            let mut rpc = Rpc::start_program(&env, program, &["-e", ext.to_str().unwrap()]);
            let mut counts = Vec::new();
            for (id, prompt) in [("p1", "one"), ("p2", "two"), ("p3", "three")] {
                let answer = rpc.call(id, json!({"type": "prompt", "message": prompt}));
                assert_eq!(answer["success"], true, "{answer:#?}");
                rpc.event("agent_settled");
                counts.push(server.requests().len());
            }
            rpc.finish();
            drop(env);
            counts
        })
        .await
        .unwrap()
    };
    let requests = server.requests();
    let tool_results: Vec<Vec<Value>> = requests
        .iter()
        .map(|r| {
            r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].clone())
                .collect()
        })
        .collect();
    json!({"requestsAfterEachPrompt": counts, "toolResultsPerRequest": tool_results})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocked_tool_calls_terminate_as_in_16() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let their = match ts16() {
        Some(wrapper) => Some(session(ts16_pi(&wrapper), None).await),
        None => None,
    };
    let our = session(Command::new(env!("CARGO_BIN_EXE_pi")), Some(host)).await;
    // One request for the terminating call; the mixed batch and run-anyway ask again.
    assert_eq!(our["requestsAfterEachPrompt"], json!([1, 3, 5]), "{our:#}");
    if let Some(their) = their {
        assert_eq!(our, their);
    }
}
