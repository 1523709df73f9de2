//! Components that live in the extension host, drawn by pi.
//!
//! Drawing must not wait for node: a frame uses the lines last fetched for a component
//! (cut to the current width) and asks for fresh ones when the width changed or the
//! component asked to be redrawn (`requestRender`, a key it handled). One worker task
//! talks to the host in order — a key reaches a component before the render that shows
//! its effect — and wakes the UI with [`ExtEvent::Redraw`] when lines change.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use pi_tui::Input;
use pi_tui::width::{truncate_to_width, visible_width};
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::ExtEvent;
use crate::extensions::ExtensionRuntime;
use crate::modes::interactive::AppEvent;

/// What a renderer request (`tool_render`, `message_render`) answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum SlotState {
    /// Not answered yet.
    #[default]
    Waiting,
    /// No renderer (or it threw): pi draws its default.
    Fallback,
    /// The renderer's component.
    Component(u64),
}

/// Where the answer of a renderer request lands (shared with the worker).
pub(crate) type Slot = Arc<Mutex<SlotState>>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Reads a slot.
pub(crate) fn slot_state(slot: &Slot) -> SlotState {
    *lock(slot)
}

/// One request or notification for the host, run by the worker in order.
enum HostOp {
    Render {
        id: u64,
        width: usize,
    },
    Input {
        id: u64,
        data: String,
    },
    Notify {
        kind: &'static str,
        fields: Value,
    },
    /// A renderer request answering `{componentId}` or `null`.
    Renderer {
        kind: &'static str,
        fields: Value,
        slot: Slot,
        /// Dispose the component the slot held before when the answer is another one.
        dispose_replaced: bool,
    },
    TerminalInput {
        input: Input,
    },
}

/// The lines known for one component.
#[derive(Debug, Default)]
struct Entry {
    width: usize,
    lines: Vec<String>,
    loaded: bool,
    /// Asked to redraw since the last fetch started.
    stale: bool,
    /// A fetch is queued or running.
    pending: bool,
    /// Drawn in the chat history (whose cached lines must then be dropped).
    in_chat: bool,
}

#[derive(Debug, Default)]
struct Store {
    entries: HashMap<u64, Entry>,
    chat_dirty: bool,
}

/// The line cache of host components and the queue to the host. Cheap to clone.
#[derive(Clone)]
pub(crate) struct RemoteView {
    store: Arc<Mutex<Store>>,
    ops: UnboundedSender<HostOp>,
}

impl RemoteView {
    /// A view whose worker talks to `runtime` and wakes the UI through `events`.
    pub(crate) fn start(runtime: Arc<ExtensionRuntime>, events: UnboundedSender<AppEvent>) -> Self {
        let (ops, queue) = unbounded_channel();
        let store = Arc::new(Mutex::new(Store::default()));
        tokio::spawn(work(runtime, Arc::clone(&store), queue, events));
        RemoteView { store, ops }
    }

    /// A view without a host (tests): requests go nowhere, nothing is ever drawn.
    #[cfg(test)]
    pub(crate) fn detached() -> Self {
        let (ops, _) = unbounded_channel();
        RemoteView {
            store: Arc::new(Mutex::new(Store::default())),
            ops,
        }
    }

    fn send(&self, op: HostOp) {
        let _ = self.ops.send(op);
    }

    fn lines_for(&self, id: u64, width: usize, in_chat: bool) -> Vec<String> {
        let width = width.max(1);
        let mut store = lock(&self.store);
        let entry = store.entries.entry(id).or_default();
        entry.in_chat |= in_chat;
        let outdated = !entry.loaded || entry.stale || entry.width != width;
        if outdated && !entry.pending {
            entry.pending = true;
            entry.stale = false;
            self.send(HostOp::Render { id, width });
        }
        fit(&entry.lines, width)
    }

    /// The component's lines at `width` (those last fetched until fresh ones arrive).
    pub(crate) fn lines(&self, id: u64, width: usize) -> Vec<String> {
        self.lines_for(id, width, false)
    }

    /// [`Self::lines`] for a component in the chat history.
    pub(crate) fn chat_lines(&self, id: u64, width: usize) -> Vec<String> {
        self.lines_for(id, width, true)
    }

    /// A component asked to be drawn again (`tui.requestRender()`): as in pi-tui, where
    /// that redraws the whole screen, every component outside the chat is fetched again
    /// (a component may draw another one, e.g. an overlay it opened); in the chat only
    /// this one.
    pub(crate) fn request_render(&self, id: u64) {
        let mut store = lock(&self.store);
        for (key, entry) in store.entries.iter_mut() {
            if *key == id || !entry.in_chat {
                entry.stale = true;
            }
        }
    }

    /// Every component must be drawn again (theme change).
    pub(crate) fn invalidate_all(&self) {
        let mut store = lock(&self.store);
        for entry in store.entries.values_mut() {
            entry.stale = true;
        }
        store.chat_dirty = true;
    }

    /// Whether lines of a chat component changed since the last call.
    pub(crate) fn take_chat_dirty(&self) -> bool {
        std::mem::take(&mut lock(&self.store).chat_dirty)
    }

    /// Hands raw key bytes to a component.
    pub(crate) fn input(&self, id: u64, data: String) {
        self.send(HostOp::Input { id, data });
    }

