//! The chat completions request body as the Mistral SDK serializes pi's payload: messages
//! with content chunks, tools, tool choice and the reasoning switches.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::ids::IdNormalizer;
use crate::providers::body_text::{BodyText, data_url};
use crate::transform::transform_messages;
use crate::types::{
    AssistantBlock, AssistantMessage, Context, InputBlock, Message, Model, SharedStr,
    StreamOptions, ThinkingLevel, ToolChoice, ToolResultMessage, UserContent,
};

const USER_IMAGE_OMITTED: &str = "(image omitted: model does not support images)";

/// One content chunk of a message.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Chunk<'a> {
    /// `{"type":"text","text":…}`.
    Text { text: Cow<'a, str> },
    /// `{"type":"image_url","image_url":"data:…"}` (the SDK sends the URL as a plain string).
    ImageUrl { image_url: BodyText<'a> },
    /// `{"type":"thinking","thinking":[{"type":"text","text":…}]}`: replayed reasoning.
    Thinking { thinking: Vec<Chunk<'a>> },
}

impl<'a> Chunk<'a> {
    fn text(text: impl Into<Cow<'a, str>>) -> Self {
        Self::Text { text: text.into() }
    }

    fn image(mime_type: &str, data: &SharedStr) -> Self {
        Self::ImageUrl {
            image_url: data_url(mime_type, data),
        }
    }
}

/// A user message's content: a plain string or chunks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum UserContentParam<'a> {
    Text(&'a str),
    Chunks(Vec<Chunk<'a>>),
}

/// `function` of an assistant tool call.
#[derive(Debug, Serialize)]
pub struct FunctionCall<'a> {
    name: &'a str,
    arguments: String,
}

/// A tool call replayed in an assistant message (the SDK fills `type` and `index`).
#[derive(Debug, Serialize)]
pub struct ToolCallParam<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionCall<'a>,
    index: u32,
}

/// One entry of `messages`.
#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ChatMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContentParam<'a>,
    },
    Assistant {
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<Vec<Chunk<'a>>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_calls: Option<Vec<ToolCallParam<'a>>>,
        /// Always `false`: pi never asks the model to continue a prefix.
        prefix: bool,
    },
    Tool {
        content: Vec<Chunk<'a>>,
        tool_call_id: &'a str,
        name: &'a str,
    },
}

/// `function` of a tool definition.
#[derive(Debug, Serialize)]
pub struct FunctionDef<'a> {
    name: &'a str,
    description: &'a str,
    strict: bool,
    parameters: std::borrow::Cow<'a, Value>,
}

/// One entry of `tools`.
#[derive(Debug, Serialize)]
pub struct ToolParam<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionDef<'a>,
}

/// The request body, keys in the SDK's order.
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u64>,
    stream: bool,
    messages: Vec<ChatMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<ToolParam<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_mode: Option<&'static str>,
    /// The session id, unless caching is off (pi-ai 1.6's `promptCacheKey`).
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
}

/// The transformed conversation for this model, tool-call ids rewritten to Mistral's form.
pub fn prepare_messages(model: &Model, context: &Context) -> Vec<Message> {
    let normalizer = IdNormalizer::default();
    let normalize = |id: &str| normalizer.normalize(id);
    transform_messages(&context.messages, model, Some(&normalize))
}

