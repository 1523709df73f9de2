//! The socket to the host: request/response correlation both ways, notifications, the
//! state mirror kept current, and what happens when the host dies.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentToolResult, ToolUpdateFn};

use super::protocol::{HostFrame, parse_frame};
use crate::extensions::actions::MirrorStatics;
use crate::extensions::actions::{BUSY_PROMPT, RunRequest, StartSignal};
use crate::extensions::backend::ExtensionBinding;
use crate::extensions::registry::{ExtensionErrorInfo, LoadedExtension};
use crate::extensions::ui::{UiDialog, UiNotice};
use crate::extensions::{ExtensionAction, StateSnapshot};

type Pending = oneshot::Sender<Result<Value, String>>;

/// How a request is followed: cancelled, streaming tool updates or provider events, and
/// how long an answer is awaited after cancelling (`None`: not at all).
struct RequestCall {
    cancel: Option<CancellationToken>,
    updates: Option<ToolUpdateFn>,
    events: Option<StreamEvents>,
    grace: Option<std::time::Duration>,
}
/// Receives the progress frames of one request (`provider_event` payloads, `bash_data` text).
pub type StreamEvents = Arc<dyn Fn(Value) + Send + Sync>;

/// Host requests that never wait on a run, a dialog or the network.
const QUICK_METHODS: [&str; 11] = [
    "appendEntry",
    "registerProvider",
    "unregisterProvider",
    "setSessionName",
    "setLabel",
    "setActiveTools",
    "setThinkingLevel",
    "setModel",
    "refreshTools",
    "getApiKeyAndHeaders",
    "getApiKeyForProvider",
];

/// What the mirror in the host holds, so only changes cross.
#[derive(Default)]
struct Mirror {
    sent: Map<String, Value>,
    session: Option<(String, usize)>,
    generation: Option<u64>,
    fingerprint: Option<u64>,
    /// The tools, commands and models last sent.
    statics: Option<Arc<MirrorStatics>>,
}

/// One live connection to a host process.
pub struct Connection {
    out: mpsc::UnboundedSender<String>,
    pending: Mutex<HashMap<u64, Pending>>,
    updates: Mutex<HashMap<u64, ToolUpdateFn>>,
    streams: Mutex<HashMap<u64, StreamEvents>>,
    dialogs: Mutex<HashMap<u64, CancellationToken>>,
    next_id: AtomicU64,
    alive: AtomicBool,
    /// pi asked the host to stop.
    stopping: AtomicBool,
    exit_reason: Mutex<Option<String>>,
    binding: Mutex<Option<ExtensionBinding>>,
    mirror: Mutex<Mirror>,
    registry: Mutex<Registry>,
}

/// What the host's extensions registered, kept current by `registrations` frames.
#[derive(Default)]
pub struct Registry {
    pub loaded: Vec<LoadedExtension>,
    pub handlers: HashSet<String>,
    /// `sourceInfo` by extension path, from discovery.
    pub sources: HashMap<String, Value>,
}

