//! A longer conversation, step by step, through pi-acp driving pi 1.6.0 (how pi users reach
//! editors today) and through ours natively: an edit, a request that fails once and is
//! retried, a command an extension asks about, a command cancelled while it runs, and the
//! session loaded again in a new agent. Each step's updates must agree by kind and the
//! answers' texts must be the same, but for what `core` leaves out (an adapter's own
//! notices, each with its reason, in support/acp.rs). Skipped without node, the SDK or pi
//! 1.6.0, unless `PI_TEST_REQUIRE_PI_ACP=1` / `PI_TEST_REQUIRE_TS16=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::acp::*;

fn script(server: &MockServer) {
    server.push(Script::tool_call("read", json!({"path": "a.txt"})));
    server.push(Script::tool_call(
        "edit",
        json!({"path": "a.txt", "edits": [{"oldText": "two", "newText": "TWO"}]}),
    ));
    server.push(Script::text("Line two is upper case."));
    server.push(Script::http_error(503));
    server.push(Script::text("Recovered after a retry."));
    server.push(Script::tool_call("bash", json!({"command": "echo gated"})));
    server.push(Script::text("The command ran."));
    server.push(Script::tool_call(
        "bash",
        json!({"command": "echo $((6*7))-waiting; sleep 30"}),
    ));
}

/// A fresh env whose retries wait 100 ms.
fn env(server: &MockServer) -> support::rpc::Env {
    let env = fresh_env(server);
    let settings = env.agent.join("settings.json");
    let mut all: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    all["retry"] = json!({"enabled": true, "maxRetries": 3, "baseDelayMs": 100});
    std::fs::write(&settings, all.to_string()).unwrap();
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_longer_conversation_goes_as_through_pi_acp_in_front_of_pi_16() {
    if sdk_dir().is_none() {
        return;
    }
    let Some(wrapper) = support::ts16::ts16() else {
        return;
    };
    let steps = json!([
        {"op": "initialize"},
        {"op": "new"},
        {"op": "prompt", "text": "upper-case line two"},
        {"op": "prompt", "text": "say something"},
        {"op": "prompt", "text": "run the command"},
        // Cancelled once the command prints (after the extension asked about it; the
        // command's own text, sent before, does not hold "42-").
        {"op": "prompt", "text": "now wait", "cancelOn": "tool_call_update", "cancelOnText": "42-waiting"},
        {"op": "load"},
    ]);
    let permissions = json!(["Yes", "Yes"]);
    let server = MockServer::start().await.unwrap();
    script(&server);
    let ours_env = env(&server);
    let ours = run_in(&ours_env, steps.clone(), permissions.clone());
    script(&server);
    // pi-acp's startup notice comes after its answer to session/new: waited for there.
    let mut their_steps = steps;
    their_steps[1]["awaitStartup"] = json!(true);
    let theirs = run_pi_acp_in(&env(&server), &wrapper, their_steps, permissions);
    for step in 3..=7 {
        assert_eq!(
            core(&ours, step),
            core(&theirs, step),
            "step {step}\nours:\n{ours:#?}\npi-acp + pi 1.6.0:\n{theirs:#?}"
        );
    }
    // The prompts' answers (a load's answer holds each agent's own modes and options).
    for step in 3..=6 {
        assert_eq!(
            result(&ours, step).get("result"),
            result(&theirs, step).get("result"),
            "step {step}"
        );
    }
    assert_eq!(result(&ours, 6)["result"]["stopReason"], "cancelled");
    assert_eq!(
        core(&ours, 4).1,
        "Retrying (attempt 1/3, waiting 1s)...Recovered after a retry.Retry finished, resuming."
    );
    // Both asked before each command.
    let asked = |lines: &[Value]| {
        lines
            .iter()
            .filter(|l| l.get("permission").is_some())
            .count()
    };
    assert_eq!(asked(&ours), 2);
    assert_eq!(asked(&ours), asked(&theirs));
}
