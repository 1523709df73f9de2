//! The Chat Completions request body: messages, tools and the compat-dependent fields.

use serde::Serialize;
use serde_json::{Map, Value};

use super::compat::Compat;
use crate::providers::body_text::{BodyText, data_url, joined};
use crate::transcript::{Placed, Transcript};
use crate::transform::transform_messages;
use crate::types::{
    AssistantBlock, CacheRetention, Context, InputBlock, MaxTokensField, Message, Model, SharedStr,
    StreamOptions, SystemMessage, ThinkingLevel, ToolChoice, UserContent,
};

const BRIDGE_AFTER_TOOL_RESULT: &str = "I have processed the tool results.";

/// `cache_control` marker for OpenAI-compatible gateways in front of Anthropic models.
#[derive(Debug, Clone, Serialize)]
pub struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl: Option<&'static str>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part<'a> {
    Text {
        text: BodyText<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ImageUrl {
        image_url: ImageUrl<'a>,
    },
}

#[derive(Debug, Serialize)]
pub struct ImageUrl<'a> {
    url: BodyText<'a>,
}

/// A message's content: a plain string or parts.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Content<'a> {
    Text(BodyText<'a>),
    Parts(Vec<Part<'a>>),
}

impl<'a> Content<'a> {
    fn borrowed(text: &'a str) -> Self {
        Self::Text(BodyText::from(text))
    }

    fn is_empty(&self) -> bool {
        match self {
            Self::Text(t) => t.is_empty(),
            Self::Parts(p) => p.is_empty(),
        }
    }
}

fn text_part<'a>(text: impl Into<BodyText<'a>>) -> Part<'a> {
    Part::Text {
        text: text.into(),
        cache_control: None,
    }
}

#[derive(Debug, Serialize)]
pub struct FunctionCall<'a> {
    name: &'a str,
    arguments: String,
}

#[derive(Debug, Serialize)]
pub struct ToolCallParam<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionCall<'a>,
}

/// One entry of `messages`.
#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ChatMessage<'a> {
    System {
        content: Content<'a>,
    },
    Developer {
        content: Content<'a>,
    },
    User {
        content: Content<'a>,
    },
    Assistant {
        content: Option<Content<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_calls: Option<Vec<ToolCallParam<'a>>>,
        /// Reasoning replay fields (`reasoning_content`, `reasoning_details`, …).
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    Tool {
        content: Content<'a>,
        tool_call_id: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<&'a str>,
    },
}

#[derive(Debug, Serialize)]
pub struct FunctionDef<'a> {
    name: &'a str,
    description: &'a str,
    parameters: std::borrow::Cow<'a, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

