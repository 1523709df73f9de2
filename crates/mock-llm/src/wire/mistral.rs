//! Mistral chat completions streaming: `chat.completion.chunk` objects as `data:` lines, then
//! `data: [DONE]`.
//!
//! Text streams as plain strings, thinking as Magistral content arrays
//! (`[{"type":"thinking","thinking":[{"type":"text","text":…}]}]`). Tool calls carry 9-character
//! alphanumeric ids and come whole, all consecutive calls in one delta (Mistral's usual
//! shape), unless the script sets a chunk size: then each call's arguments stream in pieces,
//! every piece repeating the call's id, name and index. Usage rides on the last chunk.

use serde::Serialize;
use serde_json::Value;

use super::{RenderCtx, WireFormat};
use crate::default_reply;
use crate::script::{Item, Script, ScriptUsage, StopReason};
use crate::sse::{Frame, to_json};
use crate::text::{DEFAULT_CHUNK_SIZE, item_text, split_chars, tool_arguments};

/// The Mistral chat completions wire format.
pub(crate) struct Mistral;

/// One `chat.completion.chunk`.
#[derive(Serialize)]
struct Chunk<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: [Choice<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
}

#[derive(Serialize)]
struct Choice<'a> {
    index: u32,
    delta: Delta<'a>,
    finish_reason: Option<&'static str>,
}

#[derive(Serialize, Default)]
struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<ToolCall<'a>>>,
}

/// `delta.content`: a string (text) or content chunks (thinking).
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Chunks([ThinkChunk<'a>; 1]),
}

#[derive(Serialize)]
struct ThinkChunk<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    thinking: [TextChunk<'a>; 1],
}

#[derive(Serialize)]
struct TextChunk<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct ToolCall<'a> {
    id: &'a str,
    function: Function<'a>,
    index: usize,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct Usage {
    prompt_tokens: u64,
    total_tokens: u64,
    completion_tokens: u64,
    prompt_tokens_details: PromptDetails,
}

#[derive(Serialize)]
struct PromptDetails {
    cached_tokens: u64,
}

impl Usage {
    fn from_script(usage: ScriptUsage) -> Usage {
        let prompt = usage.input + usage.cache_read + usage.cache_write;
        Usage {
            prompt_tokens: prompt,
            total_tokens: prompt + usage.output,
            completion_tokens: usage.output,
            prompt_tokens_details: PromptDetails {
                cached_tokens: usage.cache_read,
            },
        }
    }
}

fn finish_reason(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Stop => "stop",
        StopReason::Length => "length",
        StopReason::ToolUse => "tool_calls",
    }
}

/// A tool call ready to render: its id, name and argument text.
struct Call<'a> {
    id: String,
    name: &'a str,
    arguments: std::borrow::Cow<'a, str>,
    index: usize,
}

/// Shared fields of every chunk of one response.
struct Writer<'a> {
    id: &'a str,
    model: &'a str,
    created: u64,
    frames: Vec<Frame>,
}

impl Writer<'_> {
    fn push(&mut self, delta: Delta<'_>, finish: Option<&'static str>, usage: Option<Usage>) {
        let chunk = Chunk {
            id: self.id,
            object: "chat.completion.chunk",
            created: self.created,
            model: self.model,
            choices: [Choice {
                index: 0,
                delta,
                finish_reason: finish,
            }],
            usage,
        };
        self.frames.push(Frame::data(to_json(&chunk)));
    }

    fn push_whole_calls(&mut self, calls: &[Call<'_>], finish: Option<(&'static str, Usage)>) {
        let delta = Delta {
            tool_calls: Some(
                calls
                    .iter()
                    .map(|c| ToolCall {
                        id: &c.id,
                        function: Function {
                            name: c.name,
                            arguments: &c.arguments,
                        },
                        index: c.index,
                    })
                    .collect(),
            ),
            ..Delta::default()
        };
        let (finish, usage) = finish.map_or((None, None), |(f, u)| (Some(f), Some(u)));
        self.push(delta, finish, usage);
    }
}

/// A 9-character alphanumeric tool call id, as Mistral issues them.
fn tool_call_id(n: u64) -> String {
    format!("mock{:05}", n % 100_000)
}

