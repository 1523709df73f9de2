//! The RPC protocol of `pi --mode rpc`: the reference RPC session replayed (same response
//! shapes and event order as the TypeScript pi), and every other command with its effects.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use mock_llm::{Fault, MockServer, Script};
use support::rpc::{Env, Rpc, of_type, read_jsonl, shape};

/// Copies of the reference traces (`../shared/reference/traces`).
const REFERENCE: &str = "tests/fixtures";

/// `value` without the message and usage fields pi-ai 1.6 added, which 0.73.1 does not
/// write (tests/message_fields_16.rs compares them with pi 1.6.0).
fn without_16_fields(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if matches!(
                map.get("role").and_then(Value::as_str),
                Some("assistant" | "toolResult")
            ) {
                for key in ["rawStopReason", "durationMs", "thinkingLevel"] {
                    map.remove(key);
                }
            }
            if map.contains_key("totalTokens") {
                map.remove("reasoning");
                map.remove("cacheWrite1h");
            }
            if map.contains_key("total") && map.contains_key("cacheWrite") {
                map.remove("totalFromProvider");
            }
            map.values_mut().for_each(without_16_fields);
        }
        Value::Array(items) => items.iter_mut().for_each(without_16_fields),
        _ => {}
    }
}

fn reference_output() -> Vec<Value> {
    trace("pi-ts-rpc.jsonl")
}

fn trace(name: &str) -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(REFERENCE)
        .join(name);
    read_jsonl(&path)
}

/// Reference responses of the TypeScript pi 0.73.1 by id (and by command for id-less ones).
fn reference_responses() -> BTreeMap<String, Value> {
    responses_of(reference_output())
}

/// The same for pi 1.5.2, whose shapes we speak where they changed.
fn reference_responses_15() -> BTreeMap<String, Value> {
    responses_of(trace("pi-1.5-rpc.jsonl"))
}

fn responses_of(lines: Vec<Value>) -> BTreeMap<String, Value> {
    lines
        .into_iter()
        .filter(|l| l["type"] == "response")
        .map(|l| {
            let key = l["id"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| l["command"].as_str().unwrap().to_owned());
            (key, l)
        })
        .collect()
}

/// Event types between two reference lines (message updates left out, and the persisted
/// system message's events, which 0.73.1 does not have).
fn event_types(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["type"] != "response" && l["type"] != "message_update")
        .filter(|l| l["message"]["role"] != "system")
        .map(|l| l["type"].as_str().unwrap().to_owned())
        .collect()
}

