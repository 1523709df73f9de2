//! The three Responses APIs (`openai-responses`, `azure-openai-responses`,
//! `openai-codex-responses`) against mock-llm: streaming, reasoning carried across turns,
//! tool calls, usage and cost, images, cancellation, every fault, and the request bodies and
//! headers each API is sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mock_llm::{Fault, Item, Script, ScriptUsage, StopReason as ScriptStop};
use pi_ai::providers::openai_responses;
use pi_ai::{
    AssistantBlock, AssistantMessageEvent, CacheRetention, ImageContent, InputBlock, InputKind,
    Message, Model, OpenAiResponsesOptions, StopReason, TextContent, ThinkingLevel, ToolCall,
    UserMessage, api,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use common::responses::{
    ACCOUNT_ID, ALL, Api, api_id, codex_token, input, model, options, provider_id, replay, run,
    sent, simple, tool_result,
};
use common::{
    assert_contract, collect, context, error_text, final_message, keys, kinds, read_call,
    read_tool, server, tool_use_turn,
};

// ---------------------------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------------------------

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
        let offset = usize::from(which != Api::Codex);
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
async fn foreign_thinking_is_sent_as_text_not_as_reasoning() {
    for which in ALL {
        let mut ctx = context("q");
        let mut thinking = pi_ai::ThinkingContent::new("Claude thought.");
        thinking.thinking_signature = Some("sig-anthropic".into());
        ctx.messages.push(tool_use_turn(
            "anthropic-messages",
            "anthropic",
            "claude",
            vec![
                AssistantBlock::Thinking(thinking),
                AssistantBlock::Text(TextContent::new("Claude said.")),
            ],
        ));
        ctx.messages.push(Message::User(UserMessage::text("next")));
        let (body, _) = sent(which, |_| {}, &ctx, simple(which, None)).await;
        let items = input(&body);
        assert!(!items.iter().any(|i| i["type"] == "reasoning"), "{body}");
        let texts: Vec<&Value> = items.iter().filter(|i| i["type"] == "message").collect();
        assert_eq!(texts.len(), 2, "{body}");
        assert_eq!(texts[0]["content"][0]["text"], "Claude thought.");
        assert_eq!(texts[1]["content"][0]["text"], "Claude said.");
        assert_eq!(texts[1]["id"], "msg_1");
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
    };
    for (which, tier, factor) in [
        (Api::OpenAi, "flex", 0.5),
        (Api::OpenAi, "priority", 2.0),
        (Api::Codex, "priority", 2.0),
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
async fn images_in_user_messages_and_tool_results() {
    let image = ImageContent::new("iVBORw0KGgo=", "image/png");
    let data_url = "data:image/png;base64,iVBORw0KGgo=";
    for which in ALL {
        let mut ctx = context("unused");
        ctx.messages = vec![Message::User(UserMessage::blocks(vec![
            InputBlock::Text(TextContent::new("What is this?")),
            InputBlock::Image(image.clone()),
        ]))];
        ctx.messages.push(tool_use_turn(
            api_id(which),
            provider_id(which),
            "gpt-mock",
            vec![
                read_call("call_1|fc_1", "a.png"),
                read_call("call_2|fc_2", "b.png"),
            ],
        ));
        ctx.messages.push(tool_result(
            "call_1|fc_1",
            vec![
                InputBlock::text("an image"),
                InputBlock::Image(image.clone()),
            ],
        ));
        ctx.messages.push(tool_result(
            "call_2|fc_2",
            vec![InputBlock::Image(image.clone())],
        ));
        let (body, _) = sent(which, |_| {}, &ctx, simple(which, None)).await;
        let items = input(&body);
        let user = items.iter().find(|i| i["role"] == "user").unwrap();
        assert_eq!(
            user["content"],
            json!([{"type": "input_text", "text": "What is this?"},
                   {"type": "input_image", "detail": "auto", "image_url": data_url}])
        );
        let outputs: Vec<&Value> = items
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .collect();
        assert_eq!(
            outputs[0]["output"],
            json!([{"type": "input_text", "text": "an image"},
                   {"type": "input_image", "detail": "auto", "image_url": data_url}])
        );
        assert_eq!(
            outputs[1]["output"],
            json!([{"type": "input_image", "detail": "auto", "image_url": data_url}])
        );

        // A text-only model gets placeholders instead.
        let (body, _) = sent(
            which,
            |m| m.input = vec![InputKind::Text],
            &ctx,
            simple(which, None),
        )
        .await;
        let text = body.to_string();
        assert!(!text.contains("iVBORw0KGgo="), "{which:?}");
        assert!(text.contains("(image omitted: model does not support images)"));
        assert!(text.contains("(tool image omitted: model does not support images)"));
    }
}

#[tokio::test]
async fn cancelling_mid_stream_ends_aborted_and_keeps_partial_text() {
    for which in ALL {
        let server = server().await;
        server.push(
            Script::filler(20_000)
                .with_chunk_size(20)
                .with_fault(Fault::stall(15, 20_000)),
        );
        let cancel = CancellationToken::new();
        let mut opts = options(which);
        opts.cancel = Some(cancel.clone());
        let mut stream = pi_ai::stream(&model(&server, which), &context("long"), opts);
        let mut events: Vec<AssistantMessageEvent> = Vec::new();
        let guarded = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(event) = stream.next().await {
                if event.kind() == "text_delta"
                    && events.iter().filter(|e| e.kind() == "text_delta").count() == 5
                {
                    cancel.cancel();
                }
                events.push(event);
            }
        })
        .await;
        assert!(
            guarded.is_ok(),
            "{which:?}: cancellation did not end the stream"
        );
        assert_contract(&events);
        let AssistantMessageEvent::Error { reason, error } = events.last().unwrap() else {
            panic!("{which:?}: {:?}", kinds(&events))
        };
        assert_eq!(*reason, StopReason::Aborted);
        assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
        assert!(error.text().len() >= 100, "{which:?}: partial text kept");
    }
}

#[tokio::test]
async fn cancelling_before_the_response_ends_aborted() {
    for which in ALL {
        let server = server().await;
        let cancel = CancellationToken::new();
        cancel.cancel();
        let mut opts = options(which);
        opts.cancel = Some(cancel);
        let events = collect(&model(&server, which), &context("x"), opts).await;
        assert_contract(&events);
        assert_eq!(final_message(&events).stop_reason, StopReason::Aborted);
    }
}

#[tokio::test]
async fn stall_then_cancel_ends_aborted() {
    for which in ALL {
        let server = server().await;
        server.push(
            Script::text("slow")
                .with_chunk_size(1)
                .with_fault(Fault::stall(4, 20_000)),
        );
        let cancel = CancellationToken::new();
        let mut opts = options(which);
        opts.cancel = Some(cancel.clone());
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        });
        let started = Instant::now();
        let events = collect(&model(&server, which), &context("x"), opts).await;
        canceller.await.unwrap();
        assert_contract(&events);
        assert!(started.elapsed() < Duration::from_secs(5));
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::Aborted, "{which:?}");
        assert_eq!(
            message.error_message.as_deref(),
            Some("Request was aborted")
        );
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
async fn recorded_bodies_replay_through_decode_sse_bytes() {
    let script = Script::new(vec![
        Item::thinking("plan"),
        Item::text("Grüße 🎉"),
        Item::tool_call("read", json!({"path": "ü.txt"})),
    ])
    .with_chunk_size(2);
    for which in ALL {
        let body = mock_llm::render_body(api_id(which), &script).expect("wire format");
        let server = server().await;
        let m = model(&server, which);
        let pieces: Vec<Result<bytes::Bytes, std::io::Error>> = body
            .chunks(7)
            .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
            .collect();
        let stream = openai_responses::decode_sse_bytes(
            &m,
            futures_util::stream::iter(pieces),
            CancellationToken::new(),
        );
        let message = stream.result().await;
        assert_eq!(
            message.stop_reason,
            StopReason::ToolUse,
            "{which:?}: {message:?}"
        );
        assert_eq!(message.text(), "Grüße 🎉");
        assert_eq!(
            message.tool_calls().next().unwrap().arguments["path"],
            "ü.txt"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn http_errors_are_worded_like_each_client() {
    for which in ALL {
        for (status, openai_text, codex_text) in [
            (
                429,
                "429 Rate limit reached for requests",
                "You have hit your ChatGPT usage limit.",
            ),
            (
                500,
                "500 The server had an error while processing your request.",
                "The server had an error while processing your request.",
            ),
            (400, "400 Bad request", "Bad request"),
        ] {
            let (message, _) = run(
                which,
                Script::http_error(status),
                &context("hi"),
                options(which),
            )
            .await;
            let expected = if which == Api::Codex {
                codex_text
            } else {
                openai_text
            };
            assert_eq!(error_text(&message), expected, "{which:?} {status}");
            assert!(message.content.is_empty());
        }
    }
}

#[tokio::test]
async fn retries_after_429_with_retry_after_then_succeeds() {
    for which in ALL {
        let server = server().await;
        server.push(Script::http_error(429).with_fault(Fault::HttpError {
            status: 429,
            retry_after: Some("1".into()),
            retry_after_ms: None,
            body: None,
        }));
        server.push(Script::text("finally"));
        let mut opts = options(which);
        opts.max_retries = Some(2);
        let started = Instant::now();
        let events = collect(&model(&server, which), &context("hi"), opts).await;
        assert_contract(&events);
        assert_eq!(final_message(&events).text(), "finally", "{which:?}");
        assert_eq!(server.requests().len(), 2);
        // OpenAI and Azure wait the second the server asked for; Codex backs off 1 s.
        assert!(started.elapsed() >= Duration::from_millis(950), "{which:?}");
    }
}

#[tokio::test]
async fn codex_retries_server_errors_and_stops_at_usage_limits() {
    let server = server().await;
    server.push(Script::http_error(503));
    server.push(Script::text("recovered"));
    let mut opts = options(Api::Codex);
    opts.max_retries = Some(3);
    let m = model(&server, Api::Codex);
    let message = pi_ai::complete(&m, &context("hi"), opts.clone()).await;
    assert_eq!(message.text(), "recovered");
    assert_eq!(server.requests().len(), 2);

    // A usage limit on a non-retryable status fails at once.
    server.clear_requests();
    let body = r#"{"error":{"code":"usage_limit_reached","message":"limit","plan_type":"plus"}}"#;
    server.push(Script::http_error(403).with_fault(Fault::HttpError {
        status: 403,
        retry_after: None,
        retry_after_ms: None,
        body: Some(body.into()),
    }));
    let message = pi_ai::complete(&m, &context("hi"), opts).await;
    assert_eq!(
        error_text(&message),
        "You have hit your ChatGPT usage limit (plus plan)."
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn retry_after_beyond_the_cap_fails_at_once() {
    for which in [Api::OpenAi, Api::Azure] {
        let script = Script::http_error(429).with_fault(Fault::HttpError {
            status: 429,
            retry_after: Some("120".into()),
            retry_after_ms: None,
            body: None,
        });
        let mut opts = options(which);
        opts.max_retries = Some(3);
        opts.max_retry_delay_ms = Some(5_000);
        let (message, _) = run(which, script, &context("hi"), opts).await;
        assert!(
            error_text(&message).starts_with("Server requested 120s retry delay (max: 5s). 429 "),
            "{which:?}: {:?}",
            message.error_message
        );
    }
}

#[tokio::test]
async fn connection_dropped_mid_stream() {
    for which in ALL {
        let script = Script::text("a fairly long answer that will be cut off")
            .with_chunk_size(3)
            .with_fault(Fault::drop_after(7));
        let (message, _) = run(which, script, &context("hi"), options(which)).await;
        let text = error_text(&message);
        assert!(text.starts_with("Connection error"), "{which:?}: {text}");
        assert!(!message.text().is_empty(), "partial text kept");
    }
}

#[tokio::test]
async fn malformed_chunk() {
    for which in ALL {
        let script = Script::text("hello there")
            .with_chunk_size(2)
            .with_fault(Fault::malformed_after(5));
        let (message, _) = run(which, script, &context("hi"), options(which)).await;
        let text = error_text(&message);
        let expected = if which == Api::Codex {
            "Invalid Codex SSE JSON"
        } else {
            "Could not parse"
        };
        assert!(text.starts_with(expected), "{which:?}: {text}");
    }
}

#[tokio::test]
async fn stall_longer_than_the_idle_timeout() {
    for which in ALL {
        let script = Script::text("slow")
            .with_chunk_size(1)
            .with_fault(Fault::stall(4, 10_000));
        let mut opts = options(which);
        opts.idle_timeout_ms = Some(300);
        let (message, _) = run(which, script, &context("hi"), opts).await;
        let text = error_text(&message);
        assert!(
            text.contains("timed out") && text.contains("0.3s"),
            "{which:?}: {text}"
        );
    }
}

#[tokio::test]
async fn stall_shorter_than_the_idle_timeout_is_tolerated() {
    for which in ALL {
        let script = Script::text("slow but fine").with_fault(Fault::stall(3, 300));
        let (message, _) = run(which, script, &context("hi"), options(which)).await;
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert_eq!(message.text(), "slow but fine");
    }
}

#[tokio::test]
async fn in_stream_failure() {
    for which in ALL {
        let script = Script::text("partial answer").with_fault(Fault::StreamError {
            after_events: 5,
            message: Some("upstream exploded".into()),
        });
        let (message, _) = run(which, script, &context("hi"), options(which)).await;
        let expected = if which == Api::Codex {
            "upstream exploded"
        } else {
            "server_error: upstream exploded"
        };
        assert_eq!(error_text(&message), expected, "{which:?}");
        assert_eq!(message.text(), "partial ", "{which:?}: partial text kept");
    }
}

#[tokio::test]
async fn error_events_are_worded_like_each_client() {
    let body = "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\"}}\n\n\
                event: error\ndata: {\"type\":\"error\",\"sequence_number\":1,\"code\":\"rate_limit_exceeded\",\"message\":\"Slow down\",\"param\":null}\n\n";
    let openai = replay(Api::OpenAi, body).await;
    assert_eq!(
        error_text(&openai),
        "Error Code rate_limit_exceeded: Slow down"
    );
    assert_eq!(openai.response_id.as_deref(), Some("resp_1"));
    let codex = replay(Api::Codex, body).await;
    assert_eq!(error_text(&codex), "Codex error: Slow down");

    // The OpenAI SDK fails on any event carrying `error`.
    let body = "data: {\"error\":{\"message\":\"Internal failure\",\"type\":\"server_error\"}}\n\n";
    assert_eq!(
        error_text(&replay(Api::Azure, body).await),
        "Internal failure"
    );

    // A stream that ends without a terminal event is an error, not a silent stop.
    let body = "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_2\"}}\n\n";
    for which in ALL {
        let message = replay(which, body).await;
        assert!(
            error_text(&message).starts_with("Connection error"),
            "{which:?}"
        );
    }
}

#[tokio::test]
async fn refusals_and_phases_become_text_and_signature() {
    let body = concat!(
        "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_9\",\"type\":\"message\",\"content\":[],\"role\":\"assistant\"}}\n\n",
        "data: {\"type\":\"response.content_part.added\",\"output_index\":0,\"part\":{\"type\":\"refusal\",\"refusal\":\"\"}}\n\n",
        "data: {\"type\":\"response.refusal.delta\",\"output_index\":0,\"delta\":\"I can't\"}\n\n",
        "data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"id\":\"msg_9\",\"type\":\"message\",\"phase\":\"final_answer\",\"content\":[{\"type\":\"refusal\",\"refusal\":\"I can't help.\"}],\"role\":\"assistant\"}}\n\n",
        "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_9\",\"status\":\"completed\",\"usage\":{\"input_tokens\":5,\"output_tokens\":3,\"total_tokens\":8}}}\n\n",
    );
    let message = replay(Api::OpenAi, body).await;
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.text(), "I can't help.");
    let AssistantBlock::Text(text) = &message.content[0] else {
        panic!()
    };
    assert_eq!(
        text.text_signature.as_deref(),
        Some(r#"{"v":1,"id":"msg_9","phase":"final_answer"}"#)
    );
    assert_eq!((message.usage.input, message.usage.total_tokens), (5, 8));
}

#[tokio::test]
async fn unreachable_server_is_a_connection_error() {
    for which in ALL {
        let server = server().await;
        let mut m = model(&server, which);
        server.shutdown().await;
        m.base_url = "http://127.0.0.1:9/v1".into();
        let events = collect(&m, &context("hi"), options(which)).await;
        assert_contract(&events);
        let expected = if which == Api::Codex {
            "fetch failed"
        } else {
            "Connection error."
        };
        assert_eq!(error_text(final_message(&events)), expected, "{which:?}");
    }
}

#[tokio::test]
async fn missing_or_unusable_keys() {
    for which in ALL {
        let server = server().await;
        let mut m = model(&server, which);
        m.provider = "no-such-provider".into();
        let mut opts = simple(which, None);
        opts.stream.api_key = None;
        let message = pi_ai::stream_simple(&m, &context("hi"), opts)
            .result()
            .await;
        assert_eq!(
            error_text(&message),
            "No API key for provider: no-such-provider"
        );
        assert!(server.requests().is_empty());
    }
    let server = server().await;
    let m = model(&server, Api::Codex);
    let mut opts = options(Api::Codex);
    opts.api_key = Some("sk-not-a-jwt".into());
    let message = pi_ai::complete(&m, &context("hi"), opts).await;
    assert_eq!(
        error_text(&message),
        "Failed to extract accountId from token"
    );
    assert!(server.requests().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Request bodies and headers
// ---------------------------------------------------------------------------------------------

/// Fields of Chat Completions that must never appear in a Responses body.
const CHAT_FIELDS: [&str; 6] = [
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "stream_options",
    "functions",
    "n",
];

#[tokio::test]
async fn openai_body_layout() {
    let mut ctx = context("read hello.txt");
    ctx.messages.push(tool_use_turn(
        api::OPENAI_RESPONSES,
        "openai",
        "gpt-mock",
        vec![read_call("call_abc|fc_abc", "hello.txt")],
    ));
    ctx.messages.push(tool_result(
        "call_abc|fc_abc",
        vec![InputBlock::text("Hello from the file!\n")],
    ));
    let (body, headers) = sent(Api::OpenAi, |_| {}, &ctx, simple(Api::OpenAi, None)).await;
    assert_eq!(
        keys(&body),
        [
            "model",
            "input",
            "stream",
            "store",
            "max_output_tokens",
            "tools",
            "reasoning"
        ]
    );
    assert_eq!(body["model"], "gpt-mock");
    assert_eq!(body["stream"], true);
    assert_eq!(body["store"], false);
    assert_eq!(body["max_output_tokens"], 16384);
    // A reasoning model without a level is asked for no reasoning.
    assert_eq!(body["reasoning"], json!({"effort": "none"}));
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "name": "read", "description": "Read a file",
            "parameters": read_tool().parameters, "strict": false}])
    );
    assert_eq!(
        *input(&body),
        vec![
            json!({"role": "developer", "content": "You are a test."}),
            json!({"role": "user", "content": [{"type": "input_text", "text": "read hello.txt"}]}),
            json!({"type": "function_call", "id": "fc_abc", "call_id": "call_abc", "name": "read",
                "arguments": "{\"path\":\"hello.txt\"}"}),
            json!({"type": "function_call_output", "call_id": "call_abc",
                "output": "Hello from the file!\n"}),
        ]
    );
    for field in CHAT_FIELDS {
        assert!(body.get(field).is_none(), "{field}");
    }
    assert_eq!(headers["authorization"], "Bearer test-key");
    assert_eq!(headers["content-type"], "application/json");
    assert!(!headers.contains_key("session_id"));
}

#[tokio::test]
async fn non_reasoning_models_get_a_system_message_and_no_reasoning() {
    for which in [Api::OpenAi, Api::Azure] {
        let (body, _) = sent(
            which,
            |m| m.reasoning = false,
            &context("hi"),
            simple(which, Some(ThinkingLevel::High)),
        )
        .await;
        assert_eq!(
            input(&body)[0],
            json!({"role": "system", "content": "You are a test."})
        );
        assert!(body.get("reasoning").is_none());
        assert!(body.get("include").is_none());
    }
}

#[tokio::test]
async fn reasoning_levels_and_maps() {
    let off_unsupported = |m: &mut Model| {
        m.thinking_level_map = Some(BTreeMap::from([
            (ThinkingLevel::Off, None),
            (ThinkingLevel::Xhigh, Some("xhigh".into())),
            (ThinkingLevel::Minimal, Some("low".into())),
        ]));
    };
    for which in [Api::OpenAi, Api::Azure] {
        // A model that cannot turn reasoning off gets no reasoning field without a level.
        let (body, _) = sent(which, off_unsupported, &context("hi"), simple(which, None)).await;
        assert!(body.get("reasoning").is_none(), "{which:?}: {body}");
        let (body, _) = sent(
            which,
            off_unsupported,
            &context("hi"),
            simple(which, Some(ThinkingLevel::Minimal)),
        )
        .await;
        assert_eq!(
            body["reasoning"],
            json!({"effort": "low", "summary": "auto"})
        );
        // Without an xhigh mapping, xhigh clamps to high.
        let (body, _) = sent(
            which,
            |_| {},
            &context("hi"),
            simple(which, Some(ThinkingLevel::Xhigh)),
        )
        .await;
        assert_eq!(body["reasoning"]["effort"], "high");
    }
    // A summary alone asks for medium effort.
    let mut opts = simple(Api::OpenAi, None);
    opts.stream.openai_responses = Some(OpenAiResponsesOptions {
        reasoning_summary: Some("detailed".into()),
        ..Default::default()
    });
    let (body, _) = sent(Api::OpenAi, |_| {}, &context("hi"), opts).await;
    assert_eq!(
        body["reasoning"],
        json!({"effort": "medium", "summary": "detailed"})
    );
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));

    // Codex: no level, no reasoning field; a level uses the model's mapping.
    let (body, _) = sent(Api::Codex, |_| {}, &context("hi"), simple(Api::Codex, None)).await;
    assert!(body.get("reasoning").is_none());
    let (body, _) = sent(
        Api::Codex,
        off_unsupported,
        &context("hi"),
        simple(Api::Codex, Some(ThinkingLevel::Minimal)),
    )
    .await;
    assert_eq!(
        body["reasoning"],
        json!({"effort": "low", "summary": "auto"})
    );
    let server = server().await;
    server.push(Script::text("ok"));
    let mut opts = options(Api::Codex);
    opts.reasoning_effort = Some(ThinkingLevel::Off);
    let _ = pi_ai::complete(&model(&server, Api::Codex), &context("hi"), opts).await;
    let body = server.requests().pop().unwrap().body;
    assert_eq!(
        body["reasoning"],
        json!({"effort": "none", "summary": "auto"})
    );
}

#[tokio::test]
async fn codex_body_and_headers() {
    let mut opts = simple(Api::Codex, Some(ThinkingLevel::Medium));
    opts.stream.session_id = Some("sess-42".into());
    opts.stream.headers.insert("x-extra".into(), "1".into());
    opts.stream
        .headers
        .insert("authorization".into(), "Bearer ignored".into());
    opts.stream.temperature = Some(0.5);
    let (body, headers) = sent(Api::Codex, |_| {}, &context("hi"), opts).await;
    assert_eq!(
        keys(&body),
        [
            "model",
            "store",
            "stream",
            "instructions",
            "input",
            "text",
            "include",
            "prompt_cache_key",
            "tool_choice",
            "parallel_tool_calls",
            "temperature",
            "tools",
            "reasoning"
        ]
    );
    assert_eq!(body["store"], false);
    assert_eq!(body["instructions"], "You are a test.");
    assert_eq!(
        *input(&body),
        vec![json!({"role": "user", "content": [{"type": "input_text", "text": "hi"}]})]
    );
    assert_eq!(body["text"], json!({"verbosity": "low"}));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["prompt_cache_key"], "sess-42");
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["parallel_tool_calls"], true);
    assert_eq!(body["tools"][0]["strict"], Value::Null);
    assert_eq!(
        body["reasoning"],
        json!({"effort": "medium", "summary": "auto"})
    );
    for field in CHAT_FIELDS.iter().chain(&["max_output_tokens"]) {
        assert!(body.get(*field).is_none(), "{field}");
    }
    assert_eq!(
        headers["authorization"],
        format!("Bearer {}", codex_token())
    );
    assert_eq!(headers["chatgpt-account-id"], ACCOUNT_ID);
    assert_eq!(headers["originator"], "pi");
    assert_eq!(headers["openai-beta"], "responses=experimental");
    assert_eq!(headers["accept"], "text/event-stream");
    assert_eq!(headers["session_id"], "sess-42");
    assert_eq!(headers["x-client-request-id"], "sess-42");
    assert_eq!(headers["x-extra"], "1");
    assert!(
        headers["user-agent"].starts_with("pi ("),
        "{}",
        headers["user-agent"]
    );

    // No system prompt: pi's default instructions.
    let mut ctx = context("hi");
    ctx.system_prompt = None;
    let (body, _) = sent(Api::Codex, |_| {}, &ctx, simple(Api::Codex, None)).await;
    assert_eq!(body["instructions"], "You are a helpful assistant.");
}

