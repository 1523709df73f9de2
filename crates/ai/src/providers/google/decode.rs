//! Decoding `streamGenerateContent?alt=sse` chunks (bare, or wrapped in `response` by Cloud
//! Code Assist) into message updates.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::{Map, Value};
use sse_stream::Sse;

use crate::assembler::Assembler;
use crate::models::calculate_cost;
use crate::sse::{Flow, SseDecoder, parse_json};
use crate::types::{AssistantBlock, Model, StopReason, ThinkingContent, Usage, now_ms};

/// The error text of a Cloud Code Assist stream that carried no content (retried first).
pub const EMPTY_RESPONSE: &str = "Cloud Code Assist API returned an empty response";

/// Which envelope the chunks come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Envelope {
    /// `GenerateContentResponse` chunks (Gemini API, Vertex AI).
    Bare,
    /// `{"response": GenerateContentResponse, "traceId": …}` chunks (Cloud Code Assist).
    CloudCodeAssist,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk<'a> {
    #[serde(borrow, default)]
    candidates: Option<Vec<Candidate<'a>>>,
    #[serde(default)]
    usage_metadata: Option<UsageMetadata>,
    #[serde(borrow, default)]
    response_id: Option<Cow<'a, str>>,
    #[serde(default)]
    prompt_feedback: Option<PromptFeedback>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Wrapped<'a> {
    #[serde(borrow, default)]
    response: Option<Chunk<'a>>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate<'a> {
    #[serde(borrow, default)]
    content: Option<CandidateContent<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct CandidateContent<'a> {
    #[serde(borrow, default)]
    parts: Option<Vec<RawPart<'a>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPart<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    thought: Option<bool>,
    #[serde(borrow, default)]
    thought_signature: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function_call: Option<RawFunctionCall<'a>>,
}

#[derive(Deserialize)]
struct RawFunctionCall<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    args: Option<Value>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
    #[serde(default)]
    thoughts_token_count: Option<u64>,
    #[serde(default)]
    cached_content_token_count: Option<u64>,
    #[serde(default)]
    total_token_count: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
}

/// Usage as the TypeScript pi computes it: `input` excludes cached tokens, `output` includes
/// thoughts, `totalTokens` is the server's.
fn parse_usage(raw: &UsageMetadata, model: &Model) -> Usage {
    let cached = raw.cached_content_token_count.unwrap_or(0);
    let mut usage = Usage {
        input: raw.prompt_token_count.unwrap_or(0).saturating_sub(cached),
        output: raw
            .candidates_token_count
            .unwrap_or(0)
            .saturating_add(raw.thoughts_token_count.unwrap_or(0)),
        cache_read: cached,
        cache_write: 0,
        reasoning: Some(raw.thoughts_token_count.unwrap_or(0)),
        total_tokens: raw.total_token_count.unwrap_or(0),
        ..Usage::default()
    };
    calculate_cost(model, &mut usage);
    usage
}

/// The Gemini API's finish reasons (the SDK's `FinishReason`); an unknown one is an error.
fn map_finish_reason(reason: &str) -> Result<StopReason, String> {
    match reason {
        "STOP" => Ok(StopReason::Stop),
        "MAX_TOKENS" => Ok(StopReason::Length),
        "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "SAFETY"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION"
        | "IMAGE_OTHER"
        | "RECITATION"
        | "FINISH_REASON_UNSPECIFIED"
        | "OTHER"
        | "LANGUAGE"
        | "MALFORMED_FUNCTION_CALL"
        | "UNEXPECTED_TOOL_CALL"
        | "NO_IMAGE" => Ok(StopReason::Error),
        other => Err(format!("Unhandled stop reason: {other}")),
    }
}

/// Cloud Code Assist's raw finish reasons: anything but `STOP`/`MAX_TOKENS` is an error.
fn map_finish_reason_string(reason: &str) -> StopReason {
    match reason {
        "STOP" => StopReason::Stop,
        "MAX_TOKENS" => StopReason::Length,
        _ => StopReason::Error,
    }
}

/// Counter of generated tool-call ids (Gemini may omit them).
static TOOL_CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Text,
    Thinking,
}

