//! `mistral-conversations` streaming from mock-llm: text, Magistral thinking chunks, parallel
//! tool calls whole and split, usage and cost, length stops, and a recorded body replayed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use mock_llm::{Item, Script};
use pi_ai::{AssistantBlock, AssistantMessageEvent, StopReason, api};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use common::mistral::{large, model, options, run};
use common::{assert_contract, chunked, collect, context, final_message, kinds, server};

#[tokio::test]
async fn text_streams_in_order_and_completes() {
    let server = server().await;
    server.push(
        Script::text("Hello, Mistral world!")
            .with_chunk_size(4)
            .with_response_id("cf79f7daaee244b1a0ae5c7b1444424a"),
    );
    let events = collect(&large(&server), &context("hi"), options()).await;
    assert_contract(&events);
    let k = kinds(&events);
    assert_eq!(&k[..2], ["start", "text_start"]);
    assert_eq!(&k[k.len() - 2..], ["text_end", "done"]);
    assert!(
        k.iter().filter(|k| **k == "text_delta").count() >= 6,
        "{k:?}"
    );
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "Hello, Mistral world!");
    let message = final_message(&events);
    // The empty first delta (`"content": ""`) opens no block.
    assert_eq!(message.content.len(), 1);
    assert_eq!(message.text(), "Hello, Mistral world!");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(
        message.response_id.as_deref(),
        Some("cf79f7daaee244b1a0ae5c7b1444424a")
    );
    assert_eq!(message.api, "mistral-conversations");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/mistral/v1/chat/completions");
    assert_eq!(request.headers["authorization"], "Bearer test-key");
    assert_eq!(request.headers["accept"], "text/event-stream");
    assert_eq!(request.headers["content-type"], "application/json");
}

#[tokio::test]
async fn magistral_thinking_chunks_become_a_thinking_block() {
    let server = server().await;
    server.push(
        Script::thinking_then_text("Let me think about it.", "The answer is 42.")
            .with_chunk_size(5),
    );
    let m = model(&server, "magistral-medium-latest");
    let events = collect(&m, &context("question"), options()).await;
    assert_contract(&events);
    let k = kinds(&events);
    let thinking_start = k.iter().position(|k| *k == "thinking_start").unwrap();
    let thinking_end = k.iter().position(|k| *k == "thinking_end").unwrap();
    let text_start = k.iter().position(|k| *k == "text_start").unwrap();
    assert!(
        thinking_start < thinking_end && thinking_end < text_start,
        "{k:?}"
    );
    assert!(k.iter().filter(|k| **k == "thinking_delta").count() >= 4);
    let message = final_message(&events);
    assert_eq!(message.content.len(), 2, "{message:?}");
    let AssistantBlock::Thinking(thinking) = &message.content[0] else {
        panic!("{message:?}")
    };
    assert_eq!(thinking.thinking, "Let me think about it.");
    assert_eq!(thinking.thinking_signature, None);
    assert_eq!(message.content[1].as_text(), Some("The answer is 42."));
    assert_eq!(message.stop_reason, StopReason::Stop);
}

#[tokio::test]
async fn parallel_tool_calls_arrive_whole_in_one_delta() {
    let server = server().await;
    server.push(Script::new(vec![
        Item::text("Reading two files."),
        Item::tool_call("read", json!({"path": "a.txt"})),
        Item::tool_call("read", json!({"path": "b.txt", "offset": 2})),
    ]));
    let events = collect(&large(&server), &context("go"), options()).await;
    assert_contract(&events);
    let k = kinds(&events);
    // The text block closes before the first tool call opens.
    let text_end = k.iter().position(|k| *k == "text_end").unwrap();
    let first_tool = k.iter().position(|k| *k == "toolcall_start").unwrap();
    assert!(text_end < first_tool, "{k:?}");
    assert_eq!(k.iter().filter(|k| **k == "toolcall_end").count(), 2);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = message.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    for call in &calls {
        assert_eq!(call.id.len(), 9, "{}", call.id);
        assert!(call.id.chars().all(|c| c.is_ascii_alphanumeric()));
    }
    assert_ne!(calls[0].id, calls[1].id);
    assert_eq!(calls[0].arguments["path"], "a.txt");
    assert_eq!(calls[1].arguments["offset"], 2);
}

