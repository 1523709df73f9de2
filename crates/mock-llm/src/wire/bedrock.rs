//! Bedrock ConverseStream: AWS event-stream binary messages (`messageStart`,
//! `contentBlockStart/Delta/Stop`, `messageStop`, `metadata`), exceptions as
//! `:message-type: exception` messages.
//!
//! Each [`Frame`] carries the event type in `event` and the JSON payload in `data`;
//! [`WireFormat::encode`] turns it into one binary message. Event names ending in
//! `Exception` become exception messages; the [`BAD_CRC`] prefix marks a frame whose
//! message checksum is deliberately wrong.

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Value, json};

use super::{RenderCtx, WireFormat};
use crate::script::{Item, LineEnding, Script, StopReason};
use crate::sse::{Frame, to_json};
use crate::text::{DEFAULT_CHUNK_SIZE, item_text, split_chars, tool_arguments};

/// The Bedrock ConverseStream wire format.
pub(crate) struct Bedrock;

/// Event-name prefix of a frame encoded with a corrupted message CRC.
pub(crate) const BAD_CRC: &str = "!bad-crc:";

/// Padding Bedrock adds to every event payload (`p`), which clients must ignore.
const PADDING: &str = "abcdefghijklmnopqrstuvwxyzABCDEF";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BlockEvent<'a> {
    content_block_index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    start: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta: Option<Value>,
    p: &'a str,
}

fn block_frame(event: &str, index: usize, start: Option<Value>, delta: Option<Value>) -> Frame {
    let body = BlockEvent {
        content_block_index: index,
        start,
        delta,
        p: &PADDING[..(index % PADDING.len()) + 1],
    };
    Frame::named(event, to_json(&body))
}

fn stop_reason(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Stop => "end_turn",
        StopReason::Length => "max_tokens",
        StopReason::ToolUse => "tool_use",
    }
}

const CRC_TABLE: [u32; 256] = crc_table();

const fn crc_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

/// CRC-32 (IEEE), as the event-stream framing uses it.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc = CRC_TABLE[((crc ^ u32::from(byte)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

/// One event-stream message with string headers.
pub(crate) fn encode_message(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut header_bytes = Vec::new();
    for (name, value) in headers {
        header_bytes.push(name.len() as u8);
        header_bytes.extend_from_slice(name.as_bytes());
        header_bytes.push(7);
        header_bytes.extend_from_slice(&(value.len() as u16).to_be_bytes());
        header_bytes.extend_from_slice(value.as_bytes());
    }
    let total = 16 + header_bytes.len() + payload.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(header_bytes.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&header_bytes);
    out.extend_from_slice(payload);
    let message_crc = crc32(&out);
    out.extend_from_slice(&message_crc.to_be_bytes());
    out
}

/// The Anthropic-shaped view of a Converse request, for the shared echo reply.
fn as_anthropic_request(request: &Value) -> Value {
    let messages: Vec<Value> = request
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|message| {
            let blocks: Vec<Value> = message
                .get("content")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .filter_map(|block| {
                    if let Some(text) = block.get("text").and_then(Value::as_str) {
                        return Some(json!({"type": "text", "text": text}));
                    }
                    let result = block.get("toolResult")?;
                    let text: Vec<&str> = result
                        .get("content")
                        .and_then(Value::as_array)
                        .map_or(&[][..], Vec::as_slice)
                        .iter()
                        .filter_map(|c| c.get("text").and_then(Value::as_str))
                        .collect();
                    Some(json!({"type": "tool_result", "content": text.join("\n")}))
                })
                .collect();
            json!({"role": message.get("role").cloned().unwrap_or(Value::Null), "content": blocks})
        })
        .collect();
    json!({ "messages": messages })
}

