//! The Responses APIs (`openai-responses`, `azure-openai-responses`, `openai-codex-responses`)
//! streaming from mock-llm: text and growing partials, reasoning returned next turn, parallel
//! and character-split tool calls, usage, cached tokens and service tiers, length limits and long
//! output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use futures_util::StreamExt;
use mock_llm::{Item, Script, ScriptUsage, StopReason as ScriptStop};
use pi_ai::{
    AssistantBlock, AssistantMessageEvent, InputBlock, Message, OpenAiResponsesOptions, StopReason,
    ThinkingLevel, ToolCall, UserMessage,
};
use serde_json::{Value, json};

use common::responses::{ALL, Api, input, model, options, run, simple, tool_result};
use common::{assert_contract, collect, context, final_message, keys, kinds, server};

#[tokio::test]
async fn text_streams_in_order_for_each_api() {
    for which in ALL {
        let (message, request) = run(
            which,
            Script::text("Hello, streaming world!").with_chunk_size(4),
            &context("hi"),
            options(which),
        )
        .await;
        assert_eq!(message.text(), "Hello, streaming world!", "{which:?}");
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert!(
            message
                .response_id
                .as_deref()
                .is_some_and(|id| id.starts_with("resp_mock")),
            "{which:?}: {:?}",
            message.response_id
        );
        let AssistantBlock::Text(text) = &message.content[0] else {
            panic!("{message:?}")
        };
        let signature: Value =
            serde_json::from_str(text.text_signature.as_deref().unwrap()).unwrap();
        assert_eq!(signature["v"], 1);
        assert!(signature["id"].as_str().unwrap().starts_with("msg_mock"));
        let expected_path = match which {
            Api::OpenAi => "/v1/responses",
            Api::Azure => "/openai/v1/responses",
            Api::Codex => "/backend-api/codex/responses",
        };
        assert_eq!(request.path, expected_path);
    }
}

