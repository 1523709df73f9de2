//! OpenAI Chat Completions streaming (`chat.completion.chunk` SSE + `[DONE]`).

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::Value;

use super::{RenderCtx, WireFormat};
use crate::script::{Item, Script, ScriptUsage, StopReason};
use crate::sse::{Frame, to_json};
use crate::text::{DEFAULT_CHUNK_SIZE, item_text, split_chars, tool_arguments};

/// The OpenAI Chat Completions wire format.
pub(crate) struct OpenAiChat;

/// One `chat.completion.chunk` object.
#[derive(Serialize)]
struct Chunk<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    system_fingerprint: &'static str,
    choices: Vec<Choice<'a>>,
    /// Absent unless `include_usage`; then `null` on every chunk but the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Option<Value>>,
}

#[derive(Serialize)]
struct Choice<'a> {
    index: u32,
    delta: Delta<'a>,
    logprobs: Option<()>,
    finish_reason: Option<&'static str>,
}

/// The `delta` object; serialized by hand to control field names and order.
enum Delta<'a> {
    Role,
    Content(&'a str),
    Reasoning {
        field: &'a str,
        text: &'a str,
    },
    ToolStart {
        index: usize,
        id: &'a str,
        name: &'a str,
    },
    ToolArgs {
        index: usize,
        arguments: &'a str,
    },
    Empty,
}

#[derive(Serialize)]
struct ToolStart<'a> {
    index: usize,
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionStart<'a>,
}

#[derive(Serialize)]
struct FunctionStart<'a> {
    name: &'a str,
    arguments: &'static str,
}

#[derive(Serialize)]
struct ToolArgs<'a> {
    index: usize,
    function: FunctionArgs<'a>,
}

#[derive(Serialize)]
struct FunctionArgs<'a> {
    arguments: &'a str,
}

impl Serialize for Delta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            Delta::Role => {
                map.serialize_entry("role", "assistant")?;
                map.serialize_entry("content", "")?;
            }
            Delta::Content(text) => map.serialize_entry("content", text)?,
            Delta::Reasoning { field, text } => map.serialize_entry(field, text)?,
            Delta::ToolStart { index, id, name } => {
                let call = ToolStart {
                    index: *index,
                    id,
                    kind: "function",
                    function: FunctionStart {
                        name,
                        arguments: "",
                    },
                };
                map.serialize_entry("tool_calls", &[call])?;
            }
            Delta::ToolArgs { index, arguments } => {
                let call = ToolArgs {
                    index: *index,
                    function: FunctionArgs { arguments },
                };
                map.serialize_entry("tool_calls", &[call])?;
            }
            Delta::Empty => {}
        }
        map.end()
    }
}

#[derive(Serialize)]
struct Usage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    prompt_tokens_details: PromptDetails,
    completion_tokens_details: CompletionDetails,
}

#[derive(Serialize)]
struct PromptDetails {
    cached_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_write_tokens: Option<u64>,
}

#[derive(Serialize)]
struct CompletionDetails {
    reasoning_tokens: u64,
}

impl Usage {
    /// The wire's usage object, with the script's `usageExtra` fields set over it (a
    /// server's own fields, such as Copilot's top-level `reasoning_tokens`).
    fn object(usage: ScriptUsage, extra: Option<&serde_json::Map<String, Value>>) -> Value {
        let mut object = serde_json::to_value(Usage::from_script(usage)).unwrap_or_default();
        if let (Some(fields), Some(extra)) = (object.as_object_mut(), extra) {
            fields.extend(extra.clone());
        }
        object
    }

    fn from_script(usage: ScriptUsage) -> Usage {
        let prompt = usage.input + usage.cache_read + usage.cache_write;
        Usage {
            prompt_tokens: prompt,
            completion_tokens: usage.output,
            total_tokens: prompt + usage.output,
            prompt_tokens_details: PromptDetails {
                cached_tokens: usage.cache_read,
                cache_write_tokens: (usage.cache_write > 0).then_some(usage.cache_write),
            },
            completion_tokens_details: CompletionDetails {
                reasoning_tokens: usage.reasoning,
            },
        }
    }
}

/// Shared fields of every chunk in one response.
struct ChunkWriter<'a> {
    id: &'a str,
    model: &'a str,
    created: u64,
    include_usage: bool,
    frames: Vec<Frame>,
}

