//! `bedrock-converse-stream` against mock-llm's binary event-stream: text, thinking with
//! signatures, parallel tool calls, usage and cost, images, cancellation, every fault, the
//! request body, SigV4 and bearer-token authentication, and replay of recorded bodies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::bedrock::{
    CLAUDE, NOVA, TOKEN, bedrock_options, close, collect, event, exception, model, options, replay,
    run_fault,
};
use common::{
    assert_contract, context, drain, error_text, final_message, kinds, read_tool, server,
};
use futures_util::StreamExt;
use mock_llm::{Fault, Item, Script, ScriptUsage};
use pi_ai::providers::bedrock::{
    self, BedrockOptions, eventstream, sigv4, stream_bedrock, stream_simple_bedrock,
};
use pi_ai::{
    AssistantBlock, AssistantMessage, AssistantMessageEvent, CacheRetention, ImageContent,
    InputBlock, Message, Model, SimpleStreamOptions, StopReason, ThinkingLevel, ToolChoice,
    ToolResultMessage, UserMessage, api,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

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
async fn images_are_sent_as_base64_bytes_with_their_format() {
    let server = server().await;
    server.push(Script::text("a cat"));
    let m = model(&server, NOVA);
    let mut ctx = context("");
    ctx.messages = vec![
        Message::User(UserMessage::blocks(vec![
            InputBlock::text("what is this?"),
            InputBlock::Image(ImageContent::new("aGVsbG8=", "image/png")),
        ])),
        Message::Assistant({
            // From another model: its tool-call ids are normalized for Bedrock.
            let mut a = AssistantMessage::empty(api::OPENAI_COMPLETIONS, "openai", "gpt-4o");
            a.content = vec![AssistantBlock::ToolCall(pi_ai::ToolCall::new(
                "call|1",
                "read",
                Default::default(),
            ))]
            .into();
            a.stop_reason = StopReason::ToolUse;
            a.into()
        }),
        Message::ToolResult(
            ToolResultMessage {
                tool_call_id: "call|1".into(),
                tool_name: "read".into(),
                content: vec![InputBlock::Image(ImageContent::new(
                    "d29ybGQ=",
                    "image/jpeg",
                ))]
                .into(),
                ..Default::default()
            }
            .into(),
        ),
    ];
    let events = collect(&m, &ctx, options(), bedrock_options()).await;
    assert_eq!(final_message(&events).text(), "a cat");
    let body = &server.requests()[0].body;
    assert_eq!(
        body["messages"][0]["content"][1],
        json!({"image": {"format": "png", "source": {"bytes": "aGVsbG8="}}})
    );
    // Tool-call ids are normalized for Bedrock, and the result follows.
    assert_eq!(
        body["messages"][1]["content"][0]["toolUse"]["toolUseId"],
        "call_1"
    );
    assert_eq!(
        body["messages"][2]["content"][0]["toolResult"],
        json!({"toolUseId": "call_1", "status": "success",
               "content": [{"image": {"format": "jpeg", "source": {"bytes": "d29ybGQ="}}}]})
    );
    // Nova takes no explicit cache points.
    assert!(!body.to_string().contains("cachePoint"));

    // An image type Bedrock cannot take fails before any request.
    ctx.messages = vec![Message::User(UserMessage::blocks(vec![InputBlock::Image(
        ImageContent::new("aGk=", "image/bmp"),
    )]))];
    let events = collect(&m, &ctx, options(), bedrock_options()).await;
    assert_eq!(
        error_text(final_message(&events)),
        "Unknown image type: image/bmp"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn request_body_follows_the_converse_shape() {
    let server = server().await;
    server.push(Script::text("ok"));
    let m = model(&server, CLAUDE);
    let mut opts = options();
    opts.max_tokens = Some(1000);
    opts.temperature = Some(0.5);
    opts.tool_choice = Some(ToolChoice::Required);
    let mut bedrock = bedrock_options();
    bedrock.request_metadata = Some([("team".to_owned(), "pi".to_owned())].into());
    collect(&m, &context("hi"), opts, bedrock).await;
    let body = &server.requests()[0].body;
    assert_eq!(
        body,
        &json!({
            "messages": [{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}],
            "system": [{"text": "You are a test."}, {"cachePoint": {"type": "default"}}],
            "inferenceConfig": {"maxTokens": 1000, "temperature": 0.5},
            "toolConfig": {
                "tools": [{"toolSpec": {"name": "read", "description": "Read a file",
                    "inputSchema": {"json": read_tool().parameters}}}],
                "toolChoice": {"any": {}}
            },
            "requestMetadata": {"team": "pi"}
        })
    );

    // Long retention asks for one-hour cache points; `none` disables them; a `none` tool
    // choice drops the tool configuration.
    server.push(Script::text("ok"));
    let mut opts = options();
    opts.cache_retention = Some(CacheRetention::Long);
    opts.tool_choice = Some(ToolChoice::Tool("read".into()));
    collect(&m, &context("hi"), opts, bedrock_options()).await;
    let body = &server.requests()[1].body;
    assert_eq!(
        body["system"][1],
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    );
    assert_eq!(
        body["toolConfig"]["toolChoice"],
        json!({"tool": {"name": "read"}})
    );
    server.push(Script::text("ok"));
    let mut opts = options();
    opts.cache_retention = Some(CacheRetention::None);
    opts.tool_choice = Some(ToolChoice::None);
    collect(&m, &context("hi"), opts, bedrock_options()).await;
    let body = &server.requests()[2].body;
    assert!(!body.to_string().contains("cachePoint"));
    assert!(body.get("toolConfig").is_none());
    assert_eq!(body["inferenceConfig"], json!({}));
}

#[tokio::test]
async fn claude_thinking_fields_follow_the_level() {
    let server = server().await;
    let simple = |level: ThinkingLevel| SimpleStreamOptions {
        stream: options(),
        reasoning: Some(level),
        thinking_budgets: None,
    };
    // Budget-based Claude: the budget is added to maxTokens, interleaved thinking is on.
    server.push(Script::text("ok"));
    let claude = model(&server, CLAUDE);
    drain(stream_simple_bedrock(
        &claude,
        &context("hi"),
        simple(ThinkingLevel::High),
        bedrock_options(),
    ))
    .await;
    let body = &server.requests()[0].body;
    assert_eq!(body["inferenceConfig"]["maxTokens"], 32_000 + 16_384);
    assert_eq!(
        body["additionalModelRequestFields"],
        json!({
            "thinking": {"type": "enabled", "budget_tokens": 16384, "display": "summarized"},
            "anthropic_beta": ["interleaved-thinking-2025-05-14"]
        })
    );
    // Adaptive Claude (Opus 4.6): an effort; xhigh becomes high except on Opus 4.7.
    for (id, effort) in [
        ("anthropic.claude-opus-4-6-v1", "high"),
        ("us.anthropic.claude-opus-4-7-v1", "xhigh"),
    ] {
        server.push(Script::text("ok"));
        let adaptive = model(&server, id);
        drain(stream_simple_bedrock(
            &adaptive,
            &context("hi"),
            simple(ThinkingLevel::Xhigh),
            bedrock_options(),
        ))
        .await;
        let body = &server.requests().last().unwrap().body.clone();
        assert_eq!(body["inferenceConfig"]["maxTokens"], 32_000);
        assert_eq!(
            body["additionalModelRequestFields"],
            json!({"thinking": {"type": "adaptive", "display": "summarized"},
                   "output_config": {"effort": effort}})
        );
    }
    // GovCloud omits `display`; non-Claude models get no thinking fields.
    server.push(Script::text("ok"));
    let mut gov = bedrock_options();
    gov.region = Some("us-gov-west-1".into());
    drain(stream_simple_bedrock(
        &claude,
        &context("hi"),
        simple(ThinkingLevel::Low),
        gov,
    ))
    .await;
    let body = &server.requests().last().unwrap().body.clone();
    assert_eq!(
        body["additionalModelRequestFields"]["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    server.push(Script::text("ok"));
    drain(stream_simple_bedrock(
        &model(&server, NOVA),
        &context("hi"),
        simple(ThinkingLevel::High),
        bedrock_options(),
    ))
    .await;
    let body = &server.requests().last().unwrap().body.clone();
    assert!(body.get("additionalModelRequestFields").is_none());
}

#[tokio::test]
async fn request_is_signed_with_sigv4() {
    let server = server().await;
    server.push(Script::text("signed"));
    let m = model(&server, CLAUDE);
    let events = collect(&m, &context("hi"), options(), bedrock_options()).await;
    assert_eq!(final_message(&events).text(), "signed");
    let request = &server.requests()[0];
    assert_eq!(request.method, "POST");
    // The model id is URL-encoded in the path.
    assert_eq!(
        request.path,
        "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"
    );
    let h = &request.headers;
    assert_eq!(h["content-type"], "application/json");
    let date = &h["x-amz-date"];
    assert_eq!(date.len(), 16);
    assert!(date.as_bytes()[8] == b'T' && date.ends_with('Z'), "{date}");
    assert_eq!(h["x-amz-security-token"], TOKEN);
    // The payload hash is the SHA-256 of the body as sent (compact JSON, order preserved).
    let body = serde_json::to_vec(&request.body).unwrap();
    assert_eq!(h["x-amz-content-sha256"], sigv4::sha256_hex(&body));
    // Authorization: AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/bedrock/aws4_request.
    let auth = &h["authorization"];
    let prefix = format!(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{}/us-west-2/bedrock/aws4_request, \
         SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, \
         Signature=",
        &date[..8]
    );
    assert!(auth.starts_with(&prefix), "{auth}");
    let signature = &auth[prefix.len()..];
    assert_eq!(signature.len(), 64);
    assert!(signature.bytes().all(|b| b.is_ascii_hexdigit()));
    // The server can verify it: the signature over what arrived (host = the mock's).
    assert_eq!(h["host"], server.addr().to_string());
    let signed: Vec<(String, String)> = [
        "content-type",
        "host",
        "x-amz-content-sha256",
        "x-amz-date",
        "x-amz-security-token",
    ]
    .iter()
    .map(|n| ((*n).to_owned(), h[*n].clone()))
    .collect();
    let key = sigv4::SigningKey {
        access_key_id: "AKIDEXAMPLE",
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        region: "us-west-2",
        service: "bedrock",
    };
    let expected = sigv4::sign(
        &key,
        "POST",
        &request.path,
        "",
        &signed,
        &sigv4::sha256_hex(&body),
        date,
    );
    assert_eq!(&expected.authorization, auth);
    // Outside S3 the already-encoded path is encoded again for the canonical request.
    assert!(
        expected.canonical_request.starts_with(
            "POST\n/model/anthropic.claude-sonnet-4-20250514-v1%253A0/converse-stream\n"
        ),
        "{}",
        expected.canonical_request
    );
}

#[tokio::test]
async fn signing_is_deterministic_for_a_fixed_clock() {
    let m = Model {
        base_url: "https://bedrock-runtime.us-east-1.amazonaws.com".into(),
        ..model(&server().await, CLAUDE)
    };
    let at = std::time::UNIX_EPOCH + Duration::from_secs(1_440_938_160);
    let mut bedrock = bedrock_options();
    bedrock.credentials.as_mut().unwrap().session_token = None;
    let request = bedrock::build_request(&m, &context("hi"), &options(), &bedrock, at).unwrap();
    // A configured region replaces the catalog's regional endpoint.
    assert_eq!(
        request.url,
        "https://bedrock-runtime.us-west-2.amazonaws.com/model/anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"
    );
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(header("x-amz-date").as_deref(), Some("20150830T123600Z"));
    assert_eq!(header("x-amz-security-token"), None);
    let again = bedrock::build_request(&m, &context("hi"), &options(), &bedrock, at).unwrap();
    assert_eq!(request.headers, again.headers);
    let auth = header("authorization").unwrap();
    assert!(auth.starts_with(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-west-2/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date, Signature="
    ), "{auth}");
    // Credentials never show in Debug output.
    let shown = format!("{request:?}");
    assert!(!shown.contains(&auth[auth.len() - 64..]), "{shown}");
}

#[tokio::test]
async fn bearer_token_replaces_sigv4() {
    let server = server().await;
    server.push(Script::text("hello"));
    let bedrock = BedrockOptions {
        region: Some("us-east-1".into()),
        bearer_token: Some("bedrock-api-key-123".into()),
        ..BedrockOptions::default()
    };
    let events = collect(&model(&server, NOVA), &context("hi"), options(), bedrock).await;
    assert_eq!(final_message(&events).text(), "hello");
    let h = &server.requests()[0].headers;
    assert_eq!(h["authorization"], "Bearer bedrock-api-key-123");
    assert!(!h.contains_key("x-amz-date"));
    assert!(!h.contains_key("x-amz-security-token"));
}

#[tokio::test]
async fn cancellation_mid_stream_ends_aborted() {
    let server = server().await;
    server.push(
        Script::text("one two three four five")
            .with_chunk_size(4)
            .with_fault(Fault::stall(3, 10_000)),
    );
    let cancel = CancellationToken::new();
    let mut opts = options();
    opts.cancel = Some(cancel.clone());
    let mut stream = stream_bedrock(
        &model(&server, CLAUDE),
        &context("hi"),
        opts,
        bedrock_options(),
    );
    let mut events = Vec::new();
    let started = std::time::Instant::now();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap()
    {
        if event.kind() == "text_delta" {
            cancel.cancel();
        }
        events.push(event);
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_contract(&events);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(
        message.error_message.as_deref(),
        Some("Request was aborted")
    );
    assert!(!message.text().is_empty(), "partial text kept");

    // Cancelled before the response: aborted too.
    let cancel = CancellationToken::new();
    cancel.cancel();
    let mut opts = options();
    opts.cancel = Some(cancel);
    let events = collect(
        &model(&server, CLAUDE),
        &context("hi"),
        opts,
        bedrock_options(),
    )
    .await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Aborted);
}

#[tokio::test]
async fn throttling_is_retried_then_succeeds() {
    let server = server().await;
    server.push(Script::http_error(429));
    server.push(Script::http_error(503));
    server.push(Script::text("finally"));
    let mut opts = options();
    opts.max_retries = Some(2);
    let events = collect(
        &model(&server, CLAUDE),
        &context("hi"),
        opts,
        bedrock_options(),
    )
    .await;
    assert_eq!(final_message(&events).text(), "finally");
    assert_eq!(server.requests().len(), 3);
    // Every attempt is signed.
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.headers["authorization"].starts_with("AWS4-HMAC-SHA256 "))
    );
}

#[tokio::test]
async fn http_errors_read_like_the_aws_sdk() {
    for (status, text) in [
        (
            429,
            "Throttling error: Too many requests, please wait before trying again.",
        ),
        (
            500,
            "Internal server error: The server encountered an internal error while processing the request.",
        ),
        (
            503,
            "Service unavailable: Bedrock is unable to process your request.",
        ),
        (
            400,
            "Validation error: Malformed input request, please reformat your input and try again.",
        ),
        (
            403,
            "AccessDeniedException: You don't have access to the model with the specified model ID.",
        ),
        (502, "502: Mock error"),
    ] {
        let (message, _) = run_fault(Script::http_error(status), options()).await;
        assert_eq!(error_text(&message), text, "{status}");
        assert!(message.content.is_empty());
    }
    // A verbatim body without a type keeps the status as the name.
    let (message, _) = run_fault(
        Script::http_error(500).with_fault(Fault::HttpError {
            status: 500,
            retry_after: None,
            retry_after_ms: None,
            body: Some(String::new()),
        }),
        options(),
    )
    .await;
    assert_eq!(error_text(&message), "500: UnknownError");
}

#[tokio::test]
async fn connection_dropped_mid_stream() {
    let script = Script::text("a fairly long answer that will be cut off")
        .with_chunk_size(3)
        .with_fault(Fault::drop_after(6));
    let (message, _) = run_fault(script, options()).await;
    let text = error_text(&message);
    assert!(text.starts_with("Connection error"), "{text}");
    assert!(!message.text().is_empty(), "partial text kept");
}

#[tokio::test]
async fn corrupt_frame_fails_the_checksum() {
    let script = Script::text("hello there")
        .with_chunk_size(2)
        .with_fault(Fault::malformed_after(3));
    let (message, _) = run_fault(script, options()).await;
    let text = error_text(&message);
    assert!(text.starts_with("The message checksum ("), "{text}");
    assert!(text.contains("did not match the expected value"), "{text}");
}

#[tokio::test]
async fn stall_longer_than_the_idle_timeout() {
    let script = Script::text("slow answer")
        .with_chunk_size(2)
        .with_fault(Fault::stall(2, 3_000));
    let mut opts = options();
    opts.idle_timeout_ms = Some(300);
    let started = std::time::Instant::now();
    let (message, _) = run_fault(script, opts).await;
    assert!(started.elapsed() < Duration::from_millis(2_500));
    let text = error_text(&message);
    assert!(text.starts_with("Request timed out"), "{text}");
}

#[tokio::test]
async fn in_stream_exceptions_become_errors() {
    let (message, _) = run_fault(
        Script::text("partial output here")
            .with_chunk_size(4)
            .with_fault(Fault::stream_error(3)),
        options(),
    )
    .await;
    assert_eq!(
        error_text(&message),
        "Throttling error: Too many tokens, please wait before trying again."
    );
    assert!(!message.text().is_empty());
    let (message, _) = run_fault(
        Script::text("x").with_fault(Fault::StreamError {
            after_events: 1,
            message: Some("Rate exceeded".into()),
        }),
        options(),
    )
    .await;
    assert_eq!(error_text(&message), "Throttling error: Rate exceeded");
}

#[tokio::test]
async fn decode_bytes_replays_a_rendered_body() {
    let server = server().await;
    let m = model(&server, CLAUDE);
    let script = Script::new(vec![
        Item::thinking("hmm"),
        Item::text("Hello"),
        Item::tool_call("read", json!({"path": "x"})),
    ])
    .with_chunk_size(2);
    let body = mock_llm::render_body(api::BEDROCK_CONVERSE_STREAM, &script).unwrap();
    let events = replay(&m, body, 5).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(message.text(), "Hello");
    assert_eq!(message.content.len(), 3);
    assert_eq!(message.tool_calls().next().unwrap().arguments["path"], "x");
}

#[tokio::test]
async fn stop_reasons_exceptions_and_redacted_reasoning() {
    let server = server().await;
    let m = model(&server, CLAUDE);
    let start = event("messageStart", json!({"role": "assistant"}));
    let text = event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "hi"}}),
    );
    let stop = |reason: &str| event("messageStop", json!({"stopReason": reason}));

    for (reason, expected) in [
        ("end_turn", Some(StopReason::Stop)),
        ("stop_sequence", Some(StopReason::Stop)),
        ("max_tokens", Some(StopReason::Length)),
        ("model_context_window_exceeded", Some(StopReason::Length)),
        ("guardrail_intervened", None),
        ("content_filtered", None),
    ] {
        let body = [start.clone(), text.clone(), stop(reason)].concat();
        let events = replay(&m, body, 64).await;
        let message = final_message(&events);
        match expected {
            Some(reason) => assert_eq!(message.stop_reason, reason),
            None => assert_eq!(error_text(message), "An unknown error occurred"),
        }
    }

    let cases = [
        (
            exception(
                "modelStreamErrorException",
                r#"{"message":"upstream broke","originalStatusCode":500}"#,
            ),
            "Model stream error: upstream broke",
        ),
        (
            exception("validationException", r#"{"message":"too long"}"#),
            "Validation error: too long",
        ),
        (
            exception("serviceUnavailableException", "{}"),
            "Service unavailable: UnknownError",
        ),
        (
            exception("internalServerException", r#"{"Message":"oops"}"#),
            "Internal server error: oops",
        ),
        // An exception the SDK does not model: the raw body.
        (
            exception("brandNewException", r#"{"message":"new"}"#),
            r#"{"message":"new"}"#,
        ),
        (
            eventstream::Message::new(
                &[
                    (":message-type", "error"),
                    (":error-code", "InternalFailure"),
                    (":error-message", "boom"),
                ],
                Vec::new(),
            )
            .encode(),
            "boom",
        ),
        (
            event("messageStart", json!({"role": "user"})),
            "Unexpected assistant message start but got user message start instead",
        ),
    ];
    for (tail, expected) in cases {
        let body = [start.clone(), text.clone(), tail].concat();
        let events = replay(&m, body, 10).await;
        assert_eq!(error_text(final_message(&events)), expected);
    }

    // A stream cut inside a message is truncated; unknown events are skipped.
    let mut body = [
        start.clone(),
        event("somethingNew", json!({})),
        text.clone(),
        stop("end_turn"),
    ]
    .concat();
    let events = replay(&m, body.clone(), 3).await;
    assert_eq!(final_message(&events).text(), "hi");
    body.truncate(body.len() - 5);
    let events = replay(&m, body, 3).await;
    assert_eq!(
        error_text(final_message(&events)),
        "Truncated event message received."
    );

    // Redacted reasoning is kept and sent back as redactedContent.
    let body = [
        start.clone(),
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "ZW5jcnlwdGVk"}}}),
        ),
        event("contentBlockStop", json!({"contentBlockIndex": 0})),
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 1, "delta": {"text": "visible"}}),
        ),
        stop("end_turn"),
        event(
            "metadata",
            json!({"usage": {"inputTokens": 7, "outputTokens": 3}, "metrics": {"latencyMs": 1}}),
        ),
    ]
    .concat();
    let events = replay(&m, body, 16).await;
    let message = final_message(&events).clone();
    assert_eq!(message.usage.total_tokens, 10);
    let AssistantBlock::Thinking(thinking) = &message.content[0] else {
        panic!("{message:?}")
    };
    assert!(thinking.is_redacted());
    assert_eq!(thinking.thinking_signature.as_deref(), Some("ZW5jcnlwdGVk"));
    let mut ctx = context("hi");
    ctx.messages.push(Message::Assistant(message.into()));
    ctx.messages.push(Message::User(UserMessage::text("more")));
    let request =
        bedrock::request::build_body(&m, &ctx, &options(), &bedrock_options(), None).unwrap();
    let body = serde_json::to_value(&request).unwrap();
    assert_eq!(
        body["messages"][1]["content"],
        json!([{"reasoningContent": {"redactedContent": "ZW5jcnlwdGVk"}}, {"text": "visible"}])
    );
}

