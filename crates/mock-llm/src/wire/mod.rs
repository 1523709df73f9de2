//! Provider wire formats: each module renders a [`Script`] into SSE frames or an HTTP error.

pub(crate) mod anthropic;
pub(crate) mod bedrock;
pub(crate) mod google;
pub(crate) mod mistral;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use crate::default_reply;
use crate::script::{Script, ScriptUsage};
use crate::sse::Frame;
use crate::text::{item_text, tool_arguments};

/// Per-request inputs needed to render a response.
pub(crate) struct RenderCtx<'a> {
    /// Parsed request body (`Null` if not JSON).
    pub request: &'a Value,
    /// Raw request body length in bytes.
    pub request_len: usize,
    /// Sequence number of this response (for generated ids).
    pub response_seq: u64,
    /// Counter for generated tool call ids, shared by the whole server.
    pub tool_seq: &'a AtomicU64,
    /// Unix timestamp in seconds.
    pub created: u64,
}

impl RenderCtx<'_> {
    /// The next generated tool call number.
    pub fn next_tool_id(&self) -> u64 {
        self.tool_seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Model name: the script's, else the request's `model`, else `mock-model`.
    pub fn model<'s>(&'s self, script: &'s Script) -> &'s str {
        script
            .model
            .as_deref()
            .or_else(|| self.request.get("model").and_then(Value::as_str))
            .unwrap_or("mock-model")
    }

    /// Usage: the script's, else derived from the request length and output size.
    pub fn usage(&self, script: &Script) -> ScriptUsage {
        if let Some(usage) = script.usage {
            return usage;
        }
        let generated: usize = script
            .items
            .iter()
            .map(|item| {
                let text = item_text(item).map_or(0, |t| t.chars().count());
                let args = tool_arguments(item).map_or(0, |a| a.chars().count());
                text + args
            })
            .sum();
        ScriptUsage {
            input: (self.request_len / 4) as u64,
            output: (generated / 4) as u64 + 1,
            cache_read: 0,
            cache_write: 0,
            reasoning: 0,
        }
    }
}

/// One provider's streaming wire format.
pub(crate) trait WireFormat: Send + Sync {
    /// Renders the full successful stream for `script`, including any terminator.
    fn render(&self, script: &Script, ctx: &RenderCtx<'_>) -> Vec<Frame>;

    /// One event whose data is truncated, invalid JSON.
    fn malformed_frame(&self) -> Frame;

    /// The provider's in-stream error event(s), after which the stream ends.
    fn stream_error(&self, message: Option<&str>) -> Vec<Frame>;

    /// The provider's JSON error body for an HTTP status.
    fn error_body(&self, status: u16) -> String;

    /// Extra headers sent on every response of this provider.
    fn extra_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// The bytes of one frame on the wire (SSE by default; binary for Bedrock).
    fn encode(&self, frame: &Frame, line_ending: crate::script::LineEnding) -> bytes::Bytes {
        frame.render(line_ending)
    }

    /// The `content-type` of a streamed response.
    fn content_type(&self) -> &'static str {
        "text/event-stream"
    }

    /// The reply used when the script queue is empty.
    fn default_reply(&self, request: &Value) -> Script {
        default_reply::from_messages(request)
    }
}

/// The wire format a provider path belongs to, for the routes matched by suffix:
/// `…/responses` (OpenAI, Azure, Codex), `…:streamGenerateContent` (Gemini, Vertex; the
/// `v1internal` one is Cloud Code Assist), `…/converse-stream` (Bedrock),
/// `/mistral/…/chat/completions` (Mistral, mounted under its own prefix), and any other
/// `…/chat/completions` (OpenAI Chat) and `…/messages` (Anthropic), as gateways and
/// proxies mount them below their own paths.
pub(crate) fn for_path(path: &str) -> Option<&'static dyn WireFormat> {
    if path.ends_with("/responses") {
        Some(&openai_responses::OpenAiResponses)
    } else if path.ends_with("v1internal:streamGenerateContent") {
        Some(&google::GeminiCli)
    } else if path.ends_with(":streamGenerateContent") {
        Some(&google::Google)
    } else if path.ends_with("/converse-stream") {
        Some(&bedrock::Bedrock)
    } else if path.starts_with("/mistral/") && path.ends_with("/chat/completions") {
        Some(&mistral::Mistral)
    } else if path.ends_with("/chat/completions") {
        Some(&openai_chat::OpenAiChat)
    } else if path.ends_with("/messages") {
        Some(&anthropic::Anthropic)
    } else {
        None
    }
}
