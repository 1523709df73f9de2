//! Tool-call ids replayed across providers as pi 1.6.0 sends them to an OpenAI-compatible
//! Chat Completions model (pi 0.81): a Responses id `call|item` keeps both parts, so two
//! calls sharing a call id stay apart, and a combined id over 40 characters becomes the call
//! id and a hash of the whole. A prepared session whose Responses reply made three such
//! calls is continued by ours and pi 1.6.0 (`PI_TS16`) on the mock, and the ids the
//! request carries must agree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::entries::{continue_once, header, user, write};
use support::rpc::Env;
use support::ts16::{pis, program};

/// The Responses ids of the earlier calls: two share a call id, the third's combined id is
/// over 40 characters (and its call id too).
const IDS: [&str; 3] = [
    "call_shared|fc_one",
    "call_shared|fc_two",
    "call_0123456789abcdefghijklmnopqrstuvwxyz|fc_0123456789abcdefghijklmnopqrstuvwxyz",
];

/// A session whose OpenAI Responses reply called `read` once per id of [`IDS`], with
/// the results.
fn session(env: &Env) -> PathBuf {
    let path = env.dir.path().join("replay.jsonl");
    let zero = json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0});
    let calls: Vec<Value> = IDS
        .iter()
        .map(|id| {
            json!({"type": "toolCall", "id": id, "name": "read",
                         "arguments": {"path": "notes.txt"}})
        })
        .collect();
    let mut lines = vec![
        header("replay-source", &env.work),
        user("u0000001", None, "Read notes.txt three times."),
        json!({"type": "message", "id": "a0000001", "parentId": "u0000001",
               "timestamp": "2026-01-01T00:00:01.000Z",
               "message": {"role": "assistant", "content": calls, "api": "openai-responses",
                           "provider": "openai", "model": "gpt-5",
                           "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                                     "totalTokens": 0, "cost": zero},
                           "stopReason": "toolUse", "timestamp": 1_767_225_601_000_u64}}),
    ];
    let mut parent = "a0000001".to_owned();
    for (n, id) in IDS.iter().enumerate() {
        let entry = format!("r000000{n}");
        lines.push(json!({"type": "message", "id": entry, "parentId": parent,
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {"role": "toolResult", "toolCallId": id, "toolName": "read",
                        "content": [{"type": "text", "text": format!("notes {n}")}],
                        "isError": false, "timestamp": 1_767_225_602_000_u64}}));
        parent = entry;
    }
    write(&path, &lines);
    path
}

/// The tool-call ids the continued session's request carries: the assistant message's
/// calls, then the tool messages' ids.
async fn replayed(wrapper: &Option<PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Three times the notes."));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let path = session(&env);
    let body = continue_once(&env, program(wrapper), &server, "mock/mock-model", &path);
    let messages = body["messages"].as_array().cloned().unwrap();
    let calls: Vec<Value> = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|call| call["id"].clone())
        .collect();
    let results: Vec<Value> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].clone())
        .collect();
    json!({"calls": calls, "results": results})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_call_ids_stay_unique_in_a_completions_replay_as_pi_16() {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, replayed(&wrapper).await));
    }
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
    let ours = &seen[0].1;
    let calls = ours["calls"].as_array().unwrap();
    assert_eq!(calls[0], "call_shared_fc_one", "{ours}");
    assert_eq!(calls[1], "call_shared_fc_two", "{ours}");
    // The long one: 31 characters of the call id, `_`, 8 of the hash.
    let long = calls[2].as_str().unwrap();
    assert_eq!(long.len(), 40, "{ours}");
    assert!(
        long.starts_with("call_0123456789abcdefghijklmnop_"),
        "{ours}"
    );
    assert_eq!(ours["results"], ours["calls"], "{ours}");
}
