//! Gemini `streamGenerateContent?alt=sse` streaming (Gemini API and Vertex AI), and its Cloud
//! Code Assist variant (`v1internal:streamGenerateContent`, every chunk wrapped in `response`).
//!
//! Each SSE event is one `GenerateContentResponse`: a candidate whose `content.parts` hold one
//! text piece, thought piece (`thought: true`, the script's signature on its last piece) or a
//! whole `functionCall` (Gemini never splits arguments; parallel calls get a chunk each), plus
//! `usageMetadata`, `modelVersion` and `responseId`. The last chunk carries `finishReason` and
//! the full usage (a script without output gets one chunk whose content has no parts). There
//! is no terminator: the body just ends.

use serde_json::{Map, Value, json};

use super::{RenderCtx, WireFormat};
use crate::script::{Item, Script, StopReason};
use crate::sse::{Frame, to_json};
use crate::text::{DEFAULT_CHUNK_SIZE, item_text, split_chars};

/// The Gemini API / Vertex AI wire format.
pub(crate) struct Google;

/// The Cloud Code Assist wire format.
pub(crate) struct GeminiCli;

const DEFAULT_STREAM_ERROR: &str = "An internal error has occurred. Please retry or report in \
https://developers.generativeai.google/guide/troubleshooting";

fn finish_reason(reason: StopReason) -> &'static str {
    match reason {
        // Gemini ends function-calling turns with STOP too.
        StopReason::Stop | StopReason::ToolUse => "STOP",
        StopReason::Length => "MAX_TOKENS",
    }
}

/// The parts of each chunk, in order.
fn chunk_parts(script: &Script) -> Vec<Vec<Value>> {
    let chunk_size = script.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE);
    let mut chunks = Vec::new();
    for item in &script.items {
        match item {
            Item::Text { .. } | Item::Filler { .. } => {
                let text = item_text(item).unwrap_or_default();
                for piece in split_chars(&text, chunk_size) {
                    chunks.push(vec![json!({"text": piece})]);
                }
            }
            Item::Thinking { text, signature } => {
                let mut pieces: Vec<Value> = split_chars(text, chunk_size)
                    .into_iter()
                    .map(|piece| json!({"text": piece, "thought": true}))
                    .collect();
                if pieces.is_empty() && signature.is_some() {
                    pieces.push(json!({"text": "", "thought": true}));
                }
                if let (Some(signature), Some(Value::Object(last))) = (signature, pieces.last_mut())
                {
                    last.insert("thoughtSignature".into(), Value::from(signature.as_str()));
                }
                chunks.extend(pieces.into_iter().map(|p| vec![p]));
            }
            Item::RedactedThinking { .. } => {}
            Item::ToolCall {
                id,
                name,
                arguments,
            } => chunks.push(vec![function_call(id.as_deref(), name, arguments.clone())]),
            Item::ToolCallRaw {
                id,
                name,
                arguments,
            } => {
                // Gemini sends arguments as an object; text that is not one becomes `{}`.
                let args = serde_json::from_str::<Value>(arguments)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| Value::Object(Map::new()));
                chunks.push(vec![function_call(id.as_deref(), name, args)]);
            }
        }
    }
    chunks
}

fn function_call(id: Option<&str>, name: &str, args: Value) -> Value {
    let mut call = Map::new();
    call.insert("name".into(), Value::from(name));
    call.insert("args".into(), args);
    if let Some(id) = id {
        call.insert("id".into(), Value::from(id));
    }
    json!({"functionCall": call})
}

/// Thought tokens: a share of the output proportional to the thinking text (none without it).
fn thought_tokens(script: &Script, output: u64) -> u64 {
    let thinking_chars: usize = script
        .items
        .iter()
        .map(|item| match item {
            Item::Thinking { text, .. } => text.chars().count(),
            _ => 0,
        })
        .sum();
    if thinking_chars == 0 {
        return 0;
    }
    (thinking_chars.div_ceil(4) as u64)
        .clamp(1, output.max(1))
        .min(output)
}

