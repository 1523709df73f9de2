//! Reading a stream in order, each message once, for as long as the reader lives: a push
//! consumer the reader subscribes to *before* creating it (so nothing is pushed before
//! anyone listens), made again from the message after the last one given out whenever a
//! delivery goes missing, the heartbeats stop or the connection comes back.
//! async-nats' own ordered consumer subscribes after creating, waits 5 s of silence, and
//! when nothing was delivered yet starts again from the stream's first message, which for
//! the event stream is everything it keeps.

use std::time::Duration;

use async_nats::jetstream::{self, consumer::DeliverPolicy, consumer::push};
use async_nats::{StatusCode, Subscriber};
use bytes::Bytes;
use futures_util::StreamExt;

/// How often an idle consumer says it is alive.
const HEARTBEAT: Duration = Duration::from_secs(1);
/// Silence after which the consumer is taken for gone and made again.
const SILENCE: Duration = Duration::from_secs(3);
/// How long the server keeps a consumer nobody listens to.
const INACTIVE: Duration = Duration::from_secs(30);

/// Where a reader starts.
#[derive(Debug, Clone, Copy)]
pub enum Start {
    /// With the message after this stream sequence.
    After(u64),
    /// With the last message of each subject (a KV bucket's current values).
    LastPerSubject,
}

/// One message given out.
pub struct Read {
    pub seq: u64,
    pub subject: String,
    pub headers: Option<async_nats::HeaderMap>,
    pub payload: Bytes,
}

/// An ordered reader of `filter` in `stream`.
pub struct OrderedReader {
    jetstream: jetstream::Context,
    stream: String,
    filter: String,
    start: Start,
    subscriber: Option<Subscriber>,
    /// The current consumer's name, deleted when it is replaced or the reader dropped.
    consumer: Option<String>,
    /// The consumer sequence of the last message received from the current consumer.
    consumer_seq: u64,
    /// The stream sequence of the last message given out.
    last: u64,
}

impl OrderedReader {
    /// A reader that opens its consumer on the first [`Self::next`].
    pub fn new(jetstream: jetstream::Context, stream: &str, filter: &str, start: Start) -> Self {
        let last = match start {
            Start::After(seq) => seq,
            Start::LastPerSubject => 0,
        };
        OrderedReader {
            jetstream,
            stream: stream.to_owned(),
            filter: filter.to_owned(),
            start,
            subscriber: None,
            consumer: None,
            consumer_seq: 0,
            last,
        }
    }

