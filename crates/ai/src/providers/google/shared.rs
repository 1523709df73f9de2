//! What the three Google APIs share (the TypeScript `google-shared.ts`): the `Content`/`Part`
//! request shapes, message and tool conversion, tool choice, and the thinking settings per model.

use std::sync::LazyLock;

use regex::Regex;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::providers::body_text::{BodyText, joined};
use crate::transform::transform_messages;
use crate::types::{
    AssistantBlock, InputBlock, Message, Model, SharedStr, ThinkingBudgets, ThinkingLevel, Tool,
    ToolChoice, UserContent,
};

/// One turn of the conversation: `role` is `user` or `model` (absent on a Cloud Code Assist
/// `systemInstruction`).
#[derive(Debug, Clone, Serialize)]
pub struct Content<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    pub parts: Vec<Part<'a>>,
}

impl<'a> Content<'a> {
    fn new(role: &'static str, parts: Vec<Part<'a>>) -> Self {
        Self {
            role: Some(role),
            parts,
        }
    }

    fn has_function_response(&self) -> bool {
        self.parts.iter().any(|p| p.function_response.is_some())
    }
}

/// One part of a turn; exactly one of text, inline data, function call or response is set.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Part<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_call: Option<FunctionCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_response: Option<FunctionResponse<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inline_data: Option<Blob<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<BodyText<'a>>,
    /// Marks thought-summary text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought: Option<bool>,
    /// Opaque base64 signature of the model's reasoning, replayed on the part it came with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<&'a str>,
}

impl<'a> Part<'a> {
    fn text(text: impl Into<BodyText<'a>>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    fn inline(mime_type: &'a str, data: &SharedStr) -> Self {
        Self {
            inline_data: Some(Blob {
                mime_type,
                data: data.into(),
            }),
            ..Self::default()
        }
    }
}

/// Base64 bytes with their MIME type (`inlineData`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blob<'a> {
    pub mime_type: &'a str,
    pub data: BodyText<'a>,
}

/// A function call the model made, replayed in a `model` turn.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionCall<'a> {
    pub name: &'a str,
    pub args: &'a Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
}

/// A tool's result, sent in a `user` turn.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionResponse<'a> {
    pub name: &'a str,
    /// `{"output": text}`, or `{"error": text}` for a failed tool.
    pub response: ToolResponse<'a>,
    /// Images of the result (Gemini 3+ multimodal function responses).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<Part<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
}

/// A tool's output, or its error for a failed tool.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolResponse<'a> {
    Output(BodyText<'a>),
    Error(BodyText<'a>),
}

/// One entry of `tools`: the function declarations.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDeclarations<'a> {
    pub function_declarations: Vec<FunctionDeclaration<'a>>,
}

/// A tool, with its schema as full JSON Schema (`parametersJsonSchema`) or in Gemini's
/// OpenAPI subset (`parameters`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionDeclaration<'a> {
    pub name: &'a str,
    pub description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters_json_schema: Option<Value>,
}

/// `toolConfig`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolConfig {
    pub function_calling_config: FunctionCallingConfig,
}

/// `toolConfig.functionCallingConfig`: `AUTO`, `NONE` or `ANY` (optionally one named function).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionCallingConfig {
    pub mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_function_names: Option<Vec<String>>,
}

/// `generationConfig`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_config: Option<ThinkingConfig>,
}

impl GenerationConfig {
    fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// `generationConfig.thinkingConfig`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_thoughts: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<i64>,
}

/// Google thinking settings (the TypeScript `GoogleOptions.thinking`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GoogleThinking {
    /// Ask for thought summaries; `false` turns thinking off (or to the lowest level on Gemini 3).
    pub enabled: bool,
    /// Token budget for Gemini 2.x (`-1` dynamic, `0` off).
    pub budget_tokens: Option<i64>,
    /// `MINIMAL`, `LOW`, `MEDIUM` or `HIGH` for Gemini 3 and Gemma 4.
    pub level: Option<&'static str>,
}

