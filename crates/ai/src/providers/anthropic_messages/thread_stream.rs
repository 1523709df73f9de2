//! Sending a request of a threaded session (see `threads`): the thread's body first; after
//! a thread error, a new thread or the full request; then the reply is decoded as usual
//! and, when it came back whole, recorded as the thread's end.

use futures_util::StreamExt;
use serde_json::Value;

use super::Decoder;
use super::strict_retry::{attach, failed};
use super::threads::{self, Fallback};
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{self, ErrorStyle, HttpRequest, RetryPolicy};
use crate::request_body::RequestBody;
use crate::sse::{self, StreamControl};
use crate::types::{AssistantMessageEvent, Message, Model};

/// A threaded request before it is sent.
pub struct Threaded {
    pub model: Model,
    /// The request with the full body (`params`).
    pub request: HttpRequest,
    pub params: Value,
    /// The `anthropic-beta` value, part of the thread's fingerprint.
    pub betas: String,
    pub session: String,
    /// False for requests that must not continue the thread (cache refreshes).
    pub may_continue: bool,
    pub oauth: bool,
    pub allow_empty_signature: bool,
    /// The request again without preferred strict tools, for Claude's strict-tool limits.
    pub strict_retry: Option<super::strict_retry::Retry<Threaded>>,
}

fn with_body(request: &HttpRequest, body: &Value) -> HttpRequest {
    HttpRequest {
        url: request.url.clone(),
        headers: request.headers.clone(),
        body: RequestBody::from(serde_json::to_vec(body).unwrap_or_default()),
    }
}

/// The reply as the wire messages a later request carries.
fn reply_messages(
    threaded: &Threaded,
    reply: &std::sync::Arc<crate::types::AssistantMessage>,
) -> Vec<Value> {
    let prepared =
        super::request::prepare_messages(&threaded.model, &[Message::Assistant(reply.clone())]);
    let converted = super::request::convert_messages(
        &prepared,
        threaded.oauth,
        None,
        threaded.allow_empty_signature,
        None,
        None,
    );
    serde_json::to_value(converted)
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m["role"] == "assistant")
        .collect()
}

/// Streams a threaded request.
pub fn run(
    threaded: Threaded,
    policy: RetryPolicy,
    control: StreamControl,
    decoder: Decoder,
) -> AssistantMessageEventStream {
    let level = decoder.provider_thinking_level().map(str::to_owned);
    AssistantMessageEventStream::new(async_stream::stream! {
        let mut threaded = threaded;
        let retry = threaded.strict_retry.take();
        let (mut sent, mut thread) = send(&threaded, policy, &control).await;
        let mut diagnostic = None;
        if let (Err(failure), Some(retry)) = (&sent, retry)
            && let Some((rebuilt, note)) = retry.after(failure)
        {
            diagnostic = Some(note);
            match rebuilt {
                Ok(again) => {
                    threaded = again;
                    (sent, thread) = send(&threaded, policy, &control).await;
                }
                Err(message) => {
                    yield failed(&threaded.model, false, message, level.as_deref(), diagnostic.as_ref());
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
                yield failed(
                    &threaded.model,
                    failure.aborted,
                    text,
                    level.as_deref(),
                    diagnostic.as_ref(),
                );
                return;
            }
        };
        let mut events = Box::pin(sse::decode(
            threaded.model.clone(),
            response.bytes_stream(),
            control,
            decoder,
        ));
        while let Some(mut event) = events.next().await {
            attach(&mut event, diagnostic.as_ref());
            if let (AssistantMessageEvent::Done { message, .. }, Some(_)) = (&event, &thread)
                && message.response_model.is_none()
                && let Some(reply_id) = message.response_id.as_deref()
            {
                let reply = reply_messages(&threaded, message);
                threads::record(
                    &threaded.model,
                    &threaded.session,
                    &threaded.params,
                    &threaded.betas,
                    &reply,
                    reply_id,
                );
            }
            yield event;
        }
    })
}

/// Sends the thread's body (or the full request), falling back to a new thread or to no
/// thread when the server refuses the thread.
async fn send(
    threaded: &Threaded,
    policy: RetryPolicy,
    control: &StreamControl,
) -> (
    Result<reqwest::Response, http::RequestFailure>,
    Option<threads::ThreadRequest>,
) {
    let style = ErrorStyle::Anthropic;
    let mut thread = if threaded.may_continue {
        threads::prepare(
            &threaded.model,
            &threaded.session,
            &threaded.params,
            &threaded.betas,
        )
    } else {
        None
    };
    let first = match &thread {
        Some(t) => with_body(&threaded.request, &t.body),
        None => threaded.request.clone(),
    };
    let mut sent = http::send(&first, policy, &control.cancel, style).await;
    if let (Err(failure), Some(_)) = (&sent, &thread)
        && !failure.aborted
        && let Some((status, _)) = &failure.status
    {
        match threads::fallback(*status, failure.error_code.as_deref(), &failure.message) {
            Fallback::NewThread => {
                let created = threads::create(&threaded.session, &threaded.params);
                let request = with_body(&threaded.request, &created.body);
                sent = http::send(&request, policy, &control.cancel, style).await;
                thread = Some(created);
            }
            Fallback::Unsupported => {
                sent = http::send(&threaded.request, policy, &control.cancel, style).await;
                threads::turn_off(&threaded.session);
                thread = None;
            }
            Fallback::None => {}
        }
    }
    (sent, thread)
}
