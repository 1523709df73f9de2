//! Serde types describing one scripted response, plus builder helpers for tests.
//!
//! JSON uses camelCase keys (`chunkSize`, `afterEvents`, ...) and `type` tags
//! (`{"type":"toolCall",...}`); snake_case spellings are accepted as aliases.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::MockError;

/// One scripted response: what the next request to any provider endpoint receives.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Script {
    /// Content items, streamed in order.
    #[serde(default)]
    pub items: Vec<Item>,
    /// Reported token usage; derived from the request and output sizes when absent.
    #[serde(default)]
    pub usage: Option<ScriptUsage>,
    /// Finish reason; defaults to `ToolUse` if any tool call item is present, else `Stop`.
    #[serde(default, alias = "stop_reason")]
    pub stop_reason: Option<StopReason>,
    /// Characters per delta for text, thinking and tool arguments (default 8, UTF-8 safe).
    #[serde(default, alias = "chunk_size")]
    pub chunk_size: Option<usize>,
    /// Fault to inject into this response.
    #[serde(default)]
    pub fault: Option<Fault>,
    /// SSE line terminator (`lf` by default).
    #[serde(default, alias = "line_ending")]
    pub line_ending: Option<LineEnding>,
    /// Split the HTTP body into writes of at most this many bytes (ignores UTF-8 and line boundaries).
    #[serde(default, alias = "write_chunk_bytes")]
    pub write_chunk_bytes: Option<usize>,
    /// Model name reported in the stream (default: the request's `model`).
    #[serde(default)]
    pub model: Option<String>,
    /// Response id (default: generated `chatcmpl-<n>` / `msg_<n>`).
    #[serde(default, alias = "response_id")]
    pub response_id: Option<String>,
    /// OpenAI only: delta field carrying thinking (default `reasoning_content`).
    #[serde(default, alias = "reasoning_field")]
    pub reasoning_field: Option<String>,
    /// Replay: send exactly this body (a recorded provider stream) instead of rendering
    /// `items`; `writeChunkBytes` still splits it. Faults other than HTTP errors are ignored.
    #[serde(default, alias = "raw_body")]
    pub raw_body: Option<String>,
    /// The provider's own stop reason, sent as is instead of the one `stopReason` maps to
    /// (Anthropic `refusal`, Bedrock `guardrail_intervened`, Gemini `SAFETY`; Anthropic,
    /// Bedrock and Gemini/Vertex wires).
    #[serde(default, alias = "raw_stop_reason")]
    pub raw_stop_reason: Option<String>,
    /// Fields added to the wire's usage object as they are (Bedrock `cacheDetails`, the
    /// per-TTL split of cache writes; a Chat Completions server's own counts; Bedrock and
    /// OpenAI Chat wires).
    #[serde(default, alias = "usage_extra")]
    pub usage_extra: Option<serde_json::Map<String, Value>>,
}

/// One content item of a scripted response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Item {
    /// Assistant text.
    Text {
        /// The text to stream.
        text: String,
    },
    /// Reasoning: an Anthropic thinking block, or OpenAI reasoning-field deltas.
    Thinking {
        /// The thinking text to stream.
        text: String,
        /// Anthropic signature sent as one `signature_delta` (ignored by OpenAI).
        #[serde(default)]
        signature: Option<String>,
    },
    /// Anthropic only: a `redacted_thinking` block (ignored by OpenAI).
    RedactedThinking {
        /// The opaque encrypted payload.
        data: String,
    },
    /// A tool call whose arguments are serialized compactly and streamed in pieces.
    ToolCall {
        /// Tool call id (default `call_<n>` / `toolu_<n>`).
        #[serde(default)]
        id: Option<String>,
        /// Tool name.
        name: String,
        /// Arguments object.
        arguments: Value,
    },
    /// A tool call streaming exactly this argument text (may be invalid JSON).
    ToolCallRaw {
        /// Tool call id (default `call_<n>` / `toolu_<n>`).
        #[serde(default)]
        id: Option<String>,
        /// Tool name.
        name: String,
        /// Raw argument text.
        arguments: String,
    },
    /// Text of exactly `bytes` bytes of deterministic lorem-ipsum ASCII.
    Filler {
        /// Length of the generated text in bytes.
        bytes: usize,
    },
}

/// Token usage reported for a scripted response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScriptUsage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default, alias = "cache_read")]
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default, alias = "cache_write")]
    pub cache_write: u64,
    /// Reasoning tokens, reported as part of `output` where the wire has a field for them.
    #[serde(default)]
    pub reasoning: u64,
}