impl GoogleThinking {
    /// Thinking off.
    pub const DISABLED: Self = Self {
        enabled: false,
        budget_tokens: None,
        level: None,
    };
}

/// Models behind Google APIs that need explicit tool-call ids in calls and responses.
pub fn requires_tool_call_id(model_id: &str) -> bool {
    model_id.starts_with("claude-")
        || model_id.starts_with("gpt-oss-")
        || gemini_major_version(model_id).is_some_and(|major| major >= 3)
}

static GEMINI3_PRO: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"gemini-3(?:\.\d+)?-pro").ok());
static GEMINI3_FLASH: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"gemini-3(?:\.\d+)?-flash").ok());

fn matches(re: &LazyLock<Option<Regex>>, model_id: &str) -> bool {
    re.as_ref()
        .is_some_and(|re| re.is_match(&model_id.to_ascii_lowercase()))
}

/// `gemini-3-pro`, `gemini-3.1-pro`, …
pub fn is_gemini3_pro(model_id: &str) -> bool {
    matches(&GEMINI3_PRO, model_id)
}

/// `gemini-3-flash`, `gemini-3.1-flash-lite`, …
pub fn is_gemini3_flash(model_id: &str) -> bool {
    matches(&GEMINI3_FLASH, model_id)
}

/// Gemma 4 (`gemma-4…` or `gemma4…`).
pub fn is_gemma4(model_id: &str) -> bool {
    let id = model_id.to_ascii_lowercase();
    id.contains("gemma-4") || id.contains("gemma4")
}

