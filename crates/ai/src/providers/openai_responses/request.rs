//! The Responses request shared by the three APIs: input items converted from the
//! conversation (messages, reasoning items, function calls and their outputs), tools and the
//! reasoning setting.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

use crate::providers::body_text::{BodyText, data_url, joined};
use crate::transcript::{Placed, Transcript};
use crate::transform::transform_messages;
use crate::types::{
    AssistantBlock, AssistantMessage, Context, InputBlock, Message, Model, SharedStr,
    SystemMessage, ThinkingLevel, Tool, UserContent,
};

/// The effort a request asks for when its own comes by configuration update, so that a
/// change of level keeps the prompt cache (pi-ai 1.3).
pub const CONFIGURATION_UPDATE_REQUEST_EFFORT: &str = "medium";

/// The effort sent as a configuration update (`compat.supportsMidConvoEffort`): the
/// chosen level's value, or `None` when the model has none or no level is chosen. `Off`
/// counts as a level only where it is sent (Codex: `none`, or the model's value for it).
pub fn configuration_effort(
    model: &Model,
    level: Option<ThinkingLevel>,
    off_is_sent: bool,
) -> Option<String> {
    let supported = model
        .compat
        .as_ref()
        .and_then(|c| c.supports_mid_convo_effort)
        .unwrap_or(false);
    match level? {
        _ if !supported => None,
        ThinkingLevel::Off if !off_is_sent => None,
        ThinkingLevel::Off => match model.thinking_level_value(ThinkingLevel::Off) {
            Some(Some(off)) => Some(off.to_owned()),
            Some(None) => None,
            None => Some("none".to_owned()),
        },
        level => Some(effort_value(model, level)),
    }
}

/// Providers whose `call_id|item_id` tool-call ids the OpenAI and Codex APIs keep as pairs.
pub const OPENAI_TOOL_CALL_PROVIDERS: &[&str] = &["openai", "openai-codex", "opencode"];
/// The same for Azure, which also accepts its own ids (`azure-openai-responses` is its name
/// before pi 1.6, in older sessions).
pub const AZURE_TOOL_CALL_PROVIDERS: &[&str] = &[
    "openai",
    "openai-codex",
    "opencode",
    "azure",
    "azure-openai-responses",
];

const MAX_ID_LENGTH: usize = 64;
const IMAGE_ONLY_TOOL_RESULT: &str = "(see attached image)";
/// pi-ai 1.6: what a tool result with neither text nor images says.
const NO_TOOL_OUTPUT: &str = "(no tool output)";

/// One part of user (or tool-output) content.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputPart<'a> {
    InputText {
        text: BodyText<'a>,
    },
    InputImage {
        detail: &'static str,
        image_url: BodyText<'a>,
    },
}

/// Content of a role message: a string (system/developer) or parts (user).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum RoleContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<InputPart<'a>>),
}

/// A `{role, content}` message.
#[derive(Debug, Serialize)]
pub struct RoleMessage<'a> {
    pub role: &'static str,
    pub content: RoleContent<'a>,
}

/// An `output_text` part of an assistant message.
#[derive(Debug, Serialize)]
pub struct OutputText<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: BodyText<'a>,
    pub annotations: [(); 0],
}

/// An earlier assistant message, replayed as an output item.
#[derive(Debug, Serialize)]
pub struct OutputMessage<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub role: &'static str,
    pub content: [OutputText<'a>; 1],
    pub status: &'static str,
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// An earlier function call.
#[derive(Debug, Serialize)]
pub struct FunctionCall<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    pub call_id: &'a str,
    pub name: &'a str,
    pub arguments: String,
}

/// A tool result: text, or parts when it carries images.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ToolOutput<'a> {
    Text(BodyText<'a>),
    Parts(Vec<InputPart<'a>>),
}

/// The result of a function call.
#[derive(Debug, Serialize)]
pub struct FunctionCallOutput<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub call_id: &'a str,
    pub output: ToolOutput<'a>,
}

