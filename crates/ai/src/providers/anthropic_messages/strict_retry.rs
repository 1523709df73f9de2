//! Sending an Anthropic request that Claude may refuse for its strict-tool limits: the one
//! retry with tools that only prefer strictness sent plain (pi-ai 1.2), remembered for the
//! session (pi-ai 1.5.1), and the diagnostic the reply then carries.

use futures_util::StreamExt;

use super::Decoder;
use crate::assembler::Assembler;
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{self, ErrorStyle, HttpRequest, RetryPolicy};
use crate::sse::{self, StreamControl};
use crate::types::Model;

pub use crate::providers::strict_limits::Retry;

/// Sends `request` (once more non-strict when `retry` applies) and streams the reply.
pub fn run(
    model: Model,
    request: Result<HttpRequest, String>,
    retry: Option<Retry<HttpRequest>>,
    policy: RetryPolicy,
    control: StreamControl,
    decoder: Decoder,
) -> AssistantMessageEventStream {
    let level = decoder.provider_thinking_level().map(str::to_owned);
    AssistantMessageEventStream::new(async_stream::stream! {
        let style = ErrorStyle::Anthropic;
        let request = match request {
            Ok(request) => request,
            Err(message) => {
                yield Assembler::new(&model).fail(false, message);
                return;
            }
        };
        let mut sent = http::send(&request, policy, &control.cancel, style).await;
        let mut diagnostic = None;
        if let (Err(failure), Some(retry)) = (&sent, retry)
            && let Some((rebuilt, note)) = retry.after(failure)
        {
            diagnostic = Some(note);
            match rebuilt {
                Ok(request) => sent = http::send(&request, policy, &control.cancel, style).await,
                Err(message) => {
                    yield failed(&model, false, message, level.as_deref(), diagnostic.as_ref());
                    return;
                }
            }
        }
        let response = match sent {
            Ok(response) => {
                control.report_response(&response);
                response
            }
            Err(failure) => {
                let text = failure.text(control.error_prefix.as_deref());
                yield failed(&model, failure.aborted, text, level.as_deref(), diagnostic.as_ref());
                return;
            }
        };
        let mut events = Box::pin(sse::decode(model, response.bytes_stream(), control, decoder));
        while let Some(mut event) = events.next().await {
            attach(&mut event, diagnostic.as_ref());
            yield event;
        }
    })
}

pub use crate::providers::strict_limits::attach_note as attach;

/// The failure of a request that was sent: it keeps the effort the request ran at (as
/// pi-ai sets it before sending) and the strict-tool retry's diagnostic.
pub fn failed(
    model: &Model,
    aborted: bool,
    text: String,
    level: Option<&str>,
    note: Option<&serde_json::Value>,
) -> crate::types::AssistantMessageEvent {
    let mut asm = Assembler::new(model);
    if let Some(level) = level {
        asm.message_mut().provider_thinking_level = Some(level.to_owned());
    }
    let mut event = asm.fail(aborted, text);
    attach(&mut event, note);
    event
}
