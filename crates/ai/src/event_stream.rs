//! [`AssistantMessageEventStream`]: the stream every provider returns.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Instant;

use futures_core::Stream;
use futures_util::StreamExt;

use crate::types::{AssistantMessage, AssistantMessageEvent, StopReason};

type BoxedEvents = Pin<Box<dyn Stream<Item = AssistantMessageEvent> + Send>>;

/// A stream of [`AssistantMessageEvent`]s that ends with exactly one `done` or `error`.
///
/// The wrapper enforces the contract for any inner stream: nothing is yielded after the
/// terminal event, and an inner stream that ends without one gets a synthesized `error`.
pub struct AssistantMessageEventStream {
    inner: Option<BoxedEvents>,
    last: Option<Arc<AssistantMessage>>,
    started: Instant,
    started_ms: i64,
}

impl AssistantMessageEventStream {
    /// Wraps a provider's event stream.
    pub fn new(events: impl Stream<Item = AssistantMessageEvent> + Send + 'static) -> Self {
        Self {
            inner: Some(Box::pin(events)),
            last: None,
            started: Instant::now(),
            started_ms: crate::types::now_ms(),
        }
    }

    /// A stream that fails at once with `message` (its stop reason and error message as given).
    pub fn failed(mut message: AssistantMessage) -> Self {
        let reason = if message.stop_reason == StopReason::Aborted {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        message.stop_reason = reason;
        let event = AssistantMessageEvent::Error {
            reason,
            error: Arc::new(message),
        };
        Self::new(futures_util::stream::iter([event]))
    }

    /// Drains the stream and returns the final message (`done`'s message or `error`'s error).
    pub async fn result(mut self) -> AssistantMessage {
        let mut last = None;
        while let Some(event) = self.next().await {
            if event.is_terminal() {
                last = Some(event);
            }
        }
        match last {
            Some(AssistantMessageEvent::Done { message, .. }) => unwrap_arc(message),
            Some(AssistantMessageEvent::Error { error, .. }) => unwrap_arc(error),
            _ => ended_without_result(None),
        }
    }
}

impl AssistantMessageEventStream {
    /// Stamps the final message with the call's duration, as pi-ai 1.6 does: once, and not
    /// on a message made before this stream started.
    fn time(&self, event: &mut AssistantMessageEvent) {
        let message = match event {
            AssistantMessageEvent::Done { message, .. } => message,
            AssistantMessageEvent::Error { error, .. } => error,
            _ => return,
        };
        if message.duration_ms.is_some() || message.timestamp < self.started_ms {
            return;
        }
        let elapsed = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Arc::make_mut(message).duration_ms = Some(elapsed);
    }
}

fn unwrap_arc(message: Arc<AssistantMessage>) -> AssistantMessage {
    Arc::try_unwrap(message).unwrap_or_else(|shared| (*shared).clone())
}

fn ended_without_result(last: Option<&AssistantMessage>) -> AssistantMessage {
    let mut message = last.cloned().unwrap_or_default();
    message.stop_reason = StopReason::Error;
    message.error_message = Some("Stream ended without a final done or error event".to_owned());
    message
}

impl Stream for AssistantMessageEventStream {
    type Item = AssistantMessageEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        match inner.as_mut().poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(event)) => {
                if event.is_terminal() {
                    this.inner = None;
                    this.last = None;
                    let mut event = event;
                    this.time(&mut event);
                    return Poll::Ready(Some(event));
                } else if matches!(event, AssistantMessageEvent::Start { .. }) {
                    // Remember the message identity cheaply in case the stream breaks off.
                    this.last = Some(event.message().clone());
                }
                Poll::Ready(Some(event))
            }
            Poll::Ready(None) => {
                this.inner = None;
                let error = Arc::new(ended_without_result(this.last.take().as_deref()));
                let mut event = AssistantMessageEvent::Error {
                    reason: StopReason::Error,
                    error,
                };
                this.time(&mut event);
                Poll::Ready(Some(event))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message() -> Arc<AssistantMessage> {
        Arc::new(AssistantMessage::empty("api", "prov", "model"))
    }

    #[tokio::test]
    async fn synthesizes_error_when_inner_stream_ends_early() {
        let events = vec![AssistantMessageEvent::Start { partial: message() }];
        let stream = AssistantMessageEventStream::new(futures_util::stream::iter(events));
        let all: Vec<_> = stream.collect().await;
        assert_eq!(all.len(), 2);
        match &all[1] {
            AssistantMessageEvent::Error { error, .. } => {
                assert_eq!(error.stop_reason, StopReason::Error);
                assert_eq!(error.provider, "prov");
                assert!(
                    error
                        .error_message
                        .as_deref()
                        .unwrap_or("")
                        .contains("without a final")
                );
            }
            other => panic!("expected error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn stops_after_terminal_event() {
        let m = message();
        let events = vec![
            AssistantMessageEvent::Done {
                reason: StopReason::Stop,
                message: m.clone(),
            },
            AssistantMessageEvent::Start { partial: m },
        ];
        let stream = AssistantMessageEventStream::new(futures_util::stream::iter(events));
        let all: Vec<_> = stream.collect().await;
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].kind(), "done");
    }

    #[tokio::test]
    async fn result_returns_error_message() {
        let mut failed = AssistantMessage::empty("a", "p", "m");
        failed.error_message = Some("boom".into());
        let result = AssistantMessageEventStream::failed(failed).result().await;
        assert_eq!(result.stop_reason, StopReason::Error);
        assert_eq!(result.error_message.as_deref(), Some("boom"));
    }
}