/// One entry of the request's `input`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum InputItem<'a> {
    Role(RoleMessage<'a>),
    Message(OutputMessage<'a>),
    /// A reasoning item exactly as the API returned it (with its `encrypted_content`).
    Reasoning(Value),
    /// `{type: "configuration_update", reasoning: {effort}}`: the effort of what follows
    /// (`compat.supportsMidConvoEffort`).
    ConfigurationUpdate(Value),
    FunctionCall(FunctionCall<'a>),
    FunctionCallOutput(FunctionCallOutput<'a>),
}

/// A function tool.
#[derive(Debug, Serialize)]
pub struct ToolParam<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: &'a str,
    pub description: &'a str,
    pub parameters: Cow<'a, Value>,
    /// Absent where strict mode is unsupported (pi-ai 1.6: OpenAI-compatible servers unless
    /// `compat.supportsStrictMode`), else `false` (OpenAI, Azure) or `null` (Codex);
    /// `true` sends a strict-mode schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<Option<bool>>,
}

/// The `reasoning` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reasoning {
    pub effort: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// The OpenAI and Azure request body, keys in the order pi sends them.
#[derive(Debug, Serialize)]
pub struct Body<'a> {
    pub model: &'a str,
    pub input: Vec<InputItem<'a>>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_retention: Option<&'static str>,
    /// Explicit prompt caching (`compat.supportsExplicitPromptCacheMode`, GPT-5.6+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_options: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolParam<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include: Option<[&'static str; 1]>,
}

/// A `toolChoice` as the Responses APIs take it (pi-ai 0.80.7): `auto`, `none`,
/// `required`, or one named function.
pub fn tool_choice(choice: &crate::types::ToolChoice) -> serde_json::Value {
    use crate::types::ToolChoice;
    match choice {
        ToolChoice::Auto => "auto".into(),
        ToolChoice::None => "none".into(),
        ToolChoice::Required => "required".into(),
        ToolChoice::Tool(name) => serde_json::json!({"type": "function", "name": name}),
    }
}

/// The smallest `max_output_tokens` OpenAI accepts (pi-ai's
/// `OPENAI_RESPONSES_MIN_OUTPUT_TOKENS`): a smaller cap is raised to it.
pub const MIN_OUTPUT_TOKENS: u64 = 16;

/// The `include` value that returns reasoning as `encrypted_content`.
pub const INCLUDE_ENCRYPTED_REASONING: [&str; 1] = ["reasoning.encrypted_content"];

/// pi's `shortHash`: two 32-bit lanes over UTF-16 code units, printed as base-36 numbers.
pub fn short_hash(text: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for unit in text.encode_utf16() {
        let ch = u32::from(unit);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    let mut out = base36(h2);
    out.push_str(&base36(h1));
    out
}

fn base36(mut value: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut digits = Vec::with_capacity(7);
    loop {
        digits.push(DIGITS[(value % 36) as usize]);
        value /= 36;
        if value == 0 {
            break;
        }
    }
    digits.iter().rev().map(|&b| char::from(b)).collect()
}

/// An id part the API accepts: `[a-zA-Z0-9_-]` (others become `_`, one per UTF-16 unit), at
/// most 64 characters, no trailing underscores.
fn normalize_id_part(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    for c in part.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('_');
            }
        }
    }
    out.truncate(MAX_ID_LENGTH);
    let trimmed = out.trim_end_matches('_').len();
    out.truncate(trimmed);
    out
}

/// Rewrites a tool-call id from another model: `call|item` pairs stay pairs for providers
/// that keep them (the item id starting with `fc_`, hashed when it came from another API),
/// everything else becomes one sanitized id.
pub fn normalize_tool_call_id(id: &str, keeps_pairs: bool, foreign: bool) -> String {
    if !keeps_pairs || !id.contains('|') {
        return normalize_id_part(id);
    }
    let mut parts = id.split('|');
    let call_id = normalize_id_part(parts.next().unwrap_or(""));
    let item_id = parts.next().unwrap_or("");
    let mut item_id = if foreign {
        let mut hashed = format!("fc_{}", short_hash(item_id));
        hashed.truncate(MAX_ID_LENGTH);
        hashed
    } else {
        normalize_id_part(item_id)
    };
    if !item_id.starts_with("fc_") {
        item_id = normalize_id_part(&format!("fc_{item_id}"));
    }
    format!("{call_id}|{item_id}")
}