fn single_model_env(server: &MockServer) -> Env {
    let env = Env::new(server, 128_000, json!({"steeringMode": "all"}));
    let models = json!({"providers": {"mock": {
        "baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(
        env.work.join("hello.txt"),
        "Hello from the anchor test file!\nSecond line.\n",
    )
    .unwrap();
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_rpc_session_replays_with_the_same_shapes() {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::tool_call("read", json!({"path": "hello.txt"})),
        Script::text("done: Hello from the ancho"),
        Script::text("tick 0. tick 1. tick 2. tick 3. tick 4.")
            .with_chunk_size(8)
            .with_fault(Fault::stall(2, 60_000)),
    ]);
    let env = single_model_env(&server);
    let reference = reference_responses();
    let reference_15 = reference_responses_15();
    let mut rpc = Rpc::start(&env, &[]);
    let same_shape = |ours: &Value, id: &str| {
        let theirs = &reference[id];
        // 0.73.1 lists no persisted system message, and has none of pi 1.6's fields.
        let mut ours = ours.clone();
        without_16_fields(&mut ours);
        if let Some(messages) = ours
            .pointer_mut("/data/messages")
            .and_then(Value::as_array_mut)
        {
            messages.retain(|m| m["role"] != "system");
        }
        // 0.73.1 had no built-in extensions; pi 1.6.0 lists their commands (here `mcp`).
        if let Some(commands) = ours
            .pointer_mut("/data/commands")
            .and_then(Value::as_array_mut)
        {
            commands.retain(|c| c["sourceInfo"]["source"] != "builtin");
        }
        let ours = &ours;
        assert_eq!(
            shape(ours),
            shape(theirs),
            "{id}: ours {ours} theirs {theirs}"
        );
    };

    let s1 = rpc.call("s1", json!({"type": "get_state"}));
    same_shape(&s1, "s1");
    let mut model = reference["s1"]["data"]["model"].clone();
    model["baseUrl"] = server.openai_base_url().into();
    assert_eq!(s1["data"]["model"], model);

    rpc.send(json!({"id": "p1", "type": "prompt", "message": "read hello.txt"}));
    let p1 = rpc.until("agent_end", |l| l["type"] == "agent_end");
    assert_eq!(p1[0], reference_15["p1"]);
    let theirs = reference_output();
    let start = theirs.iter().position(|l| l["id"] == "p1").unwrap();
    let end = theirs.iter().position(|l| l["id"] == "q1").unwrap();
    assert_eq!(event_types(&p1), event_types(&theirs[start..end]));
    let tool_end = of_type(&p1, "tool_execution_end");
    assert_eq!(
        tool_end[0]["result"]["content"][0]["text"],
        "Hello from the anchor test file!\nSecond line.\n"
    );

    for (id, command) in [
        ("q1", json!({"type": "get_state"})),
        ("q2", json!({"type": "get_messages"})),
        ("q3", json!({"type": "get_session_stats"})),
        ("q4", json!({"type": "get_last_assistant_text"})),
        ("q5", json!({"type": "get_fork_messages"})),
        ("q6", json!({"type": "get_available_models"})),
        ("q7", json!({"type": "get_commands"})),
    ] {
        let response = rpc.call(id, command);
        same_shape(&response, id);
    }
    let q8 = rpc.call(
        "q8",
        json!({"type": "set_session_name", "name": "anchor rpc session"}),
    );
    assert_eq!(q8, reference["q8"]);
    let before_q8 = rpc.seen.iter().rev().nth(1).unwrap().clone();
    assert_eq!(
        before_q8,
        json!({"type": "session_info_changed", "name": "anchor rpc session"})
    );
    for (id, command) in [
        ("q9", json!({"type": "set_steering_mode", "mode": "all"})),
        (
            "q10",
            json!({"type": "set_follow_up_mode", "mode": "one-at-a-time"}),
        ),
        ("q11", json!({"type": "set_thinking_level", "level": "off"})),
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
    ] {
        let response = rpc.call(id, command);
        assert_eq!(response, reference[id], "{id}");
    }
    let q17 = rpc.call("q17", json!({"type": "get_state"}));
    same_shape(&q17, "q17");
    assert_eq!(q17["data"]["messageCount"], 6); // pi 1.5.2 counts its system message too
    assert_eq!(q17["data"]["sessionName"], "anchor rpc session");

    let p2 = rpc.call(
        "p2",
        json!({"type": "prompt", "message": "please answer slow"}),
    );
    assert_eq!(p2, reference_15["p2"]);
    rpc.until("streamed text", |l| {
        l["type"] == "message_update" && l["assistantMessageEvent"]["type"] == "text_delta"
    });
    let p3 = rpc.call(
        "p3",
        json!({"type": "prompt", "message": "interrupt without behavior"}),
    );
    assert_eq!(p3, reference["p3"]);
    rpc.send(json!({"id": "f1", "type": "follow_up", "message": "follow-up after slow"}));
    let f1 = rpc.until("f1", |l| l["id"] == "f1");
    assert_eq!(
        of_type(&f1, "queue_update")[0],
        &json!({"type": "queue_update", "steering": [], "followUp": ["follow-up after slow"]})
    );
    assert_eq!(f1.last().unwrap(), &reference_15["f1"]);
    let st1 = rpc.call("st1", json!({"type": "get_state"}));
    assert_eq!(st1["data"]["isStreaming"], true);
    assert_eq!(st1["data"]["pendingMessageCount"], 1);

    rpc.send(json!({"id": "a1", "type": "abort"}));
    let a1 = rpc.until("a1", |l| l["id"] == "a1");
    assert_eq!(
        event_types(&a1),
        ["message_end", "turn_end", "agent_end", "agent_settled"],
        "the abort response comes after agent_settled"
    );
    assert_eq!(of_type(&a1, "agent_end")[0]["willRetry"], false);
    assert_eq!(
        of_type(&a1, "agent_settled")[0],
        &json!({"type": "agent_settled", "aborted": true})
    );
    let aborted = &of_type(&a1, "message_end")[0]["message"];
    assert_eq!(aborted["stopReason"], "aborted");
    assert_eq!(aborted["errorMessage"], "Request was aborted");
    assert!(
        aborted["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("tick 0")
    );
    assert_eq!(a1.last().unwrap(), &reference["a1"]);
    let s2 = rpc.call("s2", json!({"type": "get_state"}));
    same_shape(&s2, "s2");
    assert_eq!(
        s2["data"]["pendingMessageCount"], 1,
        "the follow-up stays queued"
    );
    let m2 = rpc.call("m2", json!({"type": "get_messages"}));
    assert_eq!(m2["data"]["messages"].as_array().unwrap().len(), 8);

    rpc.send(json!({"id": "u1", "type": "no_such_command"}));
    let u1 = rpc.until("unknown", |l| l["command"] == "no_such_command");
    assert_eq!(u1.last().unwrap(), &reference_15["u1"]);
    rpc.send_raw("{this is not json");
    let parse = rpc.until("parse error", |l| l["command"] == "parse");
    assert_eq!(parse.last().unwrap(), &reference_15["parse"]);

    let old_id = s2["data"]["sessionId"].clone();
    let n1 = rpc.call("n1", json!({"type": "new_session"}));
    assert_eq!(n1, reference["n1"]);
    let s3 = rpc.call("s3", json!({"type": "get_state"}));
    same_shape(&s3, "s3");
    assert_ne!(s3["data"]["sessionId"], old_id);
    assert_eq!(s3["data"]["messageCount"], 0);
    assert_eq!(rpc.finish(), Some(0));

    // set_steering_mode and friends were saved to the global settings as the TS pi does.
    let settings = std::fs::read_to_string(env.agent.join("settings.json")).unwrap();
    assert!(!settings.ends_with('\n'));
    let settings: Value = serde_json::from_str(&settings).unwrap();
    assert_eq!(settings["steeringMode"], "all");
    assert_eq!(settings["followUpMode"], "one-at-a-time");
    assert_eq!(settings["compaction"], json!({"enabled": true}));
    assert_eq!(settings["retry"], json!({"enabled": true}));
    // The first session file matches the reference's entry sequence.
    let files = env.session_files();
    assert_eq!(
        files.len(),
        1,
        "the new session has no assistant message yet"
    );
    let entries: Vec<String> = read_jsonl(&files[0])
        .iter()
        .map(|l| match l["type"].as_str().unwrap() {
            "message" => format!("message:{}", l["message"]["role"].as_str().unwrap()),
            other => other.to_owned(),
        })
        .collect();
    let reference_entries: Vec<String> = read_jsonl(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(REFERENCE)
            .join("pi-ts-rpc-session.jsonl"),
    )
    .iter()
    .map(|l| match l["type"].as_str().unwrap() {
        "message" => format!("message:{}", l["message"]["role"].as_str().unwrap()),
        other => other.to_owned(),
    })
    .collect();
    // 0.73.1's file, with the system message pi 1.5 records before the first prompt.
    let mut expected = reference_entries;
    expected.insert(3, "message:system".to_owned());
    assert_eq!(entries, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_thinking_and_queues() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let mut rpc = Rpc::start(&env, &[]);
    let models = rpc.call("m", json!({"type": "get_available_models"}));
    assert_eq!(models["data"]["models"].as_array().unwrap().len(), 2);

    let missing = rpc.call(
        "x",
        json!({"type": "set_model", "provider": "mock", "modelId": "nope"}),
    );
    assert_eq!(missing["success"], false);
    assert_eq!(missing["error"], "Model not found: mock/nope");
    let set = rpc.call(
        "sm",
        json!({"type": "set_model", "provider": "mock", "modelId": "mock-thinker"}),
    );
    assert_eq!(set["data"]["id"], "mock-thinker");
    let think = rpc.call("t", json!({"type": "set_thinking_level", "level": "high"}));
    assert_eq!(think["success"], true);
    let changed = rpc.seen.iter().rev().nth(1).unwrap().clone();
    assert_eq!(
        changed,
        json!({"type": "thinking_level_changed", "level": "high"})
    );
    // xhigh is only for the models that support it: high wraps to off.
    let cycled = rpc.call("ct", json!({"type": "cycle_thinking_level"}));
    assert_eq!(cycled["data"]["level"], "off");
    let cycled = rpc.call("ct2", json!({"type": "cycle_thinking_level"}));
    assert_eq!(cycled["data"]["level"], "minimal");
    let cycle = rpc.call("cm", json!({"type": "cycle_model"}));
    assert_eq!(cycle["data"]["model"]["id"], "mock-model");
    assert_eq!(cycle["data"]["isScoped"], false);
    assert_eq!(cycle["data"]["thinkingLevel"], "off");
    let state = rpc.call("s", json!({"type": "get_state"}));
    assert_eq!(state["data"]["model"]["id"], "mock-model");

    // Steering while a reply streams is delivered before the next LLM call.
    server.push_all([
        Script::tool_call("bash", json!({"command": "sleep 1; echo slept"})),
        Script::text("after steering"),
    ]);
    rpc.call("p", json!({"type": "prompt", "message": "run it"}));
    rpc.event("tool_execution_start");
    let steer = rpc.call("st", json!({"type": "steer", "message": "also this"}));
    assert_eq!(steer["success"], true);
    let lines = rpc.event("agent_end");
    let updates = of_type(&lines, "queue_update");
    assert_eq!(updates.last().unwrap()["steering"], json!([]));
    let request = server.requests().last().unwrap().body.clone();
    let last_user = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap()
        .clone();
    assert_eq!(last_user["content"][0]["text"], "also this");

    // The model and thinking level were recorded in the session file.
    let file = env.session_files().pop().unwrap();
    let lines = read_jsonl(&file);
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "model_change" && l["modelId"] == "mock-thinker")
    );
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "thinking_level_change" && l["thinkingLevel"] == "high")
    );
    // As in pi 1.6.0, RPC changes leave the defaults in settings alone.
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings,
        json!({"defaultProvider": "mock", "defaultModel": "mock-model"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_fork_clone_switch_and_export() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let mut rpc = Rpc::start(&env, &[]);
    for (id, text) in [("p1", "first question"), ("p2", "second question")] {
        rpc.call(id, json!({"type": "prompt", "message": text}));
        rpc.event("agent_end");
    }
    let first_file = rpc.call("s", json!({"type": "get_state"}))["data"]["sessionFile"]
        .as_str()
        .unwrap()
        .to_owned();
    let forks = rpc.call("f", json!({"type": "get_fork_messages"}));
    let forks = forks["data"]["messages"].as_array().unwrap().clone();
    assert_eq!(forks.len(), 2);
    assert_eq!(forks[1]["text"], "second question");

    let fork = rpc.call(
        "fk",
        json!({"type": "fork", "entryId": forks[1]["entryId"]}),
    );
    assert_eq!(
        fork["data"],
        json!({"text": "second question", "cancelled": false})
    );
    let state = rpc.call("s2", json!({"type": "get_state"}));
    assert_eq!(
        state["data"]["messageCount"], 3,
        "the path before the forked message (system, user, assistant)"
    );
    let forked_file = state["data"]["sessionFile"].as_str().unwrap().to_owned();
    assert_ne!(forked_file, first_file);
    let header = &read_jsonl(std::path::Path::new(&forked_file))[0];
    assert_eq!(header["parentSession"], first_file.as_str());

    let clone = rpc.call("cl", json!({"type": "clone"}));
    assert_eq!(clone["data"], json!({"cancelled": false}));
    let cloned = rpc.call("s3", json!({"type": "get_state"}));
    assert_eq!(cloned["data"]["messageCount"], 3);
    assert_ne!(cloned["data"]["sessionFile"], state["data"]["sessionFile"]);

    let switch = rpc.call(
        "sw",
        json!({"type": "switch_session", "sessionPath": first_file}),
    );
    assert_eq!(switch["data"], json!({"cancelled": false}));
    let back = rpc.call("s4", json!({"type": "get_state"}));
    assert_eq!(back["data"]["messageCount"], 5);
    assert_eq!(back["data"]["sessionFile"], first_file.as_str());

    let out = env.work.join("export.html");
    let export = rpc.call(
        "e",
        json!({"type": "export_html", "outputPath": out.to_string_lossy()}),
    );
    assert_eq!(export["data"]["path"], out.to_string_lossy().as_ref());
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("second question"));

    let empty = rpc.call("n", json!({"type": "set_session_name", "name": "  "}));
    assert_eq!(empty["error"], "Session name cannot be empty");
    let bad_fork = rpc.call("bf", json!({"type": "fork", "entryId": "nope"}));
    assert_eq!(bad_fork["error"], "Invalid entry ID for forking");
    let missing = rpc.call("mf", json!({"type": "set_model"}));
    assert_eq!(missing["success"], false);
    for (id, kind) in [("ar", "abort_retry"), ("ab", "abort_bash")] {
        let response = rpc.call(id, json!({"type": kind}));
        assert_eq!(response["success"], true, "{response}");
    }
    // A session switched to keeps serving prompts.
    rpc.call("p3", json!({"type": "prompt", "message": "third question"}));
    let lines = rpc.event("agent_end");
    assert_eq!(of_type(&lines, "message_end").len(), 2);
    assert_eq!(
        read_jsonl(std::path::Path::new(&first_file))
            .iter()
            .filter(|l| l["type"] == "message")
            .count(),
        7
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cycling_stays_within_the_models_scope() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let mut rpc = Rpc::start(&env, &["--models", "mock/mock-thinker:high,mock-model"]);
    let first = rpc.call("c1", json!({"type": "cycle_model"}));
    assert_eq!(first["data"]["model"]["id"], "mock-thinker");
    assert_eq!(first["data"]["isScoped"], true);
    assert_eq!(first["data"]["thinkingLevel"], "high");
    let second = rpc.call("c2", json!({"type": "cycle_model"}));
    assert_eq!(second["data"]["model"]["id"], "mock-model");
    assert_eq!(second["data"]["thinkingLevel"], "off");
    // Glob patterns match provider/id or the id.
    let mut globbed = Rpc::start(&env, &["--models", "*thinker"]);
    let single = globbed.call("c", json!({"type": "cycle_model"}));
    assert_eq!(
        single["data"],
        Value::Null,
        "one model in scope: nothing to cycle to"
    );
}
