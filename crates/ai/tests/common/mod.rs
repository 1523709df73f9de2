//! Shared helpers of the provider tests: a mock server, models that point at it, and event
//! collection.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures_util::StreamExt;
use mock_llm::MockServer;
use pi_ai::{
    AssistantMessage, AssistantMessageEvent, Context, InputKind, Message, Model, ModelCost,
    StreamOptions, Tool, UserMessage, api,
};

/// The two providers of the foundation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

pub const BOTH: [Wire; 2] = [Wire::OpenAi, Wire::Anthropic];

pub async fn server() -> MockServer {
    MockServer::start().await.expect("mock server starts")
}

/// A model of `wire` served by `server`, with non-zero prices so costs are visible.
pub fn model(server: &MockServer, wire: Wire) -> Model {
    let (api, base_url) = match wire {
        Wire::OpenAi => (api::OPENAI_COMPLETIONS, server.openai_base_url()),
        Wire::Anthropic => (api::ANTHROPIC_MESSAGES, server.anthropic_base_url()),
    };
    Model {
        id: "mock-model".into(),
        name: "Mock Model".into(),
        api: api.into(),
        provider: "mock".into(),
        base_url,
        reasoning: true,
        thinking_level_map: None,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        },
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
    }
}

pub fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("test-key".into()),
        max_retries: Some(0),
        ..StreamOptions::default()
    }
}

pub fn context(prompt: &str) -> Context {
    Context {
        system_prompt: Some("You are a test.".into()),
        messages: vec![Message::User(UserMessage::text(prompt))],
        tools: vec![Tool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "offset": {"type": "number"}},
                "required": ["path"]
            }),
        }],
    }
}

/// Runs a stream to its end (with a liveness guard) and returns every event.
pub async fn collect(
    model: &Model,
    context: &Context,
    options: StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let stream = pi_ai::stream(model, context, options);
    tokio::time::timeout(Duration::from_secs(30), stream.collect::<Vec<_>>())
        .await
        .expect("stream finished (no hang)")
}

/// The final message of an event list (the terminal event's).
pub fn final_message(events: &[AssistantMessageEvent]) -> &AssistantMessage {
    let last = events.last().expect("at least one event");
    assert!(last.is_terminal(), "last event is {}", last.kind());
    last.message()
}

pub fn kinds(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
    events.iter().map(AssistantMessageEvent::kind).collect()
}

/// Asserts the stream contract: `start` first (unless it failed before any response),
/// exactly one terminal event, last.
pub fn assert_contract(events: &[AssistantMessageEvent]) {
    let terminal = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminal, 1, "exactly one done/error: {:?}", kinds(events));
    assert!(events.last().unwrap().is_terminal());
    if events.len() > 1 {
        assert_eq!(events[0].kind(), "start");
    }
}