/// The major version of a `gemini-N…` / `gemini-live-N…` id.
fn gemini_major_version(model_id: &str) -> Option<u32> {
    let id = model_id.to_ascii_lowercase();
    let rest = id.strip_prefix("gemini-")?;
    let rest = rest.strip_prefix("live-").unwrap_or(rest);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Gemini 3+ (and non-Gemini models) take images inside `functionResponse.parts`.
fn supports_multimodal_function_response(model_id: &str) -> bool {
    gemini_major_version(model_id).is_none_or(|major| major >= 3)
}

/// Whether a thought signature is base64 (`TYPE_BYTES`), as Google requires.
fn is_valid_thought_signature(signature: &str) -> bool {
    let body = signature.trim_end_matches('=');
    !signature.is_empty()
        && signature.len().is_multiple_of(4)
        && signature.len() - body.len() <= 2
        && !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// A signature is replayed only to the model that produced it, and only when valid base64.
fn resolve_signature(same_model: bool, signature: Option<&str>) -> Option<&str> {
    signature.filter(|s| same_model && is_valid_thought_signature(s))
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

/// The conversation as `model` should receive it (ids normalized where ids are sent).
pub fn prepare_messages(model: &Model, messages: &[Message]) -> Vec<Message> {
    if requires_tool_call_id(&model.id) {
        transform_messages(messages, model, Some(&normalize_tool_call_id))
    } else {
        transform_messages(messages, model, None)
    }
}

/// Converts the transformed conversation to Gemini `contents`.
pub fn convert_messages<'a>(model: &Model, messages: &'a [Message]) -> Vec<Content<'a>> {
    let include_id = requires_tool_call_id(&model.id);
    let mut contents: Vec<Content<'a>> = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            Message::User(user) => match &user.content {
                UserContent::Text(text) => {
                    contents.push(Content::new("user", vec![Part::text(text)]));
                }
                UserContent::Blocks(blocks) => {
                    let parts: Vec<Part> = blocks.iter().map(input_part).collect();
                    if !parts.is_empty() {
                        contents.push(Content::new("user", parts));
                    }
                }
            },
            Message::Assistant(assistant) => {
                let same_model =
                    assistant.provider == model.provider && assistant.model == model.id;
                let mut parts = Vec::new();
                for block in &assistant.content {
                    match block {
                        // Blank text and thinking go back only when signed (pi-ai 1.6).
                        AssistantBlock::Text(t) => {
                            let signature =
                                resolve_signature(same_model, t.text_signature.as_deref());
                            if t.text.is_blank() && signature.is_none() {
                                continue;
                            }
                            let mut part = Part::text(&t.text);
                            part.thought_signature = signature;
                            parts.push(part);
                        }
                        AssistantBlock::Thinking(t) => {
                            let signature = same_model
                                .then(|| {
                                    resolve_signature(same_model, t.thinking_signature.as_deref())
                                })
                                .flatten();
                            if t.thinking.is_blank() && signature.is_none() {
                                continue;
                            }
                            let mut part = Part::text(&t.thinking);
                            if same_model {
                                part.thought = Some(true);
                                part.thought_signature = signature;
                            }
                            parts.push(part);
                        }
                        AssistantBlock::ToolCall(call) => parts.push(Part {
                            function_call: Some(FunctionCall {
                                name: &call.name,
                                args: &call.arguments,
                                id: include_id.then_some(call.id.as_str()),
                            }),
                            thought_signature: resolve_signature(
                                same_model,
                                call.thought_signature.as_deref(),
                            ),
                            ..Part::default()
                        }),
                    }
                }
                if !parts.is_empty() {
                    contents.push(Content::new("model", parts));
                }
            }
            Message::ToolResult(result) => {
                let texts: Vec<&SharedStr> = result
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        InputBlock::Text(t) => Some(&t.text),
                        InputBlock::Image(_) => None,
                    })
                    .collect();
                let text = joined(&texts, "\n");
                let images: Vec<Part> = if model.supports_images() {
                    result
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            InputBlock::Image(i) => Some(Part::inline(&i.mime_type, &i.data)),
                            InputBlock::Text(_) => None,
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                // Whitespace-only output (a bare `\r\n`) counts as none: Google rejects it.
                let value = if !texts.iter().all(|t| t.as_str().trim().is_empty()) {
                    text
                } else if !images.is_empty() {
                    "(see attached image)".into()
                } else {
                    BodyText::default()
                };
                let response = if result.is_error {
                    ToolResponse::Error(value)
                } else {
                    ToolResponse::Output(value)
                };
                let nested = !images.is_empty() && supports_multimodal_function_response(&model.id);
                let part = Part {
                    function_response: Some(FunctionResponse {
                        name: &result.tool_name,
                        response,
                        parts: nested.then(|| images.clone()),
                        id: include_id.then_some(result.tool_call_id.as_str()),
                    }),
                    ..Part::default()
                };
                // All results of one assistant turn go in a single user turn (Cloud Code Assist
                // requires it; Gemini accepts it).
                match contents.last_mut() {
                    Some(last) if last.role == Some("user") && last.has_function_response() => {
                        last.parts.push(part);
                    }
                    _ => contents.push(Content::new("user", vec![part])),
                }
                if !images.is_empty() && !nested {
                    let mut parts = vec![Part::text("Tool result image:")];
                    parts.extend(images);
                    contents.push(Content::new("user", parts));
                }
            }
        }
    }
    contents
}

fn input_part(block: &InputBlock) -> Part<'_> {
    match block {
        InputBlock::Text(t) => Part::text(&t.text),
        InputBlock::Image(i) => Part::inline(&i.mime_type, &i.data),
    }
}

/// How a tool's JSON Schema is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaForm {
    /// `parametersJsonSchema`: full JSON Schema, minus document keywords (`$schema`, `$defs`).
    JsonSchema,
    /// `parameters`: Gemini's OpenAPI subset ([`crate::schema::for_gemini`]).
    OpenApi,
}

/// Whether the model enforces required parameters in the validated function-calling mode
/// (Gemini 3 and later), where tools asking for strict sampling are sent strict.
pub fn supports_strict_tools(model_id: &str) -> bool {
    gemini_major_version(model_id).is_some_and(|major| major >= 3)
}

