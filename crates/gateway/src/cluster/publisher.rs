//! The owner's side of a session's events: each event the session emits is published to
//! `PI_EV` in order, one at a time (the next waits for the stream's acknowledgement, so a
//! retry after a lost acknowledgement can never land behind a later event). Text deltas
//! waiting behind an acknowledgement are coalesced into one. Every event carries the `seq`
//! of the session's previous one, so a node joining late knows what it missed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::engine::{ClusterError, Engine};
use crate::events::TextDelta;
use crate::server::event_sink::{EventSink, OutgoingEvent};

/// An event as stored in `PI_EV`: the event frame without its `seq` (the stream gives it),
/// with the session's previous `seq` and whether a run is in progress after it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope<'a> {
    pub event: &'a str,
    pub state_version: u64,
    pub session_id: &'a str,
    pub ts: u64,
    pub prev: u64,
    pub running: bool,
    #[serde(borrow)]
    pub payload: &'a RawValue,
}

/// Says whether the owner may still publish (it holds the lane's lease).
pub type Fence = Arc<dyn Fn() -> bool + Send + Sync>;

/// The sink a session this node owns publishes through.
pub struct EventPublisher {
    sender: mpsc::UnboundedSender<OutgoingEvent>,
    last_seq: Arc<AtomicU64>,
    running: Arc<AtomicBool>,
    sent: AtomicU64,
    /// Events handled (published, or given up when fenced).
    done: Arc<AtomicU64>,
    progress: Arc<Notify>,
    /// Cancelled when events could not be stored for a while, or the lane was lost.
    pub stalled: CancellationToken,
}

impl EventSink for EventPublisher {
    fn send(&self, event: OutgoingEvent) {
        self.sent.fetch_add(1, Ordering::SeqCst);
        let _ = self.sender.send(event);
    }

    fn last_seq(&self) -> u64 {
        self.last_seq.load(Ordering::SeqCst)
    }
}

impl EventPublisher {
    /// Starts publishing `session`'s events once `ready` says the lease is held; `prev` is
    /// the `seq` of its last stored event (0: none). `running_changed` is notified when a
    /// run starts or ends, so the lease says so at once.
    pub fn start(
        engine: Engine,
        session: &str,
        prev: u64,
        ready: oneshot::Receiver<bool>,
        fence: Fence,
        running_changed: Arc<Notify>,
    ) -> Self {
        let (sender, mut events) = mpsc::unbounded_channel::<OutgoingEvent>();
        let last_seq = Arc::new(AtomicU64::new(prev));
        let stalled = CancellationToken::new();
        let give_up = engine.config.lease_ttl * 2;
        let running = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let progress = Arc::new(Notify::new());
        let publisher = Self {
            sender,
            last_seq: Arc::clone(&last_seq),
            running: Arc::clone(&running),
            sent: AtomicU64::new(0),
            done: Arc::clone(&done),
            progress: Arc::clone(&progress),
            stalled: stalled.clone(),
        };
        let session = session.to_owned();
        let writer = uuid::Uuid::new_v4().simple().to_string();
        tokio::spawn(async move {
            if !ready.await.unwrap_or(false) {
                return;
            }
            let mut prev = prev;
            let mut count: u64 = 0;
            let mut batch = Vec::new();
            while let Some(first) = events.recv().await {
                batch.push(first);
                while let Ok(more) = events.try_recv() {
                    batch.push(more);
                }
                let taken = batch.len() as u64;
                for event in coalesce(std::mem::take(&mut batch)) {
                    if running.swap(event.running, Ordering::SeqCst) != event.running {
                        running_changed.notify_one();
                    }
                    count += 1;
                    let id = format!("{session}:{writer}:{count}");
                    let Some(payload) = envelope(&session, &event, prev) else {
                        continue;
                    };
                    match publish(&engine, &session, &id, payload, &fence, give_up).await {
                        Some(seq) => {
                            prev = seq;
                            last_seq.store(seq, Ordering::SeqCst);
                        }
                        None => {
                            done.store(u64::MAX, Ordering::SeqCst);
                            progress.notify_waiters();
                            stalled.cancel();
                            return;
                        }
                    }
                }
                done.fetch_add(taken, Ordering::SeqCst);
                progress.notify_waiters();
            }
        });
        publisher
    }

