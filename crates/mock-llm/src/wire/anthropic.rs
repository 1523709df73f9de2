//! Anthropic Messages streaming (`message_start` ... `message_stop` named SSE events).

use serde::Serialize;

use super::{RenderCtx, WireFormat};
use crate::script::{Item, Script, StopReason};
use crate::sse::{Frame, to_json};
use crate::text::{DEFAULT_CHUNK_SIZE, item_text, split_chars, tool_arguments};

/// The Anthropic Messages wire format.
pub(crate) struct Anthropic;

/// One streamed event; the serde tag becomes both the `type` field and the SSE event name.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event<'a> {
    MessageStart {
        message: Message<'a>,
    },
    ContentBlockStart {
        index: usize,
        content_block: Block<'a>,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta<'a>,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDelta,
        usage: OutputUsage,
    },
    MessageStop,
    Error {
        error: ErrorInfo<'a>,
    },
}

impl Event<'_> {
    fn name(&self) -> &'static str {
        match self {
            Event::MessageStart { .. } => "message_start",
            Event::ContentBlockStart { .. } => "content_block_start",
            Event::ContentBlockDelta { .. } => "content_block_delta",
            Event::ContentBlockStop { .. } => "content_block_stop",
            Event::MessageDelta { .. } => "message_delta",
            Event::MessageStop => "message_stop",
            Event::Error { .. } => "error",
        }
    }

    fn frame(&self) -> Frame {
        Frame::named(self.name(), to_json(self))
    }
}

#[derive(Serialize)]
struct Message<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: &'a str,
    content: [(); 0],
    stop_reason: Option<()>,
    stop_sequence: Option<()>,
    usage: StartUsage,
}

#[derive(Serialize)]
struct StartUsage {
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'static str,
    },
    Thinking {
        thinking: &'static str,
        signature: &'static str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: EmptyObject,
    },
}

#[derive(Serialize)]
struct EmptyObject {}

#[derive(Serialize)]
#[serde(tag = "type")]
enum BlockDelta<'a> {
    #[serde(rename = "text_delta")]
    Text { text: &'a str },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: &'a str },
    #[serde(rename = "signature_delta")]
    Signature { signature: &'a str },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: &'a str },
}

#[derive(Serialize)]
struct MessageDelta {
    stop_reason: String,
    stop_sequence: Option<()>,
}

#[derive(Serialize)]
struct OutputUsage {
    output_tokens: u64,
    /// Thinking tokens (`output_tokens_details.thinking_tokens`), when scripted.
    #[serde(skip_serializing_if = "Option::is_none")]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Serialize)]
struct OutputDetails {
    thinking_tokens: u64,
}

#[derive(Serialize)]
struct ErrorInfo<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    message: &'a str,
}

fn stop_reason(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Stop => "end_turn",
        StopReason::Length => "max_tokens",
        StopReason::ToolUse => "tool_use",
    }
}

/// Pushes the start, deltas and stop frames of one content block.
fn push_block(
    frames: &mut Vec<Frame>,
    index: usize,
    start: Block<'_>,
    deltas: Vec<BlockDelta<'_>>,
) {
    frames.push(
        Event::ContentBlockStart {
            index,
            content_block: start,
        }
        .frame(),
    );
    for delta in deltas {
        frames.push(Event::ContentBlockDelta { index, delta }.frame());
    }
    frames.push(Event::ContentBlockStop { index }.frame());
}