/// `tools`: one entry holding every function declaration (none without tools); a tool that
/// asks for strict sampling gets its strict schema where `strict_mode` allows.
pub fn convert_tools(
    tools: &[Tool],
    form: SchemaForm,
    strict_mode: bool,
) -> Option<Vec<ToolDeclarations<'_>>> {
    if tools.is_empty() {
        return None;
    }
    let function_declarations = tools
        .iter()
        .map(|tool| {
            let strict = crate::constrained_sampling::strict_or_none(tool, strict_mode, None);
            let schema = crate::constrained_sampling::tool_parameters(tool, strict);
            let (parameters, parameters_json_schema) = match form {
                SchemaForm::JsonSchema => (
                    None,
                    Some(crate::schema::const_as_enum(&crate::schema::strip_meta(
                        &crate::schema::inline_refs(&schema),
                    ))),
                ),
                SchemaForm::OpenApi => (Some(crate::schema::for_gemini(&schema)), None),
            };
            FunctionDeclaration {
                name: &tool.name,
                description: &tool.description,
                parameters,
                parameters_json_schema,
            }
        })
        .collect();
    Some(vec![ToolDeclarations {
        function_declarations,
    }])
}

/// `toolConfig` for a tool choice: `auto` → `AUTO`, `none` → `NONE`, `required` → `ANY`, and
/// a named tool → `ANY` limited to it.
pub fn tool_config(choice: &ToolChoice) -> ToolConfig {
    let (mode, allowed_function_names) = match choice {
        ToolChoice::Auto => ("AUTO", None),
        ToolChoice::None => ("NONE", None),
        ToolChoice::Required => ("ANY", None),
        ToolChoice::Tool(name) => ("ANY", Some(vec![name.clone()])),
    };
    ToolConfig {
        function_calling_config: FunctionCallingConfig {
            mode,
            allowed_function_names,
        },
    }
}

/// `toolConfig` for `tools` (not empty): the choice's, but `VALIDATED` (arguments checked
/// against the strict schemas) when a tool is sent strict and the choice is not `none` or
/// `required`; none without a choice or strict tool.
pub fn tool_config_for(
    tools: &[Tool],
    choice: Option<&ToolChoice>,
    strict_mode: bool,
) -> Option<ToolConfig> {
    if matches!(choice, Some(ToolChoice::None | ToolChoice::Required)) {
        return choice.map(tool_config);
    }
    let strict = tools
        .iter()
        .any(|t| crate::constrained_sampling::strict_or_none(t, strict_mode, None) == Some(true));
    if strict {
        return Some(ToolConfig {
            function_calling_config: FunctionCallingConfig {
                mode: "VALIDATED",
                allowed_function_names: None,
            },
        });
    }
    choice.map(tool_config)
}

/// `thinkingConfig` for thinking turned off (pi-ai 1.6's `getDisabledGoogleThinkingConfig`):
/// a model that takes a thinking level and cannot turn thinking off gets its lowest level
/// (Gemini 3 Pro and Gemini 4 `LOW`, Gemini 3 Flash and Gemma 4 `MINIMAL`); others a zero
/// budget.
pub fn disabled_thinking_config(model: &Model) -> ThinkingConfig {
    let lowest = crate::models::clamp_thinking_level(model, ThinkingLevel::Off);
    if uses_thinking_level(&model.id) && lowest != ThinkingLevel::Off {
        return ThinkingConfig {
            thinking_level: Some(mapped_thinking_level(model, lowest)),
            ..ThinkingConfig::default()
        };
    }
    ThinkingConfig {
        thinking_budget: Some(0),
        ..ThinkingConfig::default()
    }
}

static LEVEL_GEMINI: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"gemini-3(?:\.\d+)?-(?:pro|flash)|gemini-(?:[4-9]|[1-9]\d)").ok());

/// Whether a model takes a thinking level rather than a token budget (pi-ai 1.6's
/// `usesGoogleThinkingLevel`): Gemini 3 Pro and Flash, Gemini 4 and later, the Flash
/// `-latest` aliases and Gemma 4.
pub fn uses_thinking_level(model_id: &str) -> bool {
    let id = model_id.to_ascii_lowercase();
    matches(&LEVEL_GEMINI, &id)
        || id == "gemini-flash-latest"
        || id == "gemini-flash-lite-latest"
        || id.contains("gemma-4")
        || id.contains("gemma4")
}