#[derive(Debug, Serialize)]
pub struct ToolParam<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionDef<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// The request body, with keys in the order the OpenAI SDK sends them.
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    model: &'a str,
    messages: Vec<ChatMessage<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_retention: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<ToolParam<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    /// Reasoning and routing fields that depend on the server.
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// Normalizes tool-call ids from other APIs: a Responses `call|item` id keeps both parts
/// (`call_item`), and one over 40 characters becomes the call id and a hash of the whole,
/// so that calls sharing a call id stay apart (pi-ai 0.81); over-long OpenAI ids are cut.
fn normalize_tool_call_id(model: &Model, id: &str) -> String {
    const MAX: usize = 40;
    let sanitize = |part: &str| -> String {
        part.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    if let Some((call, item)) = id.split_once('|') {
        let (call, item) = (sanitize(call), sanitize(item));
        let combined = if item.is_empty() {
            call.clone()
        } else {
            format!("{call}_{item}")
        };
        // Sanitized ids are ASCII: characters are bytes (and UTF-16 units, as pi counts).
        if combined.len() <= MAX {
            return combined;
        }
        let hash: String = crate::providers::openai_responses::request::short_hash(id)
            .chars()
            .take(8)
            .collect();
        let keep = MAX.saturating_sub(hash.len() + 1).max(1);
        let head: String = call.chars().take(keep).collect();
        return format!("{head}_{hash}");
    }
    if model.provider == "openai" && id.chars().count() > MAX {
        return id.chars().take(MAX).collect();
    }
    id.to_owned()
}

fn image_url<'a>(mime: &str, data: &SharedStr) -> ImageUrl<'a> {
    ImageUrl {
        url: data_url(mime, data),
    }
}

/// Converts the conversation to Chat Completions messages.
pub fn convert_messages<'a>(
    model: &Model,
    context: &'a Context,
    messages: &'a [Message],
    compat: &Compat,
) -> Vec<ChatMessage<'a>> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    let instruction = |content: Content<'a>| {
        if model.reasoning && compat.supports_developer_role {
            ChatMessage::Developer { content }
        } else {
            ChatMessage::System { content }
        }
    };
    // With mid-conversation system messages the leading prompt is the transcript's first
    // one, and each later one goes where it stands, as an update (pi-ai 1.6).
    let transcript = Transcript::of(model, context);
    let leading = match &transcript {
        Some(transcript) => transcript.leading_prompt().map(|p| Content::Text(p.into())),
        None => context.system_prompt.as_deref().map(Content::borrowed),
    };
    out.extend(leading.map(instruction));
    let mut updates = transcript.map(|t| Placed::new(t.updates, t.update_positions()));
    let place_updates = |out: &mut Vec<ChatMessage<'a>>, placed: &'a [SystemMessage]| {
        for update in placed {
            let text = update.update_text();
            if !text.is_empty() {
                out.push(instruction(Content::Text(text.into())));
            }
        }
        !placed.is_empty()
    };
    let mut last_was_tool_result = false;
    let mut index = 0;
    while index < messages.len() {
        if let Some(updates) = updates.as_mut()
            && place_updates(&mut out, updates.before(index))
        {
            last_was_tool_result = false;
        }
        match &messages[index] {
            Message::User(user) => {
                if compat.requires_assistant_after_tool_result && last_was_tool_result {
                    out.push(bridge_message());
                }
                let content = match &user.content {
                    UserContent::Text(text) => Content::Text(BodyText::from(text)),
                    UserContent::Blocks(blocks) => {
                        // pi-ai 1.6 leaves out empty text parts, and a message left empty.
                        let parts: Vec<Part> = blocks
                            .iter()
                            .filter(|b| !matches!(b, InputBlock::Text(t) if t.text.is_empty()))
                            .map(input_part)
                            .collect();
                        if parts.is_empty() {
                            index += 1;
                            continue;
                        }
                        Content::Parts(parts)
                    }
                };
                out.push(ChatMessage::User { content });
                last_was_tool_result = false;
            }
            Message::Assistant(assistant) => {
                if let Some(message) = convert_assistant(model, assistant, compat) {
                    out.push(message);
                }
                last_was_tool_result = false;
            }
            Message::ToolResult(_) => {
                let mut images = Vec::new();
                while let Some(Message::ToolResult(result)) = messages.get(index) {
                    let texts: Vec<&SharedStr> = result
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            InputBlock::Text(t) => Some(&t.text),
                            InputBlock::Image(_) => None,
                        })
                        .collect();
                    let blank = texts.iter().all(|t| t.as_str().trim().is_empty());
                    let text = joined(&texts, "\n");
                    let has_images = result
                        .content
                        .iter()
                        .any(|b| matches!(b, InputBlock::Image(_)));
                    let content = if !blank {
                        Content::Text(text)
                    } else if has_images {
                        Content::borrowed("(see attached image)")
                    } else {
                        Content::borrowed("(no tool output)")
                    };
                    out.push(ChatMessage::Tool {
                        content,
                        tool_call_id: &result.tool_call_id,
                        name: (compat.requires_tool_result_name && !result.tool_name.is_empty())
                            .then_some(result.tool_name.as_str()),
                    });
                    if model.supports_images() {
                        for block in &result.content {
                            if let InputBlock::Image(image) = block {
                                images.push(Part::ImageUrl {
                                    image_url: image_url(&image.mime_type, &image.data),
                                });
                            }
                        }
                    }
                    index += 1;
                }
                if images.is_empty() {
                    last_was_tool_result = true;
                } else {
                    if compat.requires_assistant_after_tool_result {
                        out.push(bridge_message());
                    }
                    let mut parts = vec![text_part("Attached image(s) from tool result:")];
                    parts.extend(images);
                    out.push(ChatMessage::User {
                        content: Content::Parts(parts),
                    });
                    last_was_tool_result = false;
                }
                continue;
            }
        }
        index += 1;
    }
    if let Some(updates) = updates.as_mut() {
        place_updates(&mut out, updates.rest());
    }
    out
}

