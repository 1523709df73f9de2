//! A lane this node owns: its lease (renewed by compare-and-swap every third of the TTL,
//! at once when a run starts or ends), the writer of its entries, the publisher of its
//! events and the subscription answering the other nodes. The owner stops at once when a
//! renewal is refused, when it could not renew for nearly a TTL (self-fencing: it may
//! have been paused), or when an append is fenced; an idle lane is given up.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::deliveries::Deliveries;
use super::engine::ClusterError;
use super::entries::EntryWriter;
use super::lane::LaneServer;
use super::lease::Lease;
use super::node::{ClusterNode, Opening, lock};
use super::publisher::{EventPublisher, Fence};
use crate::events::TerminationReason;
use crate::server::event_sink::EventSink;
use crate::server::session::LiveSession;

/// The pause before trying a failed renewal again, doubling up to [`RETRY_MOST`].
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MOST: Duration = Duration::from_secs(1);

/// A session whose lane this node holds.
pub struct Owned {
    pub session: String,
    pub live: Arc<LiveSession>,
    lease: tokio::sync::Mutex<Option<Lease>>,
    renewed: Arc<Mutex<Instant>>,
    /// Cancelled when the lane is lost or given up.
    pub lost: CancellationToken,
    pub writer: EntryWriter,
    publisher: Arc<EventPublisher>,
    lane: Mutex<Option<LaneServer>>,
    last_used: Mutex<Instant>,
    running_changed: Arc<Notify>,
    /// `Some(true)` once the lane is claimed and answered, `Some(false)` if that failed.
    pub started: watch::Receiver<Option<bool>>,
    /// Held while the workspace is packed and stored: one snapshot at a time, newest last.
    snapshotting: Arc<tokio::sync::Mutex<()>>,
    /// Said once: the workspace is too heavy to snapshot.
    too_heavy: Arc<std::sync::atomic::AtomicBool>,
    /// The operations sent to this lane, so a repeated send does not run one twice.
    pub deliveries: Deliveries,
}

impl Owned {
    pub fn is_running(&self) -> bool {
        self.live.is_running() || self.publisher.running()
    }

    /// Waits (bounded) until the session's events so far are stored, so a reply does not
    /// overtake the events it reports on.
    pub async fn flush_events(&self) {
        self.publisher.flush(Duration::from_secs(5)).await;
    }

    /// Notes a command, so the lane is not given up as idle.
    pub fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// Waits until the lane is claimed and answered; false if that failed.
    pub async fn wait_started(&self) -> bool {
        let mut started = self.started.clone();
        loop {
            if let Some(ok) = *started.borrow() {
                return ok;
            }
            if started.changed().await.is_err() {
                return false;
            }
        }
    }
}

