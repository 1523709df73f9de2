//! Reading events back from `PI_EV`: a node's firehose (every session, from now on) and a
//! replay of one session after a `seq`, both through an [`OrderedReader`], in stream order.
//! A replay that starts before the first event still kept for the session says so
//! (`replayGap`): the client reloads the session instead.

use bytes::Bytes;
use tokio::sync::mpsc;

use super::engine::{ClusterError, EVENTS, Engine};
use super::ordered::{OrderedReader, Start};

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
        // "From now on" is after the stream's last sequence now; the reader starts there
        // whenever it opens its consumer, so nothing published after this call is missed.
        let after = match after {
            Some(seq) => seq,
            None => stream.info().await.map_err(js)?.state.last_sequence,
        };
        let filter = session.map_or_else(|| "pi.ev.>".to_owned(), |s| format!("pi.ev.{s}"));
        let mut reader =
            OrderedReader::new(self.jetstream.clone(), EVENTS, &filter, Start::After(after));
        let (sender, receiver) = mpsc::channel(1024);
        tokio::spawn(async move {
            loop {
                let read = tokio::select! {
                    read = reader.next() => read,
                    () = sender.closed() => return,
                };
                let delivered = Delivered {
                    seq: read.seq,
                    session: read
                        .subject
                        .strip_prefix("pi.ev.")
                        .unwrap_or_default()
                        .to_owned(),
                    payload: read.payload,
                };
                if sender.send(delivered).await.is_err() {
                    return;
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
        // From the leader, not a direct get (see `Engine::last_message`).
        let stream = self
            .jetstream
            .get_stream_no_info(EVENTS)
            .await
            .map_err(js)?;
        match stream
            .raw_message_builder()
            .next_by_subject(format!("pi.ev.{session}"))
            .send()
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
