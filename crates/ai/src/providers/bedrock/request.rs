//! The ConverseStream request body: messages of content blocks, system blocks, inference and
//! tool configuration, Claude thinking fields and prompt-cache points.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::BedrockOptions;
use crate::transform::{
    ERROR_TOOL_IMAGE_PLACEHOLDER, error_images_caption, replace_images, transform_messages,
};
use crate::types::{
    AssistantBlock, CacheRetention, Context, InputBlock, Message, Model, SharedStr, StreamOptions,
    ThinkingLevel, ToolChoice, UserContent,
};

/// The JSON body of `POST /model/{modelId}/converse-stream`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConverseStreamRequest {
    pub messages: Vec<BedrockMessage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<Vec<SystemBlock>>,
    pub inference_config: InferenceConfig,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_config: Option<ToolConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_model_request_fields: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_metadata: Option<BTreeMap<String, String>>,
}

/// A conversation message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BedrockMessage {
    /// `user` or `assistant`.
    pub role: &'static str,
    pub content: Vec<ContentBlock>,
}

/// A content block (a union: exactly one member is set).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ContentBlock {
    Text(SharedStr),
    Image(ImageBlock),
    ToolUse(ToolUseBlock),
    ToolResult(ToolResultBlock),
    ReasoningContent(ReasoningContent),
    CachePoint(CachePoint),
}

/// An image: its format and base64 bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImageBlock {
    /// `png`, `jpeg`, `gif` or `webp`.
    pub format: &'static str,
    pub source: ImageSource,
}

/// The image bytes (a blob, base64 in JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImageSource {
    pub bytes: String,
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseBlock {
    pub tool_use_id: String,
    pub name: String,
    pub input: Map<String, Value>,
}

/// A tool's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultBlock {
    pub tool_use_id: String,
    pub content: Vec<ToolResultContent>,
    /// `success` or `error`.
    pub status: &'static str,
}

/// One part of a tool result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolResultContent {
    Text(SharedStr),
    Image(ImageBlock),
}

/// Reasoning sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ReasoningContent {
    ReasoningText(ReasoningText),
    /// Encrypted reasoning (base64), returned as received.
    RedactedContent(String),
}

/// Reasoning text with Claude's signature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReasoningText {
    pub text: SharedStr,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// A prompt-cache breakpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CachePoint {
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `1h` for long retention.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<&'static str>,
}

/// A system prompt block.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SystemBlock {
    Text(String),
    CachePoint(CachePoint),
}

/// `inferenceConfig`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InferenceConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
}

/// `toolConfig`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolConfig {
    pub tools: Vec<BedrockTool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<BedrockToolChoice>,
}

/// A tool definition.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BedrockTool {
    ToolSpec(ToolSpec),
}

/// A tool's name, description and JSON schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: InputSchema,
    /// `true` for a tool sent in strict mode, absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// The schema union (`json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum InputSchema {
    Json(Value),
}

/// `toolChoice`: `{"auto":{}}`, `{"any":{}}` or `{"tool":{"name":…}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BedrockToolChoice {
    Auto(Empty),
    Any(Empty),
    Tool { name: String },
}

/// `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Empty {}

/// The model id and name, lowercased, each also with runs of spaces, `_`, `.` and `:` turned
/// into `-` (application inference profiles carry the model only in the name).
fn match_candidates(model: &Model) -> Vec<String> {
    let mut values = vec![model.id.as_str()];
    if !model.name.is_empty() {
        values.push(model.name.as_str());
    }
    let mut out = Vec::with_capacity(values.len() * 2);
    for value in values {
        let lower = value.to_lowercase();
        let mut dashed = String::with_capacity(lower.len());
        let mut in_run = false;
        for c in lower.chars() {
            if c.is_whitespace() || matches!(c, '_' | '.' | ':') {
                if !in_run {
                    dashed.push('-');
                }
                in_run = true;
            } else {
                dashed.push(c);
                in_run = false;
            }
        }
        out.push(lower);
        out.push(dashed);
    }
    out
}

/// Whether the model is Anthropic's Claude (by id, or by name for inference profiles).
pub fn is_claude(model: &Model) -> bool {
    let id = model.id.to_lowercase();
    let name = model.name.to_lowercase();
    id.contains("anthropic.claude")
        || id.contains("anthropic/claude")
        || name.contains("anthropic.claude")
        || name.contains("anthropic/claude")
        || name.contains("claude")
}

