//! What `mistral-conversations` sends, as Mistral documents it: the body, 9-character tool ids
//! after a handoff, images, replayed thinking, reasoning by model, options, headers and payload
//! hooks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use mock_llm::Script;
use pi_ai::{
    AssistantBlock, AssistantMessage, ImageContent, InputBlock, InputKind, Message, StopReason,
    TextContent, ThinkingContent, ThinkingLevel, ToolCall, ToolChoice, ToolResultMessage,
    UserMessage, api,
};
use serde_json::json;

use common::mistral::{foreign_tool_round, large, model, options, sent, simple};
use common::{args, collect, context, read_tool, server};

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

    // pi-ai 1.6: a thinking-level map (every reasoning model of the catalog has one) makes
    // it `reasoning_effort`; a level the map leaves unmapped asks for `high`.
    let mut small = model(&server, "mistral-small-latest");
    small.thinking_level_map = Some(
        [
            (ThinkingLevel::Off, Some("none".to_owned())),
            (ThinkingLevel::Low, None),
            (ThinkingLevel::High, Some("high".to_owned())),
        ]
        .into(),
    );
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

    // Off: the map's `off` value; without a map, or a model without reasoning: neither field.
    let (body, _) = sent(&small, &server, &context("q"), simple(None)).await;
    assert_eq!(body["reasoning_effort"], "none");
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
