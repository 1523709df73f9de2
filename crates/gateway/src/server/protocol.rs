//! The gateway's WebSocket protocol: JSON text frames, one object each.
//!
//! # Connecting and authenticating
//!
//! Connect to `ws://HOST:PORT/` (or `/ws`). A token is given either as the query parameter
//! `?token=…`, as `Authorization: Bearer …`, or in the first frame:
//! `{"id":1,"method":"auth","params":{"token":"…"}}`. A client that sends anything else
//! first, or a wrong token, receives one error response (`unauthorized`) and the
//! connection is closed. Each token maps to a principal; a principal sees only its own
//! sessions (others' answer `not_found`).
//!
//! # Requests and responses
//!
//! Request: `{"id": <string|number>, "method": "<name>", "params": {…}}`.
//! Response: `{"type":"response","id":…,"ok":true,"result":{…}}` or
//! `{"type":"response","id":…,"ok":false,"error":{"code":"…","message":"…"}}`.
//!
//! | method | params | result |
//! |---|---|---|
//! | `auth` | `token` | `principal` |
//! | `session.create` | `cwd`, `model?`, `thinkingLevel?`, `parentId?`, `sessionId?` (resume), `tools?`, `channelTools?` (`name`, `description`, `parameters`, `scope?`), `subscribe?` (default true) | a session |
//! | `session.resume` | `sessionId`, `subscribe?` | a session |
//! | `session.describe` | `sessionId` | a session (as resume without subscribing) |
//! | `session.branch` | `sessionId`, `fromMessage` (entry id or `messageId`), `subscribe?` | the new session |
//! | `session.navigate` | `sessionId`, `target` (entry id or `messageId`), `summarize?` | `editorText?`, `cancelled`, `summaryEntryId?` |
//! | `session.prompt` | `sessionId`, `text`, `wait?` | `queued` (ops ahead); with `wait`, the run's `terminationReason` |
//! | `session.steer` / `session.followUp` | `sessionId`, `text` | `delivered`: `steer` / `followUp` while a run is active, else `prompt` |
//! | `session.interrupt` | `sessionId` | `aborted` (ids of the sessions aborted: it and its sub-agents) |
//! | `session.subscribe` | `sessionId`, `fromSeq?` | `replayed`, `gap`, `seq`, `stateVersion` |
//! | `session.unsubscribe` | `sessionId` | `{}` |
//! | `session.history` | `sessionId`, `full?` | `entries`: `entryId`, `parentId`, `role`, `text`, `messageId?`, `message?` (with `full`) |
//! | `tool.result` | `requestId`, `content`, `isError?` | `{}` (answers a `tool_request`) |
//! | `sessions.list` | | `sessions`: session nodes |
//! | `sessions.tree` | | `roots`: nodes with `children` |
//!
//! A session (result of create, resume, branch) is `{sessionId, node, model, tools,
//! thinkingLevel, stateVersion, seq}`; a node is `{id, parentId, branchPoint, createdAt,
//! lastActiveAt, cwd, running, lastTermination}`.
//!
//! # Events
//!
//! `{"type":"event","event":"<name>","payload":{…},"seq":N,"stateVersion":V,
//! "sessionId":"…","ts":<unix µs>}`, for the 11 lifecycle events of [`crate::events`].
//! `seq` comes from one counter for the whole gateway, so it increases along every
//! session's stream; `stateVersion` counts a session's state changes (run start and end,
//! each stored message, navigation). `session.subscribe` with `fromSeq` first replays the
//! retained events with a greater `seq` (a bounded log per session; `gap` says older ones
//! were dropped), then sends live events, without duplicates. The response precedes the
//! replay. A client too slow to drain its buffer is disconnected and resubscribes with
//! its last `seq`.
//!
//! # Channel tools
//!
//! Tools a client declares in `session.create` join the session's tools (pipeline layer
//! 4, subject to the policy). When the model calls one, the client receives
//! `{"type":"tool_request","requestId","sessionId","toolCallId","name","arguments"}` and
//! answers with `tool.result`; if it disconnects first, the call fails.
//!
//! # Lanes
//!
//! Prompts, navigation and the first-prompt form of steer/followUp go through the
//! session's lane and run one at a time in arrival order; different sessions run
//! concurrently. Steering, follow-ups, interrupts and subscriptions act at once.
//!
//! # Clusters
//!
//! On a node of a cluster (`--cluster`) the same methods work on any node; a session's
//! operations run on the node holding its lane, and `seq` comes from the cluster's event
//! stream (increasing, the same on every node). Session operations accept a `commandId`:
//! one sent again within ten minutes answers `{"duplicate": true}` instead of running.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A request frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    #[serde(default)]
    pub id: Value,
    pub method: String,
    #[serde(default)]
    pub params: Value,
}

