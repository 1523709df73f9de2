//! The Messages API request body: system blocks, content blocks, tools, thinking, caching.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::transform::transform_messages;
use crate::types::{
    AssistantBlock, CacheRetention, Context, InputBlock, Message, Model, StreamOptions, ToolChoice,
    UserContent,
};

/// The identity line OAuth (Claude subscription) tokens must send first.
pub const CLAUDE_CODE_IDENTITY: &str = "You are Claude Code, Anthropic's official CLI for Claude.";

/// Claude Code's canonical tool names, used for OAuth tokens.
const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// Maps a tool name to Claude Code's casing when it is one of its tools.
pub fn to_claude_code_name(name: &str) -> String {
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|t| t.eq_ignore_ascii_case(name))
        .map_or_else(|| name.to_owned(), |t| (*t).to_owned())
}

/// `cache_control` on a block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl: Option<&'static str>,
}

/// The cache marker for a retention, or none.
pub fn cache_control(model: &Model, retention: CacheRetention) -> Option<CacheControl> {
    if retention == CacheRetention::None {
        return None;
    }
    let long_ok = model
        .compat
        .as_ref()
        .and_then(|c| c.supports_long_cache_retention)
        .unwrap_or(true);
    let ttl = (retention == CacheRetention::Long && long_ok).then_some("1h");
    Some(CacheControl {
        kind: "ephemeral",
        ttl,
    })
}

/// Whether tools get `eager_input_streaming` (else the fine-grained streaming beta header).
pub fn supports_eager_tool_streaming(model: &Model) -> bool {
    model
        .compat
        .as_ref()
        .and_then(|c| c.supports_eager_tool_input_streaming)
        .unwrap_or(true)
}

/// Whether the model thinks adaptively with an effort level (Opus 4.6+, Sonnet 4.6).
pub fn supports_adaptive_thinking(model_id: &str) -> bool {
    [
        "opus-4-6",
        "opus-4.6",
        "opus-4-7",
        "opus-4.7",
        "sonnet-4-6",
        "sonnet-4.6",
    ]
    .iter()
    .any(|needle| model_id.contains(needle))
}

fn normalize_tool_call_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

fn image_block(mime: &str, data: &str) -> Value {
    serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}})
}

fn text_block(text: &str) -> Value {
    serde_json::json!({"type": "text", "text": text})
}

/// Tool-result content: a plain string when text only, else blocks (with a placeholder text
/// when there are only images).
fn tool_result_content(content: &[InputBlock]) -> Value {
    if !content.iter().any(|b| matches!(b, InputBlock::Image(_))) {
        let text: Vec<&str> = content.iter().filter_map(InputBlock::as_text).collect();
        return Value::String(text.join("\n"));
    }
    let mut blocks: Vec<Value> = content
        .iter()
        .map(|b| match b {
            InputBlock::Text(t) => text_block(&t.text),
            InputBlock::Image(i) => image_block(&i.mime_type, &i.data),
        })
        .collect();
    if !content.iter().any(|b| matches!(b, InputBlock::Text(_))) {
        blocks.insert(0, text_block("(see attached image)"));
    }
    Value::Array(blocks)
}

