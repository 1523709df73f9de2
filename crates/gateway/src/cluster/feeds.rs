//! A node's delivery of events: one firehose of `PI_EV` feeds the sessions this node's
//! connections subscribe to. A session's feed is filled from the stream when its first
//! subscriber arrives (its retained events), then follows the firehose; events reach
//! clients only after the stream stored them, so after any failover no client has seen an
//! event the log lacks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::ws::Utf8Bytes;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::OnceCell;

use super::engine::{ClusterError, EVENTS, Engine};
use super::firehose::Delivered;
use super::publisher::{Batch, event_seq};
use crate::server::feed::{Feed, SubscribeResponse, Subscriber};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The frame a client receives, built from a stored envelope and its `seq`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Frame<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    event: &'a str,
    payload: &'a RawValue,
    seq: u64,
    state_version: u64,
    session_id: &'a str,
    ts: u64,
}

/// A stored event, decoded for delivery.
pub struct Decoded {
    pub seq: u64,
    /// The `seq` of the session's event before it.
    pub prev: u64,
    pub state_version: u64,
    pub running: bool,
    pub event: String,
    pub frame: Utf8Bytes,
}

/// The events of a message stored at `stream_seq`; none for a message that is not one.
pub fn decode(stream_seq: u64, payload: &[u8]) -> Vec<Decoded> {
    let Ok(batch) = serde_json::from_slice::<Batch<'_>>(payload) else {
        return Vec::new();
    };
    let mut prev = batch.prev;
    let mut out = Vec::with_capacity(batch.events.len());
    for (index, stored) in batch.events.iter().enumerate() {
        let seq = event_seq(stream_seq, index);
        let frame = Frame {
            kind: "event",
            event: stored.event,
            payload: stored.payload,
            seq,
            state_version: stored.state_version,
            session_id: batch.session_id,
            ts: stored.ts,
        };
        let Ok(text) = serde_json::to_string(&frame) else {
            continue;
        };
        out.push(Decoded {
            seq,
            prev,
            state_version: stored.state_version,
            running: stored.running,
            event: stored.event.to_owned(),
            frame: Utf8Bytes::from(text),
        });
        prev = seq;
    }
    out
}

/// Whether a stored message says a run is still in progress after its last event.
pub fn ends_running(payload: &[u8]) -> bool {
    serde_json::from_slice::<Batch<'_>>(payload)
        .ok()
        .and_then(|batch| batch.events.last().map(|e| e.running))
        .unwrap_or(false)
}

/// One session's feed on this node.
struct Slot {
    feed: Feed,
    /// Events the firehose brought before the feed was filled from the stream.
    early: Vec<Decoded>,
    filled: bool,
}

impl Slot {
    fn push(&mut self, event: Decoded) {
        // The session's previous event is missing here: a replay from before it is a gap.
        if event.prev > self.feed.last_seq() {
            self.feed.set_dropped(event.prev);
        }
        self.feed.push(event.seq, event.state_version, event.frame);
    }
}

struct Entry {
    slot: Mutex<Slot>,
    filled: OnceCell<()>,
}

/// The feeds of the sessions this node's connections follow.
pub struct Feeds {
    engine: Engine,
    capacity: usize,
    map: Mutex<HashMap<String, Arc<Entry>>>,
}

impl Feeds {
    /// Starts the firehose (events from now on).
    pub async fn start(engine: Engine, capacity: usize) -> Result<Arc<Self>, ClusterError> {
        let mut firehose = engine.events(None, None).await?;
        let feeds = Arc::new(Self {
            engine,
            capacity,
            map: Mutex::new(HashMap::new()),
        });
        let weak = Arc::downgrade(&feeds);
        tokio::spawn(async move {
            while let Some(delivered) = firehose.recv().await {
                let Some(feeds) = weak.upgrade() else { break };
                feeds.deliver(delivered);
            }
        });
        Ok(feeds)
    }

    fn deliver(&self, delivered: Delivered) {
        let Some(entry) = lock(&self.map).get(&delivered.session).cloned() else {
            return;
        };
        let events = decode(delivered.seq, &delivered.payload);
        let mut slot = lock(&entry.slot);
        for event in events {
            if slot.filled {
                slot.push(event);
            } else {
                slot.early.push(event);
            }
        }
    }

    /// Subscribes `sub` to `session`: the response, the replay after `from_seq`, then
    /// live events, in order.
    pub async fn subscribe(
        &self,
        session: &str,
        sub: Subscriber,
        from_seq: Option<u64>,
        response: SubscribeResponse,
    ) {
        let entry = Arc::clone(
            lock(&self.map)
                .entry(session.to_owned())
                .or_insert_with(|| {
                    Arc::new(Entry {
                        slot: Mutex::new(Slot {
                            feed: Feed::new(self.capacity),
                            early: Vec::new(),
                            filled: false,
                        }),
                        filled: OnceCell::new(),
                    })
                }),
        );
        entry
            .filled
            .get_or_init(|| async {
                // Live events wait (in `early`) until the stored ones are in: the read is
                // tried again while the stream is busy or electing, and if it still fails,
                // the feed goes on with the live events alone rather than none.
                let mut tries = 0u32;
                let stored = loop {
                    match self.stored(session).await {
                        Ok(stored) => break stored,
                        Err(e) if tries < 8 => {
                            tries += 1;
                            super::trace!("{session}: reading its events failed: {e}");
                            tokio::time::sleep(std::time::Duration::from_millis(100) * tries).await;
                        }
                        Err(e) => {
                            eprintln!(
                                "pi-gateway: cannot read the stored events of session \
                                 {session}: {e}; live events only"
                            );
                            break Vec::new();
                        }
                    }
                };
                let mut slot = lock(&entry.slot);
                for event in stored {
                    slot.push(event);
                }
                let early = std::mem::take(&mut slot.early);
                for event in early {
                    slot.push(event);
                }
                slot.filled = true;
            })
            .await;
        let mut slot = lock(&entry.slot);
        let state_version = slot.feed.state_version();
        slot.feed.subscribe(sub, from_seq, state_version, response);
    }

    pub fn unsubscribe(&self, session: &str, conn: u64) {
        let mut map = lock(&self.map);
        let Some(entry) = map.get(session) else {
            return;
        };
        let empty = {
            let mut slot = lock(&entry.slot);
            slot.feed.unsubscribe(conn);
            slot.feed.subscriber_count() == 0 && slot.filled
        };
        if empty {
            map.remove(session);
        }
    }

    /// The events of `session` the stream keeps, oldest first.
    async fn stored(&self, session: &str) -> Result<Vec<Decoded>, ClusterError> {
        let messages = self
            .engine
            .read_subject(EVENTS, &format!("pi.ev.{session}"))
            .await?;
        Ok(messages
            .iter()
            .flat_map(|(seq, payload)| decode(*seq, payload))
            .collect())
    }
}