/// Whether Claude thinks adaptively with an effort (pi 1.6's list: Opus 4.6 and later,
/// Sonnet 4.6 and later, Haiku 5, Fable 5).
pub fn supports_adaptive_thinking(model: &Model) -> bool {
    const ADAPTIVE: [&str; 8] = [
        "opus-4-6",
        "opus-4-7",
        "opus-4-8",
        "opus-5",
        "sonnet-4-6",
        "sonnet-5",
        "haiku-5",
        "fable-5",
    ];
    match_candidates(model)
        .iter()
        .any(|s| ADAPTIVE.iter().any(|needle| s.contains(needle)))
}

/// Whether the model has a native `xhigh` effort (pi 1.6: Opus 4.7 and later, Sonnet 5,
/// Haiku 5, Fable 5).
fn supports_native_xhigh(model: &Model) -> bool {
    const XHIGH: [&str; 6] = [
        "opus-4-7", "opus-4-8", "opus-5", "sonnet-5", "haiku-5", "fable-5",
    ];
    match_candidates(model)
        .iter()
        .any(|s| XHIGH.iter().any(|needle| s.contains(needle)))
}

/// Whether the model takes explicit cache points (Claude 3.5 Haiku, 3.7 Sonnet, 4.x and
/// the 5 family: Fable, Opus, Sonnet, Haiku), or `AWS_BEDROCK_FORCE_CACHE=1` for models
/// whose id and name say nothing.
pub fn supports_prompt_caching(model: &Model) -> bool {
    const CLAUDE_5: [&str; 4] = ["fable-5", "opus-5", "sonnet-5", "haiku-5"];
    let candidates = match_candidates(model);
    if !candidates.iter().any(|s| s.contains("claude")) {
        return std::env::var("AWS_BEDROCK_FORCE_CACHE").is_ok_and(|v| v == "1");
    }
    candidates.iter().any(|s| {
        CLAUDE_5.iter().any(|needle| s.contains(needle))
            || s.contains("-4-")
            || s.contains("claude-3-7-sonnet")
            || s.contains("claude-3-5-haiku")
    })
}