/// Error codes of responses.
pub mod codes {
    pub const UNAUTHORIZED: &str = "unauthorized";
    pub const BAD_REQUEST: &str = "bad_request";
    pub const UNKNOWN_METHOD: &str = "unknown_method";
    pub const NOT_FOUND: &str = "not_found";
    /// The principal may not do this (a cwd outside its workspaces).
    pub const FORBIDDEN: &str = "forbidden";
    pub const INVALID_PARAMS: &str = "invalid_params";
    pub const FAILED: &str = "failed";
    pub const SHUTTING_DOWN: &str = "shutting_down";
}

/// An error answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiError {
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_PARAMS, message)
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(codes::FAILED, message)
    }

    pub fn not_found(session_id: &str) -> Self {
        Self::new(
            codes::NOT_FOUND,
            format!("no session {session_id} for this principal"),
        )
    }
}

/// A response frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: Value,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
}

impl Response {
    /// The response to request `id`.
    pub fn new(id: Value, outcome: Result<Value, ApiError>) -> Self {
        let (ok, result, error) = match outcome {
            Ok(result) => (true, Some(result), None),
            Err(error) => (false, None, Some(error)),
        };
        Self {
            kind: "response".into(),
            id,
            ok,
            result,
            error,
        }
    }

    /// The frame text.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| {
            r#"{"type":"response","id":null,"ok":false,"error":{"code":"failed","message":"encoding"}}"#
                .to_owned()
        })
    }
}

/// An event frame (borrowing its parts).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventFrame<'a, P: Serialize> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub event: &'static str,
    pub payload: &'a P,
    pub seq: u64,
    pub state_version: u64,
    pub session_id: &'a str,
    /// Server time of emission, Unix microseconds.
    pub ts: u64,
}

/// Parameters of requests naming only a session.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionParams {
    pub session_id: String,
}

/// `session.history`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryParams {
    pub session_id: String,
    /// Each message entry also carries its whole message (`message`), as pi-ai has it.
    #[serde(default)]
    pub full: bool,
}

/// `auth`.
#[derive(Debug, Clone, Deserialize)]
pub struct AuthParams {
    pub token: String,
}

fn yes() -> bool {
    true
}

/// `session.create`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateParams {
    pub cwd: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub thinking_level: Option<String>,
    #[serde(default)]
    pub parent_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Tools this client provides (answered with `tool.result`).
    #[serde(default)]
    pub channel_tools: Vec<super::channel_binding::ChannelToolSpec>,
    #[serde(default = "yes")]
    pub subscribe: bool,
}

/// `session.resume`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeParams {
    pub session_id: String,
    #[serde(default = "yes")]
    pub subscribe: bool,
}

/// `session.branch`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchParams {
    pub session_id: String,
    pub from_message: String,
    #[serde(default = "yes")]
    pub subscribe: bool,
}

/// `session.navigate`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateParams {
    pub session_id: String,
    pub target: String,
    #[serde(default)]
    pub summarize: bool,
}

/// `session.prompt`, `session.steer`, `session.followUp`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptParams {
    pub session_id: String,
    pub text: String,
    #[serde(default)]
    pub wait: bool,
}

/// `session.subscribe`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeParams {
    pub session_id: String,
    #[serde(default)]
    pub from_seq: Option<u64>,
}

/// Parses request parameters.
pub fn params<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, ApiError> {
    let value = if value.is_null() {
        Value::Object(Default::default())
    } else {
        value.clone()
    };
    serde_json::from_value(value).map_err(|e| ApiError::invalid(e.to_string()))
}
