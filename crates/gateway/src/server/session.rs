//! A live gateway session: the pi `AgentSession`, its lane (one operation at a time), its
//! event hub (bridge, `stateVersion`, bounded log, subscribers) and its run watcher.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use axum::extract::ws::Utf8Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use pi_coding_agent::agent_session::{AgentSession, NavigateOptions};
use pi_coding_agent::session_event::AgentSessionEvent;

use super::event_sink::{EventSink, OutgoingEvent};
use super::feed::Feed;
pub use super::feed::{SubscribeInfo, SubscribeResponse, Subscriber};
use super::protocol::{ApiError, EventFrame};
use crate::events::{
    Activity, Bridge, BridgeContext, EndedMessage, ErrorEvent, LifecycleEvent, Limits, RunInfo,
    TerminationReason, watch,
};
use crate::runner::{AuthProfileStore, EmbeddedRunParams, FailureKind, RunnerConfig, run_embedded};

/// A queued lane operation.
type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How a prompt operation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    pub termination: Option<TerminationReason>,
    pub error: Option<String>,
}

impl RunOutcome {
    pub fn to_json(&self) -> Value {
        json!({ "terminationReason": self.termination, "error": self.error })
    }
}

struct Hub {
    bridge: Bridge,
    runs_ended: u64,
    state_version: u64,
    feed: Feed,
    taps: Vec<(String, Tap)>,
    entry_of: HashMap<String, String>,
    message_of: HashMap<String, String>,
    pending: Option<EndedMessage>,
}

/// Settings shared by every session of a gateway.
#[derive(Debug, Clone)]
pub struct SessionShared {
    pub seq: Arc<AtomicU64>,
    pub limits: Limits,
    pub event_log: usize,
    /// Keys the embedded runner rotates through.
    pub auth: AuthProfileStore,
    pub runner: RunnerConfig,
}

/// Called when a run of the session is aborted by a limit (to abort its sub-agents).
pub type OnAbort = Arc<dyn Fn(&str, TerminationReason) + Send + Sync>;

/// Sees every lifecycle event of a session, in order, as it is published (the OpenClaw
/// listener derives its own events from them). Runs under the session's event lock: it
/// must not call back into the session.
pub type Tap = Arc<dyn Fn(&LifecycleEvent) + Send + Sync>;

/// One session of the gateway.
pub struct LiveSession {
    pub id: String,
    pub owner: String,
    pub session: AgentSession,
    shared: SessionShared,
    hub: Mutex<Hub>,
    activity: Activity,
    lane: mpsc::UnboundedSender<Job>,
    pending_ops: AtomicUsize,
    running: AtomicBool,
    /// Whether the agent loop will still read queued steers and follow-ups: from the run's
    /// start to its `agent_end`. Held while a message is queued, so none lands in a loop that
    /// already ended (it becomes a prompt on the lane instead).
    steerable: Mutex<bool>,
    abort_requested: AtomicBool,
    on_limit: OnAbort,
    /// Set in a cluster: events go to the cluster's stream instead of the feed.
    sink: OnceLock<Arc<dyn EventSink>>,
    self_ref: Weak<LiveSession>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Unix microseconds now.
pub fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

impl LiveSession {
    /// Wraps `session`, subscribes to its events and starts its lane.
    pub fn start(
        session: AgentSession,
        owner: String,
        info: RunInfo,
        resumed_from: Option<String>,
        shared: SessionShared,
        on_limit: OnAbort,
    ) -> Arc<Self> {
        let id = session.session_id();
        let event_log = shared.event_log;
        let (lane, mut jobs) = mpsc::unbounded_channel::<Job>();
        let mut bridge = Bridge::new(id.clone(), info);
        bridge.set_resumed_from(resumed_from);
        let live = Arc::new_cyclic(|weak: &Weak<LiveSession>| {
            let listener = weak.clone();
            session.subscribe(move |event| {
                if let Some(live) = listener.upgrade() {
                    live.on_event(event);
                }
            });
            LiveSession {
                id,
                owner,
                session,
                shared,
                hub: Mutex::new(Hub {
                    bridge,
                    runs_ended: 0,
                    state_version: 1,
                    feed: Feed::new(event_log),
                    taps: Vec::new(),
                    entry_of: HashMap::new(),
                    message_of: HashMap::new(),
                    pending: None,
                }),
                activity: Activity::default(),
                lane,
                pending_ops: AtomicUsize::new(0),
                running: AtomicBool::new(false),
                steerable: Mutex::new(false),
                abort_requested: AtomicBool::new(false),
                on_limit,
                sink: OnceLock::new(),
                self_ref: weak.clone(),
            }
        });
        let weak = Arc::downgrade(&live);
        tokio::spawn(async move {
            while let Some(job) = jobs.recv().await {
                job.await;
                if let Some(live) = weak.upgrade() {
                    live.pending_ops.fetch_sub(1, Ordering::SeqCst);
                }
            }
        });
        live
    }

