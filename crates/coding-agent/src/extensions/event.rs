//! The extension events of the TypeScript pi's API (0.73.1's 29 and those 1.6.0 added that
//! ours emits), with the payloads its handlers receive (`{"type": …, …}`), so a TypeScript
//! handler sees the same object.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, InputBlock, Model};

use crate::session_event::CompactionReason;

/// An event sent to extensions; serializes to the TypeScript event object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[allow(clippy::large_enum_variant)]
pub enum ExtensionEvent {
    /// Before a project's protected resources load: user and `-e` extensions may decide its
    /// trust (pi 1.6.0). Handlers see `{type, cwd}`; `mode` and `hasUI` make their context.
    ProjectTrust {
        cwd: String,
        mode: String,
        #[serde(rename = "hasUI")]
        has_ui: bool,
    },
    ResourcesDiscover {
        cwd: String,
        reason: String,
    },
    SessionStart {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        previous_session_file: Option<String>,
    },
    SessionBeforeSwitch {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target_session_file: Option<String>,
    },
    SessionBeforeFork {
        entry_id: String,
        position: String,
    },
    SessionBeforeCompact {
        preparation: Value,
        branch_entries: Vec<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        custom_instructions: Option<String>,
        reason: CompactionReason,
        /// The turn that overflowed is sent again after this compaction.
        will_retry: bool,
    },
    SessionCompact {
        compaction_entry: Value,
        from_extension: bool,
        reason: CompactionReason,
        will_retry: bool,
    },
    /// A compaction that failed or was aborted (pi 1.6.0).
    SessionCompactFailed {
        reason: CompactionReason,
        /// Absent when the compaction was aborted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
        aborted: bool,
        will_retry: bool,
        from_extension: bool,
    },
    /// Before a prompt-cache refresh, with pi's decision (`action`: `warm` or `stop`);
    /// handlers may return `{action}` to override it (pi 1.6.0).
    CacheWarmingDecision {
        warm_cost: f64,
        miss_cost: f64,
        continuation_probability: f64,
        action: String,
    },
    /// The session's display name was set or cleared (pi 1.6.0).
    SessionInfoChanged {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    SessionShutdown {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target_session_file: Option<String>,
    },
    SessionBeforeTree {
        preparation: Value,
    },
    SessionTree {
        new_leaf_id: Option<String>,
        old_leaf_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary_entry: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_extension: Option<bool>,
    },
    Context {
        messages: Vec<AgentMessage>,
    },
    BeforeProviderRequest {
        payload: Value,
    },
    AfterProviderResponse {
        status: u16,
        headers: BTreeMap<String, String>,
    },
    /// The request's extra headers, which handlers change in place; `null` removes one
    /// (pi 1.6.0).
    BeforeProviderHeaders {
        headers: BTreeMap<String, Value>,
    },
    /// One parsed provider stream event, before pi decodes it (pi 1.6.0).
    ProviderStreamEvent {
        provider: String,
        api: String,
        model: String,
        data: Value,
    },
    /// The full transcript of a request, system messages included, after every `context`
    /// handler (pi 1.6.0).
    ContextWithSystem {
        messages: Vec<AgentMessage>,
    },
    BeforeAgentStart {
        #[serde(flatten)]
        trigger: RunTrigger,
        system_prompt: String,
        system_prompt_options: Value,
    },
    AgentStart,
    AgentEnd {
        messages: Vec<AgentMessage>,
    },
    /// Nothing more starts on its own: no retry, compaction or queued message (pi 1.6.0).
    AgentSettled {
        aborted: bool,
    },
    TurnStart {
        turn_index: u64,
        timestamp: u64,
    },
    /// pi 1.6.0's actionable boundary: handlers propose `entries` and `continue`.
    TurnEnd {
        turn_index: u64,
        message: AgentMessage,
        tool_results: Vec<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_entry_id: Option<String>,
        #[serde(default)]
        tool_result_entry_ids: Vec<String>,
        #[serde(default)]
        outcome: String,
        #[serde(default)]
        entries: Vec<Value>,
        #[serde(default, rename = "continue")]
        continue_: bool,
        #[serde(default)]
        context: Value,
    },
    /// The last actionable boundary of a run that was not aborted (pi 1.6.0): handlers may
    /// append entries and ask for one continuation.
    AgentBeforeSettle {
        outcome: String,
        entries: Vec<Value>,
        #[serde(rename = "continue")]
        continue_: bool,
        context: Value,
    },
    MessageStart {
        message: AgentMessage,
    },
    MessageUpdate {
        message: AgentMessage,
        assistant_message_event: Value,
    },
    MessageEnd {
        message: AgentMessage,
    },
    ToolExecutionStart {
        tool_call_id: String,
        tool_name: String,
        args: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    ToolExecutionUpdate {
        tool_call_id: String,
        tool_name: String,
        args: Value,
        partial_result: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    ToolExecutionEnd {
        tool_call_id: String,
        tool_name: String,
        result: Value,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    ModelSelect {
        model: Model,
        previous_model: Option<Model>,
        source: String,
    },
    ThinkingLevelSelect {
        level: String,
        previous_level: String,
    },
    UserBash {
        command: String,
        exclude_from_context: bool,
        cwd: String,
    },
    Input {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
        source: String,
        /// `steer` / `followUp` for a prompt queued while the agent streams; absent for one
        /// that starts a run (pi 1.6.0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        streaming_behavior: Option<String>,
    },
    ToolCall {
        tool_call_id: String,
        tool_name: String,
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    ToolResult {
        tool_call_id: String,
        tool_name: String,
        input: Value,
        content: Vec<InputBlock>,
        details: Value,
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
}

/// What starts a run, as `before_agent_start` tells it (pi 1.6.0's `messageType`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "messageType", rename_all = "lowercase")]
pub enum RunTrigger {
    /// A prompt or `pi.sendUserMessage()`.
    User {
        prompt: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
    },
    /// `pi.sendMessage(…, {triggerTurn: true})` while idle: the custom message that starts
    /// the run.
    Custom { message: Value },
}

/// Every event type name ours emits: 0.73.1's in the order its `types.d.ts` declares them,
/// then those of 1.6.0 (`ui_prompt_start` / `ui_prompt_end` come from the extension host).
pub const EVENT_TYPES: [&str; 38] = [
    "resources_discover",
    "session_start",
    "session_before_switch",
    "session_before_fork",
    "session_before_compact",
    "session_compact",
    "session_shutdown",
    "session_before_tree",
    "session_tree",
    "context",
    "before_provider_request",
    "after_provider_response",
    "before_agent_start",
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "model_select",
    "thinking_level_select",
    "tool_call",
    "tool_result",
    "user_bash",
    "input",
    "session_compact_failed",
    "session_info_changed",
    "agent_settled",
    "before_provider_headers",
    "provider_stream_event",
    "context_with_system",
    "agent_before_settle",
    "cache_warming_decision",
    "project_trust",
];

impl ExtensionEvent {
    /// The event's `type` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ProjectTrust { .. } => "project_trust",
            Self::ResourcesDiscover { .. } => "resources_discover",
            Self::SessionStart { .. } => "session_start",
            Self::SessionBeforeSwitch { .. } => "session_before_switch",
            Self::SessionBeforeFork { .. } => "session_before_fork",
            Self::SessionBeforeCompact { .. } => "session_before_compact",
            Self::SessionCompact { .. } => "session_compact",
            Self::SessionCompactFailed { .. } => "session_compact_failed",
            Self::SessionInfoChanged { .. } => "session_info_changed",
            Self::CacheWarmingDecision { .. } => "cache_warming_decision",
            Self::SessionShutdown { .. } => "session_shutdown",
            Self::SessionBeforeTree { .. } => "session_before_tree",
            Self::SessionTree { .. } => "session_tree",
            Self::Context { .. } => "context",
            Self::BeforeProviderRequest { .. } => "before_provider_request",
            Self::AfterProviderResponse { .. } => "after_provider_response",
            Self::BeforeProviderHeaders { .. } => "before_provider_headers",
            Self::ProviderStreamEvent { .. } => "provider_stream_event",
            Self::ContextWithSystem { .. } => "context_with_system",
            Self::BeforeAgentStart { .. } => "before_agent_start",
            Self::AgentStart => "agent_start",
            Self::AgentEnd { .. } => "agent_end",
            Self::AgentSettled { .. } => "agent_settled",
            Self::AgentBeforeSettle { .. } => "agent_before_settle",
            Self::TurnStart { .. } => "turn_start",
            Self::TurnEnd { .. } => "turn_end",
            Self::MessageStart { .. } => "message_start",
            Self::MessageUpdate { .. } => "message_update",
            Self::MessageEnd { .. } => "message_end",
            Self::ToolExecutionStart { .. } => "tool_execution_start",
            Self::ToolExecutionUpdate { .. } => "tool_execution_update",
            Self::ToolExecutionEnd { .. } => "tool_execution_end",
            Self::ModelSelect { .. } => "model_select",
            Self::ThinkingLevelSelect { .. } => "thinking_level_select",
            Self::UserBash { .. } => "user_bash",
            Self::Input { .. } => "input",
            Self::ToolCall { .. } => "tool_call",
            Self::ToolResult { .. } => "tool_result",
        }
    }

    /// Whether the first `{cancel: true}` result ends the dispatch.
    pub fn is_session_before(&self) -> bool {
        matches!(
            self,
            Self::SessionBeforeSwitch { .. }
                | Self::SessionBeforeFork { .. }
                | Self::SessionBeforeCompact { .. }
                | Self::SessionBeforeTree { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_as_the_typescript_objects() {
        let event = ExtensionEvent::ToolCall {
            tool_call_id: "c1".into(),
            tool_name: "bash".into(),
            input: serde_json::json!({"command": "ls"}),
            parent_tool_call_id: None,
        };
        assert_eq!(
            serde_json::to_string(&event).unwrap(),
            r#"{"type":"tool_call","toolCallId":"c1","toolName":"bash","input":{"command":"ls"}}"#
        );
        assert_eq!(
            serde_json::to_string(&ExtensionEvent::AgentStart).unwrap(),
            r#"{"type":"agent_start"}"#
        );
        let start = ExtensionEvent::SessionStart {
            reason: "startup".into(),
            previous_session_file: None,
        };
        assert_eq!(
            serde_json::to_string(&start).unwrap(),
            r#"{"type":"session_start","reason":"startup"}"#
        );
    }

    #[test]
    fn every_kind_is_listed() {
        let event = ExtensionEvent::TurnStart {
            turn_index: 0,
            timestamp: 1,
        };
        assert!(EVENT_TYPES.contains(&event.kind()));
        let parsed: ExtensionEvent =
            serde_json::from_str(r#"{"type":"input","text":"hi","source":"rpc"}"#).unwrap();
        assert_eq!(parsed.kind(), "input");
    }
}
