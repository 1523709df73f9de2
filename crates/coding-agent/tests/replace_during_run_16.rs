//! Replacing the session while a turn is still running (pi 0.83.0): the outgoing turn is
//! aborted and persisted whole, its running tool call answered, so the old file has no
//! dangling tool call. An RPC `new_session` sent while `bash` runs, through ours and pi
//! 1.6.0 (`PI_TS16`); the old file's entries must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{pis, program};

/// How the running session is left.
#[derive(Clone, Copy)]
enum Leave {
    /// RPC `new_session`.
    NewSession,
    /// stdin closed: pi shuts down and disposes of the session.
    CloseStdin,
}

/// The entries of the session that was left: each message's role, a tool result's error
/// flag and text, and an assistant's stop reason.
async fn outgoing_entries(wrapper: &Option<PathBuf>, leave: Leave) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call(
        "bash",
        json!({"command": "echo started; sleep 30"}),
    ));
    server.push(Script::text("Never asked for."));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let program = program(wrapper);
    tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, program, &[]);
        rpc.call("p", json!({"type": "prompt", "message": "Wait a while."}));
        // The command runs (its first output arrived) before the session is replaced.
        rpc.until("the command's output", |l| {
            l["type"] == "tool_execution_update"
                && l["partialResult"]["content"]
                    .to_string()
                    .contains("started")
        });
        match leave {
            Leave::NewSession => {
                let answer = rpc.call("n", json!({"type": "new_session"}));
                assert_eq!(answer["success"], true, "{answer}");
                rpc.finish();
            }
            Leave::CloseStdin => {
                let code = rpc.finish();
                assert_eq!(code, Some(0));
            }
        }
        let old = env
            .session_files()
            .into_iter()
            .find(|f| {
                std::fs::read_to_string(f)
                    .unwrap()
                    .contains("echo started; sleep 30")
            })
            .unwrap();
        let entries: Vec<Value> = read_jsonl(&old)
            .into_iter()
            .filter(|e| e["type"] == "message" && e["message"]["role"] != "system")
            .map(|e| {
                let m = &e["message"];
                let text: String = m["content"]
                    .as_array()
                    .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect())
                    .unwrap_or_default();
                json!({"role": m["role"], "stopReason": m["stopReason"],
                       "isError": m["isError"],
                       "text": if m["role"] == "toolResult" { json!(text) } else { Value::Null }})
            })
            .collect();
        json!({"entries": entries, "requests": server.requests().len()})
    })
    .await
    .unwrap()
}

async fn left_during_a_tool_call(leave: Leave) {
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, outgoing_entries(&wrapper, leave).await));
    }
    let ours = &seen[0].1;
    let roles: Vec<&Value> = ours["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["role"])
        .collect();
    // The call has its result (the command's own abort text): nothing dangles.
    assert_eq!(
        roles[..3],
        [&json!("user"), &json!("assistant"), &json!("toolResult")],
        "{ours:#}"
    );
    assert_eq!(ours["entries"][2]["isError"], true, "{ours:#}");
    assert_eq!(
        ours["entries"][2]["text"], "started\n\n\nCommand aborted",
        "{ours:#}"
    );
    assert_eq!(ours["requests"], 1, "{ours:#}");
    for (name, theirs) in &seen[1..] {
        assert_eq!(theirs, ours, "{name} differs from ours");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_session_during_a_tool_call_persists_the_aborted_turn() {
    left_during_a_tool_call(Leave::NewSession).await;
}

/// pi 0.77.0 and 1.5.1: disposing of the session (here at shutdown) aborts the running
/// command and records its result before anything is torn down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutting_down_during_a_tool_call_persists_the_aborted_turn() {
    left_during_a_tool_call(Leave::CloseStdin).await;
}
