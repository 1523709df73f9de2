//! Shared server state: the script queue, recorded requests and id counters.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::recording::{RecordedRequest, StoredRequest};
use crate::script::Script;

/// State shared by all handlers and every [`crate::MockServer`] handle.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    queue: Mutex<VecDeque<Script>>,
    requests: Mutex<Vec<StoredRequest>>,
    response_seq: AtomicU64,
    /// Counter for generated tool call ids.
    pub tool_seq: AtomicU64,
    /// The stand-in sign-in servers.
    pub oauth: crate::oauth::OAuthState,
    /// The stand-in GitHub Copilot API (model list and policies).
    pub copilot: crate::oauth_copilot::CopilotState,
    /// The stand-in llama.cpp router.
    pub llama: crate::llama_router::LlamaState,
    /// The Codex Responses WebSocket endpoint's settings.
    codex_websocket: Mutex<crate::websocket::CodexWebSocket>,
}

/// Locks a mutex, ignoring poisoning (the data stays consistent: no invariants span a panic).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Enqueues scripts at the back of the FIFO.
    pub fn push_all(&self, scripts: impl IntoIterator<Item = Script>) {
        lock(&self.queue).extend(scripts);
    }

    /// Takes the next script, if any.
    pub fn pop(&self) -> Option<Script> {
        lock(&self.queue).pop_front()
    }

    /// Number of queued scripts.
    pub fn pending(&self) -> usize {
        lock(&self.queue).len()
    }

    /// Removes every queued script.
    pub fn clear_queue(&self) {
        lock(&self.queue).clear();
    }

    /// Appends a recorded request.
    pub fn record(&self, request: StoredRequest) {
        lock(&self.requests).push(request);
    }

    /// A copy of every recorded request, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        let stored = lock(&self.requests).clone();
        stored.iter().map(StoredRequest::parsed).collect()
    }

    /// Forgets every recorded request.
    pub fn clear_requests(&self) {
        lock(&self.requests).clear();
    }

    /// The Codex Responses WebSocket endpoint's settings.
    pub fn codex_websocket(&self) -> crate::websocket::CodexWebSocket {
        *lock(&self.codex_websocket)
    }

    /// Changes the Codex Responses WebSocket endpoint's settings.
    pub fn set_codex_websocket(&self, settings: crate::websocket::CodexWebSocket) {
        *lock(&self.codex_websocket) = settings;
    }

    /// The render inputs of one request to this server: its body, the next response
    /// sequence number, the server's tool-call counter and the time now.
    pub(crate) fn render_ctx<'a>(
        &'a self,
        request: &'a serde_json::Value,
        request_len: usize,
    ) -> crate::wire::RenderCtx<'a> {
        crate::wire::RenderCtx {
            request,
            request_len,
            response_seq: self.next_response_seq(),
            tool_seq: &self.tool_seq,
            created: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }

    /// The next response sequence number (1-based).
    pub fn next_response_seq(&self) -> u64 {
        self.response_seq.fetch_add(1, Ordering::Relaxed) + 1
    }
}