/// Renders the chunk objects (unwrapped).
fn render_chunks(script: &Script, ctx: &RenderCtx<'_>) -> Vec<Value> {
    let response_id = script
        .response_id
        .clone()
        .unwrap_or_else(|| format!("mockResp{:015}", ctx.response_seq));
    let model = ctx.model(script);
    let usage = ctx.usage(script);
    let prompt = usage.input + usage.cache_read;
    let thoughts = if usage.reasoning > 0 {
        usage.reasoning.min(usage.output)
    } else {
        thought_tokens(script, usage.output)
    };
    let mut chunks: Vec<Option<Vec<Value>>> = chunk_parts(script).into_iter().map(Some).collect();
    if chunks.is_empty() {
        // No output at all: the candidate's content has no parts.
        chunks.push(None);
    }
    let last = chunks.len() - 1;
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, parts)| {
            let mut candidate = Map::new();
            let content = match parts {
                Some(parts) => json!({"parts": parts, "role": "model"}),
                None => json!({"role": "model"}),
            };
            candidate.insert("content".into(), content);
            let usage_metadata = if i == last {
                candidate.insert(
                    "finishReason".into(),
                    Value::from(script.wire_stop_reason(finish_reason)),
                );
                let mut meta = Map::new();
                meta.insert("promptTokenCount".into(), prompt.into());
                meta.insert(
                    "candidatesTokenCount".into(),
                    (usage.output - thoughts).into(),
                );
                meta.insert("totalTokenCount".into(), (prompt + usage.output).into());
                if usage.cache_read > 0 {
                    meta.insert("cachedContentTokenCount".into(), usage.cache_read.into());
                }
                meta.insert(
                    "promptTokensDetails".into(),
                    json!([{"modality": "TEXT", "tokenCount": prompt}]),
                );
                if thoughts > 0 {
                    meta.insert("thoughtsTokenCount".into(), thoughts.into());
                }
                Value::Object(meta)
            } else {
                json!({"promptTokenCount": prompt, "totalTokenCount": prompt})
            };
            candidate.insert("index".into(), 0.into());
            json!({
                "candidates": [Value::Object(candidate)],
                "usageMetadata": usage_metadata,
                "modelVersion": model,
                "responseId": response_id,
            })
        })
        .collect()
}

/// Google's error JSON for an HTTP status (pretty-printed, as Google sends it).
fn error_body(status: u16) -> String {
    let (message, kind) = match status {
        400 => ("Request contains an invalid argument.", "INVALID_ARGUMENT"),
        401 => (
            "Request had invalid authentication credentials. Expected OAuth 2 access token, \
             login cookie or other valid authentication credential.",
            "UNAUTHENTICATED",
        ),
        403 => ("The caller does not have permission", "PERMISSION_DENIED"),
        404 => ("Requested entity was not found.", "NOT_FOUND"),
        429 => (
            "Resource has been exhausted (e.g. check quota).",
            "RESOURCE_EXHAUSTED",
        ),
        500 => (DEFAULT_STREAM_ERROR, "INTERNAL"),
        502 => ("Bad Gateway", "UNAVAILABLE"),
        503 => (
            "The model is overloaded. Please try again later.",
            "UNAVAILABLE",
        ),
        504 => (
            "Deadline expired before operation could complete.",
            "DEADLINE_EXCEEDED",
        ),
        _ => ("Mock error", "UNKNOWN"),
    };
    let body = json!({"error": {"code": status, "message": message, "status": kind}});
    serde_json::to_string_pretty(&body).unwrap_or_else(|_| body.to_string())
}

fn stream_error(message: Option<&str>) -> Vec<Frame> {
    let body = json!({"error": {
        "code": 500,
        "message": message.unwrap_or(DEFAULT_STREAM_ERROR),
        "status": "INTERNAL",
    }});
    vec![Frame::data(body.to_string())]
}