    fn hub(&self) -> MutexGuard<'_, Hub> {
        lock(&self.hub)
    }

    /// Whether a prompt is running.
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// Queues `text` as a steer (or a follow-up) of the running agent loop; false when no
    /// loop will read it any more, and the caller should prompt instead.
    pub fn queue_into_run(&self, text: &str, steer: bool) -> bool {
        let steerable = lock(&self.steerable);
        if !*steerable {
            return false;
        }
        if steer {
            self.session.steer_now(text, Vec::new());
        } else {
            self.session.follow_up_now(text, Vec::new());
        }
        true
    }

    /// Operations queued or running on the lane.
    pub fn pending_ops(&self) -> usize {
        self.pending_ops.load(Ordering::SeqCst)
    }

    pub fn state_version(&self) -> u64 {
        self.hub().state_version
    }

    pub fn last_seq(&self) -> u64 {
        match self.sink.get() {
            Some(sink) => sink.last_seq(),
            None => self.hub().feed.last_seq(),
        }
    }

    /// Sends this session's events to `sink` from now on (a cluster's stream) instead of
    /// its own feed; set once, before its first event.
    pub fn set_sink(&self, sink: Arc<dyn EventSink>) {
        let _ = self.sink.set(sink);
    }

    pub fn info(&self) -> RunInfo {
        self.hub().bridge.info().clone()
    }

    /// Counts a state change that has no event of its own (navigation, branching).
    pub fn bump_state(&self) -> u64 {
        let mut hub = self.hub();
        hub.state_version += 1;
        hub.state_version
    }

    /// Queues an operation on the lane; returns how many were ahead of it.
    pub fn enqueue(
        &self,
        job: impl Future<Output = ()> + Send + 'static,
    ) -> Result<usize, ApiError> {
        let ahead = self.pending_ops.fetch_add(1, Ordering::SeqCst);
        if self.lane.send(Box::pin(job)).is_err() {
            self.pending_ops.fetch_sub(1, Ordering::SeqCst);
            return Err(ApiError::failed("the session's lane is closed"));
        }
        Ok(ahead)
    }

    /// The listener of the AgentSession: model activity, the bridge, then publication.
    fn on_event(&self, event: &AgentSessionEvent) {
        self.activity.observe(event);
        let ctx = match event {
            AgentSessionEvent::Agent(pi_agent_core::AgentEvent::AgentStart) => {
                *lock(&self.steerable) = true;
                if self.abort_requested.load(Ordering::SeqCst) {
                    self.session.agent().abort();
                }
                BridgeContext::default()
            }
            AgentSessionEvent::Agent(
                pi_agent_core::AgentEvent::TurnStart | pi_agent_core::AgentEvent::TurnEnd { .. },
            ) => BridgeContext {
                message_count: self.session.message_count(),
                has_queued: self.session.agent().has_queued_messages(),
            },
            AgentSessionEvent::Agent(pi_agent_core::AgentEvent::AgentEnd { .. }) => {
                *lock(&self.steerable) = false;
                BridgeContext::default()
            }
            _ => BridgeContext::default(),
        };
        let mut hub = self.hub();
        self.resolve_pending(&mut hub);
        let events = hub.bridge.translate(event, &ctx);
        if let Some(ended) = hub.bridge.take_ended() {
            hub.pending = Some(ended);
        }
        for lifecycle in events {
            if matches!(lifecycle, LifecycleEvent::AgentEnd(_)) {
                hub.runs_ended += 1;
            }
            self.publish(&mut hub, &lifecycle);
        }
    }

    /// Maps the last ended message's id to its session entry, once the entry exists.
    fn resolve_pending(&self, hub: &mut Hub) {
        let Some(pending) = hub.pending.as_ref() else {
            return;
        };
        let found = self.session.with_session(|s| {
            s.entries()
                .iter()
                .rev()
                .take(16)
                .find(|e| e.message() == Some(&pending.message))
                .map(|e| e.id.clone())
        });
        if let Some(entry) = found {
            let message_id = pending.message_id.clone();
            hub.entry_of.insert(message_id.clone(), entry.clone());
            hub.message_of.insert(entry, message_id);
            hub.pending = None;
        }
    }

