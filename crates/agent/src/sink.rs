//! Where loop events go: an async sink, and the event stream `agent_loop` returns.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use futures_core::Stream;
use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::event::AgentEvent;
use crate::message::AgentMessage;

/// Receives every event of a run, in order; the loop waits for each `emit` to finish.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: AgentEvent) -> BoxFuture<'_, ()>;
}

/// A sink feeding an unbounded channel (the stream of `agent_loop`).
pub struct ChannelSink(pub mpsc::UnboundedSender<AgentEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: AgentEvent) -> BoxFuture<'_, ()> {
        // A dropped receiver means nobody listens any more; the run still completes.
        let _ = self.0.send(event);
        Box::pin(async {})
    }
}

/// Why a run could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoopError {
    #[error("Cannot continue: no messages in context")]
    NoMessages,
    #[error("Cannot continue from message role: assistant")]
    ContinueFromAssistant,
}

/// The events of a run, ending with `agent_end`; [`Self::result`] awaits the new messages.
pub struct AgentEventStream {
    events: mpsc::UnboundedReceiver<AgentEvent>,
    result: Option<oneshot::Receiver<Vec<AgentMessage>>>,
}

impl AgentEventStream {
    pub(crate) fn new(
        events: mpsc::UnboundedReceiver<AgentEvent>,
        result: oneshot::Receiver<Vec<AgentMessage>>,
    ) -> Self {
        Self {
            events,
            result: Some(result),
        }
    }

    /// Waits for the run to end and returns the messages it produced.
    pub async fn result(mut self) -> Vec<AgentMessage> {
        self.events.close();
        match self.result.take() {
            Some(rx) => rx.await.unwrap_or_default(),
            None => Vec::new(),
        }
    }
}

impl Stream for AgentEventStream {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<AgentEvent>> {
        self.events.poll_recv(cx)
    }
}