/// The echo reply for a Gemini request (`contents`, or Cloud Code Assist's `request.contents`):
/// a trailing function response yields `"done: <first 20 chars>"`; the last user text starting
/// with `"read "` yields a `read` call; any other text yields `"ok: <text>"`.
fn default_reply(request: &Value) -> Script {
    let contents: &[Value] = request
        .get("contents")
        .or_else(|| request.pointer("/request/contents"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let parts_of = |content: &Value| -> Vec<Value> {
        content
            .get("parts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    if let Some(last) = contents.last()
        && let Some(response) = parts_of(last)
            .iter()
            .rev()
            .find_map(|p| p.get("functionResponse").cloned())
    {
        let payload = response.get("response");
        let text = match payload.and_then(|r| r.get("output").or_else(|| r.get("error"))) {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => payload.map(Value::to_string).unwrap_or_default(),
        };
        let head: String = text.chars().take(20).collect();
        return Script::text(format!("done: {head}"));
    }
    let text = contents
        .iter()
        .rev()
        .filter(|c| c.get("role").and_then(Value::as_str) == Some("user"))
        .map(|c| {
            parts_of(c)
                .iter()
                .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
                .filter_map(|p| p.get("text").and_then(Value::as_str).map(str::to_owned))
                .collect::<Vec<_>>()
        })
        .find(|texts| !texts.is_empty())
        .map(|texts| texts.join("\n"))
        .unwrap_or_default();
    match text.strip_prefix("read ") {
        Some(rest) => Script::tool_call("read", json!({ "path": rest.trim() })),
        None => Script::text(format!("ok: {text}")),
    }
}

impl WireFormat for Google {
    fn render(&self, script: &Script, ctx: &RenderCtx<'_>) -> Vec<Frame> {
        render_chunks(script, ctx)
            .iter()
            .map(|chunk| Frame::data(to_json(chunk)))
            .collect()
    }

    fn malformed_frame(&self) -> Frame {
        Frame::data(r#"{"candidates": [{"content": {"parts": [{"text": "x""#)
    }

    fn stream_error(&self, message: Option<&str>) -> Vec<Frame> {
        stream_error(message)
    }

    fn error_body(&self, status: u16) -> String {
        error_body(status)
    }

    fn default_reply(&self, request: &Value) -> Script {
        default_reply(request)
    }
}

impl WireFormat for GeminiCli {
    fn render(&self, script: &Script, ctx: &RenderCtx<'_>) -> Vec<Frame> {
        let trace_id = format!(
            "{:016x}",
            ctx.response_seq.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        );
        render_chunks(script, ctx)
            .into_iter()
            .map(|chunk| Frame::data(to_json(&json!({"response": chunk, "traceId": trace_id}))))
            .collect()
    }

    fn malformed_frame(&self) -> Frame {
        Frame::data(r#"{"response": {"candidates": [{"content": {"parts": [{"text": "x""#)
    }

    fn stream_error(&self, message: Option<&str>) -> Vec<Frame> {
        stream_error(message)
    }

    fn error_body(&self, status: u16) -> String {
        error_body(status)
    }

    fn default_reply(&self, request: &Value) -> Script {
        default_reply(request)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;

    use super::*;
    use crate::script::ScriptUsage;

    fn ctx<'a>(request: &'a Value, seq: &'a AtomicU64) -> RenderCtx<'a> {
        RenderCtx {
            request,
            request_len: 400,
            response_seq: 3,
            tool_seq: seq,
            created: 0,
        }
    }

    fn frames(wire: &dyn WireFormat, script: &Script) -> Vec<Value> {
        let request = json!({"model": "gemini-test"});
        let seq = AtomicU64::new(0);
        wire.render(script, &ctx(&request, &seq))
            .iter()
            .map(|f| serde_json::from_str(&f.data).unwrap())
            .collect()
    }

    #[test]
    fn renders_thought_text_and_calls_with_usage_on_the_last_chunk() {
        let script = Script::new(vec![
            Item::Thinking {
                text: "abcdefgh".into(),
                signature: Some("c2ln".into()),
            },
            Item::text("hello"),
            Item::tool_call("read", json!({"path": "a"})),
            Item::tool_call("read", json!({"path": "b"})),
        ])
        .with_chunk_size(4)
        .with_full_usage(ScriptUsage {
            input: 100,
            output: 20,
            cache_read: 30,
            cache_write: 0,
            reasoning: 0,
        });
        let chunks = frames(&Google, &script);
        assert_eq!(chunks.len(), 6);
        let part = |i: usize| chunks[i]["candidates"][0]["content"]["parts"][0].clone();
        assert_eq!(part(0), json!({"text": "abcd", "thought": true}));
        assert_eq!(
            part(1),
            json!({"text": "efgh", "thought": true, "thoughtSignature": "c2ln"})
        );
        assert_eq!(part(2), json!({"text": "hell"}));
        assert_eq!(
            part(4),
            json!({"functionCall": {"name": "read", "args": {"path": "a"}}})
        );
        assert!(chunks[4]["candidates"][0].get("finishReason").is_none());
        let last = &chunks[5];
        assert_eq!(last["candidates"][0]["finishReason"], "STOP");
        assert_eq!(last["usageMetadata"]["promptTokenCount"], 130);
        assert_eq!(last["usageMetadata"]["cachedContentTokenCount"], 30);
        assert_eq!(last["usageMetadata"]["thoughtsTokenCount"], 2);
        assert_eq!(last["usageMetadata"]["candidatesTokenCount"], 18);
        assert_eq!(last["usageMetadata"]["totalTokenCount"], 150);
        assert_eq!(last["modelVersion"], "gemini-test");
        assert_eq!(last["responseId"], chunks[0]["responseId"]);
    }

    #[test]
    fn a_raw_finish_reason_replaces_the_mapped_one() {
        let chunks = frames(&Google, &Script::text("hi").with_raw_stop_reason("SAFETY"));
        assert_eq!(
            chunks.last().unwrap()["candidates"][0]["finishReason"],
            "SAFETY"
        );
        let length =
            Script::tool_call("read", json!({"path": "a"})).with_stop_reason(StopReason::Length);
        let chunks = frames(&Google, &length);
        assert_eq!(
            chunks.last().unwrap()["candidates"][0]["finishReason"],
            "MAX_TOKENS"
        );
    }

    #[test]
    fn cloud_code_assist_wraps_each_chunk() {
        let chunks = frames(&GeminiCli, &Script::text("hi"));
        assert_eq!(chunks.len(), 1);
        assert_eq!(
            chunks[0]["response"]["candidates"][0]["content"]["parts"][0]["text"],
            "hi"
        );
        assert!(chunks[0]["traceId"].is_string());
    }

    #[test]
    fn error_bodies_are_google_json() {
        let body: Value = serde_json::from_str(&Google.error_body(429)).unwrap();
        assert_eq!(body["error"]["code"], 429);
        assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED");
        let frame = &Google.stream_error(Some("boom"))[0];
        let error: Value = serde_json::from_str(&frame.data).unwrap();
        assert_eq!(error["error"]["message"], "boom");
    }

    #[test]
    fn echo_reads_gemini_contents() {
        let first = |s: Script| match &s.items[0] {
            Item::Text { text } => text.clone(),
            other => panic!("{other:?}"),
        };
        let request = json!({"contents": [{"role": "user", "parts": [{"text": "hello"}]}]});
        assert_eq!(first(Google.default_reply(&request)), "ok: hello");
        let read =
            json!({"request": {"contents": [{"role": "user", "parts": [{"text": "read a.txt"}]}]}});
        assert_eq!(
            GeminiCli.default_reply(&read).items,
            vec![Item::tool_call("read", json!({"path": "a.txt"}))]
        );
        let result = json!({"contents": [
            {"role": "user", "parts": [{"text": "read a.txt"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "read", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "read",
                "response": {"output": "0123456789abcdefghijKLMN"}}}]}]});
        assert_eq!(
            first(Google.default_reply(&result)),
            "done: 0123456789abcdefghij"
        );
    }
}
