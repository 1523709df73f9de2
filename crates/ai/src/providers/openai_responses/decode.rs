//! Decoding the Responses SSE stream (`response.created`, `response.output_item.*`, text,
//! reasoning and function-call deltas, `response.completed`) into message updates.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value};
use sse_stream::Sse;

use crate::assembler::Assembler;
use crate::models::calculate_cost;
use crate::sse::{Flow, SseDecoder, parse_json};
use crate::types::{AssistantBlock, Model, StopReason, ThinkingContent, Usage};

/// Text of a stream that ended before its terminal event.
const INCOMPLETE_STREAM: &str = "OpenAI Responses stream ended before a terminal response event";
/// Text of a response whose final status is `failed` or `cancelled`.
const UNKNOWN_ERROR: &str = "An unknown error occurred";

/// Whose client behaviour the decoder follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// The OpenAI SDK: `data.error` fails the stream; flex/priority tiers reprice the cost.
    OpenAi,
    /// The Azure OpenAI SDK client: as OpenAI, without service-tier pricing.
    Azure,
    /// pi's Codex client: `Codex error:` texts, the first terminal event ends the stream, and
    /// a `default` tier answer to a flex/priority request is priced as requested.
    Codex,
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    delta: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
    #[serde(default)]
    item: Option<Value>,
    /// Which output item the event is about; servers such as llama.cpp leave it out
    /// (then the events go to the last item opened without one, as in pi-ai).
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    part: Option<PartInfo<'a>>,
    #[serde(default)]
    response: Option<ResponseInfo>,
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct PartInfo<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct ResponseInfo {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    status: Option<String>,
    /// The finished output items (`response.completed`).
    #[serde(default)]
    output: Option<Vec<Value>>,
    #[serde(default)]
    usage: Option<RawUsage>,
    #[serde(default)]
    service_tier: Option<String>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    incomplete_details: Option<Value>,
    /// Codex: whether the model ended its turn.
    #[serde(default)]
    end_turn: Option<Value>,
}

#[derive(Deserialize, Default)]
struct RawUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize, Default)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

/// pi-ai 1.6's raw stop reason of a Responses reply: the status, with the incomplete reason.
fn raw_status(response: Option<&ResponseInfo>) -> Option<String> {
    let response = response?;
    let status = response.status.clone()?;
    let reason = response
        .incomplete_details
        .as_ref()
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str);
    Some(match reason {
        Some(reason) => format!("{status}.{reason}"),
        None => status,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartKind {
    OutputText,
    Refusal,
}

/// An output item being streamed and its block.
#[derive(Debug)]
enum Current {
    Reasoning {
        index: usize,
        parts: usize,
    },
    Message {
        index: usize,
        part: Option<PartKind>,
    },
    Tool {
        index: usize,
        partial: String,
    },
}

/// Per-stream decoding state.
pub struct Decoder {
    model: Model,
    flavor: Flavor,
    service_tier: Option<String>,
    /// The open output items by `output_index` (items may finish out of order).
    slots: HashMap<Option<u64>, Current>,
    /// Finished reasoning blocks by item id, for `encrypted_content` that only the
    /// terminal response carries.
    reasoning_by_id: HashMap<String, usize>,
    /// Calls opened and not yet finished, in order: a response that ends wanting tools
    /// with one of them left is an error (pi-ai 1.6).
    unfinished: Vec<usize>,
    completed: bool,
    /// The effort the request asked for by configuration update, kept on the reply
    /// (`compat.supportsMidConvoEffort`); set once, on the first event.
    provider_thinking_level: Option<String>,
}

/// Whether a JSON value is truthy in JavaScript.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// A value as a JavaScript template literal prints it.
fn js_text(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(_)) => "[object Object]".to_owned(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                other => js_text(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => other.to_string(),
    }
}

/// The first truthy value's text (`a || b || …`).
fn first_truthy<'v>(values: impl IntoIterator<Item = Option<&'v Value>>) -> Option<String> {
    values
        .into_iter()
        .flatten()
        .find(|v| truthy(v))
        .map(|v| js_text(Some(v)))
}

/// The OpenAI SDK's text for an error object (`APIError` without a status).
fn sdk_error_text(error: &Value) -> String {
    match error.get("message") {
        Some(Value::String(m)) if !m.is_empty() => m.clone(),
        Some(m) if truthy(m) => m.to_string(),
        _ => error.to_string(),
    }
}

fn str_field<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// The texts of an item's `summary` or `content` parts, joined by a blank line.
fn joined_texts(item: &Value, key: &str) -> String {
    item.get(key)
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .map(|p| str_field(p, "text").unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n\n")
        })
        .unwrap_or_default()
}

