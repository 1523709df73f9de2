//! Claude's limits on strict tools (pi-ai 1.2–1.5.1): when Anthropic or Bedrock refuses a
//! request because its strict tool set is too big (grammar size, tool count, union types),
//! the request is sent once more with the tools that only *prefer* strictness sent plain,
//! and the session remembers it so later requests do not hit the limit again.

use std::collections::{HashSet, VecDeque};
use std::sync::{LazyLock, Mutex, MutexGuard};

use serde_json::{Value, json};

use crate::http::RequestFailure;

/// The phrases of Claude's refusals for strict-tool limits (pi-ai 1.6).
const LIMIT_MESSAGES: [&str; 3] = [
    "The compiled grammar is too large",
    "Too many strict tools (",
    "Schemas contains too many parameters with union types (",
];

/// Sessions remembered at most, oldest forgotten first (as pi-ai).
const MAX_SESSIONS: usize = 10_000;

/// The API whose sessions are remembered: pi-ai keeps one memory per provider module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    Anthropic,
    Bedrock,
}

impl Transport {
    /// The diagnostic type pi-ai records on the reply.
    fn diagnostic_type(self) -> &'static str {
        match self {
            Transport::Anthropic => "anthropic_strict_tools_fallback",
            Transport::Bedrock => "bedrock_strict_tools_fallback",
        }
    }

    /// The error type of the refusal: Anthropic's `error.type`, or the AWS exception.
    fn refusal_type(self) -> &'static str {
        match self {
            Transport::Anthropic => "invalid_request_error",
            Transport::Bedrock => "ValidationException",
        }
    }

    /// The SDK's message of `failure`, as the diagnostic quotes it: the AWS SDK's has no
    /// readable prefix.
    fn sdk_message(self, failure: &RequestFailure) -> String {
        match self {
            Transport::Anthropic => failure.message.clone(),
            Transport::Bedrock => {
                let prefix = format!(
                    "{}: ",
                    crate::http::bedrock_exception_prefix(self.refusal_type())
                );
                failure
                    .message
                    .strip_prefix(&prefix)
                    .unwrap_or(&failure.message)
                    .to_owned()
            }
        }
    }
}

/// How to build a request again without preferred strict tools.
pub struct Retry<T> {
    transport: Transport,
    session: Option<String>,
    rebuild: Box<dyn FnOnce() -> Result<T, String> + Send + Sync>,
}

impl<T> Retry<T> {
    pub fn new(
        transport: Transport,
        session: Option<String>,
        rebuild: Box<dyn FnOnce() -> Result<T, String> + Send + Sync>,
    ) -> Self {
        Self {
            transport,
            session,
            rebuild,
        }
    }

    /// After `failure`: when it is the strict-tool refusal, the session is remembered and
    /// the request built again, with the diagnostic to attach; otherwise `None`.
    pub fn after(self, failure: &RequestFailure) -> Option<(Result<T, String>, Value)> {
        if !is_limit_failure(failure, self.transport.refusal_type()) {
            return None;
        }
        mark_exceeded(self.transport, self.session.as_deref());
        let note = diagnostic(self.transport, &self.transport.sdk_message(failure));
        Some(((self.rebuild)(), note))
    }
}

/// Adds the retry's diagnostic, if any, to a final event.
pub fn attach_note(event: &mut crate::types::AssistantMessageEvent, note: Option<&Value>) {
    if let Some(note) = note {
        attach(event, note);
    }
}

#[derive(Default)]
struct Remembered {
    set: HashSet<(Transport, String)>,
    order: VecDeque<(Transport, String)>,
}

static REMEMBERED: LazyLock<Mutex<Remembered>> = LazyLock::new(Mutex::default);

fn remembered() -> MutexGuard<'static, Remembered> {
    REMEMBERED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether `session` already went over Claude's strict-tool limits on `transport`.
pub fn exceeded(transport: Transport, session: Option<&str>) -> bool {
    session.is_some_and(|s| remembered().set.contains(&(transport, s.to_owned())))
}

/// Remembers that `session` went over the limits on `transport`.
pub fn mark_exceeded(transport: Transport, session: Option<&str>) {
    let Some(session) = session else {
        return;
    };
    let key = (transport, session.to_owned());
    let mut memory = remembered();
    if memory.set.insert(key.clone()) {
        memory.order.push_back(key);
    }
    while memory.order.len() > MAX_SESSIONS {
        if let Some(oldest) = memory.order.pop_front() {
            memory.set.remove(&oldest);
        }
    }
}

/// Whether `message` is Claude refusing the strict tool set for its limits.
pub fn is_limit_message(message: &str) -> bool {
    LIMIT_MESSAGES.iter().any(|phrase| message.contains(phrase))
}

/// Whether `failure` is the refusal that earns a non-strict retry: an error of type
/// `error_type` naming a strict-tool limit; Anthropic's (`invalid_request_error`) must be
/// a 400, Bedrock's (`ValidationException`, which carries no status here) is its name.
pub fn is_limit_failure(failure: &RequestFailure, error_type: &str) -> bool {
    !failure.aborted
        && failure.status.as_ref().is_none_or(|(s, _)| *s == 400)
        && failure.error_type.as_deref() == Some(error_type)
        && is_limit_message(&failure.message)
}

/// The diagnostic pi-ai adds to the reply of a request that was retried non-strict.
pub fn diagnostic(transport: Transport, error_message: &str) -> Value {
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    json!({
        "type": transport.diagnostic_type(),
        "timestamp": timestamp,
        "error": {"message": error_message},
        "details": {"reason": "strict_tool_limits_exceeded"},
    })
}

/// Adds `diagnostic` to the message of a final event (`done` or `error`).
pub fn attach(event: &mut crate::types::AssistantMessageEvent, diagnostic: &Value) {
    use crate::types::AssistantMessageEvent as E;
    let message = match event {
        E::Done { message, .. } => message,
        E::Error { error, .. } => error,
        _ => return,
    };
    let message = std::sync::Arc::make_mut(message);
    match &mut message.diagnostics {
        Some(Value::Array(list)) => list.push(diagnostic.clone()),
        _ => message.diagnostics = Some(Value::Array(vec![diagnostic.clone()])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(status: u16, error_type: &str, message: &str) -> RequestFailure {
        RequestFailure {
            message: message.into(),
            aborted: false,
            status: Some((status, message.into())),
            error_code: None,
            request_id: None,
            error_type: Some(error_type.into()),
        }
    }

    #[test]
    fn only_a_400_of_the_right_type_naming_a_limit_counts() {
        let limit = r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"Too many strict tools (30). The maximum is 20."}}"#;
        assert!(is_limit_failure(
            &failure(400, "invalid_request_error", limit),
            "invalid_request_error"
        ));
        assert!(!is_limit_failure(
            &failure(429, "invalid_request_error", limit),
            "invalid_request_error"
        ));
        assert!(!is_limit_failure(
            &failure(400, "overloaded_error", limit),
            "invalid_request_error"
        ));
        assert!(!is_limit_failure(
            &failure(400, "invalid_request_error", "400 prompt is too long"),
            "invalid_request_error"
        ));
    }

    #[test]
    fn sessions_are_remembered_per_transport() {
        let session = "strict-limits-unit-session";
        assert!(!exceeded(Transport::Anthropic, Some(session)));
        mark_exceeded(Transport::Anthropic, Some(session));
        assert!(exceeded(Transport::Anthropic, Some(session)));
        assert!(!exceeded(Transport::Bedrock, Some(session)));
        assert!(!exceeded(Transport::Anthropic, None));
    }
}
