//! Decoding ConverseStream events (`messageStart`, `contentBlockStart/Delta/Stop`,
//! `messageStop`, `metadata`) and exceptions into message updates.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Map;

use super::eventstream::Message;
use crate::assembler::Assembler;
use crate::http::bedrock_exception_prefix as exception_prefix;
use crate::models::calculate_cost;
use crate::sse::parse_json;
use crate::types::{AssistantBlock, Model, StopReason, ThinkingContent};

#[derive(Deserialize)]
struct MessageStartEvent {
    #[serde(default)]
    role: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContentBlockStartEvent {
    #[serde(default)]
    content_block_index: u64,
    #[serde(default)]
    start: Option<BlockStart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStart {
    #[serde(default)]
    tool_use: Option<ToolUseStart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolUseStart {
    #[serde(default)]
    tool_use_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContentBlockDeltaEvent<'a> {
    #[serde(default)]
    content_block_index: u64,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Delta<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool_use: Option<ToolUseDelta<'a>>,
    #[serde(default, borrow)]
    reasoning_content: Option<ReasoningDelta<'a>>,
}

#[derive(Deserialize)]
struct ToolUseDelta<'a> {
    #[serde(default, borrow)]
    input: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReasoningDelta<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    signature: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    redacted_content: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContentBlockStopEvent {
    #[serde(default)]
    content_block_index: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageStopEvent {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct MetadataEvent {
    #[serde(default)]
    usage: Option<TokenUsage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_write_input_tokens: Option<u64>,
    /// The cache writes split by TTL (`5m`, `1h`).
    #[serde(default)]
    cache_details: Option<Vec<CacheDetail>>,
}

/// One TTL's share of a response's cache writes.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CacheDetail {
    #[serde(default)]
    ttl: Option<String>,
    #[serde(default)]
    input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct ExceptionBody {
    #[serde(default)]
    message: Option<String>,
    #[serde(default, rename = "Message")]
    message_upper: Option<String>,
}

/// Maps Bedrock's stop reason; unknown ones (guardrails, content filters) are errors.
pub fn map_stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        Some("end_turn" | "stop_sequence") => StopReason::Stop,
        Some("max_tokens" | "model_context_window_exceeded") => StopReason::Length,
        Some("tool_use") => StopReason::ToolUse,
        _ => StopReason::Error,
    }
}

/// The SDK's message of an exception body: `message`, else `Message`, else `UnknownError`.
pub fn exception_message(body: &[u8]) -> String {
    serde_json::from_slice::<ExceptionBody>(body)
        .ok()
        .and_then(|b| b.message.or(b.message_upper))
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "UnknownError".to_owned())
}

/// The AWS page pi-ai 1.6 names when Bedrock refuses a data retention mode.
pub const DATA_RETENTION_DOCS_URL: &str =
    "https://docs.aws.amazon.com/bedrock/latest/userguide/data-retention.html";

/// Adds pi-ai 1.6's pointer to the AWS data retention documentation to a failed message
/// whose error mentions a "data retention mode" (any case), as its Bedrock errors do.
pub fn add_data_retention_hint(event: &mut crate::types::AssistantMessageEvent) {
    let crate::types::AssistantMessageEvent::Error { error, .. } = event else {
        return;
    };
    let mentions = error
        .error_message
        .as_deref()
        .is_some_and(|m| m.to_lowercase().contains("data retention mode"));
    if mentions {
        let message = std::sync::Arc::make_mut(error);
        if let Some(text) = message.error_message.as_mut() {
            text.push_str(&format!(
                " See {DATA_RETENTION_DOCS_URL} for supported data retention modes."
            ));
        }
    }
}

/// The error text of an in-stream exception message, as the TypeScript pi words it.
fn exception_text(kind: &str, payload: &[u8]) -> String {
    let modeled = match kind {
        "internalServerException" => "InternalServerException",
        "modelStreamErrorException" => "ModelStreamErrorException",
        "validationException" => "ValidationException",
        "throttlingException" => "ThrottlingException",
        "serviceUnavailableException" => "ServiceUnavailableException",
        // An exception the SDK does not model: a plain error with the raw body.
        _ => return String::from_utf8_lossy(payload).into_owned(),
    };
    format!(
        "{}: {}",
        exception_prefix(modeled),
        exception_message(payload)
    )
}

/// Per-stream decoding state.
pub struct Decoder {
    model: Model,
    /// Bedrock content block index → our content index, while the block is open.
    blocks: HashMap<u64, usize>,
    /// Whether `messageStop` came (pi-ai 1.6 fails a stream that ends without one).
    saw_stop: bool,
}

impl Decoder {
    /// A decoder for `model`.
    pub fn new(model: Model) -> Self {
        Self {
            model,
            blocks: HashMap::new(),
            saw_stop: false,
        }
    }

    /// Applies one event-stream message; an `Err` ends the stream with that text.
    pub fn on_message(&mut self, message: &Message, asm: &mut Assembler) -> Result<(), String> {
        match message.header_str(":message-type").unwrap_or("event") {
            "exception" => {
                let kind = message.header_str(":exception-type").unwrap_or("");
                return Err(exception_text(kind, &message.payload));
            }
            "error" => {
                return Err(message
                    .header_str(":error-message")
                    .filter(|m| !m.is_empty())
                    .unwrap_or("UnknownError")
                    .to_owned());
            }
            "event" => {}
            _ => return Ok(()),
        }
        let Some(kind) = message.header_str(":event-type") else {
            return Ok(());
        };
        if !matches!(
            kind,
            "messageStart"
                | "contentBlockStart"
                | "contentBlockDelta"
                | "contentBlockStop"
                | "messageStop"
                | "metadata"
        ) {
            return Ok(());
        }
        let data = std::str::from_utf8(&message.payload)
            .map_err(|_| format!("Bedrock {kind} event payload is not UTF-8"))?;
        match kind {
            "messageStart" => {
                let event: MessageStartEvent = parse_json(data)?;
                if event.role.as_deref() != Some("assistant") {
                    return Err(
                        "Unexpected assistant message start but got user message start instead"
                            .to_owned(),
                    );
                }
            }
            "contentBlockStart" => {
                let event: ContentBlockStartEvent = parse_json(data)?;
                if let Some(tool) = event.start.and_then(|s| s.tool_use) {
                    let index = asm.begin_tool_call(
                        tool.tool_use_id.as_deref().unwrap_or(""),
                        tool.name.as_deref().unwrap_or(""),
                        Map::new(),
                    );
                    self.blocks.insert(event.content_block_index, index);
                }
            }
            "contentBlockDelta" => {
                let event: ContentBlockDeltaEvent = parse_json(data)?;
                if let Some(delta) = event.delta {
                    self.on_delta(event.content_block_index, delta, asm);
                }
            }
            "contentBlockStop" => {
                let event: ContentBlockStopEvent = parse_json(data)?;
                if let Some(index) = self.blocks.remove(&event.content_block_index) {
                    asm.end_block(index);
                }
            }
            "messageStop" => {
                let event: MessageStopEvent = parse_json(data)?;
                self.saw_stop = true;
                let m = asm.message_mut();
                m.stop_reason = map_stop_reason(event.stop_reason.as_deref());
                if m.stop_reason == StopReason::Error
                    && let Some(reason) = &event.stop_reason
                {
                    m.error_message = Some(format!("Provider stopped with: {reason}"));
                }
                m.raw_stop_reason = event.stop_reason;
            }
            _ => {
                let event: MetadataEvent = parse_json(data)?;
                if let Some(usage) = event.usage {
                    let model = &self.model;
                    let u = &mut asm.message_mut().usage;
                    u.input = usage.input_tokens.unwrap_or(0);
                    u.output = usage.output_tokens.unwrap_or(0);
                    u.cache_read = usage.cache_read_input_tokens.unwrap_or(0);
                    u.cache_write = usage.cache_write_input_tokens.unwrap_or(0);
                    // One-hour writes are priced apart from five-minute ones (pi-ai 1.6).
                    u.cache_write_1h = usage.cache_details.map(|details| {
                        details
                            .iter()
                            .filter(|d| d.ttl.as_deref() == Some("1h"))
                            .map(|d| d.input_tokens.unwrap_or(0))
                            .sum()
                    });
                    u.total_tokens = usage
                        .total_tokens
                        .filter(|t| *t > 0)
                        .unwrap_or(u.input.saturating_add(u.output));
                    calculate_cost(model, u);
                }
            }
        }
        Ok(())
    }

    fn on_delta(&mut self, bedrock_index: u64, delta: Delta<'_>, asm: &mut Assembler) {
        let open = self.blocks.get(&bedrock_index).copied();
        let kind = |asm: &Assembler, index: usize| match asm.message().content.get(index) {
            Some(AssistantBlock::Text(_)) => "text",
            Some(AssistantBlock::Thinking(_)) => "thinking",
            Some(AssistantBlock::ToolCall(_)) => "toolCall",
            None => "",
        };
        if let Some(text) = delta.text {
            // Text blocks have no contentBlockStart: the first delta opens one.
            let index = match open {
                Some(index) => index,
                None => {
                    let index = asm.begin_text();
                    self.blocks.insert(bedrock_index, index);
                    index
                }
            };
            if kind(asm, index) == "text" {
                asm.push_text(index, &text);
            }
        } else if let Some(tool) = delta.tool_use {
            if let Some(index) = open.filter(|i| kind(asm, *i) == "toolCall") {
                asm.push_tool_args(index, tool.input.as_deref().unwrap_or(""));
            }
        } else if let Some(reasoning) = delta.reasoning_content {
            let index = match open {
                Some(index) => index,
                None => {
                    let mut thinking = ThinkingContent::new("");
                    thinking.thinking_signature = Some(String::new());
                    let index = asm.begin_thinking(thinking);
                    self.blocks.insert(bedrock_index, index);
                    index
                }
            };
            if kind(asm, index) != "thinking" {
                return;
            }
            if let Some(text) = reasoning.text.filter(|t| !t.is_empty()) {
                asm.push_thinking(index, &text);
            }
            if let Some(signature) = reasoning.signature.filter(|s| !s.is_empty()) {
                asm.push_signature(index, &signature);
            }
            if let Some(data) = reasoning.redacted_content.filter(|d| !d.is_empty())
                && let Some(AssistantBlock::Thinking(block)) =
                    asm.message_mut().content.get_mut(index)
            {
                // Encrypted reasoning: kept (in the signature) so it can be sent back.
                block.redacted = Some(true);
                block
                    .thinking_signature
                    .get_or_insert_with(String::new)
                    .push_str(&data);
            }
        }
    }

    /// Called once when the body ends: a failed stop reason becomes the TypeScript pi's
    /// generic error.
    pub fn finish(&mut self, asm: &mut Assembler) -> Result<(), String> {
        if !self.saw_stop {
            return Err("Bedrock stream ended without a stop reason".to_owned());
        }
        if asm.message().stop_reason.is_failure() {
            let message = asm.message().error_message.clone();
            return Err(message.unwrap_or_else(|| "An unknown error occurred".to_owned()));
        }
        Ok(())
    }
}