/// The conversation as this model should receive it (ids normalized, orphans answered).
fn prepare(
    model: &Model,
    context: &Context,
    frame: Option<&mut Context>,
    allowed: &[&str],
) -> Vec<Message> {
    // The normalizer sees only the id; the ids of calls from another provider or API are
    // collected first, since their item ids are hashed rather than kept.
    let foreign: HashSet<&str> = context
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) if a.provider != model.provider || a.api != model.api => Some(a),
            _ => None,
        })
        .flat_map(|a| a.tool_calls().map(|c| c.id.as_str()))
        .collect();
    let keeps_pairs = allowed.contains(&model.provider.as_str());
    let normalize = |id: &str| normalize_tool_call_id(id, keeps_pairs, foreign.contains(id));
    match frame {
        Some(frame) => {
            crate::transcript::transform_placing(model, context, frame, Some(&normalize))
        }
        None => transform_messages(&context.messages, model, Some(&normalize)),
    }
}

/// The conversation for this API (see [`prepare_placing`]).
pub fn prepare_messages(model: &Model, context: &Context, allowed: &[&str]) -> Vec<Message> {
    prepare(model, context, None, allowed)
}

/// [`prepare_messages`], with `frame`'s system messages placed in the result (kept only
/// for a model with mid-conversation system messages).
pub fn prepare_placing(
    model: &Model,
    context: &Context,
    frame: &mut Context,
    allowed: &[&str],
) -> Vec<Message> {
    prepare(model, context, Some(frame), allowed)
}

fn image_part<'a>(mime: &str, data: &SharedStr) -> InputPart<'a> {
    InputPart::InputImage {
        detail: "auto",
        image_url: data_url(mime, data),
    }
}

fn input_part(block: &InputBlock) -> InputPart<'_> {
    match block {
        InputBlock::Text(t) => InputPart::InputText {
            text: (&t.text).into(),
        },
        InputBlock::Image(i) => image_part(&i.mime_type, &i.data),
    }
}

/// The id (and phase) stored in a text block's signature: `{"v":1,"id":…,"phase":…}` or a
/// legacy plain id.
fn parse_text_signature(signature: Option<&str>) -> Option<(String, Option<String>)> {
    let signature = signature.filter(|s| !s.is_empty())?;
    if signature.starts_with('{')
        && let Ok(Value::Object(parsed)) = serde_json::from_str::<Value>(signature)
        && parsed.get("v").and_then(Value::as_f64) == Some(1.0)
        && let Some(Value::String(id)) = parsed.get("id")
    {
        let phase = match parsed.get("phase").and_then(Value::as_str) {
            Some(p @ ("commentary" | "final_answer")) => Some(p.to_owned()),
            _ => None,
        };
        return Some((id.clone(), phase));
    }
    Some((signature.to_owned(), None))
}

