//! `bedrock-converse-stream` streaming mock-llm's binary event-stream: text with usage and
//! cost, frames split across arbitrary writes, thinking signatures sent back, parallel tool calls
//! with split arguments, and the mock's default echo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::bedrock::{CLAUDE, NOVA, bedrock_options, close, collect, model, options};
use common::{context, final_message, kinds, server};
use mock_llm::{Item, Script, ScriptUsage};
use pi_ai::{
    AssistantBlock, AssistantMessageEvent, InputBlock, Message, StopReason, ToolResultMessage,
    UserMessage, api,
};
use serde_json::{Value, json};

#[tokio::test]
async fn text_streams_with_usage_and_cost() {
    let server = server().await;
    server.push(
        Script::text("Hello, Bedrock world!")
            .with_chunk_size(4)
            .with_full_usage(ScriptUsage {
                input: 100,
                output: 20,
                cache_read: 50,
                cache_write: 10,
                reasoning: 0,
            }),
    );
    let m = model(&server, CLAUDE);
    let events = collect(&m, &context("hi"), options(), bedrock_options()).await;
    let k = kinds(&events);
    assert_eq!(&k[..3], &["start", "text_start", "text_delta"]);
    assert_eq!(&k[k.len() - 2..], &["text_end", "done"]);
    assert_eq!(k.iter().filter(|k| **k == "text_delta").count(), 6);
    let message = final_message(&events);
    assert_eq!(message.text(), "Hello, Bedrock world!");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.api, api::BEDROCK_CONVERSE_STREAM);
    let u = message.usage;
    assert_eq!(
        (
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.total_tokens
        ),
        (100, 20, 50, 10, 180)
    );
    assert!(close(u.cost.input, 3.0 * 100.0 / 1e6));
    assert!(close(u.cost.output, 15.0 * 20.0 / 1e6));
    assert!(close(u.cost.cache_read, 0.3 * 50.0 / 1e6));
    assert!(close(u.cost.cache_write, 3.75 * 10.0 / 1e6));
    assert!(close(
        u.cost.total,
        u.cost.input + u.cost.output + u.cost.cache_read + u.cost.cache_write
    ));
    // Each delta's partial holds the text so far.
    let mut seen = String::new();
    for event in &events {
        if let AssistantMessageEvent::TextDelta {
            delta,
            partial,
            content_index,
        } = event
        {
            seen.push_str(delta);
            assert_eq!(
                partial.content[*content_index].as_text(),
                Some(seen.as_str())
            );
        }
    }
}

#[tokio::test]
async fn frames_split_across_arbitrary_writes_decode_the_same() {
    for bytes in [1usize, 7, 1000] {
        let server = server().await;
        server.push(
            Script::new(vec![
                Item::text("split me into pieces"),
                Item::tool_call("read", json!({"path": "a.rs"})),
            ])
            .with_chunk_size(3)
            .with_write_chunk_bytes(bytes),
        );
        let events = collect(
            &model(&server, CLAUDE),
            &context("hi"),
            options(),
            bedrock_options(),
        )
        .await;
        let message = final_message(&events);
        assert_eq!(message.text(), "split me into pieces", "{bytes}");
        assert_eq!(message.stop_reason, StopReason::ToolUse);
        let call = message.tool_calls().next().unwrap();
        assert_eq!(call.arguments["path"], "a.rs");
    }
}

