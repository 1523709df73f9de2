//! The ids of replayed assistant texts on the OpenAI Responses API when the texts have none
//! of their own, e.g. after switching from an Anthropic session (pi 0.77.0): each text gets
//! an id unique within the request. A prepared session whose Anthropic reply holds two texts
//! is continued on a Responses model by ours and pi 1.6.0 (`PI_TS16`) on the mock; the
//! message items the request carries must agree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::entries::{continue_once, header, user, write};
use support::rpc::Env;
use support::ts16::{pis, program};

/// A session whose Anthropic reply (with thinking) holds two texts, then a second prompt's
/// reply with one text.
fn session(env: &Env) -> PathBuf {
    let path = env.dir.path().join("anthropic.jsonl");
    let zero = json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0});
    let reply = |id: &str, parent: &str, content: Value| {
        json!({"type": "message", "id": id, "parentId": parent,
               "timestamp": "2026-01-01T00:00:01.000Z",
               "message": {"role": "assistant", "content": content,
                           "api": "anthropic-messages", "provider": "anthropic",
                           "model": "claude-sonnet-4-5",
                           "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                                     "totalTokens": 0, "cost": zero},
                           "stopReason": "stop", "timestamp": 1_767_225_601_000_u64}})
    };
    let lines = vec![
        header("anthropic-source", &env.work),
        user("u0000001", None, "Tell me two things."),
        reply(
            "a0000001",
            "u0000001",
            json!([
                {"type": "thinking", "thinking": "Two things.", "thinkingSignature": "sig-a"},
                {"type": "text", "text": "First thing."},
                {"type": "text", "text": "Second thing."},
            ]),
        ),
        user("u0000002", Some("a0000001"), "And one more."),
        reply(
            "a0000002",
            "u0000002",
            json!([{"type": "text", "text": "Third thing."}]),
        ),
    ];
    write(&path, &lines);
    path
}

/// `[id, text]` of each assistant message item the continued session's request carries.
async fn replayed(wrapper: &Option<PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Noted."));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let models = json!({"providers": {"resp": {
        "baseUrl": server.openai_base_url(), "api": "openai-responses", "apiKey": "resp-key",
        "models": [{"id": "resp-model", "name": "Responses Model", "contextWindow": 128_000,
                    "maxTokens": 16384}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let path = session(&env);
    let body = continue_once(&env, program(wrapper), &server, "resp/resp-model", &path);
    let items: Vec<Value> = body["input"]
        .as_array()
        .cloned()
        .unwrap()
        .into_iter()
        .filter(|item| item["type"] == "message" && item["role"] == "assistant")
        .map(|item| json!([item["id"], item["content"][0]["text"]]))
        .collect();
    json!(items)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn texts_without_ids_get_unique_ones_on_responses_as_pi_16() {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, replayed(&wrapper).await));
    }
    let ours = &seen[0].1;
    assert_eq!(
        *ours,
        json!([
            ["msg_pi_1", "First thing."],
            ["msg_pi_1_1", "Second thing."],
            ["msg_pi_3", "Third thing."],
        ]),
    );
    for (who, theirs) in &seen[1..] {
        assert_eq!(ours, theirs, "ours and {who}");
    }
}