/// Google's thinking level for a (clamped) level: the model's `thinkingLevelMap` value when
/// it maps one, else the level itself (pi-ai 1.6's `resolveGoogleThinkingLevel`); levels
/// above `high` are `HIGH`.
pub fn mapped_thinking_level(model: &Model, level: ThinkingLevel) -> &'static str {
    let name = match model.thinking_level_value(level) {
        Some(Some(value)) => value.to_ascii_lowercase(),
        _ => level.as_str().to_owned(),
    };
    match name.as_str() {
        "minimal" => "MINIMAL",
        "low" => "LOW",
        "medium" => "MEDIUM",
        _ => "HIGH",
    }
}

/// `thinkingConfig` for enabled thinking: thoughts included, with a level or a budget.
pub fn enabled_thinking_config(thinking: &GoogleThinking) -> ThinkingConfig {
    ThinkingConfig {
        include_thoughts: Some(true),
        thinking_level: thinking.level,
        thinking_budget: thinking
            .level
            .is_none()
            .then_some(thinking.budget_tokens)
            .flatten(),
    }
}

/// The Gemini 3 / Gemma 4 thinking level for a (clamped, non-`xhigh`) effort.
pub fn thinking_level(model_id: &str, effort: ThinkingLevel, gemma: bool) -> &'static str {
    let low_or_high = |low: &'static str| match effort {
        ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low => low,
        _ => "HIGH",
    };
    if is_gemini3_pro(model_id) {
        return low_or_high("LOW");
    }
    if gemma && is_gemma4(model_id) {
        return low_or_high("MINIMAL");
    }
    match effort {
        ThinkingLevel::Off | ThinkingLevel::Minimal => "MINIMAL",
        ThinkingLevel::Low => "LOW",
        ThinkingLevel::Medium => "MEDIUM",
        ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => "HIGH",
    }
}

/// The Gemini 2.x thinking budget for an effort: the caller's, else per model family,
/// else `-1` (dynamic). `flash_lite` distinguishes 2.5 Flash-Lite (the Gemini API table).
pub fn thinking_budget(
    model_id: &str,
    effort: ThinkingLevel,
    custom: Option<&ThinkingBudgets>,
    flash_lite: bool,
) -> i64 {
    let effort = effort.clamp_to_high();
    let custom = custom.and_then(|b| match effort {
        ThinkingLevel::Minimal => b.minimal,
        ThinkingLevel::Low => b.low,
        ThinkingLevel::Medium => b.medium,
        ThinkingLevel::High => b.high,
        _ => None,
    });
    if let Some(budget) = custom {
        return i64::try_from(budget).unwrap_or(i64::MAX);
    }
    let table: [i64; 4] = if model_id.contains("2.5-pro") {
        [128, 2048, 8192, 32768]
    } else if flash_lite && model_id.contains("2.5-flash-lite") {
        [512, 2048, 8192, 24576]
    } else if model_id.contains("2.5-flash") {
        [128, 2048, 8192, 24576]
    } else {
        return -1;
    };
    match effort {
        ThinkingLevel::Minimal | ThinkingLevel::Off => table[0],
        ThinkingLevel::Low => table[1],
        ThinkingLevel::Medium => table[2],
        _ => table[3],
    }
}

