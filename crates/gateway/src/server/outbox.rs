//! A connection's outbound frames. Whoever produces a frame (a session publishing an
//! event, the reader answering a request) writes it straight to the socket when nothing
//! is queued before it and the socket takes it without waiting; otherwise the frame is
//! queued, in order, for the connection's writer task. Writing inline saves a task switch
//! per frame: under load an event reaches the client when it exists, not after every
//! other ready task of the gateway has run.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use axum::extract::ws::{Message, Utf8Bytes};
use futures_util::{Sink, SinkExt};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The socket's sending half.
pub type FrameSink = Pin<Box<dyn Sink<Message, Error = axum::Error> + Send>>;

/// The outbound side of one connection.
pub struct Outbox {
    state: Mutex<State>,
    wake: Notify,
    /// Frames that may wait in the queue before the connection counts as lagging.
    capacity: usize,
    /// Cancelled when the queue overflows: the client must reconnect and replay.
    lagged: CancellationToken,
}

struct State {
    /// `None` while the writer task is writing with it.
    sink: Option<FrameSink>,
    queue: VecDeque<Message>,
    /// An inline write left bytes the socket has not taken yet; the writer finishes it.
    unflushed: bool,
    /// No frame is accepted any more (closing, or the socket failed).
    closed: bool,
}

/// How an inline write went.
enum Inline {
    Written,
    /// Handed to the sink, but the socket did not take all of it yet.
    Unflushed,
    /// The sink could not accept it now; the frame comes back to be queued.
    Busy(Message),
    Failed,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Outbox {
    pub fn new(sink: FrameSink, capacity: usize) -> Arc<Self> {
        Arc::new(Outbox {
            state: Mutex::new(State {
                sink: Some(sink),
                queue: VecDeque::new(),
                unflushed: false,
                closed: false,
            }),
            wake: Notify::new(),
            capacity: capacity.max(1),
            lagged: CancellationToken::new(),
        })
    }

    /// Cancelled when the client fell too far behind.
    pub fn lagged(&self) -> &CancellationToken {
        &self.lagged
    }

    /// Sends or queues a text frame; false when the connection is closed or lagging (then
    /// the frame is dropped and the client must reconnect).
    pub fn offer(&self, frame: Utf8Bytes) -> bool {
        self.offer_message(Message::Text(frame))
    }

    /// [`offer`](Self::offer) for any WebSocket message (a Ping, in order with the frames).
    pub fn offer_message(&self, frame: Message) -> bool {
        let mut state = lock(&self.state);
        if state.closed {
            return false;
        }
        let mut frame = frame;
        if state.queue.is_empty()
            && !state.unflushed
            && let Some(sink) = state.sink.as_mut()
        {
            match write_inline(sink, frame) {
                Inline::Written => return true,
                Inline::Unflushed => {
                    state.unflushed = true;
                    drop(state);
                    self.wake.notify_one();
                    return true;
                }
                Inline::Busy(back) => frame = back,
                Inline::Failed => {
                    state.closed = true;
                    return false;
                }
            }
        }
        if state.queue.len() >= self.capacity {
            drop(state);
            self.lagged.cancel();
            return false;
        }
        state.queue.push_back(frame);
        drop(state);
        self.wake.notify_one();
        true
    }

    /// The writer task: writes what was queued and finishes inline writes the socket could
    /// not take at once, until `done`; then sends what is left and a Close frame.
    pub async fn run_writer(self: Arc<Self>, done: CancellationToken) {
        loop {
            tokio::select! {
                biased;
                _ = self.wake.notified() => {
                    if !self.drain().await {
                        return;
                    }
                }
                _ = done.cancelled() => break,
            }
        }
        lock(&self.state).closed = true;
        if !self.drain().await {
            return;
        }
        let sink = lock(&self.state).sink.take();
        if let Some(mut sink) = sink {
            let _ = sink.send(Message::Close(None)).await;
            let _ = sink.close().await;
        }
    }

    /// Writes everything queued, in order; false when the socket failed.
    async fn drain(&self) -> bool {
        loop {
            let (mut sink, batch) = {
                let mut state = lock(&self.state);
                if state.queue.is_empty() && !state.unflushed {
                    return true;
                }
                let Some(sink) = state.sink.take() else {
                    return true;
                };
                state.unflushed = false;
                (sink, std::mem::take(&mut state.queue))
            };
            let mut ok = true;
            for frame in batch {
                if sink.feed(frame).await.is_err() {
                    ok = false;
                    break;
                }
            }
            if ok {
                ok = sink.flush().await.is_ok();
            }
            let mut state = lock(&self.state);
            state.sink = Some(sink);
            if !ok {
                state.closed = true;
                state.queue.clear();
                return false;
            }
        }
    }
}

/// Hands `frame` to the sink and flushes, without waiting for anything.
fn write_inline(sink: &mut FrameSink, frame: Message) -> Inline {
    let mut cx = Context::from_waker(Waker::noop());
    match sink.as_mut().poll_ready(&mut cx) {
        Poll::Ready(Ok(())) => {}
        Poll::Ready(Err(_)) => return Inline::Failed,
        Poll::Pending => return Inline::Busy(frame),
    }
    if sink.as_mut().start_send(frame).is_err() {
        return Inline::Failed;
    }
    match sink.as_mut().poll_flush(&mut cx) {
        Poll::Ready(Ok(())) => Inline::Written,
        Poll::Ready(Err(_)) => Inline::Failed,
        Poll::Pending => Inline::Unflushed,
    }
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;