impl WireFormat for Bedrock {
    fn render(&self, script: &Script, ctx: &RenderCtx<'_>) -> Vec<Frame> {
        let chunk_size = script.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE);
        let usage = ctx.usage(script);
        let mut frames = vec![Frame::named(
            "messageStart",
            to_json(&json!({"role": "assistant", "p": "abcd"})),
        )];
        for (index, item) in script.items.iter().enumerate() {
            match item {
                Item::Text { .. } | Item::Filler { .. } => {
                    // Text blocks have no contentBlockStart.
                    let text = item_text(item).unwrap_or_default();
                    for piece in split_chars(&text, chunk_size) {
                        let delta = json!({ "text": piece });
                        frames.push(block_frame("contentBlockDelta", index, None, Some(delta)));
                    }
                }
                Item::Thinking { text, signature } => {
                    for piece in split_chars(text, chunk_size) {
                        let delta = json!({"reasoningContent": {"text": piece}});
                        frames.push(block_frame("contentBlockDelta", index, None, Some(delta)));
                    }
                    if let Some(signature) = signature {
                        let delta = json!({"reasoningContent": {"signature": signature}});
                        frames.push(block_frame("contentBlockDelta", index, None, Some(delta)));
                    }
                }
                Item::RedactedThinking { data } => {
                    let delta = json!({"reasoningContent": {"redactedContent": data}});
                    frames.push(block_frame("contentBlockDelta", index, None, Some(delta)));
                }
                Item::ToolCall { id, name, .. } | Item::ToolCallRaw { id, name, .. } => {
                    let call_id = id
                        .clone()
                        .unwrap_or_else(|| format!("tooluse_{}", ctx.next_tool_id()));
                    let start = json!({"toolUse": {"toolUseId": call_id, "name": name}});
                    frames.push(block_frame("contentBlockStart", index, Some(start), None));
                    let arguments = tool_arguments(item).unwrap_or_default();
                    for piece in split_chars(&arguments, chunk_size) {
                        let delta = json!({"toolUse": {"input": piece}});
                        frames.push(block_frame("contentBlockDelta", index, None, Some(delta)));
                    }
                }
            }
            frames.push(block_frame("contentBlockStop", index, None, None));
        }
        frames.push(Frame::named(
            "messageStop",
            to_json(&json!({
                "stopReason": script.wire_stop_reason(stop_reason),
                "p": "abcdefgh",
            })),
        ));
        let total = usage.input + usage.output + usage.cache_read + usage.cache_write;
        let mut usage = json!({
            "inputTokens": usage.input,
            "outputTokens": usage.output,
            "totalTokens": total,
            "cacheReadInputTokens": usage.cache_read,
            "cacheWriteInputTokens": usage.cache_write,
        });
        if let (Some(fields), Some(extra)) = (usage.as_object_mut(), &script.usage_extra) {
            fields.extend(extra.clone());
        }
        frames.push(Frame::named(
            "metadata",
            to_json(&json!({
                "usage": usage,
                "metrics": {"latencyMs": 42},
                "p": "abc",
            })),
        ));
        frames
    }

    fn malformed_frame(&self) -> Frame {
        Frame::named(
            format!("{BAD_CRC}contentBlockDelta"),
            r#"{"contentBlockIndex":0,"delta":{"text":"x"}}"#,
        )
    }

    fn stream_error(&self, message: Option<&str>) -> Vec<Frame> {
        let message = message.unwrap_or("Too many tokens, please wait before trying again.");
        vec![Frame::named(
            "throttlingException",
            to_json(&json!({ "message": message })),
        )]
    }

    fn error_body(&self, status: u16) -> String {
        // The mock cannot vary headers by status, so the error type travels in `__type`,
        // which the AWS SDK reads when `x-amzn-errortype` is absent.
        let (kind, message) = match status {
            400 => (
                "ValidationException",
                "Malformed input request, please reformat your input and try again.",
            ),
            403 => (
                "AccessDeniedException",
                "You don't have access to the model with the specified model ID.",
            ),
            404 => (
                "ResourceNotFoundException",
                "Could not resolve the foundation model from the provided model identifier.",
            ),
            408 => (
                "ModelTimeoutException",
                "Model has timed out in processing the request. Try your request again.",
            ),
            424 => ("ModelErrorException", "The model returned an error."),
            429 => (
                "ThrottlingException",
                "Too many requests, please wait before trying again.",
            ),
            500 => (
                "InternalServerException",
                "The server encountered an internal error while processing the request.",
            ),
            503 => (
                "ServiceUnavailableException",
                "Bedrock is unable to process your request.",
            ),
            _ => return to_json(&json!({ "message": "Mock error" })),
        };
        to_json(&json!({ "__type": kind, "message": message }))
    }

    fn extra_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[("x-amzn-requestid", "mock-request-id")]
    }

    fn encode(&self, frame: &Frame, _line_ending: LineEnding) -> Bytes {
        let name = frame.event.as_deref().unwrap_or("");
        let (name, corrupt) = match name.strip_prefix(BAD_CRC) {
            Some(rest) => (rest, true),
            None => (name, false),
        };
        let mut bytes = if name.ends_with("Exception") {
            encode_message(
                &[
                    (":exception-type", name),
                    (":content-type", "application/json"),
                    (":message-type", "exception"),
                ],
                frame.data.as_bytes(),
            )
        } else {
            encode_message(
                &[
                    (":event-type", name),
                    (":content-type", "application/json"),
                    (":message-type", "event"),
                ],
                frame.data.as_bytes(),
            )
        };
        if corrupt && let Some(last) = bytes.last_mut() {
            *last ^= 0xFF;
        }
        Bytes::from(bytes)
    }

    fn content_type(&self) -> &'static str {
        "application/vnd.amazon.eventstream"
    }

    fn default_reply(&self, request: &Value) -> Script {
        crate::default_reply::from_messages(&as_anthropic_request(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value_and_aws_empty_message() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        // The AWS event-stream test suite's empty message.
        assert_eq!(
            encode_message(&[], b""),
            vec![
                0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98,
                0xc8, 0xff
            ]
        );
    }

    #[test]
    fn frames_encode_as_event_exception_and_corrupt_messages() {
        let event = Bedrock.encode(&Frame::named("messageStop", "{}"), LineEnding::Lf);
        let total = u32::from_be_bytes([event[0], event[1], event[2], event[3]]) as usize;
        assert_eq!(total, event.len());
        let body_end = total - 4;
        let crc = u32::from_be_bytes([
            event[body_end],
            event[body_end + 1],
            event[body_end + 2],
            event[body_end + 3],
        ]);
        assert_eq!(crc, crc32(&event[..body_end]));
        assert!(event.windows(11).any(|w| w == b"messageStop"));

        let error = &Bedrock.stream_error(None)[0];
        let bytes = Bedrock.encode(error, LineEnding::Lf);
        assert!(bytes.windows(9).any(|w| w == b"exception"));

        let bad = Bedrock.encode(&Bedrock.malformed_frame(), LineEnding::Lf);
        let end = bad.len() - 4;
        let crc = u32::from_be_bytes([bad[end], bad[end + 1], bad[end + 2], bad[end + 3]]);
        assert_ne!(crc, crc32(&bad[..end]));
    }

    #[test]
    fn a_raw_stop_reason_is_sent_in_message_stop() {
        let request = json!({});
        let seq = std::sync::atomic::AtomicU64::new(0);
        let ctx = RenderCtx {
            request: &request,
            request_len: 10,
            response_seq: 1,
            tool_seq: &seq,
            created: 0,
        };
        let script = Script::text("hi").with_raw_stop_reason("guardrail_intervened");
        let frames = Bedrock.render(&script, &ctx);
        let stop = frames
            .iter()
            .find(|f| f.event.as_deref() == Some("messageStop"))
            .unwrap();
        let data: Value = serde_json::from_str(&stop.data).unwrap();
        assert_eq!(data["stopReason"], "guardrail_intervened");
    }

    #[test]
    fn echoes_converse_requests() {
        let first = |script: Script| match &script.items[0] {
            Item::Text { text } => text.clone(),
            other => panic!("{other:?}"),
        };
        let user = json!({"messages": [{"role": "user", "content": [{"text": "hello"}, {"cachePoint": {"type": "default"}}]}]});
        assert_eq!(first(Bedrock.default_reply(&user)), "ok: hello");
        let read = json!({"messages": [{"role": "user", "content": [{"text": "read a.txt"}]}]});
        assert!(Bedrock.default_reply(&read).items[0].is_tool_call());
        let result = json!({"messages": [{"role": "user", "content": [{"toolResult": {
            "toolUseId": "t", "content": [{"text": "file contents here"}], "status": "success"}}]}]});
        assert_eq!(
            first(Bedrock.default_reply(&result)),
            "done: file contents here"
        );
    }
}
