//! The RPC protocol against pi 1.6.0 itself: the command session of the 1.5.2 trace
//! (state, messages, stats, models, commands, settings, bash, entries, tree, model and
//! thinking changes, compaction, export, clone, fork, a new session, an unknown command
//! and a line that is not JSON; a session name with line breaks) runs through ours and through pi 1.6.0 (`PI_TS16`) on the
//! same mock. Each response must have the same command, success, error text and data shape
//! (keys and array lengths; scalars by type), and the events between two responses the same
//! types in the same order.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, shape};
use support::ts16::{ours, ts16, ts16_pi};

/// Leaves out pi 1.6.0's `docs` prompt section (where pi's own documentation is): our
/// prompt, worded by us, points to no pi documentation, so it has no such section. The
/// other section names and the tools, in order, must be the same.
fn without_docs_section(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("role").and_then(Value::as_str) == Some("system")
                && let Some(Value::Object(sections)) = map.get_mut("sections")
            {
                sections.shift_remove("docs");
            }
            map.values_mut().for_each(without_docs_section);
        }
        Value::Array(items) => items.iter_mut().for_each(without_docs_section),
        _ => {}
    }
}

/// One step's outcome: the response as compared, and the event types before it.
fn outcome(response: &Value, events: &[Value]) -> Value {
    let mut response = response.clone();
    without_docs_section(&mut response);
    let response = &response;
    let mut compared = json!({
        "command": response["command"],
        "success": response["success"],
        "data": shape(&response["data"]),
    });
    if let Some(error) = response["error"].as_str() {
        compared["error"] = error.into();
    }
    // Values that must be equal too, not only their type.
    for pointer in [
        "/data/sessionName",
        "/data/thinkingLevel",
        "/data/messageCount",
    ] {
        if let Some(value) = response.pointer(pointer) {
            compared[pointer] = value.clone();
        }
    }
    let types: Vec<&str> = events
        .iter()
        .filter_map(|l| l["type"].as_str())
        .filter(|t| *t != "response" && *t != "message_update")
        .collect();
    compared["events"] = json!(types);
    compared
}