fn bridge_message<'a>() -> ChatMessage<'a> {
    ChatMessage::Assistant {
        content: Some(Content::borrowed(BRIDGE_AFTER_TOOL_RESULT)),
        tool_calls: None,
        extra: Map::new(),
    }
}

fn input_part(block: &InputBlock) -> Part<'_> {
    match block {
        InputBlock::Text(t) => text_part(&t.text),
        InputBlock::Image(i) => Part::ImageUrl {
            image_url: image_url(&i.mime_type, &i.data),
        },
    }
}

fn convert_assistant<'a>(
    model: &Model,
    assistant: &'a crate::types::AssistantMessage,
    compat: &Compat,
) -> Option<ChatMessage<'a>> {
    let texts: Vec<&SharedStr> = assistant
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Text(t) if !t.text.is_blank() => Some(&t.text),
            _ => None,
        })
        .collect();
    let thinking: Vec<&crate::types::ThinkingContent> = assistant
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Thinking(t) if !t.thinking.is_blank() => Some(t),
            _ => None,
        })
        .collect();
    let preserved = super::reasoning_details::preserved(assistant);
    let mut extra = Map::new();
    let mut content: Option<Content> = (compat.requires_assistant_after_tool_result
        || compat.requires_non_null_assistant_content)
        .then(|| Content::borrowed(""));
    if !thinking.is_empty() && compat.requires_thinking_as_text {
        // Thinking as plain text first (no tags, so the model does not mimic them).
        let joined = thinking
            .iter()
            .map(|t| t.thinking.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let mut parts = vec![text_part(joined)];
        parts.extend(texts.iter().map(|t| text_part(*t)));
        content = Some(Content::Parts(parts));
    } else {
        let joined_text = joined(&texts, "");
        if !joined_text.is_empty() {
            content = Some(Content::Text(joined_text));
        }
        // Thinking goes back in the field it came in, unless `reasoning_details` carry it.
        let field = thinking
            .first()
            .and_then(|first| first.thinking_signature.as_deref())
            .map(|field| {
                if model.provider == "opencode-go" && field == "reasoning" {
                    "reasoning_content"
                } else {
                    field
                }
            })
            .filter(|field| super::reasoning_details::REASONING_FIELDS.contains(field));
        if preserved.is_none()
            && let Some(field) = field
        {
            let joined = thinking
                .iter()
                .map(|t| t.thinking.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            extra.insert(field.to_owned(), Value::String(joined));
        }
    }
    let calls: Vec<&crate::types::ToolCall> = assistant.tool_calls().collect();
    let tool_calls = (!calls.is_empty()).then(|| {
        calls
            .iter()
            .map(|c| ToolCallParam {
                id: &c.id,
                kind: "function",
                function: FunctionCall {
                    name: &c.name,
                    arguments: serde_json::to_string(&c.arguments).unwrap_or_else(|_| "{}".into()),
                },
            })
            .collect::<Vec<_>>()
    });
    if let Some(details) = preserved {
        extra.insert("reasoning_details".into(), Value::Array(details));
    }
    if compat.requires_reasoning_content_on_assistant_messages
        && model.reasoning
        && !extra.contains_key("reasoning_content")
    {
        extra.insert("reasoning_content".into(), Value::String(String::new()));
    }
    let has_content = content.as_ref().is_some_and(|c| !c.is_empty());
    if !has_content && tool_calls.is_none() {
        return None;
    }
    Some(ChatMessage::Assistant {
        content,
        tool_calls,
        extra,
    })
}

fn cache_control(compat: &Compat, retention: CacheRetention) -> Option<CacheControl> {
    if !compat.anthropic_cache_control || retention == CacheRetention::None {
        return None;
    }
    let ttl =
        (retention == CacheRetention::Long && compat.supports_long_cache_retention).then_some("1h");
    Some(CacheControl {
        kind: "ephemeral",
        ttl,
    })
}

/// Marks the system prompt, the last tool and the last user, assistant or tool-result text
/// for caching.
fn apply_cache_control(
    messages: &mut [ChatMessage],
    tools: Option<&mut Vec<ToolParam>>,
    marker: &CacheControl,
) {
    fn mark(content: &mut Content, marker: &CacheControl) -> bool {
        match content {
            Content::Text(t) if !t.is_empty() => {
                let text = std::mem::take(t);
                *content = Content::Parts(vec![Part::Text {
                    text,
                    cache_control: Some(marker.clone()),
                }]);
                true
            }
            Content::Parts(parts) => {
                for part in parts.iter_mut().rev() {
                    if let Part::Text { cache_control, .. } = part {
                        *cache_control = Some(marker.clone());
                        return true;
                    }
                }
                false
            }
            Content::Text(_) => false,
        }
    }
    if let Some(ChatMessage::System { content } | ChatMessage::Developer { content }) =
        messages.iter_mut().find(|m| {
            matches!(
                m,
                ChatMessage::System { .. } | ChatMessage::Developer { .. }
            )
        })
    {
        mark(content, marker);
    }
    if let Some(last) = tools.and_then(|t| t.last_mut()) {
        last.cache_control = Some(marker.clone());
    }
    for message in messages.iter_mut().rev() {
        let done = match message {
            ChatMessage::User { content } => mark(content, marker),
            ChatMessage::Assistant {
                content: Some(content),
                ..
            } => mark(content, marker),
            // pi-ai 0.82: the breakpoint advances through tool results too.
            ChatMessage::Tool { content, .. } => mark(content, marker),
            _ => false,
        };
        if done {
            break;
        }
    }
}

fn has_tool_history(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a.tool_calls().next().is_some(),
        Message::User(_) => false,
    })
}

