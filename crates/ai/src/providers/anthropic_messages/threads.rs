//! Anthropic message threads (pi-ai 1.6.0): a session's first request opens a thread
//! (`thread: {type: "create"}`); once a reply came back, the next request whose
//! conversation starts with everything sent so far plus that reply sends only the new
//! messages, without system prompt and tools (`thread: {type: "continue",
//! previous_message_id}`), and the server continues from the reply. Any other change
//! (compaction, a new tool list, another model) opens a new thread. A server that lost the
//! thread gets a new one; one that does not take threads gets the full request, and the
//! session stops using them.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{LazyLock, Mutex, MutexGuard};

use serde_json::{Map, Value, json};

use crate::types::Model;

/// The beta every request of a threaded session names.
pub const MESSAGE_THREADS_BETA: &str = "message-threads-2026-08-12";
/// Sessions remembered at most (the oldest is forgotten first).
const MAX_SESSIONS: usize = 10_000;
/// Error codes after which a new thread is opened.
const NEW_THREAD_ERRORS: [&str; 4] = [
    "thread_not_found",
    "thread_already_continued",
    "thread_continue_in_flight",
    "thread_fingerprint_mismatch",
];

/// What a session's next request may continue.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// The server takes no threads: full requests only.
    Off,
    /// The thread ended with `reply_id`, after `prefix_count` messages fingerprinted
    /// `prefix_hash`.
    Reply {
        prefix_count: usize,
        prefix_hash: u64,
        reply_id: String,
    },
}

#[derive(Default)]
struct States {
    by_session: HashMap<String, State>,
    order: VecDeque<String>,
}

impl States {
    fn set(&mut self, session: &str, state: State) {
        self.order.retain(|s| s != session);
        self.order.push_back(session.to_owned());
        self.by_session.insert(session.to_owned(), state);
        while self.order.len() > MAX_SESSIONS {
            if let Some(oldest) = self.order.pop_front() {
                self.by_session.remove(&oldest);
            }
        }
    }

    fn take(&mut self, session: &str) -> Option<State> {
        self.order.retain(|s| s != session);
        self.by_session.remove(session)
    }
}

static STATES: LazyLock<Mutex<States>> = LazyLock::new(Mutex::default);

fn states() -> MutexGuard<'static, States> {
    STATES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether `model`'s endpoint takes threads: `compat.supportsMessageThreads`, else
/// Anthropic's own API.
pub fn supported(model: &Model) -> bool {
    model
        .compat
        .as_ref()
        .and_then(|c| c.supports_message_threads)
        .unwrap_or_else(|| model.base_url.contains("api.anthropic.com"))
}

/// A request body of a threaded session, ready to send.
#[derive(Debug, Clone)]
pub struct ThreadRequest {
    pub session: String,
    pub body: Value,
    /// The body continues a thread (rather than opening one).
    pub continues: bool,
}

