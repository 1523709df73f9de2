//! A gateway node of the cluster: what it owns (sessions whose lanes it holds), what it
//! knows of the others (leases and live nodes, from their buckets), and the hooks the
//! gateway calls (see [`ClusterHooks`]).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::Value;

use pi_coding_agent::session::line_sink::LineSink;

use super::engine::{ClusterError, Engine, LANES, NODES, kv_removed};
use super::entries::EntryWriter;
use super::feeds::Feeds;
use super::lease::Lease;
use super::ordered::KvWatch;
use super::owned::Owned;
use crate::server::Gateway;
use crate::server::cluster_hooks::{ClusterHooks, Pending};
use crate::server::feed::{SubscribeResponse, Subscriber};
use crate::server::protocol::ApiError;
use crate::server::session::LiveSession;
use crate::server::tree::SessionNode;

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// How a node behaves, beyond the engine's configuration.
#[derive(Debug, Clone)]
pub struct NodeSettings {
    /// A lane with nothing running or queued for this long is given up.
    pub idle_release: Duration,
    /// How long a forwarded `session.prompt` with `wait` may take.
    pub wait_limit: Duration,
    /// A workspace whose files weigh at most this many bytes is snapshot at the end of
    /// each run (0: never).
    pub snapshot_limit: u64,
}

impl Default for NodeSettings {
    fn default() -> Self {
        Self {
            idle_release: Duration::from_secs(60),
            wait_limit: Duration::from_secs(48 * 60 * 60),
            snapshot_limit: 64 * 1024 * 1024,
        }
    }
}

/// Another node's lease, as this node last saw it.
#[derive(Debug, Clone)]
pub(super) struct SeenLease {
    pub node: String,
    pub running: bool,
    pub at: Instant,
    /// The reaper found it lapsed with no run in progress: nothing to take over until an
    /// operation comes (kept, so [`ClusterNode::lease_lapsed`] still knows).
    pub reaped: bool,
}

/// How long a lapsed idle lease is remembered.
const FORGET_LAPSED: Duration = Duration::from_secs(600);

/// A session being taken over: what opening it needs.
pub(super) struct Opening {
    pub lease: Option<Lease>,
    /// The sequence of its last entry in `PI_SESS` (0: none).
    pub entries_last: u64,
    /// The `seq` of its last event (0: none).
    pub events_prev: u64,
    pub writer: Option<EntryWriter>,
}

/// Session records waiting to be written to the index: the newest of each session, so a
/// record never overtakes a newer one of its session, and records of different sessions
/// are written at once.
#[derive(Default)]
pub(super) struct RecordQueue {
    waiting: Mutex<HashMap<String, Value>>,
    added: tokio::sync::Notify,
}

impl RecordQueue {
    fn push(&self, id: &str, record: Value) {
        lock(&self.waiting).insert(id.to_owned(), record);
        self.added.notify_one();
    }

    /// Writes records as they come, retrying one while its stream elects a leader.
    async fn write_all(self: Arc<Self>, engine: Engine) {
        loop {
            let batch: Vec<(String, Value)> = lock(&self.waiting).drain().collect();
            if batch.is_empty() {
                self.added.notified().await;
                continue;
            }
            let writes = batch.into_iter().map(|(id, record)| {
                let engine = engine.clone();
                async move {
                    let mut pause = Duration::from_millis(50);
                    for attempt in 0..40 {
                        match engine.put_record(&id, &record).await {
                            Ok(()) => return,
                            Err(e) if attempt == 39 => {
                                eprintln!("pi-gateway: could not share session {id}: {e}");
                            }
                            Err(_) => {
                                tokio::time::sleep(pause).await;
                                pause = (pause * 2).min(Duration::from_secs(1));
                            }
                        }
                    }
                }
            });
            futures_util::future::join_all(writes).await;
        }
    }
}