    /// Forgets a component pi no longer shows and tells the host (`component_dispose`).
    pub(crate) fn dispose(&self, id: u64) {
        lock(&self.store).entries.remove(&id);
        self.notify("component_dispose", json!({ "componentId": id }));
    }

    /// Drops the cached lines of a component the host disposed itself.
    pub(crate) fn forget(&self, id: u64) {
        lock(&self.store).entries.remove(&id);
    }

    /// A host protocol notification, in order with the requests.
    pub(crate) fn notify(&self, kind: &'static str, fields: Value) {
        self.send(HostOp::Notify { kind, fields });
    }

    /// A renderer request (`tool_render`, `message_render`) whose answer lands in `slot`.
    pub(crate) fn request_renderer(
        &self,
        kind: &'static str,
        fields: Value,
        slot: &Slot,
        dispose_replaced: bool,
    ) {
        self.send(HostOp::Renderer {
            kind,
            fields,
            slot: Arc::clone(slot),
            dispose_replaced,
        });
    }

    /// Sends a key to the host's input listeners; the answer comes back as
    /// [`ExtEvent::TerminalInput`].
    pub(crate) fn terminal_input(&self, input: Input) {
        self.send(HostOp::TerminalInput { input });
    }
}

/// Lines cut to `width` (a component may draw wider than asked, or for another width).
fn fit(lines: &[String], width: usize) -> Vec<String> {
    lines
        .iter()
        .map(|line| {
            if visible_width(line) > width {
                truncate_to_width(line, width, "", false)
            } else {
                line.clone()
            }
        })
        .collect()
}

/// The worker: runs host operations one at a time.
async fn work(
    runtime: Arc<ExtensionRuntime>,
    store: Arc<Mutex<Store>>,
    mut queue: UnboundedReceiver<HostOp>,
    events: UnboundedSender<AppEvent>,
) {
    let redraw = || {
        let _ = events.send(AppEvent::Ext(ExtEvent::Redraw));
    };
    while let Some(op) = queue.recv().await {
        match op {
            HostOp::Render { id, width } => {
                let answer = runtime
                    .host_call(
                        "component_render",
                        json!({"componentId": id, "width": width}),
                    )
                    .await;
                let lines: Vec<String> = answer
                    .and_then(|v| serde_json::from_value(v).ok())
                    .unwrap_or_default();
                let changed = {
                    let mut store = lock(&store);
                    let Some(entry) = store.entries.get_mut(&id) else {
                        continue;
                    };
                    entry.pending = false;
                    let changed = !entry.loaded || entry.width != width || entry.lines != lines;
                    entry.loaded = true;
                    entry.width = width;
                    entry.lines = lines;
                    let in_chat = entry.in_chat;
                    let again = entry.stale;
                    if changed && in_chat {
                        store.chat_dirty = true;
                    }
                    changed || again
                };
                if changed {
                    redraw();
                }
            }
            HostOp::Input { id, data } => {
                runtime
                    .host_call("component_input", json!({"componentId": id, "data": data}))
                    .await;
                // pi-tui redraws after every key, whether or not the component asked.
                if let Some(entry) = lock(&store).entries.get_mut(&id) {
                    entry.stale = true;
                }
                redraw();
            }
            HostOp::Notify { kind, fields } => runtime.host_notify(kind, fields),
            HostOp::Renderer {
                kind,
                fields,
                slot,
                dispose_replaced,
            } => {
                let answer = runtime.host_call(kind, fields).await;
                let state = answer
                    .as_ref()
                    .and_then(|v| v.get("componentId"))
                    .and_then(Value::as_u64)
                    .map_or(SlotState::Fallback, SlotState::Component);
                let before = std::mem::replace(&mut *lock(&slot), state);
                let mut store = lock(&store);
                if let SlotState::Component(id) = state {
                    // The renderer may have changed the same component in place.
                    if let Some(entry) = store.entries.get_mut(&id) {
                        entry.stale = true;
                    }
                }
                if let SlotState::Component(old) = before
                    && before != state
                    && dispose_replaced
                {
                    store.entries.remove(&old);
                    runtime.host_notify("component_dispose", json!({ "componentId": old }));
                }
                store.chat_dirty = true;
                drop(store);
                redraw();
            }
            HostOp::TerminalInput { input } => {
                let data = super::key_bytes::encode_input(&input);
                let answer = runtime
                    .host_call("terminal_input", json!({ "data": data }))
                    .await;
                let consume = answer
                    .as_ref()
                    .and_then(|a| a.get("consume"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let rewritten = answer
                    .as_ref()
                    .and_then(|a| a.get("data"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or(data);
                let _ = events.send(AppEvent::Ext(ExtEvent::TerminalInput {
                    input,
                    consume,
                    data: rewritten,
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cut_to_the_width() {
        let lines = fit(&["abcdef".into(), "ab".into()], 4);
        let plain: Vec<String> = lines
            .iter()
            .map(|l| crate::modes::interactive::components::strip_ansi(l))
            .collect();
        assert_eq!(plain, ["abcd", "ab"]);
    }

    #[test]
    fn a_view_without_host_draws_nothing() {
        let view = RemoteView::detached();
        assert!(view.lines(3, 20).is_empty());
        view.request_render(3);
        assert!(!view.take_chat_dirty());
        view.invalidate_all();
        assert!(view.take_chat_dirty());
    }
}