#[tokio::test]
async fn azure_body_headers_and_url() {
    let mut opts = simple(Api::Azure, None);
    opts.stream.session_id = Some("sess-az".into());
    opts.stream.openai_responses = Some(OpenAiResponsesOptions {
        azure_deployment_name: Some("my-deployment".into()),
        ..Default::default()
    });
    let (body, headers) = sent(Api::Azure, |_| {}, &context("hi"), opts.clone()).await;
    assert_eq!(
        keys(&body),
        [
            "model",
            "input",
            "stream",
            "prompt_cache_key",
            "max_output_tokens",
            "tools",
            "reasoning"
        ]
    );
    assert_eq!(body["model"], "my-deployment");
    assert_eq!(body["prompt_cache_key"], "sess-az");
    assert!(body.get("store").is_none());
    assert_eq!(headers["api-key"], "test-key");
    assert!(!headers.contains_key("authorization"));
    assert!(!headers.contains_key("session_id"));

    let m = model(&server().await, Api::Azure);
    let request = openai_responses::azure::build_request(
        &m,
        &context("hi"),
        &opts.stream,
        "test-key",
        &|_| None,
    )
    .unwrap();
    assert_eq!(
        request.url,
        format!("{}/responses?api-version=v1", m.base_url)
    );
    let mut resource = m.clone();
    resource.base_url = "https://res.openai.azure.com".into();
    let env =
        |name: &str| (name == "AZURE_OPENAI_API_VERSION").then(|| "2025-04-01-preview".to_owned());
    let request =
        openai_responses::azure::build_request(&resource, &context("hi"), &opts.stream, "k", &env)
            .unwrap();
    assert_eq!(
        request.url,
        "https://res.openai.azure.com/openai/v1/responses?api-version=2025-04-01-preview"
    );
}

