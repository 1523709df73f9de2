//! Both providers against mock-llm: text, thinking, tool calls split across many chunks,
//! usage and cost, cancellation, and SSE framing edge cases.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{
    BOTH, Wire, assert_contract, collect, context, final_message, kinds, model, options, server,
};
use futures_util::StreamExt;
use mock_llm::{Fault, Item, LineEnding, Script, ScriptUsage};
use pi_ai::{AssistantBlock, AssistantMessageEvent, StopReason};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn text_streams_in_order_and_completes() {
    for wire in BOTH {
        let server = server().await;
        server.push(Script::text("Hello, streaming world!").with_chunk_size(4));
        let events = collect(&model(&server, wire), &context("hi"), options()).await;
        assert_contract(&events);
        let k = kinds(&events);
        assert_eq!(k[0], "start", "{wire:?}");
        assert_eq!(k[1], "text_start", "{wire:?}");
        assert_eq!(k[k.len() - 2], "text_end", "{wire:?}");
        assert_eq!(k[k.len() - 1], "done", "{wire:?}");
        let deltas: String = events
            .iter()
            .filter_map(|e| match e {
                AssistantMessageEvent::TextDelta { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, "Hello, streaming world!");
        assert!(
            k.iter().filter(|k| **k == "text_delta").count() >= 6,
            "{wire:?}: {k:?}"
        );
        let message = final_message(&events);
        assert_eq!(message.text(), "Hello, streaming world!");
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert!(message.response_id.is_some(), "{wire:?}");
        assert_eq!(message.provider, "mock");
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
}

#[tokio::test]
async fn thinking_precedes_text_with_signature() {
    for wire in BOTH {
        let server = server().await;
        server.push(Script::new(vec![
            Item::Thinking {
                text: "Let me think about it.".into(),
                signature: Some("sig-123".into()),
            },
            Item::text("The answer is 42."),
        ]));
        let events = collect(&model(&server, wire), &context("question"), options()).await;
        assert_contract(&events);
        let k = kinds(&events);
        let thinking_end = k
            .iter()
            .position(|k| *k == "thinking_end")
            .expect("thinking_end");
        let text_start = k
            .iter()
            .position(|k| *k == "text_start")
            .expect("text_start");
        assert!(k.iter().position(|k| *k == "thinking_start").unwrap() < thinking_end);
        assert!(
            thinking_end < text_start || wire == Wire::OpenAi,
            "{wire:?}: {k:?}"
        );
        let message = final_message(&events);
        let AssistantBlock::Thinking(thinking) = &message.content[0] else {
            panic!("{message:?}")
        };
        assert_eq!(thinking.thinking, "Let me think about it.");
        match wire {
            Wire::Anthropic => assert_eq!(thinking.thinking_signature.as_deref(), Some("sig-123")),
            // OpenAI-compatible servers: the signature names the field the reasoning came in.
            Wire::OpenAi => assert_eq!(
                thinking.thinking_signature.as_deref(),
                Some("reasoning_content")
            ),
        }
        assert_eq!(message.content[1].as_text(), Some("The answer is 42."));
    }
}

#[tokio::test]
async fn openai_reads_each_reasoning_field_name() {
    for field in ["reasoning_content", "reasoning", "reasoning_text"] {
        let server = server().await;
        server.push(Script::thinking_then_text("hmm", "ok").with_reasoning_field(field));
        let events = collect(&model(&server, Wire::OpenAi), &context("q"), options()).await;
        let AssistantBlock::Thinking(t) = &final_message(&events).content[0] else {
            panic!()
        };
        assert_eq!(
            (t.thinking.as_str(), t.thinking_signature.as_deref()),
            ("hmm", Some(field))
        );
    }
}

#[tokio::test]
async fn one_tool_call_with_arguments_split_into_single_characters() {
    for wire in BOTH {
        let server = server().await;
        let args =
            serde_json::json!({"path": "src/main.rs", "offset": 10, "note": "héllo \"quoted\" ✓"});
        server.push(Script::tool_call("read", args.clone()).with_chunk_size(1));
        let events = collect(&model(&server, wire), &context("read it"), options()).await;
        assert_contract(&events);
        let deltas = events
            .iter()
            .filter(|e| e.kind() == "toolcall_delta")
            .count();
        assert!(deltas > 30, "{wire:?}: only {deltas} deltas");
        // Best-known arguments grow monotonically: every partial's path is a prefix of the final.
        let mut last_len = 0;
        for event in &events {
            if let AssistantMessageEvent::ToolcallDelta {
                partial,
                content_index,
                ..
            } = event
            {
                let AssistantBlock::ToolCall(call) = &partial.content[*content_index] else {
                    panic!()
                };
                if let Some(path) = call.arguments.get("path").and_then(|v| v.as_str()) {
                    assert!("src/main.rs".starts_with(path), "{path}");
                    assert!(path.len() >= last_len);
                    last_len = path.len();
                }
            }
        }
        let end = events.iter().find_map(|e| match e {
            AssistantMessageEvent::ToolcallEnd { tool_call, .. } => Some(tool_call.clone()),
            _ => None,
        });
        let call = end.expect("toolcall_end");
        assert_eq!(call.name, "read");
        assert!(!call.id.is_empty());
        assert_eq!(serde_json::Value::Object(call.arguments.clone()), args);
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::ToolUse);
        assert_eq!(message.tool_calls().count(), 1);
    }
}

#[tokio::test]
async fn several_tool_calls_keep_their_order_and_arguments() {
    for wire in BOTH {
        let server = server().await;
        server.push(
            Script::new(vec![
                Item::text("Reading three files."),
                Item::tool_call("read", serde_json::json!({"path": "a.txt"})),
                Item::tool_call("read", serde_json::json!({"path": "b.txt", "offset": 2})),
                Item::tool_call(
                    "write",
                    serde_json::json!({"path": "c.txt", "content": "x\ny"}),
                ),
            ])
            .with_chunk_size(3),
        );
        let events = collect(&model(&server, wire), &context("go"), options()).await;
        assert_contract(&events);
        let message = final_message(&events);
        let calls: Vec<_> = message.tool_calls().collect();
        assert_eq!(calls.len(), 3, "{wire:?}");
        assert_eq!(calls[0].arguments["path"], "a.txt");
        assert_eq!(calls[1].arguments["offset"], 2);
        assert_eq!(calls[2].name, "write");
        assert_eq!(calls[2].arguments["content"], "x\ny");
        let ids: std::collections::HashSet<_> = calls.iter().map(|c| c.id.clone()).collect();
        assert_eq!(ids.len(), 3, "distinct ids");
        assert_eq!(
            events.iter().filter(|e| e.kind() == "toolcall_end").count(),
            3
        );
        assert_eq!(message.stop_reason, StopReason::ToolUse);
    }
}

#[tokio::test]
async fn usage_and_cost_are_reported() {
    for wire in BOTH {
        let server = server().await;
        server.push(Script::text("ok").with_full_usage(ScriptUsage {
            input: 1000,
            output: 200,
            cache_read: 500,
            cache_write: 0,
            reasoning: 0,
        }));
        let events = collect(&model(&server, wire), &context("hi"), options()).await;
        let usage = final_message(&events).usage;
        assert_eq!(
            (usage.input, usage.output, usage.cache_read),
            (1000, 200, 500),
            "{wire:?}"
        );
        assert_eq!(usage.total_tokens, 1700);
        assert!((usage.cost.input - 0.003).abs() < 1e-12);
        assert!((usage.cost.output - 0.003).abs() < 1e-12);
        assert!((usage.cost.cache_read - 0.00015).abs() < 1e-12);
        assert!((usage.cost.total - 0.00615).abs() < 1e-12);
    }
}

#[tokio::test]
async fn anthropic_cache_write_is_counted() {
    let server = server().await;
    server.push(Script::text("ok").with_full_usage(ScriptUsage {
        input: 10,
        output: 5,
        cache_read: 0,
        cache_write: 4000,
        reasoning: 0,
    }));
    let events = collect(&model(&server, Wire::Anthropic), &context("hi"), options()).await;
    let usage = final_message(&events).usage;
    assert_eq!(usage.cache_write, 4000);
    assert!((usage.cost.cache_write - 0.015).abs() < 1e-12);
}

#[tokio::test]
async fn cancelling_mid_stream_ends_aborted_and_keeps_partial_text() {
    for wire in BOTH {
        let server = server().await;
        server.push(
            Script::filler(20_000)
                .with_chunk_size(20)
                .with_fault(Fault::stall(15, 20_000)),
        );
        let cancel = CancellationToken::new();
        let mut opts = options();
        opts.cancel = Some(cancel.clone());
        let mut stream = pi_ai::stream(&model(&server, wire), &context("long"), opts);
        let mut events = Vec::new();
        let guarded = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(event) = stream.next().await {
                if event.kind() == "text_delta"
                    && events
                        .iter()
                        .filter(|e: &&AssistantMessageEvent| e.kind() == "text_delta")
                        .count()
                        == 5
                {
                    cancel.cancel();
                }
                events.push(event);
            }
        })
        .await;
        assert!(
            guarded.is_ok(),
            "{wire:?}: cancellation did not end the stream"
        );
        assert_contract(&events);
        let AssistantMessageEvent::Error { reason, error } = events.last().unwrap() else {
            panic!("{wire:?}: {:?}", kinds(&events))
        };
        assert_eq!(*reason, StopReason::Aborted);
        assert_eq!(error.stop_reason, StopReason::Aborted);
        assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
        assert!(
            error.text().len() >= 100,
            "{wire:?}: partial text kept ({} bytes)",
            error.text().len()
        );
    }
}

