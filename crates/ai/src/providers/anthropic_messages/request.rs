//! The Messages API request body: system blocks, content blocks, tools, thinking, caching.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value};

use super::thinking::{is_effort, thinking_params};
pub use super::thinking::{
    mid_convo_effort, supports_adaptive_thinking, supports_mid_convo_effort,
};
use crate::providers::body_text::{BodyText, joined};
use crate::transcript::{Placed, Transcript};
use crate::transform::{
    ERROR_TOOL_IMAGE_PLACEHOLDER, error_images_caption, replace_images, transform_messages,
};
use crate::types::{
    AssistantBlock, CacheRetention, Context, InputBlock, Message, Model, SharedStr, StreamOptions,
    SystemMessage, ToolChoice, UserContent,
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

/// Whether a `temperature` may be sent (`compat.supportsTemperature`, pi 1.6: newer Claude
/// models reject it).
fn supports_temperature(model: &Model) -> bool {
    model
        .compat
        .as_ref()
        .and_then(|c| c.supports_temperature)
        .unwrap_or(true)
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

/// A content block of a message or of a tool result.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block<'a> {
    Text {
        text: BodyText<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: ImageSource<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    RedactedThinking {
        data: &'a str,
    },
    Thinking {
        thinking: BodyText<'a>,
        signature: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: Cow<'a, str>,
        input: &'a Map<String, Value>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: Content<'a>,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// A tool declared mid-conversation (`inline-tools-2026-09-15`).
    ToolAddition {
        tool: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// A tool withdrawn mid-conversation.
    ToolRemoval {
        tool: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

/// An image as base64 data.
#[derive(Debug, Serialize)]
pub struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: BodyText<'a>,
}

/// A message's or tool result's content: a plain string or blocks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Content<'a> {
    Text(BodyText<'a>),
    Blocks(Vec<Block<'a>>),
}

/// One entry of `messages`.
#[derive(Debug, Serialize)]
pub struct ApiMessage<'a> {
    role: &'static str,
    content: Content<'a>,
    /// The effort of what follows, on an effort-only system message.
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<Value>,
}

impl<'a> ApiMessage<'a> {
    fn new(role: &'static str, content: Content<'a>) -> Self {
        Self {
            role,
            content,
            output_config: None,
        }
    }

    /// An effort-only system message: the effort of the replies after it (Claude's
    /// mid-conversation effort, pi-ai 0.85).
    fn effort(effort: &str) -> Self {
        Self {
            role: "system",
            content: Content::Blocks(Vec::new()),
            output_config: Some(serde_json::json!({"effort": effort})),
        }
    }
}

fn image_block<'a>(mime: &'a str, data: &SharedStr) -> Block<'a> {
    Block::Image {
        source: ImageSource {
            kind: "base64",
            media_type: mime,
            data: data.into(),
        },
        cache_control: None,
    }
}

fn text_block<'a>(text: impl Into<BodyText<'a>>) -> Block<'a> {
    Block::Text {
        text: text.into(),
        cache_control: None,
    }
}

/// Tool-result content: a plain string when text only, else blocks (with a placeholder text
/// when there are only images).
fn tool_result_content(content: &[InputBlock]) -> Content<'_> {
    if !content.iter().any(|b| matches!(b, InputBlock::Image(_))) {
        let texts: Vec<&SharedStr> = content
            .iter()
            .filter_map(|b| match b {
                InputBlock::Text(t) => Some(&t.text),
                InputBlock::Image(_) => None,
            })
            .collect();
        return Content::Text(joined(&texts, "\n"));
    }
    let mut blocks: Vec<Block<'_>> = content
        .iter()
        .map(|b| match b {
            InputBlock::Text(t) => text_block(&t.text),
            InputBlock::Image(i) => image_block(&i.mime_type, &i.data),
        })
        .collect();
    if !content.iter().any(|b| matches!(b, InputBlock::Text(_))) {
        blocks.insert(0, text_block("(see attached image)"));
    }
    Content::Blocks(blocks)
}