    fn publish(&self, hub: &mut Hub, event: &LifecycleEvent) {
        if event.changes_state() {
            hub.state_version += 1;
        }
        if let Some(sink) = self.sink.get() {
            sink.send(OutgoingEvent {
                name: event.name(),
                payload: serde_json::to_string(event).unwrap_or_default(),
                state_version: hub.state_version,
                ts: now_micros(),
                running: !matches!(event, LifecycleEvent::AgentEnd(_)) && self.is_running(),
            });
        } else {
            let seq = self.shared.seq.fetch_add(1, Ordering::SeqCst) + 1;
            let frame = EventFrame {
                kind: "event",
                event: event.name(),
                payload: event,
                seq,
                state_version: hub.state_version,
                session_id: &self.id,
                ts: now_micros(),
            };
            let text = Utf8Bytes::from(serde_json::to_string(&frame).unwrap_or_default());
            let state_version = hub.state_version;
            hub.feed.push(seq, state_version, text);
        }
        for (_, tap) in &hub.taps {
            tap(event);
        }
    }

    /// Adds a tap under `name` unless one of that name is there; true when added.
    pub fn add_tap(&self, name: &str, tap: Tap) -> bool {
        let mut hub = self.hub();
        if hub.taps.iter().any(|(n, _)| n == name) {
            return false;
        }
        hub.taps.push((name.to_owned(), tap));
        true
    }

    /// Publishes an event produced by the gateway itself (not by the agent).
    pub fn publish_own(&self, event: LifecycleEvent) {
        let mut hub = self.hub();
        self.publish(&mut hub, &event);
    }

    /// Registers `sub`: queues the response built from what was found, replays the
    /// retained events after `from_seq`, then delivers live events, all in order.
    pub fn subscribe(
        &self,
        sub: Subscriber,
        from_seq: Option<u64>,
        response: impl FnOnce(SubscribeInfo) -> Utf8Bytes + Send + 'static,
    ) {
        let mut hub = self.hub();
        let state_version = hub.state_version;
        hub.feed
            .subscribe(sub, from_seq, state_version, Box::new(response));
    }

    pub fn unsubscribe(&self, conn: u64) {
        self.hub().feed.unsubscribe(conn);
    }

    pub fn subscriber_count(&self) -> usize {
        self.hub().feed.subscriber_count()
    }

    /// The entry a `messageId` (or an entry id) names.
    pub fn entry_for(&self, reference: &str) -> Option<String> {
        let mapped = {
            let mut hub = self.hub();
            self.resolve_pending(&mut hub);
            hub.entry_of.get(reference).cloned()
        };
        let id = mapped.unwrap_or_else(|| reference.to_owned());
        self.session
            .with_session(|s| s.entry(&id).is_some())
            .then_some(id)
    }

    /// The entries of the current branch, with the `messageId`s the events gave them; with
    /// `full`, each message entry's whole message too.
    pub fn history(&self, full: bool) -> Value {
        let message_of = {
            let mut hub = self.hub();
            self.resolve_pending(&mut hub);
            hub.message_of.clone()
        };
        let entries: Vec<Value> = self.session.with_session(|s| {
            s.branch_entries()
                .iter()
                .map(|e| {
                    let (role, text) = match e.message() {
                        Some(m) => (m.role().to_owned(), message_text(m)),
                        None => (entry_kind(&e.kind).to_owned(), String::new()),
                    };
                    let mut entry = json!({
                        "entryId": e.id,
                        "parentId": e.parent_id,
                        "role": role,
                        "text": text,
                        "messageId": message_of.get(&e.id),
                    });
                    if full && let Some(message) = e.message() {
                        entry["message"] = serde_json::to_value(message).unwrap_or_default();
                    }
                    entry
                })
                .collect()
        });
        json!({ "entries": entries })
    }

