//! The connection to NATS and the JetStream objects the cluster uses, created on first
//! connect and shared by every node.

use std::time::Duration;

use async_nats::jetstream::{self, kv, object_store, stream};
use bytes::Bytes;

/// How a node joins the cluster.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// NATS server URLs (any of them; the client fails over between them).
    pub urls: Vec<String>,
    /// This node's name, written into the leases it holds.
    pub node_id: String,
    /// How long a lease lives without renewal.
    pub lease_ttl: Duration,
    /// Replicas of every stream and bucket (3 in a 3-server cluster).
    pub replicas: usize,
    /// How long events are kept for replay.
    pub event_retention: Duration,
    /// Events kept per session (older ones are dropped; a replay from before them is a gap).
    pub events_per_session: i64,
}

impl ClusterConfig {
    pub fn new(urls: Vec<String>, node_id: impl Into<String>) -> Self {
        Self {
            urls,
            node_id: node_id.into(),
            lease_ttl: Duration::from_secs(10),
            replicas: 3,
            event_retention: Duration::from_secs(24 * 60 * 60),
            events_per_session: 50_000,
        }
    }
}

/// Why a cluster operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("cannot reach NATS ({0})")]
    Connect(String),
    #[error("JetStream: {0}")]
    JetStream(String),
    /// An append named a last sequence the subject no longer has: another owner wrote.
    #[error("fenced: the session was written by another owner (expected last sequence {0})")]
    Fenced(u64),
    /// The lane's lease is held by someone else, or was lost.
    #[error("the lane of session {0} is owned by another node")]
    LaneTaken(String),
}

fn js<E: std::fmt::Display>(e: E) -> ClusterError {
    ClusterError::JetStream(e.to_string())
}

/// Event stream name.
pub const EVENTS: &str = "PI_EV";
/// Session entry stream name.
pub const ENTRIES: &str = "PI_SESS";
/// Lane lease bucket name.
pub const LANES: &str = "pi_lanes";
/// Session index bucket name.
pub const SESSIONS: &str = "pi_sessions";
/// Command record stream name (deduplicates commands by id).
pub const COMMANDS: &str = "PI_CMD";
/// Live node bucket name (each node's key lives while it renews it).
pub const NODES: &str = "pi_nodes";
/// The object store of workspace snapshots.
pub const BLOBS: &str = "pi_blobs";
/// How long a command id is remembered.
const COMMAND_WINDOW: Duration = Duration::from_secs(600);
/// How long a publish nobody answers is tried again.
const NO_RESPONDERS_WAIT: Duration = Duration::from_secs(5);

/// Runs `attempt` again while its error is "no stream found", for up to
/// [`NO_RESPONDERS_WAIT`]: a server learns a new stream's subjects, or a new leader's, a
/// moment after the others.
pub(super) async fn while_stream_unknown<T, E, F, Fut>(mut attempt: F) -> Result<T, E>
where
    E: std::error::Error + 'static,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let deadline = std::time::Instant::now() + NO_RESPONDERS_WAIT;
    loop {
        match attempt().await {
            Err(e) if is_stream_not_found(&e) && std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => return other,
        }
    }
}

/// Whether `error`, or an error it wraps (a KV put wraps its publish's), is "no stream found".
fn is_stream_not_found(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.downcast_ref::<jetstream::context::PublishError>()
            .is_some_and(|p| p.kind() == jetstream::context::PublishErrorKind::StreamNotFound)
        {
            return true;
        }
        current = e.source();
    }
    false
}

/// Whether a KV bucket's message marks its key deleted or purged.
pub(super) fn kv_removed(message: &jetstream::message::StreamMessage) -> bool {
    message
        .headers
        .get("KV-Operation")
        .is_some_and(|op| matches!(op.as_str(), "DEL" | "PURGE"))
}