fn convert_assistant<'a>(
    model: &Model,
    assistant: &'a AssistantMessage,
    msg_index: usize,
    out: &mut Vec<InputItem<'a>>,
) {
    let different_model = assistant.model != model.id
        && assistant.provider == model.provider
        && assistant.api == model.api;
    let mut text_blocks = 0usize;
    for block in &assistant.content {
        match block {
            AssistantBlock::Thinking(thinking) => {
                // The signature is the whole reasoning item; replaying it keeps the model's
                // encrypted reasoning across turns.
                if let Some(signature) = thinking
                    .thinking_signature
                    .as_deref()
                    .filter(|s| !s.is_empty())
                    && let Ok(item) = serde_json::from_str::<Value>(signature)
                {
                    out.push(InputItem::Reasoning(item));
                }
            }
            AssistantBlock::Text(text) => {
                let parsed = parse_text_signature(text.text_signature.as_deref());
                // A text without its own item id (another provider's, say) gets one unique
                // within the request: `msg_pi_<message>`, then `msg_pi_<message>_<block>` for
                // later texts of the same message (pi-ai 1.6).
                let fallback = match text_blocks {
                    0 => format!("msg_pi_{msg_index}"),
                    n => format!("msg_pi_{msg_index}_{n}"),
                };
                text_blocks += 1;
                let (id, phase) = match parsed {
                    Some((id, phase)) if !id.is_empty() => (id, phase),
                    Some((_, phase)) => (fallback, phase),
                    None => (fallback, None),
                };
                let id = if id.encode_utf16().count() > MAX_ID_LENGTH {
                    format!("msg_{}", short_hash(&id))
                } else {
                    id
                };
                out.push(InputItem::Message(OutputMessage {
                    kind: "message",
                    role: "assistant",
                    content: [OutputText {
                        kind: "output_text",
                        text: (&text.text).into(),
                        annotations: [],
                    }],
                    status: "completed",
                    id,
                    phase,
                }));
            }
            AssistantBlock::ToolCall(call) => {
                let mut parts = call.id.split('|');
                let call_id = parts.next().unwrap_or("");
                // A call from another model of this provider: its `fc_` item id was paired
                // with that model's reasoning item, so it is left out.
                let item_id = parts
                    .next()
                    .filter(|item| !(different_model && item.starts_with("fc_")));
                out.push(InputItem::FunctionCall(FunctionCall {
                    kind: "function_call",
                    id: item_id,
                    call_id,
                    name: &call.name,
                    arguments: serde_json::to_string(&call.arguments)
                        .unwrap_or_else(|_| "{}".into()),
                }));
            }
        }
    }
}

fn convert_tool_result<'a>(
    model: &Model,
    result: &'a crate::types::ToolResultMessage,
) -> InputItem<'a> {
    let texts: Vec<&SharedStr> = result
        .content
        .iter()
        .filter_map(|b| match b {
            InputBlock::Text(t) => Some(&t.text),
            InputBlock::Image(_) => None,
        })
        .collect();
    let has_text = texts.iter().any(|t| !t.as_str().trim().is_empty());
    let text = joined(&texts, "\n");
    let has_images = result
        .content
        .iter()
        .any(|b| matches!(b, InputBlock::Image(_)));
    let output = if has_images && model.supports_images() {
        let mut parts = Vec::with_capacity(result.content.len() + 1);
        if has_text {
            parts.push(InputPart::InputText { text });
        }
        for block in &result.content {
            if let InputBlock::Image(image) = block {
                parts.push(image_part(&image.mime_type, &image.data));
            }
        }
        ToolOutput::Parts(parts)
    } else if has_text {
        ToolOutput::Text(text)
    } else if has_images {
        ToolOutput::Text(IMAGE_ONLY_TOOL_RESULT.into())
    } else {
        ToolOutput::Text(NO_TOOL_OUTPUT.into())
    };
    InputItem::FunctionCallOutput(FunctionCallOutput {
        kind: "function_call_output",
        call_id: result.tool_call_id.split('|').next().unwrap_or(""),
        output,
    })
}

/// Converts the (prepared) conversation to `input` items; the system prompt becomes a
/// `developer` (reasoning models, unless `compat.supportsDeveloperRole` is false) or
/// `system` message first when given.
pub fn convert_messages<'a>(
    model: &Model,
    system_prompt: Option<&'a str>,
    messages: &'a [Message],
) -> Vec<InputItem<'a>> {
    convert_input(
        model,
        system_prompt.map(Cow::Borrowed),
        None,
        messages,
        None,
    )
}

