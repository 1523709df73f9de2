//! What each provider sends: body layout as the TypeScript pi sends it, message conversion,
//! headers, reasoning levels and thinking budgets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{
    Wire, collect, context, model, options, read_call, send_simple, server, tool_result,
    tool_use_turn,
};
use mock_llm::Script;
use pi_ai::{
    AssistantBlock, AssistantMessage, Context, InputBlock, Message, SimpleStreamOptions,
    ThinkingContent, ThinkingLevel, UserMessage,
};
use serde_json::{Value, json};

const CALL_ID: &str = "call_03194b7774af409580db2e5b";

/// A conversation with a tool round trip, like the reference trace.
fn tool_round_trip(provider_of_history: &str) -> Context {
    let mut ctx = context("read hello.txt");
    ctx.messages.push(tool_use_turn(
        "openai-completions",
        provider_of_history,
        "mock-model",
        vec![read_call(CALL_ID, "hello.txt")],
    ));
    ctx.messages.push(tool_result(
        CALL_ID,
        "read",
        vec![InputBlock::text(
            "Hello from the anchor test file!\nSecond line.\n",
        )],
    ));
    ctx
}

async fn sent_body(
    wire: Wire,
    ctx: &Context,
    simple: SimpleStreamOptions,
) -> (Value, std::collections::BTreeMap<String, String>) {
    let server = server().await;
    let (_, request) = send_simple(&server, &model(&server, wire), ctx, simple).await;
    (request.body, request.headers)
}

fn simple(level: Option<ThinkingLevel>) -> SimpleStreamOptions {
    common::simple(options(), level)
}

#[tokio::test]
async fn openai_body_matches_the_typescript_layout() {
    let server = server().await;
    let mut m = model(&server, Wire::OpenAi);
    m.reasoning = false;
    server.push(Script::text("ok"));
    let _ = pi_ai::stream_simple(&m, &tool_round_trip("mock"), simple(None))
        .result()
        .await;
    let request = server.requests().pop().unwrap();
    let body = request.body;
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
            "messages",
            "stream",
            "stream_options",
            "store",
            "max_completion_tokens",
            "tools"
        ]
    );
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["store"], json!(false));
    assert_eq!(body["max_completion_tokens"], json!(16384));
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages[0],
        json!({"role": "system", "content": "You are a test."})
    );
    assert_eq!(
        messages[1]["content"],
        json!([{"type": "text", "text": "read hello.txt"}])
    );
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_03194b7774af409580db2e5b",
            "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"hello.txt\"}"}}]})
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "content": "Hello from the anchor test file!\nSecond line.\n",
            "tool_call_id": "call_03194b7774af409580db2e5b"})
    );
    assert_eq!(body["tools"][0]["type"], "function");
    // As in pi-ai 1.6, no `strict` unless the model's compat says strict mode is supported.
    assert!(body["tools"][0]["function"].get("strict").is_none());
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["required"],
        json!(["path"])
    );
    assert_eq!(request.headers["authorization"], "Bearer test-key");
}

#[tokio::test]
async fn openai_reasoning_models_use_developer_role_only_on_openai_and_effort() {
    let (body, _) = sent_body(
        Wire::OpenAi,
        &context("q"),
        simple(Some(ThinkingLevel::High)),
    )
    .await;
    // As pi 1.6.0: `developer` goes to OpenAI only; any other server gets `system`.
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["reasoning_effort"], "high");
    let server = server().await;
    let mut openai = model(&server, Wire::OpenAi);
    openai.provider = "openai".into();
    let (_, request) = send_simple(
        &server,
        &openai,
        &context("q"),
        simple(Some(ThinkingLevel::High)),
    )
    .await;
    assert_eq!(request.body["messages"][0]["role"], "developer");
    // xhigh is clamped to what the model supports (no xhigh mapping → high).
    let (body, _) = sent_body(
        Wire::OpenAi,
        &context("q"),
        simple(Some(ThinkingLevel::Xhigh)),
    )
    .await;
    assert_eq!(body["reasoning_effort"], "high");
    let (body, _) = sent_body(Wire::OpenAi, &context("q"), simple(None)).await;
    assert!(body.get("reasoning_effort").is_none());
}