    /// Subscribes to a new inbox, then creates the consumer pushing to it.
    async fn open(&mut self) -> Result<(), String> {
        self.forget_consumer();
        let client = self.jetstream.client();
        let inbox = client.new_inbox();
        let subscriber = client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| e.to_string())?;
        let deliver_policy = match self.start {
            Start::LastPerSubject if self.last == 0 => DeliverPolicy::LastPerSubject,
            _ => DeliverPolicy::ByStartSequence {
                start_sequence: self.last + 1,
            },
        };
        let consumer = self
            .jetstream
            .create_consumer_on_stream(
                push::Config {
                    deliver_subject: inbox,
                    filter_subject: self.filter.clone(),
                    deliver_policy,
                    ack_policy: jetstream::consumer::AckPolicy::None,
                    replay_policy: jetstream::consumer::ReplayPolicy::Instant,
                    flow_control: true,
                    idle_heartbeat: HEARTBEAT,
                    num_replicas: 1,
                    memory_storage: true,
                    inactive_threshold: INACTIVE,
                    ..Default::default()
                },
                &self.stream,
            )
            .await
            .map_err(|e| e.to_string())?;
        self.consumer = Some(consumer.cached_info().name.clone());
        self.subscriber = Some(subscriber);
        self.consumer_seq = 0;
        Ok(())
    }

    /// The next message, waiting as long as it takes (retrying while the stream has no
    /// leader or the servers are away).
    pub async fn next(&mut self) -> Read {
        loop {
            let Some(subscriber) = self.subscriber.as_mut() else {
                let opened = self.open().await;
                super::trace!(
                    "reading {} {} after {}: {opened:?}",
                    self.stream,
                    self.filter,
                    self.last
                );
                if opened.is_err() {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                continue;
            };
            let message = match tokio::time::timeout(SILENCE, subscriber.next()).await {
                Ok(Some(message)) => message,
                // Silence, or the subscription ended: make the consumer again.
                Ok(None) | Err(_) => {
                    self.subscriber = None;
                    continue;
                }
            };
            if message.status == Some(StatusCode::IDLE_HEARTBEAT) {
                self.heartbeat(&message).await;
                continue;
            }
            if message.status.is_some() {
                continue;
            }
            let message = jetstream::Message {
                message,
                context: self.jetstream.clone(),
            };
            let Ok(info) = message.info() else { continue };
            let (consumer_seq, seq) = (info.consumer_sequence, info.stream_sequence);
            if consumer_seq != self.consumer_seq + 1 {
                // A delivery went missing: start again after the last one given out.
                self.subscriber = None;
                continue;
            }
            self.consumer_seq = consumer_seq;
            if seq <= self.last {
                continue;
            }
            self.last = seq;
            let message = message.message;
            return Read {
                seq,
                subject: message.subject.to_string(),
                headers: message.headers,
                payload: message.payload,
            };
        }
    }

    /// Deletes the current consumer in the background (the server would remove it after
    /// [`INACTIVE`] anyway).
    fn forget_consumer(&mut self) {
        let Some(name) = self.consumer.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let jetstream = self.jetstream.clone();
            let stream = self.stream.clone();
            runtime.spawn(async move {
                let _ = jetstream.delete_consumer_from_stream(name, stream).await;
            });
        }
    }

    /// Answers a flow-control request or a stall, and checks an idle heartbeat's count of
    /// deliveries against ours (a mismatch means one went missing).
    async fn heartbeat(&mut self, message: &async_nats::Message) {
        let client = self.jetstream.client();
        if let Some(reply) = &message.reply {
            let _ = client.publish(reply.clone(), Bytes::new()).await;
        }
        let Some(headers) = &message.headers else {
            return;
        };
        if let Some(stalled) = headers.get("Nats-Consumer-Stalled") {
            let _ = client
                .publish(stalled.as_str().to_owned(), Bytes::new())
                .await;
        }
        if message.reply.is_none()
            && let Some(count) = headers.get(async_nats::header::NATS_LAST_CONSUMER)
            && count.as_str().parse::<u64>().ok() != Some(self.consumer_seq)
        {
            self.subscriber = None;
        }
    }
}

impl Drop for OrderedReader {
    fn drop(&mut self) {
        self.forget_consumer();
    }
}

/// One change of a KV bucket as a watch sees it.
pub struct KvChange {
    pub key: String,
    /// The new value, or `None` when the key was deleted or purged.
    pub value: Option<Bytes>,
}

/// Follows the KV bucket `bucket`: its current values first (`history`) or only changes
/// from now on, each key's changes in order.
pub struct KvWatch {
    reader: OrderedReader,
    prefix: String,
}

impl KvWatch {
    pub async fn open(
        jetstream: jetstream::Context,
        bucket: &str,
        history: bool,
    ) -> Result<KvWatch, String> {
        let stream = format!("KV_{bucket}");
        let start = if history {
            Start::LastPerSubject
        } else {
            let mut info = jetstream
                .get_stream(&stream)
                .await
                .map_err(|e| e.to_string())?;
            let last = info.info().await.map_err(|e| e.to_string())?;
            Start::After(last.state.last_sequence)
        };
        let prefix = format!("$KV.{bucket}.");
        let reader = OrderedReader::new(jetstream, &stream, &format!("{prefix}>"), start);
        Ok(KvWatch { reader, prefix })
    }

    /// The next change.
    pub async fn next(&mut self) -> KvChange {
        let read = self.reader.next().await;
        let removed = read.headers.as_ref().is_some_and(|h| {
            h.get("KV-Operation")
                .is_some_and(|op| matches!(op.as_str(), "DEL" | "PURGE"))
        });
        KvChange {
            key: read
                .subject
                .strip_prefix(&self.prefix)
                .unwrap_or(&read.subject)
                .to_owned(),
            value: (!removed).then_some(read.payload),
        }
    }
}
