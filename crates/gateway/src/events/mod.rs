//! The 11 lifecycle events of a gateway session (seed §9.2), the [`Bridge`] that derives
//! them from pi's `AgentSessionEvent`s (§9.5), the 5 termination reasons (§9.4) and the
//! hard/idle timeout watcher.

mod activity;
mod bridge;

pub use activity::{Activity, watch};
pub use bridge::{Bridge, BridgeContext, EndedMessage, RunInfo};

use pi_ai::StopReason;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;
/// The two timeouts of a run: `hard` from its start (48 h), `idle` without model tokens (120 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub hard: Duration,
    pub idle: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            hard: Duration::from_secs(48 * 60 * 60),
            idle: Duration::from_secs(120),
        }
    }
}

/// Why a run ended (§9.4), plus `error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminationReason {
    /// The model answered without tool calls: normal completion.
    NoToolCalls,
    /// The hard limit from `agent_start` passed.
    #[serde(rename = "timeout_48h")]
    Timeout,
    /// The model produced no token for the idle limit.
    #[serde(rename = "idle_timeout_120s")]
    IdleTimeout,
    /// An interrupt: the client, or the parent session being aborted.
    AbortSignal,
    /// The gateway shut down while the run was in progress.
    GatewayDisconnected,
    /// The model call failed.
    Error,
}

impl TerminationReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoToolCalls => "no_tool_calls",
            Self::Timeout => "timeout_48h",
            Self::IdleTimeout => "idle_timeout_120s",
            Self::AbortSignal => "abort_signal",
            Self::GatewayDisconnected => "gateway_disconnected",
            Self::Error => "error",
        }
    }
}

/// `message_end.stopReason`: the four of §9.2, plus `aborted` and `error` for failed messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    Aborted,
    Error,
}

impl From<StopReason> for MessageStopReason {
    fn from(reason: StopReason) -> Self {
        match reason {
            // A finished message is never `pending`; were one, it ended normally.
            StopReason::Stop | StopReason::Pending => Self::EndTurn,
            StopReason::ToolUse => Self::ToolUse,
            StopReason::Length => Self::MaxTokens,
            StopReason::Aborted => Self::Aborted,
            StopReason::Error => Self::Error,
        }
    }
}

/// ① The run began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStart {
    pub session_id: String,
    pub model: String,
    pub tools: Vec<String>,
    pub thinking_level: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<String>,
    /// Unix milliseconds.
    pub timestamp: i64,
}

/// ② An LLM call is about to happen; `messageCount` is the size of the context carried in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStart {
    pub turn_id: String,
    pub turn_index: u32,
    pub message_count: usize,
}

/// Input tokens known when a message starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputUsage {
    pub input_tokens: u64,
}

/// ③ A message appeared (`assistant`, or `user` / `toolResult` / custom roles).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageStart {
    pub message_id: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<InputUsage>,
}

/// ④ Streamed text; `index` is the character position of `delta` in the message's text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextDelta {
    pub message_id: String,
    pub delta: String,
    pub index: usize,
}

/// ⑤ A tool call starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionStart {
    pub tool_call_id: String,
    pub tool_name: String,
    pub input: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}

/// Kind of a tool progress report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpdateType {
    Stdout,
    Stderr,
    Progress,
    PartialResult,
}

/// ⑥ A running tool reported progress (`content` is its output so far).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionUpdate {
    pub tool_call_id: String,
    pub update_type: UpdateType,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_percent: Option<u8>,
}

/// Why a tool call failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolError {
    pub code: String,
    pub message: String,
}

/// ⑦ A tool call finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionEnd {
    pub tool_call_id: String,
    pub success: bool,
    pub output: String,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

/// Token counts of a finished assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
}

/// ⑧ A message is final; assistant messages carry `stopReason` and `usage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageEnd {
    pub message_id: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<MessageStopReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<MessageUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

/// ⑨ A turn (LLM call plus its tools) is done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEnd {
    pub turn_id: String,
    pub has_tool_calls: bool,
    pub should_continue: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_reason: Option<TerminationReason>,
}

/// ⑩ The run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentEnd {
    pub session_id: String,
    pub total_turns: u32,
    pub total_tokens: u64,
    pub duration_ms: u64,
    pub termination_reason: TerminationReason,
}