#[tokio::test]
async fn text_events_carry_growing_partials() {
    for which in ALL {
        let server = server().await;
        server.push(Script::text("Hello, streaming world!").with_chunk_size(4));
        let events = collect(&model(&server, which), &context("hi"), options(which)).await;
        assert_contract(&events);
        let k = kinds(&events);
        assert_eq!(&k[..2], ["start", "text_start"], "{which:?}");
        assert_eq!(&k[k.len() - 2..], ["text_end", "done"], "{which:?}");
        assert_eq!(k.iter().filter(|k| **k == "text_delta").count(), 6);
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
async fn reasoning_streams_as_thinking_and_returns_next_turn() {
    for which in ALL {
        let server = server().await;
        let m = model(&server, which);
        server.push(
            Script::thinking_then_text("Let me think about it.", "The answer is 42.")
                .with_chunk_size(5),
        );
        let ctx = context("question");
        let opts = simple(which, Some(ThinkingLevel::High));
        let events = tokio::time::timeout(
            Duration::from_secs(30),
            pi_ai::stream_simple(&m, &ctx, opts).collect::<Vec<_>>(),
        )
        .await
        .unwrap();
        assert_contract(&events);
        let k = kinds(&events);
        let thinking_end = k.iter().position(|k| *k == "thinking_end").unwrap();
        let text_start = k.iter().position(|k| *k == "text_start").unwrap();
        assert!(thinking_end < text_start, "{which:?}: {k:?}");
        let thinking_deltas: String = events
            .iter()
            .filter_map(|e| match e {
                AssistantMessageEvent::ThinkingDelta { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        // The summary part's end adds a paragraph break; the final text is the summary.
        assert_eq!(thinking_deltas, "Let me think about it.\n\n");
        let message = final_message(&events).clone();
        let AssistantBlock::Thinking(thinking) = &message.content[0] else {
            panic!("{message:?}")
        };
        assert_eq!(thinking.thinking, "Let me think about it.");
        let item: Value =
            serde_json::from_str(thinking.thinking_signature.as_deref().unwrap()).unwrap();
        assert_eq!(item["type"], "reasoning");
        assert!(item["id"].as_str().unwrap().starts_with("rs_mock"));
        let encrypted = item["encrypted_content"]
            .as_str()
            .expect("encrypted reasoning");
        assert!(encrypted.starts_with("gAAAA"), "{which:?}");
        assert_eq!(item["summary"][0]["text"], "Let me think about it.");

        let first = server.requests().pop().unwrap().body;
        assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(
            first["reasoning"],
            json!({"effort": "high", "summary": "auto"})
        );

        // Next turn: the reasoning item goes back verbatim, before the assistant's message.
        let mut ctx = ctx.clone();
        ctx.messages
            .push(Message::Assistant(message.clone().into()));
        ctx.messages
            .push(Message::User(UserMessage::text("and then?")));
        server.push(Script::text("done"));
        let _ = pi_ai::stream_simple(&m, &ctx, simple(which, Some(ThinkingLevel::High)))
            .result()
            .await;
        let second = server.requests().pop().unwrap().body;
        let items = input(&second);
        // The system prompt leads the input on every Responses API (Codex too, as pi-ai 1.6).
        let offset = 1;
        assert_eq!(items[offset]["role"], "user");
        assert_eq!(
            items[offset + 1],
            item,
            "{which:?}: reasoning item replayed"
        );
        let text_item = &items[offset + 2];
        assert_eq!(text_item["type"], "message");
        assert_eq!(text_item["role"], "assistant");
        assert_eq!(text_item["status"], "completed");
        assert!(text_item["id"].as_str().unwrap().starts_with("msg_mock"));
        assert_eq!(
            text_item["content"],
            json!([{"type": "output_text", "text": "The answer is 42.", "annotations": []}])
        );
        assert_eq!(items[offset + 3]["content"][0]["text"], "and then?");
    }
}

#[tokio::test]
async fn parallel_tool_calls_with_split_arguments() {
    for which in ALL {
        let script = Script::new(vec![
            Item::text("Reading three files."),
            Item::tool_call("read", json!({"path": "a.txt"})),
            Item::tool_call("read", json!({"path": "b.txt", "offset": 2})),
            Item::tool_call("write", json!({"path": "c.txt", "content": "x\ny \"q\" ✓"})),
        ])
        .with_chunk_size(3);
        let server = server().await;
        server.push(script);
        let m = model(&server, which);
        let events = collect(&m, &context("go"), options(which)).await;
        assert_contract(&events);
        let message = final_message(&events).clone();
        assert_eq!(message.stop_reason, StopReason::ToolUse, "{which:?}");
        let calls: Vec<&ToolCall> = message.tool_calls().collect();
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].arguments["path"], "a.txt");
        assert_eq!(calls[1].arguments["offset"], 2);
        assert_eq!(calls[2].name, "write");
        assert_eq!(calls[2].arguments["content"], "x\ny \"q\" ✓");
        for c in &calls {
            let (call_id, item_id) = c.id.split_once('|').expect("call_id|item_id");
            assert!(call_id.starts_with("call_"), "{}", c.id);
            assert!(item_id.starts_with("fc_mock"), "{}", c.id);
        }
        assert_eq!(
            events.iter().filter(|e| e.kind() == "toolcall_end").count(),
            3
        );
        assert!(
            events
                .iter()
                .filter(|e| e.kind() == "toolcall_delta")
                .count()
                > 10
        );

        // The results go back as function_call_output items after the calls.
        let mut ctx = context("go");
        ctx.messages
            .push(Message::Assistant(message.clone().into()));
        for (i, c) in calls.iter().enumerate() {
            ctx.messages.push(tool_result(
                &c.id,
                vec![InputBlock::text(format!("result {i}"))],
            ));
        }
        server.push(Script::text("ok"));
        let _ = pi_ai::complete(&m, &ctx, options(which)).await;
        let body = server.requests().pop().unwrap().body;
        let items = input(&body);
        let function_calls: Vec<&Value> = items
            .iter()
            .filter(|i| i["type"] == "function_call")
            .collect();
        let outputs: Vec<&Value> = items
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .collect();
        assert_eq!(function_calls.len(), 3);
        assert_eq!(outputs.len(), 3);
        for (i, (fc, out)) in function_calls.iter().zip(&outputs).enumerate() {
            let (call_id, item_id) = calls[i].id.split_once('|').unwrap();
            assert_eq!(
                keys(fc),
                ["type", "id", "call_id", "name", "arguments"],
                "{fc}"
            );
            assert_eq!(fc["call_id"], call_id);
            assert_eq!(fc["id"], item_id);
            let args: Value = serde_json::from_str(fc["arguments"].as_str().unwrap()).unwrap();
            assert_eq!(Value::Object(calls[i].arguments.clone()), args);
            assert_eq!(
                **out,
                json!({"type": "function_call_output", "call_id": call_id, "output": format!("result {i}")})
            );
        }
        let last_call = items
            .iter()
            .rposition(|i| i["type"] == "function_call")
            .unwrap();
        let first_output = items
            .iter()
            .position(|i| i["type"] == "function_call_output")
            .unwrap();
        assert!(last_call < first_output);
        assert!(!body.to_string().contains("\"role\":\"tool\""));
    }
}

#[tokio::test]
async fn one_tool_call_split_into_single_characters() {
    for which in ALL {
        let args = json!({"path": "src/main.rs", "offset": 10, "note": "héllo \"quoted\" ✓"});
        let server = server().await;
        server.push(Script::tool_call("read", args.clone()).with_chunk_size(1));
        let events = collect(&model(&server, which), &context("read it"), options(which)).await;
        assert_contract(&events);
        let deltas = events
            .iter()
            .filter(|e| e.kind() == "toolcall_delta")
            .count();
        assert!(deltas > 30, "{which:?}: only {deltas} deltas");
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
                if let Some(path) = call.arguments.get("path").and_then(Value::as_str) {
                    assert!("src/main.rs".starts_with(path), "{path}");
                    assert!(path.len() >= last_len);
                    last_len = path.len();
                }
            }
        }
        let message = final_message(&events);
        let call = message.tool_calls().next().unwrap();
        assert_eq!(Value::Object(call.arguments.clone()), args);
        assert_eq!(message.stop_reason, StopReason::ToolUse);
    }
}

#[tokio::test]
async fn usage_with_cached_tokens_and_cost() {
    for which in ALL {
        let script = Script::text("ok").with_full_usage(ScriptUsage {
            input: 1000,
            output: 200,
            cache_read: 500,
            cache_write: 0,
            reasoning: 0,
        });
        let (message, _) = run(which, script, &context("hi"), options(which)).await;
        let usage = message.usage;
        // input_tokens (1500) includes the 500 cached ones.
        assert_eq!(
            (
                usage.input,
                usage.output,
                usage.cache_read,
                usage.cache_write
            ),
            (1000, 200, 500, 0),
            "{which:?}"
        );
        assert_eq!(usage.total_tokens, 1700);
        assert!((usage.cost.input - 0.003).abs() < 1e-12);
        assert!((usage.cost.output - 0.003).abs() < 1e-12);
        assert!((usage.cost.cache_read - 0.00015).abs() < 1e-12);
        assert!((usage.cost.total - 0.00615).abs() < 1e-12);
    }
}

#[tokio::test]
async fn service_tiers_reprice_except_on_azure() {
    let usage = ScriptUsage {
        input: 1000,
        output: 200,
        cache_read: 0,
        cache_write: 0,
        reasoning: 0,
    };
    for (which, tier, factor) in [
        (Api::OpenAi, "flex", 0.5),
        (Api::OpenAi, "priority", 2.0),
        (Api::OpenAi, "fast", 2.0),
        (Api::Codex, "priority", 2.0),
        (Api::Codex, "fast", 1.0),
        (Api::Azure, "flex", 1.0),
    ] {
        let mut opts = options(which);
        opts.openai_responses = Some(OpenAiResponsesOptions {
            service_tier: Some(tier.into()),
            ..Default::default()
        });
        let script = Script::text("ok").with_full_usage(usage);
        let (message, request) = run(which, script, &context("hi"), opts).await;
        let expected = (0.003 + 0.003) * factor;
        assert!(
            (message.usage.cost.total - expected).abs() < 1e-12,
            "{which:?} {tier}: {}",
            message.usage.cost.total
        );
        let sent_tier = request.body.get("service_tier");
        if which == Api::Azure {
            assert_eq!(sent_tier, None);
        } else {
            assert_eq!(sent_tier, Some(&json!(tier)));
        }
    }
}

#[tokio::test]
async fn length_limit_ends_incomplete() {
    for which in ALL {
        let script = Script::text("cut off mid").with_stop_reason(ScriptStop::Length);
        let (message, _) = run(which, script, &context("hi"), options(which)).await;
        assert_eq!(message.stop_reason, StopReason::Length, "{which:?}");
        assert_eq!(message.text(), "cut off mid");
    }
}

#[tokio::test]
async fn default_echo_reply_round_trip() {
    for which in ALL {
        let server = server().await;
        let m = model(&server, which);
        let message = pi_ai::complete(&m, &context("hi"), options(which)).await;
        assert_eq!(message.text(), "ok: hi", "{which:?}");
        let message = pi_ai::complete(&m, &context("read notes.txt"), options(which)).await;
        let call = message.tool_calls().next().expect("echo tool call");
        assert_eq!(call.arguments["path"], "notes.txt");
    }
}

#[tokio::test]
async fn very_long_output_completes() {
    for which in ALL {
        let server = server().await;
        server.push(Script::filler(1_000_000).with_chunk_size(64));
        // Consumed as a UI does: each event dropped before the next, so partials are not copied.
        let mut stream = pi_ai::stream(&model(&server, which), &context("long"), options(which));
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
        assert_eq!(last.kind(), "done", "{which:?}");
        assert_eq!(last.message().text().len(), 1_000_000);
        assert!(deltas >= 15_000, "{deltas}");
    }
}
