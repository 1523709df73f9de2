//! `mistral-conversations` against mock-llm: streaming (text, Magistral thinking chunks,
//! parallel tool calls whole and split), usage and cost, images, cancellation, every fault,
//! and the request body as Mistral documents it (9-character tool ids after a handoff).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use futures_util::StreamExt;
use mock_llm::{Fault, Item, Script};
use pi_ai::{
    AssistantBlock, AssistantMessage, AssistantMessageEvent, ImageContent, InputBlock, InputKind,
    Message, StopReason, TextContent, ThinkingContent, ThinkingLevel, ToolCall, ToolChoice,
    ToolResultMessage, UserMessage, api,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use common::mistral::{foreign_tool_round, large, model, options, run, sent, simple};
use common::{
    args, assert_contract, chunked, collect, context, error_text, final_message, kinds, read_tool,
    server,
};

// ---- streaming ----------------------------------------------------------------------------

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

// ---- cancellation -------------------------------------------------------------------------

#[tokio::test]
async fn cancelling_mid_stream_ends_aborted_and_keeps_partial_text() {
    let server = server().await;
    server.push(
        Script::filler(20_000)
            .with_chunk_size(20)
            .with_fault(Fault::stall(15, 20_000)),
    );
    let cancel = CancellationToken::new();
    let mut opts = options();
    opts.cancel = Some(cancel.clone());
    let mut stream = pi_ai::stream(&large(&server), &context("long"), opts);
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
    assert!(guarded.is_ok(), "cancellation did not end the stream");
    assert_contract(&events);
    let AssistantMessageEvent::Error { reason, error } = events.last().unwrap() else {
        panic!("{:?}", kinds(&events))
    };
    assert_eq!(*reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
    assert!(error.text().len() >= 100, "partial text kept");
}

#[tokio::test]
async fn cancelling_before_the_response_ends_aborted() {
    let server = server().await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let mut opts = options();
    opts.cancel = Some(cancel);
    let events = collect(&large(&server), &context("x"), opts).await;
    assert_contract(&events);
    assert_eq!(final_message(&events).stop_reason, StopReason::Aborted);
}

// ---- faults -------------------------------------------------------------------------------

#[tokio::test]
async fn http_errors_carry_mistral_status_and_body() {
    let (message, server) = run(Script::http_error(429), options()).await;
    assert_eq!(
        error_text(&message),
        r#"Mistral API error (429): {"object":"error","message":"Requests rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}"#
    );
    assert!(message.content.is_empty());
    // Like pi's TS provider (SDK retries off), one attempt unless retries are asked for.
    assert_eq!(server.requests().len(), 1);

    let (message, _) = run(Script::http_error(500), options()).await;
    let text = error_text(&message);
    assert!(
        text.starts_with("Mistral API error (500): {") && text.contains("Internal server error"),
        "{text}"
    );

    let (message, _) = run(Script::http_error(422), options()).await;
    let text = error_text(&message);
    assert!(text.starts_with("Mistral API error (422): "), "{text}");
    assert!(text.contains("Field required"), "{text}");

    let (message, _) = run(
        Script::default().with_fault(Fault::HttpError {
            status: 503,
            retry_after: None,
            retry_after_ms: None,
            body: Some(String::new()),
        }),
        options(),
    )
    .await;
    assert_eq!(
        error_text(&message),
        r#"Mistral API error (503): API error occurred: Status 503. Body: """#
    );
}

#[tokio::test]
async fn long_error_bodies_are_cut_at_4000_characters() {
    let body = format!("{{\"message\":\"{}\"}}", "é".repeat(4_990));
    let (message, _) = run(
        Script::default().with_fault(Fault::HttpError {
            status: 400,
            retry_after: None,
            retry_after_ms: None,
            body: Some(body.clone()),
        }),
        options(),
    )
    .await;
    let text = error_text(&message);
    let head: String = body.chars().take(4_000).collect();
    assert_eq!(
        text,
        format!("Mistral API error (400): {head}... [truncated 1004 chars]")
    );
}

#[tokio::test]
async fn retries_after_429_with_retry_after_then_succeeds() {
    let server = server().await;
    server.push(Script::default().with_fault(Fault::HttpError {
        status: 429,
        retry_after: Some("1".into()),
        retry_after_ms: None,
        body: None,
    }));
    server.push(Script::text("finally"));
    let mut opts = options();
    opts.max_retries = Some(2);
    let started = std::time::Instant::now();
    let events = collect(&large(&server), &context("hi"), opts).await;
    assert_contract(&events);
    assert_eq!(final_message(&events).text(), "finally");
    assert_eq!(server.requests().len(), 2);
    assert!(started.elapsed() >= Duration::from_millis(950));
}

#[tokio::test]
async fn retry_after_beyond_the_cap_fails_at_once() {
    let script = Script::default().with_fault(Fault::HttpError {
        status: 429,
        retry_after: Some("120".into()),
        retry_after_ms: None,
        body: None,
    });
    let mut opts = options();
    opts.max_retries = Some(3);
    opts.max_retry_delay_ms = Some(5_000);
    let (message, _) = run(script, opts).await;
    let text = error_text(&message);
    assert!(
        text.starts_with("Server requested 120s retry delay (max: 5s). Mistral API error (429)"),
        "{text}"
    );
}

#[tokio::test]
async fn connection_dropped_mid_stream() {
    let script = Script::text("a fairly long answer that will be cut off")
        .with_chunk_size(3)
        .with_fault(Fault::drop_after(6));
    let (message, _) = run(script, options()).await;
    let text = error_text(&message);
    assert!(text.starts_with("Connection error"), "{text}");
    assert!(!message.text().is_empty(), "partial text kept");
}

#[tokio::test]
async fn malformed_chunk() {
    let script = Script::text("hello there")
        .with_chunk_size(2)
        .with_fault(Fault::malformed_after(3));
    let (message, _) = run(script, options()).await;
    let text = error_text(&message);
    assert!(text.contains("Could not parse"), "{text}");
}

#[tokio::test]
async fn stall_longer_than_the_idle_timeout() {
    let script = Script::text("slow")
        .with_chunk_size(1)
        .with_fault(Fault::stall(3, 10_000));
    let mut opts = options();
    opts.idle_timeout_ms = Some(300);
    let (message, _) = run(script, opts).await;
    let text = error_text(&message);
    assert!(
        text.contains("timed out") && text.contains("0.3s"),
        "{text}"
    );
}

#[tokio::test]
async fn stall_then_cancel_ends_aborted() {
    let server = server().await;
    server.push(
        Script::text("slow stream")
            .with_chunk_size(2)
            .with_fault(Fault::stall(3, 20_000)),
    );
    let cancel = CancellationToken::new();
    let mut opts = options();
    opts.cancel = Some(cancel.clone());
    let canceller = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        })
    };
    let started = std::time::Instant::now();
    let events = collect(&large(&server), &context("x"), opts).await;
    canceller.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_contract(&events);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.text(), "slow");
}