/// Builds the body. `messages` are the transformed conversation of `context`.
pub fn build_body<'a>(
    model: &'a Model,
    context: &'a Context,
    messages: &'a [Message],
    options: &'a StreamOptions,
) -> Body<'a> {
    let mut chat = Vec::with_capacity(messages.len() + 1);
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        chat.push(ChatMessage::System { content: system });
    }
    convert_messages(messages, model.supports_images(), &mut chat);
    // Strict tools only where the model opts in (`compat.supportsStrictMode`): pi 1.6 found
    // Mistral Large 4 going silent for minutes before a strict tool call.
    let strict_mode = model
        .compat
        .as_ref()
        .and_then(|c| c.supports_strict_mode)
        .unwrap_or(false);
    let tools = (!context.tools.is_empty()).then(|| {
        context
            .tools
            .iter()
            .map(|tool| {
                let strict = crate::constrained_sampling::strict_or_none(tool, strict_mode, None);
                ToolParam {
                    kind: "function",
                    function: FunctionDef {
                        name: &tool.name,
                        description: &tool.description,
                        strict: strict.unwrap_or(false),
                        parameters: crate::constrained_sampling::tool_parameters(tool, strict),
                    },
                }
            })
            .collect()
    });
    let tool_choice = options.tool_choice.as_ref().map(|choice| match choice {
        ToolChoice::Auto => Value::from("auto"),
        ToolChoice::None => Value::from("none"),
        ToolChoice::Required => Value::from("any"),
        ToolChoice::Tool(name) => {
            serde_json::json!({"type": "function", "function": {"name": name}})
        }
    });
    // pi-ai 1.6: a reasoning model with a thinking-level map takes `reasoning_effort` (its
    // mapped value, `high` where the level maps to nothing; off: the map's `off` value, if
    // any); one without a map takes `prompt_mode: "reasoning"` while thinking.
    let level = options
        .reasoning_effort
        .filter(|level| *level != ThinkingLevel::Off);
    let effort_map = model
        .thinking_level_map
        .as_ref()
        .filter(|_| model.reasoning);
    let (reasoning_effort, prompt_mode) = match (effort_map, level) {
        (Some(map), Some(level)) => {
            let effort = match map.get(&level) {
                Some(Some(mapped)) => mapped.clone(),
                _ => "high".to_owned(),
            };
            (Some(effort), None)
        }
        (Some(map), None) => (map.get(&ThinkingLevel::Off).cloned().flatten(), None),
        (None, Some(_)) if model.reasoning => (None, Some("reasoning")),
        (None, _) => (None, None),
    };
    Body {
        model: &model.id,
        temperature: options.temperature,
        max_tokens: options.max_tokens,
        stream: true,
        messages: chat,
        tools,
        tool_choice,
        reasoning_effort,
        prompt_mode,
        prompt_cache_key: options
            .session_id
            .as_deref()
            .filter(|id| !id.is_empty())
            .filter(|_| options.cache_retention != Some(crate::types::CacheRetention::None)),
    }
}

/// Converts the conversation to Mistral messages, appending to `out`.
pub fn convert_messages<'a>(
    messages: &'a [Message],
    supports_images: bool,
    out: &mut Vec<ChatMessage<'a>>,
) {
    for message in messages {
        match message {
            Message::User(user) => match &user.content {
                UserContent::Text(text) => out.push(ChatMessage::User {
                    content: UserContentParam::Text(text),
                }),
                UserContent::Blocks(blocks) => {
                    let had_images = blocks.iter().any(|b| matches!(b, InputBlock::Image(_)));
                    let chunks: Vec<Chunk> = blocks
                        .iter()
                        .filter_map(|block| match block {
                            InputBlock::Text(t) => Some(Chunk::text(t.text.as_str())),
                            InputBlock::Image(i) if supports_images => {
                                Some(Chunk::image(&i.mime_type, &i.data))
                            }
                            InputBlock::Image(_) => None,
                        })
                        .collect();
                    if !chunks.is_empty() {
                        out.push(ChatMessage::User {
                            content: UserContentParam::Chunks(chunks),
                        });
                    } else if had_images && !supports_images {
                        out.push(ChatMessage::User {
                            content: UserContentParam::Text(USER_IMAGE_OMITTED),
                        });
                    }
                }
            },
            Message::Assistant(assistant) => {
                if let Some(converted) = convert_assistant(assistant) {
                    out.push(converted);
                }
            }
            Message::ToolResult(result) => out.push(convert_tool_result(result, supports_images)),
        }
    }
}