impl ClusterNode {
    /// Takes a session this node just opened into its care: events through the stream,
    /// the lane claimed (for a new session) and answered, the lease renewed.
    pub(super) fn adopt(self: &Arc<Self>, live: &Arc<LiveSession>, plan: Option<Opening>) {
        let session = live.id.clone();
        let (lease, events_prev, writer) = match plan {
            Some(plan) => (plan.lease, plan.events_prev, plan.writer),
            None => (None, 0, None),
        };
        let writer = writer.unwrap_or_else(|| EntryWriter::start(self.engine.clone(), &session, 0));
        let lost = CancellationToken::new();
        let renewed = Arc::new(Mutex::new(Instant::now()));
        let ttl = self.ttl();
        let margin = ttl / 5;
        let fence: Fence = {
            let lost = lost.clone();
            let fenced = writer.fenced.clone();
            let renewed = Arc::clone(&renewed);
            Arc::new(move || {
                !lost.is_cancelled()
                    && !fenced.is_cancelled()
                    && lock(&renewed).elapsed() + margin < ttl
            })
        };
        let (ready_tx, ready_rx) = oneshot::channel();
        let running_changed = Arc::new(Notify::new());
        let publisher = Arc::new(EventPublisher::start(
            self.engine.clone(),
            &session,
            events_prev,
            ready_rx,
            fence,
            Arc::clone(&running_changed),
        ));
        live.set_sink(Arc::clone(&publisher) as Arc<dyn EventSink>);
        let (started_tx, started_rx) = watch::channel(None);
        let owned = Arc::new(Owned {
            session: session.clone(),
            live: Arc::clone(live),
            lease: tokio::sync::Mutex::new(None),
            renewed,
            lost,
            writer,
            publisher,
            lane: Mutex::new(None),
            last_used: Mutex::new(Instant::now()),
            running_changed,
            started: started_rx,
            snapshotting: Arc::new(tokio::sync::Mutex::new(())),
            too_heavy: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            deliveries: Deliveries::default(),
        });
        lock(&self.owned).insert(session.clone(), Arc::clone(&owned));
        let node = Arc::clone(self);
        tokio::spawn(async move {
            let lease = match lease {
                Some(lease) => Ok(lease),
                None => node.claim_new(&session).await,
            };
            let lease = match lease {
                Ok(lease) => lease,
                Err(e) => {
                    eprintln!("pi-gateway: cannot claim the lane of session {session}: {e}");
                    let _ = ready_tx.send(false);
                    let _ = started_tx.send(Some(false));
                    node.lose(&owned, "its lane could not be claimed");
                    return;
                }
            };
            *lock(&owned.renewed) = lease.renewed;
            *owned.lease.lock().await = Some(lease);
            match node.serve(&owned).await {
                Ok(server) => *lock(&owned.lane) = Some(server),
                Err(e) => {
                    eprintln!("pi-gateway: cannot answer the lane of session {session}: {e}");
                    let _ = ready_tx.send(false);
                    let _ = started_tx.send(Some(false));
                    node.lose(&owned, "its lane could not be answered");
                    return;
                }
            }
            let _ = ready_tx.send(true);
            let _ = started_tx.send(Some(true));
            node.keep(owned).await;
        });
    }

    /// Claims the lane of a session created here; a cluster electing a leader is waited
    /// for (up to a lease TTL), a lane held by another node is not.
    async fn claim_new(&self, session: &str) -> Result<Lease, ClusterError> {
        Lease::claim_within(&self.engine, session, self.ttl()).await
    }