#[tokio::test]
async fn non_claude_reasoning_goes_back_without_signature() {
    let server = server().await;
    let m = model(&server, NOVA);
    let mut assistant =
        AssistantMessage::empty(api::BEDROCK_CONVERSE_STREAM, "amazon-bedrock", NOVA);
    let mut thinking = pi_ai::ThinkingContent::new("reasoned");
    thinking.thinking_signature = Some("sig".into());
    assistant.content = vec![
        AssistantBlock::Thinking(thinking.clone()),
        AssistantBlock::Text(pi_ai::TextContent::new("answer")),
    ]
    .into();
    let mut ctx = context("q");
    ctx.messages
        .push(Message::Assistant(assistant.clone().into()));
    let body = serde_json::to_value(
        bedrock::request::build_body(&m, &ctx, &options(), &bedrock_options(), None).unwrap(),
    )
    .unwrap();
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"reasoningContent": {"reasoningText": {"text": "reasoned"}}})
    );
    // Unsigned Claude thinking goes back as plain text.
    let claude = model(&server, CLAUDE);
    thinking.thinking_signature = None;
    assistant.model = CLAUDE.into();
    assistant.content[0] = AssistantBlock::Thinking(thinking);
    let mut ctx = context("q");
    ctx.messages.push(Message::Assistant(assistant.into()));
    let body = serde_json::to_value(
        bedrock::request::build_body(&claude, &ctx, &options(), &bedrock_options(), None).unwrap(),
    )
    .unwrap();
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"text": "reasoned"})
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