impl Registry {
    /// Replaces the list, keeping each extension's `sourceInfo`.
    pub fn set(&mut self, mut loaded: Vec<LoadedExtension>) {
        for extension in &mut loaded {
            if let Some(source) = self.sources.get(&extension.path) {
                extension.source_info = source.clone();
            }
        }
        self.handlers = loaded
            .iter()
            .flat_map(|e| e.handlers.iter().cloned())
            .collect();
        self.loaded = loaded;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Connection {
    /// Starts the reader and writer tasks on an accepted socket. `exited` reports why the
    /// process ended, once the socket closed.
    pub fn start(
        stream: UnixStream,
        exited: impl Fn() -> String + Send + Sync + 'static,
    ) -> Arc<Self> {
        let (reader, mut writer) = stream.into_split();
        let (out, mut outgoing) = mpsc::unbounded_channel::<String>();
        let connection = Arc::new(Self {
            out,
            pending: Mutex::new(HashMap::new()),
            updates: Mutex::new(HashMap::new()),
            streams: Mutex::new(HashMap::new()),
            dialogs: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            alive: AtomicBool::new(true),
            stopping: AtomicBool::new(false),
            exit_reason: Mutex::new(None),
            binding: Mutex::new(None),
            mirror: Mutex::new(Mirror::default()),
            registry: Mutex::new(Registry::default()),
        });
        tokio::spawn(async move {
            // One write per batch of frames (a frame and its newline together): the host
            // then wakes once per frame, not once per piece.
            let mut batch = Vec::new();
            while let Some(line) = outgoing.recv().await {
                batch.clear();
                batch.extend_from_slice(line.as_bytes());
                batch.push(b'\n');
                while let Ok(more) = outgoing.try_recv() {
                    batch.extend_from_slice(more.as_bytes());
                    batch.push(b'\n');
                }
                if writer.write_all(&batch).await.is_err() {
                    break;
                }
            }
        });
        let weak = Arc::downgrade(&connection);
        tokio::spawn(async move {
            let mut lines = BufReader::new(reader).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Some(connection) = weak.upgrade() else {
                    return;
                };
                connection.receive(&line).await;
            }
            if let Some(connection) = weak.upgrade() {
                // Give the process a moment to be reaped so its exit status is known.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                connection.closed(exited());
            }
        });
        connection
    }

    /// What the extensions registered.
    pub fn registry(&self) -> MutexGuard<'_, Registry> {
        lock(&self.registry)
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    fn dead_error(&self) -> String {
        let reason = lock(&self.exit_reason)
            .clone()
            .unwrap_or_else(|| "connection closed".into());
        format!("Extension host exited: {reason}")
    }

    /// Marks the host dead and fails everything waiting on it.
    fn closed(&self, reason: String) {
        if !self.alive.swap(false, Ordering::SeqCst) {
            return;
        }
        *lock(&self.exit_reason) = Some(reason);
        let error = self.dead_error();
        // A host pi stopped on purpose (reload, quit) ends what it was doing quietly.
        let stopping = self.stopping.load(Ordering::SeqCst);
        for (_, waiting) in lock(&self.pending).drain() {
            let _ = waiting.send(if stopping {
                Ok(Value::Null)
            } else {
                Err(error.clone())
            });
        }
        lock(&self.updates).clear();
        for (_, token) in lock(&self.dialogs).drain() {
            token.cancel();
        }
        let binding = lock(&self.binding).clone().filter(|_| !stopping);
        if let Some(binding) = binding {
            (binding.errors)(ExtensionErrorInfo {
                extension_path: "<extension host>".into(),
                event: "host".into(),
                error: format!(
                    "{error}; extension tools and hooks are unavailable until /reload (to start without extensions: pi -ne)"
                ),
                stack: None,
            });
        }
    }

    pub fn bind(&self, binding: ExtensionBinding) {
        *lock(&self.binding) = Some(binding);
    }

    /// Tells the host to exit; its going away is then no fault.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.notify(json!({"type": "shutdown"}));
    }

    /// Sends a notification frame.
    pub fn notify(&self, frame: Value) {
        self.send_line(frame.to_string());
    }

    /// Sends one frame already written as JSON text.
    fn send_line(&self, line: String) {
        if self.is_alive() {
            let _ = self.out.send(line);
        }
    }

    /// Sends a request and waits for its answer; `cancel` sends `cancel` and gives up.
    /// `updates` receives `tool_update` frames of this request.
    pub async fn request(
        &self,
        frame: Map<String, Value>,
        cancel: Option<CancellationToken>,
        updates: Option<ToolUpdateFn>,
    ) -> Result<Value, String> {
        let call = RequestCall {
            cancel,
            updates,
            events: None,
            grace: None,
        };
        self.request_call(frame, call).await
    }

