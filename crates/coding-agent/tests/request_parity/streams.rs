//! Streams that servers send in shapes the upstream ledger's decoder rows are about,
//! written out event by event for mock-llm to replay verbatim. What a pi made of a stream
//! shows in its next request: the thinking, signatures and reasoning items it replays.

use mock_llm::Script;
use serde_json::{Value, json};

use super::scenarios::NOTES_FILE;

/// `events` as an SSE body of `data:` lines, closed by `[DONE]` when `done`.
fn sse(events: &[Value], done: bool) -> String {
    let mut out = String::new();
    for event in events {
        out.push_str(&format!("data: {event}\n\n"));
    }
    if done {
        out.push_str("data: [DONE]\n\n");
    }
    out
}

/// One Chat Completions chunk whose only choice carries `delta` (and `finish`).
fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-parity", "object": "chat.completion.chunk", "created": 1,
           "model": "parity", "choices": [{"index": 0, "delta": delta,
           "finish_reason": finish}]})
}

/// The Chat Completions chunks of a `read` call of the notes file with id `call_1`.
fn read_call_chunks() -> Vec<Value> {
    let arguments = json!({"path": NOTES_FILE}).to_string();
    vec![
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                   "function": {"name": "read", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        json!({"id": "chatcmpl-parity", "object": "chat.completion.chunk", "created": 1,
               "model": "parity", "choices": [],
               "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}),
    ]
}

/// pi 0.79.10: an encrypted `reasoning_details` entry for the call arrives before the
/// call's own deltas.
pub fn completions_early_encrypted_details() -> Script {
    let mut events = vec![chunk(
        json!({"role": "assistant", "reasoning_details": [{"type": "reasoning.encrypted",
               "data": "ENCRYPTED-PARITY", "id": "call_1", "format": "openai-responses-v1",
               "index": 0}]}),
        None,
    )];
    events.extend(read_call_chunks());
    Script::raw(sse(&events, true))
}

/// pi 0.84.3 / 0.84.4: text and summary `reasoning_details` streamed in pieces (merged
/// into one entry each, kept in order) and an encrypted one, before a call.
pub fn completions_split_details() -> Script {
    let detail = |value: Value| chunk(json!({"reasoning_details": [value]}), None);
    let mut events = vec![
        detail(
            json!({"type": "reasoning.text", "text": "I should ", "index": 0,
                      "format": "anthropic-claude-v1"}),
        ),
        detail(
            json!({"type": "reasoning.text", "text": "read the file.", "index": 0,
                      "signature": "SIG-PARITY", "format": "anthropic-claude-v1"}),
        ),
        detail(
            json!({"type": "reasoning.summary", "summary": "Reading ", "index": 1,
                      "format": "anthropic-claude-v1"}),
        ),
        detail(
            json!({"type": "reasoning.summary", "summary": "the notes.", "index": 1,
                      "format": "anthropic-claude-v1"}),
        ),
        detail(
            json!({"type": "reasoning.encrypted", "data": "ENC-PARITY", "index": 2,
                      "format": "anthropic-claude-v1"}),
        ),
    ];
    events.extend(read_call_chunks());
    Script::raw(sse(&events, true))
}

/// A Responses event of `kind` with `fields`.
fn event(kind: &str, fields: Value) -> Value {
    let mut value = json!({"type": kind});
    if let (Some(map), Value::Object(fields)) = (value.as_object_mut(), fields) {
        map.extend(fields);
    }
    value
}

/// The reasoning item `rs_1` as done, with `encrypted` content when given.
fn reasoning_item(encrypted: Option<&str>) -> Value {
    let mut item = json!({"type": "reasoning", "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "I should read the file."}]});
    if let Some(encrypted) = encrypted {
        item["encrypted_content"] = json!(encrypted);
    }
    item
}

/// The function call item `fc_1` (call `call_1`) reading the notes file.
fn call_item(done: bool) -> Value {
    let arguments = if done {
        json!({"path": NOTES_FILE}).to_string()
    } else {
        String::new()
    };
    let mut item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
        "name": "read", "arguments": arguments});
    if done {
        item["status"] = json!("completed");
    }
    item
}

/// How a Responses stream of a reasoning item and a call is laid out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ResponsesShape {
    /// pi 0.80.7: the reasoning's `encrypted_content` only in `response.completed`.
    EncryptedAtCompletion,
    /// pi 0.80.3: both items open, then the call finishes before the reasoning.
    OutOfOrder,
    /// pi 0.99.0: no `output_index` on any event (llama.cpp).
    NoOutputIndex,
}

/// A Responses stream that thinks (`rs_1`) and calls `read` (`fc_1`), laid out as `shape`.
pub fn responses_reasoning_then_call(shape: ResponsesShape) -> Script {
    let index = |i: u64| {
        if shape == ResponsesShape::NoOutputIndex {
            json!({})
        } else {
            json!({"output_index": i})
        }
    };
    let with = |kind: &str, at: u64, fields: Value| {
        let mut fields = fields;
        if let (Some(map), Value::Object(extra)) = (fields.as_object_mut(), index(at)) {
            map.extend(extra);
        }
        event(kind, fields)
    };
    let summary = "I should read the file.";
    let arguments = json!({"path": NOTES_FILE}).to_string();
    let done_encrypted = match shape {
        ResponsesShape::EncryptedAtCompletion => None,
        _ => Some("ENCRYPTED-PARITY"),
    };
    let reasoning_added = with(
        "response.output_item.added",
        0,
        json!({"item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
    );
    let summary_events = vec![
        with(
            "response.reasoning_summary_part.added",
            0,
            json!({"item_id": "rs_1", "summary_index": 0,
                   "part": {"type": "summary_text", "text": ""}}),
        ),
        with(
            "response.reasoning_summary_text.delta",
            0,
            json!({"item_id": "rs_1", "summary_index": 0, "delta": summary}),
        ),
        with(
            "response.reasoning_summary_part.done",
            0,
            json!({"item_id": "rs_1", "summary_index": 0,
                   "part": {"type": "summary_text", "text": summary}}),
        ),
    ];
    let reasoning_done = with(
        "response.output_item.done",
        0,
        json!({"item": reasoning_item(done_encrypted)}),
    );
    let call_added = with(
        "response.output_item.added",
        1,
        json!({"item": call_item(false)}),
    );
    let call_events = vec![
        with(
            "response.function_call_arguments.delta",
            1,
            json!({"item_id": "fc_1", "delta": arguments}),
        ),
        with(
            "response.function_call_arguments.done",
            1,
            json!({"item_id": "fc_1", "arguments": arguments}),
        ),
    ];
    let call_done = with(
        "response.output_item.done",
        1,
        json!({"item": call_item(true)}),
    );
    let mut events = vec![event(
        "response.created",
        json!({"response": {"id": "resp_parity", "status": "in_progress", "output": []}}),
    )];
    if shape == ResponsesShape::OutOfOrder {
        events.push(reasoning_added);
        events.extend(summary_events);
        events.push(call_added);
        events.extend(call_events);
        events.push(call_done);
        events.push(reasoning_done);
    } else {
        events.push(reasoning_added);
        events.extend(summary_events);
        events.push(reasoning_done);
        events.push(call_added);
        events.extend(call_events);
        events.push(call_done);
    }
    events.push(event(
        "response.completed",
        json!({"response": {"id": "resp_parity", "status": "completed",
            "output": [reasoning_item(Some("ENCRYPTED-PARITY")), call_item(true)],
            "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 10}}}}),
    ));
    Script::raw(sse(&events, false))
}
