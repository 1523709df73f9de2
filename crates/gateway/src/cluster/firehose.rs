//! Reading events back from `PI_EV`: a node's firehose (every session, from now on) and a
//! replay of one session after a `seq`, both through ordered consumers, in stream order.
//! A replay that starts before the first event still kept for the session says so
//! (`replayGap`): the client reloads the session instead.

use async_nats::jetstream::consumer::{DeliverPolicy, push};
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::engine::{ClusterError, EVENTS, Engine};

/// One event as every node receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivered {
    /// The stream sequence: the gateway-wide `seq`.
    pub seq: u64,
    pub session: String,
    pub payload: Bytes,
}

/// A replay's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayStart {
    /// Events kept from `after + 1` on: nothing was lost.
    Complete,
    /// Events older than the first kept one (whose seq is given) are gone.
    Gap(u64),
}

type Messages = async_nats::jetstream::consumer::push::Ordered;

/// An ordered consumer of `filter` from the sequence after `after`. It is a push consumer:
/// the server sends each event as it is stored, where a pull consumer would wait for the
/// client's next request.
async fn open_from(
    stream: &async_nats::jetstream::stream::Stream,
    client: &async_nats::Client,
    filter: &str,
    after: u64,
) -> Result<Messages, ClusterError> {
    let consumer = stream
        .create_consumer(push::OrderedConfig {
            deliver_subject: client.new_inbox(),
            filter_subject: filter.to_owned(),
            deliver_policy: DeliverPolicy::ByStartSequence {
                start_sequence: after + 1,
            },
            ..Default::default()
        })
        .await
        .map_err(js)?;
    consumer.messages().await.map_err(js)
}

fn js<E: std::fmt::Display>(e: E) -> ClusterError {
    ClusterError::JetStream(e.to_string())
}

impl Engine {
    /// Events from now on (`after: None`) or after `after`, of one session or of all,
    /// delivered in order, each once, on the returned channel until it is dropped.
    pub async fn events(
        &self,
        session: Option<&str>,
        after: Option<u64>,
    ) -> Result<mpsc::Receiver<Delivered>, ClusterError> {
        let mut stream = self.jetstream.get_stream(EVENTS).await.map_err(js)?;
        // "From now on" is after the stream's last sequence now. Both kinds start by
        // sequence, and anything at or before it is dropped: an ordered consumer recreated
        // before its first delivery starts again from the stream's beginning.
        let after = match after {
            Some(seq) => seq,
            None => stream.info().await.map_err(js)?.state.last_sequence,
        };
        let filter = session.map_or_else(|| "pi.ev.>".to_owned(), |s| format!("pi.ev.{s}"));
        let client = self.client.clone();
        let mut messages = open_from(&stream, &client, &filter, after).await?;
        let (sender, receiver) = mpsc::channel(1024);
        tokio::spawn(async move {
            let mut last = after;
            loop {
                match messages.next().await {
                    Some(Ok(message)) => {
                        let Ok(info) = message.info() else { continue };
                        let seq = info.stream_sequence;
                        if seq <= last {
                            continue;
                        }
                        last = seq;
                        let session = message
                            .subject
                            .as_str()
                            .strip_prefix("pi.ev.")
                            .unwrap_or_default()
                            .to_owned();
                        let delivered = Delivered {
                            seq,
                            session,
                            payload: message.payload.clone(),
                        };
                        if sender.send(delivered).await.is_err() {
                            return;
                        }
                    }
                    // The ordered consumer recovers from most errors itself (a server or
                    // the stream's leader going away); when it gives up, start it again
                    // after the last event delivered.
                    Some(Err(_)) => {
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                    None => loop {
                        if sender.is_closed() {
                            return;
                        }
                        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                        if let Ok(reopened) = open_from(&stream, &client, &filter, last).await {
                            messages = reopened;
                            break;
                        }
                    },
                }
            }
        });
        Ok(receiver)
    }

    /// Whether replaying `session` after `after` misses events dropped by retention.
    pub async fn replay_start(
        &self,
        session: &str,
        after: u64,
    ) -> Result<ReplayStart, ClusterError> {
        let stream = self.jetstream.get_stream(EVENTS).await.map_err(js)?;
        match stream
            .direct_get_first_for_subject(format!("pi.ev.{session}"))
            .await
        {
            Ok(first) if first.sequence > after + 1 => Ok(ReplayStart::Gap(first.sequence)),
            Ok(_) => Ok(ReplayStart::Complete),
            // Nothing kept for the session: only a gap if the client had seen something.
            Err(_) if after > 0 => Ok(ReplayStart::Gap(0)),
            Err(_) => Ok(ReplayStart::Complete),
        }
    }
}
