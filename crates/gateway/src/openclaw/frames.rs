//! OpenClaw protocol v4 frames: `req` in, `res` and `event` out, and the error shapes the
//! clients read (`code` and `message` always non-empty).

use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The protocol version spoken.
pub const PROTOCOL: u64 = 4;

/// Largest frame accepted and announced (`policy.maxPayload`), as OpenClaw's.
pub const MAX_PAYLOAD: usize = 25 * 1024 * 1024;

/// A request frame.
#[derive(Debug, Clone, Deserialize)]
pub struct Req {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    pub method: String,
    #[serde(default)]
    pub params: Value,
}

/// An error answer: OpenClaw's `{code, message, details?, retryable?}`.
#[derive(Debug, Clone, PartialEq)]
pub struct OcError {
    pub code: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

impl OcError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            code: "INVALID_REQUEST",
            message: message.into(),
            details: None,
        }
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Self {
            code: "UNAVAILABLE",
            message: message.into(),
            details: None,
        }
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self {
            code: "FORBIDDEN",
            message: message.into(),
            details: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    fn to_value(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), json!(self.code));
        let message = if self.message.is_empty() {
            "error"
        } else {
            &self.message
        };
        error.insert("message".into(), json!(message));
        if self.code == "UNAVAILABLE" {
            error.insert("retryable".into(), json!(true));
        }
        if let Some(details) = &self.details {
            error.insert("details".into(), details.clone());
        }
        Value::Object(error)
    }
}

/// `{"type":"res","id","ok":true,"payload"}`.
pub fn res_ok(id: &str, payload: &Value) -> String {
    json!({"type": "res", "id": id, "ok": true, "payload": payload}).to_string()
}

/// `{"type":"res","id","ok":false,"error"}`, with a payload when the method gives one.
pub fn res_err(id: &str, error: &OcError, payload: Option<&Value>) -> String {
    let mut frame = json!({"type": "res", "id": id, "ok": false, "error": error.to_value()});
    if let Some(payload) = payload {
        frame["payload"] = payload.clone();
    }
    frame.to_string()
}

/// `{"type":"event","event","payload","seq"}` (`seq` absent for the challenge).
pub fn event(name: &str, payload: &Value, seq: Option<u64>) -> String {
    let mut frame = json!({"type": "event", "event": name, "payload": payload});
    if let Some(seq) = seq {
        frame["seq"] = json!(seq);
    }
    frame.to_string()
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    pi_ai::now_ms()
}

/// A string parameter that must be present and non-empty.
pub fn need_str<'a>(params: &'a Value, name: &str, method: &str) -> Result<&'a str, OcError> {
    params
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| {
            OcError::invalid(format!(
                "invalid {method} params: must have required property '{name}'"
            ))
        })
}