/// ⑪ Something went wrong; `recoverable` says whether prompting again can succeed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorEvent {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
    pub recoverable: bool,
}

/// One lifecycle event; serializes as its payload (the name travels beside it).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LifecycleEvent {
    AgentStart(AgentStart),
    TurnStart(TurnStart),
    MessageStart(MessageStart),
    TextDelta(TextDelta),
    ToolExecutionStart(ToolExecutionStart),
    ToolExecutionUpdate(ToolExecutionUpdate),
    ToolExecutionEnd(ToolExecutionEnd),
    MessageEnd(MessageEnd),
    TurnEnd(TurnEnd),
    AgentEnd(AgentEnd),
    Error(ErrorEvent),
}

impl LifecycleEvent {
    /// The event named `name` with payload `payload`, as an event frame carries it (what a
    /// cluster node reads back from the event stream); `None` for a name or payload that
    /// is not a lifecycle event's.
    pub fn from_named(name: &str, payload: Value) -> Option<Self> {
        fn parse<T: serde::de::DeserializeOwned>(payload: Value) -> Option<T> {
            serde_json::from_value(payload).ok()
        }
        Some(match name {
            "agent_start" => Self::AgentStart(parse(payload)?),
            "turn_start" => Self::TurnStart(parse(payload)?),
            "message_start" => Self::MessageStart(parse(payload)?),
            "text_delta" => Self::TextDelta(parse(payload)?),
            "tool_execution_start" => Self::ToolExecutionStart(parse(payload)?),
            "tool_execution_update" => Self::ToolExecutionUpdate(parse(payload)?),
            "tool_execution_end" => Self::ToolExecutionEnd(parse(payload)?),
            "message_end" => Self::MessageEnd(parse(payload)?),
            "turn_end" => Self::TurnEnd(parse(payload)?),
            "agent_end" => Self::AgentEnd(parse(payload)?),
            "error" => Self::Error(parse(payload)?),
            _ => return None,
        })
    }

    /// The event name (`agent_start`, `text_delta`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Self::AgentStart(_) => "agent_start",
            Self::TurnStart(_) => "turn_start",
            Self::MessageStart(_) => "message_start",
            Self::TextDelta(_) => "text_delta",
            Self::ToolExecutionStart(_) => "tool_execution_start",
            Self::ToolExecutionUpdate(_) => "tool_execution_update",
            Self::ToolExecutionEnd(_) => "tool_execution_end",
            Self::MessageEnd(_) => "message_end",
            Self::TurnEnd(_) => "turn_end",
            Self::AgentEnd(_) => "agent_end",
            Self::Error(_) => "error",
        }
    }

    /// Parses an event from its name and payload (as a client receives them).
    pub fn from_parts(name: &str, payload: Value) -> Result<Self, serde_json::Error> {
        use serde::de::Error as _;
        Ok(match name {
            "agent_start" => Self::AgentStart(serde_json::from_value(payload)?),
            "turn_start" => Self::TurnStart(serde_json::from_value(payload)?),
            "message_start" => Self::MessageStart(serde_json::from_value(payload)?),
            "text_delta" => Self::TextDelta(serde_json::from_value(payload)?),
            "tool_execution_start" => Self::ToolExecutionStart(serde_json::from_value(payload)?),
            "tool_execution_update" => Self::ToolExecutionUpdate(serde_json::from_value(payload)?),
            "tool_execution_end" => Self::ToolExecutionEnd(serde_json::from_value(payload)?),
            "message_end" => Self::MessageEnd(serde_json::from_value(payload)?),
            "turn_end" => Self::TurnEnd(serde_json::from_value(payload)?),
            "agent_end" => Self::AgentEnd(serde_json::from_value(payload)?),
            "error" => Self::Error(serde_json::from_value(payload)?),
            other => {
                return Err(serde_json::Error::custom(format!("unknown event {other}")));
            }
        })
    }

    /// Whether the event marks a change of session state (run status or transcript).
    pub fn changes_state(&self) -> bool {
        matches!(
            self,
            Self::AgentStart(_) | Self::MessageEnd(_) | Self::AgentEnd(_)
        )
    }
}