fn convert_assistant(assistant: &AssistantMessage) -> Option<ChatMessage<'_>> {
    let mut chunks = Vec::new();
    let mut calls = Vec::new();
    for block in &assistant.content {
        match block {
            AssistantBlock::Text(t) => {
                if !t.text.trim().is_empty() {
                    chunks.push(Chunk::text(t.text.as_str()));
                }
            }
            AssistantBlock::Thinking(t) => {
                if !t.thinking.trim().is_empty() {
                    chunks.push(Chunk::Thinking {
                        thinking: vec![Chunk::text(t.thinking.as_str())],
                    });
                }
            }
            AssistantBlock::ToolCall(call) => calls.push(ToolCallParam {
                id: &call.id,
                kind: "function",
                function: FunctionCall {
                    name: &call.name,
                    arguments: serde_json::to_string(&call.arguments)
                        .unwrap_or_else(|_| "{}".to_owned()),
                },
                index: 0,
            }),
        }
    }
    if chunks.is_empty() && calls.is_empty() {
        return None;
    }
    Some(ChatMessage::Assistant {
        content: (!chunks.is_empty()).then_some(chunks),
        tool_calls: (!calls.is_empty()).then_some(calls),
        prefix: false,
    })
}

fn convert_tool_result(result: &ToolResultMessage, supports_images: bool) -> ChatMessage<'_> {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(InputBlock::as_text)
        .collect();
    let text = match texts.as_slice() {
        [single] => Cow::Borrowed(*single),
        many => Cow::Owned(many.join("\n")),
    };
    let has_images = result
        .content
        .iter()
        .any(|b| matches!(b, InputBlock::Image(_)));
    let mut content = vec![Chunk::text(tool_result_text(
        text,
        has_images,
        supports_images,
        result.is_error,
    ))];
    if supports_images {
        for block in &result.content {
            if let InputBlock::Image(image) = block {
                content.push(Chunk::image(&image.mime_type, &image.data));
            }
        }
    }
    ChatMessage::Tool {
        content,
        tool_call_id: &result.tool_call_id,
        name: &result.tool_name,
    }
}

/// The text chunk of a tool result: errors are prefixed `[tool error] `, and a result with
/// no text says what became of its images.
fn tool_result_text(
    text: Cow<'_, str>,
    has_images: bool,
    supports_images: bool,
    is_error: bool,
) -> Cow<'_, str> {
    let prefix = if is_error { "[tool error] " } else { "" };
    let omitted = has_images && !supports_images;
    let trimmed = text.trim();
    if !trimmed.is_empty() {
        let suffix = if omitted {
            "\n[tool image omitted: model does not support images]"
        } else {
            ""
        };
        if prefix.is_empty() && suffix.is_empty() {
            // The usual case: the text itself, not a copy, when nothing is trimmed from it.
            return match text {
                Cow::Borrowed(text) => Cow::Borrowed(text.trim()),
                Cow::Owned(text) => Cow::Owned(text.trim().to_owned()),
            };
        }
        return Cow::Owned(format!("{prefix}{trimmed}{suffix}"));
    }
    let body = match (has_images, supports_images) {
        (true, true) => "(see attached image)",
        (true, false) => USER_IMAGE_OMITTED,
        (false, _) => "(no tool output)",
    };
    Cow::Owned(format!("{prefix}{body}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_result_texts() {
        assert_eq!(
            tool_result_text("  out \n".into(), false, true, false),
            "out"
        );
        assert_eq!(
            tool_result_text("boom".into(), false, true, true),
            "[tool error] boom"
        );
        assert_eq!(
            tool_result_text("x".into(), true, false, false),
            "x\n[tool image omitted: model does not support images]"
        );
        assert_eq!(
            tool_result_text("".into(), true, true, true),
            "[tool error] (see attached image)"
        );
        assert_eq!(
            tool_result_text("".into(), true, false, false),
            "(image omitted: model does not support images)"
        );
        assert_eq!(
            tool_result_text(" ".into(), false, false, false),
            "(no tool output)"
        );
    }
}