/// A node of the cluster.
pub struct ClusterNode {
    pub(super) engine: Engine,
    pub(super) settings: NodeSettings,
    pub(super) gateway: Weak<Gateway>,
    pub(super) feeds: Arc<Feeds>,
    pub(super) owned: Mutex<HashMap<String, Arc<Owned>>>,
    pub(super) opening: Mutex<HashMap<String, Opening>>,
    pub(super) seen: Mutex<HashMap<String, SeenLease>>,
    pub(super) taking: Mutex<HashSet<String>>,
    /// Session records to write to the index.
    records: Arc<RecordQueue>,
    pub(super) self_ref: Weak<ClusterNode>,
}

impl ClusterNode {
    /// Joins the cluster as a node of `gateway`: follows the index, the leases and the
    /// events, announces itself, and answers takeover requests sent to it.
    pub async fn start(
        engine: Engine,
        gateway: &Arc<Gateway>,
        settings: NodeSettings,
    ) -> Result<Arc<Self>, ClusterError> {
        let feeds = Feeds::start(engine.clone(), gateway.config().event_log).await?;
        let records = Arc::new(RecordQueue::default());
        tokio::spawn(Arc::clone(&records).write_all(engine.clone()));
        let node = Arc::new_cyclic(|weak| Self {
            engine: engine.clone(),
            settings,
            gateway: Arc::downgrade(gateway),
            feeds,
            owned: Mutex::new(HashMap::new()),
            opening: Mutex::new(HashMap::new()),
            seen: Mutex::new(HashMap::new()),
            taking: Mutex::new(HashSet::new()),
            records,
            self_ref: weak.clone(),
        });
        let weak_gateway = Arc::downgrade(gateway);
        engine
            .watch_index_with(Arc::new(move |_, record| {
                if let (Some(gateway), Some(record)) = (weak_gateway.upgrade(), record)
                    && let Ok(node) = serde_json::from_value::<SessionNode>(record.clone())
                {
                    gateway.merge_node(node);
                }
            }))
            .await?;
        node.watch_leases().await?;
        node.announce().await?;
        node.serve_takeovers().await?;
        gateway.set_cluster(Arc::clone(&node) as Arc<dyn ClusterHooks>);
        Ok(node)
    }

    pub(super) fn gateway(&self) -> Result<Arc<Gateway>, ApiError> {
        self.gateway
            .upgrade()
            .ok_or_else(|| ApiError::failed("the gateway is shutting down"))
    }

    pub(super) fn ttl(&self) -> Duration {
        self.engine.config.lease_ttl
    }

    pub fn node_id(&self) -> &str {
        &self.engine.config.node_id
    }

    pub(super) fn owned(&self, session: &str) -> Option<Arc<Owned>> {
        lock(&self.owned).get(session).cloned()
    }

    /// Where this node keeps its copy of a session file it took over.
    pub(super) fn local_file(&self, session: &str) -> Result<PathBuf, ApiError> {
        let gateway = self.gateway()?;
        Ok(gateway
            .config()
            .agent_dir
            .join("gateway")
            .join("cluster")
            .join(self.node_id())
            .join(format!("{session}.jsonl")))
    }

