#![allow(clippy::unwrap_used)]

use std::sync::Mutex as StdMutex;
use std::time::Duration;

use super::*;

/// A sink that takes frames when open and waits (like a full socket) when blocked.
#[derive(Default)]
struct Probe {
    taken: Vec<String>,
    closed: bool,
    blocked: bool,
    failing: bool,
    waker: Option<Waker>,
}

#[derive(Clone, Default)]
struct ProbeSink(Arc<StdMutex<Probe>>);

impl ProbeSink {
    fn taken(&self) -> Vec<String> {
        self.0.lock().unwrap().taken.clone()
    }
    fn set_blocked(&self, blocked: bool) {
        let waker = {
            let mut probe = self.0.lock().unwrap();
            probe.blocked = blocked;
            probe.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
    fn poll_open(&self, cx: &mut Context<'_>) -> Poll<Result<(), axum::Error>> {
        let mut probe = self.0.lock().unwrap();
        if probe.failing {
            return Poll::Ready(Err(axum::Error::new("broken pipe")));
        }
        if probe.blocked {
            probe.waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        Poll::Ready(Ok(()))
    }
}

impl Sink<Message> for ProbeSink {
    type Error = axum::Error;
    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.poll_open(cx)
    }
    fn start_send(self: Pin<&mut Self>, item: Message) -> Result<(), Self::Error> {
        let mut probe = self.0.lock().unwrap();
        match item {
            Message::Text(text) => probe.taken.push(text.as_str().to_owned()),
            Message::Close(_) => probe.closed = true,
            _ => {}
        }
        Ok(())
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.poll_open(cx)
    }
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
}

fn frame(text: &str) -> Utf8Bytes {
    Utf8Bytes::from(text.to_owned())
}

fn outbox(probe: &ProbeSink, capacity: usize) -> Arc<Outbox> {
    Outbox::new(Box::pin(probe.clone()), capacity)
}

async fn until(probe: &ProbeSink, count: usize) -> Vec<String> {
    for _ in 0..200 {
        let taken = probe.taken();
        if taken.len() >= count {
            return taken;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    probe.taken()
}

#[test]
fn an_open_socket_takes_frames_inline_without_the_writer() {
    let probe = ProbeSink::default();
    let out = outbox(&probe, 8);
    assert!(out.offer(frame("a")));
    assert!(out.offer(frame("b")));
    assert_eq!(probe.taken(), ["a", "b"]);
}

#[tokio::test]
async fn frames_wait_in_order_while_the_socket_is_full_and_later_ones_stay_behind_them() {
    let probe = ProbeSink::default();
    let out = outbox(&probe, 8);
    let done = CancellationToken::new();
    let writer = tokio::spawn(Arc::clone(&out).run_writer(done.clone()));
    probe.set_blocked(true);
    assert!(out.offer(frame("1")));
    assert!(out.offer(frame("2")));
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(probe.taken().is_empty());
    probe.set_blocked(false);
    assert!(out.offer(frame("3")));
    assert_eq!(until(&probe, 3).await, ["1", "2", "3"]);
    // With the queue drained, frames go inline again.
    assert!(out.offer(frame("4")));
    assert_eq!(probe.taken(), ["1", "2", "3", "4"]);
    done.cancel();
    writer.await.unwrap();
    assert!(probe.0.lock().unwrap().closed);
}

#[tokio::test]
async fn a_full_queue_marks_the_connection_lagging() {
    let probe = ProbeSink::default();
    probe.set_blocked(true);
    let out = outbox(&probe, 2);
    assert!(out.offer(frame("1")));
    assert!(out.offer(frame("2")));
    assert!(!out.lagged().is_cancelled());
    assert!(!out.offer(frame("3")));
    assert!(out.lagged().is_cancelled());
}

#[tokio::test]
async fn a_failed_socket_refuses_further_frames() {
    let probe = ProbeSink::default();
    let out = outbox(&probe, 8);
    probe.0.lock().unwrap().failing = true;
    assert!(!out.offer(frame("lost")));
    assert!(!out.offer(frame("also lost")));
}

#[tokio::test]
async fn closing_sends_what_is_queued_then_refuses() {
    let probe = ProbeSink::default();
    let out = outbox(&probe, 8);
    probe.set_blocked(true);
    assert!(out.offer(frame("last")));
    let done = CancellationToken::new();
    done.cancel();
    let writer = tokio::spawn(Arc::clone(&out).run_writer(done));
    tokio::time::sleep(Duration::from_millis(20)).await;
    probe.set_blocked(false);
    writer.await.unwrap();
    assert_eq!(probe.taken(), ["last"]);
    assert!(probe.0.lock().unwrap().closed);
    assert!(!out.offer(frame("after close")));
}
