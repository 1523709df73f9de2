//! What `bedrock-converse-stream` sends: the Converse body, images as base64 bytes, thinking
//! fields per level and model, and authentication by SigV4 (deterministic for a fixed clock) or
//! a bearer token.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::bedrock::{CLAUDE, NOVA, TOKEN, bedrock_options, collect, model, options};
use common::{context, drain, error_text, final_message, read_tool, server};
use mock_llm::Script;
use pi_ai::providers::bedrock::{self, BedrockOptions, sigv4, stream_simple_bedrock};
use pi_ai::{
    AssistantBlock, AssistantMessage, CacheRetention, ImageContent, InputBlock, Message, Model,
    SimpleStreamOptions, StopReason, ThinkingLevel, ToolChoice, ToolResultMessage, UserMessage,
    api,
};
use serde_json::json;

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
    // Without maxTokens, Claude gets its output cap (Bedrock's default would cut it short).
    assert_eq!(body["inferenceConfig"], json!({"maxTokens": m.max_tokens}));
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
    // pi-ai 1.6 caps nothing at 32000: the model's 64000 (with the budget inside it).
    assert_eq!(body["inferenceConfig"]["maxTokens"], 64_000);
    assert_eq!(
        body["additionalModelRequestFields"],
        json!({
            "thinking": {"type": "enabled", "budget_tokens": 16384, "display": "summarized"},
            "anthropic_beta": ["interleaved-thinking-2025-05-14"]
        })
    );
    // Adaptive Claude (Opus 4.6): an effort; xhigh becomes high except on Opus 4.7, which
    // also binds its thinking blocks to their prompt prefix.
    let unbound = json!({"thinking": {"type": "adaptive", "display": "summarized"},
        "output_config": {"effort": "high"}});
    let bound = json!({"thinking": {"type": "adaptive", "display": "summarized",
            "block_binding": {"prefix_mismatch_behavior": "drop_block"}},
        "output_config": {"effort": "xhigh"},
        "anthropic_beta": ["thinking-binding-controls-2026-08-01"]});
    for (id, fields) in [
        ("anthropic.claude-opus-4-6-v1", unbound),
        ("us.anthropic.claude-opus-4-7-v1", bound),
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
        assert_eq!(body["inferenceConfig"]["maxTokens"], 64_000);
        assert_eq!(body["additionalModelRequestFields"], fields);
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
async fn a_blank_user_turn_gets_a_placeholder() {
    let server = server().await;
    server.push(Script::text("ok"));
    let m = model(&server, CLAUDE);
    collect(&m, &context("  "), options(), bedrock_options()).await;
    let body = &server.requests()[0].body;
    assert_eq!(
        body["messages"][0]["content"][0],
        json!({"text": "<empty>"})
    );
}
