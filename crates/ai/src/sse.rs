//! The streaming half every SSE provider shares: decode the body into SSE events, hand them
//! to the provider's decoder, and turn cancellation, stalls and broken connections into the
//! final `error` event.

use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use futures_util::StreamExt;
use sse_stream::{Sse, SseByteStream};
use tokio_util::sync::CancellationToken;

use crate::assembler::Assembler;
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{self, ErrorStyle, HttpRequest, RetryPolicy};
use crate::types::{AssistantMessageEvent, Model};

const DEFAULT_IDLE_TIMEOUT_MS: u64 = 600_000;

/// Whether the decoder wants more events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// The provider signalled the end (`[DONE]`, `message_stop`).
    Stop,
}

/// A provider's mapping from SSE events to message updates.
pub trait SseDecoder: Send + 'static {
    /// Applies one SSE event; an `Err` ends the stream with that error text.
    fn on_event(&mut self, event: &Sse, asm: &mut Assembler) -> Result<Flow, String>;

    /// Called once when the events end (`ended_by_provider` is false on a bare EOF): close
    /// blocks, settle the stop reason, or report an incomplete stream.
    fn finish(&mut self, asm: &mut Assembler, ended_by_provider: bool) -> Result<(), String>;
}

/// Stream settings the driver needs.
#[derive(Clone)]
pub struct StreamControl {
    pub cancel: CancellationToken,
    pub idle_timeout: Duration,
    pub on_response: Option<crate::types::ResponseHook>,
    /// Sees each event's parsed data before the decoder does (`provider_stream_event`).
    pub on_stream_event: Option<crate::types::StreamEventHook>,
    /// What a status error's text starts with (`OpenAI API error`), for the providers
    /// whose pi 1.6.0 errors name them.
    pub error_prefix: Option<String>,
}

impl std::fmt::Debug for StreamControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamControl")
            .field("cancel", &self.cancel)
            .field("idle_timeout", &self.idle_timeout)
            .field("on_response", &self.on_response.is_some())
            .field("on_stream_event", &self.on_stream_event.is_some())
            .finish()
    }
}

impl StreamControl {
    /// From stream options (default idle timeout 10 minutes).
    pub fn from_options(options: &crate::types::StreamOptions) -> Self {
        Self {
            cancel: options.cancel.clone().unwrap_or_default(),
            idle_timeout: Duration::from_millis(
                options.idle_timeout_ms.unwrap_or(DEFAULT_IDLE_TIMEOUT_MS),
            ),
            on_response: options.on_response.clone(),
            on_stream_event: options.stream_event_hook().cloned(),
            error_prefix: None,
        }
    }

    /// The same, with status errors worded `<prefix> (<status>): …`.
    pub fn with_error_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.error_prefix = Some(prefix.into());
        self
    }

    /// Tells the response hook the status and headers of a response.
    pub(crate) fn report_response(&self, response: &reqwest::Response) {
        if let Some(hook) = &self.on_response {
            let headers = response
                .headers()
                .iter()
                .filter_map(|(name, value)| {
                    value
                        .to_str()
                        .ok()
                        .map(|v| (name.as_str().to_owned(), v.to_owned()))
                })
                .collect();
            hook(response.status().as_u16(), &headers);
        }
    }
}

impl StreamControl {
    /// Hands the hook one event's structured value (the JSON of its data), in stream order.
    pub(crate) async fn report_stream_event(
        &self,
        model: &Model,
        data: impl FnOnce() -> Option<serde_json::Value>,
    ) {
        if let Some(hook) = &self.on_stream_event
            && let Some(value) = data()
        {
            hook(model, value).await;
        }
    }

    /// The error of a stream that went quiet for longer than the idle timeout.
    pub(crate) fn idle_timeout_message(&self) -> String {
        format!(
            "Request timed out: no data from the provider for {}s",
            self.idle_timeout.as_secs_f64()
        )
    }
}

/// What the next read of a provider body gave.
pub(crate) enum Read<T> {
    Item(T),
    End,
    Cancelled,
    IdleTimeout,
}

/// A provider body read under the stream's cancellation and idle timeout, with one
/// cancellation waiter and one idle timer for the whole stream: re-arming either per event
/// would cost more than decoding the event. Shared by the SSE and binary decoders.
pub(crate) struct Watched<S> {
    body: std::pin::Pin<Box<S>>,
    cancelled: std::pin::Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>,
    idle: std::pin::Pin<Box<tokio::time::Sleep>>,
    last_data: tokio::time::Instant,
    idle_timeout: Duration,
}

impl<S: Stream> Watched<S> {
    pub(crate) fn new(body: S, control: &StreamControl) -> Self {
        Self {
            body: Box::pin(body),
            cancelled: Box::pin(control.cancel.clone().cancelled_owned()),
            idle: Box::pin(tokio::time::sleep(control.idle_timeout)),
            last_data: tokio::time::Instant::now(),
            idle_timeout: control.idle_timeout,
        }
    }