/// The conversation as this API takes it: transformed for the model, tool-call ids normalized.
pub fn prepare_messages(model: &Model, messages: &[Message]) -> Vec<Message> {
    transform_messages(messages, model, Some(&normalize_tool_call_id))
}

/// [`prepare_messages`] for a whole context, with `frame`'s system messages placed in the
/// result (kept only for a model with mid-conversation system messages).
pub fn prepare_placing(model: &Model, context: &Context, frame: &mut Context) -> Vec<Message> {
    crate::transcript::transform_placing(model, context, frame, Some(&normalize_tool_call_id))
}

/// Whether `model` takes tool changes as blocks of mid-conversation system messages
/// (`compat.supportsMidConvoToolChanges`).
pub fn supports_mid_convo_tool_changes(model: &Model) -> bool {
    model
        .compat
        .as_ref()
        .and_then(|c| c.supports_mid_convo_tool_changes)
        .unwrap_or(false)
}

/// Converts tool declarations to the Messages API's tool definitions.
pub type ConvertTools<'a> = &'a dyn Fn(&[crate::types::Tool]) -> Vec<Value>;

/// The mid-conversation system messages of a request, placed in its conversation.
pub struct SystemUpdates<'a> {
    pub placed: Placed<'a>,
    /// Converts declared tools, when tool changes go inline; `None`: text only.
    pub tools: Option<ConvertTools<'a>>,
}

impl SystemUpdates<'_> {
    /// A system message's entry: its text, then (inline tools) the tools it withdraws and
    /// declares; `None` when it has nothing to say.
    fn message(&self, update: &SystemMessage, oauth: bool) -> Option<ApiMessage<'static>> {
        let mut blocks = Vec::new();
        let text = update.update_text();
        if !text.is_empty() {
            blocks.push(text_block(text));
        }
        if let Some(convert) = self.tools {
            for name in update.withdrawn_tools() {
                let name = if oauth {
                    to_claude_code_name(name)
                } else {
                    name.to_owned()
                };
                blocks.push(Block::ToolRemoval {
                    tool: serde_json::json!({"type": "tool_reference", "name": name}),
                    cache_control: None,
                });
            }
            for definition in convert(&update.tools_added) {
                blocks.push(Block::ToolAddition {
                    tool: serde_json::json!({"type": "tool_definition", "definition": definition}),
                    cache_control: None,
                });
            }
        }
        (!blocks.is_empty()).then(|| ApiMessage::new("system", Content::Blocks(blocks)))
    }
}