/// A message as the fingerprint sees it: cache markers dropped, text content as blocks.
fn normalized(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, item) in map {
                match (key.as_str(), item) {
                    ("cache_control", _) => {}
                    ("content", Value::String(text)) => {
                        out.insert(key.clone(), json!([{"type": "text", "text": text}]));
                    }
                    _ => {
                        out.insert(key.clone(), normalized(item));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// The fingerprint of a request's settings and of `messages`.
fn fingerprint(model: &Model, params: &Value, betas: &str, messages: &[Value]) -> u64 {
    let mut hasher = DefaultHasher::new();
    let settings = json!([
        model.provider,
        model.base_url,
        params.get("model"),
        params.get("system"),
        params.get("tools"),
        params.get("thinking"),
        params.get("output_config"),
        params.get("tool_choice"),
        betas,
    ]);
    settings.to_string().hash(&mut hasher);
    for message in messages {
        normalized(message).to_string().hash(&mut hasher);
    }
    hasher.finish()
}

fn messages_of(params: &Value) -> &[Value] {
    params
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// `params` opening a thread.
pub fn create(session: &str, params: &Value) -> ThreadRequest {
    let mut body = params.clone();
    if let Some(map) = body.as_object_mut() {
        map.insert("thread".into(), json!({"type": "create"}));
    }
    ThreadRequest {
        session: session.to_owned(),
        body,
        continues: false,
    }
}

/// The body for `params` in `session`: continuing its thread when `params` extends it,
/// else opening one; `None` when the session sends full requests.
pub fn prepare(model: &Model, session: &str, params: &Value, betas: &str) -> Option<ThreadRequest> {
    let mut states = states();
    let state = states.by_session.get(session).cloned();
    if state == Some(State::Off) {
        return None;
    }
    let messages = messages_of(params);
    if let Some(State::Reply {
        prefix_count,
        prefix_hash,
        reply_id,
    }) = state
        && messages.len() > prefix_count
        && fingerprint(model, params, betas, &messages[..prefix_count]) == prefix_hash
    {
        // A thread is continued once; a request racing this one opens its own.
        states.take(session);
        let mut body = params.clone();
        if let Some(map) = body.as_object_mut() {
            map.remove("system");
            map.remove("tools");
            map.insert(
                "messages".into(),
                Value::Array(messages[prefix_count..].to_vec()),
            );
            map.insert(
                "thread".into(),
                json!({"type": "continue", "previous_message_id": reply_id}),
            );
        }
        return Some(ThreadRequest {
            session: session.to_owned(),
            body,
            continues: true,
        });
    }
    Some(create(session, params))
}

/// What to do after a threaded request failed with `status`, the error's `code`
/// (`error.details.error_code`) and `message`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// Open a new thread.
    NewThread,
    /// Send the full request and stop using threads in this session.
    Unsupported,
    /// The failure stands.
    None,
}

pub fn fallback(status: u16, code: Option<&str>, message: &str) -> Fallback {
    match code {
        Some(code) if NEW_THREAD_ERRORS.contains(&code) => Fallback::NewThread,
        Some("thread_unsupported_request") => Fallback::Unsupported,
        None if status == 400 && message.contains("thread") => Fallback::Unsupported,
        _ => Fallback::None,
    }
}

/// The session sends full requests from now on.
pub fn turn_off(session: &str) {
    states().set(session, State::Off);
}

/// Records the reply `reply_id` (as wire messages, `reply`) that ended the thread of
/// `params`.
pub fn record(
    model: &Model,
    session: &str,
    params: &Value,
    betas: &str,
    reply: &[Value],
    reply_id: &str,
) {
    let mut prefix: Vec<Value> = messages_of(params).to_vec();
    prefix.extend(reply.iter().cloned());
    let state = State::Reply {
        prefix_count: prefix.len(),
        prefix_hash: fingerprint(model, params, betas, &prefix),
        reply_id: reply_id.to_owned(),
    };
    states().set(session, state);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Model {
        crate::models::get_model("anthropic", "claude-haiku-4-5").unwrap()
    }

    fn params(messages: Value) -> Value {
        json!({"model": "m", "system": [{"type": "text", "text": "S"}], "tools": [],
               "messages": messages, "stream": true})
    }

    #[test]
    fn a_request_extending_the_last_reply_continues_the_thread() {
        let model = model();
        // On by default for api.anthropic.com only; `compat.supportsMessageThreads` decides.
        assert!(supported(&model));
        let mut gateway = model.clone();
        gateway.base_url = "https://gateway.example/anthropic".into();
        assert!(!supported(&gateway));
        gateway
            .compat
            .get_or_insert_with(Default::default)
            .supports_message_threads = Some(true);
        assert!(supported(&gateway));
        let session = "threads-test-continue";
        let first = params(json!([{"role": "user", "content": "one"}]));
        let opened = prepare(&model, session, &first, "").unwrap();
        assert_eq!(opened.body["thread"], json!({"type": "create"}));
        let reply = [json!({"role": "assistant", "content": [{"type": "text", "text": "1"}]})];
        record(&model, session, &first, "", &reply, "msg_1");
        let second = params(json!([
            {"role": "user", "content": [{"type": "text", "text": "one",
                                          "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [{"type": "text", "text": "1"}]},
            {"role": "user", "content": "two"}
        ]));
        let continued = prepare(&model, session, &second, "").unwrap();
        assert!(continued.continues);
        assert_eq!(
            continued.body,
            json!({"model": "m", "stream": true,
                   "messages": [{"role": "user", "content": "two"}],
                   "thread": {"type": "continue", "previous_message_id": "msg_1"}})
        );
        // Continued once: the same request again opens a new thread.
        assert!(!prepare(&model, session, &second, "").unwrap().continues);
    }

    #[test]
    fn a_changed_prefix_opens_a_new_thread_and_off_sends_full_requests() {
        let model = model();
        let session = "threads-test-changed";
        let first = params(json!([{"role": "user", "content": "one"}]));
        record(&model, session, &first, "", &[], "msg_1");
        let edited =
            params(json!([{"role": "user", "content": "uno"}, {"role": "user", "content": "x"}]));
        assert!(!prepare(&model, session, &edited, "").unwrap().continues);
        turn_off(session);
        assert!(prepare(&model, session, &edited, "").is_none());
        assert_eq!(
            fallback(404, Some("thread_not_found"), ""),
            Fallback::NewThread
        );
        assert_eq!(
            fallback(400, None, "unknown field thread"),
            Fallback::Unsupported
        );
        assert_eq!(fallback(400, None, "bad"), Fallback::None);
    }
}