fn env(server: &MockServer) -> Env {
    let env = Env::new(server, 128_000, json!({"steeringMode": "all"}));
    let models = json!({"providers": {"mock": {
    "baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "mock-key",
    "models": [
        {"id": "mock-model", "name": "Mock Model", "reasoning": true,
         "contextWindow": 128000, "maxTokens": 16384},
        {"id": "mock-other", "name": "Mock Other", "contextWindow": 64000, "maxTokens": 8192}
    ]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(env.work.join("hello.txt"), "Hello from the RPC test!\n").unwrap();
    env
}

/// Sends `command`, waits for its response and records the step's outcome.
fn step(rpc: &mut Rpc, steps: &mut Vec<(String, Value)>, id: &str, command: Value) -> Value {
    let before = rpc.seen.len();
    let response = rpc.call(id, command);
    let events = rpc.seen[before..rpc.seen.len() - 1].to_vec();
    steps.push((id.to_owned(), outcome(&response, &events)));
    response
}

/// Runs the session through `program`; returns each step's outcome by id, in order.
async fn session(program: Command) -> Vec<(String, Value)> {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call("read", json!({"path": "hello.txt"})));
    server.push(Script::text("done: Hello from the RPC test"));
    let env = env(&server);
    tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(
            &env,
            program,
            &["--model", "mock/mock-model", "--thinking", "off"],
        );
        let mut steps = Vec::new();
        step(&mut rpc, &mut steps, "s1", json!({"type": "get_state"}));
        // The prompt's response and the run's events, up to `agent_settled`, as one step:
        // where the response falls among the first events is a matter of timing.
        let before = rpc.seen.len();
        rpc.send(json!({"id": "p1", "type": "prompt", "message": "read hello.txt"}));
        rpc.event("agent_settled");
        let response = match rpc.seen[before..].iter().find(|l| l["id"] == "p1") {
            Some(response) => response.clone(),
            None => rpc.response("p1"),
        };
        let run = rpc.seen[before..].to_vec();
        steps.push(("p1".into(), outcome(&response, &run)));
        for (id, command) in [
            ("q1", json!({"type": "get_state"})),
            ("q2", json!({"type": "get_messages"})),
            ("q3", json!({"type": "get_session_stats"})),
            ("q4", json!({"type": "get_last_assistant_text"})),
            ("q5", json!({"type": "get_fork_messages"})),
            ("q6", json!({"type": "get_available_models"})),
            (
                "q8",
                json!({"type": "set_session_name", "name": "rpc 16\r\n\nsession\n"}),
            ),
            ("q9", json!({"type": "set_steering_mode", "mode": "all"})),
            (
                "q10",
                json!({"type": "set_follow_up_mode", "mode": "one-at-a-time"}),
            ),
            ("q11", json!({"type": "set_thinking_level", "level": "low"})),
            ("q12", json!({"type": "cycle_thinking_level"})),
            ("q13", json!({"type": "cycle_model"})),
            (
                "q14",
                json!({"type": "set_auto_compaction", "enabled": true}),
            ),
            ("q15", json!({"type": "set_auto_retry", "enabled": true})),
            (
                "q16",
                json!({"type": "bash", "command": "echo from-rpc-bash"}),
            ),
            ("q17", json!({"type": "get_state"})),
            ("b1", json!({"type": "get_available_thinking_levels"})),
            ("b2", json!({"type": "get_entries"})),
            (
                "b4",
                json!({"type": "get_entries", "fromId": "no-such-entry"}),
            ),
            ("b5", json!({"type": "get_tree"})),
            (
                "b9",
                json!({"type": "set_model", "provider": "mock", "modelId": "mock-model"}),
            ),
            (
                "b10",
                json!({"type": "set_model", "provider": "nope", "modelId": "missing"}),
            ),
            ("b12", json!({"type": "compact"})),
            ("b13", json!({"type": "get_session_stats"})),
            ("u1", json!({"type": "no_such_command"})),
        ] {
            step(&mut rpc, &mut steps, id, command);
        }
        rpc.send_raw("{this is not json");
        let before = rpc.seen.len();
        let parse = rpc.until("parse error", |l| l["command"] == "parse");
        steps.push((
            "parse".into(),
            outcome(parse.last().unwrap(), &rpc.seen[before..rpc.seen.len() - 1]),
        ));
        let forks = step(
            &mut rpc,
            &mut steps,
            "b24",
            json!({"type": "get_fork_messages"}),
        );
        let first_user = forks["data"]["messages"][0]["entryId"].clone();
        step(&mut rpc, &mut steps, "b26", json!({"type": "clone"}));
        step(&mut rpc, &mut steps, "b27", json!({"type": "get_state"}));
        step(
            &mut rpc,
            &mut steps,
            "b29",
            json!({"type": "fork", "entryId": first_user}),
        );
        step(&mut rpc, &mut steps, "b30", json!({"type": "get_state"}));
        step(&mut rpc, &mut steps, "n1", json!({"type": "new_session"}));
        step(&mut rpc, &mut steps, "s3", json!({"type": "get_state"}));
        step(&mut rpc, &mut steps, "m3", json!({"type": "get_messages"}));
        rpc.finish();
        drop(env);
        steps
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rpc_session_has_pi_16s_responses_and_events() {
    let Some(wrapper) = ts16() else {
        return;
    };
    let theirs = session(ts16_pi(&wrapper)).await;
    let ours = session(ours()).await;
    assert_eq!(
        ours.iter().map(|(id, _)| id).collect::<Vec<_>>(),
        theirs.iter().map(|(id, _)| id).collect::<Vec<_>>()
    );
    let differences: Vec<String> = ours
        .iter()
        .zip(&theirs)
        .filter(|((_, a), (_, b))| a != b)
        .map(|((id, a), (_, b))| format!("{id}:\n ours   {a}\n pi 1.6 {b}"))
        .collect();
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
