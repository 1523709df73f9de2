//! pi 1.5's additions to the RPC and JSON output, checked against the 1.5.2 traces
//! (`tests/fixtures/pi-1.5-*.jsonl`): delta-only `message_update`, `durationMs`,
//! `willRetry` and `agent_settled`, dispositions, and the commands `clear_queue`,
//! `get_available_thinking_levels`, `get_entries`, `get_tree` and `bash` with
//! `excludeFromContext`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use mock_llm::{Fault, MockServer, Script};
use support::rpc::{Env, Rpc, of_type, read_jsonl};

fn trace(name: &str) -> Vec<Value> {
    read_jsonl(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
}

/// The 1.5.2 RPC trace's responses by id.
fn responses_15() -> BTreeMap<String, Value> {
    trace("pi-1.5-rpc.jsonl")
        .into_iter()
        .filter(|l| l["type"] == "response" && l["id"].is_string())
        .map(|l| (l["id"].as_str().unwrap().to_owned(), l))
        .collect()
}

fn keys(value: &Value) -> Vec<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

fn env_with_hello(server: &MockServer) -> Env {
    let env = Env::new(server, 128_000, json!({}));
    std::fs::write(
        env.work.join("hello.txt"),
        "Hello from the anchor test file!\nSecond line.\n",
    )
    .unwrap();
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_streams_in_the_15_shapes() {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::tool_call("read", json!({"path": "hello.txt"})),
        Script::text("done: Hello from the ancho"),
    ]);
    let env = env_with_hello(&server);
    let reference = trace("pi-1.5-rpc.jsonl");
    let mut rpc = Rpc::start(&env, &[]);
    let p1 = rpc.call("p1", json!({"type": "prompt", "message": "read hello.txt"}));
    assert_eq!(p1, responses_15()["p1"]);
    let lines = rpc.event("agent_settled");

    // Every message_update has the 1.5 keys, and no partial message.
    let updates = of_type(&lines, "message_update");
    assert!(!updates.is_empty());
    let theirs = reference
        .iter()
        .find(|l| l["type"] == "message_update")
        .unwrap();
    for update in &updates {
        assert_eq!(keys(update), keys(theirs));
        assert!(update["assistantMessageEvent"].get("partial").is_none());
    }
    let start = updates
        .iter()
        .find(|u| u["assistantMessageEvent"]["type"] == "toolcall_start")
        .unwrap();
    assert_eq!(
        keys(&start["assistantMessageEvent"]),
        ["type", "contentIndex", "id", "toolName"]
    );
    assert_eq!(start["assistantMessageEvent"]["toolName"], "read");
    let end = of_type(&lines, "tool_execution_end")[0];
    assert!(end["durationMs"].is_u64(), "{end}");
    let agent_end = of_type(&lines, "agent_end")[0];
    assert_eq!(agent_end["willRetry"], false);
    assert_eq!(
        lines.last().unwrap(),
        &json!({"type": "agent_settled", "aborted": false})
    );

    // get_entries: every entry in append order (no header), `since`, an unknown id.
    let all = rpc.call("b2", json!({"type": "get_entries"}));
    let entries = all["data"]["entries"].as_array().unwrap();
    let file = read_jsonl(&env.session_files()[0]);
    assert_eq!(entries.as_slice(), &file[1..]);
    assert_eq!(all["data"]["leafId"], file.last().unwrap()["id"]);
    let since = rpc.call(
        "b3",
        json!({"type": "get_entries", "since": entries[1]["id"]}),
    );
    assert_eq!(since["data"]["entries"].as_array().unwrap(), &entries[2..]);
    let missing = rpc.call(
        "b4",
        json!({"type": "get_entries", "since": "no-such-entry"}),
    );
    assert_eq!(missing, responses_15()["b4"]);

    // get_tree: one root (the model change), a chain down to the leaf.
    let tree = rpc.call("b5", json!({"type": "get_tree"}));
    let roots = tree["data"]["tree"].as_array().unwrap();
    assert_eq!(roots.len(), 1);
    assert_eq!(roots[0]["entry"]["type"], "model_change");
    let mut depth = 0;
    let mut node = &roots[0];
    while let Some(child) = node["children"].as_array().unwrap().first() {
        node = child;
        depth += 1;
    }
    assert_eq!(depth + 1, entries.len());
    assert_eq!(node["entry"]["id"], tree["data"]["leafId"]);

    // A non-reasoning model offers only "off".
    let levels = rpc.call("b1", json!({"type": "get_available_thinking_levels"}));
    assert_eq!(levels, responses_15()["b1"]);

    // bash with excludeFromContext answers as before and is marked in the session.
    rpc.send(json!({"id": "b6", "type": "bash", "command": "printf 'one\\ntwo\\n'", "excludeFromContext": true}));
    let bash = rpc.until("b6", |l| l["id"] == "b6" && l["type"] == "response");
    assert_eq!(bash.last().unwrap(), &responses_15()["b6"]);
    // The output streamed first, one event per chunk, carrying the command's id.
    let streamed: String = of_type(&bash, "bash_execution_update")
        .iter()
        .map(|u| {
            assert_eq!(keys(u), ["type", "id", "delta"]);
            assert_eq!(u["id"], "b6");
            u["delta"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(streamed, "one\ntwo\n");
    assert_eq!(rpc.finish(), Some(0));
    let file = read_jsonl(&env.session_files()[0]);
    let bash_entry = file
        .iter()
        .find(|l| l["message"]["role"] == "bashExecution")
        .unwrap();
    assert_eq!(bash_entry["message"]["excludeFromContext"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_prompts_have_dispositions_and_clear_queue_returns_them() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Script::text("tick 0. tick 1. tick 2. tick 3.")
            .with_chunk_size(8)
            .with_fault(Fault::stall(2, 60_000)),
    );
    let env = env_with_hello(&server);
    let reference = responses_15();
    let mut rpc = Rpc::start(&env, &[]);
    rpc.call(
        "b15",
        json!({"type": "prompt", "message": "please answer slow"}),
    );
    rpc.until("streaming", |l| {
        l["type"] == "message_update" && l["assistantMessageEvent"]["type"] == "text_delta"
    });
    let steer = rpc.call(
        "b16",
        json!({"type": "steer", "message": "steer while slow"}),
    );
    assert_eq!(steer, reference["b16"]);
    let queued = rpc.call(
        "b17",
        json!({"type": "prompt", "message": "queued through prompt", "streamingBehavior": "followUp"}),
    );
    assert_eq!(queued, reference["b17"]);
    let follow = rpc.call(
        "b18",
        json!({"type": "follow_up", "message": "second follow-up"}),
    );
    assert_eq!(follow, reference["b18"]);
    rpc.send(json!({"id": "b20", "type": "clear_queue"}));
    let cleared = rpc.until("b20", |l| l["id"] == "b20");
    assert_eq!(
        of_type(&cleared, "queue_update").last().unwrap(),
        &&json!({"type": "queue_update", "steering": [], "followUp": []})
    );
    assert_eq!(
        cleared.last().unwrap()["data"],
        json!({"steering": ["steer while slow"], "followUp": ["queued through prompt", "second follow-up"]})
    );
    let state = rpc.call("s", json!({"type": "get_state"}));
    assert_eq!(state["data"]["pendingMessageCount"], 0);
    rpc.send(json!({"id": "b22", "type": "abort"}));
    let aborted = rpc.until("b22", |l| l["id"] == "b22");
    assert_eq!(
        of_type(&aborted, "agent_settled")[0],
        &json!({"type": "agent_settled", "aborted": true})
    );
    assert_eq!(aborted.last().unwrap(), &reference["b22"]);
    assert_eq!(rpc.finish(), Some(0));
}

#[test]
fn json_mode_writes_the_15_event_sequence() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push_all([
        Script::tool_call("read", json!({"path": "hello.txt"})),
        Script::text("done: Hello from the ancho"),
    ]);
    let env = env_with_hello(&server);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["--mode", "json", "-p", "read hello.txt"])
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .output()
        .unwrap();
    assert!(output.status.success());
    let ours: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Both record the system message first (its start and end are in both streams).
    let kinds = |lines: &[Value]| -> Vec<String> {
        lines
            .iter()
            .map(|l| match l["type"].as_str().unwrap() {
                "message_update" => format!(
                    "update:{}",
                    l["assistantMessageEvent"]["type"].as_str().unwrap()
                ),
                other => other.to_owned(),
            })
            .collect()
    };
    let theirs = trace("pi-1.5-json-mode.jsonl");
    let (ours_kinds, theirs_kinds) = (kinds(&ours), kinds(&theirs));
    // The mock streams tool arguments in its own chunks: compare without the deltas.
    let without_deltas = |k: &[String]| -> Vec<String> {
        k.iter()
            .filter(|k| !k.ends_with("_delta"))
            .cloned()
            .collect()
    };
    assert_eq!(without_deltas(&ours_kinds), without_deltas(&theirs_kinds));
    assert_eq!(ours.last().unwrap(), theirs.last().unwrap());
}