/// Converts the prepared conversation to Messages API messages, borrowing its text. With
/// `allow_empty_signature` (`compat.allowEmptySignature`) unsigned thinking goes back as
/// thinking with an empty signature instead of as text.
///
/// With `effort_provider` (mid-conversation effort), each earlier reply of that provider
/// on this API that kept its effort is preceded by an effort-only system message.
pub fn convert_messages<'a>(
    messages: &'a [Message],
    oauth: bool,
    cache: Option<&CacheControl>,
    allow_empty_signature: bool,
    effort_provider: Option<&str>,
    mut updates: Option<SystemUpdates<'_>>,
) -> Vec<ApiMessage<'a>> {
    let mut out: Vec<ApiMessage<'a>> = Vec::with_capacity(messages.len());
    // System messages wait for the next reply that is sent (pi-ai 1.5: Claude wants a system
    // message right before an assistant one, and skips empty replies).
    let mut waiting: Vec<ApiMessage<'a>> = Vec::new();
    let mut index = 0;
    while index < messages.len() {
        if let Some(updates) = updates.as_mut() {
            for update in updates.placed.before(index) {
                waiting.extend(updates.message(update, oauth));
            }
        }
        match &messages[index] {
            Message::User(user) => match &user.content {
                UserContent::Text(text) => {
                    if !text.is_blank() {
                        out.push(ApiMessage::new("user", Content::Text(text.into())));
                    }
                }
                UserContent::Blocks(blocks) => {
                    let content: Vec<Block<'a>> = blocks
                        .iter()
                        .filter_map(|b| match b {
                            InputBlock::Text(t) if t.text.is_blank() => None,
                            InputBlock::Text(t) => Some(text_block(&t.text)),
                            InputBlock::Image(i) => Some(image_block(&i.mime_type, &i.data)),
                        })
                        .collect();
                    if !content.is_empty() {
                        out.push(ApiMessage::new("user", Content::Blocks(content)));
                    }
                }
            },
            Message::Assistant(assistant) => {
                let mut blocks = Vec::new();
                for block in &assistant.content {
                    match block {
                        AssistantBlock::Text(t) => {
                            if !t.text.is_blank() {
                                blocks.push(text_block(&t.text));
                            }
                        }
                        AssistantBlock::Thinking(t) if t.is_redacted() => {
                            blocks.push(Block::RedactedThinking {
                                data: t.thinking_signature.as_deref().unwrap_or_default(),
                            });
                        }
                        AssistantBlock::Thinking(t) => {
                            let signature = t
                                .thinking_signature
                                .as_deref()
                                .filter(|s| !s.trim().is_empty());
                            match signature {
                                // Signed thinking goes back even when its text is blank.
                                Some(signature) => blocks.push(Block::Thinking {
                                    thinking: (&t.thinking).into(),
                                    signature,
                                }),
                                None if t.thinking.is_blank() => continue,
                                None if allow_empty_signature => blocks.push(Block::Thinking {
                                    thinking: (&t.thinking).into(),
                                    signature: "",
                                }),
                                // Unsigned thinking (an aborted stream) goes back as plain text.
                                None => blocks.push(text_block(&t.thinking)),
                            }
                        }
                        AssistantBlock::ToolCall(call) => {
                            let name = if oauth {
                                Cow::Owned(to_claude_code_name(&call.name))
                            } else {
                                Cow::Borrowed(call.name.as_str())
                            };
                            blocks.push(Block::ToolUse {
                                id: &call.id,
                                name,
                                input: &call.arguments,
                            });
                        }
                    }
                }
                if !blocks.is_empty() {
                    let kept_effort = assistant
                        .provider_thinking_level
                        .as_deref()
                        .filter(|effort| is_effort(effort));
                    out.append(&mut waiting);
                    if let (Some(provider), Some(effort)) = (effort_provider, kept_effort)
                        && assistant.api == crate::types::api::ANTHROPIC_MESSAGES
                        && assistant.provider == provider
                    {
                        out.push(ApiMessage::effort(effort));
                    }
                    out.push(ApiMessage::new("assistant", Content::Blocks(blocks)));
                }
            }
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                let mut error_images = Vec::new();
                while let Some(Message::ToolResult(result)) = messages.get(index) {
                    let has_images = result
                        .content
                        .iter()
                        .any(|b| matches!(b, InputBlock::Image(_)));
                    // Claude rejects images in an error result: they follow the turn's results.
                    let content = if result.is_error && has_images {
                        error_images.push(text_block(error_images_caption(result)));
                        error_images.extend(result.content.iter().filter_map(|b| match b {
                            InputBlock::Image(i) => Some(image_block(&i.mime_type, &i.data)),
                            InputBlock::Text(_) => None,
                        }));
                        let replaced =
                            replace_images(&result.content, ERROR_TOOL_IMAGE_PLACEHOLDER);
                        let texts: Vec<String> = replaced
                            .iter()
                            .filter_map(|b| match b {
                                InputBlock::Text(t) => Some(t.text.as_str().to_owned()),
                                InputBlock::Image(_) => None,
                            })
                            .collect();
                        Content::Text(texts.join("\n").into())
                    } else {
                        tool_result_content(&result.content)
                    };
                    results.push(Block::ToolResult {
                        tool_use_id: &result.tool_call_id,
                        content,
                        is_error: result.is_error,
                        cache_control: None,
                    });
                    index += 1;
                }
                results.extend(error_images);
                out.push(ApiMessage::new("user", Content::Blocks(results)));
                continue;
            }
        }
        index += 1;
    }
    if let Some(updates) = updates.as_mut() {
        for update in updates.placed.rest() {
            waiting.extend(updates.message(update, oauth));
        }
    }
    out.append(&mut waiting);
    if let (Some(cache), Some(last)) = (cache, out.last_mut()) {
        mark_last_user_block(last, cache);
    }
    out
}