#[tokio::test]
async fn in_stream_error_object() {
    let script = Script::text("partial").with_fault(Fault::StreamError {
        after_events: 2,
        message: Some("upstream exploded".into()),
    });
    let (message, _) = run(script, options()).await;
    assert_eq!(error_text(&message), "Mistral API error: upstream exploded");
    assert_eq!(message.text(), "partial");
}

#[tokio::test]
async fn missing_api_key_is_reported_without_a_request() {
    let server = server().await;
    let mut m = large(&server);
    m.provider = "no-such-provider".into();
    let mut opts = options();
    opts.api_key = None;
    let events = collect(&m, &context("hi"), opts).await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        error_text(final_message(&events)),
        "No API key for provider: no-such-provider"
    );
    assert!(server.requests().is_empty());
}

// ---- request body -------------------------------------------------------------------------

#[tokio::test]
async fn body_matches_the_documented_shape() {
    let server = server().await;
    let m = large(&server);
    let mut ctx = context("read two files");
    foreign_tool_round(
        &mut ctx,
        "openai-completions",
        "openai",
        &["call_abc123", "toolu_01A09q90qw90lq917835lq9"],
    );
    let (body, headers) = sent(&m, &server, &ctx, simple(None)).await;
    assert_eq!(headers["authorization"], "Bearer test-key");
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["model", "max_tokens", "stream", "messages", "tools"]);
    assert_eq!(body["model"], "mistral-large-latest");
    assert_eq!(body["max_tokens"], 16384);
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {"name": "read", "description": "Read a file",
            "strict": false, "parameters": read_tool().parameters}}])
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5);
    assert_eq!(
        messages[0],
        json!({"role": "system", "content": "You are a test."})
    );
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": [{"type": "text", "text": "read two files"}]})
    );
    // Foreign ids become Mistral's nine letters and digits, derived as pi's TS provider
    // derives them (values from its `shortHash` under node).
    assert_eq!(
        messages[2],
        json!({"role": "assistant",
            "content": [{"type": "text", "text": "Reading."}],
            "tool_calls": [
                {"id": "9k918q7jl", "type": "function", "index": 0,
                 "function": {"name": "read", "arguments": "{\"path\":\"f0.txt\"}"}},
                {"id": "1q2i7qh1x", "type": "function", "index": 0,
                 "function": {"name": "read", "arguments": "{\"path\":\"f1.txt\"}"}}],
            "prefix": false})
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "content": [{"type": "text", "text": "contents 0"}],
            "tool_call_id": "9k918q7jl", "name": "read"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "content": [{"type": "text", "text": "[tool error] contents 1"}],
            "tool_call_id": "1q2i7qh1x", "name": "read"})
    );
}