/// Why the response ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// Natural end of turn.
    Stop,
    /// Output token limit reached.
    Length,
    /// The model wants tools to run.
    #[serde(alias = "tool_use")]
    ToolUse,
}

/// Line terminator used for every SSE line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineEnding {
    /// `\n`
    #[default]
    Lf,
    /// `\r\n`
    Crlf,
}

/// A failure to inject into a scripted response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Fault {
    /// Answer with this HTTP status and the provider's error JSON (or `body` verbatim), no stream.
    HttpError {
        /// HTTP status code.
        status: u16,
        /// `retry-after` header value (seconds).
        #[serde(default, alias = "retry_after")]
        retry_after: Option<String>,
        /// `retry-after-ms` header value.
        #[serde(default, alias = "retry_after_ms")]
        retry_after_ms: Option<String>,
        /// Verbatim response body.
        #[serde(default)]
        body: Option<String>,
    },
    /// Send the first `after_events` SSE events, then abort the connection abruptly.
    DropAfter {
        /// Events sent before the abort.
        #[serde(alias = "after_events")]
        after_events: usize,
    },
    /// After `after_events` events, send one event whose data is truncated JSON, then continue.
    MalformedAfter {
        /// Events sent before the malformed one.
        #[serde(alias = "after_events")]
        after_events: usize,
    },
    /// After `after_events` events, pause `ms` milliseconds, then continue.
    Stall {
        /// Events sent before the pause.
        #[serde(alias = "after_events")]
        after_events: usize,
        /// Pause length in milliseconds.
        ms: u64,
    },
    /// After `after_events` events, send the provider's in-stream error event and end.
    StreamError {
        /// Events sent before the error.
        #[serde(alias = "after_events")]
        after_events: usize,
        /// Error message (provider-like default).
        #[serde(default)]
        message: Option<String>,
    },
    /// Send every event but the last, then the first half of the last one's bytes, and
    /// end the body cleanly (a final event cut short).
    TruncatedEnd,
    /// Wait `ms` milliseconds before answering at all (no status line or headers
    /// meanwhile), then answer as without a fault.
    DelayHeaders {
        /// The wait in milliseconds.
        ms: u64,
    },
}

impl Fault {
    /// An HTTP error with the provider's standard error body.
    pub fn http_error(status: u16) -> Fault {
        Fault::HttpError {
            status,
            retry_after: None,
            retry_after_ms: None,
            body: None,
        }
    }

    /// Abort the connection after `after_events` events.
    pub fn drop_after(after_events: usize) -> Fault {
        Fault::DropAfter { after_events }
    }

    /// Insert one malformed event after `after_events` events.
    pub fn malformed_after(after_events: usize) -> Fault {
        Fault::MalformedAfter { after_events }
    }

    /// Pause `ms` milliseconds after `after_events` events.
    pub fn stall(after_events: usize, ms: u64) -> Fault {
        Fault::Stall { after_events, ms }
    }

    /// Send the provider's in-stream error after `after_events` events.
    pub fn stream_error(after_events: usize) -> Fault {
        Fault::StreamError {
            after_events,
            message: None,
        }
    }
}

impl Item {
    /// A text item.
    pub fn text(text: impl Into<String>) -> Item {
        Item::Text { text: text.into() }
    }

    /// A thinking item without signature.
    pub fn thinking(text: impl Into<String>) -> Item {
        Item::Thinking {
            text: text.into(),
            signature: None,
        }
    }

