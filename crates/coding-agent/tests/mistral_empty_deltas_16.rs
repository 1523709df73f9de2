//! Mistral replies whose reasoning is interrupted by empty content deltas (GLM models
//! stream `"content": ""` between thinking chunks) as pi 1.6.0 keeps them (pi 0.99): the
//! empty text opens no block, so the reasoning stays one thinking block and the replayed
//! assistant message carries a single leading ThinkChunk, which Mistral requires. Ours and
//! pi 1.6.0 (`PI_TS16`) run the same tool round trip on the mock's Mistral endpoint, and
//! the replayed assistant message must agree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::Script;
use serde_json::{Value, json};
use support::errors::MISTRAL;
use support::shapes::{NOTES_FILE, Session, compare, model};

/// One streamed chunk of the Chat Completions-style Mistral stream.
fn chunk(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({"id": "glm-reply", "object": "chat.completion.chunk", "created": 0,
        "model": "glm-parity",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {chunk}\n\n")
}

/// Reasoning in two thinking chunks with empty content deltas around and between them,
/// then a `read` call.
fn interrupted_reasoning() -> Script {
    let thinking = |text: &str| json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": text}]}]});
    let call = json!({"tool_calls": [{"id": "callabcde", "index": 0,
        "function": {"name": "read", "arguments": json!({"path": NOTES_FILE}).to_string()}}]});
    let mut body = [
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(thinking("I should "), None),
        chunk(json!({"content": ""}), None),
        chunk(thinking("read the file."), None),
        chunk(json!({"content": ""}), None),
    ]
    .concat();
    let last = json!({"id": "glm-reply", "object": "chat.completion.chunk", "created": 0,
        "model": "glm-parity",
        "choices": [{"index": 0, "delta": call, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
    body.push_str(&format!("data: {last}\n\ndata: [DONE]\n\n"));
    Script::raw(body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_split_by_empty_deltas_is_replayed_as_one_think_chunk_as_pi_16() {
    let session = Session {
        wire: &MISTRAL,
        model: model("glm-parity", json!({})),
        scripts: vec![interrupted_reasoning(), Script::text("It says the notes.")],
        runs: vec![vec!["--thinking", "high", "-p", "Read notes.txt."]],
        files: vec![],
    };
    let replayed = compare(&session, |requests| {
        assert_eq!(requests.len(), 2, "a tool round trip");
        let messages = requests[1].1["messages"].as_array().cloned().unwrap();
        let assistant = messages
            .iter()
            .find(|m| m["role"] == "assistant")
            .cloned()
            .unwrap_or(Value::Null);
        assistant["content"].clone()
    })
    .await;
    let chunks = replayed.as_array().unwrap();
    let thinks: Vec<&Value> = chunks.iter().filter(|c| c["type"] == "thinking").collect();
    assert_eq!(thinks.len(), 1, "{replayed}");
    assert_eq!(
        thinks[0]["thinking"],
        json!([{"type": "text", "text": "I should read the file."}]),
        "{replayed}"
    );
}