    /// Renews the lease until the lane is lost or given up. A failed renewal is tried
    /// again within moments, not a third of the TTL later: a leader election that makes
    /// the bucket unavailable for a while (a healed partition, a loaded machine) then
    /// costs the lane only when it outlasts the whole time left before self-fencing.
    async fn keep(self: Arc<Self>, owned: Arc<Owned>) {
        let ttl = self.ttl();
        let margin = ttl / 5;
        let mut was_running = owned.is_running();
        let mut retry: Option<Duration> = None;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(retry.unwrap_or(ttl / 3)) => {}
                _ = owned.running_changed.notified() => {}
                _ = owned.writer.fenced.cancelled() => {
                    self.lose(&owned, "another node wrote its entries");
                    return;
                }
                _ = owned.publisher.stalled.cancelled() => {
                    self.lose(&owned, "its events could not be stored");
                    return;
                }
                _ = owned.lost.cancelled() => return,
            }
            let since = lock(&owned.renewed).elapsed();
            if since + margin >= ttl {
                self.lose(&owned, "its lease could not be renewed in time");
                return;
            }
            // One try never runs past the moment this node must stop holding the lane.
            let limit = (ttl / 3).min(ttl - margin - since);
            let running = owned.is_running();
            if was_running && !running {
                self.snapshot(&owned);
            }
            was_running = running;
            let renewal = {
                let mut lease = owned.lease.lock().await;
                let Some(lease) = lease.as_mut() else { return };
                match tokio::time::timeout(limit, lease.renew(&self.engine, running)).await {
                    Ok(result) => result.map(|()| lease.renewed),
                    Err(_) => Err(ClusterError::JetStream("renewal timed out".into())),
                }
            };
            match renewal {
                Ok(at) => {
                    *lock(&owned.renewed) = at;
                    retry = None;
                }
                Err(ClusterError::LaneTaken(_)) => {
                    self.lose(&owned, "another node holds its lease");
                    return;
                }
                Err(e) => {
                    super::trace!("{}: renewing the lease failed: {e}", owned.session);
                    retry = Some(retry.map_or(RETRY_FIRST, |r| (r * 2).min(RETRY_MOST)));
                    continue;
                }
            }
            let idle = !running
                && owned.live.pending_ops() == 0
                && lock(&owned.last_used).elapsed() >= self.settings.idle_release;
            if idle {
                self.release(&owned).await;
                return;
            }
        }
    }

    /// Stores the session's workspace as it is at the end of a run (in the background),
    /// for a node taking the session over after this one died.
    fn snapshot(&self, owned: &Arc<Owned>) {
        let limit = self.settings.snapshot_limit;
        let Some(cwd) = self
            .gateway()
            .ok()
            .and_then(|g| g.node(&owned.session))
            .map(|n| std::path::PathBuf::from(n.cwd))
        else {
            return;
        };
        if limit == 0 || !cwd.is_dir() {
            return;
        }
        let (engine, session, lock, too_heavy) = (
            self.engine.clone(),
            owned.session.clone(),
            Arc::clone(&owned.snapshotting),
            Arc::clone(&owned.too_heavy),
        );
        tokio::spawn(async move {
            let _one_at_a_time = lock.lock().await;
            match engine.snapshot_workspace(&session, &cwd, limit).await {
                Ok(Some(taken)) => {
                    super::trace!("{session}: workspace snapshot of {} bytes", taken.bytes);
                }
                Ok(None) => {
                    if !too_heavy.swap(true, std::sync::atomic::Ordering::Relaxed) {
                        eprintln!(
                            "pi-gateway: the workspace of session {session} weighs over {limit} \
                             bytes: no snapshots (--snapshot-limit-mib)"
                        );
                    }
                }
                Err(e) => eprintln!(
                    "pi-gateway: could not snapshot the workspace of session {session}: {e}"
                ),
            }
        });
    }

    /// Stops owning a lane at once: nothing more is published or appended, a run in
    /// progress is aborted, and the session is no longer live here.
    pub(super) fn lose(&self, owned: &Arc<Owned>, why: &str) {
        if owned.lost.is_cancelled() {
            return;
        }
        eprintln!(
            "pi-gateway: node {} stops running session {}: {why}",
            self.node_id(),
            owned.session
        );
        owned.lost.cancel();
        owned.writer.fenced.cancel();
        lock(&owned.lane).take();
        self.forget(owned);
        owned.live.terminate(TerminationReason::GatewayDisconnected);
    }

    /// Gives an idle lane (or every lane, at shutdown) up: entries flushed, lease deleted.
    pub(super) async fn release(&self, owned: &Arc<Owned>) {
        if owned.lost.is_cancelled() {
            return;
        }
        let flushed = tokio::time::timeout(Duration::from_secs(5), owned.writer.flush()).await;
        if !matches!(flushed, Ok(true)) {
            self.lose(owned, "its entries could not be written");
            return;
        }
        owned.lost.cancel();
        lock(&owned.lane).take();
        self.forget(owned);
        if let Some(lease) = owned.lease.lock().await.take() {
            let _ = lease.release(&self.engine).await;
        }
    }

    fn forget(&self, owned: &Arc<Owned>) {
        let mut map = lock(&self.owned);
        if map
            .get(&owned.session)
            .is_some_and(|o| Arc::ptr_eq(o, owned))
        {
            map.remove(&owned.session);
        }
        drop(map);
        if let Some(gateway) = self.gateway.upgrade() {
            gateway.drop_live(&owned.session);
        }
    }
}