/// Per-stream decoding state.
pub struct Decoder {
    model: Model,
    envelope: Envelope,
    /// The open text or thinking block.
    current: Option<(usize, BlockKind)>,
    saw_finish: bool,
    has_content: bool,
    /// The last finish reason, named in the error when it fails the message (pi-ai 1.6).
    finish_reason: Option<String>,
}

impl Decoder {
    /// A decoder for a response of `model` in `envelope`.
    pub fn new(model: Model, envelope: Envelope) -> Self {
        Self {
            model,
            envelope,
            current: None,
            saw_finish: false,
            has_content: false,
            finish_reason: None,
        }
    }

    fn block(&mut self, kind: BlockKind, asm: &mut Assembler) -> usize {
        if let Some((index, open)) = self.current {
            if open == kind {
                return index;
            }
            asm.end_block(index);
        }
        let index = match kind {
            BlockKind::Text => asm.begin_text(),
            BlockKind::Thinking => asm.begin_thinking(ThinkingContent::new("")),
        };
        self.current = Some((index, kind));
        index
    }

    fn close_current(&mut self, asm: &mut Assembler) {
        if let Some((index, _)) = self.current.take() {
            asm.end_block(index);
        }
    }

    fn apply_part(&mut self, part: &RawPart, asm: &mut Assembler) {
        // A block keeps the last non-empty signature it saw (some backends send it once).
        let signature = part.thought_signature.as_deref().filter(|s| !s.is_empty());
        if let Some(text) = part.text.as_deref() {
            self.has_content = true;
            if part.thought == Some(true) {
                let index = self.block(BlockKind::Thinking, asm);
                if let Some(signature) = signature
                    && let Some(AssistantBlock::Thinking(block)) = asm.message().content.get(index)
                    && block.thinking_signature.as_deref() != Some(signature)
                    && let Some(AssistantBlock::Thinking(block)) =
                        asm.message_mut().content.get_mut(index)
                {
                    block.thinking_signature = Some(signature.to_owned());
                }
                asm.push_thinking(index, text);
            } else {
                let index = self.block(BlockKind::Text, asm);
                if let Some(signature) = signature
                    && let Some(AssistantBlock::Text(block)) = asm.message().content.get(index)
                    && block.text_signature.as_deref() != Some(signature)
                    && let Some(AssistantBlock::Text(block)) =
                        asm.message_mut().content.get_mut(index)
                {
                    block.text_signature = Some(signature.to_owned());
                }
                asm.push_text(index, text);
            }
        }
        if let Some(call) = &part.function_call {
            self.has_content = true;
            self.close_current(asm);
            let name = call.name.as_deref().unwrap_or("");
            let provided = call.id.as_deref().filter(|id| !id.is_empty());
            let duplicate = provided.is_some_and(|id| {
                asm.message()
                    .content
                    .iter()
                    .any(|b| matches!(b, AssistantBlock::ToolCall(c) if c.id == id))
            });
            let id = match provided {
                Some(id) if !duplicate => id.to_owned(),
                _ => format!(
                    "{name}_{}_{}",
                    now_ms(),
                    TOOL_CALL_COUNTER.fetch_add(1, Ordering::Relaxed) + 1
                ),
            };
            let args = match &call.args {
                Some(args @ Value::Object(_)) => args.to_string(),
                _ => "{}".to_owned(),
            };
            let index = asm.begin_tool_call(&id, name, Map::new());
            if let Some(signature) = signature
                && let Some(tool) = asm.tool_call_mut(index)
            {
                tool.thought_signature = Some(signature.to_owned());
            }
            asm.push_tool_args(index, &args);
            asm.end_block(index);
        }
    }