#[tokio::test]
async fn openai_compat_settings_change_the_body() {
    let server = server().await;
    let mut m = model(&server, Wire::OpenAi);
    m.compat = Some(pi_ai::ModelCompat {
        supports_developer_role: Some(false),
        supports_store: Some(false),
        max_tokens_field: Some(pi_ai::MaxTokensField::MaxTokens),
        supports_usage_in_streaming: Some(false),
        requires_tool_result_name: Some(true),
        requires_assistant_after_tool_result: Some(true),
        ..Default::default()
    });
    server.push(Script::text("ok"));
    let mut ctx = tool_round_trip("mock");
    ctx.messages
        .push(Message::User(UserMessage::text("thanks")));
    let _ = pi_ai::stream_simple(&m, &ctx, simple(None)).result().await;
    let body = server.requests().pop().unwrap().body;
    assert_eq!(body["messages"][0]["role"], "system");
    assert!(body.get("store").is_none() && body.get("stream_options").is_none());
    assert_eq!(body["max_tokens"], 16384);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[3]["name"], "read");
    assert_eq!(
        messages[4],
        json!({"role": "assistant", "content": "I have processed the tool results."})
    );
    assert_eq!(messages[5]["role"], "user");
}

#[tokio::test]
async fn anthropic_body_has_system_blocks_tools_and_cache_control() {
    let (body, headers) = sent_body(Wire::Anthropic, &tool_round_trip("mock"), simple(None)).await;
    assert_eq!(headers["x-api-key"], "test-key");
    assert_eq!(headers["anthropic-version"], "2023-06-01");
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["max_tokens"], 16384);
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}])
    );
    let tool = &body["tools"][0];
    assert_eq!(tool["name"], "read");
    assert_eq!(tool["input_schema"]["required"], json!(["path"]));
    assert_eq!(tool["cache_control"], json!({"type": "ephemeral"}));
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[1]["content"][0]["type"], "tool_use");
    assert_eq!(
        messages[1]["content"][0]["input"],
        json!({"path": "hello.txt"})
    );
    let result = &messages[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "call_03194b7774af409580db2e5b");
    assert_eq!(result["is_error"], false);
    // The last user block carries the conversation cache marker.
    assert_eq!(result["cache_control"], json!({"type": "ephemeral"}));
    // A reasoning model with thinking off says so explicitly.
    assert_eq!(body["thinking"], json!({"type": "disabled"}));
}

#[tokio::test]
async fn anthropic_thinking_budgets_follow_the_level() {
    let (body, _) = sent_body(
        Wire::Anthropic,
        &context("q"),
        simple(Some(ThinkingLevel::Medium)),
    )
    .await;
    assert_eq!(body["thinking"]["type"], "enabled");
    assert_eq!(body["thinking"]["budget_tokens"], 8192);
    // maxTokens = min(16384 + 8192, model max 16384); the budget stays below it.
    assert_eq!(body["max_tokens"], 16384);
    let mut custom = simple(Some(ThinkingLevel::Low));
    custom.thinking_budgets = Some(pi_ai::ThinkingBudgets {
        low: Some(3000),
        ..Default::default()
    });
    let (body, _) = sent_body(Wire::Anthropic, &context("q"), custom).await;
    assert_eq!(body["thinking"]["budget_tokens"], 3000);
    assert!(body.get("temperature").is_none());
}