/// Converts the conversation to Messages API messages.
pub fn convert_messages(
    model: &Model,
    messages: &[Message],
    oauth: bool,
    cache: Option<&CacheControl>,
) -> Vec<Value> {
    let messages = transform_messages(messages, model, Some(&normalize_tool_call_id));
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut index = 0;
    while index < messages.len() {
        match &messages[index] {
            Message::User(user) => match &user.content {
                UserContent::Text(text) => {
                    if !text.trim().is_empty() {
                        out.push(serde_json::json!({"role": "user", "content": text}));
                    }
                }
                UserContent::Blocks(blocks) => {
                    let content: Vec<Value> = blocks
                        .iter()
                        .filter_map(|b| match b {
                            InputBlock::Text(t) if t.text.trim().is_empty() => None,
                            InputBlock::Text(t) => Some(text_block(&t.text)),
                            InputBlock::Image(i) => Some(image_block(&i.mime_type, &i.data)),
                        })
                        .collect();
                    if !content.is_empty() {
                        out.push(serde_json::json!({"role": "user", "content": content}));
                    }
                }
            },
            Message::Assistant(assistant) => {
                let mut blocks = Vec::new();
                for block in &assistant.content {
                    match block {
                        AssistantBlock::Text(t) => {
                            if !t.text.trim().is_empty() {
                                blocks.push(text_block(&t.text));
                            }
                        }
                        AssistantBlock::Thinking(t) if t.is_redacted() => {
                            blocks.push(serde_json::json!({
                                "type": "redacted_thinking",
                                "data": t.thinking_signature.clone().unwrap_or_default(),
                            }));
                        }
                        AssistantBlock::Thinking(t) => {
                            if t.thinking.trim().is_empty() {
                                continue;
                            }
                            match t.thinking_signature.as_deref().filter(|s| !s.trim().is_empty()) {
                                // Unsigned thinking (an aborted stream) goes back as plain text.
                                None => blocks.push(text_block(&t.thinking)),
                                Some(signature) => blocks.push(serde_json::json!({
                                    "type": "thinking", "thinking": t.thinking, "signature": signature,
                                })),
                            }
                        }
                        AssistantBlock::ToolCall(call) => {
                            let name = if oauth {
                                to_claude_code_name(&call.name)
                            } else {
                                call.name.clone()
                            };
                            blocks.push(serde_json::json!({
                                "type": "tool_use", "id": call.id, "name": name, "input": call.arguments,
                            }));
                        }
                    }
                }
                if !blocks.is_empty() {
                    out.push(serde_json::json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                while let Some(Message::ToolResult(result)) = messages.get(index) {
                    results.push(serde_json::json!({
                        "type": "tool_result",
                        "tool_use_id": result.tool_call_id,
                        "content": tool_result_content(&result.content),
                        "is_error": result.is_error,
                    }));
                    index += 1;
                }
                out.push(serde_json::json!({"role": "user", "content": results}));
                continue;
            }
        }
        index += 1;
    }
    if let (Some(cache), Some(last)) = (cache, out.last_mut()) {
        mark_last_user_block(last, cache);
    }
    out
}

fn mark_last_user_block(message: &mut Value, cache: &CacheControl) {
    if message.get("role").and_then(Value::as_str) != Some("user") {
        return;
    }
    let marker = serde_json::to_value(cache).unwrap_or(Value::Null);
    let Some(content) = message.get_mut("content") else {
        return;
    };
    if let Value::String(text) = content {
        let text = std::mem::take(text);
        *content = serde_json::json!([{"type": "text", "text": text, "cache_control": marker}]);
    } else if let Some(Value::Object(block)) = content.as_array_mut().and_then(|a| a.last_mut()) {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        if matches!(kind, "text" | "image" | "tool_result") {
            block.insert("cache_control".into(), marker);
        }
    }
}

/// Thinking parameters chosen by `stream_simple` or the caller.
pub use crate::types::AnthropicThinking;

/// Builds the request body.
pub fn build_body(model: &Model, context: &Context, options: &StreamOptions, oauth: bool) -> Value {
    let retention = CacheRetention::resolve(options.cache_retention);
    let cache = cache_control(model, retention);
    let cache_value = cache.as_ref().and_then(|c| serde_json::to_value(c).ok());
    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.id.clone()));
    body.insert(
        "messages".into(),
        Value::Array(convert_messages(
            model,
            &context.messages,
            oauth,
            cache.as_ref(),
        )),
    );
    let max_tokens = options
        .max_tokens
        .filter(|m| *m > 0)
        .unwrap_or(model.max_tokens / 3);
    body.insert("max_tokens".into(), Value::from(max_tokens));
    body.insert("stream".into(), Value::Bool(true));

    let system_block = |text: &str| {
        let mut block = Map::new();
        block.insert("type".into(), Value::from("text"));
        block.insert("text".into(), Value::from(text));
        if let Some(c) = &cache_value {
            block.insert("cache_control".into(), c.clone());
        }
        Value::Object(block)
    };
    let mut system = Vec::new();
    if oauth {
        system.push(system_block(CLAUDE_CODE_IDENTITY));
    }
    if let Some(prompt) = context.system_prompt.as_deref() {
        system.push(system_block(prompt));
    }
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }

    let thinking = options.anthropic_thinking.as_ref();
    let thinking_enabled = thinking.is_some_and(|t| t.enabled);
    if let Some(temperature) = options.temperature.filter(|_| !thinking_enabled) {
        body.insert("temperature".into(), Value::from(temperature));
    }

    if !context.tools.is_empty() {
        let eager = supports_eager_tool_streaming(model);
        let last = context.tools.len() - 1;
        let tools: Vec<Value> = context
            .tools
            .iter()
            .enumerate()
            .map(|(i, tool)| {
                let mut t = Map::new();
                let name = if oauth { to_claude_code_name(&tool.name) } else { tool.name.clone() };
                t.insert("name".into(), Value::String(name));
                t.insert("description".into(), Value::String(tool.description.clone()));
                if eager {
                    t.insert("eager_input_streaming".into(), Value::Bool(true));
                }
                t.insert(
                    "input_schema".into(),
                    serde_json::json!({
                        "type": "object",
                        "properties": tool.parameters.get("properties").cloned().unwrap_or_else(|| serde_json::json!({})),
                        "required": tool.parameters.get("required").cloned().unwrap_or_else(|| serde_json::json!([])),
                    }),
                );
                if let (true, Some(c)) = (i == last, &cache_value) {
                    t.insert("cache_control".into(), c.clone());
                }
                Value::Object(t)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }

    if model.reasoning {
        match thinking {
            Some(t) if t.enabled => {
                let display = t.display.clone().unwrap_or_else(|| "summarized".into());
                if supports_adaptive_thinking(&model.id) {
                    body.insert(
                        "thinking".into(),
                        serde_json::json!({"type": "adaptive", "display": display}),
                    );
                    if let Some(effort) = &t.effort {
                        body.insert(
                            "output_config".into(),
                            serde_json::json!({"effort": effort}),
                        );
                    }
                } else {
                    body.insert(
                        "thinking".into(),
                        serde_json::json!({
                            "type": "enabled",
                            "budget_tokens": t.budget_tokens.filter(|b| *b > 0).unwrap_or(1024),
                            "display": display,
                        }),
                    );
                }
            }
            Some(_) => {
                body.insert("thinking".into(), serde_json::json!({"type": "disabled"}));
            }
            None => {}
        }
    }

    if let Some(user_id) = options
        .metadata
        .as_ref()
        .and_then(|m| m.get("user_id"))
        .and_then(Value::as_str)
    {
        body.insert("metadata".into(), serde_json::json!({"user_id": user_id}));
    }
    if let Some(choice) = &options.tool_choice {
        let value = match choice {
            ToolChoice::Auto => serde_json::json!({"type": "auto"}),
            ToolChoice::None => serde_json::json!({"type": "none"}),
            ToolChoice::Required => serde_json::json!({"type": "any"}),
            ToolChoice::Tool(name) => serde_json::json!({"type": "tool", "name": name}),
        };
        body.insert("tool_choice".into(), value);
    }
    Value::Object(body)
}