    fn apply(&mut self, chunk: &Chunk, asm: &mut Assembler) -> Result<(), String> {
        if asm.message().response_id.is_none()
            && let Some(id) = chunk.response_id.as_deref().filter(|id| !id.is_empty())
        {
            asm.message_mut().response_id = Some(id.to_owned());
        }
        let candidate = chunk.candidates.as_ref().and_then(|c| c.first());
        if let Some(parts) = candidate
            .and_then(|c| c.content.as_ref())
            .and_then(|c| c.parts.as_ref())
        {
            for part in parts {
                self.apply_part(part, asm);
            }
        }
        if let Some(reason) = candidate.and_then(|c| c.finish_reason.as_deref()) {
            self.saw_finish = true;
            asm.message_mut().raw_stop_reason = Some(reason.to_owned());
            let mut stop = match self.envelope {
                Envelope::Bare => map_finish_reason(reason)?,
                Envelope::CloudCodeAssist => map_finish_reason_string(reason),
            };
            self.finish_reason = Some(reason.to_string());
            // Tool calls turn a normal stop into tool use; an output limit or a provider
            // error stays what it is (pi-ai 1.6).
            if stop == StopReason::Stop
                && asm
                    .message()
                    .content
                    .iter()
                    .any(|b| matches!(b, AssistantBlock::ToolCall(_)))
            {
                stop = StopReason::ToolUse;
            }
            asm.message_mut().stop_reason = stop;
        }
        if let Some(raw) = &chunk.usage_metadata {
            asm.message_mut().usage = parse_usage(raw, &self.model);
        }
        if candidate.is_none()
            && let Some(reason) = chunk
                .prompt_feedback
                .as_ref()
                .and_then(|f| f.block_reason.as_deref())
        {
            return Err(format!("The prompt was blocked by the provider: {reason}"));
        }
        Ok(())
    }
}

/// The SDK's text for an in-stream error chunk: `got status: <status>. <chunk JSON>`.
fn stream_error_text(error: &Value, data: &str) -> String {
    let status = match error.get("status") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "undefined".to_owned(),
    };
    let compact = serde_json::from_str::<Value>(data)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| data.to_owned());
    format!("got status: {status}. {compact}")
}

/// Cloud Code Assist's text for an error: `Cloud Code Assist API error (<code>): <message>`.
pub fn cloud_code_assist_error(code: Option<u16>, error: &Value) -> String {
    let message = match error.get("message") {
        Some(Value::String(m)) => m.clone(),
        _ => error.to_string(),
    };
    let code = code
        .or_else(|| {
            error
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok())
        })
        .map_or_else(|| "unknown".to_owned(), |c| c.to_string());
    format!("Cloud Code Assist API error ({code}): {message}")
}

impl SseDecoder for Decoder {
    fn on_event(&mut self, event: &Sse, asm: &mut Assembler) -> Result<Flow, String> {
        let Some(data) = event.data.as_deref().map(str::trim) else {
            return Ok(Flow::Continue);
        };
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        match self.envelope {
            Envelope::Bare => {
                let chunk: Chunk = parse_json(data)?;
                if let Some(error) = &chunk.error {
                    return Err(stream_error_text(error, data));
                }
                self.apply(&chunk, asm)?;
            }
            Envelope::CloudCodeAssist => {
                let wrapped: Wrapped = parse_json(data)?;
                if let Some(error) = &wrapped.error {
                    return Err(cloud_code_assist_error(None, error));
                }
                if let Some(chunk) = &wrapped.response {
                    if let Some(error) = &chunk.error {
                        return Err(cloud_code_assist_error(None, error));
                    }
                    self.apply(chunk, asm)?;
                }
            }
        }
        Ok(Flow::Continue)
    }

    fn finish(&mut self, asm: &mut Assembler, _ended_by_provider: bool) -> Result<(), String> {
        self.close_current(asm);
        asm.end_all();
        if self.envelope == Envelope::CloudCodeAssist && !self.has_content {
            return Err(EMPTY_RESPONSE.to_owned());
        }
        if !self.saw_finish {
            return Err(
                "Connection error: the stream ended before the response was complete (no finishReason)"
                    .to_owned(),
            );
        }
        if asm.message().stop_reason.is_failure() {
            return Err(match (self.envelope, self.finish_reason.take()) {
                (Envelope::Bare, Some(reason)) => format!("Provider stopped with: {reason}"),
                _ => "An unknown error occurred".to_owned(),
            });
        }
        Ok(())
    }
}