/// Builds the request body. `messages` are the transformed conversation of `context`.
pub fn build_body<'a>(
    model: &'a Model,
    context: &'a Context,
    messages: &'a [Message],
    options: &'a StreamOptions,
    compat: &Compat,
    retention: CacheRetention,
) -> Body<'a> {
    let mut chat = convert_messages(model, context, messages, compat);
    let long_cache = retention == CacheRetention::Long && compat.supports_long_cache_retention;
    let mut body = Body {
        model: &model.id,
        messages: Vec::new(),
        stream: true,
        // pi-ai 1.6: `promptCacheKeyMode` decides; `auto` sends the key to OpenAI itself,
        // and wherever long retention is asked for and supported.
        prompt_cache_key: (retention != CacheRetention::None
            && compat
                .prompt_cache_key
                .unwrap_or(model.base_url.contains("api.openai.com") || long_cache))
        .then_some(options.session_id.as_deref())
        .flatten()
        .map(crate::providers::common::clamp_prompt_cache_key),
        prompt_cache_retention: long_cache.then_some("24h"),
        stream_options: compat
            .supports_usage_in_streaming
            .then(|| serde_json::json!({"include_usage": true})),
        store: compat.supports_store.then_some(false),
        max_completion_tokens: None,
        max_tokens: None,
        temperature: options.temperature,
        tools: None,
        tool_choice: None,
        extra: Map::new(),
    };
    if let Some(max) = options.max_tokens.filter(|m| *m > 0) {
        match compat.max_tokens_field {
            MaxTokensField::MaxTokens => body.max_tokens = Some(max),
            MaxTokensField::MaxCompletionTokens => body.max_completion_tokens = Some(max),
        }
    }
    if !context.tools.is_empty() {
        body.tools = Some(
            context
                .tools
                .iter()
                .map(|t| {
                    let strict = crate::constrained_sampling::strict_or_none(
                        t,
                        compat.supports_strict_mode,
                        None,
                    );
                    ToolParam {
                        kind: "function",
                        function: FunctionDef {
                            name: &t.name,
                            description: &t.description,
                            parameters: crate::constrained_sampling::tool_parameters(t, strict),
                            strict: compat
                                .supports_strict_mode
                                .then_some(strict.unwrap_or(false)),
                        },
                        cache_control: None,
                    }
                })
                .collect(),
        );
        if compat.zai_tool_stream {
            body.extra.insert("tool_stream".into(), Value::Bool(true));
        }
    } else if compat.requires_tools_with_tool_history && has_tool_history(messages) {
        // pi 1.5: only servers that ask for it get `"tools": []` once tools were used.
        body.tools = Some(Vec::new());
    }
    if let Some(marker) = cache_control(compat, retention) {
        apply_cache_control(&mut chat, body.tools.as_mut(), &marker);
    }
    body.messages = chat;
    body.tool_choice = options.tool_choice.as_ref().map(|choice| match choice {
        ToolChoice::Auto => Value::from("auto"),
        ToolChoice::None => Value::from("none"),
        ToolChoice::Required => Value::from("required"),
        ToolChoice::Tool(name) => {
            serde_json::json!({"type": "function", "function": {"name": name}})
        }
    });
    let effort = options
        .reasoning_effort
        .filter(|l| *l != ThinkingLevel::Off);
    let body_limit = body.max_tokens.or(body.max_completion_tokens);
    let extra = &mut body.extra;
    super::thinking::apply(extra, model, compat, effort, body_limit);
    if let Some(priority) = &compat.vllm_priority {
        extra.insert("priority".into(), Value::Number(priority.clone()));
    }
    if let Some(field) = &compat.thinking_token_budget_field
        && let Some(budget) = super::thinking::budget(model, body_limit, effort)
    {
        extra.insert(field.clone(), Value::from(budget));
    }
    // Routing preferences go to any base URL (pi-ai 1.6): a custom provider may reach
    // OpenRouter or the Vercel gateway through a proxy.
    if let Some(routing) = &compat.open_router_routing {
        extra.insert("provider".into(), routing.clone());
    }
    if let Some(Value::Object(routing)) = &compat.vercel_gateway_routing {
        let mut gateway = Map::new();
        for key in ["only", "order"] {
            if let Some(v) = routing.get(key) {
                gateway.insert(key.into(), v.clone());
            }
        }
        if !gateway.is_empty() {
            extra.insert(
                "providerOptions".into(),
                serde_json::json!({"gateway": gateway}),
            );
        }
    }
    // The model's sampling fields go last and win over ours (pi-ai 1.6).
    if let Some(params) = model.sampling_params(effort.unwrap_or(ThinkingLevel::Off)) {
        apply_sampling_params(&mut body, params);
    }
    body
}

/// Puts the model's sampling fields into the body, over ours (a `temperature` among them
/// replaces the option's, written as the user wrote it).
fn apply_sampling_params(body: &mut Body<'_>, params: Map<String, Value>) {
    for (key, value) in params {
        if key == "temperature" {
            body.temperature = None;
        }
        body.extra.insert(key, value);
    }
}

/// The transformed conversation for this model (ids normalized, orphans answered).
pub fn prepare_messages(model: &Model, context: &Context) -> Vec<Message> {
    let normalize = |id: &str| normalize_tool_call_id(model, id);
    transform_messages(&context.messages, model, Some(&normalize))
}

/// [`prepare_messages`], with `frame`'s system messages placed in the result (kept only
/// for a model with mid-conversation system messages).
pub fn prepare_placing(model: &Model, context: &Context, frame: &mut Context) -> Vec<Message> {
    let normalize = |id: &str| normalize_tool_call_id(model, id);
    crate::transcript::transform_placing(model, context, frame, Some(&normalize))
}