/// The input of a request for `context`'s frame (from [`prepare_placing`]): with
/// mid-conversation system messages the leading prompt is the transcript's first one and
/// each later one goes where it stands; with `configuration_effort` (mid-conversation
/// effort) each earlier reply of this model that kept its effort is preceded by a
/// configuration update, and the input ends with one for this request's.
pub fn convert_context<'a>(
    model: &Model,
    context: &'a Context,
    messages: &'a [Message],
    configuration_effort: Option<&str>,
) -> Vec<InputItem<'a>> {
    let transcript = Transcript::of(model, context);
    let leading = match &transcript {
        Some(transcript) => transcript.leading_prompt().map(Cow::Owned),
        None => context.system_prompt.as_deref().map(Cow::Borrowed),
    };
    let updates = transcript.map(|t| Placed::new(t.updates, t.update_positions()));
    convert_input(model, leading, updates, messages, configuration_effort)
}

fn configuration_update<'a>(effort: &str) -> InputItem<'a> {
    InputItem::ConfigurationUpdate(serde_json::json!({
        "type": "configuration_update",
        "reasoning": {"effort": effort},
    }))
}

fn convert_input<'a>(
    model: &Model,
    system_prompt: Option<Cow<'a, str>>,
    mut updates: Option<Placed<'_>>,
    messages: &'a [Message],
    configuration_effort: Option<&str>,
) -> Vec<InputItem<'a>> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    let developer_role = model.reasoning
        && model
            .compat
            .as_ref()
            .and_then(|c| c.supports_developer_role)
            != Some(false);
    let instruction = |content: Cow<'a, str>| {
        InputItem::Role(RoleMessage {
            role: if developer_role {
                "developer"
            } else {
                "system"
            },
            content: RoleContent::Text(content),
        })
    };
    if let Some(system) = system_prompt.filter(|s| !s.is_empty()) {
        out.push(instruction(system));
    }
    let mut msg_index = 0usize;
    // Each later system message counts as a message for the text item ids (pi-ai 1.6).
    let place = |out: &mut Vec<InputItem<'a>>, msg_index: &mut usize, placed: &[SystemMessage]| {
        for update in placed {
            let text = update.update_text();
            if !text.is_empty() {
                out.push(instruction(Cow::Owned(text)));
            }
            *msg_index += 1;
        }
    };
    for (index, message) in messages.iter().enumerate() {
        if let Some(updates) = updates.as_mut() {
            place(&mut out, &mut msg_index, updates.before(index));
        }
        match message {
            Message::User(user) => {
                let parts: Vec<InputPart> = match &user.content {
                    UserContent::Text(text) => vec![InputPart::InputText { text: text.into() }],
                    UserContent::Blocks(blocks) => blocks.iter().map(input_part).collect(),
                };
                if parts.is_empty() {
                    continue;
                }
                out.push(InputItem::Role(RoleMessage {
                    role: "user",
                    content: RoleContent::Parts(parts),
                }));
            }
            Message::Assistant(assistant) => {
                let before = out.len();
                convert_assistant(model, assistant, msg_index, &mut out);
                if out.len() == before {
                    continue;
                }
                let same_model = assistant.provider == model.provider
                    && assistant.api == model.api
                    && assistant.model == model.id;
                if let (Some(_), true, Some(kept)) = (
                    configuration_effort,
                    same_model,
                    assistant.provider_thinking_level.as_deref(),
                ) {
                    out.insert(before, configuration_update(kept));
                }
            }
            Message::ToolResult(result) => out.push(convert_tool_result(model, result)),
        }
        msg_index += 1;
    }
    if let Some(updates) = updates.as_mut() {
        place(&mut out, &mut msg_index, updates.rest());
    }
    if let Some(effort) = configuration_effort {
        out.push(configuration_update(effort));
    }
    out
}

/// Function tools. `strict: None` means the API has no strict mode (the field is left out);
/// `Some(default)` that it has, with `default` (`false`, or `null` for Codex) for tools that
/// do not ask for strict sampling. A tool that asks for it and fits gets `true` and its
/// schema made strict.
pub fn convert_tools(tools: &[Tool], strict: Option<Option<bool>>) -> Vec<ToolParam<'_>> {
    tools
        .iter()
        .map(|tool| {
            let constrained =
                crate::constrained_sampling::strict_or_none(tool, strict.is_some(), None);
            let chosen = constrained.or(strict.flatten());
            ToolParam {
                kind: "function",
                name: &tool.name,
                description: &tool.description,
                parameters: crate::constrained_sampling::tool_parameters(tool, chosen),
                strict: strict.map(|_| chosen),
            }
        })
        .collect()
}

