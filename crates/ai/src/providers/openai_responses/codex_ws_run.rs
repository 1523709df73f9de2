//! One Codex request over the WebSocket transport: opening (with pi's two retries before
//! the reply starts: a connection limit reached, a previous response the backend lost),
//! then decoding the events as the SSE path does, and giving the socket back to the
//! session with what the next request can continue from.

use std::time::Duration;

use futures_core::Stream;
use serde_json::{Map, Value};
use sse_stream::Sse;

use super::codex_ws::{self as ws, Continuation, Failure, Lease};
use super::{Decoder, request};
use crate::assembler::Assembler;
use crate::http;
use crate::http::HttpRequest;
use crate::sse::{Flow, SseDecoder, StreamControl};
use crate::types::{
    AssistantMessage, AssistantMessageEvent, Message, Model, StreamOptions, Transport,
};

/// What a WebSocket request needs besides the SSE request.
#[derive(Clone)]
pub(super) struct Plan {
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// The session the socket is kept for, with the account (none: a socket per request).
    pub session: Option<(String, String)>,
    /// The whole body.
    pub body: Map<String, Value>,
    /// The configured transport.
    pub transport: crate::types::Transport,
    /// Whether a kept session sends only new items (`auto`, `websocket-cached`).
    pub cached_context: bool,
    pub connect_timeout_ms: Option<u64>,
    /// Longest wait for the next event (the request timeout; none: no limit).
    pub idle: Option<Duration>,
}

impl Plan {
    /// pi-ai 1.6's `provider_transport_failure` diagnostic for a request that went over SSE
    /// after its WebSocket failed (`why`) before the reply started.
    pub fn fallback_diagnostic(&self, why: &str) -> Value {
        self.diagnostic(why, false)
    }

    /// The same for a WebSocket that failed before (`started` false) or after the reply
    /// started.
    fn diagnostic(&self, why: &str, started: bool) -> Value {
        let transport = serde_json::to_value(self.transport).unwrap_or(Value::Null);
        let mut details = serde_json::json!({"configuredTransport": transport});
        if !started {
            details["fallbackTransport"] = "sse".into();
        }
        details["eventsEmitted"] = started.into();
        details["phase"] = if started {
            "after_message_stream_start"
        } else {
            "before_message_stream_start"
        }
        .into();
        details["requestBytes"] = Value::Object(self.body.clone()).to_string().len().into();
        serde_json::json!({
            "type": "provider_transport_failure",
            "timestamp": crate::types::now_ms(),
            "error": {"name": "Error", "message": why},
            "details": details,
        })
    }
}

/// Adds `diagnostic` to the diagnostics of a final event's message.
pub(super) fn attach_diagnostic(event: &mut AssistantMessageEvent, diagnostic: &Value) {
    crate::providers::common::attach_diagnostic(event, diagnostic.clone());
}

/// What the WebSocket transport needs for this request, unless the transport is `sse` or
/// the session's WebSocket failed before (pi-ai 1.6).
pub(super) fn plan(model: &Model, options: &StreamOptions, request: &HttpRequest) -> Option<Plan> {
    let transport = options.transport.unwrap_or_default();
    if transport == Transport::Sse {
        return None;
    }
    // The socket cache is keyed by the whole session id; the headers carry the cut one.
    let session = options
        .session_id
        .as_deref()
        .filter(|s| !s.is_empty())
        .filter(|_| options.cache_retention != Some(crate::types::CacheRetention::None));
    if ws::fell_back(session) {
        return None;
    }
    let account = request
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("chatgpt-account-id"))
        .map(|(_, value)| value.clone())?;
    // A sessionless request gets a UUIDv7 of its own (pi 0.81.0).
    let request_id = super::codex::cache_session(options)
        .map_or_else(|| uuid::Uuid::now_v7().to_string(), str::to_owned);
    let body = match &request.body {
        crate::request_body::RequestBody::Bytes(bytes) => serde_json::from_slice(bytes).ok(),
        crate::request_body::RequestBody::Written { write, .. } => {
            let mut bytes = Vec::new();
            write(&mut bytes).ok()?;
            serde_json::from_slice(&bytes).ok()
        }
    }?;
    Some(Plan {
        url: ws::ws_url(&model.base_url),
        headers: ws::headers(request, &request_id),
        session: session.map(|s| (s.to_owned(), account)),
        body,
        transport,
        cached_context: matches!(transport, Transport::Auto | Transport::WebsocketCached),
        connect_timeout_ms: options.websocket_connect_timeout_ms,
        idle: options
            .timeout_ms
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis),
    })
}

/// The input items a reply becomes in the next request (what a kept session need not
/// send again).
pub(super) fn response_items(model: &Model, message: &AssistantMessage) -> Vec<Value> {
    let messages = [Message::Assistant(std::sync::Arc::new(message.clone()))];
    request::convert_messages(model, None, &messages)
        .iter()
        .filter_map(|item| serde_json::to_value(item).ok())
        .filter(|item| {
            !matches!(
                item.get("type").and_then(Value::as_str),
                Some("function_call_output" | "custom_tool_call_output")
            )
        })
        .collect()
}

/// What opening came to.
pub(super) enum Opened {
    /// The first event arrived: the reply has started.
    Started {
        lease: Box<Lease>,
        first: String,
        body: Map<String, Value>,
    },
    /// It failed before the reply started: use SSE (`String`: why).
    Fallback(String),
    /// It failed for good (`true`: cancelled).
    Failed(String, bool),
}

/// The code of an `error` or `response.failed` event.
fn error_code(text: &str) -> Option<String> {
    let event: Value = serde_json::from_str(text).ok()?;
    let code = match event.get("type")?.as_str()? {
        "error" => event
            .get("code")
            .filter(|c| c.is_string())
            .or_else(|| event.get("error")?.get("code")),
        "response.failed" => event.get("response")?.get("error")?.get("code"),
        _ => None,
    };
    code?.as_str().map(str::to_owned)
}