/// The adaptive-thinking effort for a level.
fn effort(model: &Model, level: ThinkingLevel) -> String {
    if level == ThinkingLevel::Xhigh && supports_native_xhigh(model) {
        return "xhigh".to_owned();
    }
    if let Some(Some(mapped)) = model.thinking_level_value(level) {
        return mapped.to_owned();
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .to_owned()
}

fn is_gov_cloud(model: &Model, configured_region: Option<&str>) -> bool {
    if configured_region.is_some_and(|r| r.to_lowercase().starts_with("us-gov-")) {
        return true;
    }
    let id = model.id.to_lowercase();
    id.starts_with("us-gov.") || id.starts_with("arn:aws-us-gov:")
}

/// The beta that lets Claude drop thinking blocks whose signed prefix changed (pi-ai 1.6).
const THINKING_BINDING_BETA: &str = "thinking-binding-controls-2026-08-01";

/// The reasoning fields of OpenAI models on Bedrock (pi-ai 1.6): gpt-oss takes a flat
/// `reasoning_effort` (at most `high`); other GPT models `reasoning.effort`, which their
/// thinking-level map may rename.
fn openai_reasoning(model: &Model, level: ThinkingLevel) -> Option<Value> {
    let candidates = match_candidates(model);
    let capped = match level {
        ThinkingLevel::Off => return None,
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    };
    if candidates.iter().any(|s| s.contains("gpt-oss")) {
        return Some(serde_json::json!({"reasoning_effort": capped}));
    }
    if !candidates.iter().any(|s| s.contains("gpt-")) {
        return None;
    }
    let effort = match (model.thinking_level_value(level), level) {
        (Some(Some(mapped)), _) => mapped,
        (_, ThinkingLevel::Xhigh) => "xhigh",
        (_, ThinkingLevel::Max) => "max",
        _ => capped,
    };
    Some(serde_json::json!({"reasoning": {"effort": effort}}))
}

/// `additionalModelRequestFields` for reasoning: Claude's adaptive thinking with an effort
/// (and, where Claude supports it, dropping thinking blocks a changed prompt invalidated), or
/// a token budget (with the interleaved-thinking beta unless turned off); OpenAI models'
/// reasoning effort.
pub fn additional_model_request_fields(
    model: &Model,
    bedrock: &BedrockOptions,
    configured_region: Option<&str>,
) -> Option<Value> {
    let level = bedrock.reasoning.filter(|l| *l != ThinkingLevel::Off)?;
    if !model.reasoning {
        return None;
    }
    if !is_claude(model) {
        return openai_reasoning(model, level);
    }
    let gov_cloud = is_gov_cloud(model, configured_region);
    // Opus 4.7 and later, Sonnet 5, Haiku 5 and Fable 5 bind thinking to its prompt prefix.
    let block_binding = !gov_cloud && supports_native_xhigh(model);
    let display = (!gov_cloud).then(|| {
        bedrock
            .thinking_display
            .clone()
            .unwrap_or_else(|| "summarized".to_owned())
    });
    let adaptive = supports_adaptive_thinking(model);
    let mut thinking = Map::new();
    let mut fields = Map::new();
    if adaptive {
        thinking.insert("type".into(), "adaptive".into());
        if let Some(display) = display {
            thinking.insert("display".into(), display.into());
        }
        if block_binding {
            thinking.insert(
                "block_binding".into(),
                serde_json::json!({"prefix_mismatch_behavior": "drop_block"}),
            );
        }
        fields.insert("thinking".into(), Value::Object(thinking));
        fields.insert(
            "output_config".into(),
            serde_json::json!({"effort": effort(model, level)}),
        );
        if block_binding {
            fields.insert(
                "anthropic_beta".into(),
                serde_json::json!([THINKING_BINDING_BETA]),
            );
        }
    } else {
        let budget = bedrock
            .thinking_budgets
            .unwrap_or_default()
            .budget_for(level);
        thinking.insert("type".into(), "enabled".into());
        thinking.insert("budget_tokens".into(), budget.into());
        if let Some(display) = display {
            thinking.insert("display".into(), display.into());
        }
        fields.insert("thinking".into(), Value::Object(thinking));
        if bedrock.interleaved_thinking.unwrap_or(true) {
            fields.insert(
                "anthropic_beta".into(),
                serde_json::json!(["interleaved-thinking-2025-05-14"]),
            );
        }
    }
    Some(Value::Object(fields))
}

/// Tool-call ids as Bedrock accepts them: `[a-zA-Z0-9_-]`, at most 64 characters.
pub fn normalize_tool_call_id(id: &str) -> String {
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

fn image_block(mime: &str, data: &str) -> Result<ImageBlock, String> {
    let format = match mime {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => return Err(format!("Unknown image type: {other}")),
    };
    Ok(ImageBlock {
        format,
        source: ImageSource {
            bytes: data.to_owned(),
        },
    })
}

fn cache_point(retention: CacheRetention) -> CachePoint {
    CachePoint {
        kind: "default",
        ttl: (retention == CacheRetention::Long).then_some("1h"),
    }
}

/// Text Bedrock requires where a user turn or tool result has none (pi-ai 1.6).
const EMPTY_TEXT_PLACEHOLDER: &str = "<empty>";

/// A tool call's arguments without empty object keys, which Bedrock rejects on replay;
/// every other value is kept as it is, at any depth (pi-ai 1.6).
fn without_empty_keys(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(without_empty_keys).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| !key.is_empty())
                .map(|(key, nested)| (key.clone(), without_empty_keys(nested)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn tool_result(result: &crate::types::ToolResultMessage) -> Result<ContentBlock, String> {
    let mut content = Vec::new();
    for block in &result.content {
        match block {
            InputBlock::Image(i) => {
                content.push(image_block(&i.mime_type, &i.data).map(ToolResultContent::Image)?)
            }
            InputBlock::Text(t) if t.text.trim().is_empty() => {}
            InputBlock::Text(t) => content.push(ToolResultContent::Text(t.text.clone())),
        }
    }
    if content.is_empty() {
        content.push(ToolResultContent::Text(EMPTY_TEXT_PLACEHOLDER.into()));
    }
    Ok(ContentBlock::ToolResult(ToolResultBlock {
        tool_use_id: result.tool_call_id.clone(),
        content,
        status: if result.is_error { "error" } else { "success" },
    }))
}

/// Converts the conversation: consecutive tool results become one user message, empty
/// assistant turns are skipped, and a cache point closes the last user message.
pub fn convert_messages(
    model: &Model,
    messages: &[Message],
    retention: CacheRetention,
) -> Result<Vec<BedrockMessage>, String> {
    let messages = transform_messages(messages, model, Some(&normalize_tool_call_id));
    let signatures = is_claude(model);
    let mut out: Vec<BedrockMessage> = Vec::with_capacity(messages.len());
    let mut index = 0;
    while index < messages.len() {
        match &messages[index] {
            Message::User(user) => {
                // Blank text is left out; a turn left without content gets a placeholder.
                let mut content = Vec::new();
                match &user.content {
                    UserContent::Text(text) if text.trim().is_empty() => {}
                    UserContent::Text(text) => content.push(ContentBlock::Text(text.clone())),
                    UserContent::Blocks(blocks) => {
                        for block in blocks {
                            match block {
                                InputBlock::Text(t) if t.text.trim().is_empty() => {}
                                InputBlock::Text(t) => {
                                    content.push(ContentBlock::Text(t.text.clone()))
                                }
                                InputBlock::Image(i) => content.push(
                                    image_block(&i.mime_type, &i.data).map(ContentBlock::Image)?,
                                ),
                            }
                        }
                    }
                }
                if content.is_empty() {
                    content.push(ContentBlock::Text(EMPTY_TEXT_PLACEHOLDER.into()));
                }
                out.push(BedrockMessage {
                    role: "user",
                    content,
                });
            }
            Message::Assistant(assistant) => {
                let mut content = Vec::new();
                for block in &assistant.content {
                    match block {
                        AssistantBlock::Text(t) => {
                            if !t.text.trim().is_empty() {
                                content.push(ContentBlock::Text(t.text.clone()));
                            }
                        }
                        AssistantBlock::ToolCall(call) => {
                            content.push(ContentBlock::ToolUse(ToolUseBlock {
                                tool_use_id: call.id.clone(),
                                name: call.name.clone(),
                                input: call
                                    .arguments
                                    .iter()
                                    .filter(|(key, _)| !key.is_empty())
                                    .map(|(key, value)| (key.clone(), without_empty_keys(value)))
                                    .collect(),
                            }));
                        }
                        AssistantBlock::Thinking(t) if t.is_redacted() => {
                            if let Some(data) =
                                t.thinking_signature.as_deref().filter(|d| !d.is_empty())
                            {
                                content.push(ContentBlock::ReasoningContent(
                                    ReasoningContent::RedactedContent(data.to_owned()),
                                ));
                            }
                        }
                        AssistantBlock::Thinking(t) => {
                            if t.thinking.trim().is_empty() {
                                continue;
                            }
                            let signature = t
                                .thinking_signature
                                .as_deref()
                                .filter(|s| !s.trim().is_empty());
                            let block = match (signatures, signature) {
                                // Unsigned Claude reasoning is rejected on replay: plain text.
                                (true, None) => ContentBlock::Text(t.thinking.clone()),
                                (true, Some(signature)) => ContentBlock::ReasoningContent(
                                    ReasoningContent::ReasoningText(ReasoningText {
                                        text: t.thinking.clone(),
                                        signature: Some(signature.to_owned()),
                                    }),
                                ),
                                // Other models reject the signature field.
                                (false, _) => ContentBlock::ReasoningContent(
                                    ReasoningContent::ReasoningText(ReasoningText {
                                        text: t.thinking.clone(),
                                        signature: None,
                                    }),
                                ),
                            };
                            content.push(block);
                        }
                    }
                }
                if !content.is_empty() {
                    out.push(BedrockMessage {
                        role: "assistant",
                        content,
                    });
                }
            }
            Message::ToolResult(_) => {
                let mut content = Vec::new();
                let mut error_images = Vec::new();
                while let Some(Message::ToolResult(result)) = messages.get(index) {
                    let has_images = result
                        .content
                        .iter()
                        .any(|b| matches!(b, InputBlock::Image(_)));
                    // Claude rejects images in an error result: they follow the turn's results.
                    if signatures && result.is_error && has_images {
                        let mut replaced = (**result).clone();
                        replaced.content =
                            replace_images(&result.content, ERROR_TOOL_IMAGE_PLACEHOLDER).into();
                        content.push(tool_result(&replaced)?);
                        error_images.push(ContentBlock::Text(error_images_caption(result).into()));
                        for block in result.content.iter() {
                            if let InputBlock::Image(i) = block {
                                error_images.push(
                                    image_block(&i.mime_type, &i.data).map(ContentBlock::Image)?,
                                );
                            }
                        }
                    } else {
                        content.push(tool_result(result)?);
                    }
                    index += 1;
                }
                content.extend(error_images);
                out.push(BedrockMessage {
                    role: "user",
                    content,
                });
                continue;
            }
        }
        index += 1;
    }
    if retention != CacheRetention::None
        && supports_prompt_caching(model)
        && let Some(last) = out.last_mut()
        && last.role == "user"
    {
        last.content
            .push(ContentBlock::CachePoint(cache_point(retention)));
    }
    Ok(out)
}

fn system_blocks(
    model: &Model,
    prompt: Option<&str>,
    retention: CacheRetention,
) -> Option<Vec<SystemBlock>> {
    let prompt = prompt.filter(|p| !p.is_empty())?;
    let mut blocks = vec![SystemBlock::Text(prompt.to_owned())];
    if retention != CacheRetention::None && supports_prompt_caching(model) {
        blocks.push(SystemBlock::CachePoint(cache_point(retention)));
    }
    Some(blocks)
}

/// Whether `model` has Bedrock strict mode (`compat.supportsStrictMode`, off by default).
fn supports_strict_mode(model: &Model) -> bool {
    model
        .compat
        .as_ref()
        .and_then(|c| c.supports_strict_mode)
        .unwrap_or(false)
}

/// Whether `tool` goes strict, unless it only prefers strictness and `disable_preferred`.
fn tool_is_strict(
    model: &Model,
    tool: &crate::types::Tool,
    disable_preferred: bool,
) -> Option<bool> {
    if disable_preferred && crate::constrained_sampling::prefers_strict(tool) {
        return None;
    }
    crate::constrained_sampling::strict_or_none(tool, supports_strict_mode(model), None)
}

/// Whether the request sends strict a tool that only prefers strictness, so that Claude's
/// refusal for its strict-tool limits can be retried with it plain (pi-ai 1.5).
pub fn has_preferred_strict_tools(
    model: &Model,
    context: &Context,
    choice: Option<&ToolChoice>,
) -> bool {
    choice != Some(&ToolChoice::None)
        && context.tools.iter().any(|tool| {
            crate::constrained_sampling::prefers_strict(tool)
                && tool_is_strict(model, tool, false) == Some(true)
        })
}

/// The tools, strict where the model has strict mode (`compat.supportsStrictMode`, off by
/// default) and the tool asks for it.
///
/// With `disable_preferred`, tools that only prefer strictness go plain.
fn tool_config(
    model: &Model,
    context: &Context,
    choice: Option<&ToolChoice>,
    disable_preferred: bool,
) -> Option<ToolConfig> {
    if context.tools.is_empty() || choice == Some(&ToolChoice::None) {
        return None;
    }
    let tools = context
        .tools
        .iter()
        .map(|tool| {
            let strict = tool_is_strict(model, tool, disable_preferred);
            BedrockTool::ToolSpec(ToolSpec {
                name: tool.name.clone(),
                description: tool.description.clone(),
                input_schema: InputSchema::Json(
                    crate::constrained_sampling::tool_parameters(tool, strict).into_owned(),
                ),
                strict: strict.filter(|s| *s),
            })
        })
        .collect();
    let tool_choice = match choice {
        Some(ToolChoice::Auto) => Some(BedrockToolChoice::Auto(Empty {})),
        Some(ToolChoice::Required) => Some(BedrockToolChoice::Any(Empty {})),
        Some(ToolChoice::Tool(name)) => Some(BedrockToolChoice::Tool { name: name.clone() }),
        Some(ToolChoice::None) | None => None,
    };
    Some(ToolConfig { tools, tool_choice })
}

/// Builds the request body; fails on content Bedrock cannot take (an unknown image type).
pub fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    bedrock: &BedrockOptions,
    configured_region: Option<&str>,
) -> Result<ConverseStreamRequest, String> {
    let retention = CacheRetention::resolve(options.cache_retention, options.env.as_deref());
    Ok(ConverseStreamRequest {
        messages: convert_messages(model, &context.messages, retention)?,
        system: system_blocks(model, context.system_prompt.as_deref(), retention),
        inference_config: InferenceConfig {
            // Claude gets its output cap when none is asked for: Bedrock's default (4096)
            // would cut its replies short (pi-ai 1.6).
            max_tokens: options
                .max_tokens
                .or_else(|| is_claude(model).then_some(model.max_tokens)),
            temperature: options.temperature,
        },
        tool_config: tool_config(
            model,
            context,
            options.tool_choice.as_ref(),
            bedrock.disable_preferred_strict_tools,
        ),
        additional_model_request_fields: additional_model_request_fields(
            model,
            bedrock,
            configured_region,
        ),
        request_metadata: bedrock.request_metadata.clone(),
    })
}