impl ChunkWriter<'_> {
    fn push(&mut self, delta: Delta<'_>, finish_reason: Option<&'static str>) {
        let choice = Choice {
            index: 0,
            delta,
            logprobs: None,
            finish_reason,
        };
        self.push_chunk(vec![choice], self.include_usage.then_some(None));
    }

    fn push_chunk(&mut self, choices: Vec<Choice<'_>>, usage: Option<Option<Value>>) {
        let chunk = Chunk {
            id: self.id,
            object: "chat.completion.chunk",
            created: self.created,
            model: self.model,
            system_fingerprint: "fp_mock",
            choices,
            usage,
        };
        self.frames.push(Frame::data(to_json(&chunk)));
    }
}

fn include_usage(request: &Value) -> bool {
    request
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn finish_reason(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Stop => "stop",
        StopReason::Length => "length",
        StopReason::ToolUse => "tool_calls",
    }
}

impl WireFormat for OpenAiChat {
    fn render(&self, script: &Script, ctx: &RenderCtx<'_>) -> Vec<Frame> {
        let id = script
            .response_id
            .clone()
            .unwrap_or_else(|| format!("chatcmpl-{}", ctx.response_seq));
        let chunk_size = script.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE);
        let reasoning_field = script
            .reasoning_field
            .as_deref()
            .unwrap_or("reasoning_content");
        let mut out = ChunkWriter {
            id: &id,
            model: ctx.model(script),
            created: ctx.created,
            include_usage: include_usage(ctx.request),
            frames: Vec::new(),
        };
        out.push(Delta::Role, None);
        let mut tool_index = 0;
        for item in &script.items {
            match item {
                Item::Text { .. } | Item::Filler { .. } => {
                    let text = item_text(item).unwrap_or_default();
                    for piece in split_chars(&text, chunk_size) {
                        out.push(Delta::Content(piece), None);
                    }
                }
                Item::Thinking { text, .. } => {
                    for piece in split_chars(text, chunk_size) {
                        out.push(
                            Delta::Reasoning {
                                field: reasoning_field,
                                text: piece,
                            },
                            None,
                        );
                    }
                }
                Item::RedactedThinking { .. } => {}
                Item::ToolCall { id, name, .. } | Item::ToolCallRaw { id, name, .. } => {
                    let call_id = id
                        .clone()
                        .unwrap_or_else(|| format!("call_{}", ctx.next_tool_id()));
                    out.push(
                        Delta::ToolStart {
                            index: tool_index,
                            id: &call_id,
                            name,
                        },
                        None,
                    );
                    let arguments = tool_arguments(item).unwrap_or_default();
                    for piece in split_chars(&arguments, chunk_size) {
                        out.push(
                            Delta::ToolArgs {
                                index: tool_index,
                                arguments: piece,
                            },
                            None,
                        );
                    }
                    tool_index += 1;
                }
            }
        }
        out.push(
            Delta::Empty,
            Some(finish_reason(script.effective_stop_reason())),
        );
        if out.include_usage {
            let usage = Usage::object(ctx.usage(script), script.usage_extra.as_ref());
            out.push_chunk(Vec::new(), Some(Some(usage)));
        }
        out.frames.push(Frame::data("[DONE]"));
        out.frames
    }

    fn malformed_frame(&self) -> Frame {
        Frame::data(
            r#"{"id":"chatcmpl-malformed","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x""#,
        )
    }

    fn stream_error(&self, message: Option<&str>) -> Vec<Frame> {
        let message = message.unwrap_or("The server had an error while processing your request.");
        let body = serde_json::json!({"error": {"message": message, "type": "server_error"}});
        vec![Frame::data(body.to_string())]
    }

    fn error_body(&self, status: u16) -> String {
        let (message, kind, code) = match status {
            400 => ("Bad request", "invalid_request_error", None),
            401 => (
                "Incorrect API key provided",
                "invalid_request_error",
                Some("invalid_api_key"),
            ),
            403 => (
                "You are not allowed to access this resource",
                "invalid_request_error",
                None,
            ),
            404 => (
                "The model does not exist",
                "invalid_request_error",
                Some("model_not_found"),
            ),
            429 => (
                "Rate limit reached for requests",
                "requests",
                Some("rate_limit_exceeded"),
            ),
            500 => (
                "The server had an error while processing your request.",
                "server_error",
                None,
            ),
            502 => ("Bad gateway.", "server_error", None),
            503 => (
                "The server is overloaded or not ready yet.",
                "server_error",
                None,
            ),
            529 => ("Overloaded", "server_error", None),
            _ => ("Mock error", "server_error", None),
        };
        let body = serde_json::json!({
            "error": {"message": message, "type": kind, "param": null, "code": code}
        });
        body.to_string()
    }

    fn extra_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[("x-request-id", "req_mock")]
    }
}
