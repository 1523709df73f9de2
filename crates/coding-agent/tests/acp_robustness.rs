//! `pi --mode acp` spoken to line by line: bad requests get errors and pi keeps serving; a
//! client gone mid-prompt ends pi cleanly with the session file whole.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::acp::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_errors_and_pi_keeps_serving() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("still here"));
    let env = fresh_env(&server);
    let mut pi = Raw::start(&env);
    pi.send(&request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    ));
    assert_eq!(pi.answer(1)["result"]["protocolVersion"], 1);
    // Not JSON, an unknown method, a prompt for no session, a relative cwd.
    pi.send("{not json");
    pi.send(&request(2, "session/fly", json!({})));
    assert_eq!(pi.answer(2)["error"]["code"], -32601);
    pi.send(&request(
        3,
        "session/prompt",
        json!({"sessionId": "nope", "prompt": []}),
    ));
    let unknown = pi.answer(3);
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    pi.send(&request(
        4,
        "session/new",
        json!({"cwd": "relative", "mcpServers": []}),
    ));
    assert_eq!(pi.answer(4)["error"]["code"], -32602);
    let cwd = env.work.display().to_string();
    pi.send(&request(
        5,
        "session/new",
        json!({"cwd": cwd, "mcpServers": []}),
    ));
    let id = pi.answer(5)["result"]["sessionId"].clone();
    pi.send(&request(
        6,
        "session/prompt",
        json!({"sessionId": id, "prompt": [{"type": "text", "text": "hi"}]}),
    ));
    assert_eq!(pi.answer(6)["result"]["stopReason"], "end_turn");
    drop(pi.stdin.take());
    assert!(pi.child.wait().unwrap().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_gone_mid_prompt_ends_pi_and_leaves_the_session_readable() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call(
        "bash",
        json!({"command": "echo started; sleep 60"}),
    ));
    let env = fresh_env(&server);
    let mut pi = Raw::start(&env);
    pi.send(&request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    ));
    pi.answer(1);
    let cwd = env.work.display().to_string();
    pi.send(&request(
        2,
        "session/new",
        json!({"cwd": cwd, "mcpServers": []}),
    ));
    let id = pi.answer(2)["result"]["sessionId"].clone();
    pi.send(&request(
        3,
        "session/prompt",
        json!({"sessionId": id, "prompt": [{"type": "text", "text": "go"}]}),
    ));
    // The gate's question comes as a permission request; the client dies instead of
    // answering, its pipes closed.
    loop {
        let line = pi
            .lines
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("a permission request");
        if line["method"] == "session/request_permission" {
            break;
        }
    }
    drop(pi.stdin.take());
    drop(pi.lines);
    let status = pi.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    // Every line of the session file is whole JSON.
    for file in env.session_files() {
        for line in std::fs::read_to_string(file).unwrap().lines() {
            serde_json::from_str::<Value>(line).unwrap();
        }
    }
}