    /// The next item, or why there is none; cancellation wins over data.
    pub(crate) async fn next(&mut self) -> Read<S::Item> {
        loop {
            tokio::select! {
                biased;
                _ = self.cancelled.as_mut() => return Read::Cancelled,
                next = self.body.next() => {
                    self.last_data = tokio::time::Instant::now();
                    return next.map_or(Read::End, Read::Item);
                }
                _ = self.idle.as_mut() => {
                    let deadline = self.last_data + self.idle_timeout;
                    if tokio::time::Instant::now() < deadline {
                        self.idle.as_mut().reset(deadline);
                        continue;
                    }
                    return Read::IdleTimeout;
                }
            }
        }
    }
}

/// Sends `request` and streams the response through `decoder`.
pub fn run<D: SseDecoder>(
    model: Model,
    request: Result<HttpRequest, String>,
    policy: RetryPolicy,
    control: StreamControl,
    style: ErrorStyle,
    decoder: D,
) -> AssistantMessageEventStream {
    AssistantMessageEventStream::new(async_stream::stream! {
        let request = match request {
            Ok(request) => request,
            Err(message) => {
                yield Assembler::new(&model).fail(false, message);
                return;
            }
        };
        let response = match http::send(&request, policy, &control.cancel, style).await {
            Ok(response) => {
                control.report_response(&response);
                response
            }
            Err(failure) => {
                let text = failure.text(control.error_prefix.as_deref());
                yield Assembler::new(&model).fail(failure.aborted, text);
                return;
            }
        };
        let mut events = Box::pin(decode(model, response.bytes_stream(), control, decoder));
        while let Some(event) = events.next().await {
            yield event;
        }
    })
}

/// Decodes an SSE byte stream (a live body or a recording) into message events, starting with
/// `start` and ending with `done` or `error`.
pub fn decode<S, E, D>(
    model: Model,
    bytes: S,
    control: StreamControl,
    mut decoder: D,
) -> impl Stream<Item = AssistantMessageEvent> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
    D: SseDecoder,
{
    async_stream::stream! {
        let mut asm = Assembler::new(&model);
        asm.start();
        for event in asm.drain() {
            yield event;
        }
        let mut body = Watched::new(SseByteStream::new(bytes), &control);
        let mut ended_by_provider = false;
        loop {
            let outcome = match body.next().await {
                Read::Cancelled => {
                    yield asm.fail(true, http::ABORTED.to_owned());
                    return;
                }
                Read::IdleTimeout => Err(control.idle_timeout_message()),
                Read::End => break,
                Read::Item(Err(error)) => Err(transport_error(&error)),
                Read::Item(Ok(event)) => {
                    control
                        .report_stream_event(&model, || event_json(&event))
                        .await;
                    decoder.on_event(&event, &mut asm)
                }
            };
            let pending: Vec<_> = asm.drain().collect();
            for event in pending {
                yield event;
            }
            match outcome {
                Ok(Flow::Continue) => {}
                Ok(Flow::Stop) => {
                    ended_by_provider = true;
                    break;
                }
                Err(message) => {
                    let aborted = control.cancel.is_cancelled();
                    yield asm.fail(aborted, message);
                    return;
                }
            }
        }
        let settled = decoder.finish(&mut asm, ended_by_provider);
        let pending: Vec<_> = asm.drain().collect();
        for event in pending {
            yield event;
        }
        if control.cancel.is_cancelled() {
            yield asm.fail(true, http::ABORTED.to_owned());
            return;
        }
        match settled {
            Ok(()) => yield asm.finish(),
            Err(message) => yield asm.fail(false, message),
        }
    }
}

/// The structured value of an SSE event: its data as JSON; `None` for data that is not
/// JSON (`[DONE]`) and for keep-alive `ping` events, which the providers' SDKs drop.
fn event_json(event: &Sse) -> Option<serde_json::Value> {
    if event.event.as_deref() == Some("ping") {
        return None;
    }
    serde_json::from_str(event.data.as_deref()?).ok()
}

/// Decodes a recorded SSE body into a stream (replay tests and benchmarks).
pub fn replay<S, E, D>(
    model: &Model,
    bytes: S,
    cancel: CancellationToken,
    decoder: D,
) -> AssistantMessageEventStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
    D: SseDecoder,
{
    let control = StreamControl {
        cancel,
        idle_timeout: Duration::from_millis(DEFAULT_IDLE_TIMEOUT_MS),
        on_response: None,
        on_stream_event: None,
        error_prefix: None,
    };
    AssistantMessageEventStream::new(decode(model.clone(), bytes, control, decoder))
}

/// A clear text for a body that broke off or could not be decoded.
fn transport_error(error: &sse_stream::Error) -> String {
    match error {
        sse_stream::Error::Body(cause) => {
            let mut chain = cause.to_string();
            let mut source = cause.source();
            while let Some(inner) = source {
                chain.push_str(": ");
                chain.push_str(&inner.to_string());
                source = inner.source();
            }
            format!("Connection error: the stream was terminated before completion ({chain})")
        }
        other => format!("Invalid event stream from the provider: {other}"),
    }
}

/// Parses an SSE data payload as JSON, with a clear error naming the bad data.
pub fn parse_json<'a, T: serde::Deserialize<'a>>(data: &'a str) -> Result<T, String> {
    serde_json::from_str(data).map_err(|e| {
        let shown: String = data.chars().take(200).collect();
        format!("Could not parse a streamed chunk as JSON ({e}): {shown}")
    })
}
