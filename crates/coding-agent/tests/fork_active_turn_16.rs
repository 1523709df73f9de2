//! A fork of an in-memory session (`--no-session`) while a tool call of the current turn
//! runs (pi 0.85, #8724): the running turn is stopped before the session is replaced, so its
//! aborted tool result lands in the old session, never in the new one, and the next request
//! starts without an orphaned `toolResult`. Over RPC, ours and pi 1.6.0 (`PI_TS16`) against
//! one mock must answer the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

/// The roles of a request's messages.
fn request_roles(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .map(|m| m.iter().map(|m| m["role"].clone()).collect())
        .unwrap_or_default()
}

fn fork_run(wrapper: &Option<PathBuf>) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push_all([
        Script::text("One."),
        Script::tool_call("bash", json!({"command": "sleep 30"})),
        Script::text("Three."),
    ]);
    let env = Env::new(&server, 128_000, json!({}));
    let mut rpc = Rpc::start_program(&env, program(wrapper), &["--no-session"]);
    rpc.call("one", json!({"type": "prompt", "message": "first"}));
    rpc.event("agent_end");
    rpc.call("two", json!({"type": "prompt", "message": "second"}));
    rpc.event("tool_execution_start");
    let forks = rpc.call("forks", json!({"type": "get_fork_messages"}));
    let first = forks["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["text"] == "first")
        .unwrap_or_else(|| panic!("no fork point for the first prompt: {forks}"))
        .clone();
    let fork = rpc.call("fork", json!({"type": "fork", "entryId": first["entryId"]}));
    let after_fork = rpc.call("messages", json!({"type": "get_messages"}));
    let roles_after_fork: Vec<Value> = after_fork["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].clone())
        .collect();
    rpc.call("three", json!({"type": "prompt", "message": "third"}));
    let ended = rpc.event("agent_end");
    drop(rpc);
    let requests = server.requests();
    json!({
        "fork": [fork["success"], fork["data"]],
        "messagesAfterFork": roles_after_fork,
        "requests": requests.len(),
        "lastRequest": requests.last().map(|r| request_roles(&r.body)),
        "lastRun": ended.last().map(|e| e["messages"].as_array().map(|m| m.len())),
    })
}

#[test]
fn forking_an_in_memory_session_during_a_tool_call_starts_clean_as_16_does() {
    let runs: Vec<(&str, Value)> = pis()
        .into_iter()
        .map(|(name, wrapper)| (name, fork_run(&wrapper)))
        .collect();
    let ours = &runs[0].1;
    assert_eq!(
        ours["messagesAfterFork"],
        json!(["system"]),
        "the new session holds only its system prompt, nothing of the stopped turn: {ours:#}"
    );
    assert_eq!(
        ours["lastRequest"],
        json!(["system", "user"]),
        "no orphaned tool result in the next request: {ours:#}"
    );
    for (name, theirs) in &runs[1..] {
        assert_eq!(ours, theirs, "ours against {name}");
    }
}