/// Waits (up to 5 s; the setup is tried again, through another server) until `stream` has
/// an elected leader, so the first publishes land.
async fn wait_for_leader(jetstream: &jetstream::Context, name: &str) -> Result<(), ClusterError> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(mut stream) = jetstream.get_stream(name).await
            && let Ok(info) = stream.info().await
            && info.cluster.as_ref().is_none_or(|c| c.leader.is_some())
        {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(ClusterError::JetStream(format!(
                "stream {name} has no leader"
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A node's handle on the cluster.
#[derive(Clone)]
pub struct Engine {
    pub config: ClusterConfig,
    pub client: async_nats::Client,
    pub jetstream: jetstream::Context,
    pub lanes: kv::Store,
    pub sessions: kv::Store,
    pub nodes: kv::Store,
    /// Workspace snapshots (`<session>/workspace.tar.gz`).
    pub blobs: object_store::ObjectStore,
}

/// A KV bucket, made if missing: one value per key, on disk, values dropped `max_age`
/// after their last write (zero: kept).
async fn bucket(
    jetstream: &jetstream::Context,
    name: &str,
    max_age: Duration,
    replicas: usize,
) -> Result<kv::Store, ClusterError> {
    if let Ok(store) = jetstream.get_key_value(name).await {
        return Ok(store);
    }
    jetstream
        .create_key_value(kv::Config {
            bucket: name.into(),
            history: 1,
            max_age,
            storage: stream::StorageType::File,
            num_replicas: replicas,
            ..Default::default()
        })
        .await
        .map_err(js)
}

/// Connects to `servers` (failing over between them).
async fn open(config: &ClusterConfig) -> Result<async_nats::Client, ClusterError> {
    let mut servers = Vec::with_capacity(config.urls.len());
    for url in &config.urls {
        let server: async_nats::ServerAddr = url
            .parse()
            .map_err(|e| ClusterError::Connect(format!("{url}: {e}")))?;
        servers.push(server);
    }
    // A server cut off from this node (a partition, a dead machine) is noticed after three
    // unanswered pings; pinging every sixth of the lease TTL moves the node to another
    // server in about half a TTL, before its leases run out.
    let ping = (config.lease_ttl / 6).clamp(Duration::from_millis(250), Duration::from_secs(10));
    let connect = (config.lease_ttl / 4).clamp(Duration::from_secs(1), Duration::from_secs(5));
    async_nats::ConnectOptions::new()
        .name(format!("pi-gateway {}", config.node_id))
        .ping_interval(ping)
        .connection_timeout(connect)
        .retry_on_initial_connect()
        .connect(servers)
        .await
        .map_err(|e| ClusterError::Connect(e.to_string()))
}

impl Engine {
    /// Connects and makes sure the streams and the bucket exist.
    pub async fn connect(config: ClusterConfig) -> Result<Self, ClusterError> {
        let client = open(&config).await?;
        // A cluster just started (or busy electing leaders) may time requests out: the
        // setup is tried again for up to half a minute.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            match Self::set_up(&config, &client).await {
                Ok(engine) => return Ok(engine),
                Err(e) if std::time::Instant::now() > deadline => return Err(e),
                // The server may be cut off from the others (no leader, no quorum there):
                // the next attempt goes through another one.
                Err(_) => {
                    let _ = client.force_reconnect().await;
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        }
    }

    /// Makes sure the streams and buckets exist, with leaders.
    async fn set_up(
        config: &ClusterConfig,
        client: &async_nats::Client,
    ) -> Result<Self, ClusterError> {
        let config = config.clone();
        let client = client.clone();
        let jetstream = jetstream::new(client.clone());
        jetstream
            .get_or_create_stream(stream::Config {
                name: EVENTS.into(),
                subjects: vec!["pi.ev.>".into()],
                storage: stream::StorageType::File,
                num_replicas: config.replicas,
                max_age: config.event_retention,
                max_messages_per_subject: config.events_per_session,
                discard: stream::DiscardPolicy::Old,
                duplicate_window: Duration::from_secs(120),
                allow_direct: true,
                ..Default::default()
            })
            .await
            .map_err(js)?;
        jetstream
            .get_or_create_stream(stream::Config {
                name: ENTRIES.into(),
                subjects: vec!["pi.sess.>".into()],
                storage: stream::StorageType::File,
                num_replicas: config.replicas,
                duplicate_window: Duration::from_secs(120),
                allow_direct: true,
                ..Default::default()
            })
            .await
            .map_err(js)?;
        jetstream
            .get_or_create_stream(stream::Config {
                name: COMMANDS.into(),
                subjects: vec!["pi.cmd.>".into()],
                storage: stream::StorageType::File,
                num_replicas: config.replicas,
                max_age: COMMAND_WINDOW,
                duplicate_window: COMMAND_WINDOW,
                ..Default::default()
            })
            .await
            .map_err(js)?;
        let replicas = config.replicas;
        let nodes = bucket(&jetstream, NODES, config.lease_ttl, replicas).await?;
        let lanes = bucket(&jetstream, LANES, config.lease_ttl, replicas).await?;
        let sessions = bucket(&jetstream, SESSIONS, Duration::ZERO, replicas).await?;
        let blobs = match jetstream.get_object_store(BLOBS).await {
            Ok(store) => store,
            Err(_) => jetstream
                .create_object_store(object_store::Config {
                    bucket: BLOBS.into(),
                    storage: stream::StorageType::File,
                    num_replicas: replicas,
                    ..Default::default()
                })
                .await
                .map_err(js)?,
        };
        for name in [
            EVENTS.to_owned(),
            ENTRIES.to_owned(),
            COMMANDS.to_owned(),
            format!("KV_{LANES}"),
            format!("KV_{SESSIONS}"),
            format!("KV_{NODES}"),
            format!("OBJ_{BLOBS}"),
        ] {
            wait_for_leader(&jetstream, &name).await?;
        }
        Ok(Self {
            config,
            client,
            jetstream,
            lanes,
            sessions,
            nodes,
            blobs,
        })
    }

    /// Publishes `publish` to `subject` and waits for the stream's acknowledgement, trying
    /// again while no server knows the stream yet ([`while_stream_unknown`]).
    async fn publish_acked(
        &self,
        subject: String,
        publish: jetstream::message::PublishMessage,
    ) -> Result<jetstream::publish::PublishAck, jetstream::context::PublishError> {
        while_stream_unknown(|| async {
            self.jetstream
                .send_publish(subject.clone(), publish.clone())
                .await?
                .await
        })
        .await
    }

    /// Every message of `subject` in `stream`, oldest first, with its sequence; read up to
    /// the last one the stream's leader has (a replica may lag). Only "no message" means
    /// none: a stream electing its leader is an error, not an empty subject.
    pub async fn read_subject(
        &self,
        stream: &str,
        subject: &str,
    ) -> Result<Vec<(u64, Bytes)>, ClusterError> {
        let Some(last) = self.last_message(stream, subject).await? else {
            return Ok(Vec::new());
        };
        let last = last.sequence;
        let stream = self.jetstream.get_stream(stream).await.map_err(js)?;
        let consumer = stream
            .create_consumer(jetstream::consumer::pull::OrderedConfig {
                filter_subject: subject.to_owned(),
                deliver_policy: jetstream::consumer::DeliverPolicy::All,
                ..Default::default()
            })
            .await
            .map_err(js)?;
        let mut messages = consumer.messages().await.map_err(js)?;
        let mut read = Vec::new();
        while let Some(message) = futures_util::StreamExt::next(&mut messages).await {
            let message = message.map_err(js)?;
            let seq = message.info().map_err(js)?.stream_sequence;
            read.push((seq, message.payload.clone()));
            if seq >= last {
                break;
            }
        }
        Ok(read)
    }

    /// Records command `id` of `session`; true when it was recorded before (a retry of a
    /// command already accepted, within the last ten minutes).
    ///
    /// A publish that got no acknowledgement (the stream electing a leader) is sent again
    /// with the same id for up to a lease TTL; a duplicate answered to such a retry is
    /// the first attempt having landed, not an earlier command.
    pub async fn record_command(&self, session: &str, id: &str) -> Result<bool, ClusterError> {
        let deadline = std::time::Instant::now() + self.config.lease_ttl;
        let mut retried = false;
        loop {
            let publish = jetstream::message::PublishMessage::build()
                .payload(Bytes::from(id.to_owned()))
                .message_id(format!("{session}:{id}"));
            match self
                .publish_acked(format!("pi.cmd.{session}"), publish)
                .await
            {
                Ok(ack) => return Ok(ack.duplicate && !retried),
                Err(_) if std::time::Instant::now() < deadline => {
                    retried = true;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(js(e)),
            }
        }
    }

    /// The `seq` and payload of `session`'s last stored event, if any.
    pub async fn last_event(&self, session: &str) -> Result<Option<(u64, Bytes)>, ClusterError> {
        let last = self
            .last_message(EVENTS, &format!("pi.ev.{session}"))
            .await?;
        Ok(last.map(|message| (message.sequence, message.payload)))
    }

    /// The last message of `subject` in `stream` as the stream's leader has it; `None`
    /// when it has none. Never a direct get: any replica answers those, the one a server
    /// picks at random among its local and routed responders, and a replica cut off from
    /// here whose route has not timed out yet takes the request and never answers.
    pub async fn last_message(
        &self,
        stream: &str,
        subject: &str,
    ) -> Result<Option<jetstream::message::StreamMessage>, ClusterError> {
        let stream = self
            .jetstream
            .get_stream_no_info(stream)
            .await
            .map_err(js)?;
        match stream.get_last_raw_message_by_subject(subject).await {
            Ok(message) => Ok(Some(message)),
            Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => Ok(None),
            Err(e) => Err(js(e)),
        }
    }

    /// Publishes one event of `session`; its stream sequence (the gateway-wide `seq`).
    /// `id` deduplicates a retried publish.
    pub async fn publish_event(
        &self,
        session: &str,
        id: &str,
        payload: Bytes,
    ) -> Result<u64, ClusterError> {
        let publish = jetstream::message::PublishMessage::build()
            .payload(payload)
            .message_id(id);
        let ack = self
            .publish_acked(format!("pi.ev.{session}"), publish)
            .await
            .map_err(js)?;
        Ok(ack.sequence)
    }

    /// Appends one entry line of `session`, fenced: it lands only when the subject's last
    /// sequence is still `expected` (0: the session has no entry yet). The new sequence.
    pub async fn append_entry(
        &self,
        session: &str,
        id: &str,
        line: Bytes,
        expected: u64,
    ) -> Result<u64, ClusterError> {
        let publish = jetstream::message::PublishMessage::build()
            .payload(line)
            .message_id(id)
            .expected_last_subject_sequence(expected);
        let ack = self
            .publish_acked(format!("pi.sess.{session}"), publish)
            .await;
        match ack {
            Ok(ack) => Ok(ack.sequence),
            Err(e) if e.to_string().contains("wrong last sequence") => {
                Err(ClusterError::Fenced(expected))
            }
            Err(e) => Err(js(e)),
        }
    }
}
