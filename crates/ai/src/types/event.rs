//! The events a stream yields while an assistant message is produced (seed 002 §5.6).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::content::ToolCall;
use super::message::{AssistantMessage, StopReason};

/// One step of a streaming response. Every event carries the partial message as it stands.
///
/// A stream yields `start`, then text/thinking/toolcall start-delta-end events, then exactly
/// one `done` or `error`. The partial is shared (`Arc`): holding on to an event keeps a
/// snapshot, and the producer copies the message only if a consumer still holds one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AssistantMessageEvent {
    Start {
        partial: Arc<AssistantMessage>,
    },
    TextStart {
        content_index: usize,
        partial: Arc<AssistantMessage>,
    },
    TextDelta {
        content_index: usize,
        delta: String,
        partial: Arc<AssistantMessage>,
    },
    TextEnd {
        content_index: usize,
        content: String,
        partial: Arc<AssistantMessage>,
    },
    ThinkingStart {
        content_index: usize,
        partial: Arc<AssistantMessage>,
    },
    ThinkingDelta {
        content_index: usize,
        delta: String,
        partial: Arc<AssistantMessage>,
    },
    ThinkingEnd {
        content_index: usize,
        content: String,
        partial: Arc<AssistantMessage>,
    },
    ToolcallStart {
        content_index: usize,
        partial: Arc<AssistantMessage>,
    },
    ToolcallDelta {
        content_index: usize,
        delta: String,
        partial: Arc<AssistantMessage>,
    },
    ToolcallEnd {
        content_index: usize,
        tool_call: ToolCall,
        partial: Arc<AssistantMessage>,
    },
    /// The message completed: `reason` is `stop`, `length` or `toolUse`.
    Done {
        reason: StopReason,
        message: Arc<AssistantMessage>,
    },
    /// The message failed: `reason` is `error` or `aborted`; `error.errorMessage` says why.
    Error {
        reason: StopReason,
        error: Arc<AssistantMessage>,
    },
}

impl AssistantMessageEvent {
    /// The event's `type` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Start { .. } => "start",
            Self::TextStart { .. } => "text_start",
            Self::TextDelta { .. } => "text_delta",
            Self::TextEnd { .. } => "text_end",
            Self::ThinkingStart { .. } => "thinking_start",
            Self::ThinkingDelta { .. } => "thinking_delta",
            Self::ThinkingEnd { .. } => "thinking_end",
            Self::ToolcallStart { .. } => "toolcall_start",
            Self::ToolcallDelta { .. } => "toolcall_delta",
            Self::ToolcallEnd { .. } => "toolcall_end",
            Self::Done { .. } => "done",
            Self::Error { .. } => "error",
        }
    }

    /// The message as it stands at this event (the final one for `done`/`error`).
    pub fn message(&self) -> &Arc<AssistantMessage> {
        match self {
            Self::Start { partial }
            | Self::TextStart { partial, .. }
            | Self::TextDelta { partial, .. }
            | Self::TextEnd { partial, .. }
            | Self::ThinkingStart { partial, .. }
            | Self::ThinkingDelta { partial, .. }
            | Self::ThinkingEnd { partial, .. }
            | Self::ToolcallStart { partial, .. }
            | Self::ToolcallDelta { partial, .. }
            | Self::ToolcallEnd { partial, .. } => partial,
            Self::Done { message, .. } => message,
            Self::Error { error, .. } => error,
        }
    }

    /// Whether this is the final `done` or `error` event.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Done { .. } | Self::Error { .. })
    }
}