#[tokio::test]
async fn parallel_tool_calls_with_split_arguments() {
    let server = server().await;
    let write_args = json!({"path": "c.txt", "content": "héllo \"quoted\" ✓\nline"});
    server.push(
        Script::new(vec![
            Item::tool_call("read", json!({"path": "src/main.rs", "offset": 10})),
            Item::tool_call("write", write_args.clone()),
            Item::tool_call("read", json!({"path": "z"})),
        ])
        .with_chunk_size(1),
    );
    let events = collect(&large(&server), &context("go"), options()).await;
    assert_contract(&events);
    let deltas = events
        .iter()
        .filter(|e| e.kind() == "toolcall_delta")
        .count();
    assert!(deltas > 60, "only {deltas} deltas");
    // Best-known arguments grow monotonically.
    let mut last_len = 0;
    for event in &events {
        if let AssistantMessageEvent::ToolcallDelta {
            partial,
            content_index,
            ..
        } = event
            && *content_index == 0
        {
            let AssistantBlock::ToolCall(call) = &partial.content[0] else {
                panic!()
            };
            if let Some(path) = call.arguments.get("path").and_then(Value::as_str) {
                assert!("src/main.rs".starts_with(path), "{path}");
                assert!(path.len() >= last_len);
                last_len = path.len();
            }
        }
    }
    let message = final_message(&events);
    let calls: Vec<_> = message.tool_calls().collect();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0].arguments["offset"], 10);
    assert_eq!(calls[1].name, "write");
    assert_eq!(Value::Object(calls[1].arguments.clone()), write_args);
    assert_eq!(calls[2].arguments["path"], "z");
    let ends: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::ToolcallEnd { tool_call, .. } => Some(tool_call.id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 3);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
}

#[tokio::test]
async fn usage_and_cost_are_reported() {
    let (message, _) = run(Script::text("ok").with_usage(1000, 200), options()).await;
    let usage = message.usage;
    assert_eq!((usage.input, usage.output), (1000, 200));
    assert_eq!((usage.cache_read, usage.cache_write), (0, 0));
    assert_eq!(usage.total_tokens, 1200);
    assert!((usage.cost.input - 0.002).abs() < 1e-12);
    assert!((usage.cost.output - 0.0012).abs() < 1e-12);
    assert!((usage.cost.total - 0.0032).abs() < 1e-12);
}

#[tokio::test]
async fn length_stop_is_reported() {
    let (message, _) = run(
        Script::text("cut sho").with_stop_reason(mock_llm::StopReason::Length),
        options(),
    )
    .await;
    assert_eq!(message.stop_reason, StopReason::Length);
    assert_eq!(message.text(), "cut sho");
}

#[tokio::test]
async fn default_echo_reply_round_trip() {
    let server = server().await;
    let message = pi_ai::complete(&large(&server), &context("hi there"), options()).await;
    assert_eq!(message.text(), "ok: hi there");
}

#[tokio::test]
async fn recorded_body_replays_through_decode_sse_bytes() {
    let script = Script::new(vec![
        Item::thinking("hmm"),
        Item::text("Grüße 🎉"),
        Item::tool_call("read", json!({"path": "ü.txt"})),
    ])
    .with_chunk_size(2);
    let body = mock_llm::render_body(api::MISTRAL_CONVERSATIONS, &script).unwrap();
    // One byte at a time: UTF-8 and lines split anywhere.
    let server = server().await;
    let m = large(&server);
    let stream = pi_ai::providers::mistral::decode_sse_bytes(
        &m,
        chunked(&body, 1),
        CancellationToken::new(),
    );
    let message = stream.result().await;
    assert_eq!(message.stop_reason, StopReason::ToolUse, "{message:?}");
    let AssistantBlock::Thinking(t) = &message.content[0] else {
        panic!("{message:?}")
    };
    assert_eq!(t.thinking, "hmm");
    assert_eq!(message.text(), "Grüße 🎉");
    assert_eq!(
        message.tool_calls().next().unwrap().arguments["path"],
        "ü.txt"
    );
}