    /// A tool call with a JSON arguments value and a generated id.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Item {
        Item::ToolCall {
            id: None,
            name: name.into(),
            arguments,
        }
    }

    /// A tool call streaming exactly `arguments` and a generated id.
    pub fn tool_call_raw(name: impl Into<String>, arguments: impl Into<String>) -> Item {
        Item::ToolCallRaw {
            id: None,
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// Whether this item is a tool call.
    pub fn is_tool_call(&self) -> bool {
        matches!(self, Item::ToolCall { .. } | Item::ToolCallRaw { .. })
    }
}

impl Script {
    /// A script with these items and default settings.
    pub fn new(items: Vec<Item>) -> Script {
        Script {
            items,
            ..Script::default()
        }
    }

    /// A plain text reply.
    pub fn text(text: impl Into<String>) -> Script {
        Script::new(vec![Item::text(text)])
    }

    /// A reply with a thinking item followed by a text item.
    pub fn thinking_then_text(thinking: impl Into<String>, text: impl Into<String>) -> Script {
        Script::new(vec![Item::thinking(thinking), Item::text(text)])
    }

    /// A reply with a single tool call (stop reason defaults to tool use).
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Script {
        Script::new(vec![Item::tool_call(name, arguments)])
    }

    /// A reply with a single tool call streaming exactly `arguments`.
    pub fn tool_call_raw(name: impl Into<String>, arguments: impl Into<String>) -> Script {
        Script::new(vec![Item::tool_call_raw(name, arguments)])
    }

    /// A reply of `bytes` bytes of lorem-ipsum text.
    pub fn filler(bytes: usize) -> Script {
        Script::new(vec![Item::Filler { bytes }])
    }

    /// An HTTP error reply with the provider's standard error body.
    pub fn http_error(status: u16) -> Script {
        Script::default().with_fault(Fault::http_error(status))
    }

    /// Parses one Script object or a JSON array of Scripts.
    pub fn parse_many(json: &str) -> Result<Vec<Script>, MockError> {
        let value: Value = serde_json::from_str(json).map_err(MockError::InvalidScript)?;
        Script::from_value_many(value)
    }

    /// Converts one Script object or an array of Scripts from a JSON value.
    pub fn from_value_many(value: Value) -> Result<Vec<Script>, MockError> {
        if value.is_array() {
            serde_json::from_value(value).map_err(MockError::InvalidScript)
        } else {
            serde_json::from_value(value)
                .map(|s| vec![s])
                .map_err(MockError::InvalidScript)
        }
    }

    /// Appends an item.
    pub fn with_item(mut self, item: Item) -> Script {
        self.items.push(item);
        self
    }

    /// Sets input and output token usage (no cache tokens).
    pub fn with_usage(mut self, input: u64, output: u64) -> Script {
        self.usage = Some(ScriptUsage {
            input,
            output,
            cache_read: 0,
            cache_write: 0,
            reasoning: 0,
        });
        self
    }

    /// Sets the full token usage, including cache tokens.
    pub fn with_full_usage(mut self, usage: ScriptUsage) -> Script {
        self.usage = Some(usage);
        self
    }

    /// Sets the number of characters per streamed delta.
    pub fn with_chunk_size(mut self, chunk_size: usize) -> Script {
        self.chunk_size = Some(chunk_size);
        self
    }

    /// Sets the fault to inject.
    pub fn with_fault(mut self, fault: Fault) -> Script {
        self.fault = Some(fault);
        self
    }

    /// Sets the stop reason.
    pub fn with_stop_reason(mut self, stop_reason: StopReason) -> Script {
        self.stop_reason = Some(stop_reason);
        self
    }

    /// Sets the SSE line ending.
    pub fn with_line_ending(mut self, line_ending: LineEnding) -> Script {
        self.line_ending = Some(line_ending);
        self
    }

    /// Splits the HTTP body into writes of at most `bytes` bytes.
    pub fn with_write_chunk_bytes(mut self, bytes: usize) -> Script {
        self.write_chunk_bytes = Some(bytes);
        self
    }

    /// Sets the reported model name.
    pub fn with_model(mut self, model: impl Into<String>) -> Script {
        self.model = Some(model.into());
        self
    }

    /// Sets the response id.
    pub fn with_response_id(mut self, id: impl Into<String>) -> Script {
        self.response_id = Some(id.into());
        self
    }

    /// A script that replays a recorded response body verbatim.
    pub fn raw(body: impl Into<String>) -> Script {
        Script {
            raw_body: Some(body.into()),
            ..Script::default()
        }
    }

    /// Adds `fields` to the wire's usage object (see [`Script::usage_extra`]).
    pub fn with_usage_extra(mut self, fields: serde_json::Map<String, Value>) -> Script {
        self.usage_extra = Some(fields);
        self
    }

    /// Sets the OpenAI delta field used for thinking.
    pub fn with_reasoning_field(mut self, field: impl Into<String>) -> Script {
        self.reasoning_field = Some(field.into());
        self
    }

    /// Sends `reason` as the wire's stop reason (see [`Script::raw_stop_reason`]).
    pub fn with_raw_stop_reason(mut self, reason: impl Into<String>) -> Script {
        self.raw_stop_reason = Some(reason.into());
        self
    }

    /// The wire's stop reason: the raw one if scripted, else `mapped` of the effective one.
    pub fn wire_stop_reason(&self, mapped: fn(StopReason) -> &'static str) -> String {
        self.raw_stop_reason
            .clone()
            .unwrap_or_else(|| mapped(self.effective_stop_reason()).to_owned())
    }

    /// The effective stop reason (explicit, else derived from the items).
    pub fn effective_stop_reason(&self) -> StopReason {
        match self.stop_reason {
            Some(reason) => reason,
            None if self.items.iter().any(Item::is_tool_call) => StopReason::ToolUse,
            None => StopReason::Stop,
        }
    }
}