impl WireFormat for Anthropic {
    fn render(&self, script: &Script, ctx: &RenderCtx<'_>) -> Vec<Frame> {
        let id = script
            .response_id
            .clone()
            .unwrap_or_else(|| format!("msg_{}", ctx.response_seq));
        let chunk_size = script.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE);
        let usage = ctx.usage(script);
        let mut frames = Vec::new();
        let message = Message {
            id: &id,
            kind: "message",
            role: "assistant",
            model: ctx.model(script),
            content: [],
            stop_reason: None,
            stop_sequence: None,
            usage: StartUsage {
                input_tokens: usage.input,
                cache_creation_input_tokens: usage.cache_write,
                cache_read_input_tokens: usage.cache_read,
                output_tokens: 1,
            },
        };
        frames.push(Event::MessageStart { message }.frame());
        frames.push(Frame::named("ping", r#"{"type": "ping"}"#));
        for (index, item) in script.items.iter().enumerate() {
            match item {
                Item::Text { .. } | Item::Filler { .. } => {
                    let text = item_text(item).unwrap_or_default();
                    let deltas: Vec<_> = split_chars(&text, chunk_size)
                        .into_iter()
                        .map(|text| BlockDelta::Text { text })
                        .collect();
                    push_block(&mut frames, index, Block::Text { text: "" }, deltas);
                }
                Item::Thinking { text, signature } => {
                    let mut deltas: Vec<_> = split_chars(text, chunk_size)
                        .into_iter()
                        .map(|thinking| BlockDelta::Thinking { thinking })
                        .collect();
                    if let Some(signature) = signature {
                        deltas.push(BlockDelta::Signature { signature });
                    }
                    let start = Block::Thinking {
                        thinking: "",
                        signature: "",
                    };
                    push_block(&mut frames, index, start, deltas);
                }
                Item::RedactedThinking { data } => {
                    push_block(
                        &mut frames,
                        index,
                        Block::RedactedThinking { data },
                        Vec::new(),
                    );
                }
                Item::ToolCall { id, name, .. } | Item::ToolCallRaw { id, name, .. } => {
                    let call_id = id
                        .clone()
                        .unwrap_or_else(|| format!("toolu_{}", ctx.next_tool_id()));
                    let arguments = tool_arguments(item).unwrap_or_default();
                    let deltas: Vec<_> = split_chars(&arguments, chunk_size)
                        .into_iter()
                        .map(|partial_json| BlockDelta::InputJson { partial_json })
                        .collect();
                    let start = Block::ToolUse {
                        id: &call_id,
                        name,
                        input: EmptyObject {},
                    };
                    push_block(&mut frames, index, start, deltas);
                }
            }
        }
        let delta = MessageDelta {
            stop_reason: script.wire_stop_reason(stop_reason),
            stop_sequence: None,
        };
        let usage = OutputUsage {
            output_tokens: usage.output,
            output_tokens_details: (usage.reasoning > 0).then_some(OutputDetails {
                thinking_tokens: usage.reasoning,
            }),
        };
        frames.push(Event::MessageDelta { delta, usage }.frame());
        frames.push(Event::MessageStop.frame());
        frames
    }

    fn malformed_frame(&self) -> Frame {
        Frame::named(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x""#,
        )
    }

    fn stream_error(&self, message: Option<&str>) -> Vec<Frame> {
        let error = ErrorInfo {
            kind: "overloaded_error",
            message: message.unwrap_or("Overloaded"),
        };
        vec![Event::Error { error }.frame()]
    }

    fn error_body(&self, status: u16) -> String {
        let (kind, message) = match status {
            400 => ("invalid_request_error", "Invalid request"),
            401 => ("authentication_error", "invalid x-api-key"),
            403 => (
                "permission_error",
                "Your API key does not have permission to use the specified resource.",
            ),
            404 => (
                "not_found_error",
                "The requested resource could not be found.",
            ),
            413 => (
                "request_too_large",
                "Request exceeds the maximum allowed number of bytes.",
            ),
            429 => (
                "rate_limit_error",
                "Number of request tokens has exceeded your per-minute rate limit",
            ),
            500 => ("api_error", "Internal server error"),
            502 => ("api_error", "Bad gateway"),
            503 => ("api_error", "Service unavailable"),
            529 => ("overloaded_error", "Overloaded"),
            _ => ("api_error", "Mock error"),
        };
        to_json(&Event::Error {
            error: ErrorInfo { kind, message },
        })
    }

    fn extra_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[("request-id", "req_mock")]
    }
}