/// Connects (or reuses the session's socket), sends the request and waits for its first
/// event, retrying once each after `websocket_connection_limit_reached` and (with the
/// whole body) after `previous_response_not_found`.
pub(super) async fn open(plan: &Plan, cancel: &tokio_util::sync::CancellationToken) -> Opened {
    let session = plan.session.as_ref().map(|(s, a)| (s.as_str(), a.as_str()));
    let mut retried_limit = false;
    let mut retried_missing = false;
    loop {
        let mut lease = match ws::acquire(
            &plan.url,
            &plan.headers,
            session,
            plan.connect_timeout_ms,
            cancel,
        )
        .await
        {
            Ok(lease) => lease,
            Err(Failure::Aborted) => return Opened::Failed(http::ABORTED.into(), true),
            Err(Failure::Transport(why)) => return Opened::Fallback(why),
        };
        let continuation = lease.continuation.take();
        let body = match continuation.filter(|_| plan.cached_context && !retried_missing) {
            Some(c) => ws::delta_body(&plan.body, &c).unwrap_or_else(|| plan.body.clone()),
            None => plan.body.clone(),
        };
        let sent = ws::send(&mut lease, ws::frame(&body)).await;
        let first = match sent {
            Ok(()) => ws::next_text(&mut lease, plan.idle, cancel).await,
            Err(failure) => Err(failure),
        };
        let why = match first {
            Ok(Some(text)) => match error_code(&text).as_deref() {
                Some(ws::PREVIOUS_RESPONSE_NOT_FOUND) if !retried_missing => {
                    retried_missing = true;
                    ws::release(lease, false, None).await;
                    continue;
                }
                Some(ws::CONNECTION_LIMIT) if !retried_limit => {
                    retried_limit = true;
                    ws::release(lease, false, None).await;
                    continue;
                }
                // A second connection limit falls back to SSE (as pi-ai 1.6).
                Some(ws::CONNECTION_LIMIT) => format!("Codex error: {}", ws::CONNECTION_LIMIT),
                _ => {
                    return Opened::Started {
                        lease: Box::new(lease),
                        first: text,
                        body: plan.body.clone(),
                    };
                }
            },
            Ok(None) => "WebSocket stream closed before response.completed".to_owned(),
            Err(Failure::Aborted) => {
                ws::release(lease, false, None).await;
                return Opened::Failed(http::ABORTED.into(), true);
            }
            Err(Failure::Transport(why)) => why,
        };
        ws::release(lease, false, None).await;
        return Opened::Fallback(why);
    }
}

/// Decodes the reply's events as the SSE path does; on success the socket goes back to the
/// session with a continuation (when `cached_context`) built by `items` from the reply.
pub(super) fn decode(
    model: Model,
    opened: (Box<Lease>, String, Map<String, Value>),
    plan: Plan,
    control: StreamControl,
    mut decoder: Decoder,
    items: impl Fn(&AssistantMessage) -> Vec<Value> + Send + 'static,
) -> impl Stream<Item = AssistantMessageEvent> + Send {
    async_stream::stream! {
        let (lease, first, body) = opened;
        let mut lease = *lease;
        let mut asm = Assembler::new(&model);
        asm.start();
        for event in asm.drain() {
            yield event;
        }
        let mut pending = Some(first);
        let mut transport_failure = false;
        loop {
            let next = match pending.take() {
                Some(text) => Ok(Some(text)),
                None => ws::next_text(&mut lease, plan.idle, &control.cancel).await,
            };
            let outcome = match next {
                Err(Failure::Aborted) => {
                    ws::release(lease, false, None).await;
                    yield asm.fail(true, http::ABORTED.to_owned());
                    return;
                }
                Err(Failure::Transport(why)) => {
                    transport_failure = true;
                    Err(why)
                }
                Ok(None) => {
                    transport_failure = true;
                    Err("WebSocket stream closed before response.completed".to_owned())
                }
                Ok(Some(text)) => {
                    control
                        .report_stream_event(&model, || serde_json::from_str(&text).ok())
                        .await;
                    let event = Sse {
                        data: Some(text),
                        ..Sse::default()
                    };
                    decoder.on_event(&event, &mut asm)
                }
            };
            let drained: Vec<_> = asm.drain().collect();
            for event in drained {
                yield event;
            }
            match outcome {
                Ok(Flow::Continue) => {}
                Ok(Flow::Stop) => break,
                Err(why) => {
                    ws::release(lease, false, None).await;
                    let mut failed = asm.fail(control.cancel.is_cancelled(), why.clone());
                    if transport_failure {
                        // pi-ai 1.6: the session's later requests go over SSE.
                        ws::record_fallback(plan.session.as_ref().map(|(s, _)| s.as_str()));
                        attach_diagnostic(&mut failed, &plan.diagnostic(&why, true));
                    }
                    yield failed;
                    return;
                }
            }
        }
        let settled = decoder.finish(&mut asm, true);
        let drained: Vec<_> = asm.drain().collect();
        for event in drained {
            yield event;
        }
        let last = match settled {
            Ok(()) => asm.finish(),
            Err(why) => asm.fail(false, why),
        };
        let continuation = match &last {
            AssistantMessageEvent::Done { message, .. } if plan.cached_context => {
                message.response_id.clone().map(|response_id| Continuation {
                    body,
                    response_id,
                    response_items: items(message),
                })
            }
            _ => None,
        };
        let keep = matches!(last, AssistantMessageEvent::Done { .. });
        ws::release(lease, keep, continuation).await;
        yield last;
    }
}