    /// Runs a prompt to its end under the limits; called from the lane.
    pub async fn run_prompt(&self, text: String) -> RunOutcome {
        let before = {
            let mut hub = self.hub();
            hub.bridge.clear_requested();
            hub.runs_ended
        };
        self.abort_requested.store(false, Ordering::SeqCst);
        self.running.store(true, Ordering::SeqCst);
        *lock(&self.steerable) = true;
        self.activity.begin_run();
        let result = {
            let mut params =
                EmbeddedRunParams::new(self.session.clone(), text, self.shared.auth.clone());
            params.config = self.shared.runner.clone();
            let run = run_embedded(params);
            tokio::pin!(run);
            tokio::select! {
                result = &mut run => result,
                reason = watch(self.shared.limits, &self.activity) => {
                    if self.terminate(reason) {
                        (self.on_limit)(&self.id, reason);
                    }
                    run.await
                }
            }
        };
        self.activity.end_run();
        *lock(&self.steerable) = false;
        self.running.store(false, Ordering::SeqCst);
        self.abort_requested.store(false, Ordering::SeqCst);
        let mut hub = self.hub();
        self.resolve_pending(&mut hub);
        hub.bridge.clear_requested();
        let termination = (hub.runs_ended > before)
            .then(|| hub.bridge.last_termination())
            .flatten();
        let failure = result.meta.error.filter(|e| e.kind != FailureKind::Aborted);
        if let Some(failure) = &failure {
            let recoverable = matches!(
                failure.kind,
                FailureKind::RateLimit
                    | FailureKind::Timeout
                    | FailureKind::Auth
                    | FailureKind::Billing
                    | FailureKind::ContextOverflow
            );
            self.publish(
                &mut hub,
                &LifecycleEvent::Error(ErrorEvent {
                    code: failure.kind.as_str().to_owned(),
                    message: failure.message.clone(),
                    context: Some(json!({
                        "attempts": result.attempts.len(),
                        "autoCompactions": result.auto_compaction_count,
                    })),
                    recoverable,
                }),
            );
        }
        let error = failure.map(|f| f.message);
        RunOutcome { termination, error }
    }

    /// Aborts the running prompt, recording `reason`; false when none runs.
    pub fn terminate(&self, reason: TerminationReason) -> bool {
        if !self.is_running() {
            return false;
        }
        self.hub().bridge.request_termination(reason);
        self.abort_requested.store(true, Ordering::SeqCst);
        let session = self.session.clone();
        tokio::spawn(async move { session.abort().await });
        true
    }

    /// Moves the session's leaf; called from the lane.
    pub async fn navigate(&self, target: &str, summarize: bool) -> Result<Value, ApiError> {
        let options = NavigateOptions {
            summarize,
            ..NavigateOptions::default()
        };
        let result = self
            .session
            .navigate_tree(target, options)
            .await
            .map_err(|e| ApiError::failed(e.0))?;
        let state_version = self.bump_state();
        Ok(json!({
            "editorText": result.editor_text,
            "cancelled": result.cancelled,
            "summaryEntryId": result.summary_entry_id,
            "stateVersion": state_version,
        }))
    }

    /// A strong handle to this session.
    pub fn arc(&self) -> Option<Arc<LiveSession>> {
        self.self_ref.upgrade()
    }
}

fn message_text(message: &pi_agent_core::AgentMessage) -> String {
    use pi_ai::{AssistantBlock, InputBlock, Message, UserContent};
    let blocks = |blocks: &[InputBlock]| -> String {
        blocks
            .iter()
            .filter_map(|b| match b {
                InputBlock::Text(t) => Some(t.text.as_str()),
                InputBlock::Image(_) => None,
            })
            .collect()
    };
    match message {
        pi_agent_core::AgentMessage::Llm(Message::User(user)) => match &user.content {
            UserContent::Text(text) => text.to_string(),
            UserContent::Blocks(b) => blocks(b),
        },
        pi_agent_core::AgentMessage::Llm(Message::Assistant(a)) => a
            .content
            .iter()
            .filter_map(|b| match b {
                AssistantBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect(),
        pi_agent_core::AgentMessage::Llm(Message::ToolResult(r)) => blocks(&r.content),
        pi_agent_core::AgentMessage::Custom(_) => String::new(),
    }
}

fn entry_kind(kind: &pi_coding_agent::session::EntryKind) -> &'static str {
    use pi_coding_agent::session::EntryKind;
    match kind {
        EntryKind::Message { .. } => "message",
        EntryKind::ThinkingLevelChange { .. } => "thinking_level_change",
        EntryKind::ModelChange { .. } => "model_change",
        EntryKind::Compaction { .. } => "compaction",
        EntryKind::BranchSummary { .. } => "branch_summary",
        EntryKind::Custom { .. } => "custom",
        EntryKind::CustomMessage { .. } => "custom_message",
        EntryKind::Label { .. } => "label",
        EntryKind::SessionInfo { .. } => "session_info",
        EntryKind::Usage { .. } => "usage",
        EntryKind::ContextEdit { .. } => "context_edit",
        EntryKind::Unknown(_) => "unknown",
    }
}