impl WireFormat for Mistral {
    fn render(&self, script: &Script, ctx: &RenderCtx<'_>) -> Vec<Frame> {
        let id = script
            .response_id
            .clone()
            .unwrap_or_else(|| format!("{:032x}", 0x6d69_7374_7261_6c00_u64 + ctx.response_seq));
        let chunk_size = script.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE);
        // Mistral sends a tool call whole unless asked (by a chunk size) to split it.
        let split_calls = script.chunk_size.is_some();
        let mut out = Writer {
            id: &id,
            model: ctx.model(script),
            created: ctx.created,
            frames: Vec::new(),
        };
        out.push(
            Delta {
                role: Some("assistant"),
                content: Some(Content::Text("")),
                ..Delta::default()
            },
            None,
            None,
        );
        let finish = finish_reason(script.effective_stop_reason());
        let usage = Usage::from_script(ctx.usage(script));
        let mut pending: Vec<Call> = Vec::new();
        let mut tool_index = 0;
        for item in &script.items {
            if !item.is_tool_call() && !pending.is_empty() {
                out.push_whole_calls(&pending, None);
                pending.clear();
            }
            match item {
                Item::Text { .. } | Item::Filler { .. } => {
                    let text = item_text(item).unwrap_or_default();
                    for piece in split_chars(&text, chunk_size) {
                        let delta = Delta {
                            content: Some(Content::Text(piece)),
                            ..Delta::default()
                        };
                        out.push(delta, None, None);
                    }
                }
                Item::Thinking { text, .. } => {
                    for piece in split_chars(text, chunk_size) {
                        let chunk = ThinkChunk {
                            kind: "thinking",
                            thinking: [TextChunk {
                                kind: "text",
                                text: piece,
                            }],
                        };
                        let delta = Delta {
                            content: Some(Content::Chunks([chunk])),
                            ..Delta::default()
                        };
                        out.push(delta, None, None);
                    }
                }
                Item::RedactedThinking { .. } => {}
                Item::ToolCall { id, name, .. } | Item::ToolCallRaw { id, name, .. } => {
                    let call = Call {
                        id: id
                            .clone()
                            .unwrap_or_else(|| tool_call_id(ctx.next_tool_id())),
                        name,
                        arguments: tool_arguments(item).unwrap_or_default(),
                        index: tool_index,
                    };
                    tool_index += 1;
                    if !split_calls {
                        pending.push(call);
                        continue;
                    }
                    let pieces = split_chars(&call.arguments, chunk_size);
                    let pieces = if pieces.is_empty() { vec![""] } else { pieces };
                    for piece in pieces {
                        let delta = Delta {
                            tool_calls: Some(vec![ToolCall {
                                id: &call.id,
                                function: Function {
                                    name: call.name,
                                    arguments: piece,
                                },
                                index: call.index,
                            }]),
                            ..Delta::default()
                        };
                        out.push(delta, None, None);
                    }
                }
            }
        }
        if pending.is_empty() {
            let delta = Delta {
                content: Some(Content::Text("")),
                ..Delta::default()
            };
            out.push(delta, Some(finish), Some(usage));
        } else {
            // Whole tool calls arrive together with the finish reason and usage.
            out.push_whole_calls(&pending, Some((finish, usage)));
        }
        out.frames.push(Frame::data("[DONE]"));
        out.frames
    }

    fn malformed_frame(&self) -> Frame {
        Frame::data(
            r#"{"id":"6d616c666f726d6564","object":"chat.completion.chunk","created":0,"model":"x","choices":[{"index":0,"delta":{"content":"x""#,
        )
    }

    fn stream_error(&self, message: Option<&str>) -> Vec<Frame> {
        let message = message.unwrap_or("Internal server error");
        let body = serde_json::json!({
            "object": "error",
            "message": message,
            "type": "internal_server_error",
            "param": null,
            "code": "1000",
        });
        vec![Frame::data(body.to_string())]
    }

    fn error_body(&self, status: u16) -> String {
        let body = match status {
            // The gateway answers a bad key before the API sees the request.
            401 => serde_json::json!({"message": "Unauthorized", "request_id": "mock-request"}),
            422 => serde_json::json!({
                "object": "error",
                "message": {"detail": [{"type": "missing", "loc": ["body", "model"],
                    "msg": "Field required", "input": {}}]},
                "type": "invalid_request_error",
                "param": null,
                "code": null,
            }),
            _ => {
                let (message, kind, code) = match status {
                    400 => ("Invalid request", "invalid_request_error", Some("3000")),
                    403 => ("Forbidden", "forbidden", None),
                    404 => ("Invalid model: mock-model", "invalid_model", Some("1500")),
                    429 => ("Requests rate limit exceeded", "rate_limited", Some("1300")),
                    503 => ("Service unavailable", "service_unavailable", Some("1000")),
                    _ => (
                        "Internal server error",
                        "internal_server_error",
                        Some("1000"),
                    ),
                };
                serde_json::json!({
                    "object": "error",
                    "message": message,
                    "type": kind,
                    "param": null,
                    "code": code,
                })
            }
        };
        body.to_string()
    }

    fn extra_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[("mistral-correlation-id", "mock-correlation")]
    }

    /// Echoes the last user text (`ok: …`), answers `read …` with a `read` call and a tool
    /// result with `done: …`; Mistral's text chunks read like OpenAI content parts.
    fn default_reply(&self, request: &Value) -> Script {
        default_reply::from_messages(request)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;

    use super::*;

    fn render(script: &Script) -> Vec<Value> {
        let tool_seq = AtomicU64::new(0);
        let request = serde_json::json!({"model": "mistral-small-latest"});
        let ctx = RenderCtx {
            request: &request,
            request_len: 40,
            response_seq: 1,
            tool_seq: &tool_seq,
            created: 1_700_000_000,
        };
        Mistral
            .render(script, &ctx)
            .into_iter()
            .map(|f| serde_json::from_str(&f.data).unwrap_or(Value::String(f.data)))
            .collect()
    }

    #[test]
    fn text_thinking_and_whole_tool_calls() {
        let script = Script::new(vec![
            Item::thinking("hmm"),
            Item::text("Hi"),
            Item::tool_call("read", serde_json::json!({"path": "a"})),
            Item::tool_call("ls", serde_json::json!({})),
        ])
        .with_usage(10, 5);
        let frames = render(&script);
        assert_eq!(
            frames[0]["choices"][0]["delta"],
            serde_json::json!({"role": "assistant", "content": ""})
        );
        assert_eq!(frames[0]["object"], "chat.completion.chunk");
        assert_eq!(frames[0]["model"], "mistral-small-latest");
        assert_eq!(
            frames[1]["choices"][0]["delta"]["content"],
            serde_json::json!([{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}])
        );
        assert_eq!(frames[2]["choices"][0]["delta"]["content"], "Hi");
        let last = &frames[3];
        let calls = last["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["id"], "mock00001");
        assert_eq!(calls[0]["function"]["arguments"], r#"{"path":"a"}"#);
        assert_eq!(calls[1]["index"], 1);
        assert_eq!(last["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(last["usage"]["prompt_tokens"], 10);
        assert_eq!(last["usage"]["total_tokens"], 15);
        assert_eq!(frames[4], Value::String("[DONE]".into()));
    }

    #[test]
    fn chunked_tool_calls_repeat_id_and_index() {
        let script =
            Script::tool_call("read", serde_json::json!({"path": "abc"})).with_chunk_size(4);
        let frames = render(&script);
        let pieces: Vec<&Value> = frames[1..frames.len() - 2]
            .iter()
            .map(|f| &f["choices"][0]["delta"]["tool_calls"][0])
            .collect();
        assert!(pieces.len() > 2);
        assert!(
            pieces
                .iter()
                .all(|p| p["id"] == "mock00001" && p["index"] == 0)
        );
        let args: String = pieces
            .iter()
            .map(|p| p["function"]["arguments"].as_str().unwrap())
            .collect();
        assert_eq!(args, r#"{"path":"abc"}"#);
        let finish = &frames[frames.len() - 2]["choices"][0];
        assert_eq!(finish["finish_reason"], "tool_calls");
        assert_eq!(finish["delta"]["content"], "");
    }

    #[test]
    fn error_bodies_use_mistral_shapes() {
        let body: Value = serde_json::from_str(&Mistral.error_body(429)).unwrap();
        assert_eq!(body["object"], "error");
        assert_eq!(body["type"], "rate_limited");
        assert_eq!(body["code"], "1300");
        let body: Value = serde_json::from_str(&Mistral.error_body(401)).unwrap();
        assert_eq!(body["message"], "Unauthorized");
    }
}
