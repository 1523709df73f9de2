//! The events of a coding-agent session: the agent's, plus auto-retry (and later compaction).

use serde::Serialize;

use pi_agent_core::AgentEvent;

/// Events only the session emits.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum SessionOnlyEvent {
    AutoRetryStart {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    AutoRetryEnd {
        success: bool,
        attempt: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        final_error: Option<String>,
    },
}

/// Any event of a session, serialized as its own JSON object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
// Agent events are nearly all of them; boxing would cost an allocation per event.
#[allow(clippy::large_enum_variant)]
pub enum AgentSessionEvent {
    Agent(AgentEvent),
    Session(SessionOnlyEvent),
}