/// The model's value for a level: its mapping when it has one, else the level's name.
pub fn effort_value(model: &Model, level: ThinkingLevel) -> String {
    match model.thinking_level_value(level) {
        Some(Some(mapped)) => mapped.to_owned(),
        _ => level.as_str().to_owned(),
    }
}

/// `reasoning` (and whether to include encrypted reasoning) for OpenAI and Azure: an effort
/// or summary asks for reasoning with a summary; otherwise reasoning models get the model's
/// "off" effort (`none` by default) unless the model cannot turn reasoning off.
pub fn reasoning_param(
    model: &Model,
    effort: Option<ThinkingLevel>,
    summary: Option<&str>,
    send_off_effort: bool,
) -> (Option<Reasoning>, bool) {
    if !model.reasoning {
        return (None, false);
    }
    let effort = effort.filter(|l| *l != ThinkingLevel::Off);
    let summary = summary.filter(|s| !s.is_empty());
    if effort.is_some() || summary.is_some() {
        let effort = match effort {
            Some(level) => effort_value(model, level),
            None => "medium".to_owned(),
        };
        let reasoning = Reasoning {
            effort,
            summary: Some(summary.unwrap_or("auto").to_owned()),
        };
        return (Some(reasoning), true);
    }
    if !send_off_effort {
        return (None, false);
    }
    match model.thinking_level_value(ThinkingLevel::Off) {
        Some(None) => (None, false),
        Some(Some(off)) => (
            Some(Reasoning {
                effort: off.to_owned(),
                summary: None,
            }),
            false,
        ),
        None => (
            Some(Reasoning {
                effort: "none".to_owned(),
                summary: None,
            }),
            false,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_hash_matches_the_typescript_one() {
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("a"), "m8735310ae7sx");
        assert_eq!(short_hash("call_abc123"), "sb0y391xa16ki");
    }

    #[test]
    fn id_parts_are_sanitized_cut_and_trimmed() {
        assert_eq!(normalize_id_part("call+1/x__"), "call_1_x");
        assert_eq!(normalize_id_part("a🎉b"), "a__b");
        assert_eq!(normalize_id_part(&"x".repeat(80)).len(), 64);
    }

    #[test]
    fn tool_call_ids_keep_pairs_only_where_allowed() {
        assert_eq!(
            normalize_tool_call_id("call_1|fc_2", true, false),
            "call_1|fc_2"
        );
        assert_eq!(
            normalize_tool_call_id("call_1|item+2", true, false),
            "call_1|fc_item_2"
        );
        let foreign = normalize_tool_call_id("call_1|rs_abc", true, true);
        assert_eq!(foreign, format!("call_1|fc_{}", short_hash("rs_abc")));
        assert_eq!(
            normalize_tool_call_id("call_1|fc_2", false, false),
            "call_1_fc_2"
        );
        assert_eq!(
            normalize_tool_call_id("toolu_01+x", true, true),
            "toolu_01_x"
        );
    }

    #[test]
    fn text_signatures_parse_both_forms() {
        assert_eq!(
            parse_text_signature(Some(r#"{"v":1,"id":"msg_1","phase":"final_answer"}"#)),
            Some(("msg_1".into(), Some("final_answer".into())))
        );
        assert_eq!(
            parse_text_signature(Some("msg_legacy")),
            Some(("msg_legacy".into(), None))
        );
        assert_eq!(
            parse_text_signature(Some(r#"{"v":2,"id":"x"}"#)),
            Some((r#"{"v":2,"id":"x"}"#.into(), None))
        );
        assert_eq!(parse_text_signature(None), None);
    }
}