fn tier_multiplier(model: &Model, tier: Option<&str>) -> f64 {
    match tier {
        Some("flex") => 0.5,
        Some("priority") if model.id == "gpt-5.5" => 2.5,
        Some("priority") => 2.0,
        _ => 1.0,
    }
}

fn map_status(status: Option<&str>) -> Result<StopReason, String> {
    match status {
        None | Some("completed" | "in_progress" | "queued") => Ok(StopReason::Stop),
        Some("incomplete") => Ok(StopReason::Length),
        Some("failed" | "cancelled") => Ok(StopReason::Error),
        Some(other) => Err(format!("Unhandled stop reason: {other}")),
    }
}

impl Decoder {
    /// A decoder for a response of `model`; `service_tier` is the tier that was requested.
    pub fn new(model: Model, flavor: Flavor, service_tier: Option<String>) -> Self {
        Self {
            model,
            flavor,
            service_tier,
            slots: HashMap::new(),
            reasoning_by_id: HashMap::new(),
            unfinished: Vec::new(),
            completed: false,
            provider_thinking_level: None,
        }
    }

    /// Keeps `effort` on the reply as the effort it was made with.
    pub fn with_provider_thinking_level(mut self, effort: Option<String>) -> Self {
        self.provider_thinking_level = effort;
        self
    }

    fn item_added(&mut self, at: Option<u64>, item: &Value, asm: &mut Assembler) {
        match str_field(item, "type") {
            Some("reasoning") => {
                let index = asm.begin_thinking(ThinkingContent::new(""));
                self.slots
                    .insert(at, Current::Reasoning { index, parts: 0 });
            }
            Some("message") => {
                let index = asm.begin_text();
                self.slots
                    .insert(at, Current::Message { index, part: None });
            }
            Some("function_call") => {
                let id = format!(
                    "{}|{}",
                    js_text(item.get("call_id")),
                    js_text(item.get("id"))
                );
                let name = str_field(item, "name").unwrap_or("");
                let index = asm.begin_tool_call(&id, name, Map::new());
                let initial = str_field(item, "arguments").unwrap_or("");
                if !initial.is_empty() {
                    asm.push_tool_args(index, initial);
                }
                self.unfinished.push(index);
                self.slots.insert(
                    at,
                    Current::Tool {
                        index,
                        partial: initial.to_owned(),
                    },
                );
            }
            _ => {}
        }
    }

    fn item_done(&mut self, at: Option<u64>, item: &Value, asm: &mut Assembler) {
        let kind = str_field(item, "type");
        // An item finished without being announced is opened first (pi-ai's
        // `getOrCreateSlot`); a call is added whole below.
        if matches!(kind, Some("reasoning" | "message")) && !self.slots.contains_key(&at) {
            self.item_added(at, item, asm);
        }
        match kind {
            Some("reasoning") => {
                let Some(Current::Reasoning { index, .. }) = self.slots.get(&at) else {
                    return;
                };
                let index = *index;
                let summary = joined_texts(item, "summary");
                let content = joined_texts(item, "content");
                let signature = item.to_string();
                if let Some(AssistantBlock::Thinking(block)) =
                    asm.message_mut().content.get_mut(index)
                {
                    if !summary.is_empty() {
                        block.thinking = summary.into();
                    } else if !content.is_empty() {
                        block.thinking = content.into();
                    }
                    block.thinking_signature = Some(signature);
                }
                if let Some(id) = str_field(item, "id") {
                    self.reasoning_by_id.insert(id.to_owned(), index);
                }
                asm.end_block(index);
                self.slots.remove(&at);
            }
            Some("message") => {
                let Some(Current::Message { index, .. }) = self.slots.get(&at) else {
                    return;
                };
                let index = *index;
                let text = item.get("content").and_then(Value::as_array).map(|parts| {
                    parts
                        .iter()
                        .map(|p| {
                            let key = if str_field(p, "type") == Some("output_text") {
                                "text"
                            } else {
                                "refusal"
                            };
                            str_field(p, key).unwrap_or("")
                        })
                        .collect::<String>()
                });
                let mut signature = Map::new();
                signature.insert("v".into(), Value::from(1));
                if let Some(id) = item.get("id").filter(|v| !v.is_null()) {
                    signature.insert("id".into(), id.clone());
                }
                if let Some(phase) = item.get("phase").filter(|v| truthy(v)) {
                    signature.insert("phase".into(), phase.clone());
                }
                if let Some(AssistantBlock::Text(block)) = asm.message_mut().content.get_mut(index)
                {
                    if let Some(text) = text {
                        block.text = text.into();
                    }
                    block.text_signature = Some(Value::Object(signature).to_string());
                }
                asm.end_block(index);
                self.slots.remove(&at);
            }
            Some("function_call") => {
                let arguments = str_field(item, "arguments").filter(|a| !a.is_empty());
                match self.slots.remove(&at) {
                    Some(Current::Tool { index, partial }) => {
                        if partial.is_empty() {
                            asm.replace_tool_args(index, arguments.unwrap_or("{}"));
                        }
                        self.unfinished.retain(|&i| i != index);
                        asm.end_block(index);
                    }
                    other => {
                        // Another kind's slot stays open.
                        if let Some(other) = other {
                            self.slots.insert(at, other);
                        }
                        // A call that was never announced: add it whole.
                        let id = format!(
                            "{}|{}",
                            js_text(item.get("call_id")),
                            js_text(item.get("id"))
                        );
                        let name = str_field(item, "name").unwrap_or("");
                        let index = asm.begin_tool_call(&id, name, Map::new());
                        asm.replace_tool_args(index, arguments.unwrap_or("{}"));
                        asm.end_block(index);
                    }
                }
            }
            _ => {}
        }
    }