    /// Waits (at most `limit`) until every event sent so far is stored (or given up).
    pub async fn flush(&self, limit: Duration) {
        let _ = tokio::time::timeout(limit, async {
            loop {
                let notified = self.progress.notified();
                if self.done.load(Ordering::SeqCst) >= self.sent.load(Ordering::SeqCst) {
                    return;
                }
                notified.await;
            }
        })
        .await;
    }

    /// Whether the last event published said a run is in progress.
    pub fn running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }
}

/// Publishes until acknowledged (the same message id each time, so a retry whose first
/// attempt was stored is not stored twice); `None` once the fence says the lane is lost,
/// or after failing for `give_up` (the owner then gives the lane up, and the node taking
/// it over reports the run as interrupted).
async fn publish(
    engine: &Engine,
    session: &str,
    id: &str,
    payload: Bytes,
    fence: &Fence,
    give_up: Duration,
) -> Option<u64> {
    let mut pause = Duration::from_millis(25);
    let started = std::time::Instant::now();
    loop {
        if !fence() {
            return None;
        }
        match engine.publish_event(session, id, payload.clone()).await {
            Ok(seq) => return Some(seq),
            Err(ClusterError::Fenced(_) | ClusterError::LaneTaken(_)) => return None,
            Err(e) => {
                if started.elapsed() > give_up {
                    eprintln!(
                        "pi-gateway: the events of session {session} cannot be stored ({e}); \
                         giving its lane up"
                    );
                    return None;
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
        }
    }
}

fn envelope(session: &str, event: &OutgoingEvent, prev: u64) -> Option<Bytes> {
    let payload = RawValue::from_string(event.payload.clone()).ok()?;
    let envelope = Envelope {
        event: event.name,
        state_version: event.state_version,
        session_id: session,
        ts: event.ts,
        prev,
        running: event.running,
        payload: &payload,
    };
    serde_json::to_vec(&envelope).ok().map(Bytes::from)
}

/// Joins text deltas of one message that follow each other into one delta.
fn coalesce(events: Vec<OutgoingEvent>) -> Vec<OutgoingEvent> {
    let mut out: Vec<OutgoingEvent> = Vec::with_capacity(events.len());
    let mut open: Option<TextDelta> = None;
    for event in events {
        if event.name == "text_delta"
            && let Ok(delta) = serde_json::from_str::<TextDelta>(&event.payload)
        {
            match (&mut open, out.last_mut()) {
                (Some(joined), Some(last)) if joined.message_id == delta.message_id => {
                    joined.delta.push_str(&delta.delta);
                    last.payload = serde_json::to_string(joined).unwrap_or_default();
                    last.ts = event.ts;
                    continue;
                }
                _ => {
                    open = Some(delta);
                    out.push(event);
                    continue;
                }
            }
        }
        open = None;
        out.push(event);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: &'static str, payload: &str) -> OutgoingEvent {
        OutgoingEvent {
            name,
            payload: payload.to_owned(),
            state_version: 1,
            ts: 0,
            running: true,
        }
    }

    fn delta(message: &str, text: &str, index: usize) -> OutgoingEvent {
        event(
            "text_delta",
            &serde_json::json!({"messageId": message, "delta": text, "index": index}).to_string(),
        )
    }

    #[test]
    fn deltas_of_one_message_in_a_row_become_one() {
        let out = coalesce(vec![
            event("message_start", "{}"),
            delta("m1", "Hel", 0),
            delta("m1", "lo", 3),
            delta("m2", "x", 0),
            event("message_end", "{}"),
            delta("m2", "y", 1),
        ]);
        let names: Vec<&str> = out.iter().map(|e| e.name).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "text_delta",
                "text_delta",
                "message_end",
                "text_delta"
            ]
        );
        let joined: TextDelta =
            serde_json::from_str(&out[1].payload).unwrap_or_else(|_| TextDelta {
                message_id: String::new(),
                delta: String::new(),
                index: 99,
            });
        assert_eq!(joined.delta, "Hello");
        assert_eq!(joined.index, 0);
    }
}