    /// Follows `pi_lanes` (the leases there now, then every change): who owns which lane
    /// and whether it runs, and takes over
    /// lanes whose owner stopped renewing in the middle of a run (to record the lost turn).
    async fn watch_leases(&self) -> Result<(), ClusterError> {
        let mut watch = KvWatch::open(self.engine.jetstream.clone(), LANES, true)
            .await
            .map_err(ClusterError::JetStream)?;
        let weak = self.self_ref.clone();
        tokio::spawn(async move {
            loop {
                let change = watch.next().await;
                super::trace!(
                    "lease {}: {}",
                    change.key,
                    change
                        .value
                        .as_ref()
                        .map_or("gone".into(), |v| String::from_utf8_lossy(v).into_owned())
                );
                let Some(node) = weak.upgrade() else { break };
                let mut seen = lock(&node.seen);
                match change.value {
                    Some(value) => {
                        let value: Value = serde_json::from_slice(&value).unwrap_or_default();
                        seen.insert(
                            change.key.clone(),
                            SeenLease {
                                node: value["node"].as_str().unwrap_or_default().to_owned(),
                                running: value["running"].as_bool().unwrap_or(false),
                                at: Instant::now(),
                                reaped: false,
                            },
                        );
                    }
                    None => {
                        seen.remove(&change.key);
                    }
                }
            }
        });
        let weak = self.self_ref.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                let Some(node) = weak.upgrade() else { break };
                node.reap();
            }
        });
        Ok(())
    }

    /// Takes over the lanes whose owner died during a run (its lease said so, or its
    /// last stored event did: it may have died before the lease said so).
    fn reap(&self) {
        let grace = self.ttl() + Duration::from_millis(300);
        let stale: Vec<(String, bool)> = {
            let mut seen = lock(&self.seen);
            seen.retain(|_, l| !(l.reaped && l.at.elapsed() > FORGET_LAPSED));
            seen.iter()
                .filter(|(_, l)| !l.reaped && l.node != self.node_id() && l.at.elapsed() > grace)
                .map(|(id, l)| (id.clone(), l.running))
                .collect()
        };
        for (session, running) in stale {
            if lock(&self.taking).contains(&session) {
                continue;
            }
            let Some(node) = self.self_ref.upgrade() else {
                return;
            };
            tokio::spawn(async move {
                let running = running
                    || matches!(
                        node.engine.last_event(&session).await,
                        Ok(Some((_, payload))) if super::feeds::ends_running(&payload)
                    );
                if !running {
                    // An idle lane whose owner stopped: nothing to record.
                    if let Some(lease) = lock(&node.seen).get_mut(&session) {
                        lease.reaped = true;
                    }
                    return;
                }
                let result = node.take_over(&session).await;
                if result.is_ok() {
                    lock(&node.seen).remove(&session);
                }
                if let Err(e) = result {
                    eprintln!(
                        "pi-gateway: node {}: could not take over session {session}: {}",
                        node.node_id(),
                        e.message
                    );
                }
            });
        }
    }

    /// Whether another node held `session`'s lease and has not renewed it for a TTL (it
    /// died, or is cut off: its lane may still look subscribed from here).
    pub(super) fn lease_lapsed(&self, session: &str) -> bool {
        lock(&self.seen)
            .get(session)
            .is_some_and(|l| l.node != self.node_id() && l.at.elapsed() >= self.ttl())
    }

    /// Whether `session`'s lane is held by a live owner, as far as this node saw.
    pub(super) fn held_elsewhere(&self, session: &str) -> bool {
        lock(&self.seen)
            .get(session)
            .is_some_and(|l| l.node != self.node_id() && l.at.elapsed() < self.ttl())
    }

    /// Keeps this node's key in `pi_nodes` while it runs.
    async fn announce(&self) -> Result<(), ClusterError> {
        let put = |engine: Engine| async move {
            engine
                .nodes
                .put(
                    &engine.config.node_id,
                    Bytes::from(pi_ai::now_ms().to_string()),
                )
                .await
                .map(|_| ())
                .map_err(|e| ClusterError::JetStream(e.to_string()))
        };
        // The bucket's stream may still be electing a leader on a cluster just formed.
        let deadline = Instant::now() + Duration::from_secs(30);
        while let Err(e) = put(self.engine.clone()).await {
            if Instant::now() > deadline {
                return Err(e);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let weak = self.self_ref.clone();
        let every = self.ttl() / 3;
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(node) = weak.upgrade() else { break };
                let _ = put(node.engine.clone()).await;
            }
        });
        Ok(())
    }

    /// Whether node `id` is alive (its key in `pi_nodes` has not expired), as the bucket's
    /// leader has it: a KV get is a direct get, which a replica cut off from here may take
    /// and leave unanswered (see [`Engine::last_message`]).
    pub(super) async fn node_alive(&self, id: &str) -> Result<bool, ClusterError> {
        let last = self
            .engine
            .last_message(&format!("KV_{NODES}"), &format!("$KV.{NODES}.{id}"))
            .await?;
        Ok(last.is_some_and(|message| !kv_removed(&message)))
    }

    /// Answers `pi.node.<id>.take`: another node asks this one, the session's workspace
    /// node, to take a lane over.
    async fn serve_takeovers(&self) -> Result<(), ClusterError> {
        let mut requests = self
            .engine
            .client
            .subscribe(format!("pi.node.{}.take", self.node_id()))
            .await
            .map_err(|e| ClusterError::JetStream(e.to_string()))?;
        let weak = self.self_ref.clone();
        let client = self.engine.client.clone();
        tokio::spawn(async move {
            while let Some(request) = requests.next().await {
                let Some(node) = weak.upgrade() else { break };
                let session = String::from_utf8_lossy(&request.payload).into_owned();
                let client = client.clone();
                tokio::spawn(async move {
                    let reply = match node.take_over(&session).await {
                        Ok(()) => "ok".to_owned(),
                        Err(e) => e.message,
                    };
                    if let Some(to) = request.reply {
                        let _ = client.publish(to, Bytes::from(reply)).await;
                    }
                });
            }
        });
        Ok(())
    }

    /// Gives every lane up (flushing their entries): the node is stopping.
    pub async fn shutdown(&self) {
        let owned: Vec<Arc<Owned>> = lock(&self.owned).values().cloned().collect();
        for session in owned {
            self.release(&session).await;
        }
        let _ = self.engine.nodes.delete(self.node_id()).await;
    }
}