/// The `generationConfig` of a request (`None` when nothing is set).
pub fn generation_config(
    model: &Model,
    temperature: Option<f64>,
    max_tokens: Option<u64>,
    thinking: Option<&GoogleThinking>,
    disabled_config: bool,
) -> Option<GenerationConfig> {
    let mut config = GenerationConfig {
        temperature,
        max_output_tokens: max_tokens,
        thinking_config: None,
    };
    if model.reasoning {
        match thinking {
            Some(t) if t.enabled => config.thinking_config = Some(enabled_thinking_config(t)),
            Some(_) if disabled_config => {
                config.thinking_config = Some(disabled_thinking_config(model));
            }
            _ => {}
        }
    }
    (!config.is_empty()).then_some(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_families() {
        assert!(is_gemini3_pro("gemini-3-pro-preview"));
        assert!(is_gemini3_pro("gemini-3.1-pro-preview"));
        assert!(is_gemini3_pro("models/Gemini-3.1-Pro"));
        assert!(!is_gemini3_pro("gemini-3-flash-preview"));
        assert!(!is_gemini3_pro("gemini-3.-pro"));
        assert!(is_gemini3_flash("gemini-3.1-flash-lite-preview"));
        assert!(!is_gemini3_flash("gemini-2.5-flash"));
        assert!(is_gemma4("gemma-4-31b-it"));
        assert_eq!(gemini_major_version("gemini-live-2.5-flash"), Some(2));
        assert_eq!(gemini_major_version("gemini-3-pro"), Some(3));
        assert!(supports_multimodal_function_response("claude-sonnet-4"));
        assert!(!supports_multimodal_function_response("gemini-2.5-pro"));
    }

    #[test]
    fn signatures_must_be_base64() {
        assert!(is_valid_thought_signature("c2lnLTEyMw=="));
        assert!(is_valid_thought_signature(
            "AY89a18iOcFus5wr5bW5xN6zZ4aUiCyhgmg6HE2YjtYDV/dwZ5oZlZHeTmiUKv34qq0="
        ));
        assert!(!is_valid_thought_signature("sig-123"));
        assert!(!is_valid_thought_signature("abc"));
        assert!(!is_valid_thought_signature(""));
        assert!(!is_valid_thought_signature("===="));
    }

    #[test]
    fn budgets_and_levels() {
        assert_eq!(
            thinking_budget("gemini-2.5-pro", ThinkingLevel::High, None, true),
            32768
        );
        assert_eq!(
            thinking_budget("gemini-2.5-flash-lite", ThinkingLevel::Minimal, None, true),
            512
        );
        assert_eq!(
            thinking_budget("gemini-2.5-flash-lite", ThinkingLevel::Minimal, None, false),
            128
        );
        assert_eq!(
            thinking_budget("gemini-2.0-flash", ThinkingLevel::Low, None, true),
            -1
        );
        let custom = ThinkingBudgets {
            low: Some(999),
            ..Default::default()
        };
        assert_eq!(
            thinking_budget("x", ThinkingLevel::Low, Some(&custom), true),
            999
        );
        assert_eq!(
            thinking_level("gemini-3-pro-preview", ThinkingLevel::Medium, true),
            "HIGH"
        );
        assert_eq!(
            thinking_level("gemini-3-flash-preview", ThinkingLevel::Medium, true),
            "MEDIUM"
        );
        assert_eq!(
            thinking_level("gemma-4-31b-it", ThinkingLevel::Low, true),
            "MINIMAL"
        );
        assert_eq!(
            thinking_level("gemma-4-31b-it", ThinkingLevel::Low, false),
            "LOW"
        );
        let model = |id: &str| crate::models::get_model("google", id).unwrap();
        assert_eq!(
            disabled_thinking_config(&model("gemini-2.5-flash")).thinking_budget,
            Some(0)
        );
        // Off is the lowest level each model maps (pi-ai 1.6): Pro and Gemini 4 cannot go
        // below `low`, Flash and Gemma 4 below `minimal`.
        for (id, level) in [
            ("gemini-3.1-pro-preview", "LOW"),
            ("gemini-4-argon", "LOW"),
            ("gemini-3-flash-preview", "MINIMAL"),
            ("gemma-4-31b-it", "MINIMAL"),
        ] {
            assert_eq!(
                disabled_thinking_config(&model(id)).thinking_level,
                Some(level),
                "{id}"
            );
        }
        assert!(uses_thinking_level("gemini-4-argon"));
        assert!(uses_thinking_level("gemini-flash-latest"));
        assert!(!uses_thinking_level("gemini-2.5-pro"));
        assert_eq!(
            mapped_thinking_level(&model("gemini-3.1-pro-preview"), ThinkingLevel::Medium),
            "MEDIUM"
        );
    }
}
