//! Building blocks of the provider tests: the mock server, a priced model pointing at it, the
//! usual context with a `read` tool, tool calls and results, and bodies cut into chunks.

use std::convert::Infallible;

use bytes::Bytes;
use futures_core::Stream;
use mock_llm::{MockServer, RecordedRequest, Script};
use pi_ai::{
    AssistantBlock, AssistantMessage, Context, InputBlock, InputKind, Message, Model, ModelCost,
    SimpleStreamOptions, StopReason, StreamOptions, ThinkingLevel, Tool, ToolCall,
    ToolResultMessage, UserMessage,
};
use serde_json::{Map, Value, json};

pub async fn server() -> MockServer {
    MockServer::start().await.expect("mock server starts")
}

/// A model of `api` at `base_url` with non-zero prices (so costs are visible), reasoning, text
/// and images; tests change what they need with `Model { .., ..mock_model(..) }`.
pub fn mock_model(api: &str, provider: &str, id: &str, base_url: String) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        base_url,
        reasoning: true,
        thinking_level_map: None,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: None,
        },
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
        extras: Default::default(),
    }
}

/// `read(path, offset?)`, the tool most contexts offer.
pub fn read_tool() -> Tool {
    Tool {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "offset": {"type": "number"}},
            "required": ["path"]
        }),
        constrained_sampling: None,
    }
}

/// A system prompt, one user message and the `read` tool.
pub fn context(prompt: &str) -> Context {
    context_with(prompt, read_tool())
}

/// A system prompt, one user message and `tool`.
pub fn context_with(prompt: &str, tool: Tool) -> Context {
    Context {
        system_prompt: Some("You are a test.".into()),
        messages: vec![Message::User(UserMessage::text(prompt))],
        tools: vec![tool],
        ..Default::default()
    }
}

/// `stream` with a provider-neutral reasoning level.
pub fn simple(stream: StreamOptions, level: Option<ThinkingLevel>) -> SimpleStreamOptions {
    SimpleStreamOptions {
        stream,
        reasoning: level,
        thinking_budgets: None,
    }
}

/// A JSON object as tool-call arguments.
pub fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("arguments must be an object"),
    }
}

/// A call of `read` on `path`.
pub fn read_call(id: &str, path: &str) -> AssistantBlock {
    AssistantBlock::ToolCall(ToolCall::new(id, "read", args(json!({"path": path}))))
}

/// An assistant turn of another model that ended asking for tools.
pub fn tool_use_turn(
    api: &str,
    provider: &str,
    model: &str,
    blocks: Vec<AssistantBlock>,
) -> Message {
    let mut assistant = AssistantMessage::empty(api, provider, model);
    assistant.content = blocks.into();
    assistant.stop_reason = StopReason::ToolUse;
    Message::Assistant(assistant.into())
}

/// The (successful) result of one tool call.
pub fn tool_result(call_id: &str, tool_name: &str, content: Vec<InputBlock>) -> Message {
    Message::ToolResult(
        ToolResultMessage {
            tool_call_id: call_id.into(),
            tool_name: tool_name.into(),
            content: content.into(),
            ..Default::default()
        }
        .into(),
    )
}

/// The keys of a JSON object, in order.
pub fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

/// `body` as a network stream of `size`-byte pieces (UTF-8 and lines split anywhere).
pub fn chunked(
    body: &[u8],
    size: usize,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    let pieces: Vec<Result<Bytes, Infallible>> = body
        .chunks(size)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    futures_util::stream::iter(pieces)
}

/// Answers one `stream_simple` call on `server` with "ok"; the reply and the request sent.
pub async fn send_simple(
    server: &MockServer,
    model: &Model,
    context: &Context,
    options: SimpleStreamOptions,
) -> (AssistantMessage, RecordedRequest) {
    server.push(Script::text("ok"));
    let reply = pi_ai::stream_simple(model, context, options).result().await;
    let request = server.requests().pop().expect("one request");
    (reply, request)
}
