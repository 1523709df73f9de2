//! OpenAI Responses streaming, as OpenAI, Azure OpenAI and the ChatGPT Codex backend send it:
//! named SSE events (`event: response.created` …) whose data carries the same `type` and a
//! `sequence_number`, from `response.created` to `response.completed` (or
//! `response.incomplete` when the output limit was hit). No `[DONE]` terminator.

use serde_json::{Map, Value, json};

use super::openai_chat::OpenAiChat;
use super::{RenderCtx, WireFormat};
use crate::default_reply;
use crate::script::{Item, Script, ScriptUsage, StopReason};
use crate::sse::{Frame, to_json};
use crate::text::{DEFAULT_CHUNK_SIZE, item_text, split_chars, tool_arguments};

/// OpenAI Responses streaming (`response.created` … `response.completed`), also used by Azure and Codex.
pub(crate) struct OpenAiResponses;

/// Builds the event sequence of one response, numbering events as it goes.
struct Events {
    seq: u64,
    frames: Vec<Frame>,
}

impl Events {
    /// Appends one event: `event: <type>` and the data with `type` and `sequence_number` first.
    fn push(&mut self, kind: &str, fields: Value) {
        let mut data = Map::new();
        data.insert("type".into(), Value::from(kind));
        data.insert("sequence_number".into(), Value::from(self.seq));
        if let Value::Object(fields) = fields {
            data.extend(fields);
        }
        self.seq += 1;
        self.frames
            .push(Frame::named(kind, to_json(&Value::Object(data))));
    }
}

/// The `response` object of the lifecycle events.
struct ResponseShape<'a> {
    id: &'a str,
    created: u64,
    model: &'a str,
    request: &'a Value,
}

impl ResponseShape<'_> {
    fn object(&self, status: &str, output: &[Value], usage: Option<ScriptUsage>) -> Value {
        let incomplete = (status == "incomplete").then(|| json!({"reason": "max_output_tokens"}));
        let tier = self
            .request
            .get("service_tier")
            .and_then(Value::as_str)
            .filter(|t| *t != "auto")
            .unwrap_or("default");
        json!({
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "background": false,
            "error": null,
            "incomplete_details": incomplete,
            "instructions": self.request.get("instructions").cloned().unwrap_or(Value::Null),
            "max_output_tokens": self.request.get("max_output_tokens").cloned().unwrap_or(Value::Null),
            "model": self.model,
            "output": output,
            "parallel_tool_calls": true,
            "previous_response_id": null,
            "reasoning": self.request.get("reasoning").cloned()
                .unwrap_or_else(|| json!({"effort": null, "summary": null})),
            "service_tier": tier,
            "store": self.request.get("store").cloned().unwrap_or(Value::Bool(false)),
            "temperature": 1.0,
            "text": {"format": {"type": "text"}},
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage.map(usage_json),
            "user": null,
            "metadata": {}
        })
    }
}

fn usage_json(usage: ScriptUsage) -> Value {
    let input = usage.input + usage.cache_read + usage.cache_write;
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": usage.cache_read},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": input + usage.output
    })
}

/// Whether the request asked for reasoning as `encrypted_content`.
fn wants_encrypted_reasoning(request: &Value) -> bool {
    request
        .get("include")
        .and_then(Value::as_array)
        .is_some_and(|i| i.iter().any(|v| v == "reasoning.encrypted_content"))
}