#[tokio::test]
async fn session_cache_key_and_headers_follow_retention() {
    let mut opts = simple(Api::OpenAi, None);
    opts.stream.session_id = Some("sess-1".into());
    opts.stream.cache_retention = Some(CacheRetention::Long);
    let (body, headers) = sent(Api::OpenAi, |_| {}, &context("hi"), opts.clone()).await;
    assert_eq!(body["prompt_cache_key"], "sess-1");
    assert_eq!(body["prompt_cache_retention"], "24h");
    assert_eq!(headers["session_id"], "sess-1");
    assert_eq!(headers["x-client-request-id"], "sess-1");

    opts.stream.cache_retention = Some(CacheRetention::None);
    let (body, headers) = sent(Api::OpenAi, |_| {}, &context("hi"), opts.clone()).await;
    assert!(body.get("prompt_cache_key").is_none());
    assert!(body.get("prompt_cache_retention").is_none());
    assert!(!headers.contains_key("session_id"));

    opts.stream.cache_retention = Some(CacheRetention::Short);
    let (body, headers) = sent(
        Api::OpenAi,
        |m| {
            m.compat = Some(pi_ai::ModelCompat {
                send_session_id_header: Some(false),
                ..Default::default()
            })
        },
        &context("hi"),
        opts,
    )
    .await;
    assert_eq!(body["prompt_cache_key"], "sess-1");
    assert!(body.get("prompt_cache_retention").is_none());
    assert!(!headers.contains_key("session_id"));
    assert_eq!(headers["x-client-request-id"], "sess-1");
}

