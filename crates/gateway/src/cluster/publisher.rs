//! The owner's side of a session's events: the events a session emits are published to
//! `PI_EV` in order, one message at a time (the next waits for the stream's
//! acknowledgement, so a retry after a lost acknowledgement can never land behind a later
//! message). The events waiting behind an acknowledgement go together in the next message
//! (up to [`PER_MESSAGE`]), so a fast stream costs one replicated write per round trip, not
//! per event. An event's `seq` is its message's stream sequence times [`PER_MESSAGE`] plus
//! its place in the message: the same on every node, and increasing. Every message carries
//! the `seq` of the session's previous event, so a node joining late knows what it missed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::engine::{ClusterError, Engine};
use crate::server::event_sink::{EventSink, OutgoingEvent};

/// Events stored in one message at most; an event's `seq` is its message's stream sequence
/// times this, plus its place in the message.
pub const PER_MESSAGE: u64 = 1024;

/// The bytes of events gathered into one message at most (NATS takes 1 MiB by default).
const MESSAGE_BYTES: usize = 512 * 1024;

/// The `seq` of the event at `index` of the message stored at `stream_seq`.
pub fn event_seq(stream_seq: u64, index: usize) -> u64 {
    stream_seq * PER_MESSAGE + index as u64
}

/// A message of `PI_EV`: a session's events in order, with the `seq` of its event before
/// them.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Batch<'a> {
    pub session_id: &'a str,
    pub prev: u64,
    #[serde(borrow)]
    pub events: Vec<StoredEvent<'a>>,
}

/// One event of a [`Batch`]: the event frame without its `seq` and session, and whether a
/// run is in progress after it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredEvent<'a> {
    pub event: &'a str,
    pub state_version: u64,
    pub ts: u64,
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
            let mut waiting: Option<OutgoingEvent> = None;
            loop {
                let first = match waiting.take() {
                    Some(event) => event,
                    None => match events.recv().await {
                        Some(event) => event,
                        None => return,
                    },
                };
                let mut batch = vec![first];
                let mut bytes = batch[0].payload.len();
                while batch.len() < PER_MESSAGE as usize && bytes < MESSAGE_BYTES {
                    match events.try_recv() {
                        Ok(more) => {
                            bytes += more.payload.len();
                            batch.push(more);
                        }
                        Err(_) => break,
                    }
                }
                // An event that would make the message too big waits for the next one.
                if batch.len() > 1 && bytes > MESSAGE_BYTES {
                    waiting = batch.pop();
                }
                let now_running = batch.last().is_some_and(|e| e.running);
                if running.swap(now_running, Ordering::SeqCst) != now_running {
                    running_changed.notify_one();
                }
                count += 1;
                let id = format!("{session}:{writer}:{count}");
                let Some(payload) = encode(&session, &batch, prev) else {
                    done.fetch_add(batch.len() as u64, Ordering::SeqCst);
                    continue;
                };
                match publish(&engine, &session, &id, payload, &fence, give_up).await {
                    Some(stream_seq) => {
                        prev = event_seq(stream_seq, batch.len() - 1);
                        last_seq.store(prev, Ordering::SeqCst);
                    }
                    None => {
                        done.store(u64::MAX, Ordering::SeqCst);
                        progress.notify_waiters();
                        stalled.cancel();
                        return;
                    }
                }
                done.fetch_add(batch.len() as u64, Ordering::SeqCst);
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

/// The message holding `events`.
fn encode(session: &str, events: &[OutgoingEvent], prev: u64) -> Option<Bytes> {
    let payloads: Vec<Box<RawValue>> = events
        .iter()
        .map(|e| RawValue::from_string(e.payload.clone()))
        .collect::<Result<_, _>>()
        .ok()?;
    let batch = Batch {
        session_id: session,
        prev,
        events: events
            .iter()
            .zip(&payloads)
            .map(|(event, payload)| StoredEvent {
                event: event.name,
                state_version: event.state_version,
                ts: event.ts,
                running: event.running,
                payload,
            })
            .collect(),
    };
    serde_json::to_vec(&batch).ok().map(Bytes::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: &'static str, payload: &str, running: bool) -> OutgoingEvent {
        OutgoingEvent {
            name,
            payload: payload.to_owned(),
            state_version: 2,
            ts: 7,
            running,
        }
    }

    #[test]
    fn a_message_holds_its_events_in_order_with_the_previous_seq() {
        let events = [
            event("text_delta", r#"{"delta":"a"}"#, true),
            event("agent_end", r#"{"x":1}"#, false),
        ];
        let bytes = encode("s1", &events, 99).unwrap_or_default();
        let batch: Batch<'_> = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(batch.session_id, "s1");
        assert_eq!(batch.prev, 99);
        let names: Vec<&str> = batch.events.iter().map(|e| e.event).collect();
        assert_eq!(names, ["text_delta", "agent_end"]);
        assert_eq!(batch.events[1].payload.get(), r#"{"x":1}"#);
        assert!(!batch.events[1].running);
        assert!(event_seq(3, 255) < event_seq(4, 0));
    }
}