#[tokio::test]
async fn ids_that_already_fit_and_same_model_ids_are_kept() {
    let server = server().await;
    let m = large(&server);
    let mut ctx = context("go");
    // A foreign id of exactly nine letters and digits once its punctuation is gone.
    foreign_tool_round(&mut ctx, "anthropic-messages", "anthropic", &["D681-PevKs"]);
    ctx.messages.push(Message::User(UserMessage::text("again")));
    // Mistral's own ids are never rewritten.
    let mut own = AssistantMessage::empty(api::MISTRAL_CONVERSATIONS, "mistral", &m.id);
    own.content = vec![AssistantBlock::ToolCall(ToolCall::new(
        "Zz9Yy8Xx7",
        "read",
        args(json!({"path": "x"})),
    ))]
    .into();
    own.stop_reason = StopReason::ToolUse;
    ctx.messages.push(Message::Assistant(own.into()));
    ctx.messages.push(Message::ToolResult(
        ToolResultMessage {
            tool_call_id: "Zz9Yy8Xx7".into(),
            tool_name: "read".into(),
            content: vec![].into(),
            ..Default::default()
        }
        .into(),
    ));
    let (body, _) = sent(&m, &server, &ctx, simple(None)).await;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[2]["tool_calls"][0]["id"], "D681PevKs");
    assert_eq!(messages[3]["tool_call_id"], "D681PevKs");
    assert_eq!(messages[5]["tool_calls"][0]["id"], "Zz9Yy8Xx7");
    assert_eq!(messages[6]["tool_call_id"], "Zz9Yy8Xx7");
    assert_eq!(
        messages[6]["content"],
        json!([{"type": "text", "text": "(no tool output)"}])
    );
}

#[tokio::test]
async fn images_are_image_url_chunks() {
    let server = server().await;
    let m = large(&server);
    let mut ctx = context("unused");
    ctx.messages = vec![Message::User(UserMessage::blocks(vec![
        InputBlock::text("what is this?"),
        InputBlock::Image(ImageContent::new("aGVsbG8=", "image/png")),
    ]))];
    foreign_tool_round(&mut ctx, "openai-completions", "openai", &["call_1"]);
    if let Some(Message::ToolResult(result)) = ctx.messages.last_mut() {
        std::sync::Arc::make_mut(result).content = vec![InputBlock::Image(ImageContent::new(
            "d29ybGQ=",
            "image/jpeg",
        ))]
        .into();
    }
    let (body, _) = sent(&m, &server, &ctx, simple(None)).await;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["content"],
        json!([{"type": "text", "text": "what is this?"},
               {"type": "image_url", "image_url": "data:image/png;base64,aGVsbG8="}])
    );
    assert_eq!(
        messages[3]["content"],
        json!([{"type": "text", "text": "(see attached image)"},
               {"type": "image_url", "image_url": "data:image/jpeg;base64,d29ybGQ="}])
    );

    // A text-only model gets placeholders instead.
    let mut text_only = m.clone();
    text_only.input = vec![InputKind::Text];
    let (body, _) = sent(&text_only, &server, &ctx, simple(None)).await;
    let messages = body["messages"].as_array().unwrap();
    let user = messages[1]["content"].to_string();
    assert!(!user.contains("image_url"), "{user}");
    assert!(user.contains("image omitted"), "{user}");
    let tool = messages[3]["content"].to_string();
    assert!(
        !tool.contains("image_url") && tool.contains("omitted"),
        "{tool}"
    );
}

