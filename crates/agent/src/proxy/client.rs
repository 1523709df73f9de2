//! The client: a stream function that posts to a proxy and rebuilds the message.

use std::sync::Arc;

use sse_stream::Sse;

use pi_ai::assembler::Assembler;
use pi_ai::http::{ErrorStyle, HttpRequest, RetryPolicy};
use pi_ai::sse::{self, Flow, SseDecoder, StreamControl};
use pi_ai::{AssistantBlock, AssistantMessageEventStream, Context, Model, SimpleStreamOptions};

use super::event::{ProxyEvent, ProxyRequest, ProxyRequestOptions};
use crate::config::StreamFn;

/// Where the proxy is and how to authenticate to it.
#[derive(Clone)]
pub struct ProxyStreamOptions {
    pub proxy_url: String,
    pub auth_token: String,
}

impl std::fmt::Debug for ProxyStreamOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyStreamOptions")
            .field("proxy_url", &self.proxy_url)
            .field("auth_token", &"<redacted>")
            .finish()
    }
}

/// Maps proxy events onto the assembler.
struct ProxyDecoder;

fn expect_index(actual: usize, expected: usize, kind: &str) -> Result<(), String> {
    if actual == expected {
        Ok(())
    } else {
        Err(format!(
            "Proxy sent {kind} for content index {expected}, expected {actual}"
        ))
    }
}

impl SseDecoder for ProxyDecoder {
    fn on_event(&mut self, event: &Sse, asm: &mut Assembler) -> Result<Flow, String> {
        let Some(data) = event
            .data
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
        else {
            return Ok(Flow::Continue);
        };
        let event: ProxyEvent = sse::parse_json(data)?;
        let kind_mismatch = |kind: &str| format!("Received {kind} for mismatched content");
        match event {
            ProxyEvent::Start => {}
            ProxyEvent::TextStart { content_index } => {
                expect_index(asm.begin_text(), content_index, "text_start")?
            }
            ProxyEvent::TextDelta {
                content_index,
                delta,
            } => match asm.message().content.get(content_index) {
                Some(AssistantBlock::Text(_)) => asm.push_text(content_index, &delta),
                _ => return Err(kind_mismatch("text_delta")),
            },
            ProxyEvent::TextEnd {
                content_index,
                content_signature,
            } => {
                match asm.message_mut().content.get_mut(content_index) {
                    Some(AssistantBlock::Text(t)) => t.text_signature = content_signature,
                    _ => return Err(kind_mismatch("text_end")),
                }
                asm.end_block(content_index);
            }
            ProxyEvent::ThinkingStart { content_index } => {
                let index = asm.begin_thinking(pi_ai::ThinkingContent::new(""));
                expect_index(index, content_index, "thinking_start")?;
            }
            ProxyEvent::ThinkingDelta {
                content_index,
                delta,
            } => match asm.message().content.get(content_index) {
                Some(AssistantBlock::Thinking(_)) => asm.push_thinking(content_index, &delta),
                _ => return Err(kind_mismatch("thinking_delta")),
            },
            ProxyEvent::ThinkingEnd {
                content_index,
                content_signature,
            } => {
                match asm.message_mut().content.get_mut(content_index) {
                    Some(AssistantBlock::Thinking(t)) => t.thinking_signature = content_signature,
                    _ => return Err(kind_mismatch("thinking_end")),
                }
                asm.end_block(content_index);
            }
            ProxyEvent::ToolcallStart {
                content_index,
                id,
                tool_name,
            } => {
                let index = asm.begin_tool_call(&id, &tool_name, serde_json::Map::new());
                expect_index(index, content_index, "toolcall_start")?;
            }
            ProxyEvent::ToolcallDelta {
                content_index,
                delta,
            } => match asm.message().content.get(content_index) {
                Some(AssistantBlock::ToolCall(_)) => asm.push_tool_args(content_index, &delta),
                _ => return Err(kind_mismatch("toolcall_delta")),
            },
            ProxyEvent::ToolcallEnd { content_index } => asm.end_block(content_index),
            ProxyEvent::Done { reason, usage } => {
                let m = asm.message_mut();
                m.stop_reason = reason;
                m.usage = usage;
                return Ok(Flow::Stop);
            }
            ProxyEvent::Error {
                reason,
                error_message,
                usage,
            } => {
                let m = asm.message_mut();
                m.stop_reason = reason;
                m.usage = usage;
                m.error_message =
                    Some(error_message.unwrap_or_else(|| "Proxy stream failed".to_owned()));
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }

    fn finish(&mut self, asm: &mut Assembler, ended_by_provider: bool) -> Result<(), String> {
        if !ended_by_provider {
            return Err("Proxy stream ended before done or error".to_owned());
        }
        asm.end_all();
        Ok(())
    }
}

/// Streams `model` through the proxy at `proxy.proxy_url` (`POST /api/stream`).
pub fn stream_proxy(
    model: &Model,
    context: &Context,
    options: SimpleStreamOptions,
    proxy: &ProxyStreamOptions,
) -> AssistantMessageEventStream {
    let body = ProxyRequest {
        model: model.clone(),
        context: context.clone(),
        options: ProxyRequestOptions::from_simple(&options),
    };
    let request = serde_json::to_vec(&body)
        .map(|body| HttpRequest {
            url: format!("{}/api/stream", proxy.proxy_url.trim_end_matches('/')),
            headers: vec![
                (
                    "authorization".into(),
                    format!("Bearer {}", proxy.auth_token),
                ),
                ("content-type".into(), "application/json".into()),
            ],
            body: body.into(),
        })
        .map_err(|e| format!("Could not encode the proxy request: {e}"));
    let policy = RetryPolicy {
        max_retries: 0,
        ..RetryPolicy::from_options(&options.stream)
    };
    sse::run(
        model.clone(),
        request,
        policy,
        StreamControl::from_options(&options.stream),
        ErrorStyle::Proxy,
        ProxyDecoder,
    )
}

/// A [`StreamFn`] that goes through the proxy, for `AgentLoopConfig` or `AgentOptions`.
pub fn proxy_stream_fn(proxy: ProxyStreamOptions) -> StreamFn {
    Arc::new(move |model, context, options| stream_proxy(model, context, options, &proxy))
}