    /// A tool's run: like [`Self::request`], but after `cancel` the tool's own answer (its
    /// result or error once it saw the abort) is awaited for up to `grace`, as pi awaits an
    /// aborted tool.
    pub async fn request_tool(
        &self,
        frame: Map<String, Value>,
        cancel: CancellationToken,
        updates: ToolUpdateFn,
        grace: std::time::Duration,
    ) -> Result<Value, String> {
        let call = RequestCall {
            cancel: Some(cancel),
            updates: Some(updates),
            events: None,
            grace: Some(grace),
        };
        self.request_call(frame, call).await
    }

    /// A `provider_stream` request: `events` receives its `provider_event` frames.
    pub async fn request_stream(
        &self,
        frame: Map<String, Value>,
        cancel: CancellationToken,
        events: StreamEvents,
    ) -> Result<Value, String> {
        let call = RequestCall {
            cancel: Some(cancel),
            updates: None,
            events: Some(events),
            grace: None,
        };
        self.request_call(frame, call).await
    }

    async fn request_call(
        &self,
        mut frame: Map<String, Value>,
        call: RequestCall,
    ) -> Result<Value, String> {
        let RequestCall {
            cancel,
            updates,
            events,
            grace,
        } = call;
        if !self.is_alive() {
            return Err(self.dead_error());
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        frame.insert("id".into(), id.into());
        let (tx, mut rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        if let Some(updates) = updates {
            lock(&self.updates).insert(id, updates);
        }
        if let Some(events) = events {
            lock(&self.streams).insert(id, events);
        }
        if self.out.send(Value::Object(frame).to_string()).is_err() {
            lock(&self.pending).remove(&id);
            return Err(self.dead_error());
        }
        let cancel = cancel.unwrap_or_default();
        let result = tokio::select! {
            answer = &mut rx => answer.unwrap_or_else(|_| Err(self.dead_error())),
            () = cancel.cancelled() => {
                self.notify(json!({"type": "cancel", "id": id}));
                let settled = match grace {
                    Some(grace) => tokio::time::timeout(grace, &mut rx).await.ok(),
                    None => None,
                };
                match settled {
                    Some(answer) => answer.unwrap_or_else(|_| Err(self.dead_error())),
                    None => {
                        lock(&self.pending).remove(&id);
                        Err("Aborted".into())
                    }
                }
            }
        };
        lock(&self.updates).remove(&id);
        lock(&self.streams).remove(&id);
        result
    }

    /// Sends the state that changed since the last sync, before extension code runs.
    pub fn sync_state(&self) {
        let Some(binding) = lock(&self.binding).clone() else {
            return;
        };
        let mut mirror = lock(&self.mirror);
        let fingerprint = binding.actions.fingerprint();
        if fingerprint != 0 && mirror.fingerprint == Some(fingerprint) {
            return;
        }
        mirror.fingerprint = Some(fingerprint);
        let mut snapshot: StateSnapshot = binding
            .actions
            .snapshot(mirror.session.clone(), mirror.generation);
        let total = snapshot.session.total_entries;
        let session_id = snapshot.session.session_id.clone();
        mirror.generation = Some(snapshot.generation);
        // The new entries move into the frame; only the small fields are compared and kept.
        let mut entries = std::mem::take(&mut snapshot.session.entries);
        let statics = snapshot.statics.take();
        let reset = snapshot.session.reset;
        let Ok(Value::Object(fields)) = serde_json::to_value(&snapshot) else {
            return;
        };
        let mut changed = Map::new();
        for (key, value) in fields {
            if key == "session" {
                let Value::Object(mut session) = value else {
                    continue;
                };
                session.remove("entries");
                session.remove("reset");
                let session = Value::Object(session);
                if entries.is_empty()
                    && !reset
                    && mirror.sent.get("sessionFields") == Some(&session)
                {
                    continue;
                }
                mirror.sent.insert("sessionFields".into(), session.clone());
                let Value::Object(mut session) = session else {
                    continue;
                };
                session.insert("reset".into(), reset.into());
                session.insert("entries".into(), Value::Array(std::mem::take(&mut entries)));
                changed.insert(key, Value::Object(session));
            } else if mirror.sent.get(&key) != Some(&value) {
                mirror.sent.insert(key.clone(), value.clone());
                changed.insert(key, value);
            }
        }
        mirror.session = Some((session_id, total));
        let statics = statics.filter(|new| mirror.statics.as_deref() != Some(&**new));
        if changed.is_empty() && statics.is_none() {
            return;
        }
        changed.insert("type".into(), "state".into());
        let mut frame = Value::Object(changed).to_string();
        if let Some(statics) = statics {
            frame = statics.splice_into(&frame, mirror.statics.as_deref());
            mirror.statics = Some(statics);
        }
        self.send_line(frame);
    }

    /// Handles one line from the host.
    async fn receive(self: &Arc<Self>, line: &str) {
        let frame = match parse_frame(line) {
            Ok(frame) => frame,
            Err(message) => {
                eprintln!("Warning: {message}");
                return;
            }
        };
        let quick = match &frame {
            HostFrame::Request { method, params, .. } => {
                QUICK_METHODS.contains(&method.as_str())
                    // A message that does not start a turn is added at once.
                    || (method == "sendMessage"
                        && params
                            .pointer("/options/triggerTurn")
                            .and_then(Value::as_bool)
                            != Some(true))
                    // A steered or follow-up message is queued before the tool's result.
                    || (method == "sendUserMessage"
                        && matches!(
                            params.pointer("/options/deliverAs").and_then(Value::as_str),
                            Some("steer" | "followUp")
                        )
                        && lock(&self.binding)
                            .as_ref()
                            .is_some_and(|binding| binding.actions.queues_at_once()))
                    // So is a message that asks for a turn while a run goes on (also from
                    // an `agent_end` handler: it continues the run before it settles).
                    || (method == "sendMessage"
                        && lock(&self.binding)
                            .as_ref()
                            .is_some_and(|binding| binding.actions.queues_at_once()))
            }
            _ => false,
        };
        match frame {
            HostFrame::Response { id, result, error } => {
                if let Some(waiting) = lock(&self.pending).remove(&id) {
                    let _ = waiting.send(match error {
                        Some(error) => Err(error),
                        None => Ok(result),
                    });
                }
            }
            HostFrame::ToolUpdate { id, partial_result } => {
                let update = lock(&self.updates).get(&id).cloned();
                if let (Some(update), Ok(partial)) = (
                    update,
                    serde_json::from_value::<AgentToolResult>(partial_result),
                ) {
                    update(partial);
                }
            }
            HostFrame::ProviderEvent { id, event } => {
                let events = lock(&self.streams).get(&id).cloned();
                if let Some(events) = events {
                    events(event);
                }
            }
            HostFrame::BashData { id, data } => {
                let events = lock(&self.streams).get(&id).cloned();
                if let Some(events) = events {
                    events(Value::String(data));
                }
            }
            HostFrame::Request { id, method, params } => {
                if method == "abort"
                    && let Some(binding) = lock(&self.binding).clone()
                {
                    binding.actions.abort_now();
                }
                if method == "sendUserMessage"
                    && params
                        .pointer("/options/deliverAs")
                        .is_none_or(Value::is_null)
                    && lock(&self.binding)
                        .as_ref()
                        .is_some_and(|binding| binding.actions.refuses_unqueued_prompt())
                {
                    self.notify(json!({"type": "response", "id": id, "error": BUSY_PROMPT}));
                    return;
                }
                let connection = self.clone();
                // A run asked for counts from now, before the frames after this one (the
                // answer of the command that asked) are handled.
                let asks_for_run = method == "sendUserMessage"
                    || (method == "sendMessage"
                        && params
                            .pointer("/options/triggerTurn")
                            .and_then(Value::as_bool)
                            == Some(true));
                let expected_run = if asks_for_run {
                    lock(&self.binding)
                        .as_ref()
                        .and_then(|binding| binding.actions.expect_run())
                } else {
                    None
                };
                // `ctx.compact()` starts before the frames after it are handled, as in pi
                // (the command that called it answers after `compaction_start`).
                let (started, begun) = if method == "compact" {
                    let (signal, begun) = StartSignal::new();
                    (Some(signal), Some(begun))
                } else {
                    (None, None)
                };
                let handle = async move {
                    let answer = connection
                        .answer(id, &method, params, started, expected_run)
                        .await;
                    connection.notify(match answer {
                        Ok(result) => json!({"type": "response", "id": id, "result": result}),
                        Err(error) => json!({"type": "response", "id": id, "error": error}),
                    });
                };
                // Actions that change state at once are done before the next frame, so
                // their effects (session_info_changed, …) come out in the order the
                // extension made them; anything that can wait runs on its own.
                if quick {
                    handle.await;
                } else {
                    tokio::spawn(handle);
                    if let Some(begun) = begun {
                        let _ = begun.await;
                    }
                }
            }
            HostFrame::Ui { method, params } => {
                let binding = lock(&self.binding).clone();
                if let (Some(binding), Some(notice)) = (binding, notice(&method, params)) {
                    binding.ui.notice(notice);
                }
            }
            HostFrame::UiCancel { id } => {
                if let Some(token) = lock(&self.dialogs).remove(&id) {
                    token.cancel();
                }
            }
            HostFrame::ExtensionError(info) => {
                let binding = lock(&self.binding).clone();
                match binding {
                    Some(binding) => (binding.errors)(info),
                    None => eprintln!("Extension error ({}): {}", info.extension_path, info.error),
                }
            }
            HostFrame::Log { level, message } => eprintln!("[extension host {level}] {message}"),
            HostFrame::Registrations { extensions } => {
                lock(&self.registry).set(extensions);
                let binding = lock(&self.binding).clone();
                if let Some(binding) = binding {
                    tokio::spawn(async move {
                        let _ = binding
                            .actions
                            .perform(ExtensionAction::RefreshTools {})
                            .await;
                    });
                }
            }
        }
    }

    /// Carries out a request from the host.
    async fn answer(
        &self,
        id: u64,
        method: &str,
        params: Value,
        started: Option<StartSignal>,
        expected_run: Option<RunRequest>,
    ) -> Result<Value, String> {
        let Some(binding) = lock(&self.binding).clone() else {
            return Err("Extension runtime not initialized. Action methods cannot be called during extension loading.".into());
        };
        if let Some(dialog_method) = method.strip_prefix("ui.") {
            let mut fields = match params {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            fields.insert("method".into(), dialog_method.into());
            let dialog: UiDialog = serde_json::from_value(Value::Object(fields))
                .map_err(|e| format!("bad ui request {method}: {e}"))?;
            let token = CancellationToken::new();
            lock(&self.dialogs).insert(id, token.clone());
            let answer = binding.ui.dialog(dialog, token).await;
            lock(&self.dialogs).remove(&id);
            return Ok(answer);
        }
        let mut action: ExtensionAction =
            serde_json::from_value(json!({"method": method, "params": params}))
                .map_err(|e| format!("Unknown or malformed request {method}: {e}"))?;
        if let (ExtensionAction::Compact { started: slot, .. }, Some(signal)) =
            (&mut action, started)
        {
            *slot = signal;
        }
        if let (
            ExtensionAction::SendUserMessage { request, .. }
            | ExtensionAction::SendMessage { request, .. },
            Some(expected),
        ) = (&mut action, expected_run)
        {
            *request = expected;
        }
        // The host sees the effects of its action in the state it reads next.
        let result = binding.actions.perform(action).await;
        self.sync_state();
        result
    }
}

/// A `ui` notification's fields as a typed notice.
fn notice(method: &str, params: Value) -> Option<UiNotice> {
    let mut fields = match params {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    fields.insert("method".into(), method.into());
    match serde_json::from_value(Value::Object(fields)) {
        Ok(notice) => Some(notice),
        Err(e) => {
            eprintln!("Warning: bad ui notification {method} from the extension host: {e}");
            None
        }
    }
}