#[tokio::test]
async fn own_thinking_is_replayed_as_thinking_chunks() {
    let server = server().await;
    let m = model(&server, "magistral-medium-latest");
    let mut ctx = context("first");
    let mut own = AssistantMessage::empty(api::MISTRAL_CONVERSATIONS, "mistral", &m.id);
    own.content = vec![
        AssistantBlock::Thinking(ThinkingContent::new("my reasoning")),
        AssistantBlock::Text(TextContent::new("answer")),
        AssistantBlock::Text(TextContent::new("   ")),
    ]
    .into();
    ctx.messages.push(Message::Assistant(own.into()));
    ctx.messages
        .push(Message::User(UserMessage::text("second")));
    let (body, _) = sent(&m, &server, &ctx, simple(None)).await;
    assert_eq!(
        body["messages"][2],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "my reasoning"}]},
            {"type": "text", "text": "answer"}], "prefix": false})
    );
    assert!(body.get("prompt_mode").is_none());
}

#[tokio::test]
async fn reasoning_uses_prompt_mode_or_reasoning_effort_by_model() {
    let server = server().await;
    let magistral = model(&server, "magistral-medium-latest");
    let (body, _) = sent(
        &magistral,
        &server,
        &context("q"),
        simple(Some(ThinkingLevel::Medium)),
    )
    .await;
    assert_eq!(body["prompt_mode"], "reasoning");
    assert!(body.get("reasoning_effort").is_none());

    let small = model(&server, "mistral-small-latest");
    let (body, _) = sent(
        &small,
        &server,
        &context("q"),
        simple(Some(ThinkingLevel::Low)),
    )
    .await;
    assert_eq!(body["reasoning_effort"], "high");
    assert!(body.get("prompt_mode").is_none());
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "model",
            "max_tokens",
            "stream",
            "messages",
            "tools",
            "reasoning_effort"
        ]
    );

    // A level mapped by the model is sent as mapped.
    let mut mapped = small.clone();
    mapped.thinking_level_map = Some([(ThinkingLevel::Low, Some("none".to_owned()))].into());
    let (body, _) = sent(
        &mapped,
        &server,
        &context("q"),
        simple(Some(ThinkingLevel::Low)),
    )
    .await;
    assert_eq!(body["reasoning_effort"], "none");

    // Off, or a model without reasoning: neither field.
    let (body, _) = sent(&magistral, &server, &context("q"), simple(None)).await;
    assert!(body.get("prompt_mode").is_none() && body.get("reasoning_effort").is_none());
    let (body, _) = sent(
        &large(&server),
        &server,
        &context("q"),
        simple(Some(ThinkingLevel::High)),
    )
    .await;
    assert!(body.get("prompt_mode").is_none() && body.get("reasoning_effort").is_none());
}

#[tokio::test]
async fn options_map_to_body_fields_and_headers() {
    let server = server().await;
    let mut m = large(&server);
    m.headers = Some([("x-model".to_owned(), "1".to_owned())].into());
    let mut opts = simple(None);
    opts.stream.temperature = Some(0.3);
    opts.stream.max_tokens = Some(512);
    opts.stream.tool_choice = Some(ToolChoice::Required);
    opts.stream.session_id = Some("session-42".into());
    let mut ctx = context("q");
    ctx.system_prompt = Some(String::new());
    let (body, headers) = sent(&m, &server, &ctx, opts.clone()).await;
    assert_eq!(body["temperature"], 0.3);
    assert_eq!(body["max_tokens"], 512);
    assert_eq!(body["tool_choice"], "any");
    // An empty system prompt sends no system message.
    assert_eq!(body["messages"][0]["role"], "user");
    assert_eq!(headers["x-model"], "1");
    assert_eq!(headers["x-affinity"], "session-42");

    opts.stream.tool_choice = Some(ToolChoice::Tool("read".into()));
    opts.stream
        .headers
        .insert("X-Affinity".into(), "mine".into());
    let (body, headers) = sent(&m, &server, &ctx, opts.clone()).await;
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": "read"}})
    );
    assert_eq!(headers["x-affinity"], "mine");

    for (choice, wire) in [(ToolChoice::Auto, "auto"), (ToolChoice::None, "none")] {
        opts.stream.tool_choice = Some(choice);
        let (body, _) = sent(&m, &server, &ctx, opts.clone()).await;
        assert_eq!(body["tool_choice"], wire);
    }
}

#[tokio::test]
async fn payload_hook_can_rewrite_the_body() {
    let server = server().await;
    server.push(Script::text("ok"));
    let mut opts = options();
    opts.on_payload = Some(std::sync::Arc::new(|_model, body| {
        body["random_seed"] = json!(7);
    }));
    let events = collect(&large(&server), &context("q"), opts).await;
    assert_eq!(events.last().unwrap().kind(), "done");
    assert_eq!(server.requests()[0].body["random_seed"], json!(7));
}
