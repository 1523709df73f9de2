//! The ten agent events (seed 003), serialized exactly as the TypeScript pi writes them.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use pi_ai::{AssistantMessage, AssistantMessageEvent, ToolResultMessage};

use crate::message::AgentMessage;
use crate::tool::AgentToolResult;

/// One observable step of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AgentEvent {
    /// The run began.
    AgentStart,
    /// The run ended; `messages` are the messages it produced (prompts included).
    AgentEnd { messages: Vec<AgentMessage> },
    /// An LLM call is about to happen.
    TurnStart,
    /// The LLM call and its tools are done.
    TurnEnd {
        message: AgentMessage,
        tool_results: Vec<ToolResultMessage>,
    },
    /// A message appeared (a prompt, the streaming assistant message, a tool result).
    MessageStart { message: AgentMessage },
    /// The streaming assistant message changed.
    MessageUpdate {
        message: Arc<AssistantMessage>,
        assistant_message_event: AssistantMessageEvent,
    },
    /// A message is final and part of the transcript.
    MessageEnd { message: AgentMessage },
    /// A tool call is about to be prepared and run.
    ToolExecutionStart {
        tool_call_id: String,
        tool_name: String,
        args: Value,
        /// The call of the tool that made this one (codemode's script calls), else absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    /// A running tool reported progress.
    ToolExecutionUpdate {
        tool_call_id: String,
        tool_name: String,
        args: Value,
        partial_result: AgentToolResult,
        /// The call of the tool that made this one (codemode's script calls), else absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    /// A tool call finished (successfully or not).
    ToolExecutionEnd {
        tool_call_id: String,
        tool_name: String,
        result: AgentToolResult,
        is_error: bool,
        /// Milliseconds the tool ran (absent when it never started: blocked or invalid).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        /// The call of the tool that made this one (codemode's script calls), else absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
}

impl AgentEvent {
    /// The event's `type` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::AgentStart => "agent_start",
            Self::AgentEnd { .. } => "agent_end",
            Self::TurnStart => "turn_start",
            Self::TurnEnd { .. } => "turn_end",
            Self::MessageStart { .. } => "message_start",
            Self::MessageUpdate { .. } => "message_update",
            Self::MessageEnd { .. } => "message_end",
            Self::ToolExecutionStart { .. } => "tool_execution_start",
            Self::ToolExecutionUpdate { .. } => "tool_execution_update",
            Self::ToolExecutionEnd { .. } => "tool_execution_end",
        }
    }
}