#[tokio::test]
async fn anthropic_tool_schemas_say_whether_extra_arguments_are_allowed() {
    let mut ctx = context("q");
    ctx.tools = vec![pi_ai::Tool {
        name: "pick".into(),
        description: "Pick one".into(),
        parameters: json!({"type": "object", "anyOf": [{"required": ["a"]}],
            "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"],
            "additionalProperties": false, "$defs": {"A": {"type": "string"}}}),
        constrained_sampling: None,
    }];
    let (body, _) = sent_body(Wire::Anthropic, &ctx, simple(None)).await;
    // pi-ai 1.6 (#12067): `additionalProperties` and the definitions go along, a root
    // `anyOf` does not.
    assert_eq!(
        body["tools"][0]["input_schema"],
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
            "required": ["a"], "additionalProperties": false,
            "$defs": {"A": {"type": "string"}}})
    );
}

#[tokio::test]
async fn anthropic_adaptive_models_use_effort() {
    let server = server().await;
    let mut m = model(&server, Wire::Anthropic);
    m.id = "claude-opus-4-6".into();
    server.push(Script::text("ok"));
    let _ = pi_ai::stream_simple(&m, &context("q"), simple(Some(ThinkingLevel::Minimal)))
        .result()
        .await;
    let body = server.requests().pop().unwrap().body;
    assert_eq!(
        body["thinking"],
        json!({"type": "adaptive", "display": "summarized"})
    );
    assert_eq!(body["output_config"], json!({"effort": "low"}));
}

#[tokio::test]
/// Own signed thinking is replayed; another model's is left out (pi 1.3).
async fn anthropic_replays_signed_thinking_and_drops_foreign_thinking() {
    let mut ctx = context("first");
    let mut own = AssistantMessage::empty("anthropic-messages", "mock", "mock-model");
    let mut signed = ThinkingContent::new("my reasoning");
    signed.thinking_signature = Some("sig".into());
    own.content = vec![
        AssistantBlock::Thinking(signed),
        AssistantBlock::Text(pi_ai::TextContent::new("answer")),
    ]
    .into();
    ctx.messages.push(Message::Assistant(own.into()));
    let mut foreign = AssistantMessage::empty("openai-completions", "other", "gpt");
    foreign.content = vec![
        AssistantBlock::Thinking(ThinkingContent::new("their reasoning")),
        AssistantBlock::Text(pi_ai::TextContent::new("their answer")),
    ]
    .into();
    ctx.messages
        .push(Message::User(UserMessage::text("second")));
    ctx.messages.push(Message::Assistant(foreign.into()));
    ctx.messages.push(Message::User(UserMessage::text("third")));
    let (body, _) = sent_body(Wire::Anthropic, &ctx, simple(None)).await;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["content"][0],
        json!({"type": "thinking", "thinking": "my reasoning", "signature": "sig"})
    );
    assert_eq!(
        messages[3]["content"],
        json!([{"type": "text", "text": "their answer"}])
    );
}

#[tokio::test]
async fn payload_hook_can_rewrite_the_body() {
    let server = server().await;
    server.push(Script::text("ok"));
    let m = model(&server, Wire::OpenAi);
    let mut opts = options();
    opts.on_payload = Some(std::sync::Arc::new(|_model, body| {
        body["temperature"] = json!(0.25);
    }));
    let events = collect(&m, &context("q"), opts).await;
    assert_eq!(events.last().unwrap().kind(), "done");
    assert_eq!(server.requests()[0].body["temperature"], json!(0.25));
}

#[tokio::test]
async fn extra_headers_override_defaults() {
    let server = server().await;
    server.push(Script::text("ok"));
    let mut m = model(&server, Wire::OpenAi);
    m.headers = Some([("x-model".to_owned(), "1".to_owned())].into());
    let mut opts = options();
    opts.headers.insert("x-extra".into(), "2".into());
    opts.headers
        .insert("Authorization".into(), "Bearer override".into());
    let _ = collect(&m, &context("q"), opts).await;
    let headers = &server.requests()[0].headers;
    assert_eq!(headers["x-model"], "1");
    assert_eq!(headers["x-extra"], "2");
    assert_eq!(headers["authorization"], "Bearer override");
}