#[tokio::test]
async fn thinking_signature_is_sent_back_next_turn() {
    let server = server().await;
    server.push(
        Script::new(vec![
            Item::Thinking {
                text: "Let me think about it.".into(),
                signature: Some("sig-abc".into()),
            },
            Item::text("The answer is 42."),
        ])
        .with_chunk_size(5),
    );
    server.push(Script::text("ok"));
    let m = model(&server, CLAUDE);
    let mut ctx = context("question");
    let events = collect(&m, &ctx, options(), bedrock_options()).await;
    let k = kinds(&events);
    let pos = |name: &str| k.iter().position(|k| *k == name).unwrap();
    assert!(pos("thinking_start") < pos("thinking_delta"));
    assert!(pos("thinking_end") < pos("text_start"), "{k:?}");
    let message = final_message(&events).clone();
    let AssistantBlock::Thinking(thinking) = &message.content[0] else {
        panic!("{message:?}")
    };
    assert_eq!(thinking.thinking, "Let me think about it.");
    assert_eq!(thinking.thinking_signature.as_deref(), Some("sig-abc"));
    assert_eq!(message.content[1].as_text(), Some("The answer is 42."));

    ctx.messages.push(Message::Assistant(message.into()));
    ctx.messages.push(Message::User(UserMessage::text("and?")));
    collect(&m, &ctx, options(), bedrock_options()).await;
    let body = &server.requests()[1].body;
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "Let me think about it.", "signature": "sig-abc"}}},
            {"text": "The answer is 42."}
        ]})
    );
}

#[tokio::test]
async fn parallel_tool_calls_with_split_arguments() {
    let server = server().await;
    let first = json!({"path": "src/main.rs", "offset": 10, "note": "héllo \"quoted\" ✓"});
    let second = json!({"path": "Cargo.toml"});
    server.push(
        Script::new(vec![
            Item::text("Reading both."),
            Item::ToolCall {
                id: Some("tooluse_a".into()),
                name: "read".into(),
                arguments: first.clone(),
            },
            Item::tool_call("read", second.clone()),
        ])
        .with_chunk_size(1),
    );
    server.push(Script::text("done"));
    let m = model(&server, CLAUDE);
    let mut ctx = context("read them");
    let events = collect(&m, &ctx, options(), bedrock_options()).await;
    let deltas = events
        .iter()
        .filter(|e| e.kind() == "toolcall_delta")
        .count();
    assert!(deltas > 50, "only {deltas} deltas");
    let message = final_message(&events).clone();
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = message.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id, "tooluse_a");
    assert!(calls[1].id.starts_with("tooluse_"));
    assert_eq!(Value::Object(calls[0].arguments.clone()), first);
    assert_eq!(Value::Object(calls[1].arguments.clone()), second);
    let ends: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::ToolcallEnd { content_index, .. } => Some(*content_index),
            _ => None,
        })
        .collect();
    assert_eq!(ends, vec![1, 2]);

    // Both results go back in one user message, after the assistant's toolUse blocks.
    let ids: Vec<String> = calls.iter().map(|c| c.id.clone()).collect();
    ctx.messages
        .push(Message::Assistant(message.clone().into()));
    for (i, id) in ids.iter().enumerate() {
        ctx.messages.push(Message::ToolResult(
            ToolResultMessage {
                tool_call_id: id.clone(),
                tool_name: "read".into(),
                content: vec![InputBlock::text(format!("contents {i}"))].into(),
                is_error: i == 1,
                ..Default::default()
            }
            .into(),
        ));
    }
    let events = collect(&m, &ctx, options(), bedrock_options()).await;
    assert_eq!(final_message(&events).text(), "done");
    let body = &server.requests()[1].body;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1]["content"][1]["toolUse"]["toolUseId"],
        "tooluse_a"
    );
    assert_eq!(messages[1]["content"][1]["toolUse"]["input"], first);
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"toolResult": {"toolUseId": ids[0], "content": [{"text": "contents 0"}], "status": "success"}},
            {"toolResult": {"toolUseId": ids[1], "content": [{"text": "contents 1"}], "status": "error"}},
            {"cachePoint": {"type": "default"}}
        ]})
    );
}

#[tokio::test]
async fn default_reply_echoes_converse_requests() {
    let server = server().await;
    let events = collect(
        &model(&server, NOVA),
        &context("ping"),
        options(),
        bedrock_options(),
    )
    .await;
    assert_eq!(final_message(&events).text(), "ok: ping");
    assert!(pi_ai::get_api_provider(api::BEDROCK_CONVERSE_STREAM).is_some());
}