#[tokio::test]
async fn cancelling_before_the_response_ends_aborted() {
    for wire in BOTH {
        let server = server().await;
        let cancel = CancellationToken::new();
        cancel.cancel();
        let mut opts = options();
        opts.cancel = Some(cancel);
        let events = collect(&model(&server, wire), &context("x"), opts).await;
        assert_contract(&events);
        assert_eq!(final_message(&events).stop_reason, StopReason::Aborted);
    }
}

#[tokio::test]
async fn utf8_and_crlf_split_across_network_chunks_decode_intact() {
    let text = "Grüße, 世界! 🎉 naïve café — “quotes” ✓";
    for wire in BOTH {
        for bytes in [1, 2, 3, 5] {
            let server = server().await;
            server.push(
                Script::new(vec![
                    Item::thinking("思考中…"),
                    Item::text(text),
                    Item::tool_call("read", serde_json::json!({"path": "ü.txt"})),
                ])
                .with_chunk_size(2)
                .with_line_ending(LineEnding::Crlf)
                .with_write_chunk_bytes(bytes),
            );
            let events = collect(&model(&server, wire), &context("x"), options()).await;
            assert_contract(&events);
            let message = final_message(&events);
            assert_eq!(message.text(), text, "{wire:?} split {bytes}");
            let AssistantBlock::Thinking(t) = &message.content[0] else {
                panic!()
            };
            assert_eq!(t.thinking, "思考中…");
            assert_eq!(
                message.tool_calls().next().unwrap().arguments["path"],
                "ü.txt"
            );
        }
    }
}