/// Puts the cache marker on the last block of a trailing user or system message.
fn mark_last_user_block(message: &mut ApiMessage<'_>, cache: &CacheControl) {
    if message.role != "user" && message.role != "system" {
        return;
    }
    match &mut message.content {
        Content::Text(text) => {
            let text = std::mem::take(text);
            message.content = Content::Blocks(vec![Block::Text {
                text,
                cache_control: Some(cache.clone()),
            }]);
        }
        Content::Blocks(blocks) => {
            if let Some(
                Block::Text { cache_control, .. }
                | Block::Image { cache_control, .. }
                | Block::ToolResult { cache_control, .. }
                | Block::ToolAddition { cache_control, .. }
                | Block::ToolRemoval { cache_control, .. },
            ) = blocks.last_mut()
            {
                *cache_control = Some(cache.clone());
            }
        }
    }
}

use super::tools::convert_tools;
pub use super::tools::has_preferred_strict_tools;
/// Thinking parameters chosen by `stream_simple` or the caller.
pub use crate::types::AnthropicThinking;

/// A block of `system`.
#[derive(Debug, Serialize)]
pub struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: BodyText<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// The request body, with keys in the order the Anthropic SDK sends them.
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    model: &'a str,
    messages: Vec<ApiMessage<'a>>,
    max_tokens: u64,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Vec<SystemBlock<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    /// Server-side refusal fallbacks (`compat.allowedFallbackModels`).
    #[serde(skip_serializing_if = "Option::is_none")]
    fallbacks: Option<Vec<Value>>,
}

/// The models of `compat.allowedFallbackModels`, when it lists any: Anthropic may answer a
/// refusal with one of them (pi-ai 0.84.3, 0.86).
pub fn allowed_fallback_models(model: &Model) -> Option<&Vec<Value>> {
    model
        .compat
        .as_ref()
        .and_then(|c| c.allowed_fallback_models.as_ref())
        .and_then(Value::as_array)
        .filter(|list| !list.is_empty())
}

/// The tool a request with inline tool changes declares so that its tool list never
/// empties: never available, loaded lazily (pi-ai 1.0.1).
fn deferred_placeholder_tool() -> Value {
    serde_json::json!({
        "name": "__pi_deferred_placeholder__",
        "description": "Reserved placeholder. Never available. Never call this.",
        "input_schema": {"type": "object", "properties": {}, "required": []},
        "defer_loading": true,
    })
}

/// Whether the request declares its tools inline (see [`build_body`]).
pub fn uses_inline_tools(model: &Model, context: &Context) -> bool {
    supports_mid_convo_tool_changes(model)
        && Transcript::of(model, context)
            .and_then(|t| t.leading)
            .is_some_and(|leading| !leading.tools_added.is_empty())
}

