//! What the `mistral-conversations` tests share: a Mistral model at the mock's `/mistral`,
//! running one script, the body and headers sent, and a tool round from another provider.

use std::collections::BTreeMap;

use mock_llm::{MockServer, Script};
use pi_ai::{
    AssistantBlock, AssistantMessage, Context, InputBlock, Message, Model, ModelCost,
    SimpleStreamOptions, StopReason, StreamOptions, TextContent, ThinkingLevel, ToolCall,
    ToolResultMessage, api,
};
use serde_json::{Value, json};

use super::events::run_script;
use super::fixtures::{self, args, context, mock_model, send_simple, server};

/// A Mistral model served by `server` (the mock mounts Mistral under `/mistral`; the provider
/// appends `/v1/chat/completions` as the SDK does to `https://api.mistral.ai`).
pub fn model(server: &MockServer, id: &str) -> Model {
    Model {
        name: "Mistral (mock)".into(),
        reasoning: id.starts_with("magistral") || id == "mistral-small-latest",
        cost: ModelCost {
            input: 2.0,
            output: 6.0,
            cache_read: 0.0,
            cache_write: 0.0,
            tiers: None,
        },
        ..mock_model(
            api::MISTRAL_CONVERSATIONS,
            "mistral",
            id,
            format!("{}/mistral", server.url()),
        )
    }
}

pub fn large(server: &MockServer) -> Model {
    model(server, "mistral-large-latest")
}

/// A test key; the client's own retries stay on.
pub fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("test-key".into()),
        ..StreamOptions::default()
    }
}

pub fn simple(level: Option<ThinkingLevel>) -> SimpleStreamOptions {
    fixtures::simple(options(), level)
}

/// Runs one scripted response and returns the final message (checking the contract).
pub async fn run(script: Script, opts: StreamOptions) -> (AssistantMessage, MockServer) {
    let server = server().await;
    let message = run_script(&server, &large(&server), &context("hi"), script, opts).await;
    (message, server)
}

/// The body and headers of the one request `stream_simple` sends for `ctx`.
pub async fn sent(
    m: &Model,
    server: &MockServer,
    ctx: &Context,
    opts: SimpleStreamOptions,
) -> (Value, BTreeMap<String, String>) {
    let (message, request) = send_simple(server, m, ctx, opts).await;
    assert_eq!(message.stop_reason, StopReason::Stop, "{message:?}");
    assert_eq!(request.path, "/mistral/v1/chat/completions");
    (request.body, request.headers)
}

/// A finished tool round from another provider, with that provider's ids.
pub fn foreign_tool_round(ctx: &mut Context, api: &str, provider: &str, ids: &[&str]) {
    let mut assistant = AssistantMessage::empty(api, provider, "other-model");
    assistant.content = vec![AssistantBlock::Text(TextContent::new("Reading."))].into();
    for (n, id) in ids.iter().enumerate() {
        assistant
            .content
            .push(AssistantBlock::ToolCall(ToolCall::new(
                *id,
                "read",
                args(json!({"path": format!("f{n}.txt")})),
            )));
    }
    assistant.stop_reason = StopReason::ToolUse;
    ctx.messages.push(Message::Assistant(assistant.into()));
    for (n, id) in ids.iter().enumerate() {
        ctx.messages.push(Message::ToolResult(
            ToolResultMessage {
                tool_call_id: (*id).into(),
                tool_name: "read".into(),
                content: vec![InputBlock::text(format!("contents {n}\n"))].into(),
                is_error: n == 1,
                ..Default::default()
            }
            .into(),
        ));
    }
}