#[tokio::test]
async fn very_long_output_completes() {
    for wire in BOTH {
        let server = server().await;
        server.push(Script::filler(1_000_000).with_chunk_size(64));
        // Consume as a streaming UI does: each event is dropped before the next arrives, so
        // the partial message is never copied (holding every event would snapshot each one).
        let mut stream = pi_ai::stream(&model(&server, wire), &context("long"), options());
        let mut deltas = 0;
        let mut last = None;
        while let Some(event) = stream.next().await {
            if event.kind() == "text_delta" {
                deltas += 1;
            }
            if event.is_terminal() {
                last = Some(event);
            }
        }
        let last = last.expect("terminal event");
        assert_eq!(last.kind(), "done", "{wire:?}");
        assert_eq!(last.message().stop_reason, StopReason::Stop);
        assert_eq!(last.message().text().len(), 1_000_000);
        assert!(deltas >= 15_000, "{deltas}");
    }
}

#[tokio::test]
async fn complete_returns_the_final_message() {
    for wire in BOTH {
        let server = server().await;
        server.push(Script::text("done"));
        let message = pi_ai::complete(&model(&server, wire), &context("x"), options()).await;
        assert_eq!(message.text(), "done");
        assert_eq!(message.stop_reason, StopReason::Stop);
    }
}

#[tokio::test]
async fn default_echo_reply_round_trip() {
    // The mock's echo behaviour (used by the TypeScript pi's traces) through both wires.
    for wire in BOTH {
        let server = server().await;
        let message = pi_ai::complete(&model(&server, wire), &context("hi"), options()).await;
        assert_eq!(message.text(), "ok: hi", "{wire:?}");
    }
}
