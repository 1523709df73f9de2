//! OpenAI Chat Completions stream shape.

mod common;

use common::{openai_concat, openai_request, stream};
use mock_llm::{Item, MockServer, Script, ScriptUsage, StopReason};
use serde_json::{Value, json};

#[tokio::test]
async fn text_and_tool_call_chunk_sequence() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Script::new(vec![
            Item::text("Hello, wörld! 👋"),
            Item::tool_call("read", json!({"path": "a.txt"})),
            Item::ToolCall {
                id: Some("call_fixed".into()),
                name: "ls".into(),
                arguments: json!({}),
            },
        ])
        .with_chunk_size(4),
    );
    let url = format!("{}/chat/completions", server.openai_base_url());
    let events = stream(&url, &openai_request("hi")).await;

    assert!(events.iter().all(|e| e.event.is_none()));
    assert_eq!(events.last().unwrap().data, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| e.json())
        .collect();
    for chunk in &chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["model"], "gpt-test");
        assert_eq!(chunk["system_fingerprint"], "fp_mock");
        assert!(chunk["id"].as_str().unwrap().starts_with("chatcmpl-"));
        assert!(chunk["created"].as_u64().unwrap() > 1_600_000_000);
        assert!(
            chunk.get("usage").is_none(),
            "usage only with include_usage"
        );
    }
    assert_eq!(
        chunks[0]["choices"],
        json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}])
    );
    // Text in pieces of 4 characters (UTF-8 safe).
    assert_eq!(chunks[1]["choices"][0]["delta"], json!({"content": "Hell"}));
    assert_eq!(openai_concat(&events, "content"), "Hello, wörld! 👋");
    let text_chunks = chunks
        .iter()
        .filter(|c| c["choices"][0]["delta"]["content"].is_string());
    assert_eq!(text_chunks.count(), 1 + 4); // role chunk + ceil(15 / 4)

    // Tool calls: a start chunk, then argument pieces, per tool index.
    let tool_deltas: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"].get("tool_calls"))
        .collect();
    let first = &tool_deltas[0][0];
    assert_eq!(first["index"], 0);
    assert!(first["id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(first["type"], "function");
    assert_eq!(first["function"], json!({"name": "read", "arguments": ""}));
    let args0: String = tool_deltas
        .iter()
        .skip(1)
        .filter(|d| d[0]["index"] == 0)
        .map(|d| {
            assert!(d[0].get("id").is_none());
            d[0]["function"]["arguments"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(args0, r#"{"path":"a.txt"}"#);
    let second_start = tool_deltas.iter().find(|d| d[0]["index"] == 1).unwrap();
    assert_eq!(second_start[0]["id"], "call_fixed");
    assert_eq!(second_start[0]["function"]["name"], "ls");

    let last = chunks.last().unwrap();
    assert_eq!(
        last["choices"],
        json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": "tool_calls"}])
    );
}

#[tokio::test]
async fn include_usage_adds_usage_chunk() {
    let server = MockServer::start().await.unwrap();
    let usage = ScriptUsage {
        input: 10,
        output: 5,
        cache_read: 3,
        cache_write: 2,
        reasoning: 0,
    };
    server.push(Script::text("hi").with_full_usage(usage));
    server.push(
        Script::text("hi")
            .with_usage(7, 4)
            .with_stop_reason(StopReason::Length),
    );
    let url = format!("{}/chat/completions", server.openai_base_url());
    let mut request = openai_request("q");
    request["stream_options"] = json!({"include_usage": true});

    let events = stream(&url, &request).await;
    let n = events.len();
    assert_eq!(events[n - 1].data, "[DONE]");
    let usage_chunk = events[n - 2].json();
    assert_eq!(usage_chunk["choices"], json!([]));
    assert_eq!(
        usage_chunk["usage"],
        json!({
            "prompt_tokens": 15, "completion_tokens": 5, "total_tokens": 20,
            "prompt_tokens_details": {"cached_tokens": 3, "cache_write_tokens": 2},
            "completion_tokens_details": {"reasoning_tokens": 0}
        })
    );
    // Every other chunk carries "usage": null, like the real API.
    for event in &events[..n - 2] {
        assert!(event.json()["usage"].is_null());
        assert!(event.json().get("usage").is_some());
    }
    assert_eq!(events[n - 3].json()["choices"][0]["finish_reason"], "stop");

    let events = stream(&url, &request).await;
    let usage = &events[events.len() - 2].json()["usage"];
    assert_eq!(usage["prompt_tokens"], 7);
    assert_eq!(usage["total_tokens"], 11);
    assert!(
        usage["prompt_tokens_details"]
            .get("cache_write_tokens")
            .is_none()
    );
    assert_eq!(
        events[events.len() - 3].json()["choices"][0]["finish_reason"],
        "length"
    );
}

#[tokio::test]
async fn default_usage_and_reasoning_field() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::thinking_then_text("let me think", "answer").with_model("other-model"));
    server.push(Script::thinking_then_text("hmm", "ok").with_reasoning_field("reasoning"));
    let url = format!("{}/v1/chat/completions", server.url());
    let mut request = openai_request("q");
    request["stream_options"] = json!({"include_usage": true});
    let request_len = serde_json::to_vec(&request).unwrap().len() as u64;

    let events = stream(&url, &request).await;
    assert_eq!(openai_concat(&events, "reasoning_content"), "let me think");
    assert_eq!(openai_concat(&events, "content"), "answer");
    assert_eq!(events[0].json()["model"], "other-model");
    let usage = &events[events.len() - 2].json()["usage"];
    assert_eq!(usage["prompt_tokens"], request_len / 4);
    assert_eq!(usage["completion_tokens"], (12 + 6) / 4 + 1);

    let events = stream(&url, &request).await;
    assert_eq!(openai_concat(&events, "reasoning"), "hmm");
    assert_eq!(openai_concat(&events, "reasoning_content"), "");
}

#[tokio::test]
async fn filler_streams_exact_byte_count() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::filler(100_000).with_chunk_size(500));
    let url = format!("{}/chat/completions", server.openai_base_url());
    let events = stream(&url, &openai_request("q")).await;
    let text = openai_concat(&events, "content");
    assert_eq!(text.len(), 100_000);
    assert!(text.starts_with("Lorem ipsum"));
}