    fn arguments_done(&mut self, at: Option<u64>, arguments: &str, asm: &mut Assembler) {
        let Some(Current::Tool { index, partial }) = self.slots.get_mut(&at) else {
            return;
        };
        let index = *index;
        if let Some(rest) = arguments.strip_prefix(partial.as_str()) {
            if !rest.is_empty() {
                asm.push_tool_args(index, rest);
            }
        } else {
            asm.replace_tool_args(index, arguments);
        }
        arguments.clone_into(partial);
    }

    /// Adds the terminal response's `encrypted_content` to finished reasoning blocks whose
    /// item lacked it (Azure sends it only there; pi 0.80.7).
    fn backfill_encrypted_reasoning(&self, response: Option<&ResponseInfo>, asm: &mut Assembler) {
        for item in response
            .and_then(|r| r.output.as_ref())
            .into_iter()
            .flatten()
        {
            let encrypted = item
                .get("encrypted_content")
                .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()));
            let (Some("reasoning"), Some(encrypted), Some(id)) =
                (str_field(item, "type"), encrypted, str_field(item, "id"))
            else {
                continue;
            };
            let Some(&index) = self.reasoning_by_id.get(id) else {
                continue;
            };
            if let Some(AssistantBlock::Thinking(block)) = asm.message_mut().content.get_mut(index)
                && let Some(Ok(Value::Object(mut stored))) = block
                    .thinking_signature
                    .as_deref()
                    .map(serde_json::from_str::<Value>)
                && !stored.get("encrypted_content").is_some_and(truthy)
            {
                stored.insert("encrypted_content".into(), encrypted.clone());
                block.thinking_signature = Some(Value::Object(stored).to_string());
            }
        }
    }

    /// `response.completed` (and `incomplete`): id, usage, cost and the stop reason.
    fn complete(
        &mut self,
        response: Option<&ResponseInfo>,
        asm: &mut Assembler,
    ) -> Result<(), String> {
        self.completed = true;
        self.backfill_encrypted_reasoning(response, asm);
        let message = asm.message_mut();
        if let Some(id) = response
            .and_then(|r| r.id.as_deref())
            .filter(|id| !id.is_empty())
        {
            message.response_id = Some(id.to_owned());
        }
        if let Some(raw) = response.and_then(|r| r.usage.as_ref()) {
            let details = raw.input_tokens_details.as_ref();
            let cached = details.and_then(|d| d.cached_tokens).unwrap_or(0);
            let written = details.and_then(|d| d.cache_write_tokens).unwrap_or(0);
            let mut usage = Usage::from_tokens(
                raw.input_tokens
                    .unwrap_or(0)
                    .saturating_sub(cached)
                    .saturating_sub(written),
                raw.output_tokens.unwrap_or(0),
                cached,
                written,
            );
            usage.reasoning = Some(
                raw.output_tokens_details
                    .as_ref()
                    .and_then(|d| d.reasoning_tokens)
                    .unwrap_or(0),
            );
            usage.total_tokens = raw.total_tokens.unwrap_or(0);
            message.usage = usage;
        }
        calculate_cost(&self.model, &mut message.usage);
        let response_tier = response.and_then(|r| r.service_tier.as_deref());
        let requested = self.service_tier.as_deref();
        let tier = match self.flavor {
            Flavor::Azure => None,
            // OpenAI's Fast mode (`fast`) is billed as `priority` (pi-ai 1.6); Codex has none.
            Flavor::OpenAi => response_tier
                .or(requested)
                .map(|tier| if tier == "fast" { "priority" } else { tier }),
            Flavor::Codex => match (response_tier, requested) {
                (Some("default"), Some(r @ ("flex" | "priority"))) => Some(r),
                (response, requested) => response.or(requested),
            },
        };
        let multiplier = tier_multiplier(&self.model, tier);
        if multiplier != 1.0 {
            let cost = &mut message.usage.cost;
            cost.input *= multiplier;
            cost.output *= multiplier;
            cost.cache_read *= multiplier;
            cost.cache_write *= multiplier;
            cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write;
        }
        let status = response.and_then(|r| r.status.as_deref());
        let mut stop = match self.flavor {
            // Codex statuses outside the known set count as no status.
            Flavor::Codex => map_status(status).unwrap_or(StopReason::Stop),
            Flavor::OpenAi | Flavor::Azure => map_status(status)?,
        };
        if stop == StopReason::Stop
            && message
                .content
                .iter()
                .any(|b| matches!(b, AssistantBlock::ToolCall(_)))
        {
            stop = StopReason::ToolUse;
        }
        message.stop_reason = stop;
        message.raw_stop_reason = raw_status(response);
        if stop == StopReason::Error {
            message.error_message = Some(UNKNOWN_ERROR.to_owned());
        }
        Ok(())
    }
}