/// Builds the request body for `messages` (the conversation from [`prepare_messages`]).
///
/// `disable_preferred_strict` sends tools that only prefer strictness plain (after Claude
/// refused the strict tool set for its limits).
pub fn build_body<'a>(
    model: &'a Model,
    context: &'a Context,
    messages: &'a [Message],
    options: &StreamOptions,
    oauth: bool,
    disable_preferred_strict: bool,
) -> Body<'a> {
    let retention = CacheRetention::resolve(options.cache_retention, options.env.as_deref());
    let cache = cache_control(model, retention);
    // pi 1.6: `compat.supportsCacheControlOnTools: false` keeps the marker off the tools.
    let tool_cache = cache.clone().filter(|_| {
        model
            .compat
            .as_ref()
            .and_then(|c| c.supports_cache_control_on_tools)
            .unwrap_or(true)
    });
    let max_tokens = options
        .max_tokens
        .filter(|m| *m > 0)
        .unwrap_or(model.max_tokens / 3);

    let system_block = |text: BodyText<'a>| SystemBlock {
        kind: "text",
        text,
        cache_control: cache.clone(),
    };
    // With mid-conversation system messages the leading prompt is the transcript's first
    // one; what changed since goes in the conversation (pi-ai 1.6).
    let transcript = Transcript::of(model, context);
    let leading_prompt: Option<BodyText<'a>> = match &transcript {
        Some(transcript) => transcript.leading_prompt().map(BodyText::from),
        None => context.system_prompt.as_deref().map(BodyText::from),
    };
    let mut system = Vec::new();
    if oauth {
        system.push(system_block(CLAUDE_CODE_IDENTITY.into()));
    }
    if let Some(prompt) = leading_prompt {
        system.push(system_block(prompt));
    }
    // Tool changes inline (`supportsMidConvoToolChanges`): the request declares the
    // transcript's first tools and a deferred placeholder, later changes are blocks.
    let inline_tools = transcript
        .as_ref()
        .and_then(|t| t.leading)
        .filter(|leading| {
            supports_mid_convo_tool_changes(model) && !leading.tools_added.is_empty()
        });
    let convert_inline = |tools: &[crate::types::Tool]| {
        super::tools::convert_tool_list(model, tools, oauth, None, disable_preferred_strict)
    };

    let thinking_enabled = options
        .anthropic_thinking
        .as_ref()
        .is_some_and(|t| t.enabled);
    let effort = mid_convo_effort(model, options);
    let (thinking, output_config) = match &effort {
        // Each turn's effort travels in the messages; the request's own is the lowest, so
        // that accounts whose effort is capped below `high` are served (pi-ai 1.5).
        Some(_) => {
            let display = options
                .anthropic_thinking
                .as_ref()
                .and_then(|t| t.display.clone())
                .unwrap_or_else(|| "summarized".into());
            (
                Some(serde_json::json!({"type": "adaptive", "display": display,
                    "block_binding": {"prefix_mismatch_behavior": "drop_block"}})),
                Some(serde_json::json!({"effort": "low"})),
            )
        }
        None => thinking_params(model, options),
    };
    let mut messages = convert_messages(
        messages,
        oauth,
        cache.as_ref(),
        model
            .compat
            .as_ref()
            .and_then(|c| c.allow_empty_signature)
            .unwrap_or(false),
        effort.is_some().then_some(model.provider.as_str()),
        transcript.map(|t| SystemUpdates {
            placed: Placed::new(t.updates, t.update_positions()),
            tools: inline_tools.is_some().then_some(&convert_inline as _),
        }),
    );
    if let Some(effort) = &effort {
        messages.push(ApiMessage::effort(effort));
    }
    let fallbacks = allowed_fallback_models(model).map(|list| {
        list.iter()
            .map(|fallback| match fallback.get("model") {
                Some(id) => serde_json::json!({"model": id}),
                None => serde_json::json!({}),
            })
            .collect()
    });
    let metadata = options
        .metadata
        .as_ref()
        .and_then(|m| m.get("user_id"))
        .and_then(Value::as_str)
        .map(|user_id| serde_json::json!({"user_id": user_id}));
    let tool_choice = options.tool_choice.as_ref().map(|choice| match choice {
        ToolChoice::Auto => serde_json::json!({"type": "auto"}),
        ToolChoice::None => serde_json::json!({"type": "none"}),
        ToolChoice::Required => serde_json::json!({"type": "any"}),
        ToolChoice::Tool(name) => serde_json::json!({"type": "tool", "name": name}),
    });
    Body {
        model: &model.id,
        messages,
        max_tokens,
        stream: true,
        system: (!system.is_empty()).then_some(system),
        temperature: options.temperature.filter(|_| {
            !thinking_enabled && !supports_mid_convo_effort(model) && supports_temperature(model)
        }),
        tools: match inline_tools {
            Some(leading) => {
                let mut tools = super::tools::convert_tool_list(
                    model,
                    &leading.tools_added,
                    oauth,
                    tool_cache.as_ref(),
                    disable_preferred_strict,
                );
                tools.push(deferred_placeholder_tool());
                Some(tools)
            }
            None => (!context.tools.is_empty()).then(|| {
                convert_tools(
                    model,
                    context,
                    oauth,
                    tool_cache.as_ref(),
                    disable_preferred_strict,
                )
            }),
        },
        thinking,
        output_config,
        metadata,
        tool_choice,
        fallbacks,
    }
}