#[tokio::test]
async fn tool_call_ids_from_other_models_are_normalized() {
    for which in ALL {
        let mut ctx = context("go");
        // From Anthropic: a plain id with characters the API rejects.
        ctx.messages.push(tool_use_turn(
            api::ANTHROPIC_MESSAGES,
            "anthropic",
            "claude",
            vec![read_call("toolu_01+abc/def", "a")],
        ));
        ctx.messages
            .push(tool_result("toolu_01+abc/def", vec![InputBlock::text("A")]));
        // From another model of the same API and provider: the fc_ item id is dropped.
        ctx.messages.push(tool_use_turn(
            api_id(which),
            provider_id(which),
            "gpt-other",
            vec![read_call("call_same|fc_same", "b")],
        ));
        ctx.messages.push(tool_result(
            "call_same|fc_same",
            vec![InputBlock::text("B")],
        ));
        // From another Responses API: the item id is hashed.
        let (other_api, other_provider) = if which == Api::OpenAi {
            (api::AZURE_OPENAI_RESPONSES, "azure-openai-responses")
        } else {
            (api::OPENAI_RESPONSES, "openai")
        };
        ctx.messages.push(tool_use_turn(
            other_api,
            other_provider,
            "gpt-mock",
            vec![read_call("call_x|fc_foreign", "c")],
        ));
        // ... and its result goes missing.
        ctx.messages
            .push(Message::User(UserMessage::text("continue")));
        let (body, _) = sent(which, |_| {}, &ctx, simple(which, None)).await;
        let items = input(&body);
        let calls: Vec<&Value> = items
            .iter()
            .filter(|i| i["type"] == "function_call")
            .collect();
        let outputs: Vec<&Value> = items
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .collect();
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0]["call_id"], "toolu_01_abc_def");
        assert!(calls[0].get("id").is_none());
        assert_eq!(calls[1]["call_id"], "call_same");
        assert!(calls[1].get("id").is_none(), "{which:?}: {}", calls[1]);
        assert_eq!(calls[2]["call_id"], "call_x");
        let hashed = calls[2]["id"].as_str().unwrap();
        assert!(
            hashed.starts_with("fc_") && hashed != "fc_foreign",
            "{hashed}"
        );
        let output_ids: Vec<&Value> = outputs.iter().map(|o| &o["call_id"]).collect();
        assert_eq!(
            output_ids,
            [
                &calls[0]["call_id"],
                &calls[1]["call_id"],
                &calls[2]["call_id"]
            ]
        );
        assert_eq!(outputs[2]["output"], "No result provided");
    }
}

#[tokio::test]
async fn payload_hook_and_header_overrides_apply() {
    let mut opts = simple(Api::OpenAi, None);
    opts.stream.on_payload = Some(std::sync::Arc::new(|_model: &Model, body: &mut Value| {
        body["metadata"] = json!({"trace": "t-1"});
    }));
    opts.stream.headers.insert("x-custom".into(), "yes".into());
    let (body, headers) = sent(
        Api::OpenAi,
        |m| m.headers = Some(BTreeMap::from([("x-model".to_owned(), "m".to_owned())])),
        &context("hi"),
        opts,
    )
    .await;
    assert_eq!(body["metadata"], json!({"trace": "t-1"}));
    assert_eq!(headers["x-custom"], "yes");
    assert_eq!(headers["x-model"], "m");
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