/// A deterministic stand-in for an encrypted reasoning payload.
fn encrypted_payload(id: &str, text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in id.bytes().chain(text.bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("gAAAAABmock{hash:016x}{}", text.len())
}

fn render_message(out: &mut Events, id: &str, index: usize, text: &str, chunk: usize) -> Value {
    out.push(
        "response.output_item.added",
        json!({"output_index": index, "item": {"id": id, "type": "message",
            "status": "in_progress", "content": [], "role": "assistant"}}),
    );
    let empty_part = json!({"type": "output_text", "annotations": [], "logprobs": [], "text": ""});
    out.push(
        "response.content_part.added",
        json!({"item_id": id, "output_index": index, "content_index": 0, "part": empty_part}),
    );
    for piece in split_chars(text, chunk) {
        out.push(
            "response.output_text.delta",
            json!({"item_id": id, "output_index": index, "content_index": 0,
                "delta": piece, "logprobs": []}),
        );
    }
    out.push(
        "response.output_text.done",
        json!({"item_id": id, "output_index": index, "content_index": 0,
            "text": text, "logprobs": []}),
    );
    let part = json!({"type": "output_text", "annotations": [], "logprobs": [], "text": text});
    out.push(
        "response.content_part.done",
        json!({"item_id": id, "output_index": index, "content_index": 0, "part": part}),
    );
    let item = json!({"id": id, "type": "message", "status": "completed",
        "content": [part], "role": "assistant"});
    out.push(
        "response.output_item.done",
        json!({"output_index": index, "item": item}),
    );
    item
}

fn render_reasoning(
    out: &mut Events,
    id: &str,
    index: usize,
    text: &str,
    encrypted: Option<String>,
    chunk: usize,
) -> Value {
    out.push(
        "response.output_item.added",
        json!({"output_index": index, "item": {"id": id, "type": "reasoning", "summary": []}}),
    );
    let mut summary = Vec::new();
    if !text.is_empty() {
        out.push(
            "response.reasoning_summary_part.added",
            json!({"item_id": id, "output_index": index, "summary_index": 0,
                "part": {"type": "summary_text", "text": ""}}),
        );
        for piece in split_chars(text, chunk) {
            out.push(
                "response.reasoning_summary_text.delta",
                json!({"item_id": id, "output_index": index, "summary_index": 0, "delta": piece}),
            );
        }
        out.push(
            "response.reasoning_summary_text.done",
            json!({"item_id": id, "output_index": index, "summary_index": 0, "text": text}),
        );
        let part = json!({"type": "summary_text", "text": text});
        out.push(
            "response.reasoning_summary_part.done",
            json!({"item_id": id, "output_index": index, "summary_index": 0, "part": part}),
        );
        summary.push(part);
    }
    let mut item = Map::new();
    item.insert("id".into(), Value::from(id));
    item.insert("type".into(), Value::from("reasoning"));
    if let Some(encrypted) = encrypted {
        item.insert("encrypted_content".into(), Value::from(encrypted));
    }
    item.insert("summary".into(), Value::Array(summary));
    let item = Value::Object(item);
    out.push(
        "response.output_item.done",
        json!({"output_index": index, "item": item}),
    );
    item
}

fn render_function_call(
    out: &mut Events,
    ids: (&str, &str),
    index: usize,
    name: &str,
    arguments: &str,
    chunk: usize,
) -> Value {
    let (id, call_id) = ids;
    out.push(
        "response.output_item.added",
        json!({"output_index": index, "item": {"id": id, "type": "function_call",
            "status": "in_progress", "arguments": "", "call_id": call_id, "name": name}}),
    );
    for piece in split_chars(arguments, chunk) {
        out.push(
            "response.function_call_arguments.delta",
            json!({"item_id": id, "output_index": index, "delta": piece}),
        );
    }
    out.push(
        "response.function_call_arguments.done",
        json!({"item_id": id, "output_index": index, "arguments": arguments, "name": name}),
    );
    let item = json!({"id": id, "type": "function_call", "status": "completed",
        "arguments": arguments, "call_id": call_id, "name": name});
    out.push(
        "response.output_item.done",
        json!({"output_index": index, "item": item}),
    );
    item
}

/// The request's `input` as chat messages, for the shared echo behaviour.
fn input_as_messages(request: &Value) -> Value {
    let mut messages = Vec::new();
    match request.get("input") {
        Some(Value::String(text)) => messages.push(json!({"role": "user", "content": text})),
        Some(Value::Array(items)) => {
            for item in items {
                if item.get("type").and_then(Value::as_str) == Some("function_call_output") {
                    let output = item.get("output").cloned().unwrap_or(Value::Null);
                    messages.push(json!({"role": "tool", "content": output}));
                } else if let Some(role) = item.get("role").and_then(Value::as_str) {
                    let content = item.get("content").cloned().unwrap_or(Value::Null);
                    messages.push(json!({"role": role, "content": content}));
                }
            }
        }
        _ => {}
    }
    json!({ "messages": messages })
}

impl WireFormat for OpenAiResponses {
    fn render(&self, script: &Script, ctx: &RenderCtx<'_>) -> Vec<Frame> {
        let seq = ctx.response_seq;
        let id = script
            .response_id
            .clone()
            .unwrap_or_else(|| format!("resp_mock{seq:04}"));
        let chunk = script.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE);
        let shape = ResponseShape {
            id: &id,
            created: ctx.created,
            model: ctx.model(script),
            request: ctx.request,
        };
        let mut out = Events {
            seq: 0,
            frames: Vec::new(),
        };
        out.push(
            "response.created",
            json!({"response": shape.object("in_progress", &[], None)}),
        );
        out.push(
            "response.in_progress",
            json!({"response": shape.object("in_progress", &[], None)}),
        );
        let encrypted_wanted = wants_encrypted_reasoning(ctx.request);
        let mut output = Vec::with_capacity(script.items.len());
        for (index, item) in script.items.iter().enumerate() {
            let rendered = match item {
                Item::Text { .. } | Item::Filler { .. } => {
                    let text = item_text(item).unwrap_or_default();
                    let item_id = format!("msg_mock{seq:04}_{index}");
                    render_message(&mut out, &item_id, index, &text, chunk)
                }
                Item::Thinking { text, signature } => {
                    let item_id = format!("rs_mock{seq:04}_{index}");
                    let encrypted = signature
                        .clone()
                        .or_else(|| encrypted_wanted.then(|| encrypted_payload(&item_id, text)));
                    render_reasoning(&mut out, &item_id, index, text, encrypted, chunk)
                }
                Item::RedactedThinking { data } => {
                    let item_id = format!("rs_mock{seq:04}_{index}");
                    render_reasoning(&mut out, &item_id, index, "", Some(data.clone()), chunk)
                }
                Item::ToolCall { id, name, .. } | Item::ToolCallRaw { id, name, .. } => {
                    let call_id = id
                        .clone()
                        .unwrap_or_else(|| format!("call_{}", ctx.next_tool_id()));
                    let item_id = format!("fc_mock{seq:04}_{index}");
                    let arguments = tool_arguments(item).unwrap_or_default();
                    render_function_call(
                        &mut out,
                        (&item_id, &call_id),
                        index,
                        name,
                        &arguments,
                        chunk,
                    )
                }
            };
            output.push(rendered);
        }
        let usage = Some(ctx.usage(script));
        match script.effective_stop_reason() {
            StopReason::Length => out.push(
                "response.incomplete",
                json!({"response": shape.object("incomplete", &output, usage)}),
            ),
            StopReason::Stop | StopReason::ToolUse => out.push(
                "response.completed",
                json!({"response": shape.object("completed", &output, usage)}),
            ),
        }
        out.frames
    }

    fn malformed_frame(&self) -> Frame {
        Frame::named(
            "response.output_text.delta",
            r#"{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_x","output_index":0,"content_index":0,"delta":"x"#,
        )
    }

    fn stream_error(&self, message: Option<&str>) -> Vec<Frame> {
        let message = message.unwrap_or("The server had an error while processing your request.");
        let data = json!({
            "type": "response.failed",
            "sequence_number": 0,
            "response": {
                "id": "resp_failed",
                "object": "response",
                "status": "failed",
                "error": {"code": "server_error", "message": message},
                "incomplete_details": null,
                "output": [],
                "usage": null
            }
        });
        vec![Frame::named("response.failed", data.to_string())]
    }

    fn error_body(&self, status: u16) -> String {
        OpenAiChat.error_body(status)
    }

    fn extra_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[("x-request-id", "req_mock")]
    }

    fn default_reply(&self, request: &Value) -> Script {
        default_reply::from_messages(&input_as_messages(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    fn render(script: &Script, request: &Value) -> Vec<Value> {
        let tool_seq = AtomicU64::new(0);
        let ctx = RenderCtx {
            request,
            request_len: 400,
            response_seq: 1,
            tool_seq: &tool_seq,
            created: 1_700_000_000,
        };
        OpenAiResponses
            .render(script, &ctx)
            .iter()
            .map(|f| {
                let data: Value = serde_json::from_str(&f.data).unwrap();
                assert_eq!(f.event.as_deref(), data["type"].as_str());
                data
            })
            .collect()
    }

    #[test]
    fn events_are_numbered_and_end_completed() {
        let events = render(&Script::text("hello"), &Value::Null);
        for (i, event) in events.iter().enumerate() {
            assert_eq!(event["sequence_number"], i as u64);
        }
        let last = events.last().unwrap();
        assert_eq!(last["type"], "response.completed");
        assert_eq!(last["response"]["output"][0]["content"][0]["text"], "hello");
        assert_eq!(last["response"]["usage"]["input_tokens"], 100);
    }

    #[test]
    fn reasoning_carries_encrypted_content_when_asked() {
        let script = Script::thinking_then_text("think", "ok");
        let request = json!({"include": ["reasoning.encrypted_content"]});
        let events = render(&script, &request);
        let done = events
            .iter()
            .find(|e| e["type"] == "response.output_item.done")
            .unwrap();
        assert_eq!(done["item"]["type"], "reasoning");
        assert!(
            done["item"]["encrypted_content"]
                .as_str()
                .unwrap()
                .starts_with("gAAAA")
        );
        assert_eq!(done["item"]["summary"][0]["text"], "think");
        let plain = render(&script, &Value::Null);
        let done = plain
            .iter()
            .find(|e| e["type"] == "response.output_item.done")
            .unwrap();
        assert!(done["item"].get("encrypted_content").is_none());
    }

    #[test]
    fn length_ends_incomplete_and_usage_counts_cache() {
        let script = Script::text("cut")
            .with_stop_reason(StopReason::Length)
            .with_full_usage(ScriptUsage {
                input: 10,
                output: 5,
                cache_read: 90,
                cache_write: 0,
                reasoning: 0,
            });
        let events = render(&script, &Value::Null);
        let last = events.last().unwrap();
        assert_eq!(last["type"], "response.incomplete");
        assert_eq!(last["response"]["status"], "incomplete");
        assert_eq!(
            last["response"]["usage"],
            json!({"input_tokens": 100, "input_tokens_details": {"cached_tokens": 90},
                "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 105})
        );
    }

    #[test]
    fn echo_reads_the_input_items() {
        let request = json!({"input": [
            {"role": "developer", "content": "sys"},
            {"role": "user", "content": [{"type": "input_text", "text": "hello"}]}]});
        assert_eq!(
            OpenAiResponses.default_reply(&request).items,
            vec![Item::text("ok: hello")]
        );
        let request = json!({"input": [
            {"role": "user", "content": [{"type": "input_text", "text": "read a"}]},
            {"type": "function_call", "call_id": "c", "name": "read", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": "file body"}]});
        assert_eq!(
            OpenAiResponses.default_reply(&request).items,
            vec![Item::text("done: file body")]
        );
        let request = json!({"input": "read x.txt"});
        assert_eq!(
            OpenAiResponses.default_reply(&request).items,
            vec![Item::tool_call("read", json!({"path": "x.txt"}))]
        );
    }
}