impl ClusterHooks for ClusterNode {
    fn node_id(&self) -> &str {
        &self.engine.config.node_id
    }

    fn route(
        &self,
        principal: &str,
        method: &str,
        params: Value,
    ) -> Pending<Result<Value, ApiError>> {
        let node = self.self_ref.upgrade();
        let principal = principal.to_owned();
        let method = method.to_owned();
        Box::pin(async move {
            let Some(node) = node else {
                return Err(ApiError::failed("the gateway is shutting down"));
            };
            node.route_command(&principal, &method, params).await
        })
    }

    fn subscribe(
        &self,
        session: &str,
        sub: Subscriber,
        from_seq: Option<u64>,
        response: SubscribeResponse,
    ) -> Pending<()> {
        let feeds = Arc::clone(&self.feeds);
        let session = session.to_owned();
        Box::pin(async move { feeds.subscribe(&session, sub, from_seq, response).await })
    }

    fn unsubscribe(&self, session: &str, conn: u64) {
        self.feeds.unsubscribe(session, conn);
    }

    fn check_access(&self, principal: &str, session: &str) -> Pending<Result<(), ApiError>> {
        let node = self.self_ref.upgrade();
        let principal = principal.to_owned();
        let session = session.to_owned();
        Box::pin(async move {
            match node {
                Some(node) => node.check_access(&principal, &session).await,
                None => Err(ApiError::failed("the gateway is shutting down")),
            }
        })
    }

    fn may_open(&self, session: &str) -> bool {
        lock(&self.opening).contains_key(session) || lock(&self.owned).contains_key(session)
    }

    fn line_sink(&self, session: &str) -> Option<LineSink> {
        let mut opening = lock(&self.opening);
        let plan = opening.entry(session.to_owned()).or_insert(Opening {
            lease: None,
            entries_last: 0,
            events_prev: 0,
            writer: None,
        });
        let writer = EntryWriter::start(self.engine.clone(), session, plan.entries_last);
        let sink = writer.sink();
        plan.writer = Some(writer);
        Some(sink)
    }

    fn opened(&self, live: &Arc<LiveSession>) {
        let plan = lock(&self.opening).remove(&live.id);
        let Some(node) = self.self_ref.upgrade() else {
            return;
        };
        node.adopt(live, plan);
    }

    fn save_record(&self, node: &SessionNode) {
        if let Ok(record) = serde_json::to_value(node) {
            self.records.push(&node.id, record);
        }
    }

    fn is_running(&self, session: &str) -> bool {
        if let Some(owned) = self.owned(session) {
            return owned.is_running();
        }
        lock(&self.seen)
            .get(session)
            .is_some_and(|l| l.running && l.at.elapsed() < self.ttl())
    }
}
