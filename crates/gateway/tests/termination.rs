//! The five termination conditions of a run, each produced and reported as
//! `terminationReason` on `agent_end` (and in the `wait` result of `session.prompt`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use serde_json::json;

use mock_llm::{Fault, Script};
use pi_gateway::events::Limits;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_without_tool_calls_ends_with_no_tool_calls() {
    let env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock
        .push(Script::tool_call("bash", json!({"command": "echo hi"})));
    env.mock.push(Script::text("listed"));
    let done = a
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "look around", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(done["terminationReason"], "no_tool_calls");
    let (end, frames) = until_agent_end(&mut a, &id).await;
    assert_eq!(end["terminationReason"], "no_tool_calls");
    assert_eq!(end["totalTurns"], 2);
    let turn_ends: Vec<_> = frames
        .iter()
        .filter(|f| is_event(f, "turn_end", &id))
        .map(|f| f["payload"].clone())
        .collect();
    assert_eq!(turn_ends.len(), 2);
    assert_eq!(turn_ends[0]["hasToolCalls"], true);
    assert_eq!(turn_ends[0]["shouldContinue"], true);
    assert_eq!(turn_ends[1]["hasToolCalls"], false);
    assert_eq!(turn_ends[1]["terminationReason"], "no_tool_calls");
    assert!(
        frames
            .iter()
            .any(|f| is_event(f, "tool_execution_end", &id) && f["payload"]["success"] == true)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_silent_past_the_idle_limit_ends_with_idle_timeout() {
    let limits = Limits {
        hard: Duration::from_secs(600),
        idle: Duration::from_millis(300),
    };
    let env = Env::start(limits).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock.push(
        Script::text("a reply that stalls")
            .with_chunk_size(4)
            .with_fault(Fault::stall(2, 20_000)),
    );
    let done = a
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "go", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(done["terminationReason"], "idle_timeout_120s");
    let (end, _) = until_agent_end(&mut a, &id).await;
    assert_eq!(end["terminationReason"], "idle_timeout_120s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_past_the_hard_limit_ends_with_timeout_48h() {
    // The model keeps streaming (never idle) but the run outlives the hard limit while a
    // tool runs.
    let limits = Limits {
        hard: Duration::from_millis(500),
        idle: Duration::from_secs(60),
    };
    let env = Env::start(limits).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock
        .push(Script::tool_call("bash", json!({"command": "sleep 20"})));
    let done = a
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "wait a while", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(done["terminationReason"], "timeout_48h");
    let (end, frames) = until_agent_end(&mut a, &id).await;
    assert_eq!(end["terminationReason"], "timeout_48h");
    assert!(
        frames
            .iter()
            .any(|f| is_event(f, "tool_execution_end", &id) && f["payload"]["success"] == false)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_ends_with_abort_signal() {
    let env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock.push(
        Script::text("never finishes")
            .with_chunk_size(4)
            .with_fault(Fault::stall(2, 20_000)),
    );
    a.call("session.prompt", json!({"sessionId": id, "text": "go"}))
        .await
        .unwrap();
    collect_until(&mut a, |f| is_event(f, "text_delta", &id)).await;
    a.call("session.interrupt", json!({"sessionId": id}))
        .await
        .unwrap();
    let (end, frames) = until_agent_end(&mut a, &id).await;
    assert_eq!(end["terminationReason"], "abort_signal");
    let message_end = frames
        .iter()
        .rfind(|f| is_event(f, "message_end", &id) && f["payload"]["role"] == "assistant")
        .unwrap();
    assert_eq!(message_end["payload"]["stopReason"], "aborted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_shutting_down_ends_runs_with_gateway_disconnected() {
    let mut env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock.push(
        Script::text("never finishes")
            .with_chunk_size(4)
            .with_fault(Fault::stall(2, 20_000)),
    );
    a.call("session.prompt", json!({"sessionId": id, "text": "go"}))
        .await
        .unwrap();
    collect_until(&mut a, |f| is_event(f, "text_delta", &id)).await;
    let handle = env.gateway.take().unwrap();
    let shutdown = tokio::spawn(handle.shutdown());
    let (end, _) = until_agent_end(&mut a, &id).await;
    assert_eq!(end["terminationReason"], "gateway_disconnected");
    shutdown.await.unwrap();
    // The session file keeps the run up to the disconnect.
    let files: Vec<_> = walk(&env.agent.join("sessions"));
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("\"go\""), "{text}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found
}