/// The text of a `response.failed` event as pi words it.
fn failed_text(response: Option<&ResponseInfo>) -> String {
    let error = response
        .and_then(|r| r.error.as_ref())
        .filter(|e| truthy(e));
    if let Some(error) = error {
        let code = first_truthy([error.get("code")]).unwrap_or_else(|| "unknown".to_owned());
        let message =
            first_truthy([error.get("message")]).unwrap_or_else(|| "no message".to_owned());
        return format!("{code}: {message}");
    }
    let reason = response
        .and_then(|r| r.incomplete_details.as_ref())
        .and_then(|d| first_truthy([d.get("reason")]));
    match reason {
        Some(reason) => format!("incomplete: {reason}"),
        None => "Unknown error (no error details in response)".to_owned(),
    }
}

impl SseDecoder for Decoder {
    fn on_event(&mut self, sse: &Sse, asm: &mut Assembler) -> Result<Flow, String> {
        if let Some(level) = self.provider_thinking_level.take() {
            asm.message_mut().provider_thinking_level = Some(level);
        }
        let Some(data) = sse.data.as_deref() else {
            return Ok(Flow::Continue);
        };
        let event: Event = if self.flavor == Flavor::Codex {
            let trimmed = data.trim();
            if trimmed.is_empty() || trimmed == "[DONE]" {
                return Ok(Flow::Continue);
            }
            serde_json::from_str(trimmed).map_err(|e| {
                format!(
                    "Invalid Codex SSE JSON: {}",
                    codex_events::js_json_error(&e, trimmed)
                )
            })?
        } else {
            if data.starts_with("[DONE]") {
                return Ok(Flow::Stop);
            }
            let event: Event = parse_json(data)?;
            if let Some(error) = event.error.as_ref().filter(|e| truthy(e)) {
                return Err(sdk_error_text(error));
            }
            event
        };
        let kind = event.kind.as_deref().unwrap_or("");
        if self.flavor == Flavor::Codex
            && let Some(outcome) = self.codex_event(kind, &event, data, asm)
        {
            return outcome;
        }
        let at = event.output_index;
        match kind {
            "response.created" => {
                if let Some(id) = event.response.as_ref().and_then(|r| r.id.as_deref()) {
                    asm.message_mut().response_id = Some(id.to_owned());
                }
            }
            "response.output_item.added" => {
                if let Some(item) = &event.item {
                    self.item_added(event.output_index, item, asm);
                }
            }
            "response.reasoning_summary_part.added" => {
                if let Some(Current::Reasoning { parts, .. }) = self.slots.get_mut(&at) {
                    *parts += 1;
                }
            }
            "response.reasoning_summary_text.delta" => {
                if let Some(&Current::Reasoning { index, parts }) = self.slots.get(&at)
                    && parts > 0
                    && let Some(delta) = event.delta.as_deref()
                {
                    asm.push_thinking(index, delta);
                }
            }
            "response.reasoning_summary_part.done" => {
                if let Some(&Current::Reasoning { index, parts }) = self.slots.get(&at)
                    && parts > 0
                {
                    asm.push_thinking(index, "\n\n");
                }
            }
            "response.reasoning_text.delta" => {
                if let Some(&Current::Reasoning { index, .. }) = self.slots.get(&at)
                    && let Some(delta) = event.delta.as_deref()
                {
                    asm.push_thinking(index, delta);
                }
            }
            "response.content_part.added" => {
                if let Some(Current::Message { part, .. }) = self.slots.get_mut(&at) {
                    match event.part.as_ref().and_then(|p| p.kind.as_deref()) {
                        Some("output_text") => *part = Some(PartKind::OutputText),
                        Some("refusal") => *part = Some(PartKind::Refusal),
                        _ => {}
                    }
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let wanted = if kind == "response.output_text.delta" {
                    PartKind::OutputText
                } else {
                    PartKind::Refusal
                };
                if let Some(&Current::Message { index, part }) = self.slots.get(&at)
                    && part == Some(wanted)
                    && let Some(delta) = event.delta.as_deref()
                {
                    asm.push_text(index, delta);
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(Current::Tool { index, partial }) = self.slots.get_mut(&at)
                    && let Some(delta) = event.delta.as_deref()
                {
                    partial.push_str(delta);
                    asm.push_tool_args(*index, delta);
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(arguments) = event.arguments.as_deref() {
                    self.arguments_done(at, arguments, asm);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = &event.item {
                    self.item_done(at, item, asm);
                }
            }
            "response.completed" | "response.incomplete" => {
                self.complete(event.response.as_ref(), asm)?;
            }
            "error" => {
                return Err(format!(
                    "Error Code {}: {}",
                    js_text(event.code.as_ref()),
                    js_text(event.message.as_ref())
                ));
            }
            "response.failed" => {
                asm.message_mut().raw_stop_reason =
                    event.response.as_ref().and_then(|r| r.status.clone());
                return Err(failed_text(event.response.as_ref()));
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(&mut self, asm: &mut Assembler, ended_by_provider: bool) -> Result<(), String> {
        if let Some(level) = self.provider_thinking_level.take() {
            asm.message_mut().provider_thinking_level = Some(level);
        }
        asm.end_all();
        if !self.completed && !ended_by_provider {
            return Err(INCOMPLETE_STREAM.to_owned());
        }
        if asm.message_mut().stop_reason == StopReason::ToolUse
            && let Some(&index) = self.unfinished.first()
            && let Some(call) = asm.tool_call_mut(index)
        {
            return Err(format!(
                "OpenAI Responses stream completed with an unfinished tool call: {} ({})",
                call.name, call.id
            ));
        }
        Ok(())
    }
}

#[path = "decode_codex.rs"]
mod codex_events;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn javascript_texts() {
        assert_eq!(js_text(None), "undefined");
        assert_eq!(js_text(Some(&Value::Null)), "null");
        assert_eq!(js_text(Some(&json!(429))), "429");
        assert_eq!(js_text(Some(&json!("x"))), "x");
        assert_eq!(
            first_truthy([Some(&json!("")), Some(&json!("code"))]),
            Some("code".into())
        );
    }

    #[test]
    fn failed_texts_follow_pi() {
        let info = |v: Value| serde_json::from_value::<ResponseInfo>(v).unwrap();
        assert_eq!(
            failed_text(Some(&info(
                json!({"error": {"code": "server_error", "message": "boom"}})
            ))),
            "server_error: boom"
        );
        assert_eq!(
            failed_text(Some(&info(json!({"error": {"message": ""}})))),
            "unknown: no message"
        );
        assert_eq!(
            failed_text(Some(&info(
                json!({"error": null, "incomplete_details": {"reason": "max_output_tokens"}})
            ))),
            "incomplete: max_output_tokens"
        );
        assert_eq!(
            failed_text(None),
            "Unknown error (no error details in response)"
        );
    }

    #[test]
    fn statuses_map_to_stop_reasons() {
        assert_eq!(map_status(Some("incomplete")), Ok(StopReason::Length));
        assert_eq!(map_status(Some("cancelled")), Ok(StopReason::Error));
        assert_eq!(map_status(None), Ok(StopReason::Stop));
        assert!(map_status(Some("weird")).is_err());
    }
}
