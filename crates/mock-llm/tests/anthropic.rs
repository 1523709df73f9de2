//! Anthropic Messages stream shape.

mod common;

use common::{anthropic_request, stream};
use mock_llm::{Item, MockServer, Script, ScriptUsage};
use serde_json::json;

#[tokio::test]
async fn thinking_signature_text_and_tool_use_sequence() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Script::new(vec![
            Item::Thinking {
                text: "pondering".into(),
                signature: Some("sig123".into()),
            },
            Item::RedactedThinking {
                data: "opaque".into(),
            },
            Item::text("Hi there"),
            Item::tool_call("read", json!({"path": "x"})),
        ])
        .with_chunk_size(5)
        .with_full_usage(ScriptUsage {
            input: 11,
            output: 22,
            cache_read: 33,
            cache_write: 44,
            reasoning: 0,
        }),
    );
    let url = format!("{}/v1/messages", server.anthropic_base_url());
    let events = stream(&url, &anthropic_request("hi")).await;

    let names: Vec<&str> = events.iter().map(|e| e.event.as_deref().unwrap()).collect();
    assert_eq!(
        names,
        vec![
            "message_start",
            "ping",
            // thinking: start, 2 thinking deltas, signature, stop
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            // redacted thinking
            "content_block_start",
            "content_block_stop",
            // text: 2 deltas
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            // tool_use: {"path":"x"} is 12 chars -> 3 deltas
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    for event in &events {
        assert_eq!(event.json()["type"], event.event.as_deref().unwrap());
    }
    assert_eq!(
        events[0].json(),
        json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 11, "cache_creation_input_tokens": 44,
                      "cache_read_input_tokens": 33, "output_tokens": 1}}})
    );
    assert_eq!(events[1].data, r#"{"type": "ping"}"#);
    assert_eq!(
        events[2].json(),
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
    );
    assert_eq!(
        events[3].json(),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "thinking_delta", "thinking": "ponde"}})
    );
    assert_eq!(
        events[5].json()["delta"],
        json!({"type": "signature_delta", "signature": "sig123"})
    );
    assert_eq!(
        events[6].json(),
        json!({"type": "content_block_stop", "index": 0})
    );
    assert_eq!(
        events[7].json()["content_block"],
        json!({"type": "redacted_thinking", "data": "opaque"})
    );
    assert_eq!(events[9].json()["index"], 2);
    assert_eq!(
        events[10].json()["delta"],
        json!({"type": "text_delta", "text": "Hi th"})
    );
    let tool_start = events[13].json();
    assert_eq!(tool_start["index"], 3);
    assert_eq!(tool_start["content_block"]["type"], "tool_use");
    assert!(
        tool_start["content_block"]["id"]
            .as_str()
            .unwrap()
            .starts_with("toolu_")
    );
    assert_eq!(tool_start["content_block"]["name"], "read");
    assert_eq!(tool_start["content_block"]["input"], json!({}));
    let partial: String = events[14..17]
        .iter()
        .map(|e| {
            let delta = e.json()["delta"].clone();
            assert_eq!(delta["type"], "input_json_delta");
            delta["partial_json"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(partial, r#"{"path":"x"}"#);
    assert_eq!(
        events[18].json(),
        json!({"type": "message_delta",
               "delta": {"stop_reason": "tool_use", "stop_sequence": null},
               "usage": {"output_tokens": 22}})
    );
    assert_eq!(events[19].json(), json!({"type": "message_stop"}));
}

#[tokio::test]
async fn text_reply_ends_turn_and_ids_increase() {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::text("a"),
        Script::text("b").with_response_id("msg_custom"),
    ]);
    let url = format!("{}/messages", server.url());
    let first = stream(&url, &anthropic_request("x")).await;
    let second = stream(&url, &anthropic_request("x")).await;
    assert_eq!(
        first[first.len() - 2].json()["delta"]["stop_reason"],
        "end_turn"
    );
    assert_eq!(first[0].json()["message"]["id"], "msg_1");
    assert_eq!(second[0].json()["message"]["id"], "msg_custom");
    assert_eq!(server.pending(), 0);
}

#[tokio::test]
async fn a_raw_stop_reason_is_sent_as_scripted() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("no").with_raw_stop_reason("refusal"));
    server.push(Script::text("yes"));
    let url = format!("{}/v1/messages", server.anthropic_base_url());
    for expected in ["refusal", "end_turn"] {
        let events = stream(&url, &anthropic_request("hi")).await;
        let delta = events
            .iter()
            .find(|e| e.event.as_deref() == Some("message_delta"))
            .unwrap()
            .json();
        assert_eq!(delta["delta"]["stop_reason"], expected);
    }
}
